/**
 * The keyword search's warm-up: a few searches, one per task, so that V8 has optimised the search
 * path before the first real query. Owns which terms and how many rounds; it must not change the index.
 */
import { parseQuery } from "../query";
import type { SliceClock } from "../slices";
import type { SearchLanguage, SearchRequest } from "../types";
import type { InvertedIndex } from "./inverted-index";
import type { KeywordAnswer } from "./sections";

/**
 * Terms from the upper part of the list sizes, each list (with the word's other forms' lists: a search
 * reads them in one step) at most WARM_UP_MAX_POSTINGS long, searched
 * in WARM_UP_ROUNDS rounds (in a fresh process at 10k notes, a first search of the largest term takes
 * 7–20 ms, the next ones 1–14 ms).
 */
const WARM_UP_QUANTILES = [0.9, 0.99, 1];
const WARM_UP_MAX_POSTINGS = 4096;
const WARM_UP_ROUNDS = 4;

/**
 * Runs searches one per task, for a few of the larger terms, several rounds: after a loaded index's
 * first reconciliation, and after a first build, in the background. At 10k notes, a query for two terms in
 * every note took 35–57 ms as the first search in a fresh process (21–36 ms for one such term in the
 * same process, whose optimised code goes with the old index), and 5–18 ms after this warm-up (16
 * bench runs of index v8). A single round, or terms of a few hundred chunks, left it unoptimised.
 * Stops early when `stopped()` says so. `fill` cuts the hits' sections from their notes, as a search does.
 * The searches run in slices of `sliceMs`, as the service's do: in turn with a real search that came
 * first (not beside it, on a scorer of their own).
 */
export async function warmUpSearch(
  index: InvertedIndex,
  lang: SearchLanguage,
  clock: SliceClock,
  sliceMs: number,
  stopped: () => boolean,
  fill: (answer: KeywordAnswer, req: SearchRequest) => Promise<unknown>,
): Promise<void> {
  // The dictionary's bitset for a word's other forms (TermDict.forms), in steps of ~5 ms.
  for (;;) {
    await clock.sched.yield();
    if (stopped()) return;
    const t0 = clock.sched.now();
    if (index.dict.catchUpTermBits(() => clock.sched.now() - t0 >= 5)) break;
  }
  await clock.sched.yield(); // picking the terms is a step of its own
  const terms = index.sampleTerms(WARM_UP_QUANTILES, WARM_UP_MAX_POSTINGS, lang);
  if (!terms.length) return;
  // Two terms at once take the AND path (clauses pruned by the earlier ones).
  const queries = terms.length > 1 ? [...terms, terms.slice(-2).join(" ")] : terms;
  const req = (query: string): SearchRequest => ({ query, limit: 10, chunksPerFile: 2, snippetWords: 200 });
  // V8 compiles each function on its first call: the first search's code is compiled over several
  // tasks (the query parser, then the scorer's steps, then the hits and snippets), not all in one.
  // Its searches give the event loop back after every step (a slice of 0 ms): a cold process's first
  // scoring, interpreted and sizing its scratch space, was one 36 ms task at 100k notes.
  const steps: (() => unknown)[] = [() => parseQuery(queries[0], lang)];
  for (let round = 0; round < WARM_UP_ROUNDS; round++) for (const q of queries) steps.push(async () => fill(await index.searchSliced(parseQuery(q, lang), req(q), lang, clock.sched, round === 0 ? 0 : sliceMs), req(q)));
  for (const step of steps) {
    await clock.sched.yield();
    if (stopped()) return;
    await step();
  }
  // What follows (a first query, say) runs in a task of its own.
  await clock.next();
}
