/**
 * The keyword index's state as the modules beside it see it: ranking (score.ts), compaction, saving
 * (persist.ts) and loading (restore.ts) work on these fields, which only they and `InvertedIndex`
 * (inverted-index.ts, the one implementation and the facade that calls them) change. Declared apart
 * so that those modules do not import inverted-index.ts, which imports them.
 */
import type { TermDict } from "../tokenize";
import type { ChunkReader } from "./chunk-reader";
import type { DocEntry } from "./doc";
import type { FlatLists, ListSlots, PostingList, PostingPool } from "./postings";
import type { Carver } from "./carve";

/**
 * After loading: where the restored lists lie in one pair of buffers (term g: n[g] postings at
 * off[g] of `ids` and `tfs`; encoded[g] while not decoded yet). A restored list becomes a
 * PostingList object on first use (`listAt`): making all ~30k of them while loading (10k notes)
 * took ~30 ms of a fresh process and added 2.4 MB that every scavenge copied.
 */
export interface RestoredLists {
  ids: Int32Array;
  tfs: Uint8Array;
  off: Int32Array;
  n: Int32Array;
  encoded: Uint8Array;
  /**
   * Per term: 1 while its list's ids do not ascend (see `sortPostings`): decoded from several
   * segments' parts, one after another. Sorted on first use where order matters (the scorer's
   * skipping), or by compaction.
   */
  unsorted: Uint8Array;
}

export interface IndexState {
  dict: TermDict;
  /** Per term id: its posting list (a restored one is made an object on first use, see `listAt`). */
  lists: ListSlots;
  /** Packed lists without an object (compaction puts them there; `listAt` takes one out when it is used). */
  flat: FlatLists;
  /** How many segments the notes are spread over (see `segmentCountFor`). */
  segCount: number;
  /** Segments changed since they were last saved (the first `segCount` are used). */
  dirty: Uint8Array;
  // Per chunk id: its note's slot, length, place in its note, segment, and whether it is alive.
  chunkDoc: Int32Array;
  chunkLen: Float32Array;
  chunkOrd: Int32Array;
  chunkSeg: Uint8Array;
  alive: Uint8Array;
  nextId: number;
  /** Moves with every change a search can see (notes added or removed, lists merged or compacted, loading). */
  readonly changeCount: number;
  liveChunks: number;
  totalLen: number;
  totalPostings: number;
  deadPostings: number;
  /** The slabs grown lists take their space from. */
  pool: PostingPool;
  docs: Map<string, DocEntry>;
  slots: (DocEntry | null)[];
  freeSlots: number[];
  /** Per slot: its note's length in terms (the whole-note BM25's length; set by `setNoteLen`). */
  noteLen: Float64Array;
  /**
   * Where a big index's loading carves what its notes keep (term sequences, numbers; see carve.ts):
   * out of glibc's heap, where the loading's short-lived buffers freed between them left ~70 MB of
   * holes at 100k notes.
   */
  keptArena: Carver | null;
  /** Per segment: the term sequences its restored notes share (see `restoredPaths`). */
  restoredSeq: (Uint8Array | undefined)[];
  /** Set by loading (restore.ts): the restored lists not made objects yet. */
  restored: RestoredLists | null;
  /** Called when a restored segment's postings turn out inconsistent (its notes must be indexed again). */
  onSegmentLost: ((k: number) => void) | null;
  /**
   * The vault's own string for a path, when it lists it: a restored note keeps that one, not a copy
   * parsed from the saved index (at 100k notes ~7 MB of heap the listing already held).
   */
  listedPath: ((path: string) => string | undefined) | null;
  /**
   * How many restored notes `listedPath` did not know yet (loaded while the vault was being listed):
   * `sharePaths` gives them the vault's strings once it is listed.
   */
  unlisted: number;
  readonly reader: ChunkReader;

  /** Forgets everything. */
  clear(): void;
  /** Records `doc`'s length (`noteLen`) once its chunks' lengths are in `chunkLen`. */
  setNoteLen(doc: DocEntry): void;
  /** Makes the per-chunk arrays hold chunk id `id`. */
  ensureChunkCap(id: number): void;
  /** A note's tags as it keeps them (each tag one string the notes share). */
  internTags(tags: readonly string[]): readonly string[];
  /** Term g's list, made an object first if it was restored from disk and not used since. */
  listAt(g: number): PostingList | undefined;
  /**
   * Term g's postings for one pass that keeps neither (a save, compaction), without making a list
   * object: its ids, tf codes and count, valid until the next peek; null when it has none.
   */
  peekList(g: number): readonly [Int32Array, Uint8Array, number] | null;
  /**
   * For a search: list `l`'s decoding in steps of about `step` postings (see
   * `SegmentLoader.decodeListSteps`) when it was restored from disk and is still encoded, else null.
   */
  settleSteps(l: PostingList, step: number): Generator<void, void, void> | null;
  /** Term g's posting count (without making a restored list an object). */
  listN(g: number): number;
  /** The list of a term, if any posting was ever added. */
  lookup(t: string): PostingList | undefined;
  /** Terms starting with `prefix`, most frequent first (capped). */
  expandPrefix(prefix: string): string[];
  /** Merges the postings log into the lists (every reader of the lists calls this first). */
  flushPostings(release?: boolean): void;
  /** Merges the postings log in steps until `due()`; true when the merge is done. */
  mergeSome(due: () => boolean): boolean;
}
