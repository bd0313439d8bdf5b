/**
 * The saved form of a segment (`SegmentBlobs`: its notes, chunk numbers, term header, postings and
 * term sequences; no texts, snippets are cut from the notes) and its writer, in steps; the term
 * dictionary as saved. Owns the byte layout of what is saved; it reads the index and never changes
 * it (but for the segments' dirty flags), nor does it know files (the service writes the blobs
 * through the state store).
 */
import type { TermDict } from "../tokenize";
import { ByteWriter, zig } from "./codec";
import type { ScratchChunks } from "./carve";
import { CHUNK_NUMS, docEdge, LEN, LINE_A, LINE_B, MAX_SEGMENTS, SEQ_A, SEQ_B, titleId, type DocEntry } from "./doc";
import type { IndexState } from "./index-state";
import { peekStamp, TF_OF } from "./postings";

/** The persisted form of one segment (its notes; postings hold term ids of the main file's dictionary). */
export interface SegmentBlobs {
  /** JSON: the segment's notes (their strings and frontmatter). */
  docs: Uint8Array;
  /** Varints, per note in `docs` order: its chunk count, then per chunk: zigzag id delta, length, first line, line span, term-sequence bytes. */
  nums: Uint8Array;
  /** Varints, per term present: term id delta, its posting count and their bytes in `postings` (lets loading lay out every list, and decode each one on first use). */
  terms: Uint8Array;
  /** Varints, the postings of the terms in `terms` order: (zigzag chunk id delta, weighted tf as coded in memory, see `TF_OF`). */
  postings: Uint8Array;
  seq: Uint8Array;
}

/** A segment as loading reads it. */
export type RestoredBlobs = SegmentBlobs;

export interface PersistedDoc {
  p: string;
  m: number;
  s: number;
  /** `hash53` of the note as indexed; an index saved by an earlier version has its `hashText` (read as the same number). */
  h: number | string;
  /** Its frontmatter as JSON text ("" for none; see DocEntry.fm). */
  f: string;
  tg: readonly string[];
  /** Its chunks' heading paths, as the note keeps them (see DocEntry.headings). */
  hd: string | readonly string[];
  /** Title term ids (see DocEntry.titles). */
  ti: number[];
}

/** A segment's writer: `step(deadline)` is true when done; then `blobs(k)` for each segment. */
export interface SegmentWriter {
  step(deadline: () => boolean): boolean;
  /** Segment `k`'s blobs: views into buffers reused by the next call (write them out first; when the
   * writer was given scratch space, before the segment's pieces are given back). */
  blobs(k: number): SegmentBlobs;
  /** The most postings one step went through (a step ends after about 32k, a list's piece or not; see LIST_PIECE). */
  readonly mostInAStep: number;
}

/** Postings of one list written between two looks at the deadline. */
const LIST_PIECE = 32768;

/**
 * Serializes the given segments in steps (`step(deadline)` is true when done): one pass over the
 * posting lists splits live postings by segment. The index must not change between steps (the
 * service runs it inside its exclusive worker). Clears the segments' dirty flags.
 */
export function segmentWriter(ix: IndexState, segs: number[], scratch?: ScratchChunks): SegmentWriter {
  ix.flushPostings();
  const seqW = new ByteWriter(256 * 1024);
  const numW = new ByteWriter(64 * 1024);
  const docsW = new ByteWriter(256 * 1024);
  const want = new Uint8Array(MAX_SEGMENTS);
  for (const k of segs) want[k] = 1;
  const posts = new Map<number, ByteWriter>();
  const heads = new Map<number, ByteWriter>();
  const lastTerm = new Int32Array(MAX_SEGMENTS);
  const prevId = new Int32Array(MAX_SEGMENTS);
  const counts = new Int32Array(MAX_SEGMENTS);
  const startLen = new Int32Array(MAX_SEGMENTS);
  // Small to start with, growing as they fill: 64 KB and 16 KB for each of 256 segments were 20 MB
  // of zeroed buffers in one step (with the collection they caused, ~200 ms at 100k notes).
  // Their buffers carved from `scratch` when given, as segment k's pieces (see carve.ts): growing
  // 256 of them by doubling left the allocator's heap ~80 MB of free room after a save at 100k notes.
  for (const k of segs) {
    const alloc = scratch ? (n: number) => scratch.take(k, n) ?? new Uint8Array(n) : undefined;
    posts.set(k, new ByteWriter(4 * 1024, alloc));
    heads.set(k, new ByteWriter(1024, alloc));
    ix.dirty[k] = 0;
  }
  // Segment k's postings writer, by k (looked up for every posting).
  const postW: ByteWriter[] = [];
  for (const [k, w] of posts) postW[k] = w;
  let g = 0;
  /** Where in term g's list the last step stopped (see LIST_PIECE). */
  let at = 0;
  /**
   * Term g's postings as the step that stopped in them had them, and `peekStamp()` then when they
   * are `peek`'s scratch (else -1): a packed list of ~700k postings decoded again at each step was
   * 20–30 ms of a step.
   */
  let kept: readonly [Int32Array, Uint8Array, number] | null = null;
  let keptStamp = -1;
  let most = 0;
  const alive = ix.alive;
  const chunkSeg = ix.chunkSeg;
  let bySeg: DocEntry[][] | null = null;
  return {
    get mostInAStep() {
      return most;
    },
    step: (deadline) => {
      let steps = 0;
      let work = 0;
      let done = 0;
      const ended = (): boolean => {
        if (done > most) most = done;
        return false;
      };
      if (!bySeg) {
        // The segments' notes, grouped in one pass.
        const groups: DocEntry[][] = Array.from({ length: ix.segCount }, () => []);
        for (const d of ix.docs.values()) if (want[d.seg]) groups[d.seg].push(d);
        bySeg = groups;
        if (deadline()) return false;
      }
      while (g < ix.lists.length) {
        let held = at > 0 && keptStamp !== -1 && keptStamp === peekStamp() ? kept : null;
        if (!held) {
          const before = peekStamp();
          held = ix.peekList(g);
          keptStamp = peekStamp() !== before ? peekStamp() : -1;
        }
        if (held) {
          const [ids, tfs, n] = held;
          if (at === 0) counts.fill(0);
          // A long list in pieces, a step ending between them: a common word's (~700k postings at 100k
          // notes) was one step of ~60 ms. Its postings go to their segments' writers; a segment's
          // first posting of the term starts its part. (A step resumed mid-list reads it again unless `kept` is still it.)
          for (;;) {
            const stop = Math.min(n, at + Math.max(1024, LIST_PIECE - work));
            for (let i = at; i < stop; i++) {
              const id = ids[i];
              const k = chunkSeg[id];
              if (!alive[id] || !want[k]) continue;
              const w = postW[k];
              if (counts[k]++ === 0) {
                prevId[k] = 0;
                startLen[k] = w.n;
              }
              w.varint(zig(id - prevId[k]));
              w.varint(TF_OF[tfs[i]]);
              prevId[k] = id;
            }
            work += stop - at;
            done += stop - at;
            if (stop === n) break;
            at = stop;
            if (deadline()) {
              kept = held;
              return ended();
            }
            if (work > LIST_PIECE) work = 0;
          }
          at = 0;
          kept = null;
          // The term header: term id delta, posting count, and their encoded bytes.
          for (const k of segs) {
            if (!counts[k]) continue;
            const w = heads.get(k)!;
            w.varint(g - lastTerm[k]);
            lastTerm[k] = g;
            w.varint(counts[k]);
            w.varint(postW[k].n - startLen[k]);
          }
        }
        g++;
        // Every 256 lists or 32k postings: the first lists are the common terms', and the longest.
        if (((++steps & 255) === 0 || work > LIST_PIECE) && deadline()) return ended();
        if (work > LIST_PIECE) work = 0;
      }
      ended();
      return true;
    },
    blobs: (k) => {
      seqW.reset();
      numW.reset();
      // The notes as a JSON array, written into a reused buffer one note at a time: as one
      // string (~150 KB a segment at 10k notes) it went straight to V8's old generation.
      docsW.reset();
      docsW.byte(0x5b); // [
      for (const d of bySeg?.[k] ?? []) {
        if (ix.docs.get(d.path) !== d) continue;
        seqW.bytes(d.seq.subarray(docEdge(d, SEQ_A), docEdge(d, SEQ_B)));
        const cs = d.spans;
        const n = d.chunks;
        numW.varint(n);
        let prev = 0;
        for (let i = 0; i < n; i++) {
          const id = d.chunk0 + i;
          const sp = d.spanAt + i * CHUNK_NUMS;
          numW.varint(zig(id - prev));
          prev = id;
          numW.varint(cs[sp + LEN]);
          numW.varint(cs[sp + LINE_A]);
          numW.varint(zig(cs[sp + LINE_B] - cs[sp + LINE_A]));
          numW.varint(cs[sp + SEQ_B] - cs[sp + SEQ_A]);
        }
        if (docsW.n > 1) docsW.byte(0x2c); // ,
        const ti = new Array<number>(d.titles);
        for (let j = 0; j < d.titles; j++) ti[j] = titleId(d, j);
        docsW.text(JSON.stringify({ p: d.path, m: d.mtime, s: d.size, h: d.hash, f: fmJson(d.fm), tg: d.tags, hd: d.headings, ti } satisfies PersistedDoc));
      }
      docsW.byte(0x5d); // ]
      const post = posts.get(k)!;
      const head = heads.get(k)!;
      posts.delete(k);
      heads.delete(k);
      return { docs: docsW.view(), nums: numW.view(), terms: head.view(), postings: post.view(), seq: seqW.view() };
    },
  };
}

/** The term dictionary as saved: its terms, one per line, as UTF-8. */
export function dictBytes(dict: TermDict): Uint8Array {
  const job = new DictWriter(dict);
  while (!job.step(() => false));
  return job.bytes();
}

/**
 * The dictionary's bytes made in steps (`step(deadline)`, true when done; the dictionary must not
 * change meanwhile): at once, the 3,000-note varied vault's took 51 ms, a step growing with the
 * dictionary (~1 s expected at 4.65M terms).
 */
export class DictWriter {
  private readonly w: ByteWriter;
  private k = 0;

  constructor(private readonly dict: TermDict) {
    this.w = new ByteWriter(dict.size * 10 + 16);
  }

  step(deadline: () => boolean): boolean {
    const { dict, w } = this;
    while (this.k < dict.size) {
      if (this.k > 0) w.byte(0x0a); // \n
      w.text(dict.name(this.k++));
      if ((this.k & 4095) === 0 && deadline()) return this.k >= dict.size;
    }
    return true;
  }

  bytes(): Uint8Array {
    return this.w.view();
  }
}

/** A note's frontmatter as saved: its JSON text; "" for one JSON cannot hold. */
function fmJson(fm: DocEntry["fm"]): string {
  if (typeof fm === "string") return fm;
  try {
    const s = JSON.stringify(fm);
    return s === "{}" ? "" : s;
  } catch {
    return "";
  }
}
