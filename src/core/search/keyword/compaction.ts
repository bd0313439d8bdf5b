/**
 * Compaction: the posting lists laid out again, packed (see `PostingList.packed`), without dead
 * postings (those of removed or replaced notes), list by list, in steps. Owns only when that is
 * worth doing and the copying; the service decides when it runs.
 */
import { CARVE_CHUNK } from "./carve";
import type { IndexState } from "./index-state";
import { EMPTY_BYTES, EMPTY_INTS, packedBound, packPostings, sortPostings } from "./postings";

/** Where a compaction under way stands (start with `{ seg: 0, k: 0 }`). */
export interface CompactionState {
  seg: number;
  k: number;
  arena?: PackArena;
}

/** Dead postings are a quarter of the postings or more. (The service also compacts after indexing many notes, for the space grown lists left behind, and once a loaded index's lists are all decoded, to pack them.) */
export function needsCompaction(ix: Pick<IndexState, "deadPostings" | "totalPostings">): boolean {
  return ix.deadPostings > 50_000 && ix.deadPostings > ix.totalPostings * 0.25;
}

/**
 * The bytes packed lists are written into, one list after another. The lists of 100k notes pack
 * into ~53 MB (2.2 bytes a posting): chunks above 32 MB there (each a mapping of its own, given back
 * whole; see carve.ts), one chunk sized to the estimate in a smaller index.
 */
export class PackArena {
  private buf = new Uint8Array(0);
  private at = 0;
  private chunks = 0;
  constructor(private readonly estimate: number) {}
  /** Takes a new chunk with room for `n` bytes. */
  grow(n = 0): void {
    const big = this.estimate > CARVE_CHUNK;
    const size = big ? CARVE_CHUNK : this.chunks === 0 ? this.estimate : Math.max(1 << 20, this.estimate >> 2);
    this.buf = new Uint8Array(Math.max(n, size));
    this.at = 0;
    this.chunks++;
  }
  /** The chunks taken so far. */
  get chunkCount(): number {
    return this.chunks;
  }
  /** `bytes` copied in (into a new chunk when the current one is full); returns the chunk and where they start. */
  put(bytes: Uint8Array): [Uint8Array, number] {
    const n = bytes.length;
    if (this.at + n > this.buf.length) this.grow(n);
    const at = this.at;
    this.buf.set(bytes, at);
    this.at += n;
    return [this.buf, at];
  }
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
    let total = 0;
    for (let g = 0; g < ix.lists.length; g++) total += ix.listN(g);
    state.arena = new PackArena(Math.ceil(total * 2.4) + (64 << 10));
    // A chunk is a step of its own: allocating that much outside V8's heap can start a collection at
    // once (a 56 ms task at the end of a 100k build, with the first lists packed in it).
    state.arena.grow();
    return true;
  }
  const arena = state.arena;
  let work = 0;
  while (state.k < ix.lists.length) {
    const g = state.k++;
    const l = ix.listAt(g);
    if (l) {
      const [li, lt] = l.peek();
      const n = l.n;
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
        if (packBuf.length < packedBound(w)) packBuf = new Uint8Array(Math.max(packedBound(w), packBuf.length * 2));
        const chunks = arena.chunkCount;
        const [buf, at] = arena.put(packBuf.subarray(0, packPostings(liveIds, liveTfs, w, packBuf, 0)));
        l.setPacked(buf, at, w);
        // (The step ends with the list that took a new chunk; see above.)
        if (arena.chunkCount !== chunks) work = Infinity;
      } else {
        l.setStorage(EMPTY_INTS, EMPTY_BYTES);
        l.n = 0;
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
  ix.pool.reset();
  ix.restored = null; // every restored list is an object now, packed
  liveIds = EMPTY_INTS;
  liveTfs = EMPTY_BYTES;
  packBuf = EMPTY_BYTES;
  return false;
}
