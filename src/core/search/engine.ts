import { detach } from "../strings";
import { isUnder } from "../paths";
import { STOP_WORDS } from "./query";
import { forEachToken, TermDict } from "./tokenize";
import { ByteWriter, decodePostings, unzig, VarintReader, zig } from "./keyword/codec";
import { LazyText, type TextPartReader } from "./keyword/lazy-text";
import { EMPTY_INTS, IntPool, PostingList } from "./keyword/postings";
import { cutSnippet, positiveTermSet, snippet, snippetWindow, WantedIds } from "./keyword/snippet";
import { showable } from "./keyword/showable";
import type { Chunk, ParsedQuery, QueryItem, SearchHit, SearchLanguage, SearchRequest, SearchResponse, SearchSection } from "./types";

/** Field weights (BM25F-style: weighted term frequency). */
export const FIELD_WEIGHTS = { title: 4, aliases: 3, headings: 2, tags: 2, body: 1 } as const;
const K1 = 1.2;
const B = 0.75;
/** At most this many chunks have their term sequence checked for a phrase; beyond, candidates count as matches. */
const PHRASE_VERIFY_CAP = 3000;
/** Chunk ids above this are taken for corruption when loading (the segment is indexed again). */
const MAX_CHUNK_ID = 1 << 26;
/**
 * The postings log is due for a merge into the lists when it holds this many postings (the indexing
 * worker merges it in steps at the start of its next slice, see `mergeDue`), and is merged at once at
 * twice that (and before any read).
 */
const LOG_MERGE_AT = 1 << 15;
/** A prefix expands to at most this many terms (the most frequent). */
const PREFIX_EXPANSION_CAP = 64;
/**
 * A note whose title (or an alias) holds query terms scores up to this much more: times the share of
 * the query it covers (idf-weighted) and the share of the title's words the query holds.
 */
const TITLE_BOOST = 1;
/** …and this much more again when the title is exactly the query's terms. */
const TITLE_EXACT_BOOST = 0.5;
/** Title boosts are computed for about this many of the best candidates (those it could lift into the top). */
const TITLE_BOOST_POOL = 200;

/**
 * Notes are spread over this many segments by a hash of their path, for persistence only: each
 * segment is saved as two small sql.js files (its notes, postings and term sequences; its chunk
 * texts), so saving after an edit exports only the segments that changed, in short steps (~0.6 and
 * ~0.7 MB at 10k notes), and loading decodes them one task at a time. Fewer, larger segments load
 * faster (each sql.js database costs ~1 ms to open and query, before its bytes): at 10k notes, 32
 * segments load in ~0.45 s where 128 took ~0.65 s.
 */
export const SEGMENT_COUNT = 32;

export function segmentOf(path: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 16777619);
  return (h >>> 0) % SEGMENT_COUNT;
}

export interface DocEntry {
  slot: number;
  seg: number;
  path: string;
  title: string;
  folder: string;
  mtime: number;
  size: number;
  hash: string;
  frontmatter: Record<string, unknown>;
  /** Lower-case tags without `#` (frontmatter and inline). */
  tags: string[];
  chunkIds: number[];
  /** Per chunk: its heading path. */
  headings: string[];
  /** The chunks' body term ids (varints, in token order), each chunk at its [SEQ_A, SEQ_B). */
  seq: Uint8Array;
  /**
   * The chunks' texts (UTF-8), each at its [TEXT_A, TEXT_B). A note restored from disk shares its
   * segment's texts, which are loaded on first use (`LazyText`).
   */
  text: Uint8Array | LazyText;
  /**
   * Chunk i's numbers at spans[spanAt + i * CHUNK_NUMS + LEN, LINE_A, …]. A note restored from disk
   * shares one array with its segment's notes (four small arrays per note were ~40k long-lived
   * objects at 10k notes, which every scavenge copied while loading).
   */
  spans: Int32Array;
  spanAt: number;
  /**
   * Term ids of the title's and aliases' tokens, in order, stop words left out: the title boost
   * compares them with the query's terms (saved with the note, so no search tokenizes titles).
   */
  titleIds: number[];
}


/** Calls `cb(term, weight, id)` for every token of the chunk's fields; body tokens come last with weight 0 meaning "body". */
function forEachField(chunk: Chunk, language: SearchLanguage, dict: TermDict | undefined, cb: (t: string, w: number, id: number) => void): void {
  forEachToken(chunk.title, language, (t, _s, _e, id) => cb(t, FIELD_WEIGHTS.title, id), dict);
  for (const a of chunk.aliases) forEachToken(a, language, (t, _s, _e, id) => cb(t, FIELD_WEIGHTS.aliases, id), dict);
  for (const h of chunk.headings) forEachToken(h, language, (t, _s, _e, id) => cb(t, FIELD_WEIGHTS.headings, id), dict);
  for (const t of chunk.tags) forEachToken(t.replace(/[/_-]/g, " "), language, (x, _s, _e, id) => cb(x, FIELD_WEIGHTS.tags, id), dict);
  forEachToken(chunk.text, language, (t, _s, _e, id) => cb(t, 0, id), dict);
}

/**
 * One note's index data, built chunk by chunk (a long note is tokenized over several slices) before
 * `InvertedIndex.addDoc` takes it. Its buffers are reused from note to note: one builder per worker,
 * `reset()` before each note, so indexing allocates little besides the note's own arrays.
 */
export class DocBuilder {
  /** Per chunk: its terms (ids) and weighted tfs at [postOff[i], postOff[i + 1]). */
  terms = new Int32Array(4096);
  tfs = new Int32Array(4096);
  postOff: number[] = [0];
  lens: number[] = [];
  seq = new ByteWriter(64 * 1024);
  seqOff: number[] = [0];
  text = new Uint8Array(64 * 1024);
  textOff: number[] = [0];
  /** The note's title term ids (see DocEntry.titleIds), from its first chunk. */
  titleIds: number[] = [];
  private tf = new Float64Array(1024);
  private touched = new Int32Array(1024);

  constructor(readonly dict: TermDict) {}

  get chunkCount(): number {
    return this.lens.length;
  }

  reset(): void {
    this.postOff = [0];
    this.lens = [];
    this.seq.reset();
    this.seqOff = [0];
    this.textOff = [0];
    this.titleIds = [];
  }

  /** Tokenizes a chunk: weighted term frequencies (title, aliases, headings and tags above the body), its body as term ids, its text. */
  addChunk(chunk: Chunk, language: SearchLanguage): void {
    let tf = this.tf;
    let touched = this.touched;
    let nt = 0;
    let len = 0;
    const seq = this.seq;
    // Every chunk carries the note's title and aliases; the first one gives the title terms.
    const titleIds = this.lens.length === 0 ? this.titleIds : null;
    forEachField(chunk, language, this.dict, (t, w, k) => {
      if (titleIds && (w === FIELD_WEIGHTS.title || w === FIELD_WEIGHTS.aliases) && !STOP_WORDS.has(t)) titleIds.push(k);
      if (k >= tf.length) {
        const g = new Float64Array(Math.max(k + 1, tf.length * 2));
        g.set(tf);
        this.tf = tf = g;
      }
      if (tf[k] === 0) {
        if (nt === touched.length) {
          const g = new Int32Array(touched.length * 2);
          g.set(touched);
          this.touched = touched = g;
        }
        touched[nt++] = k;
      }
      tf[k] += w === 0 ? FIELD_WEIGHTS.body : w;
      len++;
      if (w === 0) seq.varint(k);
    });
    let at = this.postOff[this.postOff.length - 1];
    if (at + nt > this.terms.length) {
      const cap = Math.max(at + nt, this.terms.length * 2);
      const t2 = new Int32Array(cap);
      t2.set(this.terms.subarray(0, at));
      this.terms = t2;
      const f2 = new Int32Array(cap);
      f2.set(this.tfs.subarray(0, at));
      this.tfs = f2;
    }
    for (let i = 0; i < nt; i++) {
      const k = touched[i];
      this.terms[at] = k;
      this.tfs[at++] = Math.min(0xffff, Math.round(tf[k]));
      tf[k] = 0;
    }
    this.postOff.push(at);
    this.lens.push(Math.max(1, len));
    this.seqOff.push(seq.n);
    // The chunk's text as UTF-8 (at most 3 bytes per UTF-16 unit).
    let to = this.textOff[this.textOff.length - 1];
    if (to + chunk.text.length * 3 > this.text.length) {
      const t2 = new Uint8Array(Math.max(to + chunk.text.length * 3, this.text.length * 2));
      t2.set(this.text.subarray(0, to));
      this.text = t2;
    }
    to += utf8.encodeInto(chunk.text, this.text.subarray(to)).written;
    this.textOff.push(to);
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
 * A chunk's numbers (see `DocEntry.spans`): its length in terms, its first and last line, and the
 * byte ranges [A, B) of its term sequence in its note's `seq` and of its text in its note's `text`.
 */
const CHUNK_NUMS = 7;
const LEN = 0;
const LINE_A = 1;
const LINE_B = 2;
const SEQ_A = 3;
const SEQ_B = 4;
const TEXT_A = 5;
const TEXT_B = 6;

/** Bytes [a, b) of a note's chunk texts, or null when they are lost (see `LazyText`). */
function textRange(doc: DocEntry, a: number, b: number): Uint8Array | null {
  return doc.text instanceof LazyText ? doc.text.slice(a, b) : doc.text.subarray(a, b);
}

/** Chunk i's number `field` (LEN, LINE_A, …) of `doc`. */
function span(doc: DocEntry, i: number, field: number): number {
  return doc.spans[doc.spanAt + i * CHUNK_NUMS + field];
}

/** Where `doc`'s chunks start (`field` SEQ_A or TEXT_A) or end (SEQ_B, TEXT_B) in its `seq` or `text`. */
function docEdge(doc: DocEntry, field: number): number {
  const n = doc.chunkIds.length;
  if (n === 0) return 0;
  return span(doc, field === SEQ_A || field === TEXT_A ? 0 : n - 1, field);
}

/** The persisted form of one segment (its notes; postings hold term ids of the main file's dictionary). */
export interface SegmentBlobs {
  /** JSON: the segment's notes (their strings and frontmatter). */
  docs: Uint8Array;
  /** Varints, per note in `docs` order: its chunk count, then per chunk: zigzag id delta, length, first line, line span, term-sequence bytes, text bytes. */
  nums: Uint8Array;
  /** Varints, per term present: term id delta, its posting count and their bytes in `postings` (lets loading lay out every list, and decode each one on first use). */
  terms: Uint8Array;
  /** Varints, the postings of the terms in `terms` order: (zigzag chunk id delta, tf). */
  postings: Uint8Array;
  seq: Uint8Array;
  /** The chunk texts, saved in a file of their own (see `LazyText`). */
  text: Uint8Array;
}

/** A segment as loading reads it: its texts stay on disk until first use. */
export type RestoredBlobs = Omit<SegmentBlobs, "text">;

interface PersistedDoc {
  p: string;
  m: number;
  s: number;
  h: string;
  t: string;
  f: string;
  fm: Record<string, unknown>;
  tg: string[];
  /** Per chunk: its heading path. */
  hd: string[];
  /** Title term ids (see DocEntry.titleIds). */
  ti: number[];
}

/** A persisted note with its chunk ids decoded, and where its chunks' numbers start in its segment's `spans` (loading). */
interface RestoredDoc extends PersistedDoc {
  ids: number[];
  at: number;
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

/**
 * The in-memory inverted index: one term dictionary, posting lists in typed arrays, tombstoned
 * deletes, top-k scoring. Notes belong to segments (by path hash) only for persistence.
 */
export class InvertedIndex {
  dict = new TermDict();
  lists: (PostingList | undefined)[] = [];
  dirty = new Uint8Array(SEGMENT_COUNT);
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
  private pool = new IntPool();

  docs = new Map<string, DocEntry>();
  slots: (DocEntry | null)[] = [];
  private freeSlots: number[] = [];

  // Scratch space.
  private acc = new Float64Array(1024);
  private cnt = new Int32Array(1024);
  private docMask = new Uint32Array(64);
  private docBest = new Float64Array(64);
  private docExcluded = new Uint8Array(64);
  private selectScratch = new Float64Array(256);
  private seqScratch = new Int32Array(1024);
  private hitScratch = new Uint8Array(1024);

  clear(): void {
    this.dict = new TermDict();
    this.lists = [];
    this.dirty = new Uint8Array(SEGMENT_COUNT);
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
    this.pool = new IntPool();
    this.docs.clear();
    this.slots = [];
    this.freeSlots = [];
    this.pending = [];
    this.pendingPaths = new Set();
    this.loadCounts = new Int32Array(0);
    this.owner = new Uint8Array(0);
    this.lazy = null;
    this.restored = null;
    this.logN = 0;
    this.mergeTouched = null;
    this.logOffsets = new Int32Array(0);
  }

  get termCount(): number {
    return this.dict.names.length;
  }

  private ensureChunkCap(id: number): void {
    if (id < this.alive.length) return;
    let cap = this.alive.length;
    while (cap <= id) cap *= 2;
    const grow = <T extends Int32Array | Float32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a);
      return b;
    };
    this.chunkDoc = grow(this.chunkDoc, (n) => new Int32Array(n));
    this.chunkLen = grow(this.chunkLen, (n) => new Float32Array(n));
    this.chunkOrd = grow(this.chunkOrd, (n) => new Int32Array(n));
    this.chunkSeg = grow(this.chunkSeg, (n) => new Uint8Array(n));
    this.alive = grow(this.alive, (n) => new Uint8Array(n));
  }

  private ensureScratch(): void {
    if (this.acc.length < this.alive.length) {
      this.acc = new Float64Array(this.alive.length);
      this.cnt = new Int32Array(this.alive.length);
    }
    if (this.docMask.length < this.slots.length) {
      const cap = Math.max(64, this.slots.length * 2);
      this.docMask = new Uint32Array(cap);
      this.docBest = new Float64Array(cap);
      this.docExcluded = new Uint8Array(cap);
    }
  }

  private listFor(g: number): PostingList {
    while (this.lists.length <= g) this.lists.push(undefined);
    let l = this.listAt(g);
    if (!l) this.lists[g] = l = new PostingList();
    return l;
  }

  /** Term g's list, made an object first if it was restored from disk and not used since. */
  private listAt(g: number): PostingList | undefined {
    const l = this.lists[g];
    if (l) return l;
    const r = this.restored;
    if (!r || g >= r.n.length || !r.n[g]) return undefined;
    const m = new PostingList();
    m.placeIn(r.buf, r.off[g], r.n[g] * 2);
    m.n = r.n[g];
    m.term = g;
    if (r.encoded[g]) m.pending = this.fillRestored;
    this.lists[g] = m;
    return m;
  }

  /** Term g's posting count (without making a restored list an object). */
  private listN(g: number): number {
    const l = this.lists[g];
    if (l) return l.n;
    const r = this.restored;
    return r && g < r.n.length ? r.n[g] : 0;
  }

  /** The list of a term, if any posting was ever added. */
  lookup(t: string): PostingList | undefined {
    this.flushPostings();
    const g = this.dict.map.get(t);
    return g === undefined ? undefined : this.listAt(g);
  }

  private builder: DocBuilder | null = null;

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
  addDoc(entry: Omit<DocEntry, "slot" | "chunkIds" | "headings" | "seq" | "text" | "spans" | "spanAt" | "titleIds">, chunks: Chunk[], b: DocBuilder): DocEntry {
    if (b.dict !== this.dict) throw new Error("the document was vectorized against another term dictionary");
    if (b.chunkCount !== chunks.length) throw new Error("builder and chunks disagree");
    this.removeDoc(entry.path);
    const slot = this.freeSlots.pop() ?? this.slots.length;
    // Arrays of their final length (grown by push, each would keep room for ~2× its chunks).
    const n = chunks.length;
    // Every field written out, in the order registerDocs uses: built by spreading `entry`, V8 turned
    // each note's entry into a dictionary (a hash table and a map of its own per note).
    const doc: DocEntry = {
      slot,
      seg: entry.seg,
      path: entry.path,
      title: entry.title,
      folder: entry.folder,
      mtime: entry.mtime,
      size: entry.size,
      hash: entry.hash,
      frontmatter: entry.frontmatter,
      tags: entry.tags,
      chunkIds: new Array<number>(n),
      headings: new Array<string>(n),
      seq: b.seq.result(),
      text: b.text.slice(0, b.textOff[b.textOff.length - 1]),
      spans: new Int32Array(n * CHUNK_NUMS),
      spanAt: 0,
      // The builder makes a new array for each note.
      titleIds: b.titleIds,
    };
    for (let i = 0; i < chunks.length; i++) {
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
      this.logPostings(id, b.terms, b.tfs, b.postOff[i], b.postOff[i + 1]);
      doc.chunkIds[i] = id;
      doc.headings[i] = detach(c.heading);
      const sp = i * CHUNK_NUMS;
      const cs = doc.spans;
      cs[sp + LEN] = len;
      cs[sp + LINE_A] = c.lineStart;
      cs[sp + LINE_B] = c.lineEnd;
      cs[sp + SEQ_A] = b.seqOff[i];
      cs[sp + SEQ_B] = b.seqOff[i + 1];
      cs[sp + TEXT_A] = b.textOff[i];
      cs[sp + TEXT_B] = b.textOff[i + 1];
    }
    this.slots[slot] = doc;
    this.docs.set(doc.path, doc);
    this.dirty[entry.seg] = 1;
    return doc;
  }

  /**
   * New postings go to an append-only log first (term, chunk, tf triples, written in sequence), merged
   * into the posting lists in batches: a counting sort by term, then one copy per term. Appending to
   * ~30k lists one posting at a time cost a cache miss or three per posting (~0.6 s of a 10k-note build).
   */
  private log = new Int32Array(3 * 4096);
  private logN = 0;
  private logOffsets = new Int32Array(0);
  private logSorted = new Int32Array(0);

  private logPostings(id: number, terms: Int32Array, tfs: Int32Array, from: number, to: number): void {
    const n = to - from;
    if ((this.logN + n) * 3 > this.log.length) {
      const grown = new Int32Array(Math.max(this.log.length * 2, (this.logN + n) * 3));
      grown.set(this.log.subarray(0, this.logN * 3));
      this.log = grown;
    }
    const log = this.log;
    let o = this.logN * 3;
    for (let j = from; j < to; j++) {
      log[o++] = terms[j];
      log[o++] = id;
      log[o++] = tfs[j];
    }
    this.logN += n;
    this.totalPostings += n;
    if (this.logN >= 2 * LOG_MERGE_AT) this.flushPostings(false);
  }

  /**
   * The postings log is due for a merge (or a merge is under way): the indexing worker does it with
   * `mergeSome` at the start of a slice, in slices of its own, so that a merge (5–18 ms at once) never
   * comes on top of a slice's work.
   */
  get mergeDue(): boolean {
    return this.logN >= LOG_MERGE_AT || this.mergeTouched !== null;
  }

  /**
   * A merge under way: the terms whose runs of `logSorted` are still to be copied into their lists (in
   * order; `logOffsets[g]` is the end of g's run), from `mergeI` on, the next run starting at `mergeStart`.
   * New postings go to the log meanwhile; every full merge finishes this one first, so each list still
   * gets its postings in chunk order.
   */
  private mergeTouched: number[] | null = null;
  private mergeI = 0;
  private mergeStart = 0;

  /**
   * Merges the postings log into the lists (every reader of the lists calls this first). `release`: a
   * read, not a full log; the merge buffers (a few MB while building) are let go.
   */
  flushPostings(release = true): void {
    if (this.mergeTouched) this.copyRuns(null);
    if (this.logN > 0) {
      this.sortLog();
      this.copyRuns(null);
    }
    if (release && this.log.length > 3 * 4096) {
      this.log = new Int32Array(3 * 4096);
      this.logSorted = new Int32Array(0);
    }
  }

  /**
   * Merges the postings log in steps: sorts it by term (one step) unless a merge is under way, then
   * copies runs into their lists until `due()` (asked every 128 terms). True when the merge is done.
   */
  mergeSome(due: () => boolean): boolean {
    if (!this.mergeTouched) {
      if (this.logN === 0) return true;
      this.sortLog();
      if (due()) return false;
    }
    return this.copyRuns(due);
  }

  /** Counting-sorts the log by term into `logSorted` (chunk, tf pairs) and empties it; `copyRuns` places the runs. */
  private sortLog(): void {
    const n = this.logN;
    const log = this.log;
    const terms = this.dict.names.length;
    if (this.logOffsets.length < terms + 1) this.logOffsets = new Int32Array(Math.max(terms + 1, this.logOffsets.length * 2));
    const off = this.logOffsets;
    const touched: number[] = [];
    for (let i = 0; i < n; i++) {
      const g = log[3 * i];
      if (off[g]++ === 0) touched.push(g);
    }
    // Counts → start offsets (in postings) of each touched term's run in `sorted`.
    let at = 0;
    for (const g of touched) {
      const c = off[g];
      off[g] = at;
      at += c;
    }
    if (this.logSorted.length < n * 2) this.logSorted = new Int32Array(Math.max(n * 2, this.logSorted.length * 2));
    const sorted = this.logSorted;
    for (let i = 0; i < n; i++) {
      const g = log[3 * i];
      const k = off[g]++ * 2;
      sorted[k] = log[3 * i + 1];
      sorted[k + 1] = log[3 * i + 2];
    }
    // off[g] is now the end of g's run; runs are in `touched` order.
    this.logN = 0;
    this.mergeTouched = touched;
    this.mergeI = 0;
    this.mergeStart = 0;
  }

  /** Copies the sorted runs of the merge under way into their lists, all of them or until `due()`. True when done. */
  private copyRuns(due: (() => boolean) | null): boolean {
    const touched = this.mergeTouched;
    if (!touched) return true;
    const off = this.logOffsets;
    const sorted = this.logSorted;
    let start = this.mergeStart;
    for (let i = this.mergeI; i < touched.length; i++) {
      if (due && i > this.mergeI && (i & 127) === 0 && due()) {
        this.mergeI = i;
        this.mergeStart = start;
        return false;
      }
      const g = touched[i];
      const end = off[g];
      const l = this.listFor(g);
      l.reserve(end - start, this.pool);
      const d = l.data;
      if (end - start > 16) d.set(sorted.subarray(start * 2, end * 2), l.n * 2);
      else for (let k = start * 2, o = l.n * 2; k < end * 2; k++, o++) d[o] = sorted[k];
      l.n += end - start;
      off[g] = 0;
      start = end;
    }
    this.mergeTouched = null;
    return true;
  }

  /** A document's stat changed (same content). */
  touchDoc(doc: DocEntry): void {
    this.dirty[doc.seg] = 1;
  }

  removeDoc(path: string): DocEntry | null {
    const doc = this.docs.get(path);
    if (!doc) return null;
    this.docs.delete(path);
    this.slots[doc.slot] = null;
    this.freeSlots.push(doc.slot);
    this.dirty[doc.seg] = 1;
    for (let i = 0; i < doc.chunkIds.length; i++) {
      const id = doc.chunkIds[i];
      if (!this.alive[id]) continue;
      this.alive[id] = 0;
      this.liveChunks--;
      this.totalLen -= this.chunkLen[id];
    }
    // Posting entries stay until compaction; estimate how many died.
    this.deadPostings += doc.chunkIds.length * 60;
    return doc;
  }

  /** Dead postings are a quarter of the postings or more. (The service also compacts after indexing many notes, for the space grown lists left behind.) */
  needsCompaction(): boolean {
    return this.deadPostings > 50_000 && this.deadPostings > this.totalPostings * 0.25;
  }

  /**
   * Lays the posting lists out again in one exact buffer, without dead postings, list by list until
   * `deadline()`; false when done. The index must not change between steps (the service runs it inside
   * its exclusive worker); every list is valid (old or new storage) after every step.
   */
  compactSome(state: { seg: number; k: number; buf?: Int32Array; off?: number }, deadline: () => boolean): boolean {
    this.flushPostings();
    const alive = this.alive;
    if (!state.buf) {
      let total = 0;
      for (let g = 0; g < this.lists.length; g++) total += this.listN(g) * 2;
      state.buf = new Int32Array(total);
      state.off = 0;
    }
    const buf = state.buf;
    let o = state.off ?? 0;
    let checked = o;
    while (state.k < this.lists.length) {
      const l = this.listAt(state.k++);
      if (l) {
        const d = l.data;
        const start = o;
        for (let i = 0; i < l.n; i++) {
          const id = d[2 * i];
          if (alive[id]) {
            buf[o++] = id;
            buf[o++] = d[2 * i + 1];
          }
        }
        const w = (o - start) / 2;
        if (w) l.placeIn(buf, start, o - start);
        else l.data = EMPTY_INTS;
        this.totalPostings -= l.n - w;
        l.n = w;
      }
      // Every 256 lists or 64k copied ints (the common terms' lists are long).
      if (((state.k & 255) === 0 || o - checked > 65536) && deadline()) {
        state.off = o;
        return true;
      }
      if (o - checked > 65536) checked = o;
    }
    this.deadPostings = 0;
    this.pool.reset();
    this.restored = null; // every restored list is an object now, laid out in `buf`
    return false;
  }

  dirtySegments(): number[] {
    const out: number[] = [];
    for (let i = 0; i < SEGMENT_COUNT; i++) if (this.dirty[i]) out.push(i);
    return out;
  }

  markAllDirty(): void {
    this.dirty.fill(1);
  }

  /**
   * Serializes the given segments in steps (`step(deadline)` is true when done): one pass over the
   * posting lists splits live postings by segment. The index must not change between steps (the
   * service runs it inside its exclusive worker). Clears the segments' dirty flags.
   */
  segmentWriter(segs: number[]): {
    step(deadline: () => boolean): boolean;
    /** Segment `k`'s blobs: views into buffers reused by the next call (write them out first). */
    blobs(k: number): SegmentBlobs;
  } {
    this.flushPostings();
    const seqW = new ByteWriter(256 * 1024);
    const textW = new ByteWriter(1024 * 1024);
    const numW = new ByteWriter(64 * 1024);
    const docsW = new ByteWriter(256 * 1024);
    const want = new Uint8Array(SEGMENT_COUNT);
    for (const k of segs) want[k] = 1;
    const posts = new Map<number, ByteWriter>();
    const heads = new Map<number, ByteWriter>();
    const lastTerm = new Int32Array(SEGMENT_COUNT);
    const prevId = new Int32Array(SEGMENT_COUNT);
    const counts = new Int32Array(SEGMENT_COUNT);
    const startLen = new Int32Array(SEGMENT_COUNT);
    for (const k of segs) {
      posts.set(k, new ByteWriter(64 * 1024));
      heads.set(k, new ByteWriter(16 * 1024));
      this.dirty[k] = 0;
    }
    let g = 0;
    const alive = this.alive;
    const chunkSeg = this.chunkSeg;
    let bySeg: DocEntry[][] | null = null;
    return {
      step: (deadline) => {
        let steps = 0;
        let work = 0;
        if (!bySeg) {
          // The segments' notes, grouped in one pass.
          const groups: DocEntry[][] = Array.from({ length: SEGMENT_COUNT }, () => []);
          for (const d of this.docs.values()) if (want[d.seg]) groups[d.seg].push(d);
          bySeg = groups;
          if (deadline()) return false;
        }
        while (g < this.lists.length) {
          const l = this.listAt(g);
          if (l && l.n) {
            counts.fill(0);
            const d = l.data;
            for (let i = 0; i < l.n; i++) {
              const id = d[2 * i];
              if (alive[id] && want[chunkSeg[id]]) counts[chunkSeg[id]]++;
            }
            for (const k of segs) {
              if (!counts[k]) continue;
              prevId[k] = 0;
              startLen[k] = posts.get(k)!.n;
            }
            for (let i = 0; i < l.n; i++) {
              const id = d[2 * i];
              const k = chunkSeg[id];
              if (!alive[id] || !want[k]) continue;
              const w = posts.get(k)!;
              w.varint(zig(id - prevId[k]));
              w.varint(d[2 * i + 1]);
              prevId[k] = id;
            }
            // The term header: term id delta, posting count, and their encoded bytes.
            for (const k of segs) {
              if (!counts[k]) continue;
              const w = heads.get(k)!;
              w.varint(g - lastTerm[k]);
              lastTerm[k] = g;
              w.varint(counts[k]);
              w.varint(posts.get(k)!.n - startLen[k]);
            }
            work += l.n;
          }
          g++;
          // Every 256 lists or 32k postings: the first lists are the common terms', and the longest.
          if (((++steps & 255) === 0 || work > 32768) && deadline()) return false;
          if (work > 32768) work = 0;
        }
        return true;
      },
      blobs: (k) => {
        seqW.reset();
        textW.reset();
        numW.reset();
        // The notes as a JSON array, written into a reused buffer one note at a time: as one
        // string (~150 KB a segment at 10k notes) it went straight to V8's old generation.
        docsW.reset();
        docsW.byte(0x5b); // [
        for (const d of bySeg?.[k] ?? []) {
          if (this.docs.get(d.path) !== d) continue;
          seqW.bytes(d.seq.subarray(docEdge(d, SEQ_A), docEdge(d, SEQ_B)));
          // Texts that could not be loaded are saved empty (the note is being indexed again).
          const tb = textRange(d, docEdge(d, TEXT_A), docEdge(d, TEXT_B));
          const cs = d.spans;
          if (tb) textW.bytes(tb);
          const n = d.chunkIds.length;
          numW.varint(n);
          let prev = 0;
          for (let i = 0; i < n; i++) {
            const id = d.chunkIds[i];
            const sp = d.spanAt + i * CHUNK_NUMS;
            numW.varint(zig(id - prev));
            prev = id;
            numW.varint(cs[sp + LEN]);
            numW.varint(cs[sp + LINE_A]);
            numW.varint(zig(cs[sp + LINE_B] - cs[sp + LINE_A]));
            numW.varint(cs[sp + SEQ_B] - cs[sp + SEQ_A]);
            numW.varint(tb ? cs[sp + TEXT_B] - cs[sp + TEXT_A] : 0);
          }
          if (docsW.n > 1) docsW.byte(0x2c); // ,
          docsW.text(docJson({ p: d.path, m: d.mtime, s: d.size, h: d.hash, t: d.title, f: d.folder, fm: d.frontmatter, tg: d.tags, hd: d.headings, ti: d.titleIds }));
        }
        docsW.byte(0x5d); // ]
        const post = posts.get(k)!;
        const head = heads.get(k)!;
        posts.delete(k);
        heads.delete(k);
        return { docs: docsW.view(), nums: numW.view(), terms: head.view(), postings: post.view(), seq: seqW.view(), text: textW.view() };
      },
    };
  }

  /** The term dictionary as saved: its terms, one per line, as UTF-8. */
  dictBytes(): Uint8Array {
    // Term by term into one buffer (joined first, the dictionary was a ~1 MB string, which V8
    // allocates straight into its old generation).
    const names = this.dict.names;
    const w = new ByteWriter(names.length * 10 + 16);
    for (let i = 0; i < names.length; i++) {
      if (i > 0) w.byte(0x0a); // \n
      w.text(names[i]);
    }
    return w.view();
  }

  /**
   * Starts from a persisted dictionary (before any `restoreSegment`), calling `yieldNow` every 1024
   * terms. In a fresh process, splitting 30k terms and filling the map in one step took 16–27 ms.
   */
  async restoreDict(names: Uint8Array, yieldNow: () => Promise<void>): Promise<void> {
    this.clear();
    const dict = new TermDict();
    if (names.length) {
      const all = utf8d.decode(names);
      for (let i = 0, n = 1; ; n++) {
        const j = all.indexOf("\n", i);
        dict.push(j < 0 ? all.slice(i) : all.slice(i, j));
        if (j < 0) break;
        i = j + 1;
        if ((n & 1023) === 0) await yieldNow();
      }
    }
    this.dict = dict;
  }

  /**
   * After loading: where the restored lists lie in one buffer (term g: n[g] postings at off[g];
   * encoded[g] while not decoded yet). A restored list becomes a PostingList object on first use
   * (`listAt`): making all ~30k of them while loading (10k notes) took ~30 ms of a fresh process and
   * added 2.4 MB that every scavenge copied.
   */
  private restored: { buf: Int32Array; off: Int32Array; n: Int32Array; encoded: Uint8Array } | null = null;
  private readonly fillRestored = (l: PostingList): void => this.decodeList(l.term);
  private pending: { k: number; docs: RestoredDoc[]; b: RestoredBlobs; text: LazyText; spans: Int32Array; gs: Int32Array; ns: Int32Array; offs: Int32Array }[] = [];
  /**
   * After loading, the segments' postings still encoded: each list is decoded on first use (see
   * `PostingList.pending`) or by `decodeSomeLists` in the background. `owner` tags each chunk id with
   * its segment (k + 1) to check every posting; `left` counts the lists not decoded yet.
   */
  private lazy: { segs: { k: number; src: Uint8Array; gs: Int32Array; ns: Int32Array; offs: Int32Array; failed: boolean }[]; owner: Uint8Array; left: number; next: number } | null = null;
  /** Called when a restored segment's postings turn out inconsistent (its notes must be indexed again). */
  onSegmentLost: ((k: number) => void) | null = null;
  private pendingPaths = new Set<string>();
  private loadCounts = new Int32Array(0);
  /** Loading: chunk id → 1 + the segment that holds it (0: none). */
  private owner = new Uint8Array(0);

  /**
   * Loading, step 1 of 2, one call per segment: decodes and checks a persisted segment's notes and
   * its term header (not its postings). Throws when its data is inconsistent (the segment is then
   * left out; its notes are indexed again). Its texts are read by `readText` on first use; `lost` is
   * called if that fails.
   */
  restoreSegment(k: number, b: RestoredBlobs, readText: TextPartReader, lost: (seg: number, why: string) => void): void {
    const docs = JSON.parse(utf8d.decode(b.docs)) as RestoredDoc[];
    const mine: number[] = [];
    const tag = k + 1;
    // The segment's chunks' numbers, in order, in one array its notes share (see DocEntry.spans).
    let spans = new Int32Array(Math.max(64, docs.length * 4 * CHUNK_NUMS));
    let sn = 0;
    const names = this.dict.names.length;
    try {
      const r = new VarintReader(b.nums);
      let so = 0;
      let to = 0;
      for (const d of docs) {
        if (this.docs.has(d.p) || this.pendingPaths.has(d.p)) throw new Error(`note ${d.p} twice`);
        const n = r.next();
        if (!Array.isArray(d.hd) || d.hd.length !== n) throw new Error("chunk headings do not match");
        const ti = d.ti;
        if (!Array.isArray(ti)) throw new Error("no title terms");
        for (let i = 0; i < ti.length; i++) if (!(ti[i] >= 0 && ti[i] < names && Number.isInteger(ti[i]))) throw new Error("title term id out of range");
        d.ids = new Array<number>(n);
        d.at = sn;
        let id = 0;
        for (let i = 0; i < n; i++) {
          id += unzig(r.next());
          if (id <= 0 || id > MAX_CHUNK_ID) throw new Error("bad chunk id");
          if (id >= this.owner.length) {
            const o = new Uint8Array(Math.max(id + 1, this.owner.length * 2, 1024));
            o.set(this.owner);
            this.owner = o;
          }
          if (this.owner[id]) throw new Error("chunk id reused");
          this.owner[id] = tag;
          mine.push(id);
          d.ids[i] = id;
          if (sn + CHUNK_NUMS > spans.length) {
            const grown = new Int32Array(spans.length * 2);
            grown.set(spans);
            spans = grown;
          }
          const sp = sn;
          spans[sp + LEN] = r.next();
          const a = r.next();
          spans[sp + LINE_A] = a;
          spans[sp + LINE_B] = a + unzig(r.next());
          spans[sp + SEQ_A] = so;
          so += r.next();
          spans[sp + SEQ_B] = so;
          spans[sp + TEXT_A] = to;
          to += r.next();
          spans[sp + TEXT_B] = to;
          sn += CHUNK_NUMS;
        }
      }
      if (!r.done()) throw new Error("trailing chunk data");
      if (so !== b.seq.length) throw new Error("segment chunks truncated");
      const text = new LazyText(k, to, readText, lost);
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
      if (this.loadCounts.length < names) {
        const c = new Int32Array(names);
        c.set(this.loadCounts);
        this.loadCounts = c;
      }
      for (let i = 0; i < m; i++) this.loadCounts[gs[i]] += ns[i];
      for (const d of docs) this.pendingPaths.add(d.p);
      this.pending.push({ k, docs, b, text, spans: spans.slice(0, sn), gs: gs.slice(0, m), ns: ns.slice(0, m), offs: offs.slice(0, m + 1) });
    } catch (e) {
      for (const id of mine) this.owner[id] = 0;
      throw e;
    }
  }

  /**
   * Loading, step 2: lays out the posting lists (one buffer, sized from the term headers) and
   * registers every segment's notes. The postings stay encoded: a list is decoded the first time it
   * is used, or by `decodeSomeLists`. Decoding 2.5M postings was the longest part of loading (10k
   * notes), and a first answer needs only the query's lists. A segment whose postings turn out
   * inconsistent is reported through `onSegmentLost` (its notes are indexed again; what it wrote
   * stays as dead postings). `yieldNow` yields when the slice is used up; `nextTask` always does.
   */
  async finishRestore(yieldNow: () => Promise<void>, nextTask: () => Promise<void> = yieldNow): Promise<void> {
    // The buffer (~20 MB at 10k notes) is a task of its own: allocating that much outside V8's heap
    // makes V8 collect the young generation at once (12–25 ms in a fresh process, with every note
    // just loaded still young), and that task then holds nothing else.
    await nextTask();
    const counts = this.loadCounts;
    let total = 0;
    for (let g = 0; g < counts.length; g++) total += counts[g];
    const buf = new Int32Array(total * 2);
    await nextTask();
    const offs = new Int32Array(counts.length);
    const encoded = new Uint8Array(counts.length);
    let off = 0;
    let lists = 0;
    while (this.lists.length < counts.length) this.lists.push(undefined);
    for (let g = 0; g < counts.length; g++) {
      if ((g & 4095) === 4095) await yieldNow();
      if (!counts[g]) continue;
      offs[g] = off;
      encoded[g] = 1;
      off += counts[g] * 2;
      lists++;
    }
    this.totalPostings += total;
    this.restored = lists ? { buf, off: offs, n: counts, encoded } : null;
    this.lazy = lists
      ? { segs: this.pending.map(({ k, b, gs, ns, offs }) => ({ k, src: b.postings, gs, ns, offs, failed: false })), owner: this.owner, left: lists, next: 0 }
      : null;
    // A segment's notes in batches: a segment at once (~300 notes at 10k) was up to ~16 ms.
    for (const { k, docs, b, text, spans } of this.pending) {
      for (let i = 0; i < docs.length; i += 64) {
        await yieldNow();
        this.registerDocs(k, docs, i, Math.min(docs.length, i + 64), b, text, spans);
      }
    }
    this.pending = [];
    this.pendingPaths = new Set();
    this.loadCounts = new Int32Array(0);
    this.owner = new Uint8Array(0);
  }

  /** Decodes term g's restored postings from every segment that has the term, in segment order. */
  private decodeList(g: number): void {
    const lz = this.lazy;
    const r = this.restored;
    if (!lz || !r || !r.encoded[g]) return;
    r.encoded[g] = 0;
    const buf = r.buf;
    let at = r.off[g];
    for (const s of lz.segs) {
      const t = findSorted(s.gs, g);
      if (t < 0) continue;
      const n = s.ns[t];
      if (!s.failed && decodePostings(s.src, s.offs[t], n, buf, at, lz.owner, s.k + 1) !== s.offs[t + 1]) {
        s.failed = true;
        this.dirty[s.k] = 1;
        this.onSegmentLost?.(s.k);
      }
      // A failed segment's part stays (or becomes) chunk 0, which is never alive.
      if (s.failed) buf.fill(0, at, at + 2 * n);
      at += 2 * n;
    }
    if (--lz.left === 0) this.lazy = null;
  }

  /** True while some lists restored from disk are still encoded. */
  get hasEncodedLists(): boolean {
    return this.lazy !== null;
  }

  /** Decodes encoded lists until `deadline` passes (checked every ~16k postings). False when none is left. */
  decodeSomeLists(deadline: () => boolean): boolean {
    let work = 0;
    while (this.lazy) {
      const g = this.lazy.next++;
      if (g >= this.lists.length) {
        this.lazy = null; // every list was visited (none can be left encoded)
        break;
      }
      // Decoded in place, list object or not (a list object's own `pending` then finds it done).
      const r = this.restored;
      if (!r?.encoded[g]) continue;
      work += r.n[g];
      this.decodeList(g);
      if (work > 16384) {
        work = 0;
        if (deadline()) return this.lazy !== null;
      }
    }
    return false;
  }

  /**
   * Terms at these quantiles (0–1) of posting-list length, shortest first (for warming up the search
   * path), among at most ~2k terms spread evenly over the dictionary (testing and sorting all 30k
   * terms of 10k notes was one ~15 ms step) whose lists hold at most `maxPostings` chunks.
   */
  sampleTerms(quantiles: number[], maxPostings = Infinity): string[] {
    this.flushPostings();
    const gs: number[] = [];
    const stride = Math.max(1, Math.floor(this.lists.length / 2048));
    for (let g = 0; g < this.lists.length; g += stride) {
      const n = this.listN(g);
      if (n && n <= maxPostings && /^\p{L}+$/u.test(this.dict.names[g])) gs.push(g);
    }
    if (!gs.length) return [];
    gs.sort((a, b) => this.listN(a) - this.listN(b));
    return quantiles.map((q) => this.dict.names[gs[Math.min(gs.length - 1, Math.floor(q * gs.length))]]);
  }

  /** Restored segments' texts that were not loaded yet (the service loads them in the background). */
  unloadedTexts(): LazyText[] {
    const out = new Set<LazyText>();
    for (const d of this.docs.values()) if (d.text instanceof LazyText && !d.text.settled) out.add(d.text);
    return [...out];
  }

  /** The notes of segment `k` as loaded from disk (not indexed again since). */
  restoredPaths(k: number): string[] {
    const out: string[] = [];
    for (const d of this.docs.values()) if (d.text instanceof LazyText && d.text.seg === k) out.push(d.path);
    return out;
  }

  /** Registers restored notes `docs[from, to)` of segment `k`. */
  private registerDocs(k: number, docs: RestoredDoc[], from: number, to: number, b: RestoredBlobs, text: LazyText, spans: Int32Array): void {
    for (let j = from; j < to; j++) {
      const d = docs[j];
      const slot = this.freeSlots.pop() ?? this.slots.length;
      const doc: DocEntry = {
        slot,
        seg: k,
        path: d.p,
        title: d.t,
        folder: d.f,
        mtime: d.m,
        size: d.s,
        hash: d.h,
        frontmatter: d.fm,
        tags: d.tg,
        chunkIds: d.ids,
        headings: d.hd,
        seq: b.seq,
        text,
        spans,
        spanAt: d.at,
        titleIds: d.ti,
      };
      this.slots[slot] = doc;
      this.docs.set(doc.path, doc);
      for (let i = 0; i < d.ids.length; i++) {
        const id = d.ids[i];
        this.ensureChunkCap(id);
        this.chunkDoc[id] = slot;
        this.chunkLen[id] = span(doc, i, LEN);
        this.chunkOrd[id] = i;
        this.chunkSeg[id] = k;
        this.alive[id] = 1;
        this.liveChunks++;
        this.totalLen += this.chunkLen[id];
        if (id >= this.nextId) this.nextId = id + 1;
      }
    }
  }

  /** Terms starting with `prefix`, most frequent first (capped). */
  expandPrefix(prefix: string): string[] {
    this.flushPostings();
    const out: string[] = [];
    const names = this.dict.names;
    const c0 = prefix.charCodeAt(0);
    for (let g = 0; g < names.length; g++) {
      const t = names[g];
      if (t.charCodeAt(0) === c0 && t.startsWith(prefix) && this.listN(g)) out.push(t);
    }
    if (out.length > PREFIX_EXPANSION_CAP) {
      const df = (t: string) => this.lookup(t)?.n ?? 0;
      out.sort((a, b) => df(b) - df(a) || (a < b ? -1 : 1));
      out.length = PREFIX_EXPANSION_CAP;
    }
    return out;
  }

  /** The text of a chunk (decoded from UTF-8). */
  chunkText(doc: DocEntry, i: number): string {
    // The note's whole text (a restored note's is read at once: its other sections are likely next).
    const base = docEdge(doc, TEXT_A);
    const t = textRange(doc, base, docEdge(doc, TEXT_B));
    return t ? utf8d.decode(t.subarray(span(doc, i, TEXT_A) - base, span(doc, i, TEXT_B) - base)) : "";
  }

  /** Decodes chunk `o` of `doc`'s body term ids into `seqScratch`; returns how many. */
  private decodeSeq(doc: DocEntry, o: number): number {
    const b = doc.seq;
    let p = span(doc, o, SEQ_A);
    const end = span(doc, o, SEQ_B);
    if (this.seqScratch.length < end - p) this.seqScratch = new Int32Array(end - p);
    const hay = this.seqScratch;
    let n = 0;
    while (p < end) {
      let v = 0;
      let shift = 0;
      for (;;) {
        const x = b[p++];
        v |= (x & 0x7f) << shift;
        if (x < 0x80) break;
        shift += 7;
      }
      hay[n++] = v;
    }
    return n;
  }

  /** True when chunk `id`'s body holds the term ids of `needle` in a row. */
  private hasSequence(id: number, needle: Int32Array): boolean {
    const doc = this.slots[this.chunkDoc[id]];
    if (!doc) return false;
    const n = this.decodeSeq(doc, this.chunkOrd[id]);
    const hay = this.seqScratch;
    const m = needle.length;
    outer: for (let i = 0; i + m <= n; i++) {
      for (let j = 0; j < m; j++) if (hay[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  }

  /**
   * `snippet` of chunk `o`, found in its stored term sequence (the body's tokens, in order): a chunk
   * of at most `words` tokens is not tokenized again, a longer one only to locate the window.
   */
  private sectionSnippet(doc: DocEntry, o: number, want: WantedIds, words: number, language: SearchLanguage): string {
    const text = this.chunkText(doc, o);
    if (words <= 0) return showable(text);
    const n = this.decodeSeq(doc, o);
    if (n <= words) return showable(text.trim());
    if (this.hitScratch.length < n) this.hitScratch = new Uint8Array(Math.max(n, 2 * this.hitScratch.length));
    const hit = this.hitScratch;
    const ids = this.seqScratch;
    for (let i = 0; i < n; i++) hit[i] = want.has(ids[i]) ? 1 : 0;
    const { first, last } = snippetWindow(hit, n, words);
    let k = 0;
    let start = 0;
    let end = 0;
    forEachToken(text, language, (_t, s, e) => {
      if (k === first) start = s;
      if (k === last) end = e;
      k++;
    });
    // The sequence was made from this very text; should they ever disagree, tokenize it the old way.
    if (k !== n) return snippet(text, want.terms, words, language);
    return cutSnippet(text, n, first, last, start, end);
  }

  search(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage): SearchResponse {
    return this.run(pq, req, language, true).res;
  }

  /**
   * The paths `search` would return for the same request (same ranking, same order), without
   * building sections or snippets; `total` is its `total_files`.
   */
  matchPaths(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage): { paths: string[]; total: number } {
    const { res, paths } = this.run(pq, req, language, false);
    return { paths, total: res.total_files };
  }

  private run(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage, withHits: boolean): { res: SearchResponse; paths: string[] } {
    this.flushPostings();
    const clauses = pq.clauses.slice(0, 31);
    if (clauses.length === 0 || this.liveChunks === 0) return { res: { hits: [], total_files: 0, relaxed: false }, paths: [] };
    this.ensureScratch();
    const N = this.liveChunks;
    const avg = this.totalLen / N;
    const acc = this.acc;
    const docMask = this.docMask;
    const touched: number[] = [];
    const docsTouched: number[] = [];
    const excludedDocs: number[] = [];
    const alive = this.alive;
    const chunkDoc = this.chunkDoc;
    const chunkLen = this.chunkLen;
    let verified = 0;

    /** A term's list (as an array of lists: prefixes expand to several). */
    const listsOf = (t: string): PostingList[] => {
      const l = this.lookup(t);
      return l && l.n ? [l] : [];
    };
    const idfMemo = new Map<PostingList[], number>();
    const idfOf = (ls: PostingList[]): number => {
      const memo = idfMemo.get(ls);
      if (memo !== undefined) return memo;
      let df = 0;
      for (const l of ls) for (let i = 0; i < l.n; i++) if (alive[l.data[2 * i]]) df++;
      const idf = df === 0 ? 0 : Math.log(1 + (N - df + 0.5) / (df + 0.5));
      idfMemo.set(ls, idf);
      return idf;
    };
    const termIdf = new Map<string, number>();
    const idfOfTerm = (t: string): number => {
      let v = termIdf.get(t);
      if (v === undefined) termIdf.set(t, (v = idfOf(listsOf(t))));
      return v;
    };
    /** Adds a term's scores. `need`: docs must already match these clause bits (AND pruning). */
    const addTerm = (ls: PostingList[], bit: number, only: Set<number> | null, need: number) => {
      const idf = idfOf(ls);
      if (idf === 0) return;
      for (const l of ls) {
        const d = l.data;
        for (let i = 0; i < l.n; i++) {
          const id = d[2 * i];
          if (!alive[id] || (only && !only.has(id))) continue;
          const slot = chunkDoc[id];
          if (need && (docMask[slot] & need) !== need) continue;
          const tf = d[2 * i + 1];
          const s = (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * chunkLen[id]) / avg));
          if (acc[id] === 0) touched.push(id);
          acc[id] += s;
          if (docMask[slot] === 0) docsTouched.push(slot);
          docMask[slot] |= bit;
        }
      }
    };
    /** Chunks holding every term (intersection from the rarest list); `phrase`: in a row. */
    const allTermsChunks = (terms: string[], phrase: boolean): Set<number> => {
      const out = new Set<number>();
      const uniq = [...new Set(terms)];
      const cnt = this.cnt;
      const ls: PostingList[] = [];
      for (const t of uniq) {
        const l = this.lookup(t);
        if (!l || l.n === 0) return out;
        ls.push(l);
      }
      ls.sort((a, b) => a.n - b.n);
      const seen: number[] = [];
      for (let k = 0; k < ls.length; k++) {
        const d = ls[k].data;
        const n = ls[k].n;
        for (let i = 0; i < n; i++) {
          const id = d[2 * i];
          if (!alive[id] || cnt[id] !== k) continue;
          if (k === 0) seen.push(id);
          cnt[id] = k + 1;
        }
      }
      const needle = phrase ? Int32Array.from(terms, (t) => this.dict.map.get(t)!) : null;
      for (const id of seen) {
        if (cnt[id] === ls.length) {
          if (!needle || verified >= PHRASE_VERIFY_CAP) out.add(id);
          else {
            verified++;
            if (this.hasSequence(id, needle)) out.add(id);
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
          for (let i = 0; i < l.n; i++) {
            const id = l.data[2 * i];
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
    const termLists = (it: QueryItem): PostingList[][] => {
      if (it.kind !== "term") return [];
      const names = it.prefix ? this.expandPrefix(it.term) : [it.term];
      return names.map(listsOf).filter((x) => x.length > 0);
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
        for (const ls of termLists(it)) for (const l of ls) n += l.n;
      }
      return n;
    };

    // Cheapest clauses first: later (common) terms only score notes that matched the earlier ones.
    const order = clauses.map((c, i) => ({ c, i, cost: costOf(c) })).sort((a, b) => a.cost - b.cost);
    const score = (prune: boolean) => {
      let need = 0;
      for (const { c, i } of order) {
        const bit = 1 << i;
        for (const it of c) {
          const m = itemChunks(it);
          if (m === null) for (const ls of termLists(it)) addTerm(ls, bit, null, prune ? need : 0);
          else if (m.chunks.size > 0) for (const t of new Set(m.terms)) addTerm(listsOf(t), bit, m.chunks, prune ? need : 0);
        }
        need |= bit;
      }
    };
    const reset = () => {
      for (const id of touched) acc[id] = 0;
      for (const s of docsTouched) {
        docMask[s] = 0;
        this.docBest[s] = 0;
      }
      touched.length = 0;
      docsTouched.length = 0;
    };
    score(clauses.length > 1);

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
        for (const ls of termLists(it)) for (const l of ls) for (let i = 0; i < l.n; i++) if (alive[l.data[2 * i]]) mark(l.data[2 * i]);
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
      const doc = this.slots[slot];
      if (!doc) return false;
      if (folder && !isUnder(doc.path, folder)) return false;
      return !req.filters || matchesFilters(doc, req.filters);
    };
    const candidates = (all: boolean): number[] => {
      const out: number[] = [];
      for (let i = 0; i < docsTouched.length; i++) {
        const s = docsTouched[i];
        if ((all ? docMask[s] === full : docMask[s] !== 0) && passes(s)) out.push(s);
      }
      return out;
    };
    const best = () => {
      for (const id of touched) {
        const slot = chunkDoc[id];
        if (acc[id] > docBest[slot]) docBest[slot] = acc[id];
      }
    };
    best();
    const limit = Math.max(0, Math.floor(req.limit));
    let cands = candidates(true);
    // Notes with only some of the terms: asked for when fewer notes than the limit have them all.
    let partial: number[] = [];
    if (cands.length < limit && clauses.length > 1) {
      // Score every term over every note; a partial match ranks by how many clauses it matches,
      // and always after the notes that match them all (whose scores this pass leaves the same).
      reset();
      score(false);
      best();
      const some = candidates(false);
      cands = some.filter((s) => docMask[s] === full);
      partial = some.filter((s) => docMask[s] !== full);
      for (const s of partial) docBest[s] = (docBest[s] * popcount(docMask[s])) / clauses.length;
    }
    const relaxed = cands.length === 0 && partial.length > 0;

    // Title boost: notes whose title or alias holds the query's terms.
    const want = clauses.map((c) => c.flatMap((it) => (it.kind === "term" ? [it] : it.terms.map((t) => ({ kind: "term" as const, term: t, prefix: false })))));
    const wantCount = want.reduce((n, c) => n + (c.length ? 1 : 0), 0);
    // Each clause weighs its rarest term's idf: a title holding the rare word of the query counts more.
    const weights = want.map((c) => c.reduce((m, it) => Math.max(m, it.prefix ? 1 : idfOfTerm(it.term)), 0));
    const totalWeight = weights.reduce((a, b) => a + b, 0);
    const pool = partial.length ? cands.concat(partial) : cands;
    if (wantCount > 0 && totalWeight > 0) {
      // Boost among the best candidates only (a title match lifts a note by at most 2.5×).
      let boostSet = pool;
      if (pool.length > TITLE_BOOST_POOL) {
        // The pool's score floor by selection, not a sort (sorting every candidate was a third of a common query's time).
        if (this.selectScratch.length < pool.length) this.selectScratch = new Float64Array(Math.max(pool.length, 2 * this.selectScratch.length));
        const scores = this.selectScratch;
        for (let i = 0; i < pool.length; i++) scores[i] = docBest[pool[i]];
        const floor = kthLargest(scores, pool.length, TITLE_BOOST_POOL);
        const cut = floor / (1 + TITLE_BOOST + TITLE_EXACT_BOOST);
        boostSet = pool.filter((s) => docBest[s] >= cut);
        if (boostSet.length > TITLE_BOOST_POOL * 4) boostSet = boostSet.filter((s) => docBest[s] >= floor);
      }
      // A title term is in clause i when it is one of the clause's terms or starts with one of its prefixes.
      const names = this.dict.names;
      const wantIds = want.map((c) => c.flatMap((it) => (it.prefix ? [] : [this.dict.map.get(it.term) ?? -1])));
      const wantPrefixes = want.map((c) => c.flatMap((it) => (it.prefix ? [it.term] : [])));
      const inClause = (x: number, i: number): boolean => wantIds[i].includes(x) || wantPrefixes[i].some((p) => names[x].startsWith(p));
      for (const s of boostSet) {
        const tt = this.slots[s]!.titleIds;
        if (tt.length === 0) continue;
        let hit = 0;
        let w = 0;
        for (let i = 0; i < want.length; i++) {
          if (tt.some((x) => inClause(x, i))) {
            hit++;
            w += weights[i];
          }
        }
        if (hit === 0) continue;
        const cov = w / totalWeight;
        let inQuery = 0;
        for (const x of tt) if (want.some((_c, i) => inClause(x, i))) inQuery++;
        const precision = inQuery / tt.length;
        let f = 1 + TITLE_BOOST * cov * precision;
        if (hit === wantCount && precision === 1) f += TITLE_EXACT_BOOST;
        docBest[s] *= f;
      }
    }

    const better = (a: number, b: number) => docBest[a] > docBest[b] || (docBest[a] === docBest[b] && this.slots[a]!.path < this.slots[b]!.path);
    // Top-k by insertion: most candidates fall below the current k-th score and cost one comparison.
    const topOf = (list: readonly number[], k: number): number[] => {
      const top: number[] = [];
      for (const s of list) {
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
    const whole = topOf(cands, limit);
    const top = partial.length ? whole.concat(topOf(partial, limit - whole.length)) : whole;
    // What a partial match lacks: each clause it missed, as the query holds it.
    const clauseText = clauses.map((c) => c.map((it) => (it.kind === "term" ? `${it.term}${it.prefix ? "*" : ""}` : `"${it.terms.join(" ")}"`)).join(" OR "));
    const missingOf = (slot: number): string[] => clauseText.filter((_t, i) => !(docMask[slot] & (1 << i)));

    const paths = top.map((slot) => this.slots[slot]!.path);
    const wanted = withHits ? new WantedIds(positiveTermSet(pq), this.dict) : null;
    const hits = (withHits ? top : []).map((slot) => {
      const doc = this.slots[slot]!;
      const chunkIds = doc.chunkIds.filter((id) => acc[id] > 0).sort((a, b) => acc[b] - acc[a]);
      const sections: SearchSection[] = [];
      for (const id of chunkIds.slice(0, Math.max(0, req.chunksPerFile))) {
        const o = this.chunkOrd[id];
        sections.push({
          heading: doc.headings[o],
          content: this.sectionSnippet(doc, o, wanted!, req.snippetWords, language),
          score: round(acc[id]),
          line_start: span(doc, o, LINE_A),
          line_end: span(doc, o, LINE_B),
        });
      }
      const hit: SearchHit = { path: doc.path, title: doc.title, folder: doc.folder, score: round(docBest[slot]), frontmatter: doc.frontmatter, sections };
      if (docMask[slot] !== full) hit.missing = missingOf(slot);
      return hit;
    });

    reset();
    for (const s of excludedDocs) this.docExcluded[s] = 0;
    const res: SearchResponse = { hits, total_files: relaxed ? partial.length : cands.length, relaxed };
    if (partial.length && !relaxed) res.partial_files = partial.length;
    return { res, paths };
  }
}

/**
 * The k-th largest of `a[0..n)` (1 ≤ k ≤ n), by quickselect with a median-of-three pivot; reorders
 * `a[0..n)`. Same value as `a.subarray(0, n).sort()[n - k]`, in linear time on average.
 */
export function kthLargest(a: Float64Array, n: number, k: number): number {
  const m = n - k;
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const mid = (lo + hi) >>> 1;
    let x = a[lo];
    let y = a[mid];
    let z = a[hi];
    if (x > y) [x, y] = [y, x];
    if (y > z) [y, z] = [z, y];
    if (x > y) [x, y] = [y, x];
    const pivot = y;
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i] = a[j];
        a[j] = t;
        i++;
        j--;
      }
    }
    if (m <= j) hi = j;
    else if (m >= i) lo = i;
    else return a[m];
  }
  return a[m];
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

export function containsSequence<T>(hay: ArrayLike<T>, needle: ArrayLike<T>): boolean {
  if (needle.length === 0) return true;
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Frontmatter filters: lists contain the value, strings equal it (case-insensitive); `tags` include inline and nested tags. */
export function matchesFilters(doc: Pick<DocEntry, "tags" | "frontmatter">, filters: Record<string, string | number | boolean>): boolean {
  for (const [key, raw] of Object.entries(filters)) {
    const want = String(raw).trim().toLowerCase();
    if (key === "tags" || key === "tag") {
      const w = want.replace(/^#/, "");
      if (!doc.tags.some((t) => t === w || t.startsWith(w + "/"))) return false;
      continue;
    }
    let v = doc.frontmatter[key];
    if (v === undefined) {
      const k = Object.keys(doc.frontmatter).find((x) => x.toLowerCase() === key.toLowerCase());
      if (k !== undefined) v = doc.frontmatter[k];
    }
    if (v === undefined || v === null) return false;
    const vals = Array.isArray(v) ? v : [v];
    if (!vals.some((x) => (typeof x === "string" || typeof x === "number" || typeof x === "boolean") && String(x).trim().toLowerCase() === want)) return false;
  }
  return true;
}

function docJson(doc: PersistedDoc): string {
  try {
    return JSON.stringify(doc);
  } catch {
    // A frontmatter value JSON cannot hold: save the note's frontmatter as {}.
    doc.fm = {};
    return JSON.stringify(doc);
  }
}
