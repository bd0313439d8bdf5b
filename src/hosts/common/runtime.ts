import { createCoreServices, type CoreOptions, type CoreServices } from "../../core/services";
import { serverInstructions } from "../../core/services/instructions";
import { createMcpServer, type ToolProfile } from "../../mcp/server";
import { allTools } from "../../mcp/tools";
import { AddressInUseError, startHttpServer } from "../../transport/http";
import { whenListed, type VaultPort } from "../../core/vault";
import type { GitRunner } from "../../core/git/runner";
import { detectGitRepo, type GitOptions } from "../../core/git/service";

export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * What a host passes to start a server: the core's options (host, write mode, folders, state, caps,
 * confirmer, workspace…) plus the vault and what the server itself needs.
 */
export interface RuntimeOptions extends CoreOptions {
  port: VaultPort;
  /** TCP port to listen on (127.0.0.1). 0 picks a free one (tests). */
  listenPort: number;
  /** The current bearer token (read at every request, so Regenerate takes effect at once). */
  token: () => string;
  /** Origins allowed to call (none by default). */
  allowedOrigins: readonly string[];
  /** Plugin/server version, reported at initialize. */
  version: string;
  log?: (level: LogLevel, message: string) => void;
  /**
   * When `listenPort` is taken, how many following ports to try (several vaults open at once each
   * run their own server). Default 9 (28765 → up to 28774); 0 = exactly `listenPort`. Hosts give 0
   * for a port the user chose: a client configured for it must never reach another vault's server.
   */
  portFallback?: number;
  /** Which tools clients see (default: full). */
  tools?: ToolProfile;
  /** Time limit of one read tool call in ms (default 10 s; 0 = none). */
  toolTimeoutMs?: number;
  /** Runs git in the vault's folder (both hosts); the git tools exist when the vault turns out git-backed. */
  gitRunner?: GitRunner;
  gitOptions?: GitOptions;
  /** MCP sessions: closed after this long idle (default 30 min; 0 = never), and at most this many (default 100). */
  sessionIdleMs?: number;
  maxSessions?: number;
  /** Called with the services just before they start (a listener that must hear their first reports: the headless console). */
  beforeStart?: (services: CoreServices) => void;
}

export interface Runtime {
  /** `http://127.0.0.1:<port>/mcp` */
  readonly url: string;
  readonly listenPort: number;
  /** MCP sessions open now. */
  readonly sessionCount: number;
  /** POSTs to /mcp answered without express so far (its lane for the common requests). */
  readonly directPosts: number;
  /**
   * Renames a crash cut short are finished (at once when the journal holds none; else once the
   * vault is open). The server listens before: tool calls wait for it.
   */
  readonly recovered: Promise<void>;
  /** Stops the HTTP server (port free again), closes sessions and background work. */
  close(): Promise<void>;
}

export const DEFAULT_PORT_FALLBACK = 9;

/** Tries `first`, then up to `tries` following ports; rethrows the last `AddressInUseError` (with `first`). */
async function listenWithFallback<T>(tries: number, listen: (port: number) => Promise<T>, first: number, log: (level: LogLevel, m: string) => void): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      const r = await listen(first + i);
      if (i > 0) log("warn", `port ${first} was taken; listening on ${first + i} instead (copy the client configuration again)`);
      return r;
    } catch (e) {
      if (!(e instanceof AddressInUseError) || i >= tries || first + i >= 65535) {
        if (e instanceof AddressInUseError) throw new AddressInUseError(first);
        throw e;
      }
    }
  }
}

/**
 * Thrown by `startRuntime` when the port is taken; hosts show a notice rather than a stack trace.
 * `fallback` false: exactly that port was asked for (an explicit port never moves).
 */
export class PortInUseError extends Error {
  constructor(
    readonly listenPort: number,
    readonly fallback = true,
  ) {
    super(
      fallback
        ? `Port ${listenPort} and the ports after it are already in use on 127.0.0.1. Another program (or other vaults' servers) holds them; pick another port in the settings.`
        : `Port ${listenPort} is already in use on 127.0.0.1 by another program (or another vault's server).`,
    );
    this.name = "PortInUseError";
  }
}

/**
 * Starts everything a host needs: core services over the vault port, and the MCP server behind the
 * authenticated localhost HTTP transport. Both hosts call this; neither knows the layers below.
 */
export async function startRuntime(opts: RuntimeOptions): Promise<Runtime & { services: CoreServices }> {
  const log = opts.log ?? (() => {});
  const detection = opts.gitRunner ? await detectGitRepo(opts.gitRunner) : undefined;
  if (detection?.kind === "repo") log("info", `git-backed vault${detection.prefix ? ` (the vault is "${detection.prefix.replace(/\/$/, "")}" in its repository)` : ""}: git tools on`);
  else if (detection?.reason === "git_missing") log("warn", `${detection.message} The git tools are off.`);
  // No git-backed vault: nothing will run git, so its helper process ends now.
  if (detection && detection.kind !== "repo") opts.gitRunner?.close?.();
  const services = createCoreServices(opts.port, {
    ...opts,
    ...(detection ? { git: { detection, options: opts.gitOptions ?? { commitChanges: false, pushAfterCommit: false } } } : {}),
  });
  // The server listens while the vault is still being opened (FsVault lists and reads it in the
  // background): tool calls wait for `opening` (search answers from its index meanwhile, saying so).
  // A saved search index answers first: the vault reads its notes' metadata (seconds at 100k notes)
  // once the index covers the vault (or needs that metadata to go on).
  if (services.search.firstPass) opts.port.deferMetadata?.(services.search.firstPass());
  // A rename a crash cut short is finished once the vault is open, before any tool call or write is
  // served (and said so in the log, in `stats` and in the activity log). Failing to read the journal
  // only warns.
  const recovery = services.writer.recoverInterruptedRenames();
  const opening = Promise.all([opts.port.ready(), recovery]);
  opening.catch(() => undefined);
  // The instructions name the vault's root AGENTS.md/CLAUDE.md: known once the files are listed.
  const instructions = whenListed(opts.port).then(() => serverInstructions(opts.port, services.policy, opts.writeMode));
  instructions.catch(() => undefined);
  const tries = opts.listenPort === 0 ? 0 : Math.max(0, opts.portFallback ?? DEFAULT_PORT_FALLBACK);
  let http;
  try {
    http = await listenWithFallback(tries, (port) => startHttpServer({
      port,
      token: opts.token,
      allowedOrigins: opts.allowedOrigins,
      tokenHint:
        opts.host === "obsidian"
          ? "copy the token from Obsidian → Settings → Vault MCP."
          : "the headless server printed the token when it started (or pass your own with --token).",
      transfer: services.transfer,
      createServer: async () =>
        createMcpServer(services, allTools, { name: `vault-mcp (${opts.port.name})`, version: opts.version, instructions: await instructions, log, tools: opts.tools, toolTimeoutMs: opts.toolTimeoutMs, opening }),
      log,
      sessionIdleMs: opts.sessionIdleMs,
      maxSessions: opts.maxSessions,
    }), opts.listenPort, log);
  } catch (e) {
    await services.close();
    if (e instanceof AddressInUseError) throw new PortInUseError(e.port, tries > 0);
    throw e;
  }
  const running = http;
  // Transfer links point at the port actually listened on.
  services.transfer.baseUrl = http.url.replace(/\/mcp$/, "");
  opts.beforeStart?.(services);
  await services.start();
  return {
    url: http.url,
    listenPort: http.port,
    get sessionCount() {
      return running.sessionCount;
    },
    get directPosts() {
      return running.directPosts;
    },
    services,
    recovered: recovery.then(
      () => undefined,
      () => undefined,
    ),
    close: async () => {
      await http.close();
      await services.close();
    },
  };
}
