/** The time limit of one tool call (`mcp/server.ts`), through a real SDK client. */
import { afterAll, describe, expect, test } from "@jest/globals";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { z } from "zod";
import { MemoryVault } from "../../src/core/memory-vault";
import { createCoreServices, type CoreServices } from "../../src/core/services";
import { MemoryStateStore } from "../../src/core/state";
import { createMcpServer, readDeadline, timeoutMessage } from "../../src/mcp/server";
import { defineTool, READ_ONLY, type ToolDef } from "../../src/mcp/tool";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const services: CoreServices[] = [];
afterAll(async () => {
  for (const s of services) await s.close();
});

/** Tools that record what they were given and how they ended. */
const seen: { entered?: number; deadline?: number; aborted?: boolean; finished?: boolean } = {};

const ignoresDeadline = defineTool({
  name: "slow_read",
  title: "Slow read",
  description: "Takes 400 ms whatever its deadline says.",
  input: {},
  output: { done: z.boolean() },
  annotations: READ_ONLY,
  access: "read",
  example: {},
  handler: async (_args, ctx) => {
    seen.entered = Date.now();
    seen.deadline = ctx.deadline;
    await sleep(400);
    seen.aborted = ctx.signal?.aborted;
    seen.finished = true;
    return { structured: { done: true } };
  },
});

const honoursDeadline = defineTool({
  name: "sliced_read",
  title: "Sliced read",
  description: "Works in steps until its deadline, then answers with what it has.",
  input: {},
  output: { steps: z.number(), truncated: z.boolean() },
  annotations: READ_ONLY,
  access: "read",
  example: {},
  handler: async (_args, ctx) => {
    let steps = 0;
    while (steps < 1000) {
      if (Date.now() >= ctx.deadline) return { structured: { steps, truncated: true } };
      await sleep(5);
      steps++;
    }
    return { structured: { steps, truncated: false } };
  },
});

const slowWrite = defineTool({
  name: "slow_write",
  title: "Slow write",
  description: "A change that takes longer than the limit.",
  input: {},
  output: { written: z.boolean() },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: "write",
  example: {},
  handler: async () => {
    await sleep(400);
    return { structured: { written: true } };
  },
});

async function connect(toolTimeoutMs: number | undefined, tools: ToolDef[]): Promise<Client> {
  const core = createCoreServices(new MemoryVault({ "A.md": "a\n" }), { host: "node", writeMode: true, stateStore: new MemoryStateStore(), sqlWasm });
  services.push(core);
  const server = createMcpServer(core, tools, { name: "t", version: "0", instructions: "", toolTimeoutMs });
  const [a, b] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "time-limit-test", version: "1" });
  await Promise.all([server.connect(a), client.connect(b)]);
  return client;
}

const callTool = async (client: Client, name: string) => (await client.callTool({ name, arguments: {} })) as CallToolResult;
const text = (r: CallToolResult) => r.content.map((c) => (c.type === "text" ? c.text : "")).join("");

describe("the time limit of one tool call", () => {
  test("a read that runs past the limit is answered with a timeout error, and its signal is aborted", async () => {
    const client = await connect(100, [ignoresDeadline]);
    const started = Date.now();
    const r = await callTool(client, "slow_read");
    // Answered at the limit, not when the handler ended.
    expect(seen.finished).toBeUndefined();
    expect(r.isError).toBe(true);
    expect(text(r)).toBe(timeoutMessage("slow_read", 100));
    expect(text(r)).toMatch(/slow_read did not finish within the 100 ms time limit .*Narrow it.*--tool-timeout/);
    // The handler was told: its deadline came before the limit, and its signal is aborted by the time it ends.
    // A tenth of the limit early, measured from when the handler was called: the limit runs from the
    // server's receipt, which a loaded machine can put 10 ms or more after the test's `started`.
    expect(seen.deadline).toBeGreaterThanOrEqual(started);
    expect(seen.deadline).toBeLessThanOrEqual(seen.entered! + 90);
    await sleep(450);
    expect(seen).toMatchObject({ finished: true, aborted: true });
    await client.close();
  });

  test("a read that checks its deadline answers with what it has before the limit", async () => {
    const client = await connect(200, [honoursDeadline]);
    const r = await callTool(client, "sliced_read");
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ truncated: true });
    expect((r.structuredContent as { steps: number }).steps).toBeGreaterThan(0);
    await client.close();
  });

  test("writes are never cut off, and no limit means none", async () => {
    const client = await connect(100, [slowWrite, ignoresDeadline]);
    const w = await callTool(client, "slow_write");
    expect(w.isError).toBeFalsy();
    expect(w.structuredContent).toEqual({ written: true });
    await client.close();
    const unlimited = await connect(0, [ignoresDeadline]);
    const r = await callTool(unlimited, "slow_read");
    expect(r.structuredContent).toEqual({ done: true });
    expect(seen.deadline).toBe(Infinity);
    await unlimited.close();
  });

  test("the handler's deadline leaves a tenth of the limit, at most a second, to answer in", () => {
    expect(readDeadline(1000, 10_000)).toBe(10_000);
    expect(readDeadline(1000, 500)).toBe(1450);
    expect(readDeadline(1000, 0)).toBe(Infinity);
  });
});
