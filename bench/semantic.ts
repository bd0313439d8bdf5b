/**
 * The bench's semantic section: the vector index built with the deterministic embedder at the
 * dimension of the small models (384), then semantic, hybrid and similar-note queries in-process,
 * side by side with a plain float32 scan over the same vectors and with Orama's vector search.
 * Query embedding is timed apart (a real model's cost is the provider's).
 */
import { create, insertMultiple, search as oramaSearch, type AnyOrama } from "@orama/orama";
import { hybridSearch, semanticSearch } from "../src/core/search/hybrid";
import type { SearchService } from "../src/core/search";
import { HashingEmbedder } from "../src/core/search/vector/hashing-embedder";
import { similarNotes } from "../src/core/search/vector/related";
import { embedText, SemanticService } from "../src/core/search/vector/semantic-service";
import { chunkNote } from "../src/core/search/chunk";
import type { AccessPolicy } from "../src/core/policy";
import { MemoryStateStore } from "../src/core/state";
import type { VaultPort } from "../src/core/vault";

export interface SemanticBenchResult {
  dimension: number;
  chunks: number;
  buildMs: number;
  /** Longest event-loop block while embedding (the deterministic embedder runs on the main thread, as no real model does). */
  buildMaxBlockMs: number;
  embedQueryP50Ms: number;
  semanticP50Ms: number;
  semanticP99Ms: number;
  hybridP50Ms: number;
  hybridP99Ms: number;
  /** The same nearest-chunk scan over float32 copies of the vectors (no quantization). */
  float32ScanP50Ms: number;
  /** Our int8 scan alone (what semanticP50 spends in the index). */
  int8ScanP50Ms: number;
  similarP50Ms: number;
  /** Recall@10 of the int8 scan against float32 (same vectors). */
  int8RecallAt10: number;
  vectorMemoryBytes: number;
  fileBytes: number;
  orama: { insertMs: number; searchP50Ms: number } | null;
}

const p = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))];
};

export async function benchSemantic(port: VaultPort, policy: AccessPolicy, keyword: SearchService, queries: string[], log: (s: string) => void): Promise<SemanticBenchResult> {
  const dim = 384;
  const embedder = new HashingEmbedder(dim, { batchSize: 16 });
  const store = new MemoryStateStore();
  const semantic = new SemanticService({ port, policy, store, embedder, options: { persistEveryMs: 60_000 } });
  const { monitorEventLoopDelay } = await import("node:perf_hooks");
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  let t = performance.now();
  await semantic.start();
  await semantic.waitForIdle(30 * 60_000);
  const buildMs = performance.now() - t;
  h.disable();
  await semantic.close(); // saves every segment
  const fileBytes = [...store.files.entries()].filter(([k]) => k.startsWith("embeddings-")).reduce((s, [, v]) => s + v.byteLength, 0);
  const again = new SemanticService({ port, policy, store, embedder });
  await again.start();
  await again.waitForIdle(60_000);
  const st = again.status();

  const qs = queries.slice(0, 200);
  const vectors: Float32Array[] = [];
  const embedTimes: number[] = [];
  for (const q of qs) {
    t = performance.now();
    vectors.push(embedder.embedOne(q));
    embedTimes.push(performance.now() - t);
  }
  const req = (query: string) => ({ query, limit: 10, chunksPerFile: 1, snippetWords: 18 });
  // Warm-up, as the keyword measurement does.
  for (let i = 0; i < 20; i++) await semanticSearch(again, port, req(qs[i % qs.length]), vectors[i % qs.length], "en");
  const sem: number[] = [];
  const hyb: number[] = [];
  const scan8: number[] = [];
  for (const [i, q] of qs.entries()) {
    t = performance.now();
    await semanticSearch(again, port, req(q), vectors[i], "en");
    sem.push(performance.now() - t);
    t = performance.now();
    await hybridSearch(keyword, again, port, req(q), vectors[i], "en");
    hyb.push(performance.now() - t);
    t = performance.now();
    again.nearest(vectors[i], 100);
    scan8.push(performance.now() - t);
  }

  // The float32 reference: the same sections embedded again, kept as float32 (no quantization).
  const slots: { path: string; ord: number }[] = [];
  const flat: Float32Array[] = [];
  const paths = port.listFiles().map((f) => f.path);
  for (const path of paths) {
    if (!path.endsWith(".md") || policy.isHidden(path) || !again.chunksOf(path)) continue;
    const text = await port.read(path);
    const title = path.slice(path.lastIndexOf("/") + 1, -3);
    chunkNote(path, text, port.getMetadata(path), { maxWords: 300 }).forEach((c, ord) => {
      slots.push({ path, ord });
      flat.push(embedder.embedOne(embedText(title, c.headingPath, c.text, 2000)));
    });
  }
  const f32 = new Float32Array(flat.length * dim);
  flat.forEach((v, i) => f32.set(v, i * dim));
  // A plain exact scan over float32, the same top-k (a min-heap of k).
  const scanF32 = (q: Float32Array, k: number): number[] => {
    const hs = new Float64Array(k);
    const hi = new Int32Array(k);
    let n = 0;
    for (let i = 0; i < slots.length; i++) {
      let dot = 0;
      const base = i * dim;
      for (let j = 0; j < dim; j += 4) dot += f32[base + j] * q[j] + f32[base + j + 1] * q[j + 1] + f32[base + j + 2] * q[j + 2] + f32[base + j + 3] * q[j + 3];
      if (n < k) {
        hs[n] = dot;
        hi[n++] = i;
        for (let c = n - 1; c > 0; ) {
          const p2 = (c - 1) >> 1;
          if (hs[p2] <= hs[c]) break;
          [hs[p2], hs[c]] = [hs[c], hs[p2]];
          [hi[p2], hi[c]] = [hi[c], hi[p2]];
          c = p2;
        }
      } else if (dot > hs[0]) {
        hs[0] = dot;
        hi[0] = i;
        for (let c = 0; ; ) {
          const l = 2 * c + 1;
          let m = c;
          if (l < n && hs[l] < hs[m]) m = l;
          if (l + 1 < n && hs[l + 1] < hs[m]) m = l + 1;
          if (m === c) break;
          [hs[m], hs[c]] = [hs[c], hs[m]];
          [hi[m], hi[c]] = [hi[c], hi[m]];
          c = m;
        }
      }
    }
    return Array.from(hi.subarray(0, n)).sort((a, b) => {
      const da = f32.subarray(a * dim, (a + 1) * dim).reduce((t, x, j) => t + x * q[j], 0);
      const db = f32.subarray(b * dim, (b + 1) * dim).reduce((t, x, j) => t + x * q[j], 0);
      return db - da;
    });
  };
  const f32t: number[] = [];
  let recall = 0;
  for (const v of vectors) {
    t = performance.now();
    const exact = scanF32(v, 100);
    f32t.push(performance.now() - t);
    const top = new Set(exact.slice(0, 10).map((i) => `${slots[i].path}#${slots[i].ord}`));
    const got = again.nearest(v, 10).map((c) => `${c.doc.path}#${c.ordinal}`);
    recall += got.filter((x) => top.has(x)).length / 10;
  }

  // get_similar for notes spread over the vault.
  const notes = paths.filter((x) => x.endsWith(".md"));
  const sim: number[] = [];
  for (let i = 0; i < 100; i++) {
    const path = notes[(i * 97) % notes.length];
    t = performance.now();
    await similarNotes(again, port, path, 10, { language: "en", sectionsPerNote: 1, snippetWords: 18 });
    sim.push(performance.now() - t);
  }

  // Orama 3's vector search on the same vectors.
  let orama: SemanticBenchResult["orama"] = null;
  try {
    t = performance.now();
    const db: AnyOrama = create({ schema: { path: "string", embedding: `vector[${dim}]` } as const });
    const docs = slots.map((s, i) => ({ path: `${s.path}#${s.ord}`, embedding: Array.from(flat[i]) }));
    await insertMultiple(db, docs, 1000);
    const insertMs = performance.now() - t;
    const ot: number[] = [];
    for (const v of vectors) {
      t = performance.now();
      await oramaSearch(db, { mode: "vector", vector: { value: Array.from(v), property: "embedding" }, similarity: 0, limit: 100 } as never);
      ot.push(performance.now() - t);
    }
    orama = { insertMs, searchP50Ms: p(ot, 0.5) };
  } catch (e) {
    log(`  Orama vector search not measured: ${e instanceof Error ? e.message : String(e)}`);
  }
  await again.close();

  const r: SemanticBenchResult = {
    dimension: dim,
    chunks: st.chunks_embedded,
    buildMs,
    buildMaxBlockMs: h.max / 1e6,
    embedQueryP50Ms: p(embedTimes, 0.5),
    semanticP50Ms: p(sem, 0.5),
    semanticP99Ms: p(sem, 0.99),
    hybridP50Ms: p(hyb, 0.5),
    hybridP99Ms: p(hyb, 0.99),
    float32ScanP50Ms: p(f32t, 0.5),
    int8ScanP50Ms: p(scan8, 0.5),
    similarP50Ms: p(sim, 0.5),
    int8RecallAt10: recall / vectors.length,
    vectorMemoryBytes: st.chunks_embedded * (dim + 4 + 8),
    fileBytes,
    orama,
  };
  log(
    `  semantic (${r.chunks} sections x ${dim}, deterministic embedder): embedded in ${(buildMs / 1000).toFixed(1)} s (longest block ${r.buildMaxBlockMs.toFixed(1)} ms); ` +
      `query embedding p50 ${r.embedQueryP50Ms.toFixed(2)} ms apart; semantic p50 ${r.semanticP50Ms.toFixed(2)} / p99 ${r.semanticP99Ms.toFixed(2)} ms, hybrid p50 ${r.hybridP50Ms.toFixed(2)} / p99 ${r.hybridP99Ms.toFixed(2)} ms, ` +
      `get_similar p50 ${r.similarP50Ms.toFixed(2)} ms; scan alone: int8 ${r.int8ScanP50Ms.toFixed(2)} ms vs float32 ${r.float32ScanP50Ms.toFixed(2)} ms (recall@10 ${r.int8RecallAt10.toFixed(3)})` +
      (orama ? `, Orama ${orama.searchP50Ms.toFixed(2)} ms (insert ${(orama.insertMs / 1000).toFixed(1)} s)` : "") +
      `; vectors ${(r.vectorMemoryBytes / 1048576).toFixed(1)} MB in memory, ${(fileBytes / 1048576).toFixed(1)} MB on disk`,
  );
  return r;
}
