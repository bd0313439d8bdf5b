/**
 * Semantic and hybrid search on Obsidian's English help vault: MRR@10 of keyword, semantic and hybrid
 * answers, for the keyword-style cases and for 30 paraphrases that share no content word with their
 * note. The embedder the tests can run here is the deterministic one (no model can be downloaded on
 * these machines): it knows words, not meanings, so the paraphrases measure what a real model must
 * add. Held: each engine adds to the other in hybrid. Skips when the vault is absent.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { AccessPolicy } from "../../src/core/policy";
import { createSearchService, type SearchService } from "../../src/core/search";
import { hybridSearch, semanticSearch } from "../../src/core/search/hybrid";
import { STOP_WORDS } from "../../src/core/search/query";
import { forEachToken } from "../../src/core/search/tokenize";
import { HashingEmbedder } from "../../src/core/search/vector/hashing-embedder";
import { SemanticService } from "../../src/core/search/vector/semantic-service";
import { MemoryStateStore } from "../../src/core/state";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { EN_CASES, PARAPHRASES } from "../support/help-en-queries";

const root = path.resolve(__dirname, "../../../shared/vaults/help-en");
const present = existsSync(root);

type Mode = "keyword" | "semantic" | "hybrid";

function terms(text: string): Set<string> {
  const out = new Set<string>();
  // Short slices: never a whole note at once (see tokenize.ts).
  for (let i = 0; i < text.length; i += 256) forEachToken(text.slice(i, i + 256), "en", (t) => out.add(t));
  return out;
}

(present ? describe : describe.skip)("semantic relevance on help-en", () => {
  let vault: FsVault;
  let keyword: SearchService;
  let semantic: SemanticService;
  const embedder = new HashingEmbedder(384);

  beforeAll(async () => {
    vault = await FsVault.open(root, { watch: false });
    const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
    keyword = createSearchService({ port: vault, policy, store: new MemoryStateStore(), sqlWasm });
    semantic = new SemanticService({ port: vault, policy, store: new MemoryStateStore(), embedder });
    await keyword.start();
    await semantic.start();
    await keyword.waitForIdle(120_000);
    await semantic.waitForIdle(120_000);
  }, 180_000);

  afterAll(async () => {
    await keyword?.close();
    await semantic?.close();
    await vault?.close();
  });

  async function ranks(queries: { q: string; expect: string[] }[], mode: Mode): Promise<(number | null)[]> {
    const out: (number | null)[] = [];
    for (const c of queries) {
      const req = { query: c.q, limit: 10, chunksPerFile: 1, snippetWords: 10 };
      let paths: string[];
      if (mode === "keyword") paths = (await keyword.search(req)).hits.map((h) => h.path);
      else {
        const v = await semantic.embedQuery(c.q);
        const res = mode === "semantic" ? await semanticSearch(semantic, vault, req, v, "en") : await hybridSearch(keyword, semantic, vault, req, v, "en");
        paths = res.hits.map((h) => h.path);
      }
      const i = paths.findIndex((p) => c.expect.includes(p));
      out.push(i < 0 ? null : i + 1);
    }
    return out;
  }

  const mrr = (r: (number | null)[]) => r.reduce<number>((s, x) => s + (x ? 1 / x : 0), 0) / r.length;

  test("the paraphrases share no content word with the note they must find", () => {
    expect(PARAPHRASES).toHaveLength(30);
    for (const p of PARAPHRASES) {
      const noteTerms = terms(p.expect);
      const text = vault.stat(p.expect) ? readFileSync(path.join(root, p.expect), "utf8") : "";
      for (const t of terms(text)) noteTerms.add(t);
      const shared = [...terms(p.q)].filter((t) => !STOP_WORDS.has(t) && noteTerms.has(t));
      expect([p.q, vault.stat(p.expect) !== null, shared]).toEqual([p.q, true, []]);
    }
  });

  test("MRR@10 of keyword, semantic and hybrid; each engine adds to the other in hybrid", async () => {
    const sets = {
      "keyword-style cases": EN_CASES.map((c) => ({ q: c.q, expect: c.expect })),
      paraphrases: PARAPHRASES.map((p) => ({ q: p.q, expect: [p.expect] })),
    };
    const m: Record<string, Record<Mode, number>> = {};
    const lines: string[] = [`semantic relevance on help-en (deterministic embedder ${embedder.model}; ${semantic.status().chunks_embedded} sections):`];
    for (const [name, qs] of Object.entries(sets)) {
      m[name] = { keyword: mrr(await ranks(qs, "keyword")), semantic: mrr(await ranks(qs, "semantic")), hybrid: mrr(await ranks(qs, "hybrid")) };
      lines.push(`  ${name} (${qs.length}): MRR keyword ${m[name].keyword.toFixed(3)}, semantic ${m[name].semantic.toFixed(3)}, hybrid ${m[name].hybrid.toFixed(3)}`);
    }
    process.stderr.write(lines.join("\n") + "\n");
    // Keyword-style queries: fusing keyword in lifts semantic answers.
    expect(m["keyword-style cases"].hybrid).toBeGreaterThan(m["keyword-style cases"].semantic);
    // Paraphrases share no word with their note: keyword finds none; what hybrid finds, semantic brought.
    expect(m.paraphrases.keyword).toBe(0);
    expect(m.paraphrases.hybrid).toBeGreaterThanOrEqual(m.paraphrases.keyword);
    // Known gap: with this embedder (words without their weights, no meanings) hybrid stays below
    // keyword on keyword-style queries (RRF weighs both rankings alike); a real model is needed to
    // hold hybrid ≥ keyword there, and to measure the paraphrases.
  }, 120_000);
});
