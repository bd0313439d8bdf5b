/**
 * Compaction: the posting lists laid out again in one exact buffer without dead postings (those of
 * removed or replaced notes), list by list, in steps. Owns only when that is worth doing and the
 * copying; the service decides when it runs.
 */
import type { InvertedIndex } from "./inverted-index";
import { EMPTY_INTS } from "./postings";

/** Where a compaction under way stands (start with `{ seg: 0, k: 0 }`). */
export interface CompactionState {
  seg: number;
  k: number;
  buf?: Int32Array;
  off?: number;
}

/** Dead postings are a quarter of the postings or more. (The service also compacts after indexing many notes, for the space grown lists left behind.) */
export function needsCompaction(ix: Pick<InvertedIndex, "deadPostings" | "totalPostings">): boolean {
  return ix.deadPostings > 50_000 && ix.deadPostings > ix.totalPostings * 0.25;
}

/**
 * Lays the posting lists out again in one exact buffer, without dead postings, list by list until
 * `deadline()`; false when done. The index must not change between steps (the service runs it inside
 * its exclusive worker); every list is valid (old or new storage) after every step.
 */
export function compactSome(ix: InvertedIndex, state: CompactionState, deadline: () => boolean): boolean {
  ix.flushPostings();
  const alive = ix.alive;
  if (!state.buf) {
    let total = 0;
    for (let g = 0; g < ix.lists.length; g++) total += ix.listN(g) * 2;
    state.buf = new Int32Array(total);
    state.off = 0;
  }
  const buf = state.buf;
  let o = state.off ?? 0;
  let checked = o;
  while (state.k < ix.lists.length) {
    const l = ix.listAt(state.k++);
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
      ix.totalPostings -= l.n - w;
      l.n = w;
    }
    // Every 256 lists or 64k copied ints (the common terms' lists are long).
    if (((state.k & 255) === 0 || o - checked > 65536) && deadline()) {
      state.off = o;
      return true;
    }
    if (o - checked > 65536) checked = o;
  }
  ix.deadPostings = 0;
  ix.pool.reset();
  ix.restored = null; // every restored list is an object now, laid out in `buf`
  return false;
}
