/**
 * What the keyword index holds for one note (`DocEntry`), its chunks' numbers packed in an Int32Array,
 * and which persistence segment a note belongs to. Owns these shapes and their accessors; it neither
 * changes the index nor reads files.
 */
import { jsonExact } from "../../metadata";
import { detach } from "../../strings";
import { fnv1a } from "../../hash";

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
  return fnv1a(path) % count;
}

/**
 * One note of the index. Kept small: at 100k notes these entries were ~130 MB of heap while each
 * held arrays of its own (chunk ids, headings, title ids, tags), its term sequences and chunk numbers
 * in typed arrays of its own (two backing stores a note), its frontmatter as an object and its hash
 * as a concatenated string; see `NoteSlabs` (inverted-index.ts) for where a note's numbers live.
 */
export interface DocEntry {
  slot: number;
  seg: number;
  /** Its title and folder are derived from it when a hit needs them (two strings a note fewer: ~6 MB at 100k notes). */
  path: string;
  mtime: number;
  size: number;
  /**
   * `hash53` of the note as indexed: a number (a string of `hashText`'s was 40 bytes a note, 4 MB at
   * 100k notes; a number is a box of 16).
   */
  hash: number;
  /**
   * Its frontmatter as JSON text ("" when it has none, or an empty one), parsed when a filter or a
   * hit needs it (`frontmatterOf`); the object itself when JSON would not give it back exactly (a
   * rare `.inf` or `.nan`). As objects, the notes' frontmatter was ~11 MB at 100k notes.
   */
  fm: string | Record<string, unknown>;
  /** Lower-case tags without `#` (frontmatter and inline); each tag one string the index shares (see `internTags`). */
  tags: readonly string[];
  /** Its chunks' ids are `chunk0`, `chunk0 + 1`, … (`chunks` of them): a note's chunks get consecutive ids. */
  chunk0: number;
  chunks: number;
  /**
   * Its chunks' heading paths: one string, joined by "\n" (see `headingOf`); an array when a
   * heading holds a line break (a setext heading's lines). One string a note instead of an array
   * and a string per chunk.
   */
  headings: string | readonly string[];
  /** The chunks' body term ids (varints, in token order), each chunk at its [SEQ_A, SEQ_B); shared with other notes. */
  seq: Uint8Array;
  /**
   * Chunk i's numbers at spans[spanAt + i * CHUNK_NUMS + LEN, LINE_A, …], then its `titles` title
   * term ids. Shared with other notes: a segment's notes restored from disk share one array, notes
   * indexed since share slabs (a typed array of its own a note was ~200 bytes of heap each).
   */
  spans: Int32Array;
  spanAt: number;
  /**
   * How many term ids of the title's and aliases' tokens (in order, stop words left out) follow its
   * chunks' numbers in `spans` (`titleId`): the title boost compares them with the query's terms
   * (saved with the note, so no search tokenizes titles).
   */
  titles: number;
}

/** Chunk i's id. */
export function chunkId(doc: DocEntry, i: number): number {
  return doc.chunk0 + i;
}

/** Title term id j (0 ≤ j < doc.titles) of `doc`. */
export function titleId(doc: DocEntry, j: number): number {
  return doc.spans[doc.spanAt + doc.chunks * CHUNK_NUMS + j];
}

/** Chunk o's heading path. */
export function headingOf(doc: DocEntry, o: number): string {
  const h = doc.headings;
  if (typeof h !== "string") return h[o] ?? "";
  if (doc.chunks === 1) return h;
  let s = 0;
  for (let i = 0; i < o; i++) {
    const j = h.indexOf("\n", s);
    if (j < 0) return "";
    s = j + 1;
  }
  const e = h.indexOf("\n", s);
  return e < 0 ? h.slice(s) : h.slice(s, e);
}

/** Chunks' heading paths as a note keeps them (see `DocEntry.headings`). */
export function packHeadings(hs: readonly string[]): string | readonly string[] {
  if (hs.length === 1) return hs[0];
  for (const h of hs) if (h.includes("\n")) return hs;
  return hs.join("\n");
}

/** Every chunk's heading path of `doc` (for saving it). */
export function headingsOf(doc: DocEntry): readonly string[] {
  const h = doc.headings;
  if (typeof h !== "string") return h;
  return doc.chunks === 1 ? [h] : h.split("\n");
}

/** `doc`'s frontmatter, as an object of its own (parsed from its JSON text). */
export function frontmatterOf(doc: Pick<DocEntry, "fm">): Record<string, unknown> {
  const f = doc.fm;
  if (typeof f !== "string") return f;
  return f === "" ? {} : (JSON.parse(f) as Record<string, unknown>);
}

/** A frontmatter as a note keeps it (see `DocEntry.fm`). */
export function packFrontmatter(fm: Record<string, unknown>): string | Record<string, unknown> {
  if (!jsonExact(fm)) return fm;
  // Flat (`detach`): JSON.stringify gives a concatenation of many strings.
  for (const _k in fm) return detach(JSON.stringify(fm));
  return "";
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
  const n = doc.chunks;
  if (n === 0) return 0;
  return span(doc, field === SEQ_A ? 0 : n - 1, field);
}
