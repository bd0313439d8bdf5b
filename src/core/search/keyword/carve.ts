/**
 * Big buffers that loading a saved index carves its pieces from, instead of one small buffer a
 * piece. A warm start at 100k notes read 256 segment files (~0.7 MB each) and copied ~1,300 blobs
 * out of them: ~300 MB of short-lived buffers, allocated between the long-lived ones of the notes
 * being loaded and freed only by V8's next full collection. glibc served them from its heap (its
 * mmap threshold rises to the size of the largest mapped buffer freed, up to 32 MB), and its heap
 * only shrinks from the top: ~60 MB of the server's RSS after a warm start was that heap's free room
 * (the same start with `MALLOC_MMAP_THRESHOLD_=131072`: 725 → 663 MB). A chunk here is above 32 MB,
 * so it is always a mapping of its own, given back whole when freed, and never raises the threshold.
 */
import { freeBuffers, OWN_MAPPING_BYTES } from "../../memory";

/** A chunk: a mapping of its own (see `OWN_MAPPING_BYTES`; and postings.ts, SLAB). */
export const CARVE_CHUNK = OWN_MAPPING_BYTES;

/** Rounds up to 8 bytes, so every piece starts aligned for any typed array. */
const align = (n: number): number => (n + 7) & ~7;

/**
 * Pieces that live long, one after another: a full chunk is let go, and freed when nothing points
 * into it any more. Pieces over a quarter of a chunk are not carved (undefined). `chunkBytes`:
 * smaller chunks for what a small index keeps (packed lists: compaction.ts).
 */
export class Carver {
  private buf = new Uint8Array(0);
  private used = 0;
  private readonly mine = new WeakSet<ArrayBufferLike>();
  /** Every chunk taken so far, for whoever knows when all its pieces are dead (see freeBuffers). */
  readonly chunks: ArrayBufferLike[] = [];

  constructor(private readonly chunkBytes = CARVE_CHUNK) {}

  take(n: number): Uint8Array | undefined {
    const at = this.room(n, true);
    return at < 0 ? undefined : this.buf.subarray(at, at + n);
  }

  /**
   * `bytes` copied into carved room, unaligned (bytes are read as bytes): the chunk and where they
   * start (no view made for the piece: compaction places ~30k lists), or undefined when too large
   * to carve.
   */
  place(bytes: Uint8Array): readonly [Uint8Array, number] | undefined {
    const at = this.room(bytes.length, false);
    if (at < 0) return undefined;
    this.buf.set(bytes, at);
    return [this.buf, at];
  }

  /** Where `n` bytes are carved in `buf` (a new chunk taken when the current one is full), or -1; `aligned`: at a multiple of 8. */
  private room(n: number, aligned: boolean): number {
    // A larger piece gets a buffer of its own (carving it would waste too much of a chunk).
    if (n > this.chunkBytes >> 2) return -1;
    let at = aligned ? align(this.used) : this.used;
    if (at + n > this.buf.length) {
      this.buf = new Uint8Array(this.chunkBytes);
      this.mine.add(this.buf.buffer);
      this.chunks.push(this.buf.buffer);
      at = 0;
    }
    this.used = at + n;
    return at;
  }

  /** True when `a` was carved here (then it need not be copied in). */
  owns(a: Uint8Array): boolean {
    return this.mine.has(a.buffer);
  }

  /** `src` in a carved piece (itself when already carved, or too large to carve). */
  copy(src: Uint8Array): Uint8Array {
    if (this.owns(src)) return src;
    const out = this.take(src.length);
    if (!out) return src;
    out.set(src);
    return out;
  }
}

interface ScratchChunk {
  buf: Uint8Array;
  used: number;
  /** Pieces not given back yet. */
  live: number;
}

/**
 * Short-lived pieces, each taken for one segment (its file's bytes, the blobs decoded from it) and
 * given back together when that segment is done. Segments are done in the order they are read, so
 * a chunk whose every piece is back is soon reused: a whole load runs in two or three chunks.
 * A piece must not be used after its segment is done.
 */
export class ScratchChunks {
  /** The size of a chunk (tests lower it, to see chunks reused within a small index). */
  static chunkBytes = CARVE_CHUNK;
  private readonly size = ScratchChunks.chunkBytes;
  private readonly chunks: ScratchChunk[] = [];
  private cur: ScratchChunk | null = null;
  private readonly pieces = new Map<number, ScratchChunk[]>();

  take(seg: number, n: number): Uint8Array | undefined {
    if (n > this.size >> 2) return undefined;
    let c = this.cur;
    if (!c || c.used + n > c.buf.length) {
      c = this.chunks.find((x) => x.live === 0) ?? null;
      if (!c) {
        c = { buf: new Uint8Array(this.size), used: 0, live: 0 };
        this.chunks.push(c);
      }
      c.used = 0;
      this.cur = c;
    }
    const out = c.buf.subarray(c.used, c.used + n);
    c.used = Math.min(c.buf.length, align(c.used + n));
    c.live++;
    let mine = this.pieces.get(seg);
    if (!mine) this.pieces.set(seg, (mine = []));
    mine.push(c);
    return out;
  }

  /** Gives back every piece taken for `seg`. */
  done(seg: number): void {
    const mine = this.pieces.get(seg);
    if (!mine) return;
    this.pieces.delete(seg);
    for (const c of mine) c.live--;
  }

  /**
   * Gives back the memory of every chunk none of whose pieces is out (see freeBuffers), now rather
   * than at V8's next full collection; those chunks are forgotten. Call when the job is over.
   */
  release(): void {
    const idle = this.chunks.filter((c) => c.live === 0);
    if (idle.length === 0) return;
    freeBuffers(idle.map((c) => c.buf.buffer));
    for (const c of idle) this.chunks.splice(this.chunks.indexOf(c), 1);
    if (this.cur && this.cur.live === 0) this.cur = null;
  }

  /** Chunks allocated so far (for tests). */
  get chunkCount(): number {
    return this.chunks.length;
  }
}
