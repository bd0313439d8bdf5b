/**
 * Compaction: the posting lists laid out again in exact buffers without dead postings (those of
 * removed or replaced notes), list by list, in steps. Owns only when that is worth doing and the
 * copying; the service decides when it runs.
 */
import type { IndexState } from "./index-state";
import { EMPTY_BYTES, EMPTY_INTS, postingBuffer, sortPostings } from "./postings";

/** Where a compaction under way stands (start with `{ seg: 0, k: 0 }`). */
export interface CompactionState {
  seg: number;
  k: number;
  ids?: Int32Array;
  tfs?: Uint8Array;
  off?: number;
}

/** Dead postings are a quarter of the postings or more. (The service also compacts after indexing many notes, for the space grown lists left behind.) */
export function needsCompaction(ix: Pick<IndexState, "deadPostings" | "totalPostings">): boolean {
  return ix.deadPostings > 50_000 && ix.deadPostings > ix.totalPostings * 0.25;
}

/**
 * Lays the posting lists out again in one exact pair of buffers (ids, tf codes), without dead postings, list by list until
 * `deadline()`; false when done. The index must not change between steps (the service runs it inside
 * its exclusive worker); every list is valid (old or new storage) after every step.
 */
export function compactSome(ix: IndexState, state: CompactionState, deadline: () => boolean): boolean {
  ix.flushPostings();
  const alive = ix.alive;
  if (!state.ids || !state.tfs) {
    let total = 0;
    for (let g = 0; g < ix.lists.length; g++) total += ix.listN(g);
    [state.ids, state.tfs] = postingBuffer(total);
    state.off = 0;
  }
  const ids = state.ids;
  const tfs = state.tfs;
  let o = state.off ?? 0;
  let checked = o;
  while (state.k < ix.lists.length) {
    const g = state.k++;
    const l = ix.listAt(g);
    if (l) {
      const [li, lt] = l.peek();
      const start = o;
      for (let i = 0; i < l.n; i++) {
        const id = li[i];
        if (alive[id]) {
          ids[o] = id;
          tfs[o++] = lt[i];
        }
      }
      const w = o - start;
      // Laid out again, a restored list's ids ascend like every other list's (the restored marks end here).
      if (ix.restored?.unsorted[g]) checked -= sortPostings(ids, tfs, start, o) - w;
      if (w) l.placeIn(ids, tfs, start, w);
      else l.setStorage(EMPTY_INTS, EMPTY_BYTES);
      ix.totalPostings -= l.n - w;
      l.n = w;
    }
    // Every 256 lists or 32k copied postings (the common terms' lists are long).
    if (((state.k & 255) === 0 || o - checked > 32768) && deadline()) {
      state.off = o;
      return true;
    }
    if (o - checked > 32768) checked = o;
  }
  ix.deadPostings = 0;
  ix.pool.reset();
  ix.restored = null; // every restored list is an object now, laid out in `ids`/`tfs`
  return false;
}
