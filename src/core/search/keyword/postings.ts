/**
 * Posting lists (each term's chunk ids and weighted term frequencies), the tf's one-byte code, and
 * the slab pool growing lists take their space from. Owns the lists' memory layout; what goes in
 * them is the index's business.
 */
import { grownArray } from "../../memory";
import { DecodedRoom, type Block } from "./decoded-room";

/** Weighted tfs up to this are kept exactly in their one-byte code; above, in steps of ~9.5%. */
export const TF_EXACT = 191;
/** The ratio between the coded tfs above TF_EXACT: code 255 stands for 65535, the largest weighted tf (see DocBuilder). */
const TF_STEP = Math.log(0xffff / TF_EXACT) / (255 - TF_EXACT);

/**
 * The weighted tf each one-byte code stands for. Codes up to TF_EXACT are the tf itself (nearly
 * every posting: a chunk's weighted tf is rarely above a few dozen); above, a geometric scale, where
 * BM25 has long saturated (a tf 5% off moves a score by less than 0.1%).
 */
export const TF_OF = ((): Uint16Array => {
  const t = new Uint16Array(256);
  for (let c = 0; c < 256; c++) t[c] = c <= TF_EXACT ? c : Math.min(0xffff, Math.round(TF_EXACT * Math.exp((c - TF_EXACT) * TF_STEP)));
  return t;
})();

/** The one-byte code of weighted tf `tf` (0–65535; see TF_OF). */
export function tfCode(tf: number): number {
  if (tf <= TF_EXACT) return tf;
  return Math.min(255, TF_EXACT + Math.round(Math.log(tf / TF_EXACT) / TF_STEP));
}

/**
 * Postings of one term, struct of arrays: chunk ids (`ids`) and their weighted tfs' one-byte codes
 * (`tfs`; the tf is `TF_OF[code]`), 5 bytes a posting. As (id, tf) Int32 pairs they were 8, 189 MB
 * at 100k notes. A list compaction laid out is packed instead (`packed`: ~1.8 bytes a posting), its
 * ids and tf codes decoded when a reader asks for either and kept in a cache of bounded size
 * (`PACKED_CACHE`).
 */
export class PostingList {
  /** The ids: the list's own storage, or (packed) its decoded ids while cached, else EMPTY_INTS. */
  idView: Int32Array = EMPTY_INTS;
  /** The tf codes: the list's own storage, or (packed) its decoded tf codes while cached, else EMPTY_BYTES. */
  tfView: Uint8Array = EMPTY_BYTES;
  /**
   * Set by loading: the list's room in the buffers all lists share, made views on first use.
   * Loading lays out ~30k lists, and creating a typed-array view is slow (~1 µs each, plus garbage).
   */
  private baseIds: Int32Array | null = null;
  private baseTfs: Uint8Array | null = null;
  /** Where the list's room starts in the shared buffers (see `placeIn`). */
  off = 0;
  private cap = 0;
  n = 0;
  /**
   * Set by compaction: the bytes holding the list packed, from `packedAt`: its ids as varints of the
   * differences between them (ascending, from 0), then its tf codes, a nibble each, the few above
   * 14 in bytes after them (see `packPostings`). Null: not packed.
   */
  packed: Uint8Array | null = null;
  packedAt = 0;
  /** Set by loading: fills the list's room from the segments' encoded postings, on first use. */
  pending: ((l: PostingList) => void) | null = null;
  /** The list's term id (set by loading, for `pending`). */
  term = 0;

  /** Decodes a restored list and makes its views (first use). */
  private settle(): void {
    const fill = this.pending;
    if (fill) {
      this.pending = null;
      fill(this);
    }
    if (this.baseIds) {
      this.idView = this.baseIds.subarray(this.off, this.off + this.cap);
      this.tfView = this.baseTfs!.subarray(this.off, this.off + this.cap);
      this.baseIds = null;
      this.baseTfs = null;
    }
  }
  /** The chunk ids, `ids[0, n)` (the array may be longer: room to grow). */
  get ids(): Int32Array {
    if (this.pending || this.baseIds) this.settle();
    else if (this.packed) usePacked(this);
    return this.idView;
  }
  /** The tf codes, `tfs[0, n)`, beside `ids` (the tf is `TF_OF[code]`). */
  get tfs(): Uint8Array {
    if (this.pending || this.baseIds) this.settle();
    else if (this.packed) usePacked(this);
    return this.tfView;
  }
  /**
   * The ids and tf codes for one pass that keeps neither (a save, compaction): a list no search used
   * yet gets no views of its own to keep. At 100k notes the save after a cold build made and kept two
   * views for each of ~30k lists (~5.6 MB of heap, whatever searches the vault then saw). A packed
   * list not in the cache is decoded into scratch space, valid until the next `peek`.
   */
  peek(): readonly [Int32Array, Uint8Array] {
    const fill = this.pending;
    if (fill) {
      this.pending = null;
      fill(this);
    }
    if (this.baseIds) return [this.baseIds.subarray(this.off, this.off + this.cap), this.baseTfs!.subarray(this.off, this.off + this.cap)];
    const p = this.packed;
    if (p && !decodedLists.has(this)) {
      if (peekIds.length < this.n) {
        peekIds = new Int32Array(Math.max(this.n, peekIds.length * 2));
        peekTfs = new Uint8Array(peekIds.length);
      }
      unpackPostings(p, this.packedAt, this.n, peekIds, peekTfs);
      peekDecodes++;
      return [peekIds, peekTfs];
    }
    return [this.ids, this.tfs];
  }
  /** The list's storage replaced (the old one let go: compaction frees the pool's slabs), not packed. */
  private store(ids: Int32Array, tfs: Uint8Array, baseIds: Int32Array | null, baseTfs: Uint8Array | null): void {
    if (this.packed) unpack(this);
    this.idView = ids;
    this.tfView = tfs;
    this.baseIds = baseIds;
    this.baseTfs = baseTfs;
  }
  /** Makes `ids` and `tfs` (of equal length) the list's storage. */
  setStorage(ids: Int32Array, tfs: Uint8Array): void {
    this.store(ids, tfs, null, null);
  }
  /** Makes `[off, off + cap)` of `ids` and `tfs` the list's room (no view is created until the list is used). */
  placeIn(ids: Int32Array, tfs: Uint8Array, off: number, cap: number): void {
    this.store(EMPTY_INTS, EMPTY_BYTES, ids, tfs);
    this.off = off;
    this.cap = cap;
  }
  /** Makes the list packed: `n` postings at `at` of `bytes` (written by `packPostings`). */
  setPacked(bytes: Uint8Array, at: number, n: number): void {
    this.store(EMPTY_INTS, EMPTY_BYTES, null, null);
    this.pending = null;
    this.packed = bytes;
    this.packedAt = at;
    this.n = n;
  }

  /**
   * Room for `more` postings without growing (a grown list takes its space from `pool`; a packed one
   * is unpacked into it). Returns how many postings it copied (0 when there was room).
   */
  reserve(more: number, pool: PostingPool): number {
    const need = this.n + more;
    if (!this.packed && need <= this.ids.length) return 0;
    const ids = this.ids;
    const cap = Math.max(need, 4, this.packed ? 0 : ids.length * 2);
    const [i2, t2] = pool.take(cap);
    copyPostings(ids, this.tfs, 0, this.n, i2, t2, 0);
    this.setStorage(i2, t2);
    return this.n;
  }
}

/** Runs up to this long are copied a posting at a time (see `copyPostings`). */
const SHORT_COPY = 16;

/**
 * Copies postings `[from, to)` of `ids`/`tfs` to `toIds`/`toTfs` from `at`: a short run a posting at
 * a time, a longer one as a block. A short list's arrays (a packed one's decoded copies, up to 64
 * bytes) live inside V8's heap, and `subarray` would first move each to a buffer of its own: with
 * millions of them (a vault of 4.65M terms, most seen once or twice) such a move took 7–38 ms at times.
 */
export function copyPostings(ids: Int32Array, tfs: Uint8Array, from: number, to: number, toIds: Int32Array, toTfs: Uint8Array, at: number): void {
  if (to - from > SHORT_COPY) {
    toIds.set(ids.subarray(from, to), at);
    toTfs.set(tfs.subarray(from, to), at);
    return;
  }
  for (let k = from, o = at; k < to; k++, o++) {
    toIds[o] = ids[k];
    toTfs[o] = tfs[k];
  }
}

/**
 * How many bytes of decoded postings the packed lists keep: a packed list's ids and tf codes are
 * decoded when a reader asks for either (~2–3 ns a posting) and kept until the lists decoded after
 * them take this much (5 bytes a posting). The lists 400 of the bench's searches read at 100k notes
 * held 7.6M postings (36 MB decoded).
 */
export const PACKED_CACHE = { bytes: 16 << 20 };
/** Bytes a decoded posting takes in the cache: its Int32 id and its tf code. */
const DECODED_BYTES = 5;
/**
 * The packed lists whose postings are decoded, least recently used first (a cached list is packed, so
 * its `n` does not change until it leaves: `store` unpacks it first), each with the block of the room
 * its arrays are views of (null: arrays of its own).
 */
const decodedLists = new Map<PostingList, Block | null>();
let decodedBytes = 0;
/** `peek`'s scratch space for a packed list not in the cache. */
let peekIds = new Int32Array(0);
let peekTfs = new Uint8Array(0);
/** Lists `peek` (a list's or `FlatLists`') has decoded into scratch so far (see `peekStamp`). */
let peekDecodes = 0;

/**
 * Counts the lists decoded into a `peek`'s scratch (`PostingList.peek`, `FlatLists.peek`). When a
 * `peek` changed it, the arrays it gave are scratch, and hold that list's postings for as long as it
 * stays the same (no list decoded since): a reader going through a long list in several steps need
 * not decode it again.
 */
export function peekStamp(): number {
  return peekDecodes;
}

/**
 * Where the cached lists' decoded postings live (see decoded-room.ts): at most twice the cache's
 * budget is carved; past it (or for a list too large for a slab), a decode gets arrays of its own.
 */
const newRoom = (): DecodedRoom => new DecodedRoom(() => 2 * PACKED_CACHE.bytes);
let room = newRoom();

/**
 * Gives packed list `l` its decoded ids and tf codes: from the cache, or decoded now (the least
 * recently used others leave it). The arrays are the reader's until its task ends: a reader that
 * yields takes them again after (the room of a list that left the cache is reused after the task).
 */
function usePacked(l: PostingList): void {
  const cached = decodedLists.get(l);
  if (cached !== undefined) {
    decodedLists.delete(l);
    decodedLists.set(l, cached);
    return;
  }
  const b = room.take(l.n * DECODED_BYTES);
  let ids: Int32Array;
  let tfs: Uint8Array;
  if (b) {
    ids = new Int32Array(b.slab, b.at, l.n);
    tfs = new Uint8Array(b.slab, b.at + 4 * l.n, l.n);
  } else {
    ids = new Int32Array(l.n);
    tfs = new Uint8Array(l.n);
  }
  unpackPostings(l.packed!, l.packedAt, l.n, ids, tfs);
  l.idView = ids;
  l.tfView = tfs;
  decodedLists.set(l, b);
  decodedBytes += l.n * DECODED_BYTES;
  for (const [old, block] of decodedLists) {
    if (decodedBytes <= PACKED_CACHE.bytes || old === l) break;
    leave(old, block);
    // A reader holding the arrays still has them (until its task ends); the list is decoded again when next asked.
    old.idView = EMPTY_INTS;
    old.tfView = EMPTY_BYTES;
  }
}

/** Takes cached list `l` out of the cache; its block, if carved, is reused after the current task. */
function leave(l: PostingList, block: Block | null): void {
  decodedLists.delete(l);
  decodedBytes -= l.n * DECODED_BYTES;
  if (block) room.retire(block);
}

/** Makes `l` not packed (its storage is set next): it leaves the cache. */
function unpack(l: PostingList): void {
  const block = decodedLists.get(l);
  if (block !== undefined) leave(l, block);
  l.packed = null;
}

/**
 * Packed posting lists kept without an object each. A vault's dictionary is mostly rare terms
 * (numbers, ids, hashes, URLs, CJK bigrams): a 100k-note vault with some of each had 4.65M terms,
 * and a `PostingList` object a term (~120 bytes with its slot) took ~570 MB of heap where the
 * bench's 30k terms took 4 MB. Compaction writes each packed list here: its bytes, where they start
 * and its posting count, 12 bytes a term; `InvertedIndex.listAt` makes an object again for a list
 * in use (a search, a note indexed), until the next compaction.
 */
export class FlatLists {
  /** Per term: which of `sources` holds its packed bytes, where they start, its postings (0: not here). */
  private src: Int32Array = EMPTY_INTS;
  private at: Int32Array = EMPTY_INTS;
  private cnt: Int32Array = EMPTY_INTS;
  private readonly sources: (Uint8Array | null)[] = [];
  private readonly slotOf = new Map<Uint8Array, number>();
  /** The postings held here. */
  total = 0;
  /** `peek`'s scratch space. */
  private ids = EMPTY_INTS;
  private tfs = EMPTY_BYTES;

  n(g: number): number {
    return g < this.cnt.length ? this.cnt[g] : 0;
  }

  /** Room for terms `[0, terms)` (grown by a quarter at least: a build asks for a little more every few hundred notes). */
  reserve(terms: number): void {
    if (terms <= this.cnt.length) return;
    const size = Math.max(terms, this.cnt.length + (this.cnt.length >> 2));
    // In place where the host reserves room (core/memory.ts): copying three arrays of a dictionary of
    // 4.65M terms into new ones was one step of ~200 ms.
    const grow = (a: Int32Array) => grownArray(Int32Array, a, size);
    this.src = grow(this.src);
    this.at = grow(this.at);
    this.cnt = grow(this.cnt);
  }

  /** Term g's list is `n` postings packed at `at` of `bytes` (`n` > 0). */
  set(g: number, bytes: Uint8Array, at: number, n: number): void {
    // A typed array drops writes past its end: never lose a list to a term added since `reserve`.
    if (g >= this.cnt.length) this.reserve(g + 1);
    let slot = this.slotOf.get(bytes);
    if (slot === undefined) {
      slot = this.sources.length;
      this.sources.push(bytes);
      this.slotOf.set(bytes, slot);
    }
    this.total += n - this.cnt[g];
    this.src[g] = slot;
    this.at[g] = at;
    this.cnt[g] = n;
  }

  /** Takes term g's list out (its bytes, where, how many), or null when it is not here. */
  take(g: number): readonly [Uint8Array, number, number] | null {
    const n = this.n(g);
    if (!n) return null;
    this.cnt[g] = 0;
    this.total -= n;
    return [this.sources[this.src[g]]!, this.at[g], n];
  }

  /** Term g's ids and tf codes decoded into scratch space valid until the next `peek` (g must be here). */
  peek(g: number): readonly [Int32Array, Uint8Array] {
    const n = this.cnt[g];
    if (this.ids.length < n) {
      this.ids = new Int32Array(Math.max(n, this.ids.length * 2));
      this.tfs = new Uint8Array(this.ids.length);
    }
    unpackPostings(this.sources[this.src[g]]!, this.at[g], n, this.ids, this.tfs);
    peekDecodes++;
    return [this.ids, this.tfs];
  }

  /** After a compaction wrote every list again: lets go of the bytes no list here points into, and of the scratch. */
  prune(): void {
    const used = new Uint8Array(this.sources.length);
    for (let g = 0; g < this.cnt.length; g++) if (this.cnt[g]) used[this.src[g]] = 1;
    for (let i = 0; i < this.sources.length; i++) {
      const b = this.sources[i];
      if (b && !used[i]) {
        this.slotOf.delete(b);
        this.sources[i] = null;
      }
    }
    this.ids = EMPTY_INTS;
    this.tfs = EMPTY_BYTES;
  }
}

/** Terms a page of `ListSlots` covers. */
const SLOT_PAGE_BITS = 12;
const SLOT_PAGE = 1 << SLOT_PAGE_BITS;

/**
 * Term id → its `PostingList` object, for the terms that have one: pages of 4,096 slots, each made
 * when a term on it gets an object and let go when its last object leaves. Once compaction has put
 * the lists in `FlatLists`, few terms have an object; a plain array of a slot a term was 8 bytes a
 * term all the same (53 MB for a dictionary of 4.65M terms, every slot empty).
 */
export class ListSlots {
  private pages: ((PostingList | undefined)[] | undefined)[] = [];
  /** An emptied page, every slot undefined, for the next page made. */
  private spare: (PostingList | undefined)[] | undefined;
  /** Objects on each page. */
  private held = new Uint16Array(0);
  private size = 0;

  /** Terms `[0, length)` have a slot. */
  get length(): number {
    return this.size;
  }

  /** Slots for terms `[0, n)`. */
  grow(n: number): void {
    if (n <= this.size) return;
    this.size = n;
    const pages = (n + SLOT_PAGE - 1) >>> SLOT_PAGE_BITS;
    if (pages > this.held.length) {
      const h = new Uint16Array(Math.max(pages, this.held.length * 2));
      h.set(this.held);
      this.held = h;
    }
    while (this.pages.length < pages) this.pages.push(undefined);
  }

  get(g: number): PostingList | undefined {
    const page = this.pages[g >>> SLOT_PAGE_BITS];
    return page === undefined ? undefined : page[g & (SLOT_PAGE - 1)];
  }

  /** Term g's object (g < length), or none. */
  set(g: number, l: PostingList | undefined): void {
    if (g >= this.size) this.grow(g + 1);
    const p = g >>> SLOT_PAGE_BITS;
    let page = this.pages[p];
    const was = page === undefined ? undefined : page[g & (SLOT_PAGE - 1)];
    if (was === l) return;
    if (l === undefined) {
      page![g & (SLOT_PAGE - 1)] = undefined;
      if (--this.held[p] === 0) {
        // Kept for the next page made: a term's object made and dropped in turn (packing) otherwise
        // made and dropped a 4,096-slot page each time.
        this.spare ??= page;
        this.pages[p] = undefined;
      }
      return;
    }
    if (page === undefined) {
      page = this.spare ?? new Array<PostingList | undefined>(SLOT_PAGE).fill(undefined);
      this.spare = undefined;
      this.pages[p] = page;
    }
    page[g & (SLOT_PAGE - 1)] = l;
    if (was === undefined) this.held[p]++;
  }

  /** The objects held. */
  get count(): number {
    let n = 0;
    for (const h of this.held) n += h;
    return n;
  }

  /** Pages of slots made. */
  get pagesHeld(): number {
    let n = 0;
    for (const page of this.pages) if (page) n++;
    return n;
  }

  /** Every object held, by term. */
  *values(): IterableIterator<PostingList> {
    for (const page of this.pages) if (page) for (const l of page) if (l) yield l;
  }
}

/** Empties the cache of decoded packed lists (an index cleared). */
export function clearPackedCache(): void {
  for (const l of decodedLists.keys()) {
    l.idView = EMPTY_INTS;
    l.tfView = EMPTY_BYTES;
  }
  decodedLists.clear();
  decodedBytes = 0;
  // A room of its own from here (the old one's slabs are freed once no reader holds a view of them).
  room = newRoom();
}

/** The bytes of decoded postings the packed lists keep (see PACKED_CACHE). */
export function packedCacheBytes(): number {
  return decodedBytes;
}

/** The decoded lists' room: bytes carved, and bytes free or waiting to be (for tests). */
export function decodedRoomBytes(): { carved: number; idle: number } {
  return { carved: room.carved, idle: room.idleBytes };
}

/** The largest tf code a packed list keeps in its nibble; a nibble of TF_NIBBLE_ESCAPE says "the next of the bytes after the nibbles". */
const TF_NIBBLE_ESCAPE = 15;

/** Decodes `n` postings packed at `pos` of `src` (see `packPostings`) into `ids` and `tfs`. */
function unpackPostings(src: Uint8Array, pos: number, n: number, ids: Int32Array, tfs: Uint8Array): void {
  let id = 0;
  for (let i = 0; i < n; i++) {
    let x = src[pos++];
    let v = x & 0x7f;
    if (x >= 0x80) {
      let shift = 7;
      do {
        x = src[pos++];
        v |= (x & 0x7f) << shift;
        shift += 7;
      } while (x >= 0x80);
    }
    id += v;
    ids[i] = id;
  }
  let esc = pos + ((n + 1) >> 1);
  for (let i = 0; i < n; i += 2) {
    const b = src[pos++];
    const lo = b & 15;
    tfs[i] = lo === TF_NIBBLE_ESCAPE ? src[esc++] : lo;
    if (i + 1 < n) {
      const hi = b >> 4;
      tfs[i + 1] = hi === TF_NIBBLE_ESCAPE ? src[esc++] : hi;
    }
  }
}

/** The most bytes `packPostings` writes for `n` postings. */
export const packedBound = (n: number): number => n * 7 + 1;

/**
 * Packs postings `[0, n)` of `ids` (ascending, distinct, positive) and `tfs` into `out` from `at`:
 * the ids as varint differences (from 0), then the tf codes two to a byte (the first in the low
 * nibble), a code above 14 as TF_NIBBLE_ESCAPE there and in a byte of its own after the nibbles, in
 * order. At 100k notes 76% of the codes are 1 and 99.7% below 15: ~0.5 bytes a tf instead of 1.
 * Returns the bytes written (at most `packedBound(n)`).
 */
export function packPostings(ids: Int32Array, tfs: Uint8Array, n: number, out: Uint8Array, at: number): number {
  const c = wholeCursor;
  c.p = at;
  c.prev = 0;
  packIds(ids, 0, n, out, c);
  c.esc = c.p + ((n + 1) >> 1);
  packTfs(tfs, 0, n, n, out, c);
  return c.esc - at;
}

/** Where packing a list stands: the next byte of ids (then of nibbles), the last id written, the next escape byte. */
export interface PackCursor {
  p: number;
  prev: number;
  esc: number;
}
const wholeCursor: PackCursor = { p: 0, prev: 0, esc: 0 };

/**
 * `packPostings` in pieces, part one: ids `[from, to)` written at `c.p` as differences from `c.prev`.
 * Once every id is written, set `c.esc = c.p + ((n + 1) >> 1)` and write the tf codes (`packTfs`).
 */
export function packIds(ids: Int32Array, from: number, to: number, out: Uint8Array, c: PackCursor): void {
  let p = c.p;
  let prev = c.prev;
  for (let i = from; i < to; i++) {
    let v = ids[i] - prev;
    prev = ids[i];
    while (v >= 0x80) {
      out[p++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[p++] = v;
  }
  c.p = p;
  c.prev = prev;
}

/** `packPostings` in pieces, part two: tf codes `[from, to)` of `n` (`from` even) two to a byte at `c.p`, escapes at `c.esc`. The list's bytes end at `c.esc`. */
export function packTfs(tfs: Uint8Array, from: number, to: number, n: number, out: Uint8Array, c: PackCursor): void {
  let p = c.p;
  let esc = c.esc;
  for (let i = from; i < to; i += 2) {
    let t = tfs[i];
    let b = t < TF_NIBBLE_ESCAPE ? t : TF_NIBBLE_ESCAPE;
    if (t >= TF_NIBBLE_ESCAPE) out[esc++] = t;
    if (i + 1 < n) {
      t = tfs[i + 1];
      b |= (t < TF_NIBBLE_ESCAPE ? t : TF_NIBBLE_ESCAPE) << 4;
      if (t >= TF_NIBBLE_ESCAPE) out[esc++] = t;
    }
    out[p++] = b;
  }
  c.p = p;
  c.esc = esc;
}

/** `sortPostings`' own marks: zeros, one per chunk id up to the largest it sorted (two bytes each: a tf code + 1). */
let ownMarks = new Uint16Array(0);
/**
 * `sortPostings`' keys for a sparse list, kept for the next call. A new array a call was a small
 * buffer from the C heap each (~1 KB): a warm start's compaction at 100k notes made ~40 MB of them
 * between two collections, and glibc kept the room they took (~16 MB of the server's RSS).
 */
let ownKeys = new Float64Array(0);

/**
 * Puts postings `[from, to)` of `ids`/`tfs` in chunk id order, in place; returns the work it took
 * (postings and ids visited). A list's ids ascend (it grows only by chunks newer than all it holds,
 * and compaction keeps the order), except a list restored from disk from several segments: their
 * parts one after another, each ascending (`RestoredLists.unsorted`). `scratch`: zeros, one per chunk
 * id at least up to the largest, left zeros (by default its own, kept for the next call). Ids are
 * distinct but for 0 (a lost segment's, never alive).
 */
export function sortPostings(ids: Int32Array, tfs: Uint8Array, from: number, to: number, scratch?: Int32Array | Uint16Array): number {
  let lo = 0x7fffffff;
  let hi = 0;
  let sorted = true;
  for (let i = from; i < to; i++) {
    const id = ids[i];
    if (i > from && id < ids[i - 1]) sorted = false;
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  const n = to - from;
  if (sorted || n < 2) return n;
  // Reading the marks back costs ~1.6 ns an id of the span; sorting keys, ~70 ns a posting at 10k.
  if (hi - lo < 40 * n) {
    // Dense: mark each id's tf code (+1) by id, then read the ids back in order.
    const marks = scratch ?? (ownMarks.length > hi ? ownMarks : (ownMarks = new Uint16Array(hi + 1)));
    const zeros = markPostings(ids, tfs, from, to, marks);
    ids.fill(0, from, from + zeros);
    tfs.fill(0, from, from + zeros);
    readMarks(ids, tfs, from + zeros, Math.max(1, lo), hi + 1, marks);
    return n + hi - lo;
  }
  if (ownKeys.length < n) ownKeys = grownArray(Float64Array, ownKeys, Math.max(n, 2 * ownKeys.length, 1024));
  const key = ownKeys.subarray(0, n);
  for (let i = 0; i < n; i++) key[i] = ids[from + i] * 256 + tfs[from + i];
  key.sort();
  for (let i = 0; i < n; i++) {
    const id = Math.floor(key[i] / 256);
    ids[from + i] = id;
    tfs[from + i] = key[i] - id * 256;
  }
  return n * 8;
}

/**
 * `sortPostings` of `ids`/`tfs[0, n)` in steps of about `step` postings (or 4 × `step` ids), for a
 * search: the list is read in steps, its sorted postings written to arrays of their own, and copied
 * back over it in the last step, so that a reader in between (a search run at once) sees the list
 * whole. `scratch.marks`: zeros, one per chunk id (replaced by a longer one when too short; left
 * zeros however the steps end). `sortedMeanwhile` is asked after every step: true when another reader
 * sorted the list in between (a search run at once), which moved its postings: the steps then end,
 * writing nothing. A warm start's first search at 100k notes sorted a common word's ~300k postings in
 * one step of 25 ms.
 */
export function* sortPostingsSteps(ids: Int32Array, tfs: Uint8Array, n: number, step: number, scratch: { marks: Uint16Array }, sortedMeanwhile: () => boolean): Generator<void, void, void> {
  let lo = 0x7fffffff;
  let hi = 0;
  let sorted = true;
  for (let a = 0; a < n; a += step) {
    const b = Math.min(n, a + step);
    for (let i = a; i < b; i++) {
      const id = ids[i];
      if (i > 0 && id < ids[i - 1]) sorted = false;
      if (id < lo) lo = id;
      if (id > hi) hi = id;
    }
    if (b < n) {
      yield;
      if (sortedMeanwhile()) return;
    }
  }
  if (sorted || n < 2) return;
  if (hi - lo >= 40 * n) {
    // Sparse (see sortPostings): its keys sorted at once.
    sortPostings(ids, tfs, 0, n);
    return;
  }
  if (scratch.marks.length <= hi) scratch.marks = new Uint16Array(hi + 1);
  const marks = scratch.marks;
  let done = false;
  try {
    let zeros = 0;
    for (let a = 0; a < n; a += step) {
      zeros += markPostings(ids, tfs, a, Math.min(n, a + step), marks);
      yield;
      if (sortedMeanwhile()) return;
    }
    const outIds = new Int32Array(n);
    const outTfs = new Uint8Array(n);
    let o = zeros;
    for (let id = Math.max(1, lo); id <= hi; ) {
      const stop = Math.min(hi + 1, id + 4 * step);
      o = readMarks(outIds, outTfs, o, id, stop, marks);
      id = stop;
      yield;
      if (sortedMeanwhile()) return;
    }
    done = true;
    ids.set(outIds);
    tfs.set(outTfs);
  } finally {
    if (!done) marks.fill(0, lo, hi + 1);
  }
}

/**
 * `sortPostings`' dense sort, part one (callers may go in pieces): marks postings `[from, to)` by
 * chunk id in `marks` (their tf code + 1); returns how many have id 0 (a lost segment's), not marked.
 */
export function markPostings(ids: Int32Array, tfs: Uint8Array, from: number, to: number, marks: Int32Array | Uint16Array): number {
  let zeros = 0;
  for (let i = from; i < to; i++) {
    if (ids[i] === 0) zeros++;
    else marks[ids[i]] = tfs[i] + 1;
  }
  return zeros;
}

/**
 * Part two: the marked ids in `[idA, idB)` written in id order from `o`, their marks left zeros;
 * returns where the next goes.
 */
export function readMarks(ids: Int32Array, tfs: Uint8Array, o: number, idA: number, idB: number, marks: Int32Array | Uint16Array): number {
  for (let id = idA; id < idB; id++) {
    const v = marks[id];
    if (v === 0) continue;
    ids[o] = id;
    tfs[o++] = v - 1;
    marks[id] = 0;
  }
  return o;
}

export const EMPTY_INTS = new Int32Array(0);
export const EMPTY_BYTES = new Uint8Array(0);
/**
 * Postings per pool slab: 8M, in one 40 MB buffer (ids, then tf codes). Slabs are this large for the
 * process's memory, not for speed: glibc serves a buffer above 32 MB by mmap always and gives it back
 * when it is freed, while freeing a smaller mmap'd buffer raises its threshold to that size, after
 * which buffers below it come from its heap, which then fragments as slabs are freed (compaction
 * frees them all). With 1M-posting slabs (4 MB + 1 MB) a 100k-note vault's cold build left the
 * process at 820 MB RSS for 470 MB of heap and buffers; with these, 634 MB. Pages of a slab not yet
 * used are not resident. The first two slabs are smaller (256k and 2M postings), so that a small
 * vault does not take 40 MB.
 */
const SLAB = 1 << 23;
/** A list growing to more than this takes a buffer of its own (at least a slab's size, for the same reason). */
const OWN_BUFFER = SLAB >> 2;

/**
 * Room for `cap` postings in one buffer: ids from byte 0, tf codes after them. One buffer rather than
 * two, so that both are above glibc's threshold together (see SLAB).
 */
export function postingBuffer(cap: number): [Int32Array, Uint8Array] {
  const buf = new ArrayBuffer(cap * 5);
  return [new Int32Array(buf, 0, cap), new Uint8Array(buf, cap * 4, cap)];
}

/**
 * Space for growing posting lists, carved out of large slabs: a list that grows gets views into the
 * current slab instead of ArrayBuffers of its own. ~30k small buffers, re-allocated as they doubled,
 * cost more than the postings themselves (allocation, and garbage collections for external memory).
 * Space a list leaves behind when it grows is reclaimed by compaction, which lays every list out again
 * in exact buffers.
 */
export class PostingPool {
  private ids: Int32Array = EMPTY_INTS;
  private tfs: Uint8Array = EMPTY_BYTES;
  private used = 0;
  private slabs = 0;
  /** Room for `n` postings: ids and tf codes. */
  take(n: number): [Int32Array, Uint8Array] {
    if (n > OWN_BUFFER) {
      const [ids, tfs] = postingBuffer(Math.max(n, SLAB));
      return [ids.subarray(0, n), tfs.subarray(0, n)];
    }
    if (this.used + n > this.ids.length) {
      [this.ids, this.tfs] = postingBuffer(Math.max(n, this.slabs === 0 ? 1 << 18 : this.slabs === 1 ? 1 << 21 : SLAB));
      this.slabs++;
      this.used = 0;
    }
    const at = this.used;
    this.used += n;
    return [this.ids.subarray(at, at + n), this.tfs.subarray(at, at + n)];
  }
  reset(): void {
    this.ids = EMPTY_INTS;
    this.tfs = EMPTY_BYTES;
    this.used = 0;
    this.slabs = 0;
  }
}
