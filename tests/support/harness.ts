import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { MemoryStateStore, type StateStore } from "../../src/core/state";
import { startRuntime } from "../../src/hosts/common/runtime";
import { createGitFiles } from "../../src/hosts/common/git-files";
import { createGitRunner } from "../../src/hosts/common/git-process";
import { createNodeNet } from "../../src/hosts/common/net";
import type { App as ObsidianApp } from "obsidian";
import type { VaultPort } from "../../src/core/vault";
import { ObsidianVault } from "../../src/hosts/obsidian/adapter";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { createTestApp } from "../stand-in/obsidian";
import type { Embedder } from "../../src/core/search/vector/embedder";
import type { SearchOptions } from "../../src/core/search/types";

/**
 * Which vault adapter the end-to-end suites run on: the headless `FsVault` (default), or the Obsidian
 * adapter over the stand-in `App` (the `obsidian-adapter` Jest project sets VAULT_MCP_TEST_ADAPTER).
 */
export type AdapterKind = "fs" | "obsidian";
export const TEST_ADAPTER: AdapterKind = process.env.VAULT_MCP_TEST_ADAPTER === "obsidian" ? "obsidian" : "fs";

/** A vault port over a folder, on the chosen adapter, with a `close` that also stops the stand-in's watcher. */
export async function openTestVault(root: string, opts: { adapter?: AdapterKind; watch?: boolean; watchDelayMs?: number } = {}): Promise<VaultPort> {
  if ((opts.adapter ?? TEST_ADAPTER) === "fs") return FsVault.open(root, { watch: opts.watch ?? false, debounceMs: opts.watchDelayMs ?? 30 });
  // trashOption "local": deleted files go to the vault's .trash, as headless, so assertions hold on both.
  const { app } = createTestApp(root, { watch: opts.watch ?? false, watchDelayMs: opts.watchDelayMs, config: { trashOption: "local" } });
  const vault = new ObsidianVault(app as unknown as ObsidianApp);
  await vault.ready();
  const close = vault.close.bind(vault);
  vault.close = async () => {
    await close();
    app.vault.stopWatching();
  };
  return vault;
}

export type FileTree = Record<string, string | Uint8Array>;

/** A fresh temp folder holding the given files (paths relative, `/`-separated). */
export function makeTempVault(files: FileTree, prefix = "vault-mcp-test-"): string {
  const root = mkdtempSync(path.join(tmpdir(), prefix));
  for (const [rel, data] of Object.entries(files)) {
    const abs = path.join(root, ...rel.split("/"));
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, data);
  }
  return root;
}

export interface TestServerOptions {
  write?: boolean;
  hidden?: string[];
  protected?: string[];
  allowedOrigins?: string[];
  stateStore?: StateStore;
  /** Watch the folder for changes by other programs (default false: tests write through tools). */
  watch?: boolean;
  /** How long the watcher waits after a change before it looks (default 30 ms: Obsidian's can take longer). */
  watchDelayMs?: number;
  /** The vault adapter (default: TEST_ADAPTER). */
  adapter?: AdapterKind;
  /** The bearer token (default: a random one). */
  token?: string;
  /** A fixed port (default 0: any free port) and how many following ports to try when taken. */
  listenPort?: number;
  portFallback?: number;
  /** Time limit of one read tool call in ms (default: the server's, 10 s). */
  toolTimeoutMs?: number;
  /** Semantic search's embedding provider (default: none, semantic search off). */
  embedder?: Embedder;
  /** fetch: its limits and allow-list, and the name resolver (tests never use real DNS). */
  fetch?: { allowHosts?: string[]; maxBytes?: number; timeoutMs?: number; contentTypes?: string[]; resolve?: Record<string, string[]> };
  /** Transfer links' lifetime and upload cap (default 10 min, 50 MB). */
  transfer?: { ttlMs?: number; maxUploadBytes?: number };
  /** Run git in the vault (the git tools appear when it is a repository), with these settings. */
  git?: { commit?: boolean; push?: boolean; program?: string; hooks?: boolean };
  /** MCP sessions: idle time before one is closed, and the cap (default: the server's). */
  sessionIdleMs?: number;
  maxSessions?: number;
  /** The server's log (default: none). */
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /** The keyword search's options (e.g. a short save debounce). */
  search?: Partial<SearchOptions>;
}

export interface TestServer {
  root: string;
  url: string;
  port: number;
  token: string;
  vault: VaultPort;
  runtime: Awaited<ReturnType<typeof startRuntime>>;
  connect(): Promise<Client>;
  close(): Promise<void>;
}

/** The built git helper (npm test builds it first): git runs from it, as in the real hosts. */
const GIT_HELPER = existsSync(path.resolve(__dirname, "../../dist/git-helper.js")) ? path.resolve(__dirname, "../../dist/git-helper.js") : undefined;

/** The headless server over a real folder on a free port, exactly as `npm start` wires it. */
export async function startTestServer(root: string, opts: TestServerOptions = {}): Promise<TestServer> {
  const token = opts.token ?? randomBytes(24).toString("base64url");
  const vault = await openTestVault(root, { adapter: opts.adapter, watch: opts.watch, watchDelayMs: opts.watchDelayMs });
  let runtime: Awaited<ReturnType<typeof startRuntime>>;
  try {
    runtime = await startRuntime({
      port: vault,
      host: "node",
      listenPort: opts.listenPort ?? 0,
      portFallback: opts.portFallback,
      toolTimeoutMs: opts.toolTimeoutMs,
      sessionIdleMs: opts.sessionIdleMs,
      maxSessions: opts.maxSessions,
      token: () => token,
      allowedOrigins: opts.allowedOrigins ?? [],
      writeMode: opts.write ?? false,
      hiddenFolders: opts.hidden,
      protectedFolders: opts.protected,
      stateStore: opts.stateStore ?? new MemoryStateStore(),
      sqlWasm,
      version: "0.0.0-test",
      embedder: opts.embedder,
      ...(opts.log ? { log: opts.log } : {}),
      ...(opts.search ? { search: opts.search } : {}),
      ...(opts.transfer ? { transfer: opts.transfer } : {}),
      // Every name resolves through the test's table (an unknown name fails): no real DNS in tests.
      net: createNodeNet({
        resolve: async (host) => {
          const table = opts.fetch?.resolve ?? {};
          const addrs = table[host];
          if (!addrs) throw new Error(`ENOTFOUND ${host}`);
          return addrs.map((address) => ({ address, family: address.includes(":") ? (6 as const) : (4 as const) }));
        },
      }),
      ...(opts.fetch ? { fetch: { ...(opts.fetch.allowHosts ? { allowHosts: opts.fetch.allowHosts } : {}), ...(opts.fetch.maxBytes ? { maxBytes: opts.fetch.maxBytes } : {}), ...(opts.fetch.timeoutMs ? { timeoutMs: opts.fetch.timeoutMs } : {}), ...(opts.fetch.contentTypes ? { contentTypes: opts.fetch.contentTypes } : {}) } } : {}),
      ...(opts.git ? { gitRunner: createGitRunner({ cwd: root, program: opts.git.program, allowHooks: opts.git.hooks, helperFile: GIT_HELPER }), gitOptions: { commitChanges: opts.git.commit ?? false, pushAfterCommit: opts.git.push ?? false, files: createGitFiles(root) } } : {}),
    });
  } catch (e) {
    await vault.close();
    throw e;
  }
  const clients: Client[] = [];
  return {
    root,
    url: runtime.url,
    port: runtime.listenPort,
    token,
    vault,
    runtime,
    connect: async () => {
      const c = await connectClient(runtime.url, token);
      clients.push(c);
      return c;
    },
    close: async () => {
      for (const c of clients) await c.close().catch(() => {});
      await runtime.close();
      await vault.close();
    },
  };
}

export async function connectClient(url: string, token: string, name = "vault-mcp-tests"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/** Calls a tool and returns the raw result (errors are `isError` results, not throws). */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** Calls a tool that must succeed; returns its structured content. */
export async function ok<T = Record<string, any>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = await call(client, name, args);
  if (r.isError) throw new Error(`${name} failed: ${textOf(r)}`);
  return r.structuredContent as T;
}

/** Calls a tool that must fail; returns its error text. */
export async function fails(client: Client, name: string, args: Record<string, unknown> = {}): Promise<string> {
  const r = await call(client, name, args);
  if (!r.isError) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(r.structuredContent).slice(0, 300)}`);
  return textOf(r);
}

export function textOf(r: CallToolResult): string {
  return r.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");
}

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw HTTP request with full control of headers (fetch forbids setting Host). */
export function rawRequest(port: number, opts: { method?: string; path?: string; headers?: Record<string, string>; body?: string }): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, method: opts.method ?? "GET", path: opts.path ?? "/mcp", headers: opts.headers, setHost: !opts.headers?.Host },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (body += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    if (opts.body) req.write(opts.body);
    req.end();
  });
}

export const INIT_BODY = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

export function removeTree(root: string): void {
  rmSync(root, { recursive: true, force: true });
}

/** Polls `fn` until it resolves without throwing (bounded), for effects that arrive asynchronously. */
export async function eventually<T>(fn: () => Promise<T>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (e) {
      if (Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
