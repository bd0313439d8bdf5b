/**
 * A term scored only in the notes the earlier clauses found skips to their chunks in its lists
 * (score.ts: `rangesOf`, then `addPostings` over their ranges) instead of reading them through. These tests hold it to
 * reading them through (`new Scorer(false, false)`), and `sortPostings` (a restored list's parts put
 * in chunk id order, which skipping needs) to a plain sort.
 */
import { describe, expect, test } from "@jest/globals";
import { hash53 } from "../../src/core/hash";
import { parseQuery } from "../../src/core/search";
import { chunkNote } from "../../src/core/search/chunk";
import { segmentOf } from "../../src/core/search/keyword/doc";
import { InvertedIndex } from "../../src/core/search/keyword/inverted-index";
import type { RestoredBlobs } from "../../src/core/search/keyword/persist";
import { sortPostings, sortPostingsSteps } from "../../src/core/search/keyword/postings";
import { SegmentLoader } from "../../src/core/search/keyword/restore";
import { Scorer } from "../../src/core/search/keyword/score";
import type { SearchRequest } from "../../src/core/search/types";
import { addNote, rng } from "../support/crowded-index";

function answer(scorer: Scorer, ix: InvertedIndex, q: string, limit: number) {
  const req: SearchRequest = { query: q, limit, chunksPerFile: 3, snippetWords: 0 };
  const { answer: a } = scorer.run(ix, parseQuery(q), req, "en", true);
  return { ...a.res, hits: a.res.hits.map((h) => ({ path: h.path, score: h.score, missing: h.missing, sections: h.sections.map((s) => [s.heading, s.score]) })) };
}

/** Notes of several sections: "common" nearly everywhere, "often" in half, `rareK` in ~1 note of 60, word forms, prototype words. */
function index(): InvertedIndex {
  const r = rng(11);
  const ix = new InvertedIndex();
  const words = ["common", "often", "syncing", "syncs", "constructor", "toString", "the", "and"];
  const text = (i: number) => {
    const parts: string[] = [];
    for (let k = 0, n = 1 + (i % 4); k < n; k++) {
      const ws: string[] = [];
      for (let w = 0; w < 15 + Math.floor(r() * 30); w++) ws.push(w % 7 === 3 ? `rare${Math.floor(r() * 60)}` : words[Math.floor(r() * words.length)]);
      if (i % 2 === 0 && k === 0) ws.push("often");
      parts.push(`## part ${k}\n\n${ws.join(" ")}\n`);
    }
    return parts.join("\n");
  };
  for (let i = 0; i < 1500; i++) addNote(ix, `F${i % 5}/note ${i}.md`, text(i));
  // Dead postings, and notes indexed again under new chunk ids (at the lists' ends).
  for (let i = 0; i < 1500; i += 9) ix.removeDoc(`F${i % 5}/note ${i}.md`);
  for (let i = 4; i < 1500; i += 13) addNote(ix, `F${i % 5}/note ${i}.md`, text(i + 1));
  return ix;
}

describe("skipping in a pruned term's lists", () => {
  test("every answer is the one reading the lists through gives", () => {
    const ix = index();
    const skipping = new Scorer();
    const through = new Scorer(false, false);
    const queries = ["rare5 common", "rare5 often common", "rare7 syncing", 'rare3 "common often"', "rare9 common -often", "rare11 comm*", "rare2 OR rare3 common", "rare1 rare2 constructor", "rare4 tostring often", "rare8 sync", "often common"];
    let compared = 0;
    for (const q of queries) {
      for (const limit of [1, 5, 10, 40]) {
        expect({ q, limit, res: answer(skipping, ix, q, limit) }).toEqual({ q, limit, res: answer(through, ix, q, limit) });
        compared++;
      }
    }
    expect(compared).toBe(44);
    expect(through.skipped).toBe(0);
    // Most of them skip ("often common" does not: too many notes have "often").
    expect(skipping.skipped).toBeGreaterThan(20);
  });

  /** 2,500 notes over 16 segments ("common" in each, "half" in half, "rare" in 25), saved; `restore()` loads them anew. */
  const saved = () => {
    const SEGS = 16;
    const original = new InvertedIndex();
    original.segCount = SEGS;
    for (let i = 0; i < 2500; i++) {
      const path = `n${i}.md`;
      const text = `common ${i % 100 === 7 ? "rare" : "plain"} ${i % 2 ? "half" : "other"}`;
      const chunks = chunkNote(path, text, null, { maxWords: 300 });
      const b = original.docBuilder();
      for (const c of chunks) b.addChunk(c, "en");
      original.addDoc({ seg: segmentOf(path, SEGS), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
    }
    const job = original.segmentWriter(Array.from({ length: SEGS }, (_, k) => k));
    while (!job.step(() => false));
    const blobs = Array.from({ length: SEGS }, (_, k) => Object.entries(job.blobs(k)).map(([n, v]) => [n, v.slice()] as const));
    const dict = original.dictBytes().slice();
    const restore = async (): Promise<InvertedIndex> => {
      const ix = new InvertedIndex();
      await ix.restoreDict(dict.slice(), async () => {});
      ix.segCount = SEGS;
      for (let k = 0; k < SEGS; k++) ix.restoreSegment(k, Object.fromEntries(blobs[k].map(([n, v]) => [n, v.slice()])) as unknown as RestoredBlobs);
      await ix.finishRestore(async () => {});
      return ix;
    };
    return { original, restore };
  };

  test("a restored long list is put in chunk id order when decoded in the background; a short one when a search first skips in it", async () => {
    const { original, restore } = saved();
    const ix = await restore();
    const term = (t: string) => ix.dict.get(t)!;
    const ascends = (t: string) => {
      const l = ix.listAt(term(t))!;
      for (let i = 1; i < l.n; i++) if (l.ids[i] < l.ids[i - 1]) return false;
      return true;
    };
    // Every other list decoded on first use: "common" is the last the background decodes (the
    // decoding is over with it), and it is sorted all the same.
    for (let g = 0; g < ix.lists.length; g++) if (g !== term("common")) void ix.listAt(g)?.ids;
    expect(ix.hasEncodedLists).toBe(true);
    while (ix.decodeSomeLists(() => true));
    expect(ix.hasEncodedLists).toBe(false);
    // "common" (2,500 postings) was sorted in the background; "half" (1,250) waits for a search.
    expect([ix.restored!.unsorted[term("common")], ix.restored!.unsorted[term("half")]]).toEqual([0, 1]);
    expect([ascends("common"), ascends("half")]).toEqual([true, false]);
    const q = "rare half";
    const skipping = new Scorer();
    expect(answer(skipping, ix, q, 5)).toEqual(answer(new Scorer(), original, q, 5));
    expect(skipping.skipped).toBe(1);
    expect([ix.restored!.unsorted[term("half")], ascends("half")]).toEqual([0, true]);
  });

  test("a search decodes a restored list in steps and sorts it in steps to skip in it, with the same answers, whatever reads the list whole in between", async () => {
    const { original, restore } = saved();
    const q = "rare half";
    const want = answer(new Scorer(), original, q, 5);
    const was = [Scorer.stepItems, Scorer.coldStepItems];
    Scorer.stepItems = Scorer.coldStepItems = 50;
    try {
      const stepsOf = (ix: InvertedIndex): number => {
        let n = 0;
        const it = new Scorer().steps(ix, parseQuery(q), { query: q, limit: 5, chunksPerFile: 3, snippetWords: 0 }, "en", true);
        while (!it.next().done) n++;
        return n;
      };
      // "half": 1,250 postings in 16 parts. Every other list decoded first; then "half" encoded,
      // decoded but not sorted, sorted.
      const withHalf = async (state: "encoded" | "unsorted" | "sorted"): Promise<InvertedIndex> => {
        const ix = await restore();
        const half = ix.dict.get("half")!;
        for (let g = 0; g < ix.lists.length; g++) if (g !== half) void ix.listAt(g)?.ids;
        if (state !== "encoded") void ix.listAt(half)!.ids;
        if (state === "sorted") sortPostings(ix.listAt(half)!.ids, ix.listAt(half)!.tfs, 0, 1250);
        expect([ix.restored!.encoded[half], ix.restored!.unsorted[half]]).toEqual(state === "encoded" ? [1, 0] : [0, 1]);
        return ix;
      };
      const [encoded, unsorted, sorted] = [stepsOf(await withHalf("encoded")), stepsOf(await withHalf("unsorted")), stepsOf(await withHalf("sorted"))];
      // Its 16 parts decoded a part or so a step (~78 postings each), then marked 50 postings a step
      // and read back 200 chunk ids a step (its ids span ~2,500 chunks; a list in order, still flagged
      // as not known to be, is only read).
      expect(encoded - unsorted).toBeGreaterThanOrEqual(12);
      expect(unsorted - sorted).toBeGreaterThanOrEqual(Math.floor(1250 / 50) + 10);
      // The list read whole, or another search run at once, after any step: the same answers, the list in order.
      for (let k = 0; k <= encoded; k += 3) {
        for (const between of ["ids", "search"] as const) {
          const ix = await restore();
          const scorer = new Scorer();
          const it = scorer.steps(ix, parseQuery(q), { query: q, limit: 5, chunksPerFile: 3, snippetWords: 0 }, "en", true);
          let r = it.next();
          for (let i = 0; i < k && !r.done; i++) r = it.next();
          if (between === "ids") void ix.listAt(ix.dict.get("half")!)!.ids;
          else expect(answer(new Scorer(), ix, q, 5)).toEqual(want);
          while (!r.done) r = it.next();
          const res = r.value.answer.res;
          expect({ k, between, res: { ...res, hits: res.hits.map((h) => ({ path: h.path, score: h.score, missing: h.missing, sections: h.sections.map((s) => [s.heading, s.score]) })) } }).toEqual({ k, between, res: want });
          const l = ix.listAt(ix.dict.get("half")!)!;
          const ids = [...l.ids.subarray(0, l.n)];
          expect({ k, between, ids }).toEqual({ k, between, ids: [...original.lookup("half")!.ids.subarray(0, 1250)].sort((a, b) => a - b) });
          // And the same scorer's next sort (of "common", 2,500 postings) is right: its marks were left zeros.
          expect(answer(scorer, ix, "rare common", 5)).toEqual(answer(new Scorer(), original, "rare common", 5));
        }
      }
    } finally {
      [Scorer.stepItems, Scorer.coldStepItems] = was;
    }
  });

  test("a search that needs a list the background is part-way through decoding and sorting leaves it whole, even ended part-way itself", async () => {
    const { original, restore } = saved();
    const q = "rare half";
    const want = answer(new Scorer(), original, q, 5);
    const wantIds = [...original.lookup("half")!.ids.subarray(0, 1250)].sort((a, b) => a - b);
    const was = [Scorer.stepItems, Scorer.coldStepItems, SegmentLoader.blockPostings, SegmentLoader.sortEarly];
    // "half" (1,250 postings in 16 parts) is a long list for the background: decoded, marked and read
    // back in pieces (~16 + 20 + 10 calls).
    Scorer.stepItems = Scorer.coldStepItems = 50;
    SegmentLoader.blockPostings = 64;
    SegmentLoader.sortEarly = 256;
    try {
      let checked = 0;
      let sorting = 0;
      for (let k = 0; k < 60; k++) {
        for (const stop of [6, 14, Infinity]) {
          const ix = await restore();
          const half = ix.dict.get("half")!;
          // Every other list decoded; then k pieces of the background's work on "half".
          for (let g = 0; g < ix.lists.length; g++) if (g !== half) void ix.listAt(g)?.ids;
          for (let i = 0; i < k && ix.hasEncodedLists; i++) ix.decodeSomeLists(() => true);
          if (!ix.hasEncodedLists) continue;
          // Past its parts, the background is sorting it in place (it stays encoded meanwhile).
          if (k > 16) sorting++;
          // A search, ended after `stop` steps (its index changed, say) or run to its end.
          const it = new Scorer().steps(ix, parseQuery(q), { query: q, limit: 5, chunksPerFile: 3, snippetWords: 0 }, "en", true);
          let r = it.next();
          for (let i = 0; i < stop && !r.done; i++) r = it.next();
          if (!r.done) it.return(undefined as never);
          // Then the background to its end.
          while (ix.decodeSomeLists(() => true));
          const l = ix.listAt(half)!;
          const ids = [...l.ids.subarray(0, l.n)];
          if (ix.restored!.unsorted[half]) ids.sort((a, b) => a - b);
          expect({ k, stop, ids }).toEqual({ k, stop, ids: wantIds });
          expect({ k, stop, res: answer(new Scorer(), ix, q, 5) }).toEqual({ k, stop, res: want });
          checked++;
        }
      }
      expect(checked).toBeGreaterThan(100);
      expect(sorting).toBeGreaterThan(45);
    } finally {
      [Scorer.stepItems, Scorer.coldStepItems, SegmentLoader.blockPostings, SegmentLoader.sortEarly] = was;
    }
  });

  test("sortPostings puts ids in order with their tf codes, dense or sparse, and leaves its scratch clean", () => {
    const r = rng(3);
    const scratch = new Int32Array(5000);
    for (let round = 0; round < 200; round++) {
      // Distinct ids but for 0 (a lost segment's part); sparse ones sort by key, dense ones by marks.
      const n = 1 + Math.floor(r() * 300);
      const span = round % 2 ? 5000 : n + 20;
      const seen = new Set<number>();
      const pairs: [number, number][] = [];
      while (pairs.length < n) {
        const id = r() < 0.05 ? 0 : 1 + Math.floor(r() * (span - 1));
        if (id !== 0 && seen.has(id)) continue;
        seen.add(id);
        pairs.push([id, Math.floor(r() * 256)]);
      }
      const ids = Int32Array.from([7, ...pairs.map((p) => p[0]), 7]);
      const tfs = Uint8Array.from([9, ...pairs.map((p) => p[1]), 9]);
      sortPostings(ids, tfs, 1, n + 1, scratch);
      const want = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      // Zeros come first, in any tf order; the rest exactly.
      const zeros = want.filter((p) => p[0] === 0).length;
      expect([...ids.subarray(1, n + 1)]).toEqual(want.map((p) => p[0]));
      expect([...tfs.subarray(1 + zeros, n + 1)]).toEqual(want.slice(zeros).map((p) => p[1]));
      expect([ids[0], ids[n + 1], tfs[0], tfs[n + 1]]).toEqual([7, 7, 9, 9]);
      expect(scratch.every((v) => v === 0)).toBe(true);
    }
  });

  test("sortPostingsSteps sorts as sortPostings does, in steps; a reader between them sees the list whole; ended at any step, its marks are left zeros", () => {
    const r = rng(5);
    for (let round = 0; round < 120; round++) {
      // A restored list's shape: parts, each ascending; a lost segment's part of zeros now and then.
      const parts = 1 + Math.floor(r() * 6);
      const span = round % 3 === 0 ? 40_000 : 2_000;
      const ids: number[] = [];
      const used = new Set<number>();
      for (let p = 0; p < parts; p++) {
        const part: number[] = [];
        const m = Math.floor(r() * 200);
        for (let i = 0; i < m; i++) {
          const id = r() < 0.03 ? 0 : 1 + Math.floor(r() * (span - 1));
          if (id !== 0 && used.has(id)) continue;
          used.add(id);
          part.push(id);
        }
        ids.push(...(part.includes(0) ? part.map(() => 0) : part.sort((a, b) => a - b)));
      }
      const n = ids.length;
      const tfs = ids.map((id, i) => (id * 7 + i) % 256);
      const want = [Int32Array.from(ids), Uint8Array.from(tfs)] as const;
      sortPostings(want[0], want[1], 0, n);
      const step = 1 + Math.floor(r() * 40);
      const scratch = { marks: new Uint16Array(round % 2 ? 0 : span) };
      // Whole.
      const a = Int32Array.from(ids);
      const at = Uint8Array.from(tfs);
      const it = sortPostingsSteps(a, at, n, step, scratch, () => false);
      let steps = 0;
      const as = ids.join() + "|" + tfs.join();
      let whole = true;
      while (!it.next().done) {
        steps++;
        // Between steps the list is as it was: it is written over in the last step only.
        whole &&= a.join() + "|" + at.join() === as;
      }
      expect(whole).toBe(true);
      const sorted = ids.every((id, i) => i === 0 || id >= ids[i - 1]);
      const dense = n > 1 && !sorted && Math.max(...ids) - Math.min(...ids) < 40 * n;
      // A dense list is read, marked and read back in steps of `step` postings (4 × `step` ids).
      if (dense) expect(steps).toBeGreaterThanOrEqual(2 * Math.floor(n / step));
      const zeros = ids.filter((id) => id === 0).length;
      expect([...a]).toEqual([...want[0]]);
      expect([...at.subarray(zeros)]).toEqual([...want[1].subarray(zeros)]);
      expect(scratch.marks.every((v) => v === 0)).toBe(true);
      // Ended part-way: the list as it was, the marks zeros.
      if (steps > 1) {
        const k = 1 + Math.floor(r() * (steps - 1));
        const b = Int32Array.from(ids);
        const bt = Uint8Array.from(tfs);
        const it2 = sortPostingsSteps(b, bt, n, step, scratch, () => false);
        for (let i = 0; i < k; i++) it2.next();
        it2.return();
        expect([...b]).toEqual(ids);
        expect(scratch.marks.every((v) => v === 0)).toBe(true);
        // Sorted by another reader between two steps: the steps end, writing nothing, the marks zeros.
        const c = Int32Array.from(ids);
        const ct = Uint8Array.from(tfs);
        let meanwhile = false;
        const it3 = sortPostingsSteps(c, ct, n, step, scratch, () => meanwhile);
        for (let i = 0; i < k; i++) it3.next();
        sortPostings(c, ct, 0, n);
        meanwhile = true;
        while (!it3.next().done);
        expect([...c]).toEqual([...want[0]]);
        expect(scratch.marks.every((v) => v === 0)).toBe(true);
      }
    }
  });

  test("sortPostings sorts sparse lists in keys it keeps: no new array a call (each was a small C-heap buffer glibc kept room for)", () => {
    const sparse = (n: number, seed: number): [Int32Array, Uint8Array] => {
      const r = rng(seed);
      const ids = new Int32Array(n);
      for (let i = 0; i < n; i++) ids[i] = 1 + Math.floor(r() * 1e6);
      return [ids, Uint8Array.from(ids, (id) => id % 251)];
    };
    const [a, at] = sparse(400, 1);
    sortPostings(a, at, 0, 400); // the keys grow to hold 400 once
    const real = globalThis.Float64Array;
    let made = 0;
    globalThis.Float64Array = new Proxy(real, { construct: (t, args: [number]) => (made++, new t(...args)) });
    try {
      for (let k = 0; k < 50; k++) {
        const n = 50 + ((k * 37) % 350);
        const [ids, tfs] = sparse(n, 10 + k);
        const want = [...ids].map((id, i) => [id, tfs[i]]).sort((x, y) => x[0] - y[0] || x[1] - y[1]);
        sortPostings(ids, tfs, 0, n);
        expect([...ids].map((id, i) => [id, tfs[i]])).toEqual(want);
      }
    } finally {
      globalThis.Float64Array = real;
    }
    expect(made).toBe(0);
  });
});
