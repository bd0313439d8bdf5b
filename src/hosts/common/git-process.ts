import { fork, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GitMissingError, GIT_TIMEOUT_MS, type GitRunner, type GitRunOptions, type GitRunResult } from "../../core/git/runner";

export interface GitProcessOptions {
  /** The vault's folder (absolute): git runs there and finds the repository from it. */
  cwd: string;
  /** The git program (default `git`, found on the PATH). */
  program?: string;
  /** Run the repository's hooks on our commits (default: no hooks). */
  allowHooks?: boolean;
  /** dist/git-helper.js: start git from that small process (see git-helper.ts); without it, or when it fails, directly. */
  helperFile?: string;
}

/** Environment variables that would point git at another repository, work tree, index or configuration. */
const DROPPED_ENV = [
  "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
  "GIT_NAMESPACE", "GIT_COMMON_DIR", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT",
  "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_TRACE", "GIT_CEILING_DIRECTORIES",
  "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_QUARANTINE_PATH",
];

let emptyHooksDir: string | null = null;
/** An empty folder of our own (mode 0700) as `core.hooksPath`: no hook of the vault's repository runs. */
function noHooksDir(): string {
  emptyHooksDir ??= mkdtempSync(join(tmpdir(), "vault-mcp-no-hooks-"));
  return emptyHooksDir;
}

/**
 * The git runner on `child_process.spawn`: arguments as an array (no shell), stdout streamed and
 * decoded in chunks (a long log never blocks the event loop in one piece), a time limit, and
 * `GitMissingError` when the program is not there.
 */
export function createGitRunner(opts: GitProcessOptions): GitRunner {
  const direct = createDirectGitRunner(opts);
  return opts.helperFile ? helperRunner(opts, opts.helperFile, direct) : direct;
}

/** Git started by this process itself. */
export function createDirectGitRunner(opts: GitProcessOptions): GitRunner {
  const program = opts.program?.trim() || "git";
  // eslint-disable-next-line no-restricted-syntax -- environment variable names, not vault text
  const baseEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !DROPPED_ENV.includes(k)) baseEnv[k] = v;
  Object.assign(baseEnv, {
    GIT_TERMINAL_PROMPT: "0",
    GIT_LITERAL_PATHSPECS: "1",
    GIT_EDITOR: ":",
    GIT_SEQUENCE_EDITOR: ":",
    GIT_MERGE_AUTOEDIT: "no",
    LC_ALL: "C",
    LANGUAGE: "C",
  });
  const globalArgs = [
    "-c", "core.fsmonitor=false",
    "-c", "core.quotepath=off",
    "-c", "color.ui=false",
    "-c", "log.showSignature=false",
    "-c", "i18n.logOutputEncoding=UTF-8",
    "-c", "advice.detachedHead=false",
    ...(opts.allowHooks ? [] : ["-c", `core.hooksPath=${noHooksDir()}`]),
  ];
  return {
    run(args: readonly string[], o: GitRunOptions = {}): Promise<GitRunResult> {
      return new Promise((resolve, reject) => {
        let child;
        try {
          child = spawn(program, [...globalArgs, ...args], {
            cwd: opts.cwd,
            env: o.env ? { ...baseEnv, ...o.env } : baseEnv,
            shell: false,
            windowsHide: true,
            stdio: ["pipe", "pipe", "pipe"],
          });
        } catch (e) {
          reject((e as NodeJS.ErrnoException).code === "ENOENT" ? new GitMissingError(program) : e instanceof Error ? e : new Error(String(e)));
          return;
        }
        const decoder = new TextDecoder();
        let stdout = "";
        const bytes: Buffer[] = [];
        let stderr = "";
        let stopped = false;
        let timedOut = false;
        let settled = false;
        const timer = setTimeout(() => {
          timedOut = true;
          child.kill("SIGKILL");
        }, o.timeoutMs ?? GIT_TIMEOUT_MS);
        child.stdout.on("data", (b: Buffer) => {
          if (stopped) return;
          if (o.binary) {
            bytes.push(b);
            return;
          }
          const text = decoder.decode(b, { stream: true });
          if (o.onStdout) {
            if (o.onStdout(text) === false) {
              stopped = true;
              child.kill("SIGTERM");
            }
          } else stdout += text;
        });
        child.stderr.on("data", (b: Buffer) => {
          if (stderr.length < 64_000) stderr += b.toString("utf8");
        });
        child.on("error", (e: NodeJS.ErrnoException) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          reject(e.code === "ENOENT" ? new GitMissingError(program) : e);
        });
        child.on("close", (code) => {
          clearTimeout(timer);
          if (settled) return;
          settled = true;
          if (!stopped && !o.binary) {
            const tail = decoder.decode();
            if (o.onStdout) {
              if (tail) o.onStdout(tail);
            } else stdout += tail;
          }
          resolve({
            code: stopped || timedOut ? -1 : (code ?? -1),
            stdout,
            ...(o.binary ? { stdoutBytes: new Uint8Array(Buffer.concat(bytes)) } : {}),
            stderr,
            stopped,
            timedOut,
          });
        });
        child.stdin.on("error", () => undefined);
        if (o.input !== undefined) child.stdin.end(o.input);
        else child.stdin.end();
      });
    },
  };
}

/**
 * Git started by the helper process (one per runner, started on first use, ended with this process).
 * When the helper cannot start or dies, calls go to `direct` instead: slower from a large process,
 * never failing for that reason.
 */
function helperRunner(opts: GitProcessOptions, helperFile: string, direct: GitRunner): GitRunner {
  let helper: ChildProcess | null = null;
  let broken = false;
  let nextId = 1;
  const pending = new Map<number, { resolve: (r: GitRunResult) => void; reject: (e: Error) => void; onStdout?: (chunk: string) => boolean | void; args: readonly string[]; o: GitRunOptions }>();
  /** The helper answered once: it runs. Before that, a failure means it never started any call. */
  let alive = false;
  const setup: GitProcessOptions = { cwd: opts.cwd, program: opts.program, allowHooks: opts.allowHooks };
  // A call the helper died in fails (it may have run: never repeated); later calls run directly.
  const fail = (why: Error) => {
    broken = true;
    helper = null;
    // A helper that never ran (a missing or broken file): its calls never started; run them directly.
    for (const p of pending.values()) {
      if (alive) p.reject(why);
      else direct.run(p.args, p.o).then(p.resolve, p.reject);
    }
    pending.clear();
  };
  const start = (): ChildProcess | null => {
    if (helper || broken) return helper;
    try {
      // Inside Obsidian `process.execPath` is Electron: ELECTRON_RUN_AS_NODE makes it a plain Node.
      const h = fork(helperFile, [], { serialization: "advanced", stdio: ["ignore", "ignore", "ignore", "ipc"], env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" } });
      h.on("message", (m: { id: number; chunk?: string; result?: GitRunResult; error?: { message: string; missing: boolean } }) => {
        alive = true;
        const p = pending.get(m.id);
        if (!p) return;
        if (m.chunk !== undefined) {
          if (p.onStdout?.(m.chunk) === false) h.send({ id: m.id, stop: true });
          return;
        }
        pending.delete(m.id);
        if (pending.size === 0) idle(h);
        if (m.error) p.reject(m.error.missing ? new GitMissingError(opts.program?.trim() || "git") : new Error(m.error.message));
        else if (m.result) p.resolve(m.result.stdoutBytes ? { ...m.result, stdoutBytes: new Uint8Array(m.result.stdoutBytes) } : m.result);
      });
      h.on("error", (e) => fail(e));
      h.on("exit", () => {
        if (helper === h) fail(new Error("the git helper process stopped"));
      });
      idle(h);
      helper = h;
    } catch {
      broken = true;
    }
    return helper;
  };
  return {
    run(args, o = {}) {
      const h = start();
      if (!h) return direct.run(args, o);
      const id = nextId++;
      const { onStdout, ...rest } = o;
      return new Promise<GitRunResult>((resolve, reject) => {
        pending.set(id, { resolve, reject, onStdout, args, o });
        h.ref();
        h.channel?.ref();
        h.send({ id, setup, args: [...args], opts: { ...rest, stream: onStdout !== undefined } });
      });
    },
    close() {
      const h = helper;
      helper = null;
      broken = true;
      h?.kill();
    },
  };
}

/** A helper with nothing to do does not keep this process alive. */
function idle(h: ChildProcess): void {
  h.unref();
  h.channel?.unref();
}
