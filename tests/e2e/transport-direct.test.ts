import { MemoryStateStore } from "../../src/core/state";
import { INIT_BODY, makeTempVault, rawRequest, removeTree, startTestServer, type RawResponse, type TestServer } from "../support/harness";
import { INDEX_FILE } from "../support/search-service";

/**
 * A POST on a session that is one well-formed request takes the transport's direct lane; every other
 * POST goes through the SDK's transport. Both must answer alike, and what the lane does not take must
 * get the SDK's own answer.
 */
describe("POST /mcp on a session: the direct lane and the SDK transport", () => {
  let server: TestServer;
  let session: string;

  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({
    "Content-Type": "application/json",
    Accept: "application/json, text/event-stream",
    Authorization: `Bearer ${server.token}`,
    "mcp-session-id": session,
    "mcp-protocol-version": "2025-06-18",
    ...extra,
  });
  /** A POST with its Content-Length, as clients send it (a body without one, chunked, goes through express). */
  const post = (body: unknown, extra?: Record<string, string>): Promise<RawResponse> => {
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return rawRequest(server.port, { method: "POST", headers: headers({ "Content-Length": String(Buffer.byteLength(text)), ...extra }), body: text });
  };
  const searchCall = (id: number | string) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "search", arguments: { query: "dovetail joint" } } });

  beforeAll(async () => {
    const stateStore = new MemoryStateStore();
    server = await startTestServer(
      makeTempVault({
        "Joinery/Dovetail.md": "# Dovetail\n\nA dovetail joint locks two boards at a corner.\n",
        "Joinery/Mortise.md": "# Mortise and tenon\n\nThe oldest joint; no dovetail here.\n",
        "Garden.md": "Tomatoes and beans.\n",
      }),
      { stateStore, search: { persistDebounceMs: 20 } },
    );
    // The index built and saved, so that both answers below see it idle (`_meta.index_stale` alike).
    for (let i = 0; i < 500 && !stateStore.files.has(INDEX_FILE); i++) await new Promise((r) => setTimeout(r, 10));
    await server.runtime.services.search.waitForIdle(10_000);
    const init = await rawRequest(server.port, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${server.token}` },
      body: INIT_BODY,
    });
    expect(init.status).toBe(200);
    session = String(init.headers["mcp-session-id"]);
    expect((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status).toBe(202);
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  test("a tool call is answered with one JSON body, the same as the SDK transport's answer to it", async () => {
    const direct = await post(searchCall(7));
    // A batch of one is not the lane's shape: the SDK transport answers it.
    const viaSdk = await post([searchCall(8)]);
    for (const r of [direct, viaSdk]) {
      expect(r.status).toBe(200);
      expect(r.headers["content-type"]).toMatch(/^application\/json/);
      expect(r.headers["mcp-session-id"]).toBe(session);
    }
    const a = JSON.parse(direct.body);
    const parsed = JSON.parse(viaSdk.body);
    const b = Array.isArray(parsed) ? parsed[0] : parsed;
    expect(a).toMatchObject({ jsonrpc: "2.0", id: 7 });
    expect(b).toMatchObject({ jsonrpc: "2.0", id: 8 });
    expect(a.result.structuredContent.hits.map((h: { path: string }) => h.path)).toEqual(["Joinery/Dovetail.md", "Joinery/Mortise.md"]);
    expect({ ...a, id: 0 }).toEqual({ ...b, id: 0 });
  });

  test("string ids, errors and unknown methods are answered on the lane as JSON-RPC says", async () => {
    const r = await post(searchCall("req-1"));
    expect(JSON.parse(r.body)).toMatchObject({ id: "req-1", result: { structuredContent: { total_files: 2 } } });
    const unknown = JSON.parse((await post({ jsonrpc: "2.0", id: 9, method: "no/such/method" })).body);
    expect(unknown).toMatchObject({ jsonrpc: "2.0", id: 9, error: { code: -32601 } });
    const badArgs = JSON.parse((await post({ jsonrpc: "2.0", id: 10, method: "tools/call", params: { name: "search", arguments: { query: 5 } } })).body);
    expect(badArgs.id).toBe(10);
    expect(badArgs.result?.isError ?? badArgs.error).toBeTruthy();
  });

  test.each<[string, unknown, Record<string, string>, number, number | null]>([
    ["an Accept without text/event-stream", searchCall(20), { Accept: "application/json" }, 406, -32000],
    ["a Content-Type that is not JSON", JSON.stringify(searchCall(21)), { "Content-Type": "text/plain" }, 415, -32000],
    ["an unsupported protocol version", searchCall(22), { "mcp-protocol-version": "1999-01-01" }, 400, -32000],
    ["a JSON-RPC version other than 2.0", { ...searchCall(23), jsonrpc: "1.0" }, {}, 400, -32700],
    ["a request with a key JSON-RPC does not have", { ...searchCall(24), extra: true }, {}, 400, -32700],
    ["a second initialize", JSON.parse(INIT_BODY), {}, 400, -32600],
    ["a notification", { jsonrpc: "2.0", method: "notifications/initialized" }, {}, 202, null],
  ])("%s gets the SDK transport's answer", async (_name, body, extra, status, code) => {
    const r = await post(body, extra);
    expect(r.status).toBe(status);
    if (code !== null) expect(JSON.parse(r.body).error.code).toBe(code);
  });

  test("the session still answers on the lane after all of that", async () => {
    const r = JSON.parse((await post(searchCall(30))).body);
    expect(r.result.structuredContent.hits[0].path).toBe("Joinery/Dovetail.md");
  });

  // Idle connections are kept 65 s (Node's default is 5 s): a client held up near the end of its
  // reuse window sent a request on a socket the server had just closed (ECONNRESET).
  test("a session's POST taken before express gets express's answers: bad JSON, a JSON that is not an object or array, a wrong token, Host or Origin; a body over 1 MB goes through express", async () => {
    const codeOf = (r: RawResponse) => [r.status, JSON.parse(r.body).error?.code];
    expect(codeOf(await post("{not json"))).toEqual([400, -32700]);
    expect(codeOf(await post('"a string"'))).toEqual([400, -32700]);
    expect(codeOf(await post("42"))).toEqual([400, -32700]);
    expect((await post(searchCall(30), { Authorization: "Bearer wrong" })).status).toBe(401);
    expect((await post(searchCall(31), { Host: `evil.example:${server.port}` })).status).toBe(403);
    expect((await post(searchCall(32), { Origin: "https://evil.example" })).status).toBe(403);
    // Spaces after the call: 1.1 MB, parsed by express.json, answered the same.
    const big = await post(JSON.stringify(searchCall(33)) + " ".repeat(1_100_000));
    expect(big.status).toBe(200);
    expect(JSON.parse(big.body)).toMatchObject({ id: 33, result: { structuredContent: { total_files: 2 } } });
    // Chunked (no Content-Length): through express, the same answer.
    const chunked = await rawRequest(server.port, { method: "POST", headers: headers(), body: JSON.stringify(searchCall(37)) });
    expect(JSON.parse(chunked.body)).toMatchObject({ id: 37, result: { structuredContent: { total_files: 2 } } });
    // A charset other than UTF-8's goes to express too (it refuses what it cannot decode).
    expect((await post(searchCall(34), { "Content-Type": "application/json; charset=utf-8" })).status).toBe(200);
    expect(JSON.parse((await post(searchCall(35))).body)).toMatchObject({ id: 35, result: { structuredContent: { total_files: 2 } } });
    // A byte order mark before the JSON is dropped, as express's parser drops it.
    expect(JSON.parse((await post("\uFEFF" + JSON.stringify(searchCall(36)))).body)).toMatchObject({ id: 36, result: { structuredContent: { total_files: 2 } } });
  });

  test("an initialize is taken before express too (with its Content-Length) and answered as express's route answers it", async () => {
    const noSession = (body: string, extra: Record<string, string> = {}, chunked = false): Promise<RawResponse> => {
      const h: Record<string, string> = { "Content-Type": "application/json", Accept: "application/json, text/event-stream", Authorization: `Bearer ${server.token}`, ...extra };
      if (!chunked) h["Content-Length"] = String(Buffer.byteLength(body));
      return rawRequest(server.port, { method: "POST", headers: h, body });
    };
    const sessionsBefore = server.runtime.sessionCount;
    const answers: unknown[] = [];
    for (const chunked of [false, true]) {
      const direct = server.runtime.directPosts;
      const init = await noSession(INIT_BODY, {}, chunked);
      expect(init.status).toBe(200);
      // With its Content-Length before express; chunked through it.
      expect(server.runtime.directPosts - direct).toBe(chunked ? 0 : 1);
      const id = String(init.headers["mcp-session-id"]);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      const body = JSON.parse(init.body);
      answers.push(body);
      // The new session answers a call.
      const call = await rawRequest(server.port, {
        method: "POST",
        headers: { ...headers({ "mcp-session-id": id }), "Content-Length": String(Buffer.byteLength(JSON.stringify(searchCall(40)))) },
        body: JSON.stringify(searchCall(40)),
      });
      expect(JSON.parse(call.body)).toMatchObject({ id: 40, result: { structuredContent: { total_files: 2 } } });
      expect((await rawRequest(server.port, { method: "DELETE", headers: headers({ "mcp-session-id": id }) })).status).toBe(200);
    }
    // The same answer from both ways in.
    expect(answers[0]).toEqual(answers[1]);
    expect(answers[0]).toMatchObject({ id: 1, result: { serverInfo: { name: expect.any(String) } } });
    // Not an initialize, bad JSON, a wrong token: the same refusals both ways.
    for (const chunked of [false, true]) {
      const codeOf = (r: RawResponse) => [r.status, JSON.parse(r.body).error?.code];
      expect(codeOf(await noSession(JSON.stringify(searchCall(41)), {}, chunked))).toEqual([400, -32000]);
      expect(codeOf(await noSession("{not json", {}, chunked))).toEqual([400, -32700]);
      expect(codeOf(await noSession(INIT_BODY, { Authorization: "Bearer wrong" }, chunked))).toEqual([401, -32001]);
      expect((await noSession(INIT_BODY, { Origin: "https://evil.example" }, chunked)).status).toBe(403);
    }
    expect(server.runtime.sessionCount).toBe(sessionsBefore);
  });

  test("the server keeps an idle connection 65 s, and says so", async () => {
    const r = await rawRequest(server.port, { path: "/health", headers: { Connection: "keep-alive" } });
    expect(r.status).toBe(200);
    expect(r.headers["keep-alive"]).toBe("timeout=65");
  });
});
