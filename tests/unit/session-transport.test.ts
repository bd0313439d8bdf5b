import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import type { Request } from "express";
import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { SessionTransport } from "../../src/transport/http";

/**
 * The direct lane's bookkeeping, with the SDK transport and the HTTP objects stood in for: which
 * HTTP request a response goes to, and that nothing is left waiting or answered twice. (The lane over
 * real HTTP, against the SDK transport, is in tests/e2e/transport-direct.test.ts.)
 */
class FakeResponse extends EventEmitter {
  statusCode = 0;
  headersSent = false;
  readonly headers: Record<string, string> = {};
  body: string | undefined;
  destroyed = false;
  /** What `write` was given, piece by piece, as the bytes it would send. */
  readonly pieces: Buffer[] = [];
  setHeader(name: string, value: string): void {
    this.headers[name.toLowerCase()] = value;
  }
  write(piece: string): boolean {
    this.headersSent = true;
    this.pieces.push(Buffer.from(piece, "utf8"));
    return true;
  }
  end(body?: string): void {
    if (body !== undefined) this.write(body);
    this.body = Buffer.concat(this.pieces).toString("utf8");
    this.emit("close");
  }
  /** The connection went away before an answer. */
  drop(): void {
    this.emit("close");
  }
}

function fakeSdk() {
  const sdk = {
    sessionId: "session-1",
    onmessage: undefined as ((m: JSONRPCMessage) => void) | undefined,
    onclose: undefined as (() => void) | undefined,
    onerror: undefined as ((e: Error) => void) | undefined,
    start: async () => {},
    close: async () => sdk.onclose?.(),
    send: jest.fn(async (_m: JSONRPCMessage, _o?: unknown) => {}),
    handleRequest: jest.fn(async (_req: unknown, _res: unknown, _body?: unknown) => {}),
  };
  return sdk;
}

const HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" };

describe("SessionTransport (direct lane)", () => {
  let sdk: ReturnType<typeof fakeSdk>;
  let transport: SessionTransport;
  let received: JSONRPCMessage[];
  let closed: number;

  beforeEach(async () => {
    sdk = fakeSdk();
    transport = new SessionTransport(sdk as unknown as StreamableHTTPServerTransport);
    received = [];
    closed = 0;
    transport.onmessage = (m) => void received.push(m);
    transport.onclose = () => void closed++;
    await transport.start();
  });

  const post = async (id: string | number): Promise<FakeResponse> => {
    const res = new FakeResponse();
    const body = { jsonrpc: "2.0", id, method: "tools/call", params: { name: "search", arguments: { query: "x" } } };
    await transport.handlePost({ body, headers: HEADERS } as unknown as Request, res as unknown as ServerResponse);
    return res;
  };
  const result = (id: string | number): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: { content: [] } });

  test("a response goes to the HTTP request that asked; notifications about that request go to the session's GET stream", async () => {
    const res = await post(1);
    expect(received).toEqual([expect.objectContaining({ id: 1, method: "tools/call" })]);
    const progress: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: 1, progress: 1 } };
    await transport.send(progress, { relatedRequestId: 1 });
    expect(res.body).toBeUndefined();
    // Without relatedRequestId: the SDK transport writes it on the standalone stream (or drops it when none is open).
    expect(sdk.send).toHaveBeenCalledWith(progress);
    await transport.send(result(1));
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ "content-type": "application/json", "mcp-session-id": "session-1" });
    expect(JSON.parse(res.body!)).toEqual(result(1));
    expect(sdk.send).toHaveBeenCalledTimes(1);
    expect(sdk.handleRequest).not.toHaveBeenCalled();
  });

  test("a large answer is written a piece at a time, no piece splitting a character", async () => {
    const res = await post(2);
    // 256 Ki characters a piece; after the odd-length JSON before it and the "a", an emoji (two UTF-16
    // units) straddles every boundary.
    const text = `a${"😀".repeat(400_000)}`;
    const big: JSONRPCMessage = { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text }] } };
    await transport.send(big);
    expect(res.pieces.length).toBeGreaterThan(3);
    expect(res.pieces.every((p) => p.toString("utf8").length <= 256 * 1024)).toBe(true);
    expect(res.body).toBe(JSON.stringify(big));
    // A small answer stays one body.
    const small = await post(3);
    await transport.send(result(3));
    expect(small.pieces).toHaveLength(1);
  });

  test("a request whose id is still waiting goes to the SDK transport; the first still gets its answer", async () => {
    const first = await post(5);
    await post(5);
    expect(sdk.handleRequest).toHaveBeenCalledTimes(1);
    await transport.send(result(5));
    expect(JSON.parse(first.body!)).toEqual(result(5));
    // The next response with that id belongs to the SDK transport's request.
    await transport.send(result(5));
    expect(sdk.send).toHaveBeenCalledWith(result(5), undefined);
  });

  test("a client that gives up leaves no entry: a late response goes to the SDK transport, and the id is free again", async () => {
    const res = await post("a");
    res.drop();
    await transport.send(result("a"));
    expect(res.body).toBeUndefined();
    expect(sdk.send).toHaveBeenCalledWith(result("a"), undefined);
    const again = await post("a");
    expect(sdk.handleRequest).not.toHaveBeenCalled();
    await transport.send(result("a"));
    expect(JSON.parse(again.body!)).toEqual(result("a"));
  });

  test("when the session ends, every request still waiting is answered with an error naming its id", async () => {
    const a = await post(1);
    const b = await post("two");
    await transport.close();
    expect(closed).toBe(1);
    for (const [res, id] of [[a, 1], [b, "two"]] as const) {
      expect(res.statusCode).toBe(404);
      const body = JSON.parse(res.body!);
      expect(body).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32001 } });
      expect(body.error.message).toMatch(/Initialize a new session/);
    }
    // Nothing is left to answer twice.
    await transport.send(result(1));
    expect(sdk.send).toHaveBeenCalledTimes(1);
  });

  test("messages about no waiting request go to the SDK transport (server notifications, its own requests' responses)", async () => {
    const note: JSONRPCMessage = { jsonrpc: "2.0", method: "notifications/resources/list_changed" };
    await transport.send(note);
    await transport.send(result(99), { relatedRequestId: 99 });
    expect(sdk.send.mock.calls).toEqual([[note, undefined], [result(99), { relatedRequestId: 99 }]]);
  });

  test("messages from the SDK transport reach the server", () => {
    sdk.onmessage!({ jsonrpc: "2.0", id: 3, method: "ping" });
    expect(received).toEqual([{ jsonrpc: "2.0", id: 3, method: "ping" }]);
  });
});
