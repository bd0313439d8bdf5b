import { sleep } from "../timers";
import { GitMissingError, GIT_TIMEOUT_MS, type GitRunner, type GitRunOptions, type GitRunResult } from "./runner";

/** A git command failed; `message` is git's own explanation, cleaned (first lines, no machine paths). */
export class GitCommandError extends Error {
  constructor(
    readonly command: string,
    stderr: string,
    readonly code?: number,
  ) {
    super(cleanGitMessage(stderr) || `git ${command} failed`);
    this.name = "GitCommandError";
  }
}

/** git's stderr for a person: the first meaningful lines, without `fatal:`/`error:` prefixes or absolute paths. */
export function cleanGitMessage(stderr: string, maxLines = 3): string {
  const lines = stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("hint:"))
    .slice(0, maxLines)
    .map((l) => l.replace(/^(fatal|error|warning):\s*/i, ""));
  return lines.join(" ").replace(/(^|[\s'"(=])(?:[A-Za-z]:)?(?:[\\/][^\s'"`,;:)\\/]+){2,}[\\/]?/g, "$1<path>").slice(0, 500);
}

/** The lock another git program (Obsidian Git, a terminal) holds while it works. */
export function isLockError(stderr: string): boolean {
  return /index\.lock|\.lock': File exists|Unable to create '.*\.lock'|cannot lock ref/i.test(stderr);
}

/** Waits between tries when another git process holds the repository's lock: ~3 s in all. */
const LOCK_BACKOFF_MS = [100, 200, 400, 800, 1600];

/**
 * The runner with the helpers every git feature uses: results as exceptions, retries on a held
 * lock, and a queue for commands that change the repository (two of ours never race each other).
 */
export class Git {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(readonly runner: GitRunner) {}

  /** Runs git; never throws for a non-zero exit (the caller reads `code`), only when git cannot start. */
  raw(args: readonly string[], opts?: GitRunOptions): Promise<GitRunResult> {
    return this.runner.run(args, opts);
  }

  /** Runs git and returns stdout; a non-zero exit throws `GitCommandError`. Reads take no optional locks. */
  async out(args: readonly string[], opts: GitRunOptions = {}): Promise<string> {
    const r = await this.runner.run(args, { ...opts, env: { GIT_OPTIONAL_LOCKS: "0", ...opts.env } });
    if (r.code !== 0) throw new GitCommandError(args[0], r.timedOut ? `git ${args[0]} took longer than ${Math.round((opts.timeoutMs ?? GIT_TIMEOUT_MS) / 1000)} s and was stopped` : r.stderr, r.code);
    return r.stdout;
  }

  /**
   * A command that changes the repository: queued behind our other changes, retried with backoff
   * while another program holds `index.lock`, then a clear error. Returns the result (non-zero exits
   * included) for the caller to interpret.
   */
  change(args: readonly string[], opts?: GitRunOptions): Promise<GitRunResult> {
    return this.runner.run(args, opts).then(async (r) => {
      for (const wait of LOCK_BACKOFF_MS) {
        if (r.code === 0 || !isLockError(r.stderr)) return r;
        await sleep(wait);
        r = await this.runner.run(args, opts);
      }
      if (r.code !== 0 && isLockError(r.stderr)) {
        throw new GitLockedError();
      }
      return r;
    });
  }

  /** Runs `fn` after every earlier queued change finished (one repository change at a time). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** HEAD's sha, or null in a repository without commits. */
  async headSha(): Promise<string | null> {
    const r = await this.runner.run(["rev-parse", "-q", "--verify", "HEAD^{commit}"], { env: { GIT_OPTIONAL_LOCKS: "0" } });
    const sha = r.stdout.trim();
    return r.code === 0 && sha ? sha : null;
  }

  async isAncestor(a: string, b: string): Promise<boolean> {
    const r = await this.runner.run(["merge-base", "--is-ancestor", a, b]);
    return r.code === 0;
  }
}

/** Another git program kept the repository locked through every retry. */
export class GitLockedError extends Error {
  constructor() {
    super(
      "Another git program (Obsidian Git, a terminal, an editor) held the repository's lock (index.lock) for several seconds. " +
        "Wait for it to finish and try again; if no git program is running, a crashed one left .git/index.lock behind — delete that file.",
    );
    this.name = "GitLockedError";
  }
}

export { GitMissingError };
