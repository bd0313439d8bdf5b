/**
 * One story while embeddings are built, against an OpenAI-compatible test server (as a user with
 * LM Studio or llama.cpp has): build_embeddings says what it started and sends progress when asked;
 * a percentage never goes backwards; search `_meta`, embeddings_status and the text use one state
 * and one vocabulary; a forced rebuild takes the model's new vector length; get_similar takes the
 * section forms read takes; the fallback message reads as a sentence.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { RemoteEmbedder } from "../../src/core/search/vector/remote-embedder";
import { nodeHttp } from "../../src/hosts/common/http-client";
import { call, eventually, makeTempVault, ok, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

/** The server's behaviour: the vectors' length, down (connection refused-like 503), the model missing (404), a delay. */
const model = { dim: 16, mode: "ok" as "ok" | "404" | "503", delayMs: 0 };

function vec(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const w of text.toLowerCase().split(/\W+/).filter(Boolean)) {
    let h = 7;
    for (const ch of w) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
    v[h % dim] += 1;
  }
  v[0] += 0.01;
  return v;
}

const files: Record<string, string> = {
  "General.md": "# General\n\nHow the team works.\n\n## Conflict resolution\n\nWhen two edits collide, merge conflicts are resolved by the author of the later change.\n\n## Holidays\n\nBook holidays early.\n",
  "Merging.md": "# Merging\n\nResolve merge conflicts: the later change's author decides when two edits collide.\n",
  "Garden.md": "# Garden\n\nTomatoes and basil.\n",
};
for (let i = 0; i < 40; i++) files[`Notes/Note ${i}.md`] = `# Note ${i}\n\nFiller note number ${i} about topic ${i % 7}.\n`;

describe("embeddings tell one story", () => {
  let root: string;
  let server: TestServer;
  let client: Client;
  let provider: http.Server;

  beforeAll(async () => {
    provider = http.createServer((req, res) => {
      let raw = "";
      req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
      req.on("end", () => {
        const body = JSON.parse(raw) as { model: string; input: string[] };
        const send = (status: number, json: unknown) => {
          res.writeHead(status, { "Content-Type": "application/json" });
          res.end(JSON.stringify(json));
        };
        setTimeout(() => {
          if (model.mode === "404") return send(404, { error: { message: `The model \`${body.model}\` does not exist.` } });
          if (model.mode === "503") return send(503, { error: "unavailable" });
          send(200, { object: "list", data: body.input.map((t, index) => ({ object: "embedding", index, embedding: vec(t, model.dim) })), model: body.model });
        }, model.delayMs);
      });
    });
    await new Promise<void>((r) => provider.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/v1`;
    root = makeTempVault(files);
    const embedder = new RemoteEmbedder({ kind: "openai", url, model: "test-embed", http: nodeHttp, batchSize: 4, retries: 0, sleep: () => Promise.resolve() });
    server = await startTestServer(root, { embedder, toolTimeoutMs: 20_000 });
    client = await server.connect();
    await eventually(async () => {
      const s = await ok(client, "embeddings_status");
      if (s.state !== "ready") throw new Error(JSON.stringify(s));
      return s;
    }, 20_000);
  }, 30_000);

  afterAll(async () => {
    await server.close();
    await new Promise((r) => provider.close(r));
    removeTree(root);
  });

  test("build_embeddings says what it started, and with a progress token reports progress that never goes backwards", async () => {
    // Long enough a build (11 batches, ~0.7 s) for the 250 ms throttle to let progress through between its
    // forced first and last reports: at 15 ms a batch it once ended, under a loaded run, with those two only.
    model.delayMs = 60;
    const events: { progress: number; total?: number; message?: string }[] = [];
    const res = await client.callTool({ name: "build_embeddings", arguments: { force: true } }, undefined, { onprogress: (p) => void events.push(p), timeout: 30_000 });
    model.delayMs = 0;
    const s = res.structuredContent as { started: string; notes: number; discarded: number; status: { state: string; chunks_embedded: number; chunks_total: number } };
    expect(s.notes).toBe(43);
    expect(s.discarded).toBeGreaterThanOrEqual(43);
    expect(s.started).toMatch(/Started embedding every note again: \d+ vectors discarded, the vector length taken anew/);
    expect(textOf(res as CallToolResult)).not.toMatch(/0 of 0 sections/);
    expect(s.status).toMatchObject({ state: "ready" });
    expect(s.status.chunks_embedded).toBe(s.status.chunks_total);
    expect(events.length).toBeGreaterThan(2);
    for (let i = 1; i < events.length; i++) expect(events[i].progress).toBeGreaterThanOrEqual(events[i - 1].progress);
    // A total is given only once counted, and then never shrinks below what was said (a percentage never goes backwards).
    const totals = events.filter((e) => e.total !== undefined).map((e) => e.total!);
    expect(totals.length).toBeGreaterThan(0);
    for (let i = 1; i < totals.length; i++) expect(totals[i]).toBe(totals[0]);
    const pct = events.filter((e) => e.total).map((e) => e.progress / e.total!);
    for (let i = 1; i < pct.length; i++) expect(pct[i]).toBeGreaterThanOrEqual(pct[i - 1]);
    expect(events[events.length - 1]).toMatchObject({ progress: s.status.chunks_total, total: s.status.chunks_total });
    expect(events.some((e) => /^Embeddings building: /.test(e.message ?? ""))).toBe(true);
  }, 40_000);

  test("a forced rebuild after the model's vector length changed takes the new length", async () => {
    model.dim = 24;
    await ok(client, "build_embeddings", { force: true });
    const st = await eventually(async () => {
      const s = await ok(client, "embeddings_status");
      if (s.state !== "ready") throw new Error(JSON.stringify(s));
      return s;
    }, 20_000);
    expect(st).toMatchObject({ dimension: 24, last_error: null });
    expect(st.chunks_embedded).toBe(st.chunks_total);
    expect(st.chunks_total).toBeGreaterThan(40);
    const res = await ok(client, "search", { query: "merge conflicts", mode: "semantic", limit: 3 });
    expect(res.mode).toBe("semantic");
  }, 30_000);

  test("get_similar takes a heading alone, as read does, as well as its path", async () => {
    const byPath = await ok(client, "get_similar", { path: "General.md", heading: "General > Conflict resolution", limit: 3 });
    const byHeading = await ok(client, "get_similar", { path: "General.md", heading: "Conflict resolution", limit: 3 });
    const lower = await ok(client, "get_similar", { path: "General.md", heading: "conflict RESOLUTION", limit: 3 });
    expect(byHeading.similar).toEqual(byPath.similar);
    expect(lower.similar).toEqual(byPath.similar);
    expect(byHeading.similar[0].path).toBe("Merging.md");
    const bad = await call(client, "get_similar", { path: "General.md", heading: "Nope" });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toMatch(/no section "Nope"; its sections: "General", "General > Conflict resolution", "General > Holidays"/);
  });

  test("provider failing: search _meta and embeddings_status say the same state, with why; ready never comes with an error; the fallback reads as a sentence", async () => {
    model.mode = "404";
    try {
      const res = await call(client, "search", { query: "merge conflicts", mode: "semantic", limit: 3 });
      const st = await ok(client, "embeddings_status");
      const meta = (res._meta as { embeddings: { state: string; last_error: string | null; error?: string } }).embeddings;
      expect(meta.state).toBe(st.state);
      expect(st.state).toBe("unavailable");
      expect(st.last_error).toMatch(/does not exist/);
      expect(meta.last_error).toBe(st.last_error);
      const text = textOf(res);
      expect(text).toMatch(/these are keyword results/);
      expect(text).not.toMatch(/\.;/);
      expect(textOf(await call(client, "embeddings_status"))).toMatch(/^Embeddings unavailable: /);
    } finally {
      model.mode = "ok";
    }
    // Back: the next answer tells the provider is up again, and ready comes without an error.
    await ok(client, "search", { query: "merge conflicts", mode: "semantic", limit: 3 });
    const st = await eventually(async () => {
      const s = await ok(client, "embeddings_status");
      if (s.state !== "ready") throw new Error(JSON.stringify(s));
      return s;
    }, 10_000);
    expect(st.last_error).toBeNull();
    const res = await call(client, "search", { query: "merge conflicts", mode: "hybrid", limit: 3 });
    expect((res._meta as { embeddings: { state: string; last_error: string | null } }).embeddings).toMatchObject({ state: "ready", last_error: null });
  }, 20_000);
});
