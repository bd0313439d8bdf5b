/**
 * Loading a saved index: the term dictionary, each segment's notes and term header (checked), the
 * posting lists laid out in one buffer with their postings left encoded, then decoded on first use or
 * in background steps. Owns the loading state; it fills the index only through what loading needs,
 * and reads no files itself (the service hands it each segment's blobs).
 */
import { TermDict } from "../tokenize";
import { decodePostings, unzig, VarintReader } from "./codec";
import { CHUNK_NUMS, LEN, LINE_A, LINE_B, SEQ_A, SEQ_B, span, type DocEntry } from "./doc";
import type { IndexState } from "./index-state";
import type { PersistedDoc, RestoredBlobs } from "./persist";
import { markPostings, postingBuffer, readMarks, sortPostings } from "./postings";
import { Carver } from "./carve";
import { freeBuffers } from "../../memory";
import { rampedSteps } from "../../time-slice";
import { hash53OfHashText } from "../../hash";

/** What a segment's loading keeps of its blobs until its notes are registered. */
type KeptBlobs = Pick<RestoredBlobs, "postings" | "seq">;
/** The blobs restoreSegment keeps beyond its call (KeptBlobs): never to be given scratch space. */
export const KEPT_BLOBS: ReadonlySet<string> = new Set<keyof KeptBlobs>(["postings", "seq"]);

/** `restoreSegmentSteps` yields every this many notes, and every RESTORE_TERMS terms of a segment's header. */
const RESTORE_PIECE = 64;
const RESTORE_TERMS = 8192;

/** A restored entry's `spans` until its segment's are carved. */
const NO_SPANS = new Int32Array(0);

/** Chunk ids above this are taken for corruption when loading (the segment is indexed again). */
const MAX_CHUNK_ID = 1 << 26;

const utf8d = new TextDecoder();
/** `finishRestore` sums the segments' posting counts at most this many terms at a time (256 KB of counts)… */
const COUNT_BLOCK = 1 << 16;
/**
 * …and about this many segments' term entries a step: at 100k notes of the bench's vault every term
 * is in most of the 256 segments, and one block of 65,536 terms was one step of 40–46 ms.
 */
const COUNT_STEP_ENTRIES = 1 << 18;

/** How many terms `finishRestore` sums a step, for a dictionary of `terms` whose segments list `entries` terms in all. */
export function countBlock(terms: number, entries: number): number {
  return Math.max(256, Math.min(COUNT_BLOCK, Math.floor((terms * COUNT_STEP_ENTRIES) / Math.max(1, entries))));
}

/**
 * Adds to `counts` the postings of every term below `end` in each segment's term header, from its
 * cursor on (`cursors`, moved past them): the segments' term ids ascend.
 */
function sumCounts(counts: Int32Array, end: number, segs: readonly { gs: Int32Array; ns: Int32Array }[], cursors: Int32Array): void {
  for (let s = 0; s < segs.length; s++) {
    const { gs, ns } = segs[s];
    let i = cursors[s];
    for (; i < gs.length && gs[i] < end; i++) counts[gs[i]] += ns[i];
    cursors[s] = i;
  }
}

/** The index of `v` in the ascending array `a`, or -1. */
function findSorted(a: Int32Array, v: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const x = a[mid];
    if (x === v) return mid;
    if (x < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/**
 * A saved index with this many segments or more (~12k notes) keeps its encoded postings in carved
 * chunks (see carve.ts) until their lists are decoded; a chunk is given back whole when the last list
 * in it is. Read from a segment's file they were ~0.3 MB buffers each, allocated between long-lived
 * ones of the notes loaded at the same time: the allocator's heap kept their room (in-process RSS
 * after a warm start at 100k notes: 618 -> 572 MB). (The term sequences, kept as long as their
 * notes, gained nothing measurable in carved chunks once loading's short-lived buffers were
 * carved too: 657 vs 662 MB.)
 */
const ARENA_SEGMENTS = 32;

/**
 * Where `decodeLong` stands in term g's list: the next segment whose part it decodes, the postings
 * decoded so far and from how many parts, their ids' bounds; then (phase 1) the next posting to mark,
 * the lost segments' postings (id 0) met, and (phase 2) the next id to read back and where it goes.
 */
interface LongDecode {
  g: number;
  seg: number;
  fill: number;
  parts: number;
  phase: 0 | 1 | 2;
  lo: number;
  hi: number;
  i: number;
  zeros: number;
  id: number;
  o: number;
}

/** Terms `decodeSomeLists` decodes in one block at most, and its scratch (what each term's list has filled, its parts). */
const DECODE_BLOCK = 4096;
let blockFill = new Int32Array(0);
let blockParts = new Uint16Array(0);

/** `a[0, n)` copied into room carved from `carver` (a copy of its own when too large to carve). */
function carveInts(a: Int32Array, n: number, carver: Carver): Int32Array {
  const room = carver.take(n * 4);
  if (!room) return a.slice(0, n);
  const out = new Int32Array(room.buffer, room.byteOffset, n);
  out.set(a.subarray(0, n));
  return out;
}

export class SegmentLoader {
  /**
   * The most postings of a block of several terms in `decodeSomeLists`, and the work between two
   * looks at its deadline (tests lower it). A longer list is a block, and a step, of its own.
   */
  static blockPostings = 16384;
  /**
   * Lists of at least this many postings decoded in the background are sorted by chunk id there too
   * (see `RestoredLists.unsorted`): the first search skipping in a long list would otherwise sort it
   * (tests lower it).
   */
  static sortEarly = 2048;
  /**
   * The segments read, until `finishRestore`: their notes' entries already made (slot unset), so that
   * what the parsed JSON made dies young. Kept until every segment was read, the parsed notes were
   * promoted to V8's old space and then let go: ~30 MB of holes there at 100k notes.
   */
  private pending: { k: number; docs: DocEntry[]; b: KeptBlobs; gs: Int32Array; ns: Int32Array; offs: Int32Array }[] = [];
  /**
   * After loading, the segments' postings still encoded: each list is decoded on first use (see
   * `PostingList.pending`) or by `decodeSomeLists` in the background. `owner` tags each chunk id with
   * its segment (k + 1) to check every posting; `left` counts the lists not decoded yet.
   */
  private lazy: {
    segs: { k: number; src: Uint8Array; gs: Int32Array; ns: Int32Array; offs: Int32Array; failed: boolean }[];
    owner: Uint16Array;
    left: number;
    /** `decodeSomeLists`' walk: the first term not visited yet, and each segment's first term index not passed. */
    next: number;
    at: Int32Array;
    chunks: readonly ArrayBufferLike[];
  } | null = null;
  /** A long list `decodeSomeLists` decodes and sorts across calls (see `decodeLong`), while it does. */
  private long: LongDecode | null = null;
  /** `decodeLong`'s marks: zeros, one per chunk id up to the largest of a list it sorts (a tf code + 1 while it sorts). */
  private marks = new Uint16Array(0);
  private pendingPaths = new Set<string>();
  /** Where the segments' encoded postings are kept until decoded (a big index only; see ARENA_SEGMENTS). */
  private arena: Carver | null = null;
  /** Loading: chunk id → 1 + the segment that holds it (0: none). */
  private owner = new Uint16Array(0);
  /** Loading: the largest chunk id read (the per-chunk arrays are grown to it once, in a task of their own). */
  private topChunk = 0;

  constructor(private readonly ix: IndexState) {}

  /** Forgets a load under way (the index was cleared). */
  reset(): void {
    this.pending = [];
    this.pendingPaths = new Set();
    this.owner = new Uint16Array(0);
    this.topChunk = 0;
    this.lazy = null;
    this.arena = null;
    this.dropLong();
    this.marks = new Uint16Array(0);
  }

  /**
   * Starts from a persisted dictionary (before any `restoreSegment`), calling `yieldNow` between
   * steps: in bulk (`TermDict.restoreLines`), or, for bytes it declines (which our writer never
   * makes), as `TextDecoder` reads them (`TermDict.restoreDecoded`).
   */
  async restoreDict(names: Uint8Array, yieldNow: () => Promise<void>): Promise<void> {
    this.ix.clear();
    const run = async <T>(steps: Generator<void, T, void>): Promise<T> => {
      for (let r = steps.next(); ; r = steps.next()) {
        if (r.done) return r.value;
        await yieldNow();
      }
    };
    let dict = new TermDict();
    if (!(await run(dict.restoreLines(names)))) {
      dict = new TermDict();
      await run(dict.restoreDecoded(names));
    }
    this.ix.dict = dict;
  }

  /**
   * Where loading may put a blob of `size` bytes it will give to restoreSegment as `key`: carved room
   * for the postings of a big index (so they are not copied again), else undefined (a buffer of its
   * own). Call after `segCount` is set.
   */
  room(key: string, size: number): Uint8Array | undefined {
    if (this.ix.segCount < ARENA_SEGMENTS) return undefined;
    if (key === "postings") return (this.arena ??= new Carver()).take(size);
    if (key === "seq") return (this.ix.keptArena ??= new Carver()).take(size);
    return undefined;
  }

  /**
   * Loading, step 1 of 2, one call per segment: decodes and checks a persisted segment's notes and
   * its term header (not its postings). Throws when its data is inconsistent (the segment is then
   * left out; its notes are indexed again).
   */
  restoreSegment(k: number, b: RestoredBlobs): void {
    const steps = this.restoreSegmentSteps(k, b);
    while (!steps.next().done);
  }

  /**
   * `restoreSegment` in pieces: yields after the notes' JSON is parsed, every RESTORE_PIECE notes
   * (their entries made) and every RESTORE_TERMS terms of the header, where the caller may give the event loop back (the
   * blobs must stay as they are until it is done). A warm start's first segments run before V8 has
   * optimised this code: one segment (~400 notes at 100k) was one step of 45–59 ms.
   */
  *restoreSegmentSteps(k: number, b: RestoredBlobs): Generator<void, void, void> {
    const docs = JSON.parse(utf8d.decode(b.docs)) as (PersistedDoc | undefined)[];
    yield;
    const mine: number[] = [];
    const tag = k + 1;
    // The segment's notes' numbers, in order, in one array its notes share (see DocEntry.spans).
    let spans = new Int32Array(Math.max(64, docs.length * 4 * CHUNK_NUMS));
    const room = (k: number): void => {
      if (sn + k <= spans.length) return;
      const grown = new Int32Array(Math.max(sn + k, spans.length * 2));
      grown.set(spans);
      spans = grown;
    };
    let sn = 0;
    const names = this.ix.dict.size;
    const ix = this.ix;
    // Each note's entry is made as soon as its numbers are checked, and its parsed JSON let go: a
    // segment read over several tasks must not keep what JSON.parse made alive into V8's old space
    // (see `pending`). Their `spans` are set once the segment's are carved, below.
    const entries: DocEntry[] = [];
    let unlisted = 0;
    try {
      const r = new VarintReader(b.nums);
      let so = 0;
      for (let di = 0; di < docs.length; di++) {
        if (di % RESTORE_PIECE === RESTORE_PIECE - 1) yield;
        const d = docs[di]!;
        if (this.ix.docs.has(d.p) || this.pendingPaths.has(d.p)) throw new Error(`note ${d.p} twice`);
        const n = r.next();
        const hd = d.hd;
        if (typeof hd !== "string" && (!Array.isArray(hd) || hd.length !== n)) throw new Error("chunk headings do not match");
        if ((typeof d.h !== "string" && !Number.isSafeInteger(d.h)) || typeof d.f !== "string" || !Array.isArray(d.tg)) throw new Error("bad note");
        const ti = d.ti;
        if (!Array.isArray(ti)) throw new Error("no title terms");
        for (let i = 0; i < ti.length; i++) if (!(ti[i] >= 0 && ti[i] < names && Number.isInteger(ti[i]))) throw new Error("title term id out of range");
        const at = sn;
        // Its chunk ids are a run from its first (1 for a note without chunks: see DocEntry.chunk0).
        let id0 = 1;
        let id = 0;
        for (let i = 0; i < n; i++) {
          const step = unzig(r.next());
          // A note's chunks have consecutive ids (see DocEntry.chunk0).
          if (i > 0 && step !== 1) throw new Error("chunk ids not consecutive");
          id += step;
          if (i === 0) id0 = id;
          if (id <= 0 || id > MAX_CHUNK_ID) throw new Error("bad chunk id");
          if (id >= this.owner.length) {
            const o = new Uint16Array(Math.max(id + 1, this.owner.length * 2, 1024));
            o.set(this.owner);
            this.owner = o;
          }
          if (this.owner[id]) throw new Error("chunk id reused");
          this.owner[id] = tag;
          if (id > this.topChunk) this.topChunk = id;
          mine.push(id);
          room(CHUNK_NUMS);
          const sp = sn;
          spans[sp + LEN] = r.next();
          const a = r.next();
          spans[sp + LINE_A] = a;
          spans[sp + LINE_B] = a + unzig(r.next());
          spans[sp + SEQ_A] = so;
          so += r.next();
          spans[sp + SEQ_B] = so;
          sn += CHUNK_NUMS;
        }
        // Then its title term ids.
        room(ti.length);
        for (let i = 0; i < ti.length; i++) spans[sn++] = ti[i];
        const listed = ix.listedPath?.(d.p);
        if (listed === undefined && ix.listedPath) unlisted++;
        // In the order addDoc writes them (one map for every note); the slot is given when registered.
        entries.push({
          slot: -1,
          seg: k,
          path: listed ?? d.p,
          mtime: d.m,
          size: d.s,
          hash: typeof d.h === "number" ? d.h : hash53OfHashText(d.h),
          fm: d.f,
          tags: ix.internTags(d.tg),
          chunk0: id0,
          chunks: n,
          headings: typeof d.hd === "string" ? d.hd : n === 1 ? d.hd[0] : d.hd,
          seq: b.seq,
          spans: NO_SPANS,
          spanAt: at,
          titles: ti.length,
        });
        docs[di] = undefined;
      }
      if (!r.done()) throw new Error("trailing chunk data");
      if (so !== b.seq.length) throw new Error("segment chunks truncated");
      const h = new VarintReader(b.terms);
      // Each entry is three varints (at least three bytes): room for all of them, trimmed below.
      const cap = Math.ceil(b.terms.length / 3);
      const gs = new Int32Array(cap);
      const ns = new Int32Array(cap);
      const offs = new Int32Array(cap + 1);
      let m = 0;
      let g = 0;
      let bytes = 0;
      while (!h.done()) {
        if ((m & (RESTORE_TERMS - 1)) === RESTORE_TERMS - 1) yield;
        const step = h.next();
        if (m > 0 && step === 0) throw new Error("term listed twice");
        g += step;
        const n = h.next();
        bytes += h.next();
        if (g >= names) throw new Error("term id out of range");
        if (n <= 0) throw new Error("empty posting list");
        gs[m] = g;
        ns[m] = n;
        offs[++m] = bytes;
      }
      if (bytes !== b.postings.length) throw new Error("postings truncated");
      for (const e of entries) this.pendingPaths.add(e.path);
      // Only what is used later: the other blobs may be scratch space the caller reuses. In a big
      // index, carved: the encoded postings and the term headers (until decoded), the spans with the
      // notes' other numbers (kept as long as the notes).
      const arena = this.ix.segCount >= ARENA_SEGMENTS ? (this.arena ??= new Carver()) : null;
      const postings = arena ? arena.copy(b.postings) : b.postings;
      const kept = arena ? carveInts(spans, sn, (this.ix.keptArena ??= new Carver())) : spans.slice(0, sn);
      const cut = (a: Int32Array, n: number): Int32Array => (arena ? carveInts(a, n, arena) : a.slice(0, n));
      for (const e of entries) e.spans = kept;
      ix.unlisted += unlisted;
      this.pending.push({ k, docs: entries, b: { postings, seq: b.seq }, gs: cut(gs, m), ns: cut(ns, m), offs: cut(offs, m + 1) });
    } catch (e) {
      for (const id of mine) this.owner[id] = 0;
      throw e;
    }
  }

  /**
   * Loading, step 2: lays out the posting lists (one pair of buffers, sized from the term headers) and
   * registers every segment's notes. The postings stay encoded: a list is decoded the first time it
   * is used, or by `decodeSomeLists`. Decoding 2.5M postings was the longest part of loading (10k
   * notes), and a first answer needs only the query's lists. A segment whose postings turn out
   * inconsistent is reported through `onSegmentLost` (its notes are indexed again; what it wrote
   * stays as dead postings). `yieldNow` yields when the slice is used up; `nextTask` always does.
   */
  async finishRestore(yieldNow: () => Promise<void>, nextTask: () => Promise<void> = yieldNow): Promise<void> {
    // Each term's postings in all segments, summed a block of terms at a time over every segment's
    // sorted term ids (a cursor a segment): summed as each segment was read, an increment a term a
    // segment in an array of one entry a term missed the cache each time (0.33 s of the varied
    // vault's warm start, 4.65M terms).
    const counts = new Int32Array(this.pending.length ? this.ix.dict.size : 0);
    const cursors = new Int32Array(this.pending.length);
    let entries = 0;
    for (const p of this.pending) entries += p.gs.length;
    // The first blocks small (`rampedSteps`): interpreted, the varied vault's first block of 65,536
    // terms was a step of 35–73 ms.
    for (const [, end] of rampedSteps(0, counts.length, countBlock(counts.length, entries))) {
      sumCounts(counts, end, this.pending, cursors);
      await yieldNow();
    }
    // The buffers (~12 MB at 10k notes) are a task of their own: allocating that much outside V8's heap
    // makes V8 collect the young generation at once (12–25 ms in a fresh process, with every note
    // just loaded still young), and that task then holds nothing else.
    await nextTask();
    let total = 0;
    for (let g = 0; g < counts.length; g++) total += counts[g];
    const [ids, tfs] = postingBuffer(total);
    await nextTask();
    // The per-chunk arrays grown to every restored chunk at once (as the notes were registered, they
    // doubled several times, the last growth and the collection it set off one task of ~40 ms at 100k).
    if (this.pending.length) {
      this.ix.ensureChunkCap(this.topChunk);
      await nextTask();
    }
    const offs = new Int32Array(counts.length);
    const encoded = new Uint8Array(counts.length);
    let off = 0;
    let lists = 0;
    this.ix.lists.grow(counts.length);
    for (let g = 0; g < counts.length; g++) {
      if ((g & 4095) === 4095) await yieldNow();
      if (!counts[g]) continue;
      offs[g] = off;
      encoded[g] = 1;
      off += counts[g];
      lists++;
    }
    this.ix.totalPostings += total;
    this.ix.restored = lists ? { ids, tfs, off: offs, n: counts, encoded, unsorted: new Uint8Array(counts.length) } : null;
    const chunks = this.arena?.chunks ?? [];
    this.lazy = lists
      ? { segs: this.pending.map(({ k, b, gs, ns, offs }) => ({ k, src: b.postings, gs, ns, offs, failed: false })), owner: this.owner, left: lists, next: 0, at: new Int32Array(this.pending.length), chunks }
      : null;
    if (!lists) freeBuffers(chunks);
    // A segment's notes in batches: a segment at once (~300 notes at 10k) was up to ~16 ms.
    for (const { k, docs, b } of this.pending) {
      this.ix.restoredSeq[k] = b.seq;
      for (let i = 0; i < docs.length; i += 64) {
        await yieldNow();
        this.registerDocs(k, docs, i, Math.min(docs.length, i + 64));
      }
    }
    this.pending = [];
    this.pendingPaths = new Set();
    this.owner = new Uint16Array(0);
    this.topChunk = 0;
    // Its chunks live on while lists still to be decoded point into them.
    this.arena = null;
  }

  /**
   * Decodes term g's restored postings from every segment that has the term, in segment order (a
   * list of several segments' parts is marked `unsorted`), at once.
   */
  decodeList(g: number): void {
    const whole = this.decodeParts(g, Infinity);
    while (!whole.next().done);
  }

  /**
   * `decodeList` in steps, for a search (`Scorer.steps`): term g's parts segment by segment, yielding
   * once `step` postings are decoded since the last yield. The list stays encoded until its last part
   * is in: a reader that needs it meanwhile (a search run at once, `matchPaths`) decodes it whole, the
   * same postings in the same place, and this ends at its next step. A warm start's first search at
   * 100k notes decoded a common word's list (~300k postings from every segment) in one step of 10 ms
   * or more, with the code not optimised yet. Does nothing for a list that is not encoded.
   */
  *decodeListSteps(g: number, step: number): Generator<void, void, void> {
    // The background is part-way through this list (`decodeLong`, which may be sorting it in place):
    // decoded whole at once, as before, which ends the background's work on it.
    if (this.long?.g === g) this.decodeList(g);
    else yield* this.decodeParts(g, step);
  }

  /** `decodeList` and `decodeListSteps`: a yield once `step` postings are decoded since the last one. */
  private *decodeParts(g: number, step: number): Generator<void, void, void> {
    const lz = this.lazy;
    const r = this.ix.restored;
    if (!lz || !r || !r.encoded[g]) return;
    let at = r.off[g];
    let parts = 0;
    let work = 0;
    for (const s of lz.segs) {
      const t = findSorted(s.gs, g);
      if (t < 0) continue;
      const m = this.decodePart(s, t, at);
      at += m;
      parts++;
      work += m;
      if (work >= step) {
        work = 0;
        yield;
        // Decoded whole meanwhile, or the index cleared (a search then starts again).
        if (this.lazy !== lz || this.ix.restored !== r || !r.encoded[g]) return;
        if (this.long?.g === g) {
          // (The background does not run while a search is part-way; should it, the list is
          // decoded whole now: the parts written so far are the same postings in the same place.)
          this.decodeList(g);
          return;
        }
      }
    }
    r.encoded[g] = 0;
    if (parts > 1) r.unsorted[g] = 1;
    if (--lz.left === 0) this.decoded();
  }

  /** Decodes segment s's part t into the restored buffers at `at`; returns its posting count. */
  private decodePart(s: NonNullable<SegmentLoader["lazy"]>["segs"][number], t: number, at: number): number {
    const r = this.ix.restored!;
    const n = s.ns[t];
    if (!s.failed && decodePostings(s.src, s.offs[t], n, r.ids, r.tfs, at, this.lazy!.owner, s.k + 1) !== s.offs[t + 1]) {
      s.failed = true;
      this.ix.dirty[s.k] = 1;
      this.ix.onSegmentLost?.(s.k);
    }
    // A failed segment's part stays (or becomes) chunk 0, which is never alive.
    if (s.failed) r.ids.fill(0, at, at + n);
    return n;
  }

  /**
   * Every restored list is decoded: the encoded postings' chunks give their memory back now (~100 MB
   * at 100k notes), not at V8's next full collection, which an idle process may not reach.
   */
  private decoded(): void {
    const lz = this.lazy;
    this.lazy = null;
    this.dropLong();
    this.marks = new Uint16Array(0);
    if (lz) freeBuffers(lz.chunks);
  }

  /** Forgets the long list under way (`decodeLong`), its marks left zeros. */
  private dropLong(): void {
    const p = this.long;
    this.long = null;
    if (p && p.phase > 0) this.marks.fill(0, p.lo, p.hi + 1);
  }

  /**
   * Decodes term g's long list (one block of its own in `decodeSomeLists`) in pieces, ~`limit` postings
   * between two looks at `deadline`, across calls: its parts segment by segment, then, from several
   * segments, sorted by marking each posting by chunk id and reading the marks back in id order, each
   * in pieces too. True when the list is decoded (or a search decoded it meanwhile: `decodeList`), false
   * when the deadline passed first. At 100k notes a word in every note (~700k postings) was decoded
   * and sorted in one step of 40–64 ms. Until it is done the list stays `encoded`: a search that needs
   * it decodes it whole, as before.
   */
  private decodeLong(g: number, deadline: () => boolean): boolean {
    const lz = this.lazy!;
    const r = this.ix.restored!;
    const limit = SegmentLoader.blockPostings;
    let p = this.long;
    if (!p || p.g !== g) {
      this.dropLong();
      p = this.long = { g, seg: 0, fill: 0, parts: 0, phase: 0, lo: 0x7fffffff, hi: 0, i: 0, zeros: 0, id: 0, o: 0 };
    }
    const off = r.off[g];
    const n = r.n[g];
    let work = 0;
    // Its part in each segment (the segments' walks step past it whoever decodes it).
    while (p.seg < lz.segs.length) {
      const i = p.seg++;
      const s = lz.segs[i];
      const t = lz.at[i];
      if (t >= s.gs.length || s.gs[t] !== g) continue;
      lz.at[i] = t + 1;
      if (!r.encoded[g]) continue;
      const m = this.decodePart(s, t, off + p.fill);
      if (m && r.ids[off + p.fill]) {
        // A part ascends: its first and last ids bound it (a lost segment's part is zeros).
        p.lo = Math.min(p.lo, r.ids[off + p.fill]);
        p.hi = Math.max(p.hi, r.ids[off + p.fill + m - 1]);
      }
      p.fill += m;
      p.parts++;
      work += m;
      if (work > limit) {
        work = 0;
        if (deadline() && p.seg < lz.segs.length) return false;
      }
    }
    if (!r.encoded[g]) {
      this.dropLong();
      return true;
    }
    if (p.phase === 0) {
      if (p.parts > 1) r.unsorted[g] = 1;
      if (!r.unsorted[g] || n < SegmentLoader.sortEarly) return this.longDone(g);
      if (p.lo > p.hi || p.hi - p.lo >= 40 * n) {
        // Sparse (see sortPostings): sorting its keys is cheaper than reading marks back; never so for a
        // long list at 100k notes, whose ids span the chunks.
        sortPostings(r.ids, r.tfs, off, off + n);
        r.unsorted[g] = 0;
        return this.longDone(g);
      }
      if (this.marks.length <= p.hi) this.marks = new Uint16Array(p.hi + 1);
      p.phase = 1;
      p.id = Math.max(1, p.lo);
      if (deadline()) return false;
    }
    const ids = r.ids;
    const tfs = r.tfs;
    const marks = this.marks;
    if (p.phase === 1) {
      // Each posting marked by its chunk id (its tf code + 1)…
      while (p.i < n) {
        const stop = Math.min(n, p.i + limit);
        p.zeros += markPostings(ids, tfs, off + p.i, off + stop, marks);
        p.i = stop;
        if (deadline() && p.i < n) return false;
      }
      ids.fill(0, off, off + p.zeros);
      tfs.fill(0, off, off + p.zeros);
      p.o = off + p.zeros;
      p.phase = 2;
    }
    // …then read back in id order, the marks left zeros.
    while (p.id <= p.hi) {
      const stop = Math.min(p.hi + 1, p.id + 4 * limit);
      p.o = readMarks(ids, tfs, p.o, p.id, stop, marks);
      p.id = stop;
      if (deadline() && p.id <= p.hi) return false;
    }
    r.unsorted[g] = 0;
    return this.longDone(g);
  }

  /** Term g's list is decoded (by `decodeLong`). */
  private longDone(g: number): boolean {
    this.long = null;
    this.ix.restored!.encoded[g] = 0;
    if (--this.lazy!.left === 0) this.decoded();
    return true;
  }

  /** True while some lists restored from disk are still encoded. */
  get hasEncodedLists(): boolean {
    return this.lazy !== null;
  }

  /**
   * Decodes encoded lists until `deadline` passes (checked every ~16k postings). False when none is
   * left. Walks the terms in blocks of at most ~16k postings and 4,096 terms, or one longer list
   * (which starts a call of its own), each segment's parts of a block in one pass over its sorted
   * term ids: looking each term up in every segment (256 at 100k notes) took ~100 s of steps of 300
   * ms for a dictionary of 4.65M terms. A block of several terms is done in one step; a long list
   * may take several (`decodeLong`), staying encoded until it is done.
   */
  decodeSomeLists(deadline: () => boolean): boolean {
    const limit = SegmentLoader.blockPostings;
    let work = 0;
    let did = false;
    while (this.lazy) {
      const lz = this.lazy;
      const r = this.ix.restored;
      const end = this.ix.lists.length;
      if (!r || lz.next >= end) {
        this.decoded(); // every list was visited (none can be left encoded)
        break;
      }
      // The block [a, b): its encoded terms' parts go at their list's offset plus what is filled.
      const a = lz.next;
      let b = a;
      let postings = 0;
      // A long list is a block of its own, and starts a step of its own: after short ones, in one
      // block or one step, it made a step of 180k postings (38 ms at 100k notes).
      while (b < end && b - a < DECODE_BLOCK) {
        const n = r.encoded[b] ? r.n[b] : 0;
        if (b > a && postings + n > limit) break;
        postings += n;
        b++;
      }
      if (did && postings > limit) return true;
      // Nor does a block take a step past `limit` postings when its deadline has passed.
      if (work > 0 && work + postings > limit) {
        work = 0;
        if (deadline()) return true;
      }
      did = true;
      if (postings > limit) {
        // A long list (b = a + 1) in pieces, across calls if need be.
        if (!this.decodeLong(a, deadline)) return true;
        lz.next = b;
        work = 0;
        if (deadline()) return this.lazy !== null;
        continue;
      }
      if (this.long) this.dropLong(); // a search decoded it meanwhile
      lz.next = b;
      if (blockFill.length < b - a) {
        blockFill = new Int32Array(DECODE_BLOCK);
        blockParts = new Uint16Array(DECODE_BLOCK);
      }
      const fill = blockFill;
      const parts = blockParts;
      fill.fill(0, 0, b - a);
      parts.fill(0, 0, b - a);
      for (let i = 0; i < lz.segs.length; i++) {
        const s = lz.segs[i];
        let t = lz.at[i];
        for (; t < s.gs.length && s.gs[t] < b; t++) {
          const g = s.gs[t];
          if (!r.encoded[g]) continue; // decoded already, by a search (`decodeList`)
          fill[g - a] += this.decodePart(s, t, r.off[g] + fill[g - a]);
          parts[g - a]++;
        }
        lz.at[i] = t;
      }
      for (let g = a; g < b; g++) {
        if (!r.encoded[g]) continue;
        r.encoded[g] = 0;
        work += fill[g - a];
        if (parts[g - a] > 1) r.unsorted[g] = 1;
        // A long list is sorted now, in the background, rather than by the first search that skips in it.
        if (r.unsorted[g] && r.n[g] >= SegmentLoader.sortEarly) {
          work += sortPostings(r.ids, r.tfs, r.off[g], r.off[g] + r.n[g]);
          r.unsorted[g] = 0;
        }
        if (--lz.left === 0) this.decoded();
      }
      if (work > limit) {
        work = 0;
        if (deadline()) return this.lazy !== null;
      }
    }
    return false;
  }

  /** Registers restored notes `docs[from, to)` of segment `k`. */
  private registerDocs(k: number, docs: DocEntry[], from: number, to: number): void {
    const ix = this.ix;
    for (let j = from; j < to; j++) {
      const doc = docs[j];
      const slot = ix.freeSlots.pop() ?? ix.slots.length;
      doc.slot = slot;
      ix.slots[slot] = doc;
      ix.docs.set(doc.path, doc);
      for (let i = 0; i < doc.chunks; i++) {
        const id = doc.chunk0 + i;
        ix.ensureChunkCap(id);
        ix.chunkDoc[id] = slot;
        ix.chunkLen[id] = span(doc, i, LEN);
        ix.chunkOrd[id] = i;
        ix.chunkSeg[id] = k;
        ix.alive[id] = 1;
        ix.liveChunks++;
        ix.totalLen += ix.chunkLen[id];
        if (id >= ix.nextId) ix.nextId = id + 1;
      }
      ix.setNoteLen(doc);
    }
  }
}
