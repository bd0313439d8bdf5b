import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { buildSync } from "esbuild";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { MemoryStateStore } from "../../src/core/state";
import { startRuntime } from "../../src/hosts/common/runtime";
import { makeTempVault, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

const ROOT = path.resolve(__dirname, "../..");

/** dist/bridge.js after `npm run build`; otherwise the same self-contained bundle built into a temp folder. */
function bridgeScript(): string {
  const dist = path.join(ROOT, "dist", "bridge.js");
  if (existsSync(dist)) return dist;
  const out = path.join(mkdtempSync(path.join(tmpdir(), "vault-mcp-bridge-build-")), "bridge.js");
  buildSync({ entryPoints: [path.join(ROOT, "src/hosts/node/bridge-cli.ts")], outfile: out, bundle: true, platform: "node", format: "cjs", target: "node20", logLevel: "error" });
  return out;
}

describe("stdio bridge (child process) in front of the HTTP server", () => {
  let server: TestServer;
  let runtime: { close(): Promise<void> } | undefined;
  let client: Client;
  let stderr = "";
  const clientErrors: Error[] = [];
  let tokenFile: string;
  let bridge: string;

  /** Starts the server again on the same port, token and vault, as a restart of Obsidian would. */
  const restart = async () => {
    runtime = await startRuntime({
      port: server.vault,
      host: "node",
      listenPort: server.port,
      token: () => server.token,
      allowedOrigins: [],
      writeMode: false,
      stateStore: new MemoryStateStore(),
      sqlWasm,
      version: "0.0.0-test",
    });
  };
  const stop = async () => {
    if (runtime) await runtime.close();
    else await server.runtime.close();
    runtime = undefined;
  };
  const read = async (p: string) => (await client.callTool({ name: "read", arguments: { path: p } })) as CallToolResult;

  beforeAll(async () => {
    bridge = bridgeScript();
    const root = makeTempVault({ "Home.md": "# Home\n\nSee [[Plan]].\n", "Plan.md": "# Plan\n\nThe quarterly plan.\n" });
    server = await startTestServer(root);
    tokenFile = path.join(mkdtempSync(path.join(tmpdir(), "vault-mcp-token-")), "token");
    writeFileSync(tokenFile, server.token + "\n", { mode: 0o600 });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [bridge, "--url", server.url, "--token-file", tokenFile, "--attempts", "3", "--verbose"],
      stderr: "pipe",
    });
    transport.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    client = new Client({ name: "bridge-test", version: "1.0.0" });
    client.onerror = (e) => clientErrors.push(e);
    await client.connect(transport);
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    if (runtime) await runtime.close();
    await server.vault.close();
    await server.runtime.close().catch(() => {});
    removeTree(server.root);
  });

  test("initialize passes through: the client sees the vault server's name and instructions", () => {
    expect(client.getServerVersion()?.name).toMatch(/^vault-mcp \(/);
    expect(client.getInstructions()).toMatch(/read-only/);
  });

  test("lists tools and reads a note through the bridge", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["read", "list_documents"]));
    const r = await read("Home.md");
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain("See [[Plan]].");
  });

  test("survives the server restarting on the same port: the next call succeeds on a new session", async () => {
    await stop();
    await restart();
    const r = await read("Plan.md");
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain("The quarterly plan.");
    expect((await client.listTools()).tools.length).toBeGreaterThan(0);
  });

  test("while the server is down, a request gets a JSON-RPC error saying so; once it is back, calls work again", async () => {
    await stop();
    const down = await read("Home.md").then(
      () => undefined,
      (e: Error) => e,
    );
    expect(down).toBeInstanceOf(Error);
    expect(down!.message).toMatch(/Vault MCP is not reachable at http:\/\/127\.0\.0\.1:\d+\/mcp/);
    expect(down!.message).toMatch(/Start Obsidian/);

    await restart();
    const r = await read("Home.md");
    expect(r.isError).toBeFalsy();
    expect(textOf(r)).toContain("# Home");
  });

  test("stdout carries nothing but JSON-RPC (the client never failed to parse a line); logs went to stderr", () => {
    expect(clientErrors).toEqual([]);
    expect(stderr).toMatch(/\[vault-mcp bridge\]/);
    // The restarts were noticed and a new session opened (with the client's initialize params).
    expect(stderr).toMatch(/connected to http:\/\/127\.0\.0\.1:\d+\/mcp \(session [0-9a-f-]+\)/);
  });
});

describe("stdio bridge: wrong token and raw stdio", () => {
  let server: TestServer;
  let bridge: string;

  beforeAll(async () => {
    bridge = bridgeScript();
    server = await startTestServer(makeTempVault({ "A.md": "a\n" }));
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  /** Runs the bridge with raw stdin lines; returns stdout lines once it has answered `expect` of them. */
  const rawSession = (args: string[], lines: object[], expect: number) =>
    new Promise<{ out: string[]; err: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [bridge, ...args], { stdio: ["pipe", "pipe", "pipe"] });
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.split("\n").filter(Boolean).length >= expect) child.stdin.end();
      });
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.on("error", reject);
      child.on("exit", () => resolve({ out: out.split("\n").filter(Boolean), err }));
      for (const l of lines) child.stdin.write(JSON.stringify(l) + "\n");
    });

  const init = { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } } };

  test("a wrong token is answered with a JSON-RPC error naming the 401, not retried forever", async () => {
    const { out } = await rawSession(["--url", server.url, "--token", "x".repeat(32)], [init], 1);
    expect(out).toHaveLength(1);
    const msg = JSON.parse(out[0]);
    expect(msg).toMatchObject({ jsonrpc: "2.0", id: 1, error: { code: expect.any(Number) } });
    expect(msg.error.message).toMatch(/401/);
    expect(msg.error.message).toMatch(/bearer token is wrong/);
  });

  test("every stdout line is a JSON-RPC message; the bridge exits when stdin closes", async () => {
    const { out } = await rawSession(
      ["--url", server.url, `--token=${server.token}`, "--verbose"],
      [init, { jsonrpc: "2.0", method: "notifications/initialized" }, { jsonrpc: "2.0", id: 2, method: "tools/list" }, { jsonrpc: "2.0", id: 3, method: "ping" }],
      3,
    );
    const msgs = out.map((l) => JSON.parse(l));
    for (const m of msgs) expect(m.jsonrpc).toBe("2.0");
    expect(msgs.map((m) => m.id).sort()).toEqual([1, 2, 3]);
    expect(msgs.find((m) => m.id === 2).result.tools.length).toBeGreaterThan(0);
  });

  test("bad arguments: exit code 2 and the usage on stderr, nothing on stdout", async () => {
    const { out, err } = await rawSession(["--url", server.url], [], 0);
    expect(out).toEqual([]);
    expect(err).toMatch(/--token-file/);
  });
});
