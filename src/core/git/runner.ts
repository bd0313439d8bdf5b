/**
 * The git port: runs the `git` program with an argument array (never a shell). The host gives it
 * (`hosts/common/git-process.ts`, on Node's `child_process`, the same in Obsidian desktop and
 * headless); the core only builds arguments and parses answers.
 *
 * The runner always runs in the vault's folder, with the repository found from there, and adds its
 * own safety options: no program the repository's configuration or attributes name runs (hooks unless
 * the owner allowed them, filters, diff and merge drivers, signing, fsmonitor, editors, pagers,
 * transports that are commands; fetch and push use the owner's credential helper and ssh command),
 * no prompts, literal pathspecs, `GIT_DIR`/`GIT_WORK_TREE` and friends dropped from the environment.
 */
export interface GitRunOptions {
  /** Extra environment variables for this call (e.g. `GIT_OPTIONAL_LOCKS=0` for reads). */
  env?: Readonly<Record<string, string>>;
  /** Bytes or text for git's stdin. */
  input?: string | Uint8Array;
  /** Kill git after this long (default 30 s; network calls pass more). */
  timeoutMs?: number;
  /**
   * Streams stdout as text (UTF-8, split safely) instead of collecting it; return `false` to stop
   * git early (the result then says `stopped`). `stdout` of the result is then "".
   */
  onStdout?: (chunk: string) => boolean | void;
  /** Collect stdout as raw bytes (`stdoutBytes`), for blobs. */
  binary?: boolean;
}

export interface GitRunResult {
  /** Exit code (-1 when killed by a timeout or stopped). */
  code: number;
  stdout: string;
  stdoutBytes?: Uint8Array;
  stderr: string;
  /** `onStdout` returned false and git was stopped. */
  stopped: boolean;
  timedOut: boolean;
}

export interface GitRunner {
  run(args: readonly string[], opts?: GitRunOptions): Promise<GitRunResult>;
  /** Ends what the runner keeps running (a helper process). */
  close?(): void;
}

/** Thrown by runners when the `git` program cannot be started (not installed, not on PATH). */
export class GitMissingError extends Error {
  constructor(readonly program: string) {
    // Only the program's name: a configured path is a machine path, never shown to a client.
    super(`The git program ("${program.split(/[\\/]/).pop()}") could not be started: it is not installed or not on the PATH. Install git, or set the git program in the settings.`);
    this.name = "GitMissingError";
  }
}

/** Default time limit of one git call (local commands); network calls (fetch, push) use `GIT_NETWORK_TIMEOUT_MS`. */
export const GIT_TIMEOUT_MS = 30_000;
export const GIT_NETWORK_TIMEOUT_MS = 120_000;
