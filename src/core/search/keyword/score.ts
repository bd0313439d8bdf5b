/**
 * Ranking: BM25 over the posting lists (clauses cheapest first, AND-pruned), phrases checked against
 * stored term sequences, partial matches, exclusions, folder and frontmatter filters, the title boost,
 * top-k, and the hits' sections (their contents are cut from the notes afterwards: sections.ts). Owns
 * its scratch arrays; it reads the index and never changes it (beyond merging the postings log, as
 * every reader does).
 */
import { own } from "../../dict";
import { grownArray } from "../../memory";
import { frontmatterTags, type NoteMetadata } from "../../metadata";
import { isUnder } from "../../paths";
import { gallop, heapDown } from "../../sorted";
import { basenameOf, parentOf } from "../../vault";
import type { ParsedQuery, QueryItem, SearchHit, SearchLanguage, SearchRequest, SearchResponse, SearchSection } from "../types";
import { frontmatterOf, headingOf, LINE_A, LINE_B, span, titleId, type DocEntry } from "./doc";
import type { IndexState } from "./index-state";
import { sortPostingsSteps, TF_OF, type PostingList } from "./postings";
import type { KeywordAnswer, PendingSection } from "./sections";
import { positiveTermSet, WantedIds } from "./snippet";

const K1 = 1.2;
const B = 0.75;
/** At most this many chunks have their term sequence checked for a phrase; beyond, candidates count as matches. */
const PHRASE_VERIFY_CAP = 3000;
/**
 * A note whose title (or an alias) holds query terms scores up to this much more: times the share of
 * the query it covers (idf-weighted) and the share of the title's words the query holds.
 */
export const TITLE_BOOST = 0.5;
/** …and this much more again when the title is exactly the query's terms. */
export const TITLE_EXACT_BOOST = 0.5;
/** Title boosts are computed for about this many of the best candidates (those it could lift into the top). */
const TITLE_BOOST_POOL = 200;
/**
 * The whole note's BM25 (the note as one document, its length against the average note's) weighs
 * this much in a note's score, its best section the rest: a long list note's best section no longer
 * competes as if it were a short note.
 */
const NOTE_WEIGHT = 0.5;
/** Length normalisation of the whole-note BM25 (stronger than a section's: notes vary far more in length). */
const NOTE_B = 0.9;
/**
 * A query word's other forms (same English stem: "syncing" for "sync") count this much of the word
 * as typed. Measured (docs/quality.md): 0.5 cost hub 0.02 MRR@10 and help-en 0.03 against 0.1.
 */
const FORM_WEIGHT = 0.1;

/**
 * A note whose section holds the query's words close together scores up to this much more: times
 * the share of the query's clauses the closest run holds, and fully when that run spans at most
 * PROXIMITY_SPAN tokens per clause (less in proportion when longer). Measured: hub 0.968 -> 0.975
 * MRR@10; a stricter measure (1 only when side by side) cost help-en 0.006. 0.2 -> 0.35 with a span
 * of 6 -> 8: known-item help-en 0.977 -> 0.979, help-ja 0.977 -> 0.983, zh 0.967 -> 0.972, ko and hub
 * equal, hand-written help-en 0.888 -> 0.910 (0.5: hub 0.972; a span of 4: help-en 0.975).
 */
export const PROXIMITY_BOOST = 0.35;
/*
 * The title boost's cut (its floor, the 200th best score after proximity, / (1 + TITLE_BOOST +
 * TITLE_EXACT_BOOST)) is below every note whose proximity is measured, so it can be decided before
 * they are: a pool note is at least the 30th best before proximity (K) / (1 + PROXIMITY_BOOST), and
 * the floor at most K × (1 + PROXIMITY_BOOST). That holds while (1 + PROXIMITY_BOOST)² ≤ 1 +
 * TITLE_BOOST + TITLE_EXACT_BOOST (1.82 ≤ 2), which the tests check (search-proximity.test.ts).
 */
const PROXIMITY_SPAN = 8;
/** Proximity is computed for about this many of the best candidates, in at most this many sections each. */
const PROXIMITY_POOL = 30;
const PROXIMITY_SECTIONS = 3;
/** Notes whose proximity is measured in one step of a search in slices (see `kthSettled`). */
const MEASURES_PER_STEP = 8;
/** See `Scorer.coldStepItems`. */
const COLD_SEARCHES = 32;
/** A memory page (every page of a grown scratch array gets a write: see `Scorer.growScratch`), and how many a step. */
const PAGE_BYTES = 4096;
const PREFAULT_PAGES = 256;
/** The most dfs kept between searches (see `Scorer.dfMemo`). */
const DF_MEMO_MAX = 4096;
/**
 * A term scored only in the notes that match the earlier clauses skips to those notes' chunks in its
 * lists (a binary search each) when its lists hold more than this many postings per note touched so
 * far; else it reads its lists through.
 */
const SKIP_RATIO = 8;

/** A search's answer and its notes' paths (see `Scorer.run`). */
export interface ScoredAnswer {
  answer: KeywordAnswer;
  paths: string[];
}

/** A query term's lists: the word's forms (or one prefix expansion), each with its weight. */
interface TermGroup {
  ls: PostingList[];
  w: number[];
  /** The lists' term ids. */
  ids: number[];
}

export class Scorer {
  /**
   * The most postings, sections or notes one loop of a search goes through in one step before it
   * yields (tests lower it). At 100k notes a common word's ~300k postings were one step of 17–63 ms,
   * and its notes' best sections another of 20–30: with a collection beside them, blocks of 60–140 ms.
   */
  static stepItems = 1 << 16;
  /**
   * The first COLD_SEARCHES searches of the process go `coldStepItems` a step at most: their code is
   * not optimised yet (V8 compiles it on the other core, which a warm start keeps busy), and a step of
   * 64k postings took 50 ms in a warm start's first searches at 100k notes. (Tests set both.)
   */
  static coldStepItems = 1 << 11;
  static searchesSoFar = 0;
  /**
   * `eager`: measure every pool note's proximity at once (a reference for the tests: the lazy
   * measuring must give the same answers).
   */
  constructor(
    private readonly eager = false,
    /** false: a pruned term's lists are read through, never skipped in (a reference for the tests). */
    private readonly skip = true,
  ) {}
  /** Terms scored by skipping to the candidate notes' chunks in their lists, since this scorer was made. */
  skipped = 0;

  // Scratch space.
  private acc = new Float64Array(1024);
  /** Per chunk id: how many of a phrase's terms it holds so far (a query's terms are at most 1,000 characters). */
  private cnt = new Uint16Array(1024);
  /** Per chunk id: 1 while it is one of the chunks a term's scores are limited to, else 0. */
  private onlyMark = new Uint8Array(1024);
  /** `sortPostingsSteps`' marks (zeros between searches). */
  private readonly sortScratch = { marks: new Uint16Array(0) };
  private docMask = new Uint32Array(64);
  private docBest = new Float64Array(64);
  private docExcluded = new Uint8Array(64);
  /** Per note: the whole-note BM25, and one term's summed tf while it is added. */
  private noteAcc = new Float64Array(64);
  private noteTf = new Float64Array(64);
  private readonly touched = new IntStack();
  private readonly docsTouched = new IntStack();
  private readonly termSlots = new IntStack();
  /**
   * The candidate notes (whole matches, partial ones, those with some of the words, and whole then
   * partial), kept from one search to the next: made anew each search as arrays, they were ~0.3 MB
   * of garbage a search at 100k notes (a common word's candidates), most of a search's allocation.
   */
  private readonly candWhole = new IntStack();
  private readonly candPartial = new IntStack();
  private readonly candSome = new IntStack();
  private readonly candPool = new IntStack();
  /** Per term id: 1 + its clause index while proximity is measured, else 0. */
  private clauseMark = new Int8Array(0);
  /** Per note: 1 while its proximity is pending; its score before proximity; its title factor since. */
  private proxTodo = new Uint8Array(64);
  private proxBase = new Float64Array(64);
  private titleF = new Float64Array(64);
  /**
   * The query's term ids → the bits of the clauses each is in, while title boosts are computed. A
   * Map, not an array a term: titles are short, and 4 bytes a term were 19–37 MB for a dictionary
   * of 4.65M terms.
   */
  private readonly titleMark = new Map<number, number>();
  /**
   * Per term id: its list's live postings (its df), counted by scanning the list (a common word's
   * 100k+ postings at 100k notes). Kept while the index is unchanged: `dfAt` and `dfLive` are the
   * index's change count and live chunks it was counted at.
   */
  private readonly dfMemo = new Map<number, number>();
  private dfAt = -1;
  private dfLive = -1;
  /** A pruned term's candidate notes: their chunk ranges [rangeA[i], rangeB[i]), by first chunk (see `rangesOf`). */
  private rangeA = new Int32Array(64);
  private rangeB = new Int32Array(64);

  /**
   * The scratch grown to the index (`ensureScratch`), a step of its own, then the new pages of the
   * arrays every scored posting writes to (a chunk's score, its note's scores and clause mask) made
   * resident in steps of PREFAULT_PAGES, a zero written on each (they are zeros): touched for the
   * first time by the scoring itself, a fresh mapping's pages faulted one by one inside its steps
   * (~1,600 faults, 8–16 ms of a warm start's first common-word search at 100k notes).
   */
  private *growScratch(ix: IndexState): Generator<void, void, void> {
    const written = (): ArrayBufferView[] => [this.acc, this.noteAcc, this.noteTf, this.docMask];
    const before = written().map((a) => a.byteLength);
    if (!this.ensureScratch(ix)) return;
    yield;
    const grown = written();
    let pages = 0;
    for (let k = 0; k < grown.length; k++) {
      const a = grown[k];
      // The bytes past the old length are new (zeros): a zero written there changes nothing.
      const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
      for (let i = before[k]; i < bytes.length; i += PAGE_BYTES) {
        bytes[i] = 0;
        if (++pages % PREFAULT_PAGES === 0) yield;
      }
    }
  }

  /** True when it grew something. */
  private ensureScratch(ix: IndexState): boolean {
    // Grown with their contents: a search reads them as it would had they not grown.
    let grew = false;
    if (this.acc.length < ix.alive.length) {
      grew = true;
      const n = ix.alive.length;
      this.acc = grownArray(Float64Array, this.acc, n);
      this.cnt = grownArray(Uint16Array, this.cnt, n);
      this.onlyMark = grownArray(Uint8Array, this.onlyMark, n);
    }
    if (this.docMask.length < ix.slots.length) {
      grew = true;
      const cap = Math.max(64, ix.slots.length * 2);
      this.docMask = grownArray(Uint32Array, this.docMask, cap);
      this.docBest = grownArray(Float64Array, this.docBest, cap);
      this.docExcluded = grownArray(Uint8Array, this.docExcluded, cap);
      this.noteAcc = grownArray(Float64Array, this.noteAcc, cap);
      this.noteTf = grownArray(Float64Array, this.noteTf, cap);
      this.proxTodo = grownArray(Uint8Array, this.proxTodo, cap);
      this.proxBase = grownArray(Float64Array, this.proxBase, cap);
      this.titleF = grownArray(Float64Array, this.titleF, cap);
    }
    return grew;
  }

  /** True when chunk `id`'s body holds the term ids of `needle` in a row. */
  private hasSequence(ix: IndexState, id: number, needle: Int32Array): boolean {
    const doc = ix.slots[ix.chunkDoc[id]];
    return doc ? ix.reader.hasSequence(doc, ix.chunkOrd[id], needle) : false;
  }

  /**
   * The search's answer (its sections' contents still to be cut from the notes: `pending`) and its
   * notes' paths; `withHits` false: the paths only (no sections).
   */
  run(ix: IndexState, pq: ParsedQuery, req: SearchRequest, language: SearchLanguage, withHits: boolean): ScoredAnswer {
    const it = this.steps(ix, pq, req, language, withHits);
    for (;;) {
      const r = it.next();
      if (r.done) return r.value;
    }
  }

  /**
   * `run` in steps: it yields between its phases (a posting list's scores, the notes' best
   * sections, proximity, the title boost, the top) and within the long ones, every
   * `Scorer.stepItems` postings, sections or notes, where a caller may give the event loop back,
   * provided the index does not change before the next step. Ended early (`return()`), it leaves
   * its scratch space clean.
   */
  *steps(ix: IndexState, pq: ParsedQuery, req: SearchRequest, language: SearchLanguage, withHits: boolean): Generator<void, ScoredAnswer, void> {
    // The postings log merged first, a step at a time (at once, a search during the varied 100k-note
    // vault's build unpacked lists for 310 ms), then what came in since that merge began.
    while (!ix.mergeSome(() => true)) yield;
    ix.flushPostings();
    if (ix.dict.catchUpForSearch()) yield;
    const clauses = pq.clauses.slice(0, 31);
    if (clauses.length === 0 || ix.liveChunks === 0) return { answer: { res: { hits: [], total_files: 0, relaxed: false }, pending: [], want: null }, paths: [] };
    // Its scratch grown to the index (the first search at 100k notes: ~10 MB zeroed), a step of its own.
    yield* this.growScratch(ix);
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the generators below (function*, not arrows) need the scorer
    const self = this;
    const STEP = Scorer.searchesSoFar++ < COLD_SEARCHES ? Math.min(Scorer.coldStepItems, Scorer.stepItems) : Scorer.stepItems;
    const N = ix.liveChunks;
    const avg = ix.totalLen / N;
    const acc = this.acc;
    const docMask = this.docMask;
    // The chunks and notes this search scored (kept between searches: arrays pushed anew each time
    // were two thirds of a common word's scoring time).
    const touched = this.touched;
    const docsTouched = this.docsTouched;
    touched.n = 0;
    docsTouched.n = 0;
    const excludedDocs: number[] = [];
    const alive = ix.alive;
    const chunkDoc = ix.chunkDoc;
    const chunkLen = ix.chunkLen;
    const noteAcc = this.noteAcc;
    const noteTf = this.noteTf;
    const noteLen = ix.noteLen;
    const avgNote = ix.totalLen / Math.max(1, ix.docs.size);
    const termSlots = this.termSlots;
    termSlots.n = 0;
    let verified = 0;

    /** A term's list (as an array of lists: prefixes expand to several). */
    const listsOf = (t: string): PostingList[] => {
      const l = ix.lookup(t);
      return l && l.n ? [l] : [];
    };
    const one = (t: string): TermGroup => {
      const ls = listsOf(t);
      return { ls, w: ls.map(() => 1), ids: ls.map(() => ix.dict.get(t)!) };
    };
    if (this.dfAt !== ix.changeCount || this.dfLive !== ix.liveChunks || this.dfMemo.size > DF_MEMO_MAX) {
      this.dfMemo.clear();
      this.dfAt = ix.changeCount;
      this.dfLive = ix.liveChunks;
    }
    const dfMemo = this.dfMemo;
    /**
     * Counts list `l`'s live postings (term id `t`) into `dfMemo`, STEP postings a step (a common
     * word's list at 100k notes: ~300k); once while the index is unchanged.
     */
    const countDf = function* (l: PostingList, t: number): Generator<void, void, void> {
      if (dfMemo.has(t)) return;
      let df = 0;
      for (let a = 0; a < l.n; a += STEP) {
        const ids = l.ids;
        const b = Math.min(l.n, a + STEP);
        for (let i = a; i < b; i++) if (alive[ids[i]]) df++;
        if (b < l.n) yield;
      }
      dfMemo.set(t, df);
    };
    /** List `l`'s live postings, counted at once when `countDf` has not already. */
    const dfOf = (l: PostingList, t: number): number => {
      const it = countDf(l, t);
      while (!it.next().done);
      return dfMemo.get(t)!;
    };
    const idfMemo = new Map<TermGroup, number>();
    /**
     * A group's idf: the word's own as typed when the vault has it (a rare word is not made common by
     * a common form of its stem), else of its forms together.
     */
    const idfOf = (g: TermGroup): number => {
      const memo = idfMemo.get(g);
      if (memo !== undefined) return memo;
      let df = 0;
      if (g.w[0] === 1) df = dfOf(g.ls[0], g.ids[0]);
      else for (let k = 0; k < g.ls.length; k++) df += dfOf(g.ls[k], g.ids[k]);
      const idf = df === 0 ? 0 : Math.log(1 + (N - df + 0.5) / (df + 0.5));
      idfMemo.set(g, idf);
      return idf;
    };
    const termIdf = new Map<string, number>();
    const idfOfTerm = (t: string): number => {
      let v = termIdf.get(t);
      if (v === undefined) {
        const gs = termGroups({ kind: "term", term: t, prefix: false });
        termIdf.set(t, (v = gs.length ? idfOf(gs[0]) : 0));
      }
      return v;
    };
    /**
     * Makes list `l` (term `t`) ascend by chunk id, for skipping in it: a list restored from several
     * segments is sorted the first time (in place: the same postings, which every reader takes in any
     * order; see `RestoredLists.unsorted`), in steps; a search run at once between them may sort it first.
     */
    const ascending = function* (l: PostingList, t: number): Generator<void, void, void> {
      const ids = l.ids; // decodes a restored list first, which marks it
      const r = ix.restored;
      if (!r?.unsorted[t]) return;
      yield* sortPostingsSteps(ids, l.tfs, l.n, STEP, self.sortScratch, () => !r.unsorted[t]);
      r.unsorted[t] = 0;
    };
    /**
     * The notes touched so far that match every clause in `need`: their chunk ranges in `rangeA`/`rangeB`,
     * by first chunk (a note's chunks have consecutive ids); returns how many.
     */
    const rangesOf = (need: number): number => {
      if (this.rangeA.length < docsTouched.n) {
        this.rangeA = new Int32Array(Math.max(docsTouched.n, 2 * this.rangeA.length));
        this.rangeB = new Int32Array(this.rangeA.length);
      }
      const a = this.rangeA;
      let c = 0;
      let sorted = true;
      for (let i = 0; i < docsTouched.n; i++) {
        const slot = docsTouched.a[i];
        if ((docMask[slot] & need) !== need) continue;
        const first = ix.slots[slot]!.chunk0;
        if (c > 0 && first < a[c - 1]) sorted = false;
        a[c++] = first;
      }
      if (!sorted) a.subarray(0, c).sort();
      const b = this.rangeB;
      for (let i = 0; i < c; i++) b[i] = a[i] + ix.slots[chunkDoc[a[i]]]!.chunks;
      return c;
    };
    /**
     * Adds a term's scores (section and whole note), yielding every STEP postings (or candidate notes,
     * when it skips to them) and every STEP notes of the whole-note pass. `need`: docs must already
     * match these clause bits (AND pruning).
     */
    const addTerm = function* (g: TermGroup, bit: number, only: Set<number> | null, need: number): Generator<void, void, void> {
      // A list restored from disk and not decoded yet, decoded in steps (a common word's: ~300k postings).
      for (const l of g.ls) {
        const decoding = ix.settleSteps(l, STEP);
        if (decoding) yield* decoding;
      }
      for (let k = 0; k < g.ls.length; k++) yield* countDf(g.ls[k], g.ids[k]);
      const idf = idfOf(g);
      if (idf === 0) return;
      // `only` as marks per chunk id (a typed read in the loop, not a hash lookup), cleared however the search ends.
      const onlyMark = only ? self.onlyMark : null;
      if (only) for (const id of only) self.onlyMark[id] = 1;
      try {
        let ranges = -1;
        if (need !== 0) {
          let postings = 0;
          for (const l of g.ls) postings += l.n;
          if (self.skip && docsTouched.n * SKIP_RATIO < postings) {
            self.skipped++;
            ranges = rangesOf(need);
            for (let k = 0; k < g.ls.length; k++) yield* ascending(g.ls[k], g.ids[k]);
          }
        }
        // In pieces, in order: the same additions as one pass, so the same scores to the last bit.
        for (let k = 0; k < g.ls.length; k++) {
          const l = g.ls[k];
          if (ranges >= 0) {
            for (let r = 0; r < ranges; r += STEP) {
              const e = Math.min(ranges, r + STEP);
              addPostings(l.ids, l.tfs, l.n, self.rangeA.subarray(r, e), self.rangeB.subarray(r, e), e - r, g.w[k], idf, avg, onlyMark, need, bit, alive, chunkDoc, chunkLen, acc, docMask, noteTf, touched, docsTouched, termSlots);
              if (e < ranges) yield;
            }
          } else {
            for (let a = 0; a < l.n; a += STEP) {
              const e = Math.min(l.n, a + STEP);
              addPostings(l.ids.subarray(a, e), l.tfs.subarray(a, e), e - a, WHOLE_A, WHOLE_B, 1, g.w[k], idf, avg, onlyMark, need, bit, alive, chunkDoc, chunkLen, acc, docMask, noteTf, touched, docsTouched, termSlots);
              if (e < l.n) yield;
            }
          }
        }
        // The whole note as one document: its summed tf against its length.
        for (let i = 0; i < termSlots.n; i++) {
          const slot = termSlots.a[i];
          const tf = noteTf[slot];
          noteTf[slot] = 0;
          noteAcc[slot] += (idf * tf * (K1 + 1)) / (tf + K1 * (1 - NOTE_B + (NOTE_B * noteLen[slot]) / avgNote));
          if ((i + 1) % STEP === 0 && i + 1 < termSlots.n) yield;
        }
        termSlots.n = 0;
      } finally {
        if (only) for (const id of only) self.onlyMark[id] = 0;
        // Ended part-way: no note's term frequency left for the next search.
        for (let i = 0; i < termSlots.n; i++) noteTf[termSlots.a[i]] = 0;
        termSlots.n = 0;
      }
    };
    /** Chunks holding every term (intersection from the rarest list); `phrase`: in a row. */
    const allTermsChunks = (terms: string[], phrase: boolean): Set<number> => {
      const out = new Set<number>();
      const uniq = [...new Set(terms)];
      const cnt = this.cnt;
      const ls: PostingList[] = [];
      for (const t of uniq) {
        const l = ix.lookup(t);
        if (!l || l.n === 0) return out;
        ls.push(l);
      }
      ls.sort((a, b) => a.n - b.n);
      const seen: number[] = [];
      for (let k = 0; k < ls.length; k++) {
        const ids = ls[k].ids;
        const n = ls[k].n;
        for (let i = 0; i < n; i++) {
          const id = ids[i];
          if (!alive[id] || cnt[id] !== k) continue;
          if (k === 0) seen.push(id);
          cnt[id] = k + 1;
        }
      }
      const needle = phrase ? Int32Array.from(terms, (t) => ix.dict.get(t)!) : null;
      for (const id of seen) {
        if (cnt[id] === ls.length) {
          if (!needle || verified >= PHRASE_VERIFY_CAP) out.add(id);
          else {
            verified++;
            if (this.hasSequence(ix, id, needle)) out.add(id);
          }
        }
        cnt[id] = 0;
      }
      return out;
    };
    /** Chunks holding at least `min` of the distinct terms. */
    const someTermsChunks = (terms: string[], min: number): Set<number> => {
      const out = new Set<number>();
      const cnt = this.cnt;
      const seen: number[] = [];
      for (const t of new Set(terms)) {
        for (const l of listsOf(t)) {
          const ids = l.ids;
          for (let i = 0; i < l.n; i++) {
            const id = ids[i];
            if (!alive[id]) continue;
            if (cnt[id] === 0) seen.push(id);
            cnt[id]++;
          }
        }
      }
      for (const id of seen) {
        if (cnt[id] >= min) out.add(id);
        cnt[id] = 0;
      }
      return out;
    };
    const groupMemo = new Map<string, TermGroup[]>();
    /**
     * A term item's groups: a word is one group, its forms (the word as typed first, weighing most);
     * a prefix is one group per term it expands to.
     */
    const termGroups = (it: QueryItem): TermGroup[] => {
      if (it.kind !== "term") return [];
      const key = (it.prefix ? "*" : " ") + it.term;
      let gs = groupMemo.get(key);
      if (gs) return gs;
      if (it.prefix) gs = ix.expandPrefix(it.term).map(one);
      else {
        const own = ix.dict.get(it.term);
        const g: TermGroup = { ls: [], w: [], ids: [] };
        for (const id of ix.dict.forms(it.term, language)) {
          const l = ix.listAt(id);
          if (!l || l.n === 0) continue;
          g.ls.push(l);
          g.w.push(id === own ? 1 : FORM_WEIGHT);
          g.ids.push(id);
        }
        gs = [g];
      }
      gs = gs.filter((g) => g.ls.length > 0);
      groupMemo.set(key, gs);
      return gs;
    };
    /** Chunks a phrase-like item matches and the terms that score them (null for plain terms). */
    const itemChunks = (it: QueryItem): { chunks: Set<number>; terms: string[] } | null => {
      if (it.kind === "term") return null;
      const strict = allTermsChunks(it.terms, true);
      if (strict.size > 0 || !it.loose) return { chunks: strict, terms: it.terms };
      return { chunks: someTermsChunks(it.loose.terms, it.loose.min), terms: it.loose.terms };
    };
    const costOf = (clause: QueryItem[]): number => {
      let n = 0;
      for (const it of clause) {
        if (it.kind !== "term") return Number.MAX_SAFE_INTEGER; // phrases: scored last, after the pruning terms
        for (const g of termGroups(it)) for (const l of g.ls) n += l.n;
      }
      return n;
    };

    // Cheapest clauses first: later (common) terms only score notes that matched the earlier ones.
    const order = clauses.map((c, i) => ({ c, i, cost: costOf(c) })).sort((a, b) => a.cost - b.cost);
    const score = function* (prune: boolean): Generator<void, void, void> {
      let need = 0;
      for (const { c, i } of order) {
        const bit = 1 << i;
        for (const it of c) {
          const m = itemChunks(it);
          if (m === null) {
            for (const g of termGroups(it)) {
              yield* addTerm(g, bit, null, prune ? need : 0);
              yield;
            }
          } else if (m.chunks.size > 0) {
            for (const t of new Set(m.terms)) {
              yield* addTerm(one(t), bit, m.chunks, prune ? need : 0);
              yield;
            }
          }
        }
        need |= bit;
      }
    };
    /** The touched sections' and notes' scratch cleared, STEP sections or notes a step (from the end: what is left is still to clear). */
    const resetSteps = function* (): Generator<void, void, void> {
      while (touched.n > 0) {
        const e = Math.max(0, touched.n - STEP);
        for (let i = e; i < touched.n; i++) acc[touched.a[i]] = 0;
        touched.n = e;
        if (e > 0) yield;
      }
      while (docsTouched.n > 0) {
        const e = Math.max(0, docsTouched.n - STEP);
        for (let i = e; i < docsTouched.n; i++) {
          const s = docsTouched.a[i];
          docMask[s] = 0;
          self.docBest[s] = 0;
          noteAcc[s] = 0;
        }
        docsTouched.n = e;
        if (e > 0) yield;
      }
    };
    /** `resetSteps` at once. */
    const reset = (): void => {
      const it = resetSteps();
      while (!it.next().done);
    };
    const marked: number[] = [];
    /** Pool notes not measured yet (see `proxTodo` below). */
    let proxTodo: Slots = NO_SLOTS;
    const todo = this.proxTodo;
    try {
      yield* score(clauses.length > 1);

      // Exclusions remove whole notes.
      for (const it of pq.exclude) {
        const mark = (id: number) => {
          const slot = chunkDoc[id];
          if (!this.docExcluded[slot]) {
            this.docExcluded[slot] = 1;
            excludedDocs.push(slot);
          }
        };
        const m = itemChunks(it);
        if (m === null) {
          for (const g of termGroups(it)) {
            for (const l of g.ls) {
              const ids = l.ids;
              for (let i = 0; i < l.n; i++) if (alive[ids[i]]) mark(ids[i]);
            }
          }
        } else for (const id of m.chunks) mark(id);
      }

      const full = clauses.length === 31 ? 0x7fffffff : (1 << clauses.length) - 1;
      const docBest = this.docBest;
      const folder = (req.folder ?? "").replace(/^\/+|\/+$/g, "");
      const docExcluded = this.docExcluded;
      const narrowed = folder !== "" || req.filters !== undefined;
      const passes = (slot: number): boolean => {
        if (docExcluded[slot]) return false;
        if (!narrowed) return true; // touched slots hold live notes: no need to visit them
        const doc = ix.slots[slot];
        if (!doc) return false;
        if (folder && !isUnder(doc.path, folder)) return false;
        return !req.filters || filtersMatch(doc.tags, () => frontmatterOf(doc), req.filters);
      };
      /** The touched notes that match every clause (`all`) or some and pass the filters, in `into` (a view of it); STEP notes a step. */
      const candidates = function* (all: boolean, into: IntStack): Generator<void, Int32Array, void> {
        into.n = 0;
        into.room(docsTouched.n);
        const out = into.a;
        let n = 0;
        for (let i = 0; i < docsTouched.n; i++) {
          const s = docsTouched.a[i];
          if ((all ? docMask[s] === full : docMask[s] !== 0) && passes(s)) out[n++] = s;
          if ((i + 1) % STEP === 0 && i + 1 < docsTouched.n) yield;
        }
        into.n = n;
        return out.subarray(0, n);
      };
      /** Each touched note's score: its best section's fused with the whole note's (STEP sections or notes a step). */
      const best = function* (): Generator<void, void, void> {
        for (let a = 0; a < touched.n; a += STEP) {
          const e = Math.min(touched.n, a + STEP);
          for (let i = a; i < e; i++) {
            const id = touched.a[i];
            const slot = chunkDoc[id];
            if (acc[id] > docBest[slot]) docBest[slot] = acc[id];
          }
          yield;
        }
        // Fused: the best section and the whole note.
        for (let a = 0; a < docsTouched.n; a += STEP) {
          const e = Math.min(docsTouched.n, a + STEP);
          for (let i = a; i < e; i++) {
            const slot = docsTouched.a[i];
            docBest[slot] = (1 - NOTE_WEIGHT) * docBest[slot] + NOTE_WEIGHT * noteAcc[slot];
          }
          if (e < docsTouched.n) yield;
        }
      };
      yield* best();
      yield;
      const limit = Math.max(0, Math.floor(req.limit));
      let cands = yield* candidates(true, this.candWhole);
      // Notes with only some of the terms: asked for when fewer notes than the limit have them all.
      let partial: Int32Array = NO_SLOTS;
      if (cands.length < limit && clauses.length > 1) {
        // Score every term over every note; a partial match ranks by how many clauses it matches,
        // and always after the notes that match them all (whose scores this pass leaves the same).
        yield* resetSteps();
        yield* score(false);
        yield* best();
        yield;
        const some = yield* candidates(false, this.candSome);
        // Split in order, STEP notes a step (a loop: a typed array's filter calls its test for each note).
        const whole = this.candWhole;
        const part = this.candPartial;
        whole.n = part.n = 0;
        whole.room(some.length);
        part.room(some.length);
        for (let i = 0; i < some.length; i++) {
          const s = some[i];
          if (docMask[s] === full) whole.a[whole.n++] = s;
          else part.a[part.n++] = s;
          if ((i + 1) % STEP === 0) yield;
        }
        cands = whole.a.subarray(0, whole.n);
        partial = part.a.subarray(0, part.n);
        for (let i = 0; i < partial.length; i++) {
          const s = partial[i];
          docBest[s] = (docBest[s] * popcount(docMask[s])) / clauses.length;
          if ((i + 1) % STEP === 0) yield;
        }
        yield;
      }
      const relaxed = cands.length === 0 && partial.length > 0;

      // Proximity: notes whose best sections hold the query's words close together. Measured lazily:
      // a note of the pool whose score, even raised fully, stays below the ones that make the answer's
      // top is never measured (`settle`, below), which leaves every answer as measuring them all would.
      // The whole matches, then the partial ones: proximity's pool and the title boost's.
      const pool = partial.length ? this.candPool.joined(cands, partial) : cands;
      /**
       * The k best scores of `list` (empty when it holds fewer than k notes), taken in pieces of STEP
       * notes a step: at once, a selection over 100k candidates was one step of up to 42 ms on the
       * varied 100k-note vault.
       */
      const topIn = function* (list: Slots, k: number): Generator<void, TopK, void> {
        const top = new TopK(k);
        if (k > 0 && list.length >= k) {
          for (let j = 0; j < list.length; ) {
            const to = Math.min(list.length, j + STEP);
            top.fill(list, docBest, j, to);
            j = to;
            if (j < list.length) yield;
          }
          top.index();
        }
        return top;
      };
      /** How many clauses proximity can tell apart, and the most its factor can be. */
      let distinct = 0;
      let maxF = 1;
      // proxTodo: the pool notes not measured yet, and per slot (`todo`) 1 while it is one of them.
      /** A pending note's score before proximity, and the title boost's factor applied since. */
      const proxBase = this.proxBase;
      const titleF = this.titleF;
      if (clauses.length > 1 && pool.length > 0) {
        if (this.clauseMark.length < ix.dict.size) this.clauseMark = new Int8Array(Math.max(ix.dict.size, 2 * this.clauseMark.length));
        clauses.forEach((c, i) => {
          const mark = (id: number) => {
            this.clauseMark[id] = i + 1;
            marked.push(id);
          };
          for (const it of c) {
            if (it.kind === "term") for (const g of termGroups(it)) for (const id of g.ids) mark(id);
            else for (const t of it.terms) {
              const id = ix.dict.get(t);
              if (id !== undefined) mark(id);
            }
          }
        });
        // The clauses proximity can tell apart: a term in two clauses ("time time") marks the last one
        // only, so a note's run covers at most `distinct` clauses and its factor is at most `maxF`.
        let bits = 0;
        for (const id of marked) bits |= 1 << (this.clauseMark[id] - 1);
        distinct = popcount(bits);
        maxF = 1 + (PROXIMITY_BOOST * distinct) / clauses.length;
        let near: Slots = pool;
        if (near.length > PROXIMITY_POOL) {
          const floor = (yield* topIn(near, PROXIMITY_POOL)).min() / (1 + PROXIMITY_BOOST);
          const kept: number[] = [];
          for (let i = 0; i < near.length; i++) if (docBest[near[i]] >= floor) kept.push(near[i]);
          near = kept;
        }
        yield;
        // Fewer than two clauses to tell apart: no note's factor can differ from 1.
        if (distinct >= 2) proxTodo = near;
        for (let i = 0; i < proxTodo.length; i++) {
          const s = proxTodo[i];
          todo[s] = 1;
          proxBase[s] = docBest[s];
          titleF[s] = 1;
        }
      }
      /** Measures pending note `s`: its score becomes (before proximity × proximity's factor) × the title's. */
      // The most proximity's share can be: every clause the dictionary knows in one run of at most
      // PROXIMITY_SPAN tokens each. Once a section reaches it, neither the rest of that section nor
      // the note's next sections are read (the same share either way).
      const pMost = distinct / clauses.length;
      const enough = PROXIMITY_SPAN * distinct;
      const measure = (s: number): void => {
        todo[s] = 0;
        const marks = this.clauseMark;
        const doc = ix.slots[s]!;
        const ids = scoredChunks(doc, acc);
        if (ids.length > PROXIMITY_SECTIONS) ids.sort((a, b) => acc[b] - acc[a]).length = PROXIMITY_SECTIONS;
        // The title and aliases are a run of their own (not in the body's sequence).
        let inTitle = 0;
        for (let j = 0; j < doc.titles; j++) {
          const c = marks[titleId(doc, j)] - 1;
          if (c >= 0) inTitle |= 1 << c;
        }
        const tc = popcount(inTitle);
        let p = tc >= 2 ? tc / clauses.length : 0;
        for (let k = 0; k < ids.length && p < pMost; k++) {
          const r = ix.reader.closestRun(doc, ix.chunkOrd[ids[k]], marks, distinct, enough);
          if (r.covered < 2) continue;
          p = Math.max(p, Math.min(1, (PROXIMITY_SPAN * r.covered) / r.span) * (r.covered / clauses.length));
        }
        let v = proxBase[s];
        v *= 1 + PROXIMITY_BOOST * p;
        if (titleF[s] !== 1) v *= titleF[s];
        docBest[s] = v;
      };
      if (this.eager) for (let i = 0; i < proxTodo.length; i++) measure(proxTodo[i]);
      /** The most a pending note's score can become once measured (maxF times it, rounding aside). */
      const most = (s: number): number => docBest[s] * maxF * (1 + 1e-9);
      /**
       * Measures the pending notes of `list` (best first) that could reach the k-th best score of
       * `list`, which rises as they are measured; returns that k-th best score, the same as measuring
       * them all would give (-Infinity when `list` holds fewer than k notes). A note left pending stays
       * below it whatever its proximity: it can neither be among the k best nor move the k-th.
       */
      const kthSettled = function* (list: Slots, k: number): Generator<void, number, void> {
        // The k best scores, then the pending notes that could reach them, each pass over the list in
        // pieces of STEP (a common word's 100k notes: ~30 ms in the first search of a process).
        const top = yield* topIn(list, k);
        // The pending notes that could reach it, best first, taken one by one (most are never taken: no sort of them all).
        const min = top.min();
        const reach: number[] = [];
        for (let j = 0; j < list.length; ) {
          const to = Math.min(list.length, j + STEP);
          for (let i = j; i < to; i++) {
            const s = list[i];
            if (todo[s] === 1 && most(s) >= min) reach.push(s);
          }
          j = to;
          if (j < list.length) yield;
        }
        let measured = 0;
        for (const s of new BestFirst(reach, docBest)) {
          if (most(s) < top.min()) break;
          measure(s);
          top.update(s, docBest[s]);
          // A step every few notes: a query of common words on a vault of long notes measured
          // hundreds of them in one step (300–440 ms on the varied 100k-note vault).
          if (++measured % MEASURES_PER_STEP === 0) yield;
        }
        return top.min();
      };
      /** Measures the pending notes of `list` (whole matches, or partial ones) that could be among its `k` best. */
      const settle = function* (whole: boolean, k: number): Generator<void, void, void> {
        if (proxTodo.length === 0 || k <= 0) return;
        const mine: number[] = [];
        for (let i = 0; i < proxTodo.length; i++) if ((docMask[proxTodo[i]] === full) === whole) mine.push(proxTodo[i]);
        // The pool's notes in the list: the rest of it is below the pool (the pool's floor), so
        // the list's k-th best is at least theirs.
        yield* kthSettled(mine, k);
      };

      yield;
      // Title boost: notes whose title or alias holds the query's terms.
      const want = clauses.map((c) => c.flatMap((it) => (it.kind === "term" ? [it] : it.terms.map((t) => ({ kind: "term" as const, term: t, prefix: false })))));
      const wantCount = want.reduce((n, c) => n + (c.length ? 1 : 0), 0);
      // Each clause weighs its rarest term's idf: a title holding the rare word of the query counts more.
      const weights = want.map((c) => c.reduce((m, it) => Math.max(m, it.prefix ? 1 : idfOfTerm(it.term)), 0));
      const totalWeight = weights.reduce((a, b) => a + b, 0);
      if (wantCount > 0 && totalWeight > 0) {
        // Boost among the best candidates only (a title match lifts a note by at most 2.5×).
        let boostSet: Slots = pool;
        if (pool.length > TITLE_BOOST_POOL) {
          // The pool's score floor from a heap of its best, not a sort (sorting every candidate was a third of a common query's time).
          // The floor is that of the scores after proximity: the pending notes that could reach it are
          // measured (kthSettled). No pending note is below the cut, before or after it is measured
          // (see PROXIMITY_BOOST): the notes that pass the cut, and those the floor keeps, are the same
          // as measuring them all would give.
          const floor = proxTodo.length ? yield* kthSettled(pool, TITLE_BOOST_POOL) : (yield* topIn(pool, TITLE_BOOST_POOL)).min();
          const cut = floor / (1 + TITLE_BOOST + TITLE_EXACT_BOOST);
          // Those the cut keeps, or when they are too many, those at the floor: counted first, so
          // that only the set kept is made (for a common word, the cut kept thousands of notes).
          let over = 0;
          for (let i = 0; i < pool.length; i++) if (docBest[pool[i]] >= cut) over++;
          const min = over > TITLE_BOOST_POOL * 4 ? floor : cut;
          const kept: number[] = [];
          for (let i = 0; i < pool.length; i++) if (docBest[pool[i]] >= min) kept.push(pool[i]);
          boostSet = kept;
        }
        // A title term is in clause i when it is one of the clause's terms (or their forms) or starts
        // with one of its prefixes: bit i of its mask (marked per term id, prefixes tested per title term).
        const dict = ix.dict;
        const mark = this.titleMark;
        mark.clear();
        const wantPrefixes: { p: string; bit: number }[] = [];
        want.forEach((c, i) => {
          for (const it of c) {
            if (it.prefix) wantPrefixes.push({ p: it.term, bit: 1 << i });
            else
              for (const x of ix.dict.forms(it.term, language)) mark.set(x, (mark.get(x) ?? 0) | (1 << i));
          }
        });
        const maskOf = (x: number): number => {
          let m = mark.get(x) ?? 0;
          for (const { p, bit } of wantPrefixes) if (dict.startsWith(x, p)) m |= bit;
          return m;
        };
        for (let b = 0; b < boostSet.length; b++) {
          const s = boostSet[b];
          const doc = ix.slots[s]!;
          const tn = doc.titles;
          if (tn === 0) continue;
          let inTitle = 0;
          let inQuery = 0;
          for (let j = 0; j < tn; j++) {
            const m = maskOf(titleId(doc, j));
            inTitle |= m;
            if (m !== 0) inQuery++;
          }
          if (inTitle === 0) continue;
          let hit = 0;
          let w = 0;
          for (let i = 0; i < want.length; i++) {
            if (inTitle & (1 << i)) {
              hit++;
              w += weights[i];
            }
          }
          const cov = w / totalWeight;
          const precision = inQuery / tn;
          let f = 1 + TITLE_BOOST * cov * precision;
          if (hit === wantCount && precision === 1) f += TITLE_EXACT_BOOST;
          docBest[s] *= f;
          if (todo[s] === 1) titleF[s] = f;
        }
        mark.clear();
      }

      const better = (a: number, b: number) => docBest[a] > docBest[b] || (docBest[a] === docBest[b] && ix.slots[a]!.path < ix.slots[b]!.path);
      // Top-k by insertion: most candidates fall below the current k-th score and cost one comparison.
      const topOf = (list: Slots, k: number): number[] => {
        const top: number[] = [];
        for (let j = 0; j < list.length; j++) {
          const s = list[j];
          if (top.length === k && (k === 0 || !better(s, top[k - 1]))) continue;
          let i = top.length < k ? top.length : k - 1;
          if (top.length < k) top.push(s);
          while (i > 0 && better(s, top[i - 1])) {
            top[i] = top[i - 1];
            i--;
          }
          top[i] = s;
        }
        return top;
      };
      yield;
      yield* settle(true, limit);
      const whole = topOf(cands, limit);
      yield* settle(false, limit - whole.length);
      const top = partial.length ? whole.concat(topOf(partial, limit - whole.length)) : whole;
      // What a partial match lacks: each clause it missed, as the query holds it.
      const clauseText = clauses.map((c) => c.map((it) => (it.kind === "term" ? `${it.term}${it.prefix ? "*" : ""}` : `"${it.terms.join(" ")}"`)).join(" OR "));
      const missingOf = (slot: number): string[] => clauseText.filter((_t, i) => !(docMask[slot] & (1 << i)));

      const paths = top.map((slot) => ix.slots[slot]!.path);
      // The sections' contents are cut from the notes afterwards (see sections.ts): the index holds no texts.
      const pending: PendingSection[] = [];
      const hits = (withHits ? top : []).map((slot) => {
        const doc = ix.slots[slot]!;
        const chunkIds = scoredChunks(doc, acc).sort((a, b) => acc[b] - acc[a]);
        const sections: SearchSection[] = [];
        for (const id of chunkIds.slice(0, Math.max(0, req.chunksPerFile))) {
          const o = ix.chunkOrd[id];
          const section: SearchSection = { heading: headingOf(doc, o), content: "", score: round(acc[id]), line_start: span(doc, o, LINE_A), line_end: span(doc, o, LINE_B) };
          sections.push(section);
          pending.push({ section, doc, o });
        }
        const hit: SearchHit = { path: doc.path, title: basenameOf(doc.path), folder: parentOf(doc.path), score: round(docBest[slot]), frontmatter: frontmatterOf(doc), sections };
        if (docMask[slot] !== full) hit.missing = missingOf(slot);
        return hit;
      });

      const res: SearchResponse = { hits, total_files: relaxed ? partial.length : cands.length, relaxed };
      if (partial.length && !relaxed) res.partial_files = partial.length;
      const wantIds = pending.length ? new WantedIds(positiveTermSet(pq, language), ix.dict, language) : null;
      // The scratch cleared in steps too (`finally` clears whatever an early end leaves).
      yield* resetSteps();
      return { answer: { res, pending, want: wantIds }, paths };
    } finally {
      // Done or ended early: the scratch space as it was.
      reset();
      for (const s of excludedDocs) this.docExcluded[s] = 0;
      for (let i = 0; i < proxTodo.length; i++) todo[proxTodo[i]] = 0;
      for (const id of marked) this.clauseMark[id] = 0;
    }
  }
}

/** The one range that is a whole list (`addPostings` reading it through). */
const WHOLE_A = Int32Array.of(-1);
const WHOLE_B = Int32Array.of(0x7fffffff);

/**
 * One posting list's BM25 (weight `wk`) into the chunks' scores (`acc`) and their notes' summed tf
 * (`noteTf`); `only`: the chunks marked 1 alone; `need`: notes already matching these clause bits
 * alone. Only the chunk ids in the ranges `[ra[r], rb[r])` (`nr` of them, in order) are read, found
 * in the list (whose ids ascend) by galloping: the candidate notes' chunks when the scorer skips
 * (`rangesOf`), else `WHOLE_A`/`WHOLE_B`, the list read through. Either way the same postings in
 * the same order pass. A function of its own, its arrays passed in: V8 keeps them in registers
 * through the loop.
 */
function addPostings(
  ids: Int32Array,
  tfs: Uint8Array,
  n: number,
  ra: Int32Array,
  rb: Int32Array,
  nr: number,
  wk: number,
  idf: number,
  avg: number,
  only: Uint8Array | null,
  need: number,
  bit: number,
  alive: Uint8Array,
  chunkDoc: Int32Array,
  chunkLen: Float32Array,
  acc: Float64Array,
  docMask: Uint32Array,
  noteTf: Float64Array,
  touchedStack: IntStack,
  docsStack: IntStack,
  slotsStack: IntStack,
): void {
  // Each posting pushes at most one id on each stack.
  touchedStack.room(n);
  docsStack.room(n);
  slotsStack.room(n);
  const touched = touchedStack.a;
  let nt = touchedStack.n;
  const docsTouched = docsStack.a;
  let nd = docsStack.n;
  const termSlots = slotsStack.a;
  let ns = slotsStack.n;
  const c = wk * idf * (K1 + 1);
  const normA = K1 * (1 - B);
  const normB = (K1 * B) / avg;
  let i = 0;
  for (let r = 0; r < nr && i < n; r++) {
    const from = ra[r];
    const to = rb[r];
    i = gallop(ids, from, i, n);
    for (; i < n; i++) {
      const id = ids[i];
      if (id >= to) break;
      if (!alive[id] || (only !== null && only[id] === 0)) continue;
      const slot = chunkDoc[id];
      if (need !== 0 && (docMask[slot] & need) !== need) continue;
      const tf = TF_OF[tfs[i]];
      const s = (c * tf) / (tf + normA + normB * chunkLen[id]);
      if (acc[id] === 0) touched[nt++] = id;
      acc[id] += s;
      if (docMask[slot] === 0) docsTouched[nd++] = slot;
      docMask[slot] |= bit;
      if (noteTf[slot] === 0) termSlots[ns++] = slot;
      noteTf[slot] += wk * tf;
    }
  }
  touchedStack.n = nt;
  docsStack.n = nd;
  slotsStack.n = ns;
}

/** Ints on a typed array that grows: scratch kept from one search to the next. */
class IntStack {
  a = new Int32Array(1024);
  n = 0;

  /** Makes room for `k` more. */
  room(k: number): void {
    if (this.n + k <= this.a.length) return;
    this.a = grownArray(Int32Array, this.a, Math.max(this.n + k, 2 * this.a.length));
  }

  /** Holds `x` then `y`, and nothing else; a view of them. */
  joined(x: Int32Array, y: Int32Array): Int32Array {
    this.n = 0;
    this.room(x.length + y.length);
    this.a.set(x, 0);
    this.a.set(y, x.length);
    this.n = x.length + y.length;
    return this.a.subarray(0, this.n);
  }
}

/** No slots (a list of none). */
const NO_SLOTS: Int32Array = new Int32Array(0);

/**
 * Note slots in a list: a view of a scratch array (the candidates), or an array of a few of them.
 * Read by index, not `for…of`: over both kinds, V8 made an iterator result a note (~0.9 MB a search
 * for a common word's partial matches at 100k notes).
 */
type Slots = ArrayLike<number>;

/** Slots in order of their scores, best first (ties in no set order), by a max-heap popped lazily. */
class BestFirst implements Iterable<number> {
  constructor(
    private readonly a: number[],
    private readonly score: Float64Array,
  ) {}

  *[Symbol.iterator](): Iterator<number> {
    const a = this.a;
    let n = a.length;
    for (let i = (n >> 1) - 1; i >= 0; i--) heapDown(a, n, this.score, i);
    while (n > 0) {
      const top = a[0];
      a[0] = a[--n];
      if (n > 0) heapDown(a, n, this.score, 0);
      yield top;
    }
  }
}

/**
 * The k largest scores of a list of slots, as a min-heap: `min()` is the k-th largest (-Infinity
 * while fewer than k), kept as a slot's score rises (`update`). Scores only rise: a slot that falls
 * is not replaced by one outside the heap.
 */
export class TopK {
  private readonly val: Float64Array;
  private readonly slot: Int32Array;
  private readonly at = new Map<number, number>();
  private n = 0;

  /** With `list`, its k largest scores at once; without, empty, to be filled in pieces (`fill`, then `index`). */
  constructor(
    private readonly k: number,
    list?: ArrayLike<number>,
    score?: Float64Array,
  ) {
    this.val = new Float64Array(k);
    this.slot = new Int32Array(k);
    if (!list || !score || list.length < k || k === 0) return;
    this.fill(list, score, 0, list.length);
    this.index();
  }

  /**
   * Takes slots `list[from, to)` in (distinct; only when the whole list holds k or more: with fewer,
   * the heap starts empty and `update` fills it). Then `index` once every piece is in.
   */
  fill(list: ArrayLike<number>, score: Float64Array, from: number, to: number): void {
    const k = this.k;
    for (let j = from; j < to; j++) {
      const s = list[j];
      const v = score[s];
      if (this.n < k) {
        this.val[this.n] = v;
        this.slot[this.n] = s;
        this.upFill(this.n++);
      } else if (v > this.val[0]) {
        this.val[0] = v;
        this.slot[0] = s;
        this.downFill(0);
      }
    }
  }

  /** Maps the filled slots to their heap places (for `update`). */
  index(): void {
    for (let i = 0; i < this.n; i++) this.at.set(this.slot[i], i);
  }

  min(): number {
    return this.n < this.k ? -Infinity : this.val[0];
  }

  /** Slot `s`'s score is now `v` (at least what it was). */
  update(s: number, v: number): void {
    if (this.k === 0) return;
    const i = this.at.get(s);
    if (i !== undefined) {
      this.val[i] = v;
      this.down(i);
    } else if (this.n < this.k) {
      this.val[this.n] = v;
      this.slot[this.n] = s;
      this.at.set(s, this.n);
      this.up(this.n++);
    } else if (v > this.val[0]) {
      this.at.delete(this.slot[0]);
      this.val[0] = v;
      this.slot[0] = s;
      this.at.set(s, 0);
      this.down(0);
    }
  }

  private upFill(i: number): void {
    const v = this.val[i];
    const s = this.slot[i];
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.val[p] <= v) break;
      this.val[i] = this.val[p];
      this.slot[i] = this.slot[p];
      i = p;
    }
    this.val[i] = v;
    this.slot[i] = s;
  }

  private downFill(i: number): void {
    const v = this.val[i];
    const s = this.slot[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.n) break;
      const c = l + 1 < this.n && this.val[l + 1] < this.val[l] ? l + 1 : l;
      if (v <= this.val[c]) break;
      this.val[i] = this.val[c];
      this.slot[i] = this.slot[c];
      i = c;
    }
    this.val[i] = v;
    this.slot[i] = s;
  }

  private swap(i: number, j: number): void {
    const v = this.val[i];
    const s = this.slot[i];
    this.val[i] = this.val[j];
    this.slot[i] = this.slot[j];
    this.val[j] = v;
    this.slot[j] = s;
    this.at.set(this.slot[i], i);
    this.at.set(s, j);
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.val[p] <= this.val[i]) return;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    for (;;) {
      const l = 2 * i + 1;
      if (l >= this.n) return;
      const c = l + 1 < this.n && this.val[l + 1] < this.val[l] ? l + 1 : l;
      if (this.val[i] <= this.val[c]) return;
      this.swap(i, c);
      i = c;
    }
  }
}

/** The ids of `doc`'s chunks that scored (in order). */
function scoredChunks(doc: DocEntry, acc: Float64Array): number[] {
  const out: number[] = [];
  for (let id = doc.chunk0, end = doc.chunk0 + doc.chunks; id < end; id++) if (acc[id] > 0) out.push(id);
  return out;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function popcount(x: number): number {
  let n = 0;
  while (x) {
    n += x & 1;
    x >>>= 1;
  }
  return n;
}

/** A note's tags as `filters` compares them: frontmatter and inline, lower case, without `#`. */
export function filterTags(meta: NoteMetadata | null): string[] {
  const tags = new Set<string>();
  for (const t of frontmatterTags(meta?.frontmatter)) tags.add(t.slice(1).toLowerCase());
  for (const t of meta?.tags ?? []) tags.add(t.tag.replace(/^#/, "").toLowerCase());
  return [...tags];
}

/** Frontmatter filters: lists contain the value, strings equal it (case-insensitive); `tags` include inline and nested tags. */
export function matchesFilters(doc: { tags: readonly string[]; frontmatter: Record<string, unknown> }, filters: Record<string, string | number | boolean>): boolean {
  return filtersMatch(doc.tags, () => doc.frontmatter, filters);
}

/** `matchesFilters` for a note's `tags` (as `filterTags` gives them) and its frontmatter, asked for only when a filter is not on tags. */
function filtersMatch(tags: readonly string[], frontmatter: () => Record<string, unknown>, filters: Record<string, string | number | boolean>): boolean {
  let fm: Record<string, unknown> | null = null;
  for (const [key, raw] of Object.entries(filters)) {
    const want = String(raw).trim().toLowerCase();
    if (key === "tags" || key === "tag") {
      const w = want.replace(/^#/, "");
      if (!tags.some((t) => t === w || t.startsWith(w + "/"))) return false;
      continue;
    }
    fm ??= frontmatter();
    let v = own(fm, key);
    if (v === undefined) {
      const k = Object.keys(fm).find((x) => x.toLowerCase() === key.toLowerCase());
      if (k !== undefined) v = fm[k];
    }
    if (v === undefined || v === null) return false;
    const vals = Array.isArray(v) ? v : [v];
    if (!vals.some((x) => (typeof x === "string" || typeof x === "number" || typeof x === "boolean") && String(x).trim().toLowerCase() === want)) return false;
  }
  return true;
}
