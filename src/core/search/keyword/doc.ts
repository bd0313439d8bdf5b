/**
 * What the keyword index holds for one note (`DocEntry`), its chunks' numbers packed in an Int32Array,
 * and which persistence segment a note belongs to. Owns these shapes and their accessors; it neither
 * changes the index nor reads files.
 */
/**
 * Notes are spread over segments by a hash of their path, for persistence only: each segment is
 * saved as one small file of its own (its notes, postings and term sequences), so saving after an
 * edit exports only the segments that changed, in short steps, and loading decodes them one task at
 * a time. The number of segments grows with the vault (`segmentCountFor`): a power of two, ~400
 * notes each (32 at 10k notes), at most `MAX_SEGMENTS`. Fewer, larger segments load faster (each
 * file costs ~1 ms to open and query, before its bytes: at 10k notes 32 segments loaded in ~0.45 s
 * where 128 took ~0.65 s), smaller ones save faster after an edit; with a fixed 32, a 2-note vault
 * had 64 files and 100k notes ~12 MB segments.
 */
export const MAX_SEGMENTS = 256;

/** The segments for a vault of `notes` notes: the smallest power of two with at most `perSegment` notes each (≤ MAX_SEGMENTS). */
export function segmentCountFor(notes: number, perSegment: number): number {
  let n = 1;
  while (n < MAX_SEGMENTS && n * Math.max(1, perSegment) < notes) n *= 2;
  return n;
}

/** True for a segment count a saved index may have. */
export function validSegmentCount(n: unknown): n is number {
  return typeof n === "number" && Number.isInteger(n) && n >= 1 && n <= MAX_SEGMENTS && (n & (n - 1)) === 0;
}

/** The segment of `path` when there are `count` segments. */
export function segmentOf(path: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < path.length; i++) h = Math.imul(h ^ path.charCodeAt(i), 16777619);
  return (h >>> 0) % count;
}

export interface DocEntry {
  slot: number;
  seg: number;
  /** Its title and folder are derived from it when a hit needs them (two strings a note fewer: ~6 MB at 100k notes). */
  path: string;
  mtime: number;
  size: number;
  hash: string;
  frontmatter: Record<string, unknown>;
  /** Lower-case tags without `#` (frontmatter and inline). */
  tags: string[];
  chunkIds: number[];
  /** Per chunk: its heading path. */
  headings: string[];
  /** The chunks' body term ids (varints, in token order), each chunk at its [SEQ_A, SEQ_B). */
  seq: Uint8Array;
  /**
   * Chunk i's numbers at spans[spanAt + i * CHUNK_NUMS + LEN, LINE_A, …]. A note restored from disk
   * shares one array with its segment's notes (four small arrays per note were ~40k long-lived
   * objects at 10k notes, which every scavenge copied while loading).
   */
  spans: Int32Array;
  spanAt: number;
  /**
   * Term ids of the title's and aliases' tokens, in order, stop words left out: the title boost
   * compares them with the query's terms (saved with the note, so no search tokenizes titles).
   */
  titleIds: number[];
}

/**
 * A chunk's numbers (see `DocEntry.spans`): its length in terms, its first and last line, and the
 * byte range [A, B) of its term sequence in its note's `seq`. The index holds no chunk texts: a
 * hit's snippet is cut from its note as read at query time (see sections.ts), at these lines.
 */
export const CHUNK_NUMS = 5;
export const LEN = 0;
export const LINE_A = 1;
export const LINE_B = 2;
export const SEQ_A = 3;
export const SEQ_B = 4;

/** Chunk i's number `field` (LEN, LINE_A, …) of `doc`. */
export function span(doc: DocEntry, i: number, field: number): number {
  return doc.spans[doc.spanAt + i * CHUNK_NUMS + field];
}

/** Where `doc`'s chunks start (`field` SEQ_A) or end (SEQ_B) in its `seq`. */
export function docEdge(doc: DocEntry, field: number): number {
  const n = doc.chunkIds.length;
  if (n === 0) return 0;
  return span(doc, field === SEQ_A ? 0 : n - 1, field);
}
