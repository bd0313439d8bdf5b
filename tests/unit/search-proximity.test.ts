/**
 * Proximity is measured only for the notes that can still change the answer (score.ts: `measure`,
 * `kthSettled`, `settle`, the title boost's floor and cut). These tests hold that laziness to its
 * definition: every answer equals the one measuring every note of the pool gives (`new Scorer(true)`),
 * on vaults whose scores crowd together (many candidates, a small vocabulary, titles and phrases
 * holding the query's words, a word typed twice).
 */
import { describe, expect, test } from "@jest/globals";
import { parseQuery } from "../../src/core/search";
import { chunkNote } from "../../src/core/search/chunk";
import { InvertedIndex } from "../../src/core/search/keyword/inverted-index";
import { PROXIMITY_BOOST, Scorer, TITLE_BOOST, TITLE_EXACT_BOOST, TopK } from "../../src/core/search/keyword/score";
import type { SearchRequest } from "../../src/core/search/types";
import { addNote, crowdedIndex, crowdedQueries, rng } from "../support/crowded-index";

function answer(scorer: Scorer, ix: InvertedIndex, q: string, limit: number) {
  const req: SearchRequest = { query: q, limit, chunksPerFile: 3, snippetWords: 0 };
  const { answer: a } = scorer.run(ix, parseQuery(q), req, "en", true);
  return { ...a.res, hits: a.res.hits.map((h) => ({ path: h.path, score: h.score, missing: h.missing, sections: h.sections.map((s) => [s.heading, s.score]) })) };
}

describe("proximity measured lazily", () => {
  test("every answer is the one measuring every candidate's proximity gives", () => {
    const lazy = new Scorer();
    const eager = new Scorer(true);
    let compared = 0;
    // 1,500 notes: more than 800 candidates above the title boost's cut, the floor's other path.
    for (const [n, seed, count] of [
      [600, 1, 70],
      [300, 2, 70],
      [1500, 3, 35],
    ]) {
      const ix = crowdedIndex(n, seed);
      for (const q of crowdedQueries(seed + 10, count)) {
        for (const limit of [1, 10, 40, 250]) {
          expect({ q, limit, res: answer(lazy, ix, q, limit) }).toEqual({ q, limit, res: answer(eager, ix, q, limit) });
          compared++;
        }
      }
    }
    expect(compared).toBe(700);
  });

  test("the title boost's cut is below every note whose proximity is pending (score.ts decides it before measuring them)", () => {
    expect((1 + PROXIMITY_BOOST) ** 2).toBeLessThanOrEqual(1 + TITLE_BOOST + TITLE_EXACT_BOOST);
  });

  test("TopK keeps the k-th largest score as scores rise, ties and all", () => {
    const r = rng(7);
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(r() * 60);
      const k = Math.floor(r() * 12);
      const score = new Float64Array(n);
      for (let i = 0; i < n; i++) score[i] = Math.floor(r() * 8);
      const list = Array.from({ length: n }, (_, i) => i).filter(() => r() < 0.8);
      // Filled at once, or in pieces of 1 to 5 slots (a search's steps: kthSettled), the same heap.
      const top = new TopK(k, list, score);
      const pieces = new TopK(k);
      if (k > 0 && list.length >= k) {
        for (let j = 0; j < list.length; ) {
          const to = Math.min(list.length, j + 1 + Math.floor(r() * 5));
          pieces.fill(list, score, j, to);
          j = to;
        }
        pieces.index();
      }
      const kth = () => (list.length < k ? -Infinity : k === 0 ? Infinity : [...list].map((s) => score[s]).sort((a, b) => b - a)[k - 1]);
      for (let step = 0; step < 40; step++) {
        if (k > 0) expect([top.min(), pieces.min()]).toEqual([kth(), kth()]);
        const s = list[Math.floor(r() * list.length)];
        if (s === undefined) break;
        score[s] += Math.floor(r() * 4);
        top.update(s, score[s]);
        pieces.update(s, score[s]);
      }
    }
  });

  test("a section holding a phrase's words near another word counts, though only the phrase's section scored for the phrase", () => {
    const ix = new InvertedIndex();
    const add = (path: string, text: string) => addNote(ix, path, text);
    const filler = Array.from({ length: 30 }, (_, i) => `filler${i}`).join(" ");
    // Near: "glacier" beside "turbine red" (not the phrase) in its second section; the phrase in its first.
    add("Z near.md", `## One\n\nred turbine ${filler}\n\n## Two\n\nglacier turbine red ${filler}\n`);
    // Far: the same words as often and as long, "glacier" 30 words from them (first on a tie of scores).
    add("A far.md", `## One\n\nred turbine ${filler}\n\n## Two\n\nglacier ${filler} turbine red\n`);
    for (let i = 0; i < 20; i++) add(`Other ${i}.md`, `red turbine and more ${filler}`);
    const q = 'glacier "red turbine"';
    const lazy = answer(new Scorer(), ix, q, 10);
    expect(lazy).toEqual(answer(new Scorer(true), ix, q, 10));
    expect(lazy.hits.map((h) => h.path).slice(0, 2)).toEqual(["Z near.md", "A far.md"]);
    expect(lazy.total_files).toBe(2);
  });

  test("a word whose notes are all gone still counts through its other forms", () => {
    const ix = new InvertedIndex();
    const add = (path: string, text: string) => addNote(ix, path, text);
    const filler = Array.from({ length: 30 }, (_, i) => `filler${i}`).join(" ");
    add("Gone.md", "syncing");
    add("Z near.md", `## One\n\nglacier ${filler}\n\n## Two\n\nglacier syncs ${filler}\n`);
    add("A far.md", `## One\n\nglacier ${filler}\n\n## Two\n\nglacier ${filler} syncs\n`);
    ix.removeDoc("Gone.md");
    // "syncing" as typed is in no live note (idf 0, so it scores nowhere), but its form "syncs" is
    // near "glacier" in one note: proximity reads it there.
    const q = "syncing glacier";
    const lazy = answer(new Scorer(), ix, q, 10);
    expect(lazy).toEqual(answer(new Scorer(true), ix, q, 10));
    expect(lazy.hits.map((h) => h.path)).toEqual(["Z near.md", "A far.md"]);
  });
});

describe("closestRun stops at a run close enough", () => {
  // The term ids of words (each word its own clause unless grouped), as `measure` marks them.
  function marksOf(ix: InvertedIndex, clauses: string[][]): Int8Array {
    const marks = new Int8Array(ix.dict.size + 1);
    clauses.forEach((words, c) => {
      for (const w of words) {
        const id = ix.dict.get(w);
        if (id !== undefined) marks[id] = c + 1;
      }
    });
    return marks;
  }

  test("it answers with the first run within `enough` tokens, not the shortest, and reads no further", () => {
    const ix = new InvertedIndex();
    addNote(ix, "A.md", "kiln the of glaze and in a to kiln glaze");
    const doc = ix.docs.get("A.md")!;
    const marks = marksOf(ix, [["kiln"], ["glaze"]]);
    // Read through: the shortest run is the last two words.
    expect(ix.reader.closestRun(doc, 0, marks)).toEqual({ covered: 2, span: 2 });
    // Enough at 4 tokens: the first run (kiln … glaze, 4 tokens) ends the reading.
    expect(ix.reader.closestRun(doc, 0, marks, 2, 4)).toEqual({ covered: 2, span: 4 });
    // Enough below it: read through, the shortest run again.
    expect(ix.reader.closestRun(doc, 0, marks, 2, 3)).toEqual({ covered: 2, span: 2 });
    // Three clauses, one of them not in the chunk: never all of them, so read through.
    expect(ix.reader.closestRun(doc, 0, marksOf(ix, [["kiln"], ["glaze"], ["raku"]]), 3, 100)).toEqual({ covered: 2, span: 2 });
  });

  test("proximity's share is the same read through or stopped early (measure's p), on long sections", () => {
    const ix = new InvertedIndex();
    const r = rng(11);
    const words = ["kiln", "glaze", "clay", "wheel", "fire", "ash", "slip", "trim", "bisque", "oxide", "cone", "raku", "the", "of"];
    // Sections of 30–200 words where the query's words are rare: runs longer than `enough` are common.
    for (let i = 0; i < 150; i++) {
      const text = Array.from({ length: 30 + Math.floor(r() * 170) }, () => (r() < 0.15 ? words[Math.floor(r() * words.length)] : `w${Math.floor(r() * 40)}`)).join(" ");
      const chunks = chunkNote(`N${i}.md`, text, null, { maxWords: 200 });
      const b = ix.docBuilder();
      for (const c of chunks) b.addChunk(c, "en");
      ix.addDoc({ seg: 0, path: `N${i}.md`, mtime: 0, size: text.length, hash: 0, frontmatter: {}, tags: [] }, chunks, b);
    }
    const p = (x: { covered: number; span: number }, clauses: number) => (x.covered < 2 ? 0 : Math.min(1, (8 * x.covered) / x.span) * (x.covered / clauses));
    let stopped = 0;
    let compared = 0;
    for (const doc of ix.docs.values()) {
      for (let round = 0; round < 4; round++) {
        const n = 2 + Math.floor(r() * 3);
        const clauses = Array.from({ length: n }, () => [words[Math.floor(r() * words.length)], words[Math.floor(r() * words.length)]]);
        const marks = marksOf(ix, clauses);
        let distinct = 0;
        for (let c = 0; c < n; c++) if (marks.includes(c + 1)) distinct++;
        for (let o = 0; o < doc.chunks; o++) {
          const full = ix.reader.closestRun(doc, o, marks);
          const early = ix.reader.closestRun(doc, o, marks, distinct, 8 * distinct);
          expect(p(early, n)).toBe(p(full, n));
          if (early.span !== full.span) stopped++;
          compared++;
        }
      }
    }
    expect(compared).toBe(600);
    expect(stopped).toBeGreaterThan(50);
  });
});
