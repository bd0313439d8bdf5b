import { afterEach, describe, expect, test } from "@jest/globals";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { startHttpServer, type RunningHttpServer } from "../../src/transport/http";

/**
 * Once the server goes quiet after serving requests, it hints V8 to collect what they left (by
 * default `releaseGarbage`: an idle process keeps its garbage). Here the hint is counted.
 */
describe("the hint when the server goes quiet", () => {
  let server: RunningHttpServer | null = null;
  afterEach(async () => {
    await server?.close();
    server = null;
  });

  const start = async (hints: number[]) => {
    server = await startHttpServer({
      port: 0,
      token: () => "0123456789abcdef0123",
      allowedOrigins: [],
      createServer: () => new McpServer({ name: "t", version: "1" }),
      tokenHint: "",
      quiet: { ms: 150, after: 20, then: () => hints.push(Date.now()) },
    });
    return server;
  };
  const health = async (port: number, n: number) => {
    for (let i = 0; i < n; i++) await (await fetch(`http://127.0.0.1:${port}/health`)).text();
  };
  const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

  test("comes once the server is quiet after enough requests, and once per quiet spell", async () => {
    const hints: number[] = [];
    const s = await start(hints);
    await health(s.port, 24);
    // Taken before the last request is sent: the server's quiet spell starts after it (taken after
    // the answer, a loaded machine put it 13 ms past the server's own, and the hint "early").
    const beforeLast = Date.now();
    await health(s.port, 1);
    expect(hints).toEqual([]);
    await wait(1000);
    expect(hints.length).toBe(1);
    expect(hints[0] - beforeLast).toBeGreaterThanOrEqual(149);
    // Still quiet: no second hint.
    await wait(300);
    expect(hints.length).toBe(1);
    // Another busy spell, another hint.
    await health(s.port, 25);
    await wait(1000);
    expect(hints.length).toBe(2);
  });

  test("not after a few requests", async () => {
    const hints: number[] = [];
    const s = await start(hints);
    await health(s.port, 5);
    await wait(1000);
    expect(hints).toEqual([]);
  });
});
