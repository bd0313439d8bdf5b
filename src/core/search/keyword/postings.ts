/**
 * Posting lists (each term's chunk ids and weighted term frequencies), the tf's one-byte code, and
 * the slab pool growing lists take their space from. Owns the lists' memory layout; what goes in
 * them is the index's business.
 */

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
 * at 100k notes.
 */
export class PostingList {
  private idView: Int32Array = EMPTY_INTS;
  private tfView: Uint8Array = EMPTY_BYTES;
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
    return this.idView;
  }
  /** The tf codes, `tfs[0, n)`, beside `ids` (the tf is `TF_OF[code]`). */
  get tfs(): Uint8Array {
    if (this.pending || this.baseIds) this.settle();
    return this.tfView;
  }
  /** Makes `ids` and `tfs` (of equal length) the list's storage. */
  setStorage(ids: Int32Array, tfs: Uint8Array): void {
    this.idView = ids;
    this.tfView = tfs;
    this.baseIds = null;
    this.baseTfs = null;
  }
  /** Makes `[off, off + cap)` of `ids` and `tfs` the list's room (no view is created until the list is used). */
  placeIn(ids: Int32Array, tfs: Uint8Array, off: number, cap: number): void {
    // Let go of the old space (compaction frees the pool's slabs).
    this.idView = EMPTY_INTS;
    this.tfView = EMPTY_BYTES;
    this.baseIds = ids;
    this.baseTfs = tfs;
    this.off = off;
    this.cap = cap;
  }

  /** Room for `more` postings without growing (a grown list takes its space from `pool`). */
  reserve(more: number, pool: PostingPool): void {
    const need = this.n + more;
    const ids = this.ids;
    if (need <= ids.length) return;
    const cap = Math.max(need, 4, ids.length * 2);
    const i2 = pool.ints(cap);
    const t2 = pool.bytes(cap);
    i2.set(ids.subarray(0, this.n));
    t2.set(this.tfs.subarray(0, this.n));
    this.setStorage(i2, t2);
  }
}

export const EMPTY_INTS = new Int32Array(0);
export const EMPTY_BYTES = new Uint8Array(0);
/** Elements per pool slab (1M: 4 MB of ids, 1 MB of tf codes). */
const POOL_SLAB = 1 << 20;

/** Carves views out of large slabs of one typed-array kind. */
class Slabs<T extends Int32Array | Uint8Array> {
  private slab: T;
  private used = 0;
  constructor(private readonly make: (n: number) => T) {
    this.slab = make(0);
  }
  alloc(n: number): T {
    if (n >= POOL_SLAB >> 4) return this.make(n);
    if (this.used + n > this.slab.length) {
      this.slab = this.make(POOL_SLAB);
      this.used = 0;
    }
    const v = this.slab.subarray(this.used, this.used + n) as T;
    this.used += n;
    return v;
  }
}

/**
 * Space for growing posting lists, carved out of large slabs: a list that grows gets views into the
 * current slabs instead of ArrayBuffers of its own. ~30k small buffers, re-allocated as they doubled,
 * cost more than the postings themselves (allocation, and garbage collections for external memory).
 * Space a list leaves behind when it grows is reclaimed by compaction, which lays every list out again
 * in exact buffers.
 */
export class PostingPool {
  private idSlabs = new Slabs((n) => new Int32Array(n));
  private tfSlabs = new Slabs((n) => new Uint8Array(n));
  ints(n: number): Int32Array {
    return this.idSlabs.alloc(n);
  }
  bytes(n: number): Uint8Array {
    return this.tfSlabs.alloc(n);
  }
  reset(): void {
    this.idSlabs = new Slabs((n) => new Int32Array(n));
    this.tfSlabs = new Slabs((n) => new Uint8Array(n));
  }
}
