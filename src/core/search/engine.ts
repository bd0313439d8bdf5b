import { frontmatterAliases } from "../metadata";
import { isUnder } from "../paths";
import { STOP_WORDS } from "./query";
import { forEachToken, tokenize } from "./tokenize";
import type { Chunk, ParsedQuery, QueryItem, SearchLanguage, SearchRequest, SearchResponse, SearchSection } from "./types";

/** Field weights (BM25F-style: weighted term frequency). */
export const FIELD_WEIGHTS = { title: 4, aliases: 3, headings: 2, tags: 2, body: 1 } as const;
const K1 = 1.2;
const B = 0.75;
/** At most this many chunks have their term sequence checked for a phrase; beyond, candidates count as matches. */
const PHRASE_VERIFY_CAP = 3000;
/** A prefix expands to at most this many terms (the most frequent). */
const PREFIX_EXPANSION_CAP = 64;
/**
 * A note whose title (or an alias) holds query terms scores up to this much more: times the share of
 * the query it covers (idf-weighted) and the share of the title's words the query holds.
 */
const TITLE_BOOST = 1;
/** …and this much more again when the title is exactly the query's terms. */
const TITLE_EXACT_BOOST = 0.5;

/**
 * Notes are spread over this many segments by a hash of their path. Each segment has its own term
 * dictionary and posting lists and is persisted as its own small sql.js file, so saving after an edit
 * exports only the segments that changed, each in a few milliseconds.
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
  chunkLens: number[];
  /** Per chunk: its heading path, and its first and last line (two numbers per chunk). */
  headings: string[];
  lines: number[];
  /** Per chunk: the body's segment-local term ids (varints) at seq[seqOff[i], seqOff[i+1]). */
  seq: Uint8Array;
  seqOff: number[];
  /** Per chunk: its text (UTF-8) at text[textOff[i], textOff[i+1]]. */
  text: Uint8Array;
  textOff: number[];
  /** Terms of the title and aliases (computed on first use). */
  titleTerms?: string[];
}

/** A chunk's weighted term frequencies (segment-local term ids) and its body as term ids. */
export interface ChunkVec {
  ids: Int32Array;
  tfs: Float32Array;
  len: number;
  seq: Uint8Array;
}

/** The former string-keyed vector (kept for callers of `chunkVector`). */
export interface ChunkVector {
  terms: string[];
  tfs: number[];
  len: number;
  seq: string[];
}

class PostingList {
  constructor(
    public ids: Int32Array,
    public tfs: Float32Array,
    public n: number,
  ) {}
  push(id: number, tf: number): void {
    if (this.n === this.ids.length) {
      const cap = Math.max(4, Math.ceil(this.n * 1.5));
      const ids = new Int32Array(cap);
      ids.set(this.ids.subarray(0, this.n));
      const tfs = new Float32Array(cap);
      tfs.set(this.tfs.subarray(0, this.n));
      this.ids = ids;
      this.tfs = tfs;
    }
    this.ids[this.n] = id;
    this.tfs[this.n] = tf;
    this.n++;
  }
}

/** Weighted term frequencies of a chunk (title, aliases, headings and tags above the body). */
export function chunkVector(chunk: Chunk, language: SearchLanguage): ChunkVector {
  const tf = new Map<string, number>();
  let len = 0;
  const seq: string[] = [];
  forEachField(chunk, language, (t, w) => {
    tf.set(t, (tf.get(t) ?? 0) + w);
    len++;
    if (w === 0) seq.push(t);
  });
  return { terms: [...tf.keys()], tfs: [...tf.values()], len: Math.max(1, len), seq };
}

/** Calls `cb(term, weight)` for every token of the chunk's fields; body tokens come last with weight 0 meaning "body". */
function forEachField(chunk: Chunk, language: SearchLanguage, cb: (t: string, w: number) => void): void {
  forEachToken(chunk.title, language, (t) => cb(t, FIELD_WEIGHTS.title));
  for (const a of chunk.aliases) forEachToken(a, language, (t) => cb(t, FIELD_WEIGHTS.aliases));
  for (const h of chunk.headings) forEachToken(h, language, (t) => cb(t, FIELD_WEIGHTS.headings));
  for (const t of chunk.tags) forEachToken(t.replace(/[/_-]/g, " "), language, (x) => cb(x, FIELD_WEIGHTS.tags));
  forEachToken(chunk.text, language, (t) => cb(t, 0));
}

/** A growable byte buffer for varints. */
class ByteWriter {
  buf: Uint8Array;
  n = 0;
  constructor(cap = 256) {
    this.buf = new Uint8Array(cap);
  }
  private grow(need: number): void {
    let cap = this.buf.length * 2;
    while (cap < this.n + need) cap *= 2;
    const b = new Uint8Array(cap);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
  }
  varint(v: number): void {
    if (this.n + 5 > this.buf.length) this.grow(5);
    while (v >= 0x80) {
      this.buf[this.n++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.n++] = v;
  }
  bytes(b: Uint8Array): void {
    if (this.n + b.length > this.buf.length) this.grow(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.n);
  }
}

/** The persisted form of one segment. */
export interface SegmentBlobs {
  /** JSON: the segment's documents. */
  docs: Uint8Array;
  /** Term names in local-id order, "\n"-separated. */
  names: Uint8Array;
  /** Local ids sorted by name (Uint32). */
  sorted: Uint8Array;
  /** Per term: count, then (id delta, tf) varints. */
  postings: Uint8Array;
  /** Uint32 offsets into `postings`, one per term plus one. */
  postOff: Uint8Array;
  seq: Uint8Array;
  text: Uint8Array;
}

interface PersistedDoc {
  p: string;
  m: number;
  s: number;
  h: string;
  t: string;
  f: string;
  fm: Record<string, unknown>;
  tg: string[];
  ids: number[];
  lens: number[];
  hd: string[];
  ln: number[];
  so: number[];
  to: number[];
}

/** One segment: a term dictionary and posting lists (decoded from the persisted bytes on first use). */
class Segment {
  terms = new Map<string, number>();
  names: string[] = [];
  lists: (PostingList | undefined)[] = [];
  /** Loaded postings still encoded: term k at enc[encOff[k], encOff[k+1]). */
  enc: Uint8Array | null = null;
  encOff: Uint32Array | null = null;
  /** Local ids sorted by name, for the terms known when the segment was last loaded or saved. */
  sorted: Uint32Array<ArrayBufferLike> = new Uint32Array(0);
  docs = new Set<DocEntry>();
  dirty = false;
  deadPostings = 0;

  termId(t: string): number {
    let k = this.terms.get(t);
    if (k === undefined) {
      k = this.names.length;
      this.names.push(t);
      this.terms.set(t, k);
    }
    return k;
  }

  list(k: number): PostingList | undefined {
    const l = this.lists[k];
    if (l || !this.enc || !this.encOff || k + 1 >= this.encOff.length) return l;
    const d = decodePostings(this.enc, this.encOff[k], this.encOff[k + 1]);
    this.lists[k] = d;
    return d;
  }

  lookup(t: string): PostingList | undefined {
    const k = this.terms.get(t);
    return k === undefined ? undefined : this.list(k);
  }

  listForWrite(k: number): PostingList {
    let l = this.list(k);
    if (!l) this.lists[k] = l = new PostingList(new Int32Array(2), new Float32Array(2), 0);
    return l;
  }

  /** Adds the segment's terms starting with `prefix` to `out`. */
  expandPrefix(prefix: string, out: Set<string>): void {
    const names = this.names;
    const sorted = this.sorted;
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (names[sorted[mid]] < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < sorted.length; i++) {
      const t = names[sorted[i]];
      if (!t.startsWith(prefix)) break;
      out.add(t);
    }
    // Terms added since the last save are not in `sorted`.
    for (let k = sorted.length; k < names.length; k++) if (names[k].startsWith(prefix)) out.add(names[k]);
  }
}

function decodePostings(b: Uint8Array, from: number, to: number): PostingList {
  let p = from;
  const rd = (): number => {
    let v = 0;
    let shift = 0;
    for (;;) {
      const x = b[p++];
      v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v;
      shift += 7;
    }
  };
  const n = from < to ? rd() : 0;
  const ids = new Int32Array(Math.max(2, n));
  const tfs = new Float32Array(Math.max(2, n));
  let id = 0;
  for (let i = 0; i < n; i++) {
    id += rd();
    ids[i] = id;
    tfs[i] = rd();
  }
  return new PostingList(ids, tfs, n);
}

const utf8 = new TextEncoder();
const utf8d = new TextDecoder();

function u32Bytes(a: Uint32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

function u32Of(b: Uint8Array): Uint32Array {
  if (b.byteLength % 4) throw new Error("blob of odd size");
  const out = new Uint32Array(b.byteLength / 4);
  new Uint8Array(out.buffer).set(b);
  return out;
}

/** The in-memory inverted index: segments of posting lists in typed arrays, tombstoned deletes, top-k scoring. */
export class InvertedIndex {
  segments: Segment[] = [];
  chunkDoc = new Int32Array(1024);
  chunkLen = new Float32Array(1024);
  chunkOrd = new Int32Array(1024);
  alive = new Uint8Array(1024);
  nextId = 1;
  liveChunks = 0;
  totalLen = 0;
  totalPostings = 0;
  deadPostings = 0;

  docs = new Map<string, DocEntry>();
  slots: (DocEntry | null)[] = [];
  private freeSlots: number[] = [];

  // Scratch space.
  private acc = new Float64Array(1024);
  private cnt = new Int32Array(1024);
  private docMask = new Uint32Array(64);
  private docBest = new Float64Array(64);
  private docExcluded = new Uint8Array(64);
  private vecTf = new Float64Array(1024);
  private seqScratch = new Int32Array(1024);

  constructor() {
    this.clear();
  }

  clear(): void {
    this.segments = [];
    for (let i = 0; i < SEGMENT_COUNT; i++) this.segments.push(new Segment());
    this.chunkDoc = new Int32Array(1024);
    this.chunkLen = new Float32Array(1024);
    this.chunkOrd = new Int32Array(1024);
    this.alive = new Uint8Array(1024);
    this.nextId = 1;
    this.liveChunks = 0;
    this.totalLen = 0;
    this.totalPostings = 0;
    this.deadPostings = 0;
    this.docs.clear();
    this.slots = [];
    this.freeSlots = [];
  }

  /** Number of distinct terms over all segments (a term in several segments counts once per segment). */
  get termCount(): number {
    let n = 0;
    for (const s of this.segments) n += s.names.length;
    return n;
  }

  private ensureChunkCap(id: number): void {
    if (id < this.alive.length) return;
    let cap = this.alive.length;
    while (cap <= id) cap *= 2;
    const d = new Int32Array(cap);
    d.set(this.chunkDoc);
    this.chunkDoc = d;
    const l = new Float32Array(cap);
    l.set(this.chunkLen);
    this.chunkLen = l;
    const o = new Int32Array(cap);
    o.set(this.chunkOrd);
    this.chunkOrd = o;
    const a = new Uint8Array(cap);
    a.set(this.alive);
    this.alive = a;
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

  /** Tokenizes a chunk into segment `seg`'s term ids (creating terms as needed). */
  vectorize(seg: number, chunk: Chunk, language: SearchLanguage): ChunkVec {
    const s = this.segments[seg];
    const touched: number[] = [];
    const seq = new ByteWriter(Math.max(64, chunk.text.length >> 1));
    let len = 0;
    forEachField(chunk, language, (t, w) => {
      const k = s.termId(t);
      if (k >= this.vecTf.length) {
        const g = new Float64Array(Math.max(k + 1, this.vecTf.length * 2));
        g.set(this.vecTf);
        this.vecTf = g;
      }
      if (this.vecTf[k] === 0) touched.push(k);
      this.vecTf[k] += w === 0 ? FIELD_WEIGHTS.body : w;
      len++;
      if (w === 0) seq.varint(k);
    });
    const ids = new Int32Array(touched.length);
    const tfs = new Float32Array(touched.length);
    for (let i = 0; i < touched.length; i++) {
      ids[i] = touched[i];
      tfs[i] = this.vecTf[touched[i]];
      this.vecTf[touched[i]] = 0;
    }
    return { ids, tfs, len: Math.max(1, len), seq: seq.result() };
  }

  /** Adds a document with its chunks (vectorized into segment `entry.seg`); replaces an older version. */
  addDoc(entry: Omit<DocEntry, "slot" | "chunkIds" | "chunkLens" | "headings" | "lines" | "seq" | "seqOff" | "text" | "textOff">, chunks: Chunk[], vecs: ChunkVec[]): DocEntry {
    this.removeDoc(entry.path);
    const seg = this.segments[entry.seg];
    const slot = this.freeSlots.pop() ?? this.slots.length;
    const seqW = new ByteWriter(1024);
    const textW = new ByteWriter(1024);
    const doc: DocEntry = { ...entry, slot, chunkIds: [], chunkLens: [], headings: [], lines: [], seq: new Uint8Array(0), seqOff: [0], text: new Uint8Array(0), textOff: [0] };
    for (let i = 0; i < vecs.length; i++) {
      const v = vecs[i];
      const c = chunks[i];
      const id = this.nextId++;
      this.ensureChunkCap(id);
      this.chunkDoc[id] = slot;
      this.chunkLen[id] = v.len;
      this.chunkOrd[id] = i;
      this.alive[id] = 1;
      this.liveChunks++;
      this.totalLen += v.len;
      for (let j = 0; j < v.ids.length; j++) seg.listForWrite(v.ids[j]).push(id, v.tfs[j]);
      this.totalPostings += v.ids.length;
      doc.chunkIds.push(id);
      doc.chunkLens.push(v.len);
      doc.headings.push(c.heading);
      doc.lines.push(c.lineStart, c.lineEnd);
      seqW.bytes(v.seq);
      doc.seqOff.push(seqW.n);
      textW.bytes(utf8.encode(c.text));
      doc.textOff.push(textW.n);
    }
    doc.seq = seqW.result();
    doc.text = textW.result();
    this.slots[slot] = doc;
    this.docs.set(doc.path, doc);
    seg.docs.add(doc);
    seg.dirty = true;
    return doc;
  }

  /** Updates a document's stat (same content). */
  touchDoc(doc: DocEntry): void {
    this.segments[doc.seg].dirty = true;
  }

  removeDoc(path: string): DocEntry | null {
    const doc = this.docs.get(path);
    if (!doc) return null;
    this.docs.delete(path);
    this.slots[doc.slot] = null;
    this.freeSlots.push(doc.slot);
    const seg = this.segments[doc.seg];
    seg.docs.delete(doc);
    seg.dirty = true;
    for (let i = 0; i < doc.chunkIds.length; i++) {
      const id = doc.chunkIds[i];
      if (!this.alive[id]) continue;
      this.alive[id] = 0;
      this.liveChunks--;
      this.totalLen -= doc.chunkLens[i];
    }
    // Posting entries stay until compaction; estimate how many died.
    const dead = doc.chunkIds.length * 60;
    this.deadPostings += dead;
    seg.deadPostings += dead;
    return doc;
  }

  needsCompaction(): boolean {
    return this.deadPostings > 50_000 && this.deadPostings > this.totalPostings * 0.25;
  }

  /** Removes dead postings from decoded lists, segment by segment, until `deadline()`; false when done. */
  compactSome(state: { seg: number; k: number }, deadline: () => boolean): boolean {
    while (state.seg < SEGMENT_COUNT) {
      const s = this.segments[state.seg];
      while (state.k < s.lists.length) {
        const l = s.lists[state.k++];
        if (!l) continue;
        let w = 0;
        for (let i = 0; i < l.n; i++) {
          const id = l.ids[i];
          if (this.alive[id]) {
            l.ids[w] = id;
            l.tfs[w] = l.tfs[i];
            w++;
          }
        }
        this.totalPostings -= l.n - w;
        l.n = w;
        if ((state.k & 255) === 0 && deadline()) return true;
      }
      s.deadPostings = 0;
      state.seg++;
      state.k = 0;
    }
    this.deadPostings = 0;
    return false;
  }

  dirtySegments(): number[] {
    const out: number[] = [];
    for (let i = 0; i < SEGMENT_COUNT; i++) if (this.segments[i].dirty) out.push(i);
    return out;
  }

  markAllDirty(): void {
    for (const s of this.segments) s.dirty = true;
  }

  /** The persisted form of a segment (live postings only). Clears its dirty flag. */
  serializeSegment(k: number): SegmentBlobs {
    const s = this.segments[k];
    const post = new ByteWriter(64 * 1024);
    const off = new Uint32Array(s.names.length + 1);
    const alive = this.alive;
    for (let t = 0; t < s.names.length; t++) {
      off[t] = post.n;
      const l = s.lists[t];
      if (!l && s.enc && s.encOff && t + 1 < s.encOff.length) {
        // Never decoded since loading: its postings may hold dead ids; re-encode only if so.
        const d = decodePostings(s.enc, s.encOff[t], s.encOff[t + 1]);
        let dead = false;
        for (let i = 0; i < d.n; i++) if (!alive[d.ids[i]]) dead = true;
        if (!dead) {
          post.bytes(s.enc.subarray(s.encOff[t], s.encOff[t + 1]));
          continue;
        }
        encodeList(post, d, alive);
        continue;
      }
      if (l) encodeList(post, l, alive);
      else post.varint(0);
    }
    off[s.names.length] = post.n;
    const order = new Uint32Array(s.names.length);
    for (let i = 0; i < order.length; i++) order[i] = i;
    const names = s.names;
    order.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : 0));
    s.sorted = order;
    const seqW = new ByteWriter(64 * 1024);
    const textW = new ByteWriter(256 * 1024);
    const docs: PersistedDoc[] = [];
    for (const d of s.docs) {
      const so: number[] = [];
      const to: number[] = [];
      const seqBase = seqW.n - d.seqOff[0];
      const textBase = textW.n - d.textOff[0];
      for (const o of d.seqOff) so.push(o + seqBase);
      for (const o of d.textOff) to.push(o + textBase);
      seqW.bytes(d.seq.subarray(d.seqOff[0], d.seqOff[d.seqOff.length - 1]));
      textW.bytes(d.text.subarray(d.textOff[0], d.textOff[d.textOff.length - 1]));
      docs.push({ p: d.path, m: d.mtime, s: d.size, h: d.hash, t: d.title, f: d.folder, fm: d.frontmatter, tg: d.tags, ids: d.chunkIds, lens: d.chunkLens, hd: d.headings, ln: d.lines, so, to });
    }
    s.dirty = false;
    return {
      docs: utf8.encode(docsJson(docs)),
      names: utf8.encode(names.join("\n")),
      sorted: u32Bytes(order),
      postings: post.result(),
      postOff: u32Bytes(off),
      seq: seqW.result(),
      text: textW.result(),
    };
  }

  /** Loads a persisted segment into an empty one. Throws when the data is inconsistent (the segment is then left empty). */
  restoreSegment(k: number, b: SegmentBlobs): void {
    const s = new Segment();
    const names = b.names.length ? utf8d.decode(b.names).split("\n") : [];
    const off = u32Of(b.postOff);
    const sorted = u32Of(b.sorted);
    if (off.length !== names.length + 1 || sorted.length !== names.length || off[names.length] !== b.postings.length) throw new Error("segment postings do not match its terms");
    const docs = JSON.parse(utf8d.decode(b.docs)) as PersistedDoc[];
    for (const d of docs) if (d.so[d.so.length - 1] > b.seq.length || d.to[d.to.length - 1] > b.text.length || d.ids.length + 1 !== d.so.length) throw new Error("segment chunks truncated");
    s.names = names;
    for (let i = 0; i < names.length; i++) s.terms.set(names[i], i);
    s.enc = b.postings;
    s.encOff = off;
    s.sorted = sorted;
    this.segments[k] = s;
    for (const d of docs) {
      if (this.docs.has(d.p) || d.ids.some((id) => id < this.alive.length && this.alive[id])) continue;
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
        chunkLens: d.lens,
        headings: d.hd,
        lines: d.ln,
        seq: b.seq,
        seqOff: d.so,
        text: b.text,
        textOff: d.to,
      };
      this.slots[slot] = doc;
      this.docs.set(doc.path, doc);
      s.docs.add(doc);
      for (let i = 0; i < d.ids.length; i++) {
        const id = d.ids[i];
        this.ensureChunkCap(id);
        this.chunkDoc[id] = slot;
        this.chunkLen[id] = d.lens[i];
        this.chunkOrd[id] = i;
        this.alive[id] = 1;
        this.liveChunks++;
        this.totalLen += d.lens[i];
        if (id >= this.nextId) this.nextId = id + 1;
      }
    }
    // Postings are counted approximately (they are decoded lazily).
    this.totalPostings += Math.round(b.postings.length / 2.5);
  }

  /** Terms starting with `prefix`, most frequent first (capped). */
  expandPrefix(prefix: string): string[] {
    const set = new Set<string>();
    for (const s of this.segments) s.expandPrefix(prefix, set);
    const out = [...set];
    if (out.length > PREFIX_EXPANSION_CAP) {
      const df = new Map<string, number>();
      for (const t of out) {
        let n = 0;
        for (const s of this.segments) n += s.lookup(t)?.n ?? 0;
        df.set(t, n);
      }
      out.sort((a, b) => df.get(b)! - df.get(a)! || (a < b ? -1 : 1));
      out.length = PREFIX_EXPANSION_CAP;
    }
    return out;
  }

  /** The text of a chunk (decoded from UTF-8). */
  chunkText(doc: DocEntry, i: number): string {
    return utf8d.decode(doc.text.subarray(doc.textOff[i], doc.textOff[i + 1]));
  }

  private titleTerms(doc: DocEntry, language: SearchLanguage): string[] {
    if (!doc.titleTerms) {
      const t = [doc.title, ...frontmatterAliases(doc.frontmatter)].join(" \n ");
      doc.titleTerms = tokenize(t, { language }).filter((x) => !STOP_WORDS.has(x));
    }
    return doc.titleTerms;
  }

  /** True when chunk `id`'s body holds the (segment-local) term ids of `needle` in a row. */
  private hasSequence(id: number, needle: Int32Array): boolean {
    const doc = this.slots[this.chunkDoc[id]];
    if (!doc) return false;
    const o = this.chunkOrd[id];
    const b = doc.seq;
    let p = doc.seqOff[o];
    const end = doc.seqOff[o + 1];
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
    const m = needle.length;
    outer: for (let i = 0; i + m <= n; i++) {
      for (let j = 0; j < m; j++) if (hay[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  }

  search(pq: ParsedQuery, req: SearchRequest, language: SearchLanguage): SearchResponse {
    const clauses = pq.clauses.slice(0, 31);
    if (clauses.length === 0 || this.liveChunks === 0) return { hits: [], total_files: 0, relaxed: false };
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

    /** Every segment's list for a term. */
    const listsOf = (t: string): PostingList[] => {
      const out: PostingList[] = [];
      for (const s of this.segments) {
        const l = s.lookup(t);
        if (l && l.n) out.push(l);
      }
      return out;
    };
    const idfMemo = new Map<PostingList[], number>();
    const idfOf = (ls: PostingList[]): number => {
      const memo = idfMemo.get(ls);
      if (memo !== undefined) return memo;
      let df = 0;
      for (const l of ls) for (let i = 0; i < l.n; i++) if (alive[l.ids[i]]) df++;
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
        for (let i = 0; i < l.n; i++) {
          const id = l.ids[i];
          if (!alive[id] || (only && !only.has(id))) continue;
          const slot = chunkDoc[id];
          if (need && (docMask[slot] & need) !== need) continue;
          const tf = l.tfs[i];
          const s = (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * chunkLen[id]) / avg));
          if (acc[id] === 0) touched.push(id);
          acc[id] += s;
          if (docMask[slot] === 0) docsTouched.push(slot);
          docMask[slot] |= bit;
        }
      }
    };
    /** Chunks holding every term (intersection from the rarest list), per segment; `phrase`: in a row. */
    const allTermsChunks = (terms: string[], phrase: boolean): Set<number> => {
      const out = new Set<number>();
      const uniq = [...new Set(terms)];
      const cnt = this.cnt;
      for (const s of this.segments) {
        const ls: PostingList[] = [];
        let missing = false;
        for (const t of uniq) {
          const l = s.lookup(t);
          if (!l || l.n === 0) {
            missing = true;
            break;
          }
          ls.push(l);
        }
        if (missing) continue;
        ls.sort((a, b) => a.n - b.n);
        const seen: number[] = [];
        for (let k = 0; k < ls.length; k++) {
          const l = ls[k];
          for (let i = 0; i < l.n; i++) {
            const id = l.ids[i];
            if (!alive[id] || cnt[id] !== k) continue;
            if (k === 0) seen.push(id);
            cnt[id] = k + 1;
          }
        }
        const needle = phrase ? Int32Array.from(terms, (t) => s.terms.get(t)!) : null;
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
            const id = l.ids[i];
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
        for (const ls of termLists(it)) for (const l of ls) for (let i = 0; i < l.n; i++) if (alive[l.ids[i]]) mark(l.ids[i]);
      } else for (const id of m.chunks) mark(id);
    }

    const full = clauses.length === 31 ? 0x7fffffff : (1 << clauses.length) - 1;
    const docBest = this.docBest;
    const folder = (req.folder ?? "").replace(/^\/+|\/+$/g, "");
    const passes = (slot: number): boolean => {
      const doc = this.slots[slot];
      if (!doc || this.docExcluded[slot]) return false;
      if (folder && !isUnder(doc.path, folder)) return false;
      return !req.filters || matchesFilters(doc, req.filters);
    };
    const best = () => {
      for (const id of touched) {
        const slot = chunkDoc[id];
        if (acc[id] > docBest[slot]) docBest[slot] = acc[id];
      }
    };
    best();
    let cands = docsTouched.filter((s) => docMask[s] === full && passes(s));
    let relaxed = false;
    if (cands.length === 0 && clauses.length > 1) {
      // No note has every term: score every term over every note, ranked by how many clauses they match.
      relaxed = true;
      reset();
      score(false);
      best();
      cands = docsTouched.filter((s) => docMask[s] !== 0 && passes(s));
      for (const s of cands) docBest[s] = (docBest[s] * popcount(docMask[s])) / clauses.length;
    }
    if (cands.length === 0) relaxed = false;

    // Title boost: notes whose title or alias holds the query's terms.
    const want = clauses.map((c) => c.flatMap((it) => (it.kind === "term" ? [it] : it.terms.map((t) => ({ kind: "term" as const, term: t, prefix: false })))));
    const wantCount = want.reduce((n, c) => n + (c.length ? 1 : 0), 0);
    // Each clause weighs its rarest term's idf: a title holding the rare word of the query counts more.
    const weights = want.map((c) => c.reduce((m, it) => Math.max(m, it.prefix ? 1 : idfOfTerm(it.term)), 0));
    const totalWeight = weights.reduce((a, b) => a + b, 0);
    if (wantCount > 0 && totalWeight > 0) {
      for (const s of cands) {
        const tt = this.titleTerms(this.slots[s]!, language);
        if (tt.length === 0) continue;
        let hit = 0;
        let w = 0;
        want.forEach((c, i) => {
          if (c.some((it) => (it.prefix ? tt.some((x) => x.startsWith(it.term)) : tt.includes(it.term)))) {
            hit++;
            w += weights[i];
          }
        });
        if (hit === 0) continue;
        const cov = w / totalWeight;
        let inQuery = 0;
        for (const x of tt) if (want.some((c) => c.some((it) => (it.prefix ? x.startsWith(it.term) : x === it.term)))) inQuery++;
        const precision = inQuery / tt.length;
        let f = 1 + TITLE_BOOST * cov * precision;
        if (hit === wantCount && precision === 1) f += TITLE_EXACT_BOOST;
        docBest[s] *= f;
      }
    }

    const limit = Math.max(0, Math.floor(req.limit));
    const better = (a: number, b: number) => docBest[a] > docBest[b] || (docBest[a] === docBest[b] && this.slots[a]!.path < this.slots[b]!.path);
    // Top-k by insertion: most candidates fall below the current k-th score and cost one comparison.
    const top: number[] = [];
    for (const s of cands) {
      if (top.length === limit && (limit === 0 || !better(s, top[limit - 1]))) continue;
      let i = top.length < limit ? top.length : limit - 1;
      if (top.length < limit) top.push(s);
      while (i > 0 && better(s, top[i - 1])) {
        top[i] = top[i - 1];
        i--;
      }
      top[i] = s;
    }

    const wanted = positiveTermSet(pq);
    const hits = top.map((slot) => {
      const doc = this.slots[slot]!;
      const chunkIds = doc.chunkIds.filter((id) => acc[id] > 0).sort((a, b) => acc[b] - acc[a]);
      const sections: SearchSection[] = [];
      for (const id of chunkIds.slice(0, Math.max(0, req.chunksPerFile))) {
        const o = this.chunkOrd[id];
        sections.push({
          heading: doc.headings[o],
          content: snippet(this.chunkText(doc, o), wanted, req.snippetWords, language),
          score: round(acc[id]),
          line_start: doc.lines[2 * o],
          line_end: doc.lines[2 * o + 1],
        });
      }
      return { path: doc.path, title: doc.title, folder: doc.folder, score: round(docBest[slot]), frontmatter: doc.frontmatter, sections };
    });

    reset();
    for (const s of excludedDocs) this.docExcluded[s] = 0;
    return { hits, total_files: cands.length, relaxed };
  }
}

function encodeList(w: ByteWriter, l: PostingList, alive: Uint8Array): void {
  let n = 0;
  for (let i = 0; i < l.n; i++) if (alive[l.ids[i]]) n++;
  w.varint(n);
  let prev = 0;
  for (let i = 0; i < l.n; i++) {
    const id = l.ids[i];
    if (!alive[id]) continue;
    w.varint(id - prev);
    w.varint(Math.round(l.tfs[i]));
    prev = id;
  }
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

interface TermSet {
  exact: Set<string>;
  prefixes: string[];
}

function positiveTermSet(pq: ParsedQuery): TermSet {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const clause of pq.clauses)
    for (const it of clause) {
      if (it.kind === "phrase") for (const t of it.terms) exact.add(t);
      else if (it.prefix) prefixes.push(it.term);
      else exact.add(it.term);
    }
  return { exact, prefixes };
}

const WORD_STOP = /[\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff01-\uff0f]/u;

/** A window of `words` tokens around the densest cluster of matched terms; the whole text when 0. */
export function snippet(text: string, want: TermSet, words: number, language: SearchLanguage): string {
  if (words <= 0) return text;
  const starts: number[] = [];
  const ends: number[] = [];
  const hit: number[] = [];
  forEachToken(text, language, (t, s, e) => {
    starts.push(s);
    ends.push(e);
    hit.push(want.exact.has(t) || want.prefixes.some((p) => t.startsWith(p)) ? 1 : 0);
  });
  const n = starts.length;
  if (n <= words) return text.trim();
  let best = 0;
  let bestAt = 0;
  let cur = 0;
  for (let i = 0; i < n; i++) {
    cur += hit[i];
    if (i >= words) cur -= hit[i - words];
    if (i >= words - 1 && cur > best) {
      best = cur;
      bestAt = i - words + 1;
    }
  }
  // Centre the window on its matches when they cluster at one end.
  if (best > 0) {
    let first = bestAt;
    while (first < bestAt + words && !hit[first]) first++;
    let last = bestAt + words - 1;
    while (last > first && !hit[last]) last--;
    const mid = Math.floor((first + last) / 2);
    bestAt = Math.max(0, Math.min(n - words, mid - Math.floor(words / 2)));
  }
  const endTok = Math.min(n, bestAt + words) - 1;
  // Whole words: keep leading punctuation (`#tag`, `[[link`), never cut inside unspaced scripts.
  let a = bestAt === 0 ? 0 : starts[bestAt];
  while (a > 0 && !WORD_STOP.test(text[a - 1])) a--;
  let b = endTok === n - 1 ? text.length : ends[endTok];
  while (b < text.length && !WORD_STOP.test(text[b])) b++;
  return (bestAt > 0 ? "… " : "") + text.slice(a, b).trim() + (endTok < n - 1 ? " …" : "");
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

function docsJson(docs: PersistedDoc[]): string {
  try {
    return JSON.stringify(docs);
  } catch {
    // A frontmatter value JSON cannot hold: save that note's frontmatter as {}.
    for (const d of docs) {
      try {
        JSON.stringify(d.fm);
      } catch {
        d.fm = {};
      }
    }
    return JSON.stringify(docs);
  }
}
