/**
 * A search in slices (`InvertedIndex.searchSliced`, what the search service runs) gives the event
 * loop back between the scorer's steps, and answers as the plain search does: also when the index
 * changes while it waits (it starts again), when two run at once, and when a plain search (the
 * graph's mentions) runs in between.
 */
import { describe, expect, jest, test } from "@jest/globals";
import { parseQuery } from "../../src/core/search";
import type { InvertedIndex } from "../../src/core/search/keyword/inverted-index";
import type { KeywordAnswer } from "../../src/core/search/keyword/sections";
import type { Scheduler, SearchRequest } from "../../src/core/search/types";
import { addNote, crowdedIndex, crowdedQueries } from "../support/crowded-index";
import { makeSearch } from "../support/search-service";
import { MemoryVault } from "../../src/core/memory-vault";
import { Scorer } from "../../src/core/search/keyword/score";

const req = (query: string, limit = 10): SearchRequest => ({ query, limit, chunksPerFile: 2, snippetWords: 0 });

function shape(a: KeywordAnswer) {
  return { ...a.res, hits: a.res.hits.map((h) => ({ path: h.path, score: h.score, missing: h.missing, sections: h.sections.map((s) => [s.heading, s.score]) })) };
}

const plain = (ix: InvertedIndex, q: string, limit = 10) => shape(ix.search(parseQuery(q), req(q, limit), "en"));

/** A scheduler whose yields wait for `release()`, and count. */
function heldScheduler() {
  let waiting: (() => void)[] = [];
  const s = {
    yields: 0,
    sched: {
      now: () => 0,
      yield: () =>
        new Promise<void>((resolve) => {
          s.yields++;
          waiting.push(resolve);
        }),
    } satisfies Scheduler,
    /** Lets every waiting search go on one step. */
    release(): void {
      const w = waiting;
      waiting = [];
      for (const f of w) f();
    },
    get held(): number {
      return waiting.length;
    },
  };
  return s;
}

/** Runs `p` to its end, releasing the scheduler's yields as they come; `between` runs at the first one. */
async function drive<T>(s: ReturnType<typeof heldScheduler>, p: Promise<T>, between?: () => void): Promise<T> {
  let done = false;
  void p.finally(() => (done = true));
  let first = true;
  while (!done) {
    await new Promise<void>((r) => setImmediate(r));
    if (s.held > 0) {
      if (first && between) between();
      first = false;
      s.release();
    }
  }
  return p;
}

describe("search in slices", () => {
  test("yields between its steps and answers as the plain search does", async () => {
    const ix = crowdedIndex(600, 1);
    const s = heldScheduler();
    let compared = 0;
    for (const q of crowdedQueries(11, 63)) {
      for (const limit of [1, 10, 250]) {
        const before = s.yields;
        // A slice of 0 ms: it yields after every step.
        const sliced = shape(await drive(s, ix.searchSliced(parseQuery(q), req(q, limit), "en", s.sched, 0)));
        expect({ q, limit, res: sliced }).toEqual({ q, limit, res: plain(ix, q, limit) });
        expect(s.yields).toBeGreaterThan(before);
        compared++;
      }
    }
    expect(compared).toBe(189);
  });

  test("measuring many notes' proximity is spread over steps: tied notes all measured, answer unchanged", async () => {
    const ix = crowdedIndex(50, 4);
    // 400 notes alike: every one could still reach the top, so every one is measured.
    for (let i = 0; i < 400; i++) addNote(ix, `same ${i}.md`, `alpha gamma beta and some other words ${i % 2 ? "odd" : "even"}`);
    const q = "alpha beta";
    let steps = 0;
    const it = new Scorer().steps(ix, parseQuery(q), req(q), "en", true);
    while (!it.next().done) steps++;
    // A handful of phases otherwise (one step measured them all: 300–440 ms on a vault of long notes).
    expect(steps).toBeGreaterThan(400 / 8);
    const s = heldScheduler();
    const sliced = shape(await drive(s, ix.searchSliced(parseQuery(q), req(q), "en", s.sched, 0)));
    expect(sliced).toEqual(plain(ix, q));
    expect(sliced.hits).toHaveLength(10);
  });

  test("a note added or removed while it waits: it starts again and answers from the index as it is now", async () => {
    const ix = crowdedIndex(300, 2);
    const s = heldScheduler();
    const q = "kiln glaze";
    const gone = plain(ix, q).hits[0].path;
    // Removed at the first yield: the answer must not hold it.
    const a = shape(await drive(s, ix.searchSliced(parseQuery(q), req(q), "en", s.sched, 0), () => ix.removeDoc(gone)));
    expect(a.hits.map((h) => h.path)).not.toContain(gone);
    expect(a).toEqual(plain(ix, q));
    // Added at the first yield: a note that outranks every other one.
    const b = shape(await drive(s, ix.searchSliced(parseQuery(q), req(q), "en", s.sched, 0), () => addNote(ix, "kiln glaze.md", "kiln glaze kiln glaze")));
    expect(b.hits[0].path).toBe("kiln glaze.md");
    expect(b).toEqual(plain(ix, q));
  });

  test("two at once run in turn, and a plain search in between gets its own answer", async () => {
    const ix = crowdedIndex(300, 3);
    const s = heldScheduler();
    const [q1, q2, q3] = ["kiln glaze", "clay wheel fire", "ash slip"];
    const want = [plain(ix, q1), plain(ix, q2), plain(ix, q3)];
    let between: ReturnType<typeof plain> | null = null;
    const both = Promise.all([ix.searchSliced(parseQuery(q1), req(q1), "en", s.sched, 0), ix.searchSliced(parseQuery(q2), req(q2), "en", s.sched, 0)]);
    const [a1, a2] = await drive(s, both, () => (between = plain(ix, q3)));
    expect([shape(a1), shape(a2), between]).toEqual(want);
    // The scorer's scratch space is clean after them all: the same answers again.
    expect(plain(ix, q1)).toEqual(want[0]);
  });

  // A change while a search is part-way made it start again in one go: at 100k notes, the
  // compaction's steps after a cold build turned common-word searches into 50-100 ms tasks.
  test("the service's background work waits for a search part-way: a note changed meanwhile is indexed after it, and the search does not start again", async () => {
    const files: Record<string, string> = {};
    const words = ["kiln", "glaze", "clay", "wheel", "fire", "ash", "slip", "bisque"];
    for (let i = 0; i < 200; i++) files[`n${i}.md`] = `# Note ${i}\n\n${Array.from({ length: 30 }, (_, k) => words[(i * 5 + k * 3) % words.length]).join(" ")}\n`;
    const vault = new MemoryVault(files);
    // Every yield takes 3 ms (a slice of 0 ms: the search yields after each step), so the change's
    // indexing (after its 5 ms debounce) comes while the search is part-way.
    const sched: Scheduler = { now: () => performance.now(), yield: () => new Promise((r) => setTimeout(r, 3)) };
    const { svc } = makeSearch(vault, undefined, { scheduler: sched, options: { searchSliceMs: 0 } });
    await svc.start();
    expect(await svc.waitForIdle(10_000)).toBe(true);
    const restarts = jest.spyOn(Scorer.prototype, "run");
    try {
      const q = "kiln glaze clay wheel fire ash slip bisque";
      const answer = svc.search({ query: q, limit: 5, chunksPerFile: 1, snippetWords: 0 });
      vault.write("n0.md", "# Note 0\n\nporcelain\n");
      const res = await answer;
      expect(res.hits.length).toBe(5);
      expect(restarts).not.toHaveBeenCalled();
      expect(await svc.waitForIdle(10_000)).toBe(true);
      expect((await svc.search({ query: "porcelain", limit: 5, chunksPerFile: 1, snippetWords: 0 })).hits.map((h) => h.path)).toEqual(["n0.md"]);
    } finally {
      restarts.mockRestore();
      await svc.close();
    }
  });

  test("the search service gives the event loop back during a long search", async () => {
    const files: Record<string, string> = {};
    const words = ["kiln", "glaze", "clay", "wheel", "fire", "ash"];
    for (let i = 0; i < 400; i++) files[`n${i}.md`] = `# Note ${i}\n\n${Array.from({ length: 40 }, (_, k) => words[(i * 7 + k * 3) % words.length]).join(" ")}\n`;
    const vault = new MemoryVault(files);
    // A slice of 0 ms: the search yields after its first step.
    const { svc } = makeSearch(vault, undefined, { options: { searchSliceMs: 0 } });
    await svc.start();
    await svc.waitForIdle(10_000);
    let ran = false;
    const answer = svc.search({ query: "kiln glaze", limit: 5, chunksPerFile: 1, snippetWords: 0 });
    setImmediate(() => (ran = true));
    // Without slices the search would be done before any other task runs: the flag set by a task
    // queued after it started shows it gave the event loop back.
    const res = await answer;
    expect(ran).toBe(true);
    expect(res.hits.length).toBe(5);
    await svc.close();
  });

  describe("no loop of a step goes through more than Scorer.stepItems postings, sections or notes", () => {
    const withStep = <T>(n: number, fn: () => T): T => {
      const was = Scorer.stepItems;
      Scorer.stepItems = n;
      try {
        return fn();
      } finally {
        Scorer.stepItems = was;
      }
    };
    const stepsOf = (ix: InvertedIndex, q: string, limit = 10): number => {
      let n = 0;
      const it = new Scorer().steps(ix, parseQuery(q), req(q, limit), "en", true);
      while (!it.next().done) n++;
      return n;
    };

    test("the answers are the same to the last bit as in long steps, and a common word's scoring is spread over many", () => {
      const ix = crowdedIndex(600, 6);
      let compared = 0;
      for (const q of [...crowdedQueries(16, 45), "kiln", "kiln glaze", '"kiln glaze" ash']) {
        for (const limit of [1, 10, 250]) {
          const long = withStep(1 << 16, () => plain(ix, q, limit));
          expect({ q, limit, res: withStep(7, () => plain(ix, q, limit)) }).toEqual({ q, limit, res: long });
          compared++;
        }
      }
      expect(compared).toBe(144);
      // "kiln" is in hundreds of sections: in steps of 7 it takes dozens of steps, in long ones a handful.
      const postings = ix.lookup("kiln")!.n;
      expect(postings).toBeGreaterThan(300);
      const long = withStep(1 << 16, () => stepsOf(ix, "kiln"));
      expect(long).toBeLessThan(12);
      expect(withStep(7, () => stepsOf(ix, "kiln"))).toBeGreaterThan(long + postings / 7);
    });

    test("a process's first 32 searches take shorter steps (their code is not optimised yet), with the same answers", () => {
      const ix = crowdedIndex(600, 6);
      const was = [Scorer.coldStepItems, Scorer.searchesSoFar];
      Scorer.coldStepItems = 7;
      try {
        Scorer.searchesSoFar = 0;
        const cold = shape(new Scorer().run(ix, parseQuery("kiln glaze"), req("kiln glaze", 250), "en", true).answer);
        const first = stepsOf(ix, "kiln");
        for (let i = 2; i < 32; i++) stepsOf(ix, "kiln");
        const after = stepsOf(ix, "kiln");
        expect(after).toBeLessThan(12);
        expect(first).toBeGreaterThan(after + ix.lookup("kiln")!.n / 7);
        expect(cold).toEqual(plain(ix, "kiln glaze", 250));
      } finally {
        [Scorer.coldStepItems, Scorer.searchesSoFar] = was;
      }
    });

    test("a scorer's scratch grown to a large index is a step of its own, then its new pages are written in steps of 256", () => {
      const ix = crowdedIndex(300, 5);
      // Room for 300k chunks: a chunk's score is 8 bytes (2.4 MB), so ~600 new pages of it alone.
      ix.ensureChunkCap(300_000);
      const scorer = new Scorer();
      const count = () => {
        let n = 0;
        const it = scorer.steps(ix, parseQuery("kiln glaze"), req("kiln glaze", 10), "en", true);
        let r = it.next();
        for (; !r.done; r = it.next()) n++;
        return { n, answer: shape(r.value.answer) };
      };
      const first = count();
      const second = count();
      const pages = Math.ceil((ix.alive.length * 8) / 4096);
      expect(pages).toBeGreaterThan(512);
      expect(first.n - second.n).toBeGreaterThanOrEqual(1 + Math.floor(pages / 256));
      expect(first.answer).toEqual(second.answer);
      expect(first.answer).toEqual(plain(ix, "kiln glaze"));
    });

    test("a term skipped to its candidate notes' chunks is scored in pieces of their ranges, the same to the last bit", () => {
      const ix = crowdedIndex(600, 8);
      // "zircon" in 40 notes: the common words after it skip to those notes' chunks (40 ranges, pieces of 3).
      for (let i = 0; i < 40; i++) addNote(ix, `zircon ${i}.md`, `zircon ${i % 3 ? "kiln" : "glaze"} clay zircon`);
      for (const q of ["zircon kiln", "zircon glaze clay", "zircon kiln -ash"]) {
        for (const limit of [1, 10, 250]) {
          const scorer = new Scorer();
          const short = withStep(3, () => shape(scorer.run(ix, parseQuery(q), req(q, limit), "en", true).answer));
          expect(scorer.skipped).toBeGreaterThan(0);
          expect({ q, limit, res: short }).toEqual({ q, limit, res: withStep(1 << 16, () => plain(ix, q, limit)) });
        }
      }
    });

    test("a search ended at any step leaves the scorer's scratch clean (a phrase's marks included)", () => {
      const ix = crowdedIndex(300, 7);
      const queries = ['"kiln glaze" ash', "kiln glaze", "clay wheel fire -ash", '"clay wheel" fire'];
      const want = queries.map((q) => plain(ix, q));
      for (const q of queries) {
        const scorer = new Scorer();
        const total = withStep(5, () => stepsOf(ix, q));
        expect(total).toBeGreaterThan(20);
        for (let k = 1; k < total; k += 3) {
          withStep(5, () => {
            const it = scorer.steps(ix, parseQuery(q), req(q), "en", true);
            for (let i = 0; i < k; i++) it.next();
            it.return(undefined as never);
          });
          // Every query after it, the other phrase's too, answers as on a fresh scorer.
          const after = queries.map((q2) => shape(scorer.run(ix, parseQuery(q2), req(q2), "en", true).answer));
          // (Compared as JSON: a deep equal per step was most of this test's time.)
          expect(JSON.stringify({ q, k, after })).toBe(JSON.stringify({ q, k, after: want }));
        }
      }
    });
  });
});
