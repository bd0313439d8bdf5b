/**
 * Compaction: the posting lists laid out again, packed (see `PostingList.packed`), without dead
 * postings (those of removed or replaced notes), list by list, in steps. Owns only when that is
 * worth doing and the copying; the service decides when it runs.
 */
import { freeBuffers, OWN_MAPPING_BYTES } from "../../memory";
import { CARVE_CHUNK, Carver } from "./carve";
import type { IndexState } from "./index-state";
import { EMPTY_BYTES, EMPTY_INTS, packedBound, packIds, packPostings, packTfs, sortPostings, type PackCursor } from "./postings";

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
  /** A long list under way (term `k`; see `packLong`). */
  long?: LongPack;
  /**
   * Its scratch, sized once for the longest list: a list's live postings and their packed bytes
   * (grown by doubling, its outgrown arrays, ~9 MB at 100k notes, were left as free room in glibc's
   * heap, under arrays that live on). A compaction's own: a long list's stay there across steps.
   * See `liveScratch`.
   */
  live?: { ids: Int32Array; tfs: Uint8Array; buf: Uint8Array };
}

/**
 * A list longer than `compactionLimits.longList` packed across steps: its live postings copied so far (reading from
 * posting `i`, `w` of them live), then their ids packed from `j` (phase 1), then their tf codes
 * (phase 2). `unsorted`: its ids did not ascend when it began (a search may sort it in place meanwhile).
 */
interface LongPack {
  g: number;
  n: number;
  phase: 0 | 1 | 2;
  i: number;
  w: number;
  j: number;
  unsorted: boolean;
  cur: PackCursor;
}

/**
 * `longList`: postings of a list gone through between two looks at the deadline; a longer list is
 * packed in pieces of this size, across steps (tests lower it). A word in every note at 100k notes
 * (~700k postings) was one step of 28–50 ms.
 */
export const compactionLimits = { longList: 32768 };

/**
 * Packs term g's `n` postings into `arena` and keeps them in `ix.flat`, without an object (see
 * FlatLists). A list object some search still holds is given the packed storage too, which stays valid.
 */
export function packFlat(ix: IndexState, g: number, ids: Int32Array, tfs: Uint8Array, n: number, arena: Carver): void {
  if (packBuf.length < packedBound(n)) packBuf = new Uint8Array(Math.max(packedBound(n), packBuf.length * 2));
  keepPacked(ix, g, packBuf.subarray(0, packPostings(ids, tfs, n, packBuf, 0)), n, arena);
}

/** Term g's `n` postings packed in `packed`, kept in `arena` (see packFlat). */
function keepPacked(ix: IndexState, g: number, packed: Uint8Array, n: number, arena: Carver): void {
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

/** `packFlat`'s room for a list's packed bytes. */
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
    state.live = liveScratch(longest);
  }
  const arena = state.arena;
  let work = 0;
  while (state.k < ix.lists.length) {
    const g = state.k;
    if (ix.listN(g) > compactionLimits.longList) {
      // A long list across steps, the step ended after it (it went through a piece's postings at least).
      const chunks = arena.chunks.length;
      if (!packLong(ix, g, state, arena, deadline)) return true;
      state.k++;
      if (arena.chunks.length !== chunks || deadline()) return true;
      work = 0;
      continue;
    }
    state.k++;
    const held = ix.peekList(g);
    if (held) {
      const [li, lt, n] = held;
      const live = liveRoom(state, n);
      const liveIds = live.ids;
      const liveTfs = live.tfs;
      const w = copyLive(li, lt, 0, n, alive, liveIds, liveTfs, 0);
      // Laid out again, a restored list's ids ascend like every other list's (the restored marks end here).
      const r = ix.restored;
      if (r?.unsorted[g]) {
        work += sortPostings(liveIds, liveTfs, 0, w);
        r.unsorted[g] = 0;
      }
      if (w) {
        const chunks = arena.chunks.length;
        keepPacked(ix, g, live.buf.subarray(0, packPostings(liveIds, liveTfs, w, live.buf, 0)), w, arena);
        // A new chunk ends the step: allocating that much outside V8's heap can start a collection at
        // once (a 56 ms task at the end of a 100k build, with the first lists packed beside it).
        if (arena.chunks.length !== chunks) work = Infinity;
      } else emptied(ix, g);
      ix.totalPostings -= n - w;
      work += n;
    }
    // Every 256 lists or 32k postings (the common terms' lists are long).
    if ((state.k & 255) === 0 || work > compactionLimits.longList) {
      const fresh = work === Infinity;
      work = 0;
      if (fresh || deadline()) return true;
    }
  }
  ix.deadPostings = 0;
  ix.flat.prune();
  ix.pool.reset();
  ix.restored = null; // every restored list is packed now, in `flat` (or an empty object)
  packBuf = EMPTY_BYTES;
  state.long = undefined;
  if (state.live && state.live.ids.buffer.byteLength >= OWN_MAPPING_BYTES) freeBuffers([state.live.ids.buffer]);
  state.live = undefined;
  return false;
}

/** The compaction's scratch, with room for a list of `n` postings (it was sized for the longest: grown only if one is longer). */
function liveRoom(state: CompactionState, n: number): NonNullable<CompactionState["live"]> {
  let live = state.live!;
  if (live.ids.length < n) state.live = live = liveScratch(n);
  return live;
}

/** Scratch of this many bytes or more is a mapping of its own (see liveScratch). */
const OWN_SCRATCH = 1 << 20;

/**
 * Room for a list of `n` postings: its live ids and tf codes, and their packed bytes, in one buffer;
 * from 1 MB on a mapping of its own (`OWN_MAPPING_BYTES`), given back at once when the compaction
 * ends (`freeBuffers`). Three arrays from glibc's heap (~8 MB at 100k notes, a word in every note)
 * stayed there as free room once freed: RSS after a warm restart 393–407 MB against 381–389.
 */
function liveScratch(n: number): NonNullable<CompactionState["live"]> {
  const bytes = n * 5 + packedBound(n);
  const buffer = new ArrayBuffer(bytes >= OWN_SCRATCH ? Math.max(bytes, OWN_MAPPING_BYTES) : bytes);
  return { ids: new Int32Array(buffer, 0, n), tfs: new Uint8Array(buffer, n * 4, n), buf: new Uint8Array(buffer, n * 5, packedBound(n)) };
}

/** Postings `[from, to)` of a list whose chunks are alive, copied to `ids`/`tfs` from `w`; returns where the next goes. */
function copyLive(li: Int32Array, lt: Uint8Array, from: number, to: number, alive: Uint8Array, ids: Int32Array, tfs: Uint8Array, w: number): number {
  for (let i = from; i < to; i++) {
    const id = li[i];
    if (alive[id]) {
      ids[w] = id;
      tfs[w++] = lt[i];
    }
  }
  return w;
}

/** No live posting: the list is emptied wherever it is (an object a search holds sees it empty). */
function emptied(ix: IndexState, g: number): void {
  const l = ix.lists.get(g);
  if (l) {
    l.setStorage(EMPTY_INTS, EMPTY_BYTES);
    l.n = 0;
    ix.lists.set(g, undefined);
  } else ix.flat.take(g);
  if (ix.restored && g < ix.restored.n.length) ix.restored.n[g] = 0;
}

/**
 * Term g's long list (read again each step while copying: a packed list is unpacked into shared room) packed
 * in pieces of `compactionLimits.longList` postings, a look at `deadline` between them: its live postings copied, sorted
 * if they did not ascend (at once: the lists a warm start loads are sorted when decoded), their ids
 * packed, then their tf codes, then kept. Until then the list stays where it was, for the searches
 * between steps. True when done, false when the deadline passed first.
 */
function packLong(ix: IndexState, g: number, state: CompactionState, arena: Carver, deadline: () => boolean): boolean {
  const alive = ix.alive;
  const r = ix.restored;
  let L = state.long;
  if (!L || L.g !== g) L = state.long = { g, n: ix.listN(g), phase: 0, i: 0, w: 0, j: 0, unsorted: false, cur: { p: 0, prev: 0, esc: 0 } };
  const n = L.n;
  const { ids: liveIds, tfs: liveTfs, buf: packed } = liveRoom(state, n);
  const piece = compactionLimits.longList & ~1;
  if (L.phase === 0) {
    // (A restored list still encoded is decoded here: whether it ascends is known after.)
    const [li, lt] = ix.peekList(g)!;
    if (L.i === 0) L.unsorted = !!r?.unsorted[g];
    // A search sorted it in place since: what was copied may be out of step with it, so again.
    else if (L.unsorted && !r?.unsorted[g]) {
      L.unsorted = false;
      L.i = 0;
      L.w = 0;
    }
    while (L.i < n) {
      const stop = Math.min(n, L.i + piece);
      L.w = copyLive(li, lt, L.i, stop, alive, liveIds, liveTfs, L.w);
      L.i = stop;
      if (L.i < n && deadline()) return false;
    }
    if (L.unsorted) sortPostings(liveIds, liveTfs, 0, L.w);
    L.phase = 1;
    if (deadline()) return false;
  }
  const w = L.w;
  const c = L.cur;
  if (L.phase === 1) {
    while (L.j < w) {
      const stop = Math.min(w, L.j + piece);
      packIds(liveIds, L.j, stop, packed, c);
      L.j = stop;
      if (L.j < w && deadline()) return false;
    }
    c.esc = c.p + ((w + 1) >> 1);
    L.j = 0;
    L.phase = 2;
    if (deadline()) return false;
  }
  while (L.j < w) {
    const stop = Math.min(w, L.j + piece); // even, but at the end
    packTfs(liveTfs, L.j, stop, w, packed, c);
    L.j = stop;
    if (L.j < w && deadline()) return false;
  }
  if (r?.unsorted[g]) r.unsorted[g] = 0;
  if (w) keepPacked(ix, g, packed.subarray(0, c.esc), w, arena);
  else emptied(ix, g);
  ix.totalPostings -= n - w;
  state.long = undefined;
  return true;
}
