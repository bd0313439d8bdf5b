import { readFileSync } from "node:fs";
import type { Readable, Writable } from "node:stream";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JSONRPCMessage, RequestId } from "@modelcontextprotocol/sdk/types.js";
import { DEFAULT_PORT } from "./args";
import { TOKEN_ENV } from "../common/mcpb";

/**
 * A stdio ⇄ Streamable HTTP bridge for stdio-only MCP clients (Claude Desktop): JSON-RPC lines on
 * stdin/stdout on one side, the local Vault MCP server (bearer token) on the other. Messages are
 * forwarded unchanged. When the server restarts underneath (session 404, connection refused), the
 * bridge opens a new session with the client's original initialize params and goes on forwarding;
 * while the server is down, requests get a JSON-RPC error saying so. Only JSON-RPC goes to stdout.
 */
export interface BridgeOptions {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  token: string;
  stdin?: Readable;
  stdout?: Writable;
  /** Diagnostics (stderr in the CLI); never stdout. */
  log?: (message: string) => void;
  /** Attempts to reach the server before a request is answered with an error (default 6). */
  maxAttempts?: number;
  /** First retry delay in ms, doubled each attempt up to 4 s (default 250). */
  retryDelayMs?: number;
}

export interface Bridge {
  /** Resolves when the client side closes (stdin ended) and the bridge has shut down. */
  readonly closed: Promise<void>;
  close(): Promise<void>;
}

/** JSON-RPC error code for "the server is unreachable / the request was interrupted". */
export const SERVER_UNAVAILABLE = -32000;

const INTERNAL_PREFIX = "vault-mcp-bridge:";

type Upstream = StreamableHTTPClientTransport;
type Pending = { resolve: (m: JSONRPCMessage) => void; reject: (e: Error) => void };

function isRequest(m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId; method: string } {
  return "method" in m && "id" in m && m.id !== undefined;
}
function isResponse(m: JSONRPCMessage): m is JSONRPCMessage & { id: RequestId } {
  return !("method" in m) && "id" in m;
}

/** Why a send failed: the session is gone, the server is down, or something not worth retrying. */
function classify(e: unknown): "session-lost" | "unreachable" | "fatal" {
  if (e instanceof StreamableHTTPError) return e.code === 404 ? "session-lost" : "fatal";
  const cause = (e as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  const text = e instanceof Error ? `${e.message} ${typeof cause?.code === "string" ? cause.code : ""} ${typeof cause?.message === "string" ? cause.message : ""}` : String(e);
  if (/fetch failed|ECONNREFUSED|ECONNRESET|EPIPE|socket hang up|other side closed|terminated|UND_ERR/i.test(text)) return "unreachable";
  return "fatal";
}

function describe(e: unknown): string {
  if (e instanceof StreamableHTTPError) {
    const body = /\{.*\}/s.exec(e.message)?.[0];
    try {
      const parsed = body ? (JSON.parse(body) as { error?: { message?: string } }) : undefined;
      if (parsed?.error?.message) return `HTTP ${e.code}: ${parsed.error.message}`;
    } catch {
      // not JSON: fall through
    }
    return `HTTP ${e.code}: ${e.message}`;
  }
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  return `${e instanceof Error ? e.message : String(e)}${cause?.code ? ` (${cause.code})` : ""}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startBridge(opts: BridgeOptions): Bridge {
  const log = opts.log ?? (() => {});
  const maxAttempts = opts.maxAttempts ?? 6;
  const baseDelay = opts.retryDelayMs ?? 250;
  const stdin = opts.stdin ?? process.stdin;
  const client = new StdioServerTransport(stdin, opts.stdout ?? process.stdout);

  let upstream: Upstream | undefined;
  /** The client's initialize request params, replayed for every new session. */
  let initParams: Record<string, unknown> | undefined;
  let clientSentInitialized = false;
  let clientInitId: RequestId | undefined;
  let generation = 0;
  let internalSeq = 0;
  /** Requests the client sent upstream and still waits for: id → session generation. */
  const inFlight = new Map<RequestId, number>();
  /** Our own requests (re-initialize, ping), answered by the server, never shown to the client. */
  const internal = new Map<string, Pending>();
  /** Client→server traffic is serialized so that a reconnect happens before the next message goes out. */
  let queue: Promise<void> = Promise.resolve();
  let sending = false;
  let probeQueued = false;
  let closing = false;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));

  const toClient = (m: JSONRPCMessage) => {
    client.send(m).catch((e: unknown) => log(`could not write to stdout: ${describe(e)}`));
  };
  const errorToClient = (id: RequestId, message: string, code = SERVER_UNAVAILABLE) => {
    inFlight.delete(id);
    toClient({ jsonrpc: "2.0", id, error: { code, message } });
  };
  const enqueue = (task: () => Promise<void>) => {
    queue = queue.then(task).catch((e: unknown) => log(`bridge error: ${describe(e)}`));
  };

  const downMessage = (why: string) =>
    `Vault MCP is not reachable at ${opts.url} (${why}). Start Obsidian with the Vault MCP plugin enabled (or the headless server), then retry.`;

  function attach(t: Upstream, gen: number) {
    t.onmessage = (m: JSONRPCMessage) => {
      if (gen !== generation) return;
      if (isResponse(m) && typeof m.id === "string" && m.id.startsWith(INTERNAL_PREFIX)) {
        const p = internal.get(m.id);
        internal.delete(m.id);
        p?.resolve(m);
        return;
      }
      if (isResponse(m)) {
        inFlight.delete(m.id);
        // Learn the negotiated protocol version from the client's initialize, to send it as a header.
        if (m.id === clientInitId && "result" in m) {
          const v = (m.result as { protocolVersion?: string }).protocolVersion;
          if (v) t.setProtocolVersion(v);
        }
      }
      toClient(m);
    };
    t.onerror = (e: Error) => {
      if (gen !== generation || closing) return;
      log(`upstream: ${describe(e)}`);
      // A broken SSE stream or a failed GET stream may mean the server restarted. Check with a ping
      // (unless a send is already finding that out), so waiting requests learn it now, not at their timeout.
      if (sending || probeQueued) return;
      probeQueued = true;
      enqueue(probe);
    };
    t.onclose = () => {};
  }

  async function internalRequest(t: Upstream, method: string, params?: Record<string, unknown>, timeoutMs = 10_000): Promise<JSONRPCMessage> {
    const id = `${INTERNAL_PREFIX}${method}:${++internalSeq}`;
    const answer = new Promise<JSONRPCMessage>((resolve, reject) => {
      internal.set(id, { resolve, reject });
      setTimeout(() => {
        if (internal.delete(id)) reject(new Error(`no answer to ${method} within ${timeoutMs} ms`));
      }, timeoutMs).unref?.();
    });
    try {
      await t.send({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
    } catch (e) {
      internal.delete(id);
      throw e;
    }
    return answer;
  }

  /** Opens a fresh session: initialize with the client's params, then notifications/initialized. */
  async function openSession(): Promise<void> {
    await dropUpstream();
    const { t } = newTransport();
    await t.start();
    const answer = await internalRequest(t, "initialize", initParams);
    if ("error" in answer) throw new Error(`the server refused initialize: ${answer.error.message}`);
    const version = "result" in answer ? (answer.result as { protocolVersion?: string }).protocolVersion : undefined;
    if (version) t.setProtocolVersion(version);
    if (clientSentInitialized) await t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    upstream = t;
    log(`connected to ${opts.url} (session ${t.sessionId ?? "none"})`);
  }

  /** Reconnects with bounded retries. Requests of the lost session are answered with an error. */
  async function reconnect(reason: string): Promise<void> {
    const lostGen = generation;
    let last: unknown;
    for (let attempt = 1; attempt <= maxAttempts && !closing; attempt++) {
      try {
        await openSession();
        failInFlight(lostGen, "The Vault MCP server restarted while this request was in progress, so its answer was lost. Retry it.");
        return;
      } catch (e) {
        last = e;
        if (classify(e) === "fatal" && !(e instanceof Error && e.message.startsWith("no answer"))) break;
        if (attempt < maxAttempts) await sleep(Math.min(baseDelay * 2 ** (attempt - 1), 4000));
      }
    }
    const message = downMessage(last === undefined ? reason : describe(last));
    failInFlight(Number.POSITIVE_INFINITY, message);
    throw new Error(message);
  }

  function failInFlight(upToGen: number, message: string) {
    for (const [id, gen] of [...inFlight]) if (gen <= upToGen) errorToClient(id, message);
  }

  async function probe(): Promise<void> {
    probeQueued = false;
    const t = upstream;
    if (!t || closing) return;
    try {
      await internalRequest(t, "ping", undefined, 5000);
    } catch (e) {
      const kind = classify(e);
      log(`ping failed (${describe(e)}): reconnecting`);
      if (kind === "fatal" && !(e instanceof Error && e.message.startsWith("no answer"))) return;
      await reconnect(describe(e)).catch((err: unknown) => log(describe(err)));
    }
  }

  async function forward(m: JSONRPCMessage): Promise<void> {
    if (closing) return;
    if (isRequest(m) && m.method === "initialize") {
      initParams = (m as { params?: Record<string, unknown> }).params ?? {};
      clientSentInitialized = false;
      clientInitId = m.id;
      try {
        // The client's own initialize goes through as is; its answer is the client's.
        await openSessionForClientInit(m);
      } catch (e) {
        errorToClient(m.id, classify(e) === "fatal" ? `Vault MCP at ${opts.url} refused the connection: ${describe(e)}` : downMessage(describe(e)));
      }
      return;
    }
    if ("method" in m && m.method === "notifications/initialized") clientSentInitialized = true;
    if (!initParams) {
      if (isRequest(m)) errorToClient(m.id, "Send initialize first.", -32600);
      return;
    }
    const what = "method" in m ? m.method : "a response";
    for (let sendAttempt = 1; ; sendAttempt++) {
      if (!upstream) {
        try {
          await reconnect("no session");
        } catch (e) {
          if (isRequest(m)) errorToClient(m.id, (e as Error).message);
          else log(`dropped ${what}: the server is down`);
          return;
        }
      }
      const t = upstream;
      if (!t) return;
      if (isRequest(m)) inFlight.set(m.id, generation);
      sending = true;
      try {
        await t.send(m);
        return;
      } catch (e) {
        const kind = classify(e);
        if (isRequest(m)) inFlight.delete(m.id);
        if (kind === "fatal") {
          if (isRequest(m)) errorToClient(m.id, `Vault MCP refused the request: ${describe(e)}`, -32603);
          else log(`could not forward ${what}: ${describe(e)}`);
          return;
        }
        log(`${kind === "session-lost" ? "the session was lost (server restarted?)" : "the server is unreachable"}: ${describe(e)}; reconnecting`);
        if (upstream === t) upstream = undefined;
        if (sendAttempt >= 2) {
          if (isRequest(m)) errorToClient(m.id, downMessage(describe(e)));
          return;
        }
      } finally {
        sending = false;
      }
    }
  }

  function newTransport(): { t: Upstream; gen: number } {
    const gen = ++generation;
    const t = new StreamableHTTPClientTransport(new URL(opts.url), {
      requestInit: { headers: { Authorization: `Bearer ${opts.token}` } },
      // The bridge does its own reconnecting; the transport's own GET-stream retries stay short.
      reconnectionOptions: { initialReconnectionDelay: 500, maxReconnectionDelay: 2000, reconnectionDelayGrowFactor: 2, maxRetries: 1 },
    });
    attach(t, gen);
    return { t, gen };
  }

  async function dropUpstream(): Promise<void> {
    const old = upstream;
    upstream = undefined;
    if (old) await old.close().catch(() => {});
  }

  /** First session: the client's initialize request itself is sent (retrying while the server is down). */
  async function openSessionForClientInit(m: JSONRPCMessage & { id: RequestId }): Promise<void> {
    let last: unknown;
    for (let attempt = 1; attempt <= maxAttempts && !closing; attempt++) {
      await dropUpstream();
      const { t, gen } = newTransport();
      try {
        await t.start();
        inFlight.set(m.id, gen);
        await t.send(m);
        upstream = t;
        return;
      } catch (e) {
        inFlight.delete(m.id);
        last = e;
        if (classify(e) === "fatal") break;
        log(`the server is not reachable yet (${describe(e)}); attempt ${attempt}/${maxAttempts}`);
        if (attempt < maxAttempts) await sleep(Math.min(baseDelay * 2 ** (attempt - 1), 4000));
      }
    }
    throw last instanceof Error ? last : new Error(String(last));
  }

  async function close(): Promise<void> {
    if (closing) return closed;
    closing = true;
    const t = upstream;
    upstream = undefined;
    generation++;
    if (t) {
      await t.terminateSession().catch(() => {});
      await t.close().catch(() => {});
    }
    await client.close().catch(() => {});
    resolveClosed();
    return closed;
  }

  client.onmessage = (m: JSONRPCMessage) => enqueue(() => forward(m));
  client.onerror = (e: Error) => log(`stdio: ${e.message}`);
  // The client went away: writing to a closed pipe must not crash the process.
  (opts.stdout ?? process.stdout).on("error", () => void close());
  stdin.once("end", () => {
    // Let queued messages go out first.
    enqueue(() => close());
  });
  void client.start();
  return { closed, close };
}

export function bridgeUsage(): string {
  return `Usage: node bridge.js --url http://127.0.0.1:${DEFAULT_PORT}/mcp (--token-file F | --token T) [--attempts N] [--verbose]
       (or: node dist/cli.js bridge …)

Speaks MCP over stdin/stdout for clients that only launch local commands (Claude Desktop), and
forwards every message to the Vault MCP server running in Obsidian (or headless) at --url.
Survives the server restarting. Logs go to stderr.

Options:
  --url U          the server's endpoint (default http://127.0.0.1:${DEFAULT_PORT}/mcp)
  --token-file F   read the bearer token from a file (preferred: keeps it out of process lists)
  --token T        the bearer token
                   (or the VAULT_MCP_TOKEN environment variable: how the MCP Bundle gives it)
  --attempts N     tries to reach the server before a request is answered with an error (default 6,
                   about 8 s in all)
  --verbose        log every reconnect and upstream error to stderr
  -h, --help       this text`;
}

/** The `bridge` command: parses argv, runs until stdin closes. Returns the exit code. */
export async function bridgeMain(argv: string[]): Promise<number> {
  let url = `http://127.0.0.1:${DEFAULT_PORT}/mcp`;
  let token: string | undefined;
  let verbose = false;
  let maxAttempts: number | undefined;
  const err = (s: string) => process.stderr.write(s.endsWith("\n") ? s : s + "\n");
  try {
    for (let i = 0; i < argv.length; i++) {
      const arg = argv[i];
      const eq = arg.startsWith("--") ? arg.indexOf("=") : -1;
      const flag = eq > 0 ? arg.slice(0, eq) : arg;
      const value = (): string => {
        if (eq > 0) return arg.slice(eq + 1);
        const v = argv[++i];
        if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value.`);
        return v;
      };
      switch (flag) {
        case "--url": url = value(); break;
        case "--token": token = value(); break;
        case "--token-file": {
          const file = value();
          token = readFileSync(file, "utf8").trim();
          if (!token) throw new Error(`The token file ${file} is empty.`);
          break;
        }
        case "--attempts": {
          maxAttempts = Number(value());
          if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100) throw new Error("--attempts must be a whole number from 1 to 100.");
          break;
        }
        case "--verbose": verbose = true; break;
        case "-h":
        case "--help":
          err(bridgeUsage());
          return 0;
        default: throw new Error(`Unknown argument ${arg}.`);
      }
    }
    // The MCP Bundle (hosts/common/mcpb.ts) passes the token in the environment, off the command line.
    if (!token && process.env[TOKEN_ENV]) token = process.env[TOKEN_ENV].trim();
    if (!token) throw new Error(`Give the token with --token-file F (or --token T, or the ${TOKEN_ENV} environment variable): Obsidian → Settings → Vault MCP shows it.`);
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error(`--url must be an http:// URL, got ${url}.`);
  } catch (e) {
    err(`vault-mcp bridge: ${(e as Error).message}\n\n${bridgeUsage()}`);
    return 2;
  }
  const bridge = startBridge({
    url,
    token,
    maxAttempts,
    log: (m) => {
      if (verbose || /not reachable|refused|restarted|lost|connected to/.test(m)) err(`[vault-mcp bridge] ${m}`);
    },
  });
  const stop = () => void bridge.close();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  await bridge.closed;
  return 0;
}
