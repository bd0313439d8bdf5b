import { createHash, hash as oneShotHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse as NodeResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import express, { type NextFunction, type Request, type Response } from "express";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import { releaseGarbage } from "../core/memory";
import { clearTimer, setTimer, type TimerHandle } from "../core/timers";
import { isInitializeRequest, isJSONRPCRequest, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type MessageExtraInfo } from "@modelcontextprotocol/sdk/types.js";

export interface HttpServerOptions {
  /** 0 = any free port. */
  port: number;
  /** Read at every request, so a regenerated token takes effect at once. */
  token: () => string;
  /** Exact origins (scheme://host[:port]) allowed to call; none by default. */
  allowedOrigins: readonly string[];
  /** A new MCP server for each client session. */
  /** A new session's server (it may wait for what initialize answers with, e.g. the vault's instructions). */
  createServer: () => McpServer | Promise<McpServer>;
  /** Where a user finds the token, for the 401 message. */
  tokenHint: string;
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /** Largest request body accepted (writes of attachments are base64). */
  maxBodyBytes?: number;
  /** One-time transfer links (`/transfer/<token>`): the token is their only credential. */
  transfer?: TransferEndpoint;
  /** A session with no request in flight and no open GET stream for this long is closed (default 30 min; 0 = never). */
  sessionIdleMs?: number;
  /** At most this many sessions (default 100): a new one closes the one idle the longest, or is refused when none is idle. */
  maxSessions?: number;
  /**
   * Called once the server has been quiet `ms` (default 5 s) after serving at least `after` requests
   * (default 50); by default `releaseGarbage` (core/memory.ts). Tests set their own.
   */
  quiet?: { ms?: number; after?: number; then?: () => void };
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
export const DEFAULT_MAX_SESSIONS = 100;

/** A session and what tells whether it is idle. */
interface Session {
  transport: SessionTransport;
  server: McpServer;
  /** Requests on it still open: POSTs in flight, its GET stream. */
  busy: number;
  /** When its last request ended (or began). */
  lastActive: number;
}

/** What the `/transfer/<token>` routes need (the core's `TransferLinks`). */
export interface TransferEndpoint {
  openDownload(token: string): Promise<{ path: string; bytes: Uint8Array; contentType: string; done(): void; release(): void } | null>;
  openUpload(token: string): { path: string; maxBytes: number; commit(bytes: Uint8Array): Promise<{ path: string; etag: string; size: number; created: boolean }>; release(): void } | null;
}

export interface RunningHttpServer {
  readonly port: number;
  readonly url: string;
  /** Sessions open now. */
  readonly sessionCount: number;
  /** POSTs taken before express so far (see `postTaken`). */
  readonly directPosts: number;
  close(): Promise<void>;
}

/** How long an idle keep-alive connection stays open (see where it is set). */
const KEEP_ALIVE_MS = 65_000;

/** listen() failed because the port is taken. */
export class AddressInUseError extends Error {
  constructor(readonly port: number) {
    super(`Port ${port} is already in use on 127.0.0.1.`);
    this.name = "AddressInUseError";
  }
}

const LOOPBACK_NAMES = new Set(["127.0.0.1", "localhost", "[::1]"]);
/** Quiet this long after serving at least QUIET_HINT_AFTER requests, the server hints V8 to collect (see `quiet`). */
const QUIET_MS = 5_000;
const QUIET_HINT_AFTER = 50;

function jsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}

/** The bodies the lane before express takes (bigger ones go through express's parser). */
const FAST_BODY_BYTES = 1024 * 1024;

/** `application/json`, with no charset or UTF-8's (anything else goes through express's parser, which checks it). */
function isPlainJson(type: string | undefined): boolean {
  if (type === undefined) return false;
  const t = type.toLowerCase().replace(/\s+/g, "");
  return t === "application/json" || t === "application/json;charset=utf-8";
}

/** `jsonRpcError`'s answer on a Node response (the lane before express). */
function answerError(res: NodeResponse, status: number, code: number, message: string): Promise<void> {
  return answer(res, status, { jsonrpc: "2.0", error: { code, message }, id: null } as unknown as JSONRPCMessage);
}

/**
 * SHA-256 of a string: Node's one-shot `crypto.hash` where the runtime has it (Node 20.12+; no Hash
 * object to make), else a Hash object (an older Electron's Node).
 */
const sha256: (s: string) => Buffer =
  typeof oneShotHash === "function" ? (s) => oneShotHash("sha256", s, "buffer") : (s) => createHash("sha256").update(s, "utf8").digest();

/** The expected secret's digest, made again only when the secret changes (a token set anew in the settings). */
let expectedDigest: { secret: string; digest: Buffer } | null = null;

/**
 * Constant-time comparison of two secrets of any length (hash both to a fixed size first). Every
 * request's token is checked: the expected one's digest is kept (two digests a request were ~0.2 ms
 * of a 100k server's time per search call, measured by the CPU profile of a warm server).
 */
export function secretsEqual(given: string, expected: string): boolean {
  if (expectedDigest?.secret !== expected) expectedDigest = { secret: expected, digest: sha256(expected) };
  return timingSafeEqual(sha256(given), expectedDigest.digest) && expected.length > 0;
}

type RequestId = string | number;

/**
 * The SDK's Streamable HTTP transport (JSON responses), with a direct lane for the request nearly
 * every call is: one JSON-RPC request, on an established session, from a client that sent the
 * headers the transport requires. The lane hands the parsed message straight to the server and
 * writes its response as one JSON body, as the SDK would, but without converting the Node request
 * and response to web `Request`/`Response` objects and back (and without parsing the message a
 * second time): in alternating runs, a search call over HTTP took ~0.8 ms less. Everything else
 * (initialize, notifications, batches, GET streams, DELETE, anything malformed) goes through the
 * SDK transport, which also answers with its own errors.
 */
export class SessionTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  /** Requests taken by the direct lane, by id: the HTTP response each waits to be answered on. */
  private readonly waiting = new Map<RequestId, NodeResponse>();

  constructor(readonly sdk: StreamableHTTPServerTransport) {}

  get sessionId(): string | undefined {
    return this.sdk.sessionId;
  }

  async start(): Promise<void> {
    this.sdk.onmessage = (message, extra) => this.onmessage?.(message, extra);
    this.sdk.onerror = (error) => this.onerror?.(error);
    this.sdk.onclose = () => {
      // The server will not answer these any more: say so rather than leave the client waiting.
      for (const [id, res] of this.waiting) {
        void answer(res, 404, { jsonrpc: "2.0", id, error: { code: -32001, message: "The session ended before the request completed. Initialize a new session." } });
      }
      this.waiting.clear();
      this.onclose?.();
    };
    await this.sdk.start();
  }

  close(): Promise<void> {
    return this.sdk.close();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const isResponse = "id" in message && ("result" in message || "error" in message);
    const id = isResponse ? message.id : options?.relatedRequestId;
    const res = id === undefined ? undefined : this.waiting.get(id);
    if (id === undefined || !res) return this.sdk.send(message, options);
    // A notification about a direct request (progress, say) cannot go in its JSON body: it goes on the
    // session's GET stream, when the client has one open (the SDK's JSON response mode drops it).
    if (!isResponse) return this.sdk.send(message);
    this.waiting.delete(id);
    await answer(res, 200, message, this.sessionId);
  }

  /** Handles a POST on this session: directly when it is the common shape, otherwise through the SDK. */
  async handlePost(req: IncomingMessage & { body?: unknown }, res: NodeResponse): Promise<void> {
    const body: unknown = req.body;
    const version = req.headers["mcp-protocol-version"];
    const accept = req.headers.accept ?? "";
    // (Only initialized sessions are in the server's map, so this one has its id.)
    if (
      !isJsonContentType(req.headers["content-type"]) ||
      !accept.includes("application/json") ||
      !accept.includes("text/event-stream") ||
      (version !== undefined && (typeof version !== "string" || !SUPPORTED_PROTOCOL_VERSIONS.includes(version))) ||
      !isJSONRPCRequest(body) ||
      body.method === "initialize" ||
      this.waiting.has(body.id)
    ) {
      await this.sdk.handleRequest(req, res, body);
      return;
    }
    const id = body.id;
    this.waiting.set(id, res);
    // A client that gives up (the SDK client aborts its HTTP request when it cancels one) leaves no
    // entry behind; a late response then goes to the SDK transport, which reports it undeliverable.
    // A cancelled request whose HTTP request stays open gets no response (the server sends none),
    // as in the SDK transport's JSON mode, until the session ends.
    res.on("close", () => {
      if (this.waiting.get(id) === res) this.waiting.delete(id);
    });
    this.onmessage?.(body, { requestInfo: { headers: req.headers } });
  }
}

/** Longer bodies are written a piece at a time with a yield between (the server shares Obsidian's UI thread). */
const PIECE_CHARS = 256 * 1024;

/**
 * One JSON-RPC message as the whole JSON body, as the SDK's JSON response mode writes it. A large
 * body (an attachment's base64: ~11 MB for an 8 MB file took ~100 ms to encode and write in one
 * step) goes out in pieces, chunked.
 */
async function answer(res: NodeResponse, status: number, message: JSONRPCMessage, sessionId?: string): Promise<void> {
  if (res.headersSent) return;
  res.statusCode = status;
  res.setHeader("Content-Type", "application/json");
  if (sessionId !== undefined) res.setHeader("mcp-session-id", sessionId);
  const body = JSON.stringify(message);
  if (body.length <= PIECE_CHARS) {
    res.end(body);
    return;
  }
  for (let i = 0; i < body.length && !res.destroyed; ) {
    let end = Math.min(body.length, i + PIECE_CHARS);
    // Each piece is encoded on its own: never between the halves of a surrogate pair (JSON.stringify
    // escapes lone ones, so a high surrogate is always followed by its low one).
    const last = body.charCodeAt(end - 1);
    if (end < body.length && last >= 0xd800 && last <= 0xdbff) end--;
    res.write(body.slice(i, end));
    i = end;
    await new Promise((resolve) => setImmediate(resolve));
  }
  res.end();
}

/** What `GET /health` answers. */
const HEALTH = { status: "ok" };
const HEALTH_BODY = Buffer.from(JSON.stringify(HEALTH));

/**
 * Streamable HTTP on 127.0.0.1 only: `POST/GET/DELETE /mcp` behind a bearer token, `GET /health`
 * open. Every request must carry a loopback `Host` with our port (DNS rebinding), and an `Origin`,
 * when present, must be explicitly allowed (browsers). No CORS headers are ever sent.
 */
export async function startHttpServer(opts: HttpServerOptions): Promise<RunningHttpServer> {
  const log = opts.log ?? (() => {});
  const app = express();
  app.disable("x-powered-by");
  let boundPort = opts.port;

  // When the server goes quiet after serving requests, V8 is hinted to collect what they left
  // (core/memory.ts): an idle process otherwise keeps it. 100k notes, a warm server after ~80k
  // requests: heap used 321 MB, 190 MB live (RSS ~700 MB, ~610 after the collection).
  const quietMs = opts.quiet?.ms ?? QUIET_MS;
  const quietAfter = opts.quiet?.after ?? QUIET_HINT_AFTER;
  const onQuiet = opts.quiet?.then ?? (() => void releaseGarbage());
  let served = 0;
  let lastRequestAt = 0;
  let quietTimer: TimerHandle | null = null;
  const checkQuiet = () => {
    quietTimer = null;
    if (closed) return;
    const quiet = Date.now() - lastRequestAt;
    if (quiet < quietMs) {
      quietTimer = setTimer(checkQuiet, quietMs - quiet);
      (quietTimer as { unref?: () => void }).unref?.();
      return;
    }
    if (served >= quietAfter) onQuiet();
    served = 0;
  };
  const noteRequest = () => {
    served++;
    lastRequestAt = Date.now();
    if (!quietTimer && !closed) {
      quietTimer = setTimer(checkQuiet, quietMs);
      (quietTimer as { unref?: () => void }).unref?.();
    }
  };
  app.use((_req: Request, _res: Response, next: NextFunction) => {
    noteRequest();
    next();
  });

  /** A loopback name with our port (DNS rebinding protection). */
  const hostAllowed = (host: string): boolean => {
    const m = /^(\[::1\]|[^:]+)(?::(\d+))?$/.exec(host.toLowerCase());
    return m !== null && LOOPBACK_NAMES.has(m[1]) && Number(m[2] ?? 80) === boundPort;
  };
  app.use((req: Request, res: Response, next: NextFunction) => {
    const host = req.headers.host ?? "";
    if (!hostAllowed(host)) {
      log("warn", `refused a request with Host "${host}" (DNS rebinding protection)`);
      jsonRpcError(res, 403, -32000, `Forbidden: the Host header must be 127.0.0.1:${boundPort} or localhost:${boundPort}.`);
      return;
    }
    const origin = req.headers.origin;
    // Our own origin (a page served by this server — we serve none) is same-origin and harmless;
    // every other origin, other loopback ports included, must be allowed explicitly.
    const own = origin !== undefined && /^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):(\d+)$/i.exec(origin);
    const sameOrigin = own ? Number(own[2]) === boundPort : false;
    if (origin !== undefined && !sameOrigin && !opts.allowedOrigins.includes(origin)) {
      log("warn", `refused a request from Origin "${origin}"`);
      jsonRpcError(res, 403, -32000, `Forbidden: requests from origin "${origin}" are not allowed. Add it to the allowed origins in the settings if you trust it.`);
      return;
    }
    next();
  });

  app.get("/health", (_req, res) => {
    res.json(HEALTH);
  });

  if (opts.transfer) mountTransfer(app, opts.transfer, log);

  /** The `Authorization` header carries the bearer token. */
  const tokenOk = (header: string | undefined): boolean => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    return m !== null && secretsEqual(m[1], opts.token());
  };
  const auth = (req: Request, res: Response, next: NextFunction) => {
    const header = req.headers.authorization ?? "";
    if (!tokenOk(header)) {
      res.setHeader("WWW-Authenticate", 'Bearer realm="vault-mcp"');
      jsonRpcError(res, 401, -32001, `Unauthorized: ${header ? "the bearer token is wrong" : "no bearer token"}. Send the header "Authorization: Bearer <token>"; ${opts.tokenHint}`);
      return;
    }
    next();
  };

  // Sessions end on the client's DELETE, after `sessionIdleMs` idle, or when the cap needs room;
  // a client then gets 404 for its session id and starts a new one (as the MCP spec requires of it).
  // Without this, 6,000 initializes without DELETE held ~1 GB (inside Obsidian, Obsidian's memory).
  const sessions = new Map<string, Session>();
  const idleMs = opts.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxSessions = Math.max(1, opts.maxSessions ?? DEFAULT_MAX_SESSIONS);
  let closed = false;

  /** Counts a request on `s` until its response closes (a GET stream: until the client drops it). */
  const track = (s: Session, res: NodeResponse) => {
    s.busy++;
    s.lastActive = Date.now();
    res.once("close", () => {
      s.busy--;
      s.lastActive = Date.now();
    });
  };
  const endSession = (s: Session, why: string) => {
    const id = s.transport.sessionId;
    log("debug", `closing session ${id ?? "?"}: ${why}`);
    if (id !== undefined && sessions.get(id) === s) sessions.delete(id);
    // The transport's onclose removes it from the map and closes its McpServer (and its subscriptions).
    void s.transport.close().catch(() => {});
  };
  /** The session idle the longest, when one is idle. */
  const oldestIdle = (): Session | undefined => {
    let oldest: Session | undefined;
    for (const s of sessions.values()) if (s.busy === 0 && (!oldest || s.lastActive < oldest.lastActive)) oldest = s;
    return oldest;
  };
  let sweepTimer: TimerHandle | null = null;
  const sweep = () => {
    sweepTimer = null;
    if (closed) return;
    const now = Date.now();
    for (const s of [...sessions.values()]) if (s.busy === 0 && now - s.lastActive >= idleMs) endSession(s, "idle");
    // With no session left the timer rests until the next one starts.
    if (sessions.size > 0) scheduleSweep();
  };
  const scheduleSweep = () => {
    if (idleMs <= 0 || sweepTimer || closed) return;
    // Checked a few times per idle period (a session lives at most ~1.25 × the idle time unused).
    sweepTimer = setTimer(sweep, Math.max(50, Math.min(idleMs / 4, 60_000)));
    (sweepTimer as { unref?: () => void }).unref?.();
  };

  /** A POST without a session id, its body parsed: an initialize request starts a session. */
  const initialize = async (req: IncomingMessage, res: NodeResponse, body: unknown): Promise<void> => {
    try {
      if (!isInitializeRequest(body)) {
        await answerError(res, 400, -32000, "Bad request: no mcp-session-id header, and the message is not an initialize request.");
        return;
      }
      if (sessions.size >= maxSessions) {
        const victim = oldestIdle();
        if (!victim) {
          await answerError(res, 503, -32000, `Too many sessions: all ${maxSessions} are in use. Close a session (DELETE /mcp) or try again later.`);
          return;
        }
        endSession(victim, `the cap of ${maxSessions} sessions was reached`);
      }
      const server = await opts.createServer();
      const sdk: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        // Each response as one JSON body rather than a one-event SSE stream: no tool sends
        // notifications or requests while it runs, and the stream costs ~0.3 ms a call (a second
        // socket write here, SSE parsing in the client). Server notifications still use GET /mcp.
        enableJsonResponse: true,
        onsessioninitialized: (id) => {
          sessions.set(id, session);
          scheduleSweep();
        },
      });
      const transport = new SessionTransport(sdk);
      const session: Session = { transport, server, busy: 0, lastActive: Date.now() };
      track(session, res);
      transport.onclose = () => {
        const id = transport.sessionId;
        if (id && sessions.get(id) === session) sessions.delete(id);
        void server.close().catch(() => {});
      };
      await server.connect(transport);
      await sdk.handleRequest(req, res, body);
      // An initialize the transport refused made no session: its server (and the vault listener of
      // its resources) must not stay behind.
      if (!sdk.sessionId) void server.close().catch(() => {});
    } catch (e) {
      log("error", `MCP request failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (!res.headersSent) await answerError(res, 500, -32603, "Internal server error.");
    }
  };

  app.post("/mcp", auth, express.json({ limit: opts.maxBodyBytes ?? 16 * 1024 * 1024 }), async (req, res) => {
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId !== "string") {
      await initialize(req, res, req.body);
      return;
    }
    try {
      const s = sessions.get(sessionId);
      if (!s) {
        jsonRpcError(res, 404, -32001, "Session not found: it ended (closed by the client, idle too long, or the server restarted). Initialize a new session.");
        return;
      }
      track(s, res);
      await s.transport.handlePost(req, res);
    } catch (e) {
      log("error", `MCP request failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal server error.");
    }
  });

  const sessionRequest = async (req: Request, res: Response) => {
    const sessionId = req.headers["mcp-session-id"];
    const s = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (!s) {
      jsonRpcError(res, typeof sessionId === "string" ? 404 : 400, -32001, "Unknown or missing mcp-session-id: initialize a session first.");
      return;
    }
    track(s, res);
    try {
      await s.transport.sdk.handleRequest(req, res);
    } catch (e) {
      log("error", `MCP ${req.method} failed: ${e instanceof Error ? e.message : String(e)}`);
      if (!res.headersSent) jsonRpcError(res, 500, -32603, "Internal server error.");
    }
  };
  app.get("/mcp", auth, sessionRequest);
  app.delete("/mcp", auth, sessionRequest);

  app.use((req: Request, res: Response) => {
    jsonRpcError(res, 404, -32601, `Not found: ${req.method} ${req.path}. The MCP endpoint is /mcp.`);
  });
  // Malformed JSON and other body errors: a JSON-RPC parse error, not an HTML page.
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = typeof err === "object" && err && "status" in err ? Number((err).status) : 500;
    if (status === 413) jsonRpcError(res, 413, -32600, "Request too large.");
    else if (status === 400) jsonRpcError(res, 400, -32700, "Parse error: the body is not valid JSON.");
    else jsonRpcError(res, 500, -32603, "Internal server error.");
  });

  /**
   * `GET /health` with an allowed Host and no Origin, answered before express (anything else goes
   * through it, refusals and all). A probe of ~1,000 requests a second (a monitor's, the bench's)
   * made express's objects for each request outlive V8's young-generation collections: one every
   * ~0.7 s at 100k notes, the heap growing ~4 MB each time, and each collection a pause of the event
   * loop (15-25 ms on the 2-core test machine). Answered here: a quarter as many, the heap flat.
   */
  const healthAnswered = (req: IncomingMessage, res: NodeResponse): boolean => {
    if (req.method !== "GET" || req.url !== "/health" || req.headers.origin !== undefined || !hostAllowed(req.headers.host ?? "")) return false;
    noteRequest();
    res.writeHead(200, { "Content-Type": "application/json; charset=utf-8", "Content-Length": HEALTH_BODY.length });
    res.end(HEALTH_BODY);
    return true;
  };
  /**
   * A POST on a known session, or without one (an initialize), with an allowed Host, no Origin, the
   * right token and a small JSON body, taken before express (anything else goes through it, refusals
   * and errors included): express's routing and body parser took ~0.4 ms of a search call's ~4 at
   * 100k notes (a profile of 400 calls), and a process's first request through them, its code run
   * for the first time (express's router, the body parser loading every text encoding it knows), was
   * a task of 60–90 ms at a warm start at 100k notes. The checks are express's own (`hostAllowed`,
   * `tokenOk`), the body limit stricter.
   */
  let directPosts = 0;
  const postTaken = (req: IncomingMessage, res: NodeResponse): boolean => {
    const h = req.headers;
    const sessionId = h["mcp-session-id"];
    const length = Number(h["content-length"]);
    if (req.method !== "POST" || req.url !== "/mcp" || h.origin !== undefined || (sessionId !== undefined && typeof sessionId !== "string") || h["content-encoding"] !== undefined) return false;
    if (!(length >= 0 && length <= FAST_BODY_BYTES) || !isPlainJson(h["content-type"]) || !hostAllowed(h.host ?? "") || !tokenOk(h.authorization)) return false;
    const s = sessionId === undefined ? null : sessions.get(sessionId);
    if (s === undefined) return false;
    noteRequest();
    directPosts++;
    const chunks: Buffer[] = [];
    let got = 0;
    req.on("data", (c: Buffer) => {
      got += c.length;
      if (got <= length) chunks.push(c);
    });
    req.on("end", () => {
      let body: unknown;
      try {
        if (got !== length) throw new Error("length");
        const text = Buffer.concat(chunks, got).toString("utf8");
        // (A byte order mark is dropped, as express's parser drops it.)
        body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
        // express.json's strict mode: an object or an array.
        if (typeof body !== "object" || body === null) throw new Error("not an object");
      } catch {
        void answerError(res, 400, -32700, "Parse error: the body is not valid JSON.");
        return;
      }
      (req as IncomingMessage & { body?: unknown }).body = body;
      if (!s) {
        void initialize(req, res, body);
        return;
      }
      track(s, res);
      s.transport.handlePost(req, res).catch((e: unknown) => {
        log("error", `MCP request failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
        if (!res.headersSent) void answerError(res, 500, -32603, "Internal server error.");
      });
    });
    return true;
  };
  const sockets = new Set<Socket>();
  const httpServer: HttpServer = await new Promise((resolve, reject) => {
    const s = createServer((req, res) => {
      if (!healthAnswered(req, res) && !postTaken(req, res)) void app(req, res);
    });
    s.listen(opts.port, "127.0.0.1");
    s.once("listening", () => resolve(s));
    s.once("error", (err: NodeJS.ErrnoException) => reject(err.code === "EADDRINUSE" ? new AddressInUseError(opts.port) : err));
  });
  // An idle connection is kept 65 s, not Node's 5: a client reuses it for up to its own idle time
  // (undici: the server's figure less 1 s), and a client held up near the end of that window sent a
  // request on a socket the server had just closed (ECONNRESET, seen on a busy 2-core machine).
  httpServer.keepAliveTimeout = KEEP_ALIVE_MS;
  httpServer.headersTimeout = KEEP_ALIVE_MS + 1_000;
  httpServer.on("connection", (sock) => {
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
  });
  boundPort = (httpServer.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${boundPort}/mcp`;
  log("info", `listening on ${url}`);

  return {
    port: boundPort,
    url,
    get sessionCount() {
      return sessions.size;
    },
    get directPosts() {
      return directPosts;
    },
    close: async () => {
      closed = true;
      clearTimer(sweepTimer);
      sweepTimer = null;
      clearTimer(quietTimer);
      quietTimer = null;
      for (const { transport } of [...sessions.values()]) await transport.close().catch(() => {});
      sessions.clear();
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        for (const s of sockets) s.destroy();
      });
    },
  };
}

/** Every transfer refusal looks the same: nothing says whether the token ever existed. */
function transferNotFound(res: Response): void {
  res.status(404).json({ error: "Not found: this transfer link is unknown, used or expired. Ask for a new one." });
}

/**
 * `/transfer/<token>`: GET serves a download link's bytes; PUT or POST stores an upload link's body.
 * No bearer token (the link's token is the credential); the Host and Origin checks above still apply.
 */
function mountTransfer(app: express.Express, transfer: TransferEndpoint, log: (level: "debug" | "info" | "warn" | "error", message: string) => void): void {
  // HEAD would run GET's handler and use the link up without sending it.
  app.head("/transfer/:token", (_req, res) => {
    res.status(405).setHeader("Allow", "GET, PUT, POST").end();
  });
  app.get("/transfer/:token", async (req, res) => {
    const ticket = await transfer.openDownload(String(req.params.token));
    if (!ticket) {
      transferNotFound(res);
      return;
    }
    const name = ticket.path.slice(ticket.path.lastIndexOf("/") + 1);
    res.status(200);
    res.setHeader("Content-Type", ticket.contentType);
    res.setHeader("Content-Length", String(ticket.bytes.byteLength));
    res.setHeader("Content-Disposition", `attachment; filename*=UTF-8''${encodeURIComponent(name)}`);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Cache-Control", "no-store");
    // Sent in pieces as the client reads them: the link is used up only when every byte went out
    // ('finish'); a client that hangs up half-way ('close' first) leaves it usable.
    let finished = false;
    res.on("finish", () => {
      finished = true;
      ticket.done();
    });
    res.on("close", () => {
      if (!finished) ticket.release();
    });
    const all = Buffer.from(ticket.bytes.buffer, ticket.bytes.byteOffset, ticket.bytes.byteLength);
    const PIECE = 256 * 1024;
    let at = 0;
    const pump = () => {
      while (at < all.length && !res.destroyed) {
        const piece = all.subarray(at, Math.min(all.length, at + PIECE));
        at += piece.length;
        if (!res.write(piece)) {
          res.once("drain", pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  });
  const upload = (req: Request, res: Response) => {
    const ticket = transfer.openUpload(String(req.params.token));
    if (!ticket) {
      transferNotFound(res);
      req.resume();
      return;
    }
    if (/^multipart\//i.test(req.headers["content-type"] ?? "")) {
      ticket.release();
      res.status(415).json({ error: "Send the file's raw bytes as the body (curl -T file URL, or --data-binary @file), not a multipart form." });
      req.resume();
      return;
    }
    const declared = Number(req.headers["content-length"]);
    const tooLarge = () => {
      ticket.release();
      res.status(413).setHeader("Connection", "close");
      res.json({ error: `The file is larger than the upload limit of ${ticket.maxBytes} bytes; nothing was written. The owner can raise the limit in the settings.` });
    };
    if (Number.isFinite(declared) && declared > ticket.maxBytes) {
      tooLarge();
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let total = 0;
    let over = false;
    let ended = false;
    req.on("data", (c: Buffer) => {
      if (over) return;
      total += c.length;
      if (total > ticket.maxBytes) {
        over = true;
        chunks.length = 0;
        tooLarge();
        return;
      }
      chunks.push(c);
    });
    req.on("aborted", () => {
      if (!ended && !over) ticket.release();
    });
    req.on("error", () => {
      if (!ended && !over) ticket.release();
    });
    req.on("end", () => {
      ended = true;
      if (over) return;
      const bytes = new Uint8Array(Buffer.concat(chunks));
      ticket.commit(bytes).then(
        (r) => {
          res.status(r.created ? 201 : 200).json({ path: r.path, etag: r.etag, size: r.size, created: r.created });
        },
        (e: unknown) => {
          const code = typeof e === "object" && e && "code" in e ? String(e.code) : "";
          const message = e instanceof Error && e.name === "VaultError" ? e.message : "The upload could not be written; nothing was changed. Try again.";
          if (!(e instanceof Error && e.name === "VaultError")) log("error", `upload to a transfer link failed: ${e instanceof Error ? e.message : String(e)}`);
          res.status(code === "exists" || code === "conflict" ? 409 : code === "declined" || code === "read_only" ? 403 : code === "too_large" || code === "invalid_argument" || code === "invalid_path" ? 400 : 500).json({ error: message });
        },
      );
    });
  };
  app.put("/transfer/:token", upload);
  app.post("/transfer/:token", upload);
}
