/**
 * Compaction: the posting lists laid out again, packed (see `PostingList.packed`), without dead
 * postings (those of removed or replaced notes), list by list, in steps. Owns only when that is
 * worth doing and the copying; the service decides when it runs.
 */
import { CARVE_CHUNK, Carver } from "./carve";
import type { IndexState } from "./index-state";
import { EMPTY_BYTES, EMPTY_INTS, packedBound, packPostings, sortPostings } from "./postings";

/** Where a compaction under way stands (start with `{ seg: 0, k: 0 }`). */
export interface CompactionState {
  seg: number;
  k: number;
  /**
   * Where the packed lists are written, one after another: ~42 MB at 100k notes (1.8 bytes a
   * posting), in chunks above 32 MB there (each a mapping of its own, given back whole; see
   * carve.ts), in chunks the size of the estimate in a smaller index.
   */
  arena?: Carver;
  /** Before the arena: the lists counted so far (terms below `g`), their postings and the longest. */
  sized?: { g: number; total: number; longest: number };
}

/**
 * Packs term g's `n` postings into `arena` and keeps them in `ix.flat`, without an object (see
 * FlatLists). A list object some search still holds is given the packed storage too, which stays valid.
 */
export function packFlat(ix: IndexState, g: number, ids: Int32Array, tfs: Uint8Array, n: number, arena: Carver): void {
  if (packBuf.length < packedBound(n)) packBuf = new Uint8Array(Math.max(packedBound(n), packBuf.length * 2));
  const packed = packBuf.subarray(0, packPostings(ids, tfs, n, packBuf, 0));
  const [bytes, at] = arena.place(packed) ?? [packed.slice(), 0];
  const l = ix.lists.get(g);
  if (l) {
    l.setPacked(bytes, at, n);
    ix.lists.set(g, undefined);
  }
  ix.flat.set(g, bytes, at, n);
}

/** Dead postings are a quarter of the postings or more. (The service also compacts after indexing many notes, for the space grown lists left behind, and once a loaded index's lists are all decoded, to pack them.) */
export function needsCompaction(ix: Pick<IndexState, "deadPostings" | "totalPostings">): boolean {
  return ix.deadPostings > 50_000 && ix.deadPostings > ix.totalPostings * 0.25;
}

/** Compaction's scratch space: a list's live postings, and their packed bytes. */
let liveIds = EMPTY_INTS;
let liveTfs = EMPTY_BYTES;
let packBuf = EMPTY_BYTES;

/**
 * Lays the posting lists out again packed, without dead postings, list by list until `deadline()`;
 * false when done. The index must not change between steps (the service runs it inside its
 * exclusive worker); every list is valid (old or new storage) after every step.
 */
export function compactSome(ix: IndexState, state: CompactionState, deadline: () => boolean): boolean {
  ix.flushPostings();
  const alive = ix.alive;
  if (!state.arena) {
    // Counted in steps of 64k terms: 4.65M terms at once were a ~200 ms step.
    const sized = (state.sized ??= { g: 0, total: 0, longest: 0 });
    const end = ix.lists.length;
    while (sized.g < end) {
      const stop = Math.min(end, sized.g + 65536);
      for (let g = sized.g; g < stop; g++) {
        const n = ix.listN(g);
        sized.total += n;
        if (n > sized.longest) sized.longest = n;
      }
      sized.g = stop;
      if (sized.g < end && deadline()) return true;
    }
    const { total, longest } = sized;
    state.arena = new Carver(Math.min(CARVE_CHUNK, Math.ceil(total * 2) + (64 << 10)));
    ix.flat.reserve(ix.lists.length);
    // The scratch sized once for the longest list: grown by doubling, its outgrown arrays (~9 MB at
    // 100k notes) were left as free room in glibc's heap, under arrays that live on.
    if (liveIds.length < longest) {
      liveIds = new Int32Array(longest);
      liveTfs = new Uint8Array(longest);
      packBuf = new Uint8Array(packedBound(longest));
    }
  }
  const arena = state.arena;
  let work = 0;
  while (state.k < ix.lists.length) {
    const g = state.k++;
    const held = ix.peekList(g);
    if (held) {
      const [li, lt, n] = held;
      if (liveIds.length < n) {
        liveIds = new Int32Array(Math.max(n, liveIds.length * 2));
        liveTfs = new Uint8Array(liveIds.length);
      }
      let w = 0;
      for (let i = 0; i < n; i++) {
        const id = li[i];
        if (alive[id]) {
          liveIds[w] = id;
          liveTfs[w++] = lt[i];
        }
      }
      // Laid out again, a restored list's ids ascend like every other list's (the restored marks end here).
      const r = ix.restored;
      if (r?.unsorted[g]) {
        work += sortPostings(liveIds, liveTfs, 0, w);
        r.unsorted[g] = 0;
      }
      if (w) {
        const chunks = arena.chunks.length;
        packFlat(ix, g, liveIds, liveTfs, w, arena);
        // A new chunk ends the step: allocating that much outside V8's heap can start a collection at
        // once (a 56 ms task at the end of a 100k build, with the first lists packed beside it).
        if (arena.chunks.length !== chunks) work = Infinity;
      } else {
        // No live posting: the list is emptied wherever it is (an object a search holds sees it empty).
        const l = ix.lists.get(g);
        if (l) {
          l.setStorage(EMPTY_INTS, EMPTY_BYTES);
          l.n = 0;
          ix.lists.set(g, undefined);
        } else ix.flat.take(g);
        if (ix.restored && g < ix.restored.n.length) ix.restored.n[g] = 0;
      }
      ix.totalPostings -= n - w;
      work += n;
    }
    // Every 256 lists or 32k postings (the common terms' lists are long).
    if ((state.k & 255) === 0 || work > 32768) {
      const fresh = work === Infinity;
      work = 0;
      if (fresh || deadline()) return true;
    }
  }
  ix.deadPostings = 0;
  ix.flat.prune();
  ix.pool.reset();
  ix.restored = null; // every restored list is packed now, in `flat` (or an empty object)
  liveIds = EMPTY_INTS;
  liveTfs = EMPTY_BYTES;
  packBuf = EMPTY_BYTES;
  return false;
}
