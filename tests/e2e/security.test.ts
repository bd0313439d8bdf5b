import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectClient, INIT_BODY, makeTempVault, rawRequest, removeTree, startTestServer, type TestServer } from "../support/harness";

const JSON_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

describe("transport security", () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer(makeTempVault({ "Secret plans.md": "top secret" }), { allowedOrigins: ["https://trusted.example"] });
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  const auth = () => ({ Authorization: `Bearer ${server.token}` });

  test("no token → 401 with a JSON-RPC error that says how to get the token", async () => {
    const r = await rawRequest(server.port, { method: "POST", headers: JSON_HEADERS, body: INIT_BODY });
    expect(r.status).toBe(401);
    const body = JSON.parse(r.body);
    expect(body).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 }, id: null });
    expect(body.error.message).toMatch(/Authorization: Bearer <token>/);
    expect(body.error.message).toMatch(/printed the token/);
    expect(r.headers["www-authenticate"]).toMatch(/^Bearer/);
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
  });

  test.each([
    ["wrong token", "Bearer not-the-token"],
    ["token with a suffix", () => `Bearer ${server.token}x`],
    ["token prefix only", () => `Bearer ${server.token.slice(0, -1)}`],
    ["wrong scheme", () => `Basic ${server.token}`],
    ["empty bearer", "Bearer "],
  ])("%s → 401", async (_name, value) => {
    const header = typeof value === "function" ? value() : value;
    const r = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, Authorization: header }, body: INIT_BODY });
    expect(r.status).toBe(401);
  });

  test("GET and DELETE on /mcp need the token too", async () => {
    expect((await rawRequest(server.port, { method: "GET" })).status).toBe(401);
    expect((await rawRequest(server.port, { method: "DELETE" })).status).toBe(401);
  });

  test("the right token initializes a session", async () => {
    const r = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, ...auth() }, body: INIT_BODY });
    expect(r.status).toBe(200);
    expect(r.headers["mcp-session-id"]).toBeTruthy();
  });

  test.each([
    ["evil.example.com", "a foreign host name"],
    ["evil.example.com:PORT", "a foreign host with our port"],
    ["127.0.0.1:1", "the wrong port"],
    ["127.0.0.1", "no port"],
    ["0.0.0.0:PORT", "the unspecified address"],
    ["localhost.evil.com:PORT", "a look-alike"],
  ])("Host %j (%s) → 403 even with the token", async (host) => {
    const r = await rawRequest(server.port, {
      method: "POST",
      headers: { ...JSON_HEADERS, ...auth(), Host: host.replace("PORT", String(server.port)) },
      body: INIT_BODY,
    });
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body).error.message).toMatch(/Host/);
  });

  test.each(["localhost:PORT", "127.0.0.1:PORT", "[::1]:PORT"])("loopback Host %j is accepted", async (host) => {
    const r = await rawRequest(server.port, { path: "/health", headers: { Host: host.replace("PORT", String(server.port)) } });
    expect(r.status).toBe(200);
  });

  test.each(["https://evil.example", "null", "http://localhost:3000"])("Origin %j → 403 even with the token", async (origin) => {
    const r = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, ...auth(), Origin: origin }, body: INIT_BODY });
    expect(r.status).toBe(403);
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
  });

  test.each(["http://127.0.0.1:PORT", "http://localhost:PORT"])("our own origin %j (same-origin) passes", async (origin) => {
    const r = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, ...auth(), Origin: origin.replace("PORT", String(server.port)) }, body: INIT_BODY });
    expect(r.status).toBe(200);
  });

  test.each(["http://127.0.0.1:1", "https://127.0.0.1:PORT", "http://127.0.0.1:PORT.evil.com"])("a loopback origin on another port or scheme %j → 403", async (origin) => {
    const r = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, ...auth(), Origin: origin.replace("PORT", String(server.port)) }, body: INIT_BODY });
    expect(r.status).toBe(403);
  });

  test("an allowed Origin passes", async () => {
    const r = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, ...auth(), Origin: "https://trusted.example" }, body: INIT_BODY });
    expect(r.status).toBe(200);
    expect(r.headers["access-control-allow-origin"]).toBeUndefined();
  });

  test("/health answers without auth and leaks nothing about the vault", async () => {
    const r = await rawRequest(server.port, { path: "/health" });
    expect(r.status).toBe(200);
    expect(r.headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(JSON.parse(r.body)).toEqual({ status: "ok" });
    expect(r.body).not.toMatch(/Secret|vault|plans/i);
    // Answered before express when plain; with a query, or HEAD, the same through express.
    const q = await rawRequest(server.port, { path: "/health?x=1" });
    expect([q.status, JSON.parse(q.body)]).toEqual([200, { status: "ok" }]);
    expect((await rawRequest(server.port, { method: "HEAD", path: "/health" })).status).toBe(200);
  });

  test("/health from a foreign Origin or with a foreign Host → 403, like every other path", async () => {
    const o = await rawRequest(server.port, { path: "/health", headers: { Origin: "https://evil.example" } });
    expect(o.status).toBe(403);
    expect(JSON.parse(o.body).error.message).toMatch(/origin/);
    const h = await rawRequest(server.port, { path: "/health", headers: { Host: `evil.example:${server.port}` } });
    expect(h.status).toBe(403);
    expect(JSON.parse(h.body).error.message).toMatch(/Host/);
  });

  test("unknown session → 404; malformed JSON → parse error; unknown path → 404", async () => {
    const s = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, ...auth(), "mcp-session-id": "nope" }, body: INIT_BODY });
    expect(s.status).toBe(404);
    const bad = await rawRequest(server.port, { method: "POST", headers: { ...JSON_HEADERS, ...auth() }, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe(-32700);
    const nf = await rawRequest(server.port, { path: "/anything", headers: auth() });
    expect(nf.status).toBe(404);
  });

  test("the server listens on 127.0.0.1 only", () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/mcp`);
  });

  test("a session can be ended with DELETE", async () => {
    const client: Client = await connectClient(server.url, server.token);
    await client.listTools();
    const transport = client.transport as { terminateSession?: () => Promise<void>; sessionId?: string };
    const id = transport.sessionId!;
    await transport.terminateSession!();
    const r = await rawRequest(server.port, { method: "GET", headers: { ...auth(), Accept: "text/event-stream", "mcp-session-id": id } });
    expect(r.status).toBe(404);
    await client.close();
  });
});
