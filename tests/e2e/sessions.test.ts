/**
 * MCP sessions are bounded: a client that initializes over and over without DELETE (6,000 sessions
 * held ~1 GB) cannot grow the server past the cap, idle sessions close, and a closed session lets
 * go of its McpServer's vault listener. Asserted on counts, not on time or heap sizes.
 */
import http from "node:http";
import { INIT_BODY, makeTempVault, ok, rawRequest, removeTree, startTestServer, type TestServer } from "../support/harness";
import { startChildServer } from "../support/child-server";

/** Initializes in the flood test, ten times the cap (each builds a server with every tool: ~15 ms here). */
const N = 400;
const JSON_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

/** Listeners on the FsVault's change events: each live session's resources hold one. */
function vaultListeners(s: TestServer): number {
  return (s.vault as unknown as { listeners: Set<unknown> }).listeners.size;
}

describe("MCP sessions are bounded", () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    if (server) {
      await server.close();
      removeTree(server.root);
      server = undefined;
    }
  });

  /** An initialize without DELETE; returns the session id. */
  async function initialize(s: TestServer, agent?: http.Agent): Promise<string> {
    const r = await new Promise<{ status: number; id: string | undefined; body: string }>((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: s.port, method: "POST", path: "/mcp", agent, headers: { ...JSON_HEADERS, Authorization: `Bearer ${s.token}` } },
        (res) => {
          let body = "";
          res.setEncoding("utf8").on("data", (c: string) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, id: res.headers["mcp-session-id"] as string | undefined, body }));
        },
      );
      req.on("error", reject);
      req.end(INIT_BODY);
    });
    if (r.status !== 200 || !r.id) throw new Error(`initialize answered ${r.status}: ${r.body}`);
    return r.id;
  }

  const toolsList = (s: TestServer, id: string) =>
    rawRequest(s.port, {
      method: "POST",
      headers: { ...JSON_HEADERS, Authorization: `Bearer ${s.token}`, "mcp-session-id": id, "mcp-protocol-version": "2025-06-18" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });

  test("400 initializes (ten times the cap) without DELETE: the session count stays at the cap, the oldest idle go first, their listeners are released, and the server still answers", async () => {
    server = await startTestServer(makeTempVault({ "A.md": "alpha" }), { maxSessions: 40 });
    const s = server;
    const baseline = vaultListeners(s);
    // A connection per request: with keep-alive, a machine busy enough to hold this process for the
    // server's keep-alive timeout (5 s then; 65 s now) let the server drop a socket the client was
    // reusing (ECONNRESET).
    const agent = new http.Agent({ keepAlive: false, maxSockets: 4 });
    const ids: string[] = [];
    try {
      for (let i = 0; i < N; i += 4) ids.push(...(await Promise.all([0, 1, 2, 3].map(() => initialize(s, agent)))));
    } finally {
      agent.destroy();
    }
    expect(ids.length).toBe(N);
    expect(s.runtime.sessionCount).toBe(40);
    // Each closed session's McpServer let go of its vault listener (no server kept alive by it).
    expect(vaultListeners(s)).toBe(baseline + 40);
    // The first sessions were closed (the client is told to initialize again), the newest still work.
    const first = await toolsList(s, ids[0]);
    expect(first.status).toBe(404);
    expect(JSON.parse(first.body).error.message).toMatch(/Initialize a new session/);
    expect((await toolsList(s, ids[ids.length - 1])).status).toBe(200);
    // A real client still gets in and works (it takes the place of the session idle the longest).
    const client = await s.connect();
    expect((await ok(client, "read", { path: "A.md" })).body).toBe("alpha");
    expect(s.runtime.sessionCount).toBe(40);
  }, 180_000);

  test("a session with an open GET stream is not idle: the cap closes others, and refuses a new session when none is idle", async () => {
    server = await startTestServer(makeTempVault({ "A.md": "alpha" }), { maxSessions: 2 });
    const s = server;
    const streaming = await initialize(s);
    // The client's GET stream for server notifications, held open.
    const get = http.request({ host: "127.0.0.1", port: s.port, method: "GET", path: "/mcp", headers: { Accept: "text/event-stream", Authorization: `Bearer ${s.token}`, "mcp-session-id": streaming, "mcp-protocol-version": "2025-06-18" } });
    const opened = new Promise<http.IncomingMessage>((resolve) => get.on("response", resolve));
    get.on("error", () => {});
    get.end();
    expect((await opened).statusCode).toBe(200);
    for (let i = 0; i < 10; i++) await initialize(s);
    expect(s.runtime.sessionCount).toBe(2);
    expect((await toolsList(s, streaming)).status).toBe(200);

    // Both sessions busy (two streams): a third is refused with a clear error, nothing is closed.
    const other = await initialize(s);
    const get2 = http.request({ host: "127.0.0.1", port: s.port, method: "GET", path: "/mcp", headers: { Accept: "text/event-stream", Authorization: `Bearer ${s.token}`, "mcp-session-id": other, "mcp-protocol-version": "2025-06-18" } });
    const opened2 = new Promise<http.IncomingMessage>((resolve) => get2.on("response", resolve));
    get2.on("error", () => {});
    get2.end();
    expect((await opened2).statusCode).toBe(200);
    const refused = await rawRequest(s.port, { method: "POST", headers: { ...JSON_HEADERS, Authorization: `Bearer ${s.token}` }, body: INIT_BODY });
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error.message).toMatch(/Too many sessions/);
    get.destroy();
    get2.destroy();
  });

  test("an idle session is closed after the idle time, its listener released; its id then gets 404", async () => {
    server = await startTestServer(makeTempVault({ "A.md": "alpha" }), { sessionIdleMs: 300 });
    const s = server;
    const baseline = vaultListeners(s);
    const id = await initialize(s);
    expect(s.runtime.sessionCount).toBe(1);
    expect(vaultListeners(s)).toBe(baseline + 1);
    const deadline = Date.now() + 10_000;
    while (s.runtime.sessionCount > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(s.runtime.sessionCount).toBe(0);
    expect(vaultListeners(s)).toBe(baseline);
    expect((await toolsList(s, id)).status).toBe(404);
  });

  test("headless: --max-sessions caps the sessions (the oldest idle closed first)", async () => {
    const root = makeTempVault({ "A.md": "alpha" });
    const state = makeTempVault({});
    const child = await startChildServer(root, { stateDir: state, args: ["--max-sessions", "3"] });
    try {
      const port = Number(new URL(child.url).port);
      const s = { port, token: child.token } as TestServer;
      const ids: string[] = [];
      for (let i = 0; i < 8; i++) ids.push(await initialize(s));
      for (const id of ids.slice(0, 5)) expect((await toolsList(s, id)).status).toBe(404);
      for (const id of ids.slice(5)) expect((await toolsList(s, id)).status).toBe(200);
    } finally {
      await child.stop();
      removeTree(root);
      removeTree(state);
    }
  }, 60_000);
});
