import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { clientConfigs } from "../common/client-config";
import { DEFAULT_PORT_FALLBACK, PortInUseError, startRuntime, type LogLevel } from "../common/runtime";
import { createGitFiles } from "../common/git-files";
import { createGitRunner } from "../common/git-process";
import { createNodeNet } from "../common/net";
import { PLUGIN_GITIGNORE } from "../common/state-gitignore";
import { removeStateLeftovers } from "../common/leftovers";
import { acquireServerLock, ServerLockedError, type ServerLock } from "../common/server-lock";
import { DEFAULT_CONFIG_DIR, FsVault } from "./fs-vault";
import { crashPointFromEnv } from "./crash-points";
import { PLUGIN_ID, resolveStateDir } from "./state-dir";
import { FsStateStore } from "./state-store";
import { DEFAULT_PORT, parseArgs, usage, VERSION } from "./args";
import { describeEmbeddings, type EmbeddingsStatus, type SemanticService } from "../../core/search/vector/semantic-service";
import { embedderOf } from "./embedder-flags";
import { bridgeMain } from "./bridge";
import { reserveGrowableArrays } from "../../core/memory";
import { useHostTimers } from "../../core/timers";
import { nodeTimers } from "../common/node-timers";

function main(): Promise<void> {
  // `cli.js bridge --url … --token-file …`: the stdio bridge for stdio-only clients (Claude Desktop).
  if (process.argv[2] === "bridge") return bridgeMain(process.argv.slice(3)).then((code) => process.exit(code));
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${usage()}\n`);
    process.exit(2);
  }
  if (args.help) {
    process.stdout.write(usage() + "\n");
    return Promise.resolve();
  }
  return run(args);
}

async function run(args: ReturnType<typeof parseArgs>): Promise<void> {
  useHostTimers(nodeTimers);
  // glibc keeps a grown array's old room as a hole in its heap (core/memory.ts): growable arrays get
  // room of their own. Other C libraries and Obsidian's renderer give big blocks back by themselves.
  if (process.platform === "linux") reserveGrowableArrays(true);
  const bundled = path.resolve(__dirname, "..", "examples", "vault");
  const root = path.resolve(args.vault ?? bundled);
  if (!existsSync(root)) {
    process.stderr.write(`No such folder: ${root}\n`);
    process.exit(2);
  }
  const log = (level: LogLevel, message: string) => {
    if (level === "debug" && !args.verbose) return;
    process.stderr.write(`[vault-mcp] ${level}: ${message}\n`);
  };
  const configDir = args.configDir ?? DEFAULT_CONFIG_DIR;
  const stateDir = resolveStateDir(root, { configDir, override: args.stateDir });
  // One server per vault: the lock is taken in the state folder and, when --state-dir moved that
  // elsewhere, also in the vault's default one (the plugin's data folder when the vault has an
  // Obsidian config folder), where the plugin and every other headless server on this vault look.
  const pluginDir = path.join(root, configDir, "plugins", PLUGIN_ID);
  const locks = takeLocks(stateDir, args.stateDir && resolveStateDir(root, { configDir }) === pluginDir ? pluginDir : undefined, log);
  const releaseLocks = () => {
    for (const l of locks) l.release();
  };
  process.on("exit", releaseLocks);
  const crash = crashPointFromEnv(process.env, (m) => log("warn", m));
  // The folder is checked now; it is listed and its notes read in the background while the server
  // already listens (tool calls wait for it: see startRuntime).
  // Its walk on the other core (dist/scan-worker.js, beside this file) while this one loads the search index.
  const scanWorkerFile = existingFile(path.join(__dirname, "scan-worker.js"));
  const vault = await FsVault.begin(root, { configDir, watch: true, log, ...(crash ? { crash } : {}), ...(scanWorkerFile ? { scanWorkerFile } : {}) }).catch((e: unknown) => {
    releaseLocks();
    throw e;
  });
  // No other server can be writing here now: the temp files a killed write left (the listing notes
  // them) are ours to remove. Our own writes use new names, so this cannot race with them.
  const leftoversRemoved = vault.listed().then(() => vault.removeLeftoverTemps());
  leftoversRemoved.catch(() => undefined);
  const leftovers = removeStateLeftovers(stateDir);
  if (leftovers) log("info", `Removed ${leftovers} temp file${leftovers === 1 ? "" : "s"} of an interrupted save from the state folder.`);
  // State kept inside the vault (the plugin's data folder): its caches stay out of the owner's git commits.
  if (isInside(stateDir, root)) {
    const ignore = path.join(stateDir, ".gitignore");
    try {
      if (!existsSync(ignore) || readFileSync(ignore, "utf8") !== PLUGIN_GITIGNORE) {
        mkdirSync(stateDir, { recursive: true });
        writeFileSync(ignore, PLUGIN_GITIGNORE);
      }
    } catch {
      /* a read-only vault: nothing to protect against */
    }
  }
  const token = args.token ?? (args.tokenFile ? readToken(args.tokenFile) : storedToken(stateDir));

  // Stop cleanly on a signal, from now on: the server listens before its start-up is over (the
  // search index loading), and a signal that arrives before a listener exists kills the process
  // with no clean-up. Whoever reads the banner may signal at once.
  let running: { close(): Promise<void> } | undefined;
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await running?.close();
    await vault.close();
    releaseLocks();
    process.exit(0);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());

  let runtime;
  try {
    runtime = await startRuntime({
      port: vault,
      host: "node",
      listenPort: args.port ?? DEFAULT_PORT,
      // Only the default port moves to the next free one; a --port given is that port or an error.
      portFallback: args.port === undefined ? DEFAULT_PORT_FALLBACK : 0,
      token: () => token,
      allowedOrigins: args.allowOrigins,
      writeMode: args.write,
      hiddenFolders: args.hidden,
      protectedFolders: args.protected,
      stateStore: new FsStateStore(stateDir, root),
      sqlWasm,
      version: VERSION,
      log,
      toolTimeoutMs: args.toolTimeoutMs,
      readLimits: {
        ...(args.maxReadKB ? { maxNoteBytes: args.maxReadKB * 1024 } : {}),
        ...(args.maxAttachmentKB ? { maxAttachmentBytes: args.maxAttachmentKB * 1024 } : {}),
      },
      ...(args.sessionIdleMinutes !== undefined ? { sessionIdleMs: args.sessionIdleMinutes * 60_000 } : {}),
      ...(args.maxSessions !== undefined ? { maxSessions: args.maxSessions } : {}),
      embedder: embedderOf(args, stateDir),
      ...(args.noGit ? {} : { gitRunner: createGitRunner({ cwd: root, program: args.gitProgram, allowHooks: args.gitHooks, helperFile: existingFile(path.join(__dirname, "git-helper.js")) }) }),
      gitOptions: { commitChanges: args.gitCommit && args.write, pushAfterCommit: args.gitPush && args.write, files: createGitFiles(root) },
      transfer: {
        ...(args.transferTtlMinutes ? { ttlMs: args.transferTtlMinutes * 60_000 } : {}),
        ...(args.uploadMaxMB ? { maxUploadBytes: args.uploadMaxMB * 1024 * 1024 } : {}),
      },
      net: createNodeNet(),
      fetch: { allowHosts: args.fetchAllowHosts, ...(args.fetchMaxMB ? { maxBytes: args.fetchMaxMB * 1024 * 1024 } : {}), ...(args.fetchContentTypes ? { contentTypes: args.fetchContentTypes } : {}) },
      // The console hears embeddings from before they start: a download quick enough to end while
      // the server was still starting would otherwise never be told.
      beforeStart: (services) => {
        if (services.semantic) reportEmbeddings(services.semantic, (line) => process.stderr.write(`[vault-mcp] ${line}\n`));
      },
    });
  } catch (e) {
    await vault.close();
    releaseLocks();
    if (e instanceof PortInUseError) {
      process.stderr.write(
        e.fallback
          ? `${e.message.replace(/ pick another port in the settings\.$/, "")} Start with --port <a free port>.\n`
          : `${e.message} The server did not start: a --port given is used exactly, never another. Stop the program holding port ${e.listenPort}, or start with another --port (without --port, the default ${DEFAULT_PORT} moves to the next free port).\n`,
      );
      process.exit(1);
    }
    throw e;
  }
  for (const l of locks) l.setPort(runtime.listenPort);

  running = runtime;
  if (stopping) return;
  // The banner says where to connect: after the listing (its leftovers removed) and after a rename
  // a crash cut short is finished (none: at once), so whoever waits for it finds both done.
  await leftoversRemoved.catch(() => undefined);
  await runtime.recovered;
  if (stopping) return;
  const out = process.stdout;
  out.write(`Vault MCP ${VERSION} serving "${vault.name}"${args.vault ? "" : " (the bundled example vault)"}${args.write ? " with write mode ON" : " read-only"}\n`);
  out.write(`\nEndpoint: ${runtime.url}\nToken:    ${token}\n`);
  const bridge = path.join(__dirname, "bridge.js");
  const configs = clientConfigs(runtime.url, token, vault.name, { bridgePath: existsSync(bridge) ? bridge : null });
  for (const c of configs.filter((c) => ["claude-code", "http", "claude-desktop"].includes(c.id))) out.write(`\n${c.label}:\n${c.text}\n`);
  out.write("\nPress Ctrl+C to stop.\n");
}

/**
 * Takes the lock in the state folder and, when given, in the plugin's data folder too (best effort:
 * a folder that cannot be written). A live holder ends the process (exit code 3) with its description.
 */
function takeLocks(stateDir: string, pluginDir: string | undefined, log: (level: LogLevel, message: string) => void): ServerLock[] {
  const taken: ServerLock[] = [];
  for (const dir of pluginDir && pluginDir !== stateDir ? [stateDir, pluginDir] : [stateDir]) {
    try {
      taken.push(acquireServerLock(dir, { host: "node" }));
    } catch (e) {
      if (e instanceof ServerLockedError) {
        for (const l of taken) l.release();
        process.stderr.write(`${e.message}\n(lock file: ${e.file})\n`);
        process.exit(3);
      }
      // A folder we cannot write to (read-only): nothing of ours can be written there either.
      log("warn", `Could not take the server lock in ${dir}: ${(e as Error).message}`);
    }
  }
  return taken;
}

/**
 * Embeddings on the console (stderr), in the words of embeddings_status: every change of state, and
 * progress at most every 10 s (download, building) — so a headless owner sees the download, the build,
 * ready, and why it is unavailable.
 */
export function reportEmbeddings(semantic: SemanticService, write: (line: string) => void): () => void {
  let lastState = "";
  let lastLine = "";
  let lastAt = 0;
  const show = (s: EmbeddingsStatus) => {
    const line = describeEmbeddings(s);
    const now = Date.now();
    if (s.state !== lastState || (line !== lastLine && now - lastAt >= 10_000 && (s.state === "building" || s.state === "downloading"))) {
      lastState = s.state;
      lastLine = line;
      lastAt = now;
      write(line);
    }
  };
  show(semantic.status());
  return semantic.onProgress(show);
}

function readToken(file: string): string {
  const t = readFileSync(file, "utf8").trim();
  if (t.length < 16) throw new Error(`The token in ${file} is shorter than 16 characters; use a long random token.`);
  return t;
}

/** A token generated on first run, kept (mode 0600) in the state folder so client configs keep working. */
function storedToken(stateDir: string): string {
  const file = path.join(stateDir, "token");
  if (existsSync(file)) {
    const t = readFileSync(file, "utf8").trim();
    if (t.length >= 16) return t;
  }
  const t = randomBytes(32).toString("base64url");
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(file, t + "\n", { mode: 0o600 });
  return t;
}

main().catch((e: unknown) => {
  process.stderr.write(`vault-mcp failed to start: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});


/** `p` when it exists (a built file beside this one), else undefined. */
function existingFile(p: string): string | undefined {
  return existsSync(p) ? p : undefined;
}

function isInside(p: string, dir: string): boolean {
  const rel = path.relative(dir, p);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
}
