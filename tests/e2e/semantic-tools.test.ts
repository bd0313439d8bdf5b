/**
 * Semantic search over MCP: a real SDK client over HTTP against the headless server with an embedding
 * provider (the deterministic one, so answers can be asserted; the real transformers.js path and
 * the HTTP providers have their own suites).
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { EmbedderError, type Embedder, type EmbedKind } from "../../src/core/search/vector/embedder";
import { HashingEmbedder } from "../../src/core/search/vector/hashing-embedder";
import { call, eventually, fails, makeTempVault, ok, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

const files = {
  "Deploy.md": "# Deploy\n\nThe deploy pipeline broke again: the release script timed out on the staging servers.\n\nSee the release notes.\n",
  "Release notes.md": "---\ntags: [work]\n---\n# Release notes\n\nRelease 2.1 fixes the release script on the staging servers.\n",
  // Long enough (over 300 words) to be cut into two sections.
  "Garden.md": `# Garden\n\nTomatoes and basil in the raised beds. ${"Beds and soil. ".repeat(80)}\n\n## Watering\n\nWater the seedlings every morning. ${"Rain barrels. ".repeat(80)}\n`,
  "Cooking.md": "# Cooking\n\nA basil pesto with garlic and pine nuts. [[Garden]]\n",
  "Private/Secret.md": "# Secret\n\nThe release script and the staging servers.\n",
};

/** The hashing embedder, but its queries fail while `down` (a provider that went away). */
class SwitchableEmbedder implements Embedder {
  down = false;
  private readonly inner = new HashingEmbedder(64);
  readonly provider = "hashing";
  readonly model = this.inner.model;
  readonly batchSize = 16;
  dimension() {
    return 64;
  }
  embed(texts: string[], kind: EmbedKind) {
    if (this.down) return Promise.reject(new EmbedderError("no answer from Ollama at http://localhost:11434 (connection refused)", true));
    return this.inner.embed(texts, kind);
  }
}

describe("semantic search over MCP", () => {
  let root: string;
  let server: TestServer;
  let client: Client;
  const embedder = new SwitchableEmbedder();

  beforeAll(async () => {
    root = makeTempVault(files);
    server = await startTestServer(root, { embedder, hidden: ["Private"] });
    client = await server.connect();
    await eventually(async () => {
      const s = await ok(client, "embeddings_status");
      if (s.state !== "ready" || s.chunks_embedded !== s.chunks_total) throw new Error(`not ready: ${JSON.stringify(s)}`);
      return s;
    });
  });

  afterAll(async () => {
    await server.close();
    removeTree(root);
  });

  test("tools/list offers the semantic tools, and embeddings_status reports the model", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["get_similar", "suggest_links", "embeddings_status", "build_embeddings"]));
    const st = await ok(client, "embeddings_status");
    expect(st).toMatchObject({ provider: "hashing", model: "hashing-64", dimension: 64, state: "ready", chunks_embedded: 5, chunks_total: 5, last_error: null });
  });

  test("search mode semantic and hybrid: one entry per note, saying which engine found it", async () => {
    const sem = await ok(client, "search", { query: "pesto with basil", mode: "semantic", limit: 3 });
    expect(sem.mode).toBe("semantic");
    expect(sem.hits[0].path).toBe("Cooking.md");
    expect(sem.hits[0].found_by).toEqual(["semantic"]);
    expect(sem.hits.map((h: { path: string }) => h.path)).not.toContain("Private/Secret.md");
    const hyb = await call(client, "search", { query: "release script", mode: "hybrid", limit: 5 });
    const s = hyb.structuredContent as { hits: { path: string; found_by: string[] }[]; mode: string };
    expect(s.mode).toBe("hybrid");
    expect(s.hits.slice(0, 2).map((h) => h.path).sort()).toEqual(["Deploy.md", "Release notes.md"]);
    expect(s.hits[0].found_by).toEqual(["keyword", "semantic"]);
    expect(new Set(s.hits.map((h) => h.path)).size).toBe(s.hits.length);
    expect(hyb._meta).toMatchObject({ embeddings: { state: "ready" } });
    expect(textOf(hyb)).toMatch(/fused/);
    // filters and folder work in every mode.
    const filtered = await ok(client, "search", { query: "release script", mode: "semantic", filters: { tags: "work" } });
    expect(filtered.hits.map((h: { path: string }) => h.path)).toEqual(["Release notes.md"]);
  });

  test("get_similar and suggest_links", async () => {
    const sim = await ok(client, "get_similar", { path: "Deploy.md", limit: 2 });
    expect(sim.similar[0].path).toBe("Release notes.md");
    expect(sim.similar.map((n: { path: string }) => n.path)).not.toContain("Deploy.md");
    expect(sim.similar[0].sections[0].content).toMatch(/release script/);
    const section = await ok(client, "get_similar", { path: "Garden.md", heading: "Garden > Watering", limit: 1 });
    expect(section.similar).toHaveLength(1);
    expect(await fails(client, "get_similar", { path: "Garden.md", heading: "Nope" })).toMatch(/no section "Nope".*"Garden > Watering"/);
    const links = await ok(client, "suggest_links", { path: "Deploy.md", limit: 3 });
    const rn = links.suggestions.find((l: { path: string }) => l.path === "Release notes.md");
    expect(rn).toMatchObject({ mention: "release notes", line: 5, sentence: "See the release notes." });
    // Cooking links to Garden: Garden's suggestions leave Cooking out.
    const g = await ok(client, "suggest_links", { path: "Garden.md" });
    expect(g.suggestions.map((l: { path: string }) => l.path)).not.toContain("Cooking.md");
    expect(await fails(client, "get_similar", { path: "Private/Secret.md" })).toMatch(/No note or file/);
    // get_context gains the closest notes.
    const ctx = await ok(client, "get_context", { path: "Deploy.md", similar_limit: 2 });
    expect(ctx.similar[0].path).toBe("Release notes.md");
    expect(ctx.similar).toHaveLength(2);
  });

  test("stats and config://vault say semantic search is available", async () => {
    const stats = await ok(client, "stats");
    expect(stats.capabilities).toMatchObject({ semantic_search_available: true, search_modes: ["keyword", "semantic", "hybrid"] });
    const res = await client.readResource({ uri: "config://vault" });
    expect(JSON.parse((res.contents[0] as { text: string }).text)).toMatchObject({ semantic_search_available: true });
  });

  test("a provider that is down: semantic answers from keyword and says so; build_embeddings queues", async () => {
    embedder.down = true;
    try {
      const r = await call(client, "search", { query: "release script", mode: "semantic" });
      expect(r.isError).toBeFalsy();
      expect((r.structuredContent as { mode: string }).mode).toBe("keyword");
      expect(r._meta).toMatchObject({ embeddings: { error: expect.stringMatching(/connection refused/) } });
      expect(textOf(r)).toMatch(/could not embed the query/);
    } finally {
      embedder.down = false;
    }
    const b = await ok(client, "build_embeddings", {});
    expect(b.queued).toBe(true);
  });

  test("without a provider, the semantic tools are not listed and the modes say how to turn it on", async () => {
    const plainRoot = makeTempVault({ "a.md": "alpha\n" });
    const plain = await startTestServer(plainRoot);
    try {
      const c = await plain.connect();
      const names = (await c.listTools()).tools.map((t) => t.name);
      expect(names).not.toContain("get_similar");
      expect((await ok(c, "stats")).capabilities.semantic_search_available).toBe(false);
      expect((await ok(c, "get_context", { path: "a.md" })).similar).toBeUndefined();
      expect(await fails(c, "search", { query: "alpha", mode: "hybrid" })).toMatch(/semantic search, which is off.*--embeddings/);
    } finally {
      await plain.close();
      removeTree(plainRoot);
    }
  });
});
