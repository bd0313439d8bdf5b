import { describe, expect, test } from "@jest/globals";
import { MemoryVault } from "../../src/core/memory-vault";
import { mulberry32 } from "../../src/core/random";
import { AccessPolicy } from "../../src/core/policy";
import { MemoryStateStore } from "../../src/core/state";
import { EmbedderError, type Embedder, type EmbedKind } from "../../src/core/search/vector/embedder";
import { HashingEmbedder } from "../../src/core/search/vector/hashing-embedder";
import { SemanticService } from "../../src/core/search/vector/semantic-service";
import { BINARY_FROM, VectorIndex } from "../../src/core/search/vector/vector-index";
import { hybridSearch, semanticSearch, NOTE_RRF_K, SEMANTIC_WEIGHT } from "../../src/core/search/hybrid";
import { similarNotes, suggestLinks } from "../../src/core/search/vector/related";
import { startedSearch } from "../support/search-service";
import "../support/host-timers";

const NOTES: Record<string, string> = {
  "Deploy.md": "# Deploy\n\nThe deploy pipeline broke again: the release script timed out on the staging servers.\n",
  "Garden.md": "# Garden\n\nTomatoes and basil in the raised beds; water the seedlings every morning.\n",
  "Cooking.md": "# Cooking\n\nA basil pesto with garlic, pine nuts and olive oil.\n",
  "Work/Release notes.md": "---\ntags: [work]\n---\n# Release notes\n\nRelease 2.1: the staging servers and the release script.\n",
  "Private/Secret.md": "# Secret\n\nThe deploy pipeline and the release script.\n",
};

function vaultOf(files: Record<string, string> = NOTES): MemoryVault {
  return new MemoryVault(files);
}

function makeService(vault: MemoryVault, embedder: Embedder, store = new MemoryStateStore(), logs: string[] = []) {
  return new SemanticService({
    port: vault,
    policy: new AccessPolicy({ configDir: ".obsidian", hiddenFolders: ["Private"] }),
    store,
    embedder,
    log: (l, m) => logs.push(`${l}: ${m}`),
    options: { debounceMs: 5, persistEveryMs: 0, retryAfterMs: 20 },
  });
}

async function started(vault: MemoryVault, embedder: Embedder = new HashingEmbedder(64), store = new MemoryStateStore()) {
  const logs: string[] = [];
  const svc = makeService(vault, embedder, store, logs);
  await svc.start();
  expect(await svc.waitForIdle(10_000)).toBe(true);
  return { svc, store, logs, embedder };
}

async function nearestPaths(svc: SemanticService, embedder: Embedder, query: string, k = 3): Promise<string[]> {
  const [v] = await embedder.embed([query], "query");
  return [...new Set(svc.nearest(v, k * 4).map((c) => c.doc.path))].slice(0, k);
}

/** `n` random unit vectors of `dim` numbers (seeded), each the one section of note `n<i>.md` in an index. */
function randomIndex(n: number, dim: number, seed: number): { ix: VectorIndex; vecs: Float32Array[] } {
  const rnd = mulberry32(seed);
  const ix = new VectorIndex(dim);
  const vecs: Float32Array[] = [];
  for (let i = 0; i < n; i++) {
    const v = new Float32Array(dim).map(() => rnd() * 2 - 1);
    const norm = Math.hypot(...v);
    for (let j = 0; j < dim; j++) v[j] /= norm;
    vecs.push(v);
    ix.setDoc(`n${i}.md`, 1, 1, [{ hash: `h${i}`, heading: "", lineStart: 1, lineEnd: 1 }], [], {});
    ix.setVector(`n${i}.md`, 0, `h${i}`, v);
  }
  return { ix, vecs };
}

/** Over 20 queries (vector `pick(q)` each): the share of the exact float32 top 10 the index returns in its top 10. */
function recallAt10(ix: VectorIndex, vecs: Float32Array[], pick: (q: number) => number, each?: (query: number, got: string[]) => void): number {
  let agree = 0;
  for (let q = 0; q < 20; q++) {
    const query = vecs[pick(q)];
    const exact = vecs.map((v, i) => ({ i, s: v.reduce((a, x, j) => a + x * query[j], 0) })).sort((a, b) => b.s - a.s).slice(0, 10).map((x) => `n${x.i}.md`);
    const got = ix.search(query, 10).map((c) => c.doc.path);
    each?.(pick(q), got);
    agree += got.filter((p) => exact.includes(p)).length;
  }
  return agree / 200;
}

describe("vector index", () => {
  const unit = (dim: number, i: number) => {
    const v = new Float32Array(dim);
    v[i] = 1;
    return v;
  };

  test("finds the nearest chunks, best first, and reuses a vector by its key", () => {
    const ix = new VectorIndex(4);
    const todo = ix.setDoc("a.md", 1, 1, [{ hash: "h1", heading: "", lineStart: 1, lineEnd: 2 }, { hash: "h2", heading: "B", lineStart: 3, lineEnd: 4 }], [], {});
    expect(todo).toEqual([0, 1]);
    ix.setVector("a.md", 0, "h1", unit(4, 0));
    ix.setVector("a.md", 1, "h2", unit(4, 1));
    // Another note with a chunk of the same content: no embedding needed.
    expect(ix.setDoc("b.md", 1, 1, [{ hash: "h2", heading: "", lineStart: 1, lineEnd: 1 }], [], {})).toEqual([]);
    const r = ix.search(unit(4, 1), 3);
    expect(r.map((c) => [c.doc.path, c.ordinal])).toEqual([
      ["a.md", 1],
      ["b.md", 0],
      ["a.md", 0],
    ]);
    expect(r[0].score).toBeCloseTo(1, 2);
    expect(r[2].score).toBeCloseTo(0, 5);
    expect(ix.search(unit(4, 1), 3, { excludePath: "a.md" }).map((c) => c.doc.path)).toEqual(["b.md"]);
    expect(ix.removeDoc("a.md")).toBe(true);
    expect(ix.embedded).toBe(1);
    expect(ix.search(unit(4, 0), 5).map((c) => c.doc.path)).toEqual(["b.md"]);
  });

  test("int8 vectors keep the ranking of float32 cosine on random data", () => {
    const { ix, vecs } = randomIndex(300, 64, 7);
    // Recall@10 of int8 against float32.
    expect(recallAt10(ix, vecs, (q) => q * 7)).toBeGreaterThanOrEqual(0.95);
  });

  test("past BINARY_FROM vectors, the sign-bit prefilter and exact rerank keep the top results", () => {
    const { ix, vecs } = randomIndex(BINARY_FROM + 500, 64, 11);
    const recall = recallAt10(ix, vecs, (q) => q * 311, (query, got) => expect(got[0]).toBe(`n${query}.md`));
    expect(recall).toBeGreaterThanOrEqual(0.9);
    // A filter narrows the prefilter too.
    expect(ix.search(vecs[5], 3, { excludePath: "n5.md" }).map((c) => c.doc.path)).not.toContain("n5.md");
  });
});

describe("semantic service", () => {
  test("embeds every visible note's chunks and finds the closest in meaning", async () => {
    const { svc, embedder } = await started(vaultOf());
    const st = svc.status();
    expect(st.state).toBe("ready");
    expect(st.chunks_total).toBe(4); // Private/ is hidden
    expect(st.chunks_embedded).toBe(4);
    expect((await nearestPaths(svc, embedder, "pesto basil"))[0]).toBe("Cooking.md");
    expect(await nearestPaths(svc, embedder, "deploy pipeline release", 4)).not.toContain("Private/Secret.md");
    await svc.close();
  });

  test("an edit embeds only the changed chunk; a rename or delete follows", async () => {
    const vault = vaultOf();
    const embedder = new HashingEmbedder(64);
    const { svc } = await started(vault, embedder);
    const before = embedder.embedded;
    await vault.process("Garden.md", (t) => t + "\n## Pests\n\nAphids on the roses.\n");
    await svc.waitForIdle(5000);
    expect(embedder.embedded - before).toBe(1);
    await vault.rename("Garden.md", "Outside/Garden.md");
    await svc.waitForIdle(5000);
    // Renamed with the same content: its vectors are reused.
    expect(embedder.embedded - before).toBe(1);
    expect((await nearestPaths(svc, embedder, "aphids roses"))[0]).toBe("Outside/Garden.md");
    await vault.trash("Cooking.md");
    await svc.waitForIdle(5000);
    expect(await nearestPaths(svc, embedder, "pesto basil", 5)).not.toContain("Cooking.md");
    await svc.close();
  });

  test("saved vectors load without embedding again; another model embeds again, once", async () => {
    const vault = vaultOf();
    const store = new MemoryStateStore();
    const first = await started(vault, new HashingEmbedder(64), store);
    await first.svc.close();
    expect([...store.files.keys()].some((k) => k.startsWith("embeddings-"))).toBe(true);

    const again = new HashingEmbedder(64);
    const second = await started(vault, again, store);
    expect(again.embedded).toBe(0);
    expect(second.svc.status().chunks_embedded).toBe(4);
    expect((await nearestPaths(second.svc, again, "tomatoes seedlings"))[0]).toBe("Garden.md");
    await second.svc.close();

    const other = new HashingEmbedder(32, { model: "other" });
    const third = await started(vault, other, store);
    expect(other.embedded).toBe(4);
    await third.svc.close();
  });

  test("resumes after a stop halfway: only what was not saved is embedded", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 40; i++) files[`n${i}.md`] = `# Note ${i}\n\nword${i} shared text ${i}\n`;
    const vault = vaultOf(files);
    const store = new MemoryStateStore();
    const slow = new GatedEmbedder(new HashingEmbedder(32, { batchSize: 4 }));
    const svc = makeService(vault, slow, store);
    await svc.start();
    await slow.waitForCalls(3);
    await svc.close();
    const done = svc.status().chunks_embedded;
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(40);
    const fresh = new HashingEmbedder(32, { batchSize: 4 });
    const again = await started(vault, fresh, store);
    expect(again.svc.status().chunks_embedded).toBe(40);
    expect(fresh.embedded).toBe(40 - done);
    await again.svc.close();
  });

  test("a provider that fails is retried later, and the index catches up when it answers", async () => {
    const flaky = new FlakyEmbedder(new HashingEmbedder(32), 3);
    const logs: string[] = [];
    const svc = makeService(vaultOf(), flaky, new MemoryStateStore(), logs);
    await svc.start();
    await eventually(() => svc.status().state === "unavailable");
    expect(svc.status().last_error).toMatch(/connection refused/);
    expect(await svc.waitForIdle(10_000)).toBe(true);
    expect(svc.status()).toMatchObject({ state: "ready", chunks_embedded: 4 });
    expect(logs.join("\n")).toMatch(/trying again/);
    await svc.close();
  });

  test("bad vectors (NaN, a wrong length) are refused with the reason, and not stored", async () => {
    const bad = new BadEmbedder(new HashingEmbedder(16));
    const svc = makeService(vaultOf({ "a.md": "# A\n\nalpha\n", "b.md": "# B\n\nbravo\n" }), bad);
    await svc.start();
    expect(await svc.waitForIdle(10_000)).toBe(true);
    const st = svc.status();
    expect(st.chunks_embedded).toBe(0);
    // One story: "ready" (nothing left to do) never comes with a last_error; the refusal has its own fields.
    expect(st).toMatchObject({ state: "ready", last_error: null, chunks_refused: 2 });
    expect(st.refused_reason).toMatch(/not a finite number/);
    await svc.close();
  });
});

test("a provider whose dimension is not known yet and whose every answer is refused settles (nothing to save)", async () => {
  class Unknown extends BadEmbedder {
    override dimension(): number | null {
      return null;
    }
  }
  const svc = makeService(vaultOf({ "a.md": "# A\n\nalpha\n" }), new Unknown(new HashingEmbedder(16)));
  await svc.start();
  expect(await svc.waitForIdle(3000)).toBe(true);
  expect(svc.status()).toMatchObject({ chunks_embedded: 0, dimension: null });
  await svc.close();
});

describe("hybrid search and related notes", () => {
  test("fuses keyword and semantic rankings by reciprocal rank, one entry per note", async () => {
    const vault = vaultOf();
    const { svc: keyword } = await startedSearch(vault);
    const embedder = new HashingEmbedder(64);
    const { svc } = await started(vault, embedder);
    const req = { query: "release script", limit: 10, chunksPerFile: 2, snippetWords: 12 };
    const [v] = await embedder.embed(["release script"], "query");
    const res = await hybridSearch(keyword, svc, vault, req, v, "en");
    const paths = res.hits.map((h) => h.path);
    expect(new Set(paths).size).toBe(paths.length);
    expect(paths.slice(0, 2).sort()).toEqual(["Deploy.md", "Work/Release notes.md"]);
    const top = res.hits[0];
    expect(top.found_by).toEqual(["keyword", "semantic"]);
    // Found by both at the top of each list: 1/(k+1), plus the semantic weight's share of it, at most.
    expect(top.score).toBeLessThanOrEqual((1 + SEMANTIC_WEIGHT) / (NOTE_RRF_K + 1) + 1e-9);
    expect(top.sections[0].content).toMatch(/release script/);
    // Filters work in every mode.
    const filtered = await hybridSearch(keyword, svc, vault, { ...req, filters: { tags: "work" } }, v, "en");
    expect(filtered.hits.map((h) => h.path)).toEqual(["Work/Release notes.md"]);
    const sem = await semanticSearch(svc, vault, { ...req, folder: "Work" }, v, "en");
    expect(sem.hits.map((h) => h.path)).toEqual(["Work/Release notes.md"]);
    expect(sem.hits[0].found_by).toEqual(["semantic"]);
    await keyword.close();
    await svc.close();
  });

  test("similar notes leave the note out; link suggestions skip linked notes and quote the mention", async () => {
    const vault = vaultOf({
      "Deploy.md": "# Deploy\n\nThe deploy pipeline uses the release script.\n\nSee the release notes when the staging servers fail.\n",
      "Release notes.md": "# Release notes\n\nThe release script and the staging servers.\n",
      "Pipeline.md": "# Pipeline\n\nThe deploy pipeline and its release script, step by step.\n\n[[Deploy]]\n",
      "Garden.md": "# Garden\n\nTomatoes.\n",
    });
    const { svc } = await started(vault, new HashingEmbedder(64));
    const similar = await similarNotes(svc, vault, "Deploy.md", 3, { language: "en" });
    expect(similar!.map((s) => s.path)).not.toContain("Deploy.md");
    expect(similar!.map((s) => s.path).slice(0, 2).sort()).toEqual(["Pipeline.md", "Release notes.md"]);
    const links = await suggestLinks(svc, vault, "Deploy.md", 3, "en", () => true);
    // Pipeline links to Deploy already: not suggested.
    expect(links!.map((l) => l.path)).not.toContain("Pipeline.md");
    const rn = links!.find((l) => l.path === "Release notes.md")!;
    expect(rn).toMatchObject({ mention: "release notes", line: 5 });
    expect(rn.sentence).toBe("See the release notes when the staging servers fail.");
    expect(await similarNotes(svc, vault, "Missing.md", 3, { language: "en" })).toBeNull();
    await svc.close();
  });
});

/** Passes calls through once released; counts calls. */
class GatedEmbedder implements Embedder {
  calls = 0;
  private waiters: (() => void)[] = [];
  constructor(private readonly inner: HashingEmbedder) {}
  get provider() {
    return this.inner.provider;
  }
  get model() {
    return this.inner.model;
  }
  get batchSize() {
    return this.inner.batchSize;
  }
  dimension(): number | null {
    return this.inner.dimension();
  }
  async embed(texts: string[], kind: EmbedKind) {
    this.calls++;
    for (const w of this.waiters.splice(0)) w();
    await new Promise((r) => setTimeout(r, 5));
    return this.inner.embed(texts, kind);
  }
  async waitForCalls(n: number) {
    while (this.calls < n) await new Promise<void>((r) => this.waiters.push(r));
  }
}

/** Fails `failures` times as a provider that is down, then works. */
class FlakyEmbedder extends GatedEmbedder {
  constructor(
    inner: HashingEmbedder,
    private failures: number,
  ) {
    super(inner);
  }
  override async embed(texts: string[], kind: EmbedKind) {
    if (kind === "passage" && this.failures > 0) {
      this.failures--;
      throw new EmbedderError("no answer from Ollama at http://localhost:11434 (connection refused)", true);
    }
    return super.embed(texts, kind);
  }
}

/** Answers with a NaN in every vector. */
class BadEmbedder extends GatedEmbedder {
  override async embed(): Promise<Float32Array[]> {
    throw new EmbedderError("ollama returned a vector with a value that is not a finite number.", false);
  }
}

async function eventually(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** An embedder whose model must be downloaded first: the download waits until `release()`, or fails held when cancelled. */
class DownloadingEmbedder implements Embedder {
  readonly provider = "builtin";
  readonly model = "test-model";
  readonly batchSize = 16;
  private readonly inner = new HashingEmbedder(16);
  private state: { file: string; files_done: number; files_total: number; bytes_done: number; bytes_total: number } | null = null;
  private watchers = new Set<() => void>();
  private waiting: { resolve: () => void; reject: (e: Error) => void } | null = null;
  done = false;
  dimension() {
    return this.done ? 16 : null;
  }
  download() {
    return this.state;
  }
  watch(cb: () => void) {
    this.watchers.add(cb);
    return () => this.watchers.delete(cb);
  }
  cancelDownload() {
    if (!this.waiting) return false;
    this.state = null;
    this.waiting.reject(new EmbedderError("The built-in model could not be downloaded: the download of onnx/model_quantized.onnx was cancelled at 1.0 MB; it resumes from there when asked.", true, true));
    this.waiting = null;
    return true;
  }
  release() {
    this.state = null;
    for (const w of this.watchers) w();
    this.done = true;
    this.waiting?.resolve();
    this.waiting = null;
  }
  async embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    if (!this.done) {
      this.state = { file: "onnx/model_quantized.onnx", files_done: 3, files_total: 4, bytes_done: 1_000_000, bytes_total: 135_000_000 };
      for (const w of this.watchers) w();
      await new Promise<void>((resolve, reject) => (this.waiting = { resolve, reject }));
    }
    return this.inner.embed(texts, kind);
  }
}

describe("the embeddings state machine", () => {
  test("downloading while the model's files come; a cancelled download is unavailable (why) and not retried until asked; asked, it resumes to ready", async () => {
    const e = new DownloadingEmbedder();
    const svc = makeService(vaultOf(), e, new MemoryStateStore(), []);
    const heard: string[] = [];
    svc.onProgress((s) => heard.push(s.state));
    await svc.start();
    await eventually(() => svc.status().state === "downloading");
    // The download began within the 250 ms that throttle progress after start's report: heard all the same.
    expect(heard).toContain("downloading");
    expect(svc.status()).toMatchObject({ state: "downloading", last_error: null, download: { file: "onnx/model_quantized.onnx", bytes_total: 135_000_000 } });
    expect(svc.cancelDownload()).toBe(true);
    await eventually(() => svc.status().state === "unavailable");
    expect(svc.status().last_error).toMatch(/cancelled/);
    expect(svc.status().download).toBeNull();
    // Held: no retry by itself, however long we wait.
    await new Promise((r) => setTimeout(r, 300));
    expect(svc.status().state).toBe("unavailable");
    svc.rebuild(false);
    await eventually(() => svc.status().state === "downloading");
    heard.length = 0;
    e.release();
    // Its end is heard at once too (the console's next line is not "downloading" for up to 10 s).
    expect(heard[0]).toBeDefined();
    expect(heard[0]).not.toBe("downloading");
    expect(await svc.waitForIdle(10_000)).toBe(true);
    expect(svc.status()).toMatchObject({ state: "ready", last_error: null, chunks_embedded: svc.status().chunks_total, counting: false });
    await svc.close();
  });
});
