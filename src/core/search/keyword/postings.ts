/**
 * Posting lists (each term's chunk ids and weighted term frequencies) and the slab pool growing lists
 * take their space from. Owns the lists' memory layout; what goes in them is the index's business.
 */

/** Postings of one term: (chunk id, weighted tf) pairs, interleaved in one Int32Array. */
export class PostingList {
  private view: Int32Array = EMPTY_INTS;
  /**
   * Set by loading: the list's room in the one buffer all lists share, made a view on first use.
   * Loading lays out ~30k lists, and creating a typed-array view is slow (~1 µs each, plus garbage).
   */
  private base: Int32Array | null = null;
  /** Where the list's room starts in `base` (see `placeIn`). */
  off = 0;
  private cap = 0;
  n = 0;
  /** Set by loading: fills the list's room from the segments' encoded postings, on first use. */
  pending: ((l: PostingList) => void) | null = null;
  /** The list's term id (set by loading, for `pending`). */
  term = 0;
  get data(): Int32Array {
    const fill = this.pending;
    if (fill) {
      this.pending = null;
      fill(this);
    }
    if (this.base) {
      this.view = this.base.subarray(this.off, this.off + this.cap);
      this.base = null;
    }
    return this.view;
  }
  set data(d: Int32Array) {
    this.view = d;
    this.base = null;
  }
  /** Makes `buf[off, off + cap)` the list's room (no view is created until the list is used). */
  placeIn(buf: Int32Array, off: number, cap: number): void {
    this.view = EMPTY_INTS; // let go of the old space (compaction frees the pool's slabs)
    this.base = buf;
    this.off = off;
    this.cap = cap;
  }

  /** Room for `more` postings without growing (a grown list takes its space from `pool`). */
  reserve(more: number, pool: IntPool): void {
    const need = (this.n + more) * 2;
    if (need <= this.data.length) return;
    const d = pool.alloc(Math.max(need, 8, this.data.length * 2));
    d.set(this.data.subarray(0, this.n * 2));
    this.data = d;
  }
}

export const EMPTY_INTS = new Int32Array(0);
/** Ints per pool slab (4 MB). */
const POOL_SLAB = 1 << 20;

/**
 * Space for growing posting lists, carved out of large slabs: a list that grows gets a view into the
 * current slab instead of an ArrayBuffer of its own. ~30k small buffers, re-allocated as they doubled,
 * cost more than the postings themselves (allocation, and garbage collections for external memory).
 * Space a list leaves behind when it grows is reclaimed by compaction, which lays every list out again
 * in one exact buffer.
 */
export class IntPool {
  private slab = EMPTY_INTS;
  private used = 0;
  alloc(n: number): Int32Array {
    if (n >= POOL_SLAB >> 4) return new Int32Array(n);
    if (this.used + n > this.slab.length) {
      this.slab = new Int32Array(POOL_SLAB);
      this.used = 0;
    }
    const v = this.slab.subarray(this.used, this.used + n);
    this.used += n;
    return v;
  }
  reset(): void {
    this.slab = EMPTY_INTS;
    this.used = 0;
  }
}
