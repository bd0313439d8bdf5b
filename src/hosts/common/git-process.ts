import { fork, spawn, type ChildProcess } from "node:child_process";
import { statSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, resolve as resolvePath } from "node:path";
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

/**
 * `core.hooksPath` when hooks are off: a folder inside the running program's own file, which cannot
 * exist (nothing can be created under a file), so no hook of the vault's repository runs. Nothing is
 * created on disk (an empty folder in the system temp folder was made per process and never removed).
 */
export function noHooksPath(): string {
  return join(process.execPath, "no-hooks");
}

/**
 * Settings given on every call, above the repository's own configuration, that switch off programs a
 * repository can name without naming a driver: signing (`gpg.program` and friends run only to sign or
 * verify), push certificates, the `ext::` transport (a remote URL that is a command line), the
 * alternates' refs command, the proxy of the git:// protocol (`GIT_PROXY_COMMAND` below), external diff,
 * and recursion into submodules (a submodule's own configuration is not read here).
 * Editors are `:` by environment (git runs none), hooks go to `noHooksPath()`, fsmonitor is off, and
 * pagers never start (stdout is a pipe).
 */
const PROGRAMS_OFF = [
  "core.fsmonitor=false",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "push.gpgSign=false",
  "merge.verifySignatures=false",
  "log.showSignature=false",
  "protocol.ext.allow=never",
  "core.alternateRefsCommand=exit 0",
  "diff.external=",
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
  "push.recurseSubmodules=no",
  "diff.ignoreSubmodules=all",
];

/** Commands that talk to a remote: only they may use the owner's credential helper, ssh command and askpass. */
const NETWORK_COMMANDS = new Set(["fetch", "push", "pull", "ls-remote"]);

/** One entry of `git config --list --show-scope --show-origin`. */
interface ConfigEntry {
  scope: string;
  origin: string;
  key: string;
  value: string | null;
}

/** The configuration git sees in a folder, and the files it came from (to notice a change). */
interface ConfigSnapshot {
  entries: ConfigEntry[];
  /** Files whose change means the configuration may have changed: every origin and every include target. */
  files: string[];
  stamp: string;
  /** An `includeIf.onbranch:` include: it depends on the checked-out branch, so the listing is read every time. */
  volatile: boolean;
}

/** The configuration per git program and folder, shared by the runners of this process (the helper makes one per call). */
const configCache = new Map<string, { snapshot: ConfigSnapshot | null; pending: Promise<ConfigSnapshot> | null }>();

function fileStamp(files: readonly string[]): string {
  return files
    .map((f) => {
      try {
        const st = statSync(f);
        return `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`;
      } catch {
        return "-";
      }
    })
    .join("|");
}

/** Parses `git config --list -z --show-scope --show-origin`: scope NUL origin NUL key LF value NUL (no LF for a key without value). */
export function parseConfigList(out: string): ConfigEntry[] {
  const parts = out.split("\0");
  const entries: ConfigEntry[] = [];
  for (let i = 0; i + 2 < parts.length; i += 3) {
    const [scope, origin, kv] = [parts[i], parts[i + 1], parts[i + 2]];
    const nl = kv.indexOf("\n");
    entries.push({ scope, origin, key: nl < 0 ? kv : kv.slice(0, nl), value: nl < 0 ? null : kv.slice(nl + 1) });
  }
  return entries;
}

/** `section`, `subsection` (null for two-part keys; may hold dots) and `name` of a configuration key. */
function splitKey(key: string): { section: string; sub: string | null; name: string } {
  const first = key.indexOf(".");
  const last = key.lastIndexOf(".");
  if (first < 0) return { section: key.toLowerCase(), sub: null, name: "" };
  return { section: key.slice(0, first).toLowerCase(), sub: first === last ? null : key.slice(first + 1, last), name: key.slice(last + 1).toLowerCase() };
}

/** A configuration setting the repository named that we cannot override from the command line. */
class UnsafeConfigError extends Error {}

/**
 * The `-c` settings that switch off every program named by a driver in the configuration (filters,
 * merge drivers, diff drivers), whichever file defined it; for calls that talk to a remote, the
 * transport's programs the repository's own configuration names (credential helper, ssh command,
 * askpass) are replaced by the owner's (system and global configuration); upload-pack and receive-pack
 * are git's own (`transportArgs`).
 */
export function programOverrides(entries: readonly ConfigEntry[], network: boolean): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const set = (key: string, value: string) => {
    if (/[=\n\0]/.test(key)) throw new UnsafeConfigError(`the repository's git configuration names "${key.split("\n")[0].slice(0, 80)}", which cannot be switched off safely; rename it in .git/config`);
    out.push("-c", `${key}=${value}`);
  };
  for (const e of entries) {
    const { section, sub } = splitKey(e.key);
    if (sub === null) continue;
    const id = `${section}\0${sub}`;
    if (seen.has(id)) continue;
    if (section === "filter") {
      seen.add(id);
      for (const k of ["clean", "smudge", "process"]) set(`filter.${sub}.${k}`, "");
      set(`filter.${sub}.required`, "false");
    } else if (section === "merge") {
      seen.add(id);
      // Not empty: an empty driver fails the whole merge. `exit 1` (the shell's builtin) reports a conflict and keeps our side.
      set(`merge.${sub}.driver`, "exit 1");
    } else if (section === "diff") {
      seen.add(id);
      // Empty: a diff that would use them fails instead (ours pass --no-ext-diff --no-textconv and never do).
      set(`diff.${sub}.command`, "");
      set(`diff.${sub}.textconv`, "");
    }
  }
  const repoScoped = (e: ConfigEntry) => e.scope === "local" || e.scope === "worktree";
  const isHelper = (e: ConfigEntry) => {
    const k = splitKey(e.key);
    return k.section === "credential" && k.name === "helper";
  };
  if (!network) {
    // Nothing else talks to a remote; no helper or askpass, whoever named it.
    set("credential.helper", "");
    set("core.askPass", "");
    return out;
  }
  // The owner's credential helpers, in their order, when the repository's configuration adds its own.
  if (entries.some((e) => isHelper(e) && repoScoped(e))) {
    set("credential.helper", "");
    for (const e of entries) if (isHelper(e) && !repoScoped(e) && e.value) set(e.key, e.value);
  }
  const ownerValue = (key: string, fallback: string) => {
    const mine = entries.filter((e) => e.key.toLowerCase() === key.toLowerCase());
    if (!mine.some(repoScoped)) return;
    const owner = mine.filter((e) => !repoScoped(e) && e.value !== null);
    set(key, owner.length ? (owner[owner.length - 1].value as string) : fallback);
  };
  ownerValue("core.sshCommand", "ssh");
  ownerValue("core.askPass", "");
  return out;
}

/** Reads the configuration git sees in `cwd` (once, and again when one of its files changed). */
async function configSnapshot(program: string, cwd: string, env: Record<string, string>): Promise<ConfigSnapshot> {
  const id = `${program}\0${cwd}`;
  let slot = configCache.get(id);
  if (!slot) {
    slot = { snapshot: null, pending: null };
    configCache.set(id, slot);
  }
  const cur = slot.snapshot;
  if (cur && !cur.volatile && fileStamp(cur.files) === cur.stamp) return cur;
  const s = slot;
  s.pending ??= readConfig(program, cwd, env).then(
    (snap) => {
      s.snapshot = snap;
      s.pending = null;
      return snap;
    },
    (e: unknown) => {
      s.pending = null;
      throw e;
    },
  );
  return s.pending;
}

async function readConfig(program: string, cwd: string, env: Record<string, string>): Promise<ConfigSnapshot> {
  const r = await spawnGit(program, cwd, env, ["config", "--list", "-z", "--show-scope", "--show-origin"], { env: { GIT_OPTIONAL_LOCKS: "0" } });
  if (r.code !== 0) {
    // `--show-scope` came with git 2.26 (2020): an older git cannot tell the owner's settings from the repository's.
    if (/unknown option|usage: git config/i.test(r.stderr)) throw new UnsafeConfigError("this git is too old to be run safely here: install git 2.26 or later");
    throw new UnsafeConfigError(`git could not read the repository's configuration: ${r.stderr.trim().split("\n")[0] ?? ""}`);
  }
  const entries = parseConfigList(r.stdout);
  const files = new Set<string>();
  let volatile = false;
  for (const e of entries) {
    if (!e.origin.startsWith("file:")) continue;
    const file = resolvePath(cwd, e.origin.slice(5));
    files.add(file);
    const k = splitKey(e.key);
    if ((k.section === "include" || k.section === "includeif") && k.name === "path" && e.value) {
      if (k.section === "includeif" && k.sub?.toLowerCase().startsWith("onbranch:")) volatile = true;
      const target = e.value.startsWith("~/") ? join(homedir(), e.value.slice(2)) : e.value;
      files.add(isAbsolute(target) ? target : resolvePath(dirname(file), target));
    }
  }
  const list = [...files];
  return { entries, files: list, stamp: fileStamp(list), volatile };
}

/** Where the command is in an argument list that may start with our own `-c key=value` pairs. */
function commandAt(args: readonly string[]): number {
  let i = 0;
  while (i < args.length && args[i] === "-c") i += 2;
  return i;
}

function commandOf(args: readonly string[]): string {
  return args[commandAt(args)] ?? "";
}

/**
 * Fetch and push with git's own upload-pack and receive-pack: `remote.<name>.uploadpack` and
 * `.receivepack` name programs (run here for a remote on this machine), and the first value given
 * wins, so only the command-line option overrides them. A push to a repository on this machine (a
 * path or file:// URL) runs receive-pack here, in that repository, with its hooks: unless hooks are
 * allowed, it runs with `core.hooksPath` off too (`receivePack`).
 */
function transportArgs(args: readonly string[], receivePack: string): readonly string[] {
  const at = commandAt(args);
  const cmd = args[at];
  const option = cmd === "push" ? `--receive-pack=${receivePack}` : cmd === "fetch" || cmd === "pull" || cmd === "ls-remote" ? "--upload-pack=git-upload-pack" : null;
  return option ? [...args.slice(0, at + 1), option, ...args.slice(at + 1)] : args;
}

/** A remote URL (after git's own rewriting) that names a repository on this machine: a path or file://. */
export function isLocalRemote(url: string): boolean {
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(url)) return /^file:\/\//i.test(url);
  if (url.includes("::")) return false; // transport::address (a remote helper)
  // scp-like host:path (a colon before any slash), but not a Windows drive letter.
  if (/^[^/\\]*:/.test(url) && !/^[A-Za-z]:[\\/]/.test(url)) return false;
  return true;
}

/** A value for the shell, in single quotes. */
function shellQuote(s: string): string {
  return `'${s.replace(/'/g, "'\\''")}'`;
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
    // The git:// protocol's proxy: the owner's environment, never a configuration's `core.gitProxy`.
    GIT_PROXY_COMMAND: process.env.GIT_PROXY_COMMAND ?? "",
  });
  const globalArgs = [
    "-c", "core.quotepath=off",
    "-c", "color.ui=false",
    "-c", "i18n.logOutputEncoding=UTF-8",
    "-c", "advice.detachedHead=false",
    ...PROGRAMS_OFF.flatMap((kv) => ["-c", kv]),
    ...(opts.allowHooks ? [] : ["-c", `core.hooksPath=${noHooksPath()}`]),
  ];
  return {
    async run(args: readonly string[], o: GitRunOptions = {}): Promise<GitRunResult> {
      let extra: string[];
      try {
        extra = programOverrides((await configSnapshot(program, opts.cwd, baseEnv)).entries, NETWORK_COMMANDS.has(commandOf(args)));
      } catch (e) {
        // A configuration we cannot make safe: git is not started, the call fails with the reason.
        if (e instanceof UnsafeConfigError) return { code: 128, stdout: "", stderr: `fatal: ${e.message}`, stopped: false, timedOut: false };
        throw e;
      }
      let receivePack = "git-receive-pack";
      const at = commandAt(args);
      if (args[at] === "push" && !opts.allowHooks) {
        // The remote as given (a name or a URL), and its push URL as git rewrites it.
        const remote = args.slice(at + 1).find((a) => !a.startsWith("-"));
        const url = remote ? await spawnGit(program, opts.cwd, baseEnv, [...globalArgs, ...extra, "remote", "get-url", "--push", remote]) : null;
        const target = url && url.code === 0 ? url.stdout.trim() : (remote ?? "");
        if (isLocalRemote(target)) receivePack = `git -c core.hooksPath=${shellQuote(noHooksPath())} receive-pack`;
      }
      return spawnGit(program, opts.cwd, baseEnv, [...globalArgs, ...extra, ...transportArgs(args, receivePack)], o);
    },
  };
}

/** Starts git with exactly these arguments; see `createDirectGitRunner`. */
function spawnGit(program: string, cwd: string, baseEnv: Record<string, string>, fullArgs: readonly string[], o: GitRunOptions = {}): Promise<GitRunResult> {
  return new Promise((resolve, reject) => {
    let child;
    try {
      child = spawn(program, fullArgs, {
        cwd,
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
