/**
 * The in-memory inverted index: one term dictionary, posting lists in typed arrays, per-chunk arrays,
 * the notes (`DocEntry`) in slots, tombstoned deletes. Owns adding, removing and looking up; ranking
 * (score.ts), the postings log (postings-log.ts), compaction, saving (persist.ts) and loading
 * (restore.ts) live beside it and work on its fields (as `IndexState`, index-state.ts), which only
 * they and this class change.
 * Notes belong to segments (by path hash) only for persistence.
 */
import { detach } from "../../strings";
import { grownArray } from "../../memory";
import { TermDict } from "../tokenize";
import type { Chunk, ParsedQuery, Scheduler, SearchLanguage, SearchRequest } from "../types";
import { DocBuilder } from "./builder";
import { ChunkReader } from "./chunk-reader";
import { compactSome, needsCompaction, packFlat, type CompactionState } from "./compaction";
import { CHUNK_NUMS, docEdge, LEN, LINE_A, LINE_B, MAX_SEGMENTS, packFrontmatter, packHeadings, SEQ_A, SEQ_B, type DocEntry } from "./doc";
import type { IndexState, RestoredLists } from "./index-state";
import { dictBytes, DictWriter, segmentWriter, type RestoredBlobs, type SegmentWriter } from "./persist";
import { Carver, type ScratchChunks } from "./carve";
import { clearPackedCache, FlatLists, ListSlots, PostingList, PostingPool } from "./postings";
import { PostingsLog } from "./postings-log";
import { SegmentLoader } from "./restore";
import { Scorer, type ScoredAnswer } from "./score";
import type { KeywordAnswer } from "./sections";

/** A prefix expands to at most this many terms (the most frequent). */
const PREFIX_EXPANSION_CAP = 64;

/** The size of the slabs indexed notes' term sequences (bytes) and numbers (ints) are written into; a note needing over an eighth of one gets an array of its own. */
const SEQ_SLAB = 256 * 1024;
const NUM_SLAB = 32 * 1024;

const NO_TAGS: readonly string[] = [];

/** What a search in slices ended early returns (never seen: the caller has gone on). */
const ENDED: ScoredAnswer = { answer: { res: { hits: [], total_files: 0, relaxed: false }, pending: [], want: null }, paths: [] };

/**
 * Room carved one note after another out of slabs of `size` elements; a note needing over an eighth
 * of a slab gets an array of its own. `take(n)` sets `arr` and `at`: the room is `arr[at, at + n)`.
 */
class SlabCursor<T extends Uint8Array | Int32Array> {
  private slab: T;
  private used = 0;
  arr: T;
  at = 0;
  constructor(
    readonly size: number,
    private readonly make: (n: number) => T,
  ) {
    this.slab = this.arr = make(0);
  }
  take(n: number): void {
    if (n > this.size / 8) {
      this.arr = this.make(n);
      this.at = 0;
      return;
    }
    if (this.slab.length - this.used < n) {
      this.slab = this.make(this.size);
      this.used = 0;
    }
    this.arr = this.slab;
    this.at = this.used;
    this.used += n;
  }
}

/**
 * Where notes indexed in this process keep their term sequences and numbers (`DocEntry.seq`,
 * `DocEntry.spans`): one after another in slabs (~500 notes a slab at 100k notes), not two typed
 * arrays of their own a note (~200 bytes of heap each, and two backing stores). A slab is freed
 * when none of its notes is left; the bytes of a note removed or indexed again stay in its slab
 * until then (`dead` counts them).
 */
class NoteSlabs {
  readonly seq = new SlabCursor(SEQ_SLAB, (n) => new Uint8Array(n));
  readonly nums = new SlabCursor(NUM_SLAB, (n) => new Int32Array(n));
  /** Bytes of removed notes still in slabs. */
  dead = 0;
}

/** `flattenNewLists` works only on a dictionary this big (the bench's 100k-note vault has ~30k terms). */
export const FLATTEN_MIN_TERMS = 1 << 18;
/** ...on lists this short (most of a big dictionary's terms occur once or twice). */
const FLATTEN_MAX_POSTINGS = 8;

export class InvertedIndex implements IndexState {
  dict = new TermDict();
  lists = new ListSlots();
  flat = new FlatLists();
  /** How many segments the notes are spread over (see `segmentCountFor`); set by loading or `relayout`. */
  segCount = 1;
  /** Segments changed since they were last saved (the first `segCount` are used). */
  dirty = new Uint8Array(MAX_SEGMENTS);
  // Per chunk id: its note's slot, length, place in its note, segment, and whether it is alive.
  chunkDoc = new Int32Array(1024);
  chunkLen = new Float32Array(1024);
  chunkOrd = new Int32Array(1024);
  chunkSeg = new Uint8Array(1024);
  alive = new Uint8Array(1024);
  nextId = 1;
  liveChunks = 0;
  totalLen = 0;
  totalPostings = 0;
  deadPostings = 0;
  /** The slabs grown lists take their space from. */
  pool = new PostingPool();

  docs = new Map<string, DocEntry>();
  slots: (DocEntry | null)[] = [];
  /**
   * Per slot: its note's length in terms (its chunks' lengths summed, at least 1), for the whole-note
   * BM25 (summing them per search over every note a query's terms touch was a third of its scoring).
   */
  noteLen = new Float64Array(64);
  freeSlots: number[] = [];

  /** Set by loading (restore.ts): per segment, the term sequences its restored notes share (see `restoredPaths`). */
  restoredSeq: (Uint8Array | undefined)[] = [];
  /** Set by loading (restore.ts): the restored lists not made objects yet. */
  restored: RestoredLists | null = null;
  keptArena: Carver | null = null;
  /** Called when a restored segment's postings turn out inconsistent (its notes must be indexed again). */
  onSegmentLost: ((k: number) => void) | null = null;
  listedPath: ((path: string) => string | undefined) | null = null;
  unlisted = 0;
  /** `sharePaths` under way: the map being made, the notes still to put in it, the change count it began at. */
  private sharing: { fresh: Map<string, DocEntry>; docs: MapIterator<DocEntry>; at: number } | null = null;

  readonly reader = new ChunkReader();
  private readonly log = new PostingsLog(this);
  private readonly loader = new SegmentLoader(this);
  private readonly scorer = new Scorer();
  /** A search in slices holds `scorer` (its scratch space) between its steps; one at a time, in turn. */
  private scorerBusy = false;
  private slicedTurn: Promise<unknown> = Promise.resolve();
  /**
   * Counts the changes a search can see (notes added or removed, lists merged or compacted, the index
   * cleared or loaded): a search in slices that sees it move while it yielded starts again.
   */
  private changes = 0;
  get changeCount(): number {
    return this.changes;
  }
  private readonly fillRestored = (l: PostingList): void => void this.loader.decodeList(l.term);
  private builder: DocBuilder | null = null;
  private slabs = new NoteSlabs();
  /** Every tag a note has, one string each, and every set of tags a note has, by its tags joined (see `internTags`). */
  private tagNames = new Map<string, string>();
  private tagSets = new Map<string, readonly string[]>();

  /**
   * Gives the restored notes `listedPath` did not know (`unlisted`) the vault's own strings for their
   * paths, now that it is listed: the note's and its key's in `docs` (the strings parsed from the
   * saved index are then garbage). `docs` is made again, in the same order, in steps (`deadline()`
   * looked at every 256 notes), then swapped in: re-keying the notes in place made the map's table
   * grow to twice its size for good (~4 MB at 100k notes). Started again if the index changes
   * between steps. True when done; the answers stay the same (the same paths).
   */
  sharePaths(deadline: () => boolean): boolean {
    const listed = this.listedPath;
    if (this.unlisted === 0 || !listed) {
      this.unlisted = 0;
      return true;
    }
    let s = this.sharing;
    if (!s || s.at !== this.changes) s = this.sharing = { fresh: new Map(), docs: this.docs.values(), at: this.changes };
    for (let n = 1; ; n++) {
      const r = s.docs.next();
      if (r.done) break;
      const doc = r.value;
      const own = listed(doc.path);
      if (own !== undefined) doc.path = own;
      s.fresh.set(doc.path, doc);
      if ((n & 255) === 0 && deadline()) return false;
    }
    this.docs = s.fresh;
    this.sharing = null;
    this.unlisted = 0;
    return true;
  }

  clear(): void {
    this.changes++;
    this.dict = new TermDict();
    this.lists = new ListSlots();
    this.flat = new FlatLists();
    this.flattenedTo = 0;
    this.flatArena = null;
    this.segCount = 1;
    this.dirty = new Uint8Array(MAX_SEGMENTS);
    this.chunkDoc = new Int32Array(1024);
    this.chunkLen = new Float32Array(1024);
    this.chunkOrd = new Int32Array(1024);
    this.chunkSeg = new Uint8Array(1024);
    this.alive = new Uint8Array(1024);
    this.nextId = 1;
    this.liveChunks = 0;
    this.totalLen = 0;
    this.totalPostings = 0;
    this.deadPostings = 0;
    this.pool = new PostingPool();
    clearPackedCache();
    this.docs.clear();
    this.unlisted = 0;
    this.sharing = null;
    this.slots = [];
    this.noteLen = new Float64Array(64);
    this.freeSlots = [];
    this.loader.reset();
    this.restored = null;
    this.keptArena = null;
    this.restoredSeq = [];
    this.log.reset();
    this.slabs = new NoteSlabs();
    this.tagNames = new Map();
    this.tagSets = new Map();
  }

  /**
   * `tags` as a note keeps them: one array for every note with the same tags, each tag one string
   * (at 100k notes, an array and strings of its own a note were ~20 MB), none for no tag. Tags no
   * note has any more stay until `clear`.
   */
  internTags(tags: readonly string[]): readonly string[] {
    if (tags.length === 0) return NO_TAGS;
    // Keyed by the tags joined with line breaks (a set with a tag holding one is not shared).
    const key = tags.length === 1 ? tags[0] : tags.some((t) => t.includes("\n")) ? null : tags.join("\n");
    let out = key === null ? undefined : this.tagSets.get(key);
    if (out === undefined) {
      const own = new Array<string>(tags.length);
      for (let i = 0; i < tags.length; i++) {
        const t = tags[i];
        let s = this.tagNames.get(t);
        if (s === undefined) this.tagNames.set(t, (s = detach(t)));
        own[i] = s;
      }
      out = own;
      if (key !== null) this.tagSets.set(tags.length === 1 ? own[0] : detach(key), own);
    }
    return out;
  }

  /** Bytes and ints of term sequences and chunk numbers that removed notes left in the slabs (see `NoteSlabs`). */
  get deadNoteBytes(): number {
    return this.slabs.dead;
  }

  get termCount(): number {
    return this.dict.size;
  }

  /** Records `doc`'s length (`noteLen`) once its chunks' lengths are in `chunkLen`. */
  setNoteLen(doc: DocEntry): void {
    if (doc.slot >= this.noteLen.length) {
      this.noteLen = grownArray(Float64Array, this.noteLen, Math.max(doc.slot + 1, 2 * this.noteLen.length));
    }
    let n = 0;
    for (let id = doc.chunk0, end = doc.chunk0 + doc.chunks; id < end; id++) n += this.chunkLen[id];
    this.noteLen[doc.slot] = Math.max(1, n);
  }

  /** Makes the per-chunk arrays hold chunk id `id`. */
  ensureChunkCap(id: number): void {
    if (id < this.alive.length) return;
    this.changes++;
    let cap = this.alive.length;
    while (cap <= id) cap *= 2;
    this.chunkDoc = grownArray(Int32Array, this.chunkDoc, cap);
    this.chunkLen = grownArray(Float32Array, this.chunkLen, cap);
    this.chunkOrd = grownArray(Int32Array, this.chunkOrd, cap);
    this.chunkSeg = grownArray(Uint8Array, this.chunkSeg, cap);
    this.alive = grownArray(Uint8Array, this.alive, cap);
  }

  /** Term g's list, made first if there is none. */
  listFor(g: number): PostingList {
    this.lists.grow(g + 1);
    let l = this.listAt(g);
    if (!l) this.lists.set(g, (l = new PostingList()));
    return l;
  }

  /** Term g's list, made an object first if it was restored from disk and not used since. */
  listAt(g: number): PostingList | undefined {
    const l = this.lists.get(g);
    if (l) return l;
    const f = this.flat.take(g);
    if (f) {
      const m = new PostingList();
      m.setPacked(f[0], f[1], f[2]);
      m.term = g;
      this.lists.set(g, m);
      return m;
    }
    const r = this.restored;
    if (!r || g >= r.n.length || !r.n[g]) return undefined;
    const m = new PostingList();
    m.placeIn(r.ids, r.tfs, r.off[g], r.n[g]);
    m.n = r.n[g];
    m.term = g;
    if (r.encoded[g]) m.pending = this.fillRestored;
    this.lists.set(g, m);
    return m;
  }

  peekList(g: number): readonly [Int32Array, Uint8Array, number] | null {
    const l = this.lists.get(g);
    if (!l) {
      const n = this.flat.n(g);
      if (n) {
        const [ids, tfs] = this.flat.peek(g);
        return [ids, tfs, n];
      }
      // A restored list already decoded is read where it lies, without an object: compaction packing
      // a warm start's 4.65M lists made (and dropped) one for each, with a slot page each time.
      const r = this.restored;
      if (r && g < r.n.length && !r.encoded[g]) {
        const k = r.n[g];
        if (!k) return null;
        const at = r.off[g];
        return [r.ids.subarray(at, at + k), r.tfs.subarray(at, at + k), k];
      }
    }
    // An encoded restored list is made an object (its postings are decoded into the shared buffers).
    const m = l ?? this.listAt(g);
    if (!m || !m.n) return null;
    const [ids, tfs] = m.peek();
    return [ids, tfs, m.n];
  }

  /** Term g's posting count (without making a restored or flat list an object). */
  listN(g: number): number {
    const l = this.lists.get(g);
    if (l) return l.n;
    const f = this.flat.n(g);
    if (f) return f;
    const r = this.restored;
    return r && g < r.n.length ? r.n[g] : 0;
  }

  /** The list of a term, if any posting was ever added. */
  lookup(t: string): PostingList | undefined {
    this.flushPostings();
    const g = this.dict.get(t);
    return g === undefined ? undefined : this.listAt(g);
  }

  /** The builder for the next note (reset; one note at a time: the next call resets it again). */
  docBuilder(): DocBuilder {
    if (!this.builder || this.builder.dict !== this.dict) this.builder = new DocBuilder(this.dict);
    this.builder.reset();
    return this.builder;
  }

  /**
   * Adds a document from a builder holding its vectorized chunks (`builder.chunkCount` must equal
   * `chunks.length`); replaces an older version.
   */
  addDoc(entry: Pick<DocEntry, "seg" | "path" | "mtime" | "size" | "hash"> & { frontmatter: Record<string, unknown>; tags: readonly string[] }, chunks: Chunk[], b: DocBuilder): DocEntry {
    if (b.dict !== this.dict) throw new Error("the document was vectorized against another term dictionary");
    if (b.chunkCount !== chunks.length) throw new Error("builder and chunks disagree");
    this.changes++;
    this.removeDoc(entry.path);
    const slot = this.freeSlots.pop() ?? this.slots.length;
    const n = chunks.length;
    const slabs = this.slabs;
    // The term sequences and numbers into the slabs (see NoteSlabs).
    const seqLen = b.seq.n;
    slabs.seq.take(seqLen);
    const seq = slabs.seq.arr;
    const seqAt = slabs.seq.at;
    seq.set(b.seq.view(), seqAt);
    const titles = b.titleIds.length;
    slabs.nums.take(n * CHUNK_NUMS + titles);
    const cs = slabs.nums.arr;
    const at = slabs.nums.at;
    for (let j = 0; j < titles; j++) cs[at + n * CHUNK_NUMS + j] = b.titleIds[j];
    const headings = new Array<string>(n);
    const chunk0 = this.nextId;
    for (let i = 0; i < n; i++) {
      const c = chunks[i];
      const id = this.nextId++;
      this.ensureChunkCap(id);
      const len = b.lens[i];
      this.chunkDoc[id] = slot;
      this.chunkLen[id] = len;
      this.chunkOrd[id] = i;
      this.chunkSeg[id] = entry.seg;
      this.alive[id] = 1;
      this.liveChunks++;
      this.totalLen += len;
      this.totalPostings += b.postOff[i + 1] - b.postOff[i];
      this.log.append(id, b.terms, b.tfs, b.postOff[i], b.postOff[i + 1]);
      headings[i] = c.heading;
      const sp = at + i * CHUNK_NUMS;
      cs[sp + LEN] = len;
      cs[sp + LINE_A] = c.lineStart;
      cs[sp + LINE_B] = c.lineEnd;
      cs[sp + SEQ_A] = seqAt + b.seqOff[i];
      cs[sp + SEQ_B] = seqAt + b.seqOff[i + 1];
    }
    // Every field written out, in the order registerDocs uses: built by spreading `entry`, V8 turned
    // each note's entry into a dictionary (a hash table and a map of its own per note).
    const doc: DocEntry = {
      slot,
      seg: entry.seg,
      path: entry.path,
      mtime: entry.mtime,
      size: entry.size,
      hash: entry.hash,
      fm: packFrontmatter(entry.frontmatter),
      tags: this.internTags(entry.tags),
      chunk0,
      chunks: n,
      headings: n === 0 ? "" : detachHeadings(packHeadings(headings)),
      seq,
      spans: cs,
      spanAt: at,
      titles,
    };
    this.slots[slot] = doc;
    this.setNoteLen(doc);
    this.docs.set(doc.path, doc);
    this.dirty[entry.seg] = 1;
    return doc;
  }

  /** Postings wait in the log, or a merge is under way. */
  get logPending(): boolean {
    return this.log.pending;
  }

  /** The postings log is due for a merge, or one is under way (see `PostingsLog.due`). */
  get mergeDue(): boolean {
    return this.log.due;
  }

  /** Merges the postings log into the lists (every reader of the lists calls this first; see `PostingsLog.flush`). */
  flushPostings(release = true): void {
    if (this.log.pending) this.changes++;
    this.log.flush(release);
  }

  /**
   * Merges what is left in the postings log and lets its buffers go: the worker has nothing left to
   * do (its last step merged the log in steps, so this is nothing or a few postings).
   */
  releaseScratch(): void {
    this.flushPostings(true);
  }

  /** Bytes of the postings log's buffers. */
  logBytes(): number {
    return this.log.bytes;
  }

  /** Merges the postings log in steps until `due()`; true when the merge is done (see `PostingsLog.mergeSome`). */
  mergeSome(due: () => boolean): boolean {
    if (this.log.pending) this.changes++;
    return this.log.mergeSome(due);
  }

  /** A document's stat changed (same content). */
  touchDoc(doc: DocEntry): void {
    this.dirty[doc.seg] = 1;
  }

  removeDoc(path: string): DocEntry | null {
    const doc = this.docs.get(path);
    if (!doc) return null;
    this.changes++;
    this.docs.delete(path);
    this.slots[doc.slot] = null;
    this.freeSlots.push(doc.slot);
    this.dirty[doc.seg] = 1;
    for (let id = doc.chunk0, end = doc.chunk0 + doc.chunks; id < end; id++) {
      if (!this.alive[id]) continue;
      this.alive[id] = 0;
      this.liveChunks--;
      this.totalLen -= this.chunkLen[id];
    }
    // Posting entries stay until compaction; estimate how many died.
    this.deadPostings += doc.chunks * 60;
    if (doc.seq.length === SEQ_SLAB) this.slabs.dead += docEdge(doc, SEQ_B) - docEdge(doc, SEQ_A);
    if (doc.spans.length === NUM_SLAB) this.slabs.dead += 4 * (doc.chunks * CHUNK_NUMS + doc.titles);
    return doc;
  }

  /** Dead postings are a quarter of the postings or more (see compaction.ts). */
  needsCompaction(): boolean {
    return needsCompaction(this);
  }

  /** The postings held in packed lists (see compaction.ts). */
  packedPostings(): number {
    let n = this.flat.total;
    for (const l of this.lists.values()) if (l.packed) n += l.n;
    return n;
  }

  /** True when every list loaded from disk is decoded and none packed yet: a compaction packs them (see compaction.ts). */
  get packable(): boolean {
    return this.restored !== null && !this.loader.hasEncodedLists;
  }

  /** One step of compaction (see compaction.ts); false when done. */
  compactSome(state: CompactionState, deadline: () => boolean): boolean {
    this.changes++;
    const more = compactSome(this, state, deadline);
    // Every flat list is in compaction's own arena now.
    if (!more) this.flatArena = null;
    return more;
  }

  /** `flattenNewLists` has looked at the terms below this. */
  private flattenedTo = 0;
  /** Where `flattenNewLists` packs lists (chunks of 1 MB; given back once compaction has rewritten them). */
  private flatArena: Carver | null = null;

  /**
   * While a big dictionary is being built: the short lists of the terms added since the last call
   * packed into `flat` (see FlatLists), until `deadline()`; true while some are left. A build
   * otherwise keeps an object for every term's list until the compaction after it: 4.65M of them
   * (~570 MB) on a 100k-note vault full of numbers, ids and CJK text, where most terms occur once.
   * A term seen again gets an object back (`listFor`). Does nothing under FLATTEN_MIN_TERMS terms.
   */
  flattenNewLists(deadline: () => boolean): boolean {
    if (this.dict.size < FLATTEN_MIN_TERMS) return false;
    // The log merged first, in steps too (at once, a step of 296 ms on a vault of 4.65M terms).
    if (!this.mergeSome(deadline)) return true;
    const restoredTerms = this.restored ? this.restored.n.length : 0;
    const end = this.lists.length;
    let g = Math.max(this.flattenedTo, restoredTerms);
    this.flat.reserve(end);
    const arena = (this.flatArena ??= new Carver(1 << 20));
    for (let steps = 0; g < end; g++) {
      const l = this.lists.get(g);
      if (l && !l.packed && l.n > 0 && l.n <= FLATTEN_MAX_POSTINGS) {
        const [ids, tfs] = l.peek();
        let i = 1;
        while (i < l.n && ids[i] > ids[i - 1]) i++;
        if (i === l.n) packFlat(this, g, ids, tfs, l.n, arena);
      }
      if ((++steps & 1023) === 0 && deadline()) {
        this.flattenedTo = g + 1;
        return true;
      }
    }
    this.flattenedTo = end;
    return false;
  }

  dirtySegments(): number[] {
    const out: number[] = [];
    for (let i = 0; i < this.segCount; i++) if (this.dirty[i]) out.push(i);
    return out;
  }

  markAllDirty(): void {
    this.dirty.fill(1);
  }

  /**
   * Spreads the notes over `count` segments (a power of two, see `segmentCountFor`): every note gets
   * its segment again and every segment is saved anew. The vault grew past what its layout was for.
   */
  relayout(count: number, segmentOfPath: (path: string, count: number) => number): void {
    this.segCount = count;
    for (const d of this.docs.values()) {
      d.seg = segmentOfPath(d.path, count);
      for (let id = d.chunk0, end = d.chunk0 + d.chunks; id < end; id++) this.chunkSeg[id] = d.seg;
    }
    this.markAllDirty();
  }

  /** Serializes the given segments in steps (see persist.ts). Clears their dirty flags. */
  segmentWriter(segs: number[], scratch?: ScratchChunks): SegmentWriter {
    return segmentWriter(this, segs, scratch);
  }

  /** The term dictionary as saved: its terms, one per line, as UTF-8. */
  dictBytes(): Uint8Array {
    return dictBytes(this.dict);
  }

  /** `dictBytes` made in steps (the index must not change meanwhile). */
  dictWriter(): DictWriter {
    return new DictWriter(this.dict);
  }

  /** Loading, step 0: starts from a persisted dictionary (see restore.ts). */
  restoreDict(names: Uint8Array, yieldNow: () => Promise<void>): Promise<void> {
    this.changes++;
    return this.loader.restoreDict(names, yieldNow);
  }

  /** Loading, step 1 of 2, one call per segment (see restore.ts); throws when the segment is inconsistent. */
  /** See SegmentLoader.room. */
  restoreRoom(key: string, size: number): Uint8Array | undefined {
    return this.loader.room(key, size);
  }

  restoreSegment(k: number, b: RestoredBlobs): void {
    this.changes++;
    this.loader.restoreSegment(k, b);
  }

  /** `restoreSegment` in pieces (see SegmentLoader.restoreSegmentSteps). */
  restoreSegmentSteps(k: number, b: RestoredBlobs): Generator<void, void, void> {
    this.changes++;
    return this.loader.restoreSegmentSteps(k, b);
  }

  /** Loading, step 2: lays out the lists and registers the notes (see restore.ts). */
  finishRestore(yieldNow: () => Promise<void>, nextTask: () => Promise<void> = yieldNow): Promise<void> {
    // Loading ends before any search runs (the service searches once loaded); counted all the same.
    this.changes++;
    return this.loader.finishRestore(yieldNow, nextTask);
  }

  /** True while some lists restored from disk are still encoded. */
  get hasEncodedLists(): boolean {
    return this.loader.hasEncodedLists;
  }

  /** Decodes encoded lists until `deadline` passes; false when none is left. */
  decodeSomeLists(deadline: () => boolean): boolean {
    return this.loader.decodeSomeLists(deadline);
  }

  settleSteps(l: PostingList, step: number): Generator<void, void, void> | null {
    return l.pending === this.fillRestored ? this.loader.decodeListSteps(l.term, step) : null;
  }

  /**
   * Terms at these quantiles (0–1) of posting-list length, shortest first (for warming up the search
   * path), among at most ~2k terms spread evenly over the dictionary (testing and sorting all 30k
   * terms of 10k notes was one ~15 ms step) whose lists hold at most `maxPostings` chunks.
   */
  sampleTerms(quantiles: number[], maxPostings = Infinity, language?: SearchLanguage): string[] {
    this.flushPostings();
    // Each sampled term's list size looked up once: sorting by `listN` in the comparator (~45k calls,
    // in a fresh process before V8 optimised them) made this one step of up to ~40 ms at 100k notes.
    const sampled: [n: number, g: number][] = [];
    const stride = Math.max(1, Math.floor(this.lists.length / 2048));
    for (let g = 0; g < this.lists.length; g += stride) {
      const n = this.listN(g);
      if (n && n <= maxPostings && /^\p{L}+$/u.test(this.dict.name(g))) sampled.push([n, g]);
    }
    if (!sampled.length) return [];
    sampled.sort((a, b) => a[0] - b[0]);
    const gs = sampled.map((x) => x[1]);
    // With `language`, a word's other forms count too (a search reads their lists with its own):
    // from each quantile down to the first term whose forms' postings stay within the cap.
    const within = (g: number): boolean => {
      if (!language) return true;
      let n = 0;
      for (const f of this.dict.forms(this.dict.name(g), language)) n += this.listN(f);
      return n <= maxPostings;
    };
    return quantiles.map((q) => {
      let i = Math.min(gs.length - 1, Math.floor(q * gs.length));
      for (let tries = 0; i > 0 && tries < 64 && !within(gs[i]); tries++) i--;
      return this.dict.name(gs[i]);
    });
  }

  /** The notes of segment `k` as loaded from disk (not indexed again since: they share its term sequences). */
  restoredPaths(k: number): string[] {
    const out: string[] = [];
    const seq = this.restoredSeq[k];
    if (seq) for (const d of this.docs.values()) if (d.seq === seq) out.push(d.path);
    return out;
  }

  /** Terms starting with `prefix`, most frequent first (capped). */
  expandPrefix(prefix: string): string[] {
    this.flushPostings();
    const out: string[] = [];
    const dict = this.dict;
    const c0 = prefix.charCodeAt(0);
    for (let g = 0, n = dict.size; g < n; g++) {
      if (dict.firstCode(g) === c0 && dict.startsWith(g, prefix) && this.listN(g)) out.push(dict.name(g));
    }
    if (out.length > PREFIX_EXPANSION_CAP) {
      const df = (t: string) => this.lookup(t)?.n ?? 0;
      out.sort((a, b) => df(b) - df(a) || (a < b ? -1 : 1));
      out.length = PREFIX_EXPANSION_CAP;
    }
    return out;
  }

  /** The answer, its sections' contents still to be cut from the notes (see sections.ts `fillSections`). */
  search(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage): KeywordAnswer {
    return this.freeScorer().run(this, pq, req, language, true).answer;
  }

  /** The scorer, or one of its own while a search in slices holds it. */
  private freeScorer(): Scorer {
    return this.scorerBusy ? new Scorer() : this.scorer;
  }

  /**
   * `search` in slices: between the scorer's steps (see `Scorer.steps`), once `sliceMs` of the event
   * loop is used, it yields (`sched.yield`). When the index changed meanwhile, it starts again and
   * runs in one go. Searches in slices run one at a time, in turn.
   */
  searchSliced(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage, sched: Scheduler, sliceMs: number): Promise<KeywordAnswer> {
    const turn = this.slicedTurn.then(() => this.runSliced(pq, req, language, sched, sliceMs));
    this.slicedTurn = turn.catch(() => undefined);
    return turn;
  }

  /**
   * Resolves once no search in slices is part-way (one that yielded and will go on). The service's
   * background work awaits it before it changes the index: a change would make that search start
   * again in one go (a whole common-word search in one task: the longest blocks after a cold build,
   * when the compaction's steps came between a search's slices).
   */
  async searchesDone(): Promise<void> {
    while (this.scorerBusy) await this.slicedTurn;
  }

  /** A search in slices is part-way (see searchesDone). */
  get searching(): boolean {
    return this.scorerBusy;
  }

  private async runSliced(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage, sched: Scheduler, sliceMs: number): Promise<KeywordAnswer> {
    this.scorerBusy = true;
    const steps = this.scorer.steps(this, pq, req, language, true);
    try {
      let start = sched.now();
      for (;;) {
        const r = steps.next();
        if (r.done) return r.value.answer;
        if (sched.now() - start < sliceMs) continue;
        const seen = this.changes;
        // Twice: a search a request started runs in the event loop's I/O phase, where one yield
        // (setImmediate) resumes it in the same turn of the loop, before any other request is read.
        await sched.yield();
        await sched.yield();
        start = sched.now();
        if (this.changes !== seen) {
          // The index changed under the search: end it (its scratch space cleaned) and run it again at once.
          steps.return(ENDED);
          return this.scorer.run(this, pq, req, language, true).answer;
        }
      }
    } finally {
      steps.return(ENDED);
      this.scorerBusy = false;
    }
  }

  /**
   * The paths `search` would return for the same request (same ranking, same order), without
   * building sections or snippets; `total` is its `total_files`.
   */
  matchPaths(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage): { paths: string[]; total: number } {
    const { answer, paths } = this.freeScorer().run(this, pq, req, language, false);
    return { paths, total: answer.res.total_files };
  }
}

/** `packHeadings`' result, keeping no larger string alive (see `detach`). */
function detachHeadings(h: string | readonly string[]): string | readonly string[] {
  return typeof h === "string" ? detach(h) : h.map(detach);
}
