/**
 * A search while the saved index is still loading, over real HTTP in-process: the index's files are
 * held back by the state store until the test lets them go, so "still loading" is a state the test
 * controls, not a race. A search that can wait gets the full answer; one that cannot (a call time
 * limit shorter than the load) says the index is loading, with its progress, never "No notes match".
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import http from "node:http";
import { MemoryStateStore } from "../../src/core/state";
import { GatedStore } from "../support/gated-store";
import { HashingEmbedder } from "../../src/core/search/vector/hashing-embedder";
import { freePort } from "../support/child-server";
import { call, connectClient, makeTempVault, removeTree, startTestServer, textOf, type FileTree, type TestServer } from "../support/harness";

const NOTES = 40;
const files: FileTree = {};
for (let i = 0; i < NOTES; i++) files[`Notes/N${i}.md`] = `# N${i}\n\nbody text ${i % 2 === 0 ? "voke" : "other"} words ${i}\n`;
const root = makeTempVault(files, "vault-mcp-loading-");

const servers: Promise<TestServer>[] = [];
afterAll(async () => {
  for (const s of servers) await s.then((x) => x.close()).catch(() => {});
  removeTree(root);
});

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    http
      .get({ host: "127.0.0.1", port, path: "/health" }, (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      })
      .on("error", () => resolve(false));
  });
}

/** A saved index of the vault, and its embeddings when asked (a first run, stopped: it saves on close). */
async function savedIndex(embedder?: HashingEmbedder): Promise<MemoryStateStore> {
  const store = new MemoryStateStore();
  const s = await startTestServer(root, { stateStore: store, embedder });
  expect(await s.runtime.services.search.waitForIdle(30_000)).toBe(true);
  if (embedder) expect(await s.runtime.services.semantic!.waitForIdle(30_000)).toBe(true);
  await s.close();
  expect([...store.files.keys()].some((n) => n.startsWith("search-index"))).toBe(true);
  return store;
}

describe("a search while the saved index loads", () => {
  test("a search that cannot wait long enough says the index is loading, with its progress, not 'No notes match'", async () => {
    const store = new GatedStore(await savedIndex(), "search-index");
    const token = "loading-test-token-0123456789";
    const port = await freePort();
    const started = startTestServer(root, { stateStore: store, listenPort: port, portFallback: 0, toolTimeoutMs: 2000, token });
    servers.push(started);
    while (!(await healthy(port))) await new Promise((r) => setTimeout(r, 5));
    const client = await connectClient(`http://127.0.0.1:${port}/mcp`, token);
    try {
      const r = await call(client, "search", { query: "voke" });
      expect(r.isError).toBeFalsy();
      const text = textOf(r);
      expect(text).not.toMatch(/No notes match/);
      expect(text).toMatch(/YET/);
      expect(text).toMatch(/still loading/);
      expect(text).toContain(`of ${NOTES} notes`);
      const s = r.structuredContent as { hits: unknown[]; index_loading?: { readiness: string; notes_covered: number; notes_total: number } };
      expect(s.index_loading).toEqual({ readiness: "loading", notes_covered: 0, notes_total: NOTES });
      expect(r._meta).toMatchObject({ index_stale: true, index_loading: { readiness: "loading", notes_total: NOTES } });
      const st = await call(client, "get_index_status", {});
      expect(st.structuredContent).toMatchObject({ readiness: "loading", notes_total: NOTES });
      expect(textOf(st)).toMatch(/still loading/);

      store.release();
      await started;
      const after = await call(client, "search", { query: "voke", limit: 50 });
      expect((after.structuredContent as { total_files: number }).total_files).toBe(NOTES / 2);
      expect((after.structuredContent as { index_loading?: unknown }).index_loading).toBeUndefined();
      expect(after._meta).not.toHaveProperty("index_loading");
      expect((await call(client, "get_index_status", {})).structuredContent).toMatchObject({ readiness: "ready", notes_covered: NOTES, notes_total: NOTES });
    } finally {
      store.release();
      await client.close();
    }
  }, 30_000);

  test("a search sent while the index loads waits for it and answers in full", async () => {
    const store = new GatedStore(await savedIndex(), "search-index");
    const token = "loading-test-token-9876543210";
    const port = await freePort();
    const started = startTestServer(root, { stateStore: store, listenPort: port, portFallback: 0, token });
    servers.push(started);
    while (!(await healthy(port))) await new Promise((r) => setTimeout(r, 5));
    const client = await connectClient(`http://127.0.0.1:${port}/mcp`, token);
    try {
      const pending = call(client, "search", { query: "voke", limit: 50 });
      // Let the files go once the call is on its way (before or after it arrives: the answer is the same).
      setTimeout(() => store.release(), 100);
      const r = await pending;
      expect(textOf(r)).not.toMatch(/No notes match|YET/);
      expect((r.structuredContent as { total_files: number }).total_files).toBe(NOTES / 2);
      await started;
      const later = await call(client, "search", { query: "voke", limit: 50 });
      expect(r.structuredContent).toEqual(later.structuredContent);
    } finally {
      store.release();
      await client.close();
    }
  }, 30_000);

  test("semantic search and get_similar while the saved embeddings load: they wait, then say so, never an empty final answer", async () => {
    const embedder = new HashingEmbedder(64);
    const store = new GatedStore(await savedIndex(embedder), "embeddings");
    const token = "loading-test-token-semantic-01";
    const port = await freePort();
    const started = startTestServer(root, { stateStore: store, listenPort: port, portFallback: 0, toolTimeoutMs: 2000, token, embedder });
    servers.push(started);
    while (!(await healthy(port))) await new Promise((r) => setTimeout(r, 5));
    const client = await connectClient(`http://127.0.0.1:${port}/mcp`, token);
    try {
      const r = await call(client, "search", { query: "voke", mode: "semantic" });
      expect(r.isError).toBeFalsy();
      const text = textOf(r);
      expect(text).not.toMatch(/No notes match/);
      expect(text).toMatch(/YET/);
      expect(text).toMatch(/saved embeddings are still loading/);
      const similar = await call(client, "get_similar", { path: "Notes/N0.md" });
      expect(similar.isError).toBe(true);
      expect(textOf(similar)).toMatch(/still loading/);

      store.release();
      await started;
      const after = await call(client, "search", { query: "voke", mode: "semantic" });
      expect((after.structuredContent as { hits: unknown[] }).hits.length).toBeGreaterThan(0);
      expect(textOf(after)).not.toMatch(/still loading/);
    } finally {
      store.release();
      await client.close();
    }
  }, 30_000);
});
