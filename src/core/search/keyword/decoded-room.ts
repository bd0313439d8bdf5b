/**
 * Room for packed lists' decoded postings (postings.ts, `usePacked`), reused from one decode to the
 * next. A new pair of typed arrays a decode was a buffer from the C heap each, freed only when V8's
 * next full collection found it dead: at 100k notes, 400 searches decoded ~250 MB of them (the
 * cache holds 16), V8 let ~60 MB of dead ones pile up before collecting (its external memory
 * limit), and glibc kept the room they had taken: a warm server's RSS rose from ~385 to ~440 MB
 * after its first searches and stayed there.
 *
 * Here a decoded list takes one block (its ids, then its tf codes) of a few size classes (steps of a
 * quarter of a power of two) carved from slabs that are never given back (1 MB, then each twice the
 * last, up to 16 MB). A block a list leaves (evicted, unpacked) is reused only after the current
 * task: readers take a list's `ids` and `tfs` again after every yield (score.ts, compaction.ts,
 * persist.ts) but may hold one list's arrays while another is decoded in the same step, which may
 * evict the first. The cache cleared, the next lists take a new room, and the old one's slabs are
 * freed once no reader holds a view of them.
 */
import { soon } from "../../timers";

/**
 * The first slab's size; each next one twice the last, up to MAX_SLAB. One 33 MB slab at once (its
 * first version) started a collection in the search that made it: a 60–70 ms task at 100k notes.
 */
const FIRST_SLAB = 1 << 20;
const MAX_SLAB = 16 << 20;

/** The room a block of `bytes` takes: a quarter step of the power of two below it (at most 25% more), 64 at least. */
export function roomFor(bytes: number): number {
  if (bytes <= 64) return 64;
  const k = 31 - Math.clz32(bytes - 1); // 2^k < bytes ≤ 2^(k+1)
  const q = 2 ** (k - 2);
  return Math.ceil(bytes / q) * q;
}

/** A block: `size` bytes of `slab` from `at` (a multiple of 8). */
export interface Block {
  readonly slab: ArrayBuffer;
  readonly at: number;
  readonly size: number;
}

export class DecodedRoom {
  private slab: ArrayBuffer | null = null;
  private used = 0;
  private readonly free = new Map<number, Block[]>();
  private retired: Block[] = [];
  private releasing = false;
  /** Bytes carved from slabs so far (never given back). */
  carved = 0;

  private nextSlab: number;

  /** `cap`: carve no more than this in all; `firstSlab`, `maxSlab`: the slabs' sizes (see FIRST_SLAB). */
  constructor(
    private readonly cap: () => number,
    firstSlab = FIRST_SLAB,
    private readonly maxSlab = MAX_SLAB,
  ) {
    this.nextSlab = firstSlab;
  }

  /** A block of at least `bytes`, or null (over a quarter of the largest slab, or the cap reached with no free block that fits). */
  take(bytes: number): Block | null {
    const size = roomFor(bytes);
    if (size > this.maxSlab >> 2) return null;
    // A free block of its class, or of one of the next four (at most twice the room).
    for (let s = size, k = 0; k < 5; k++, s = roomFor(s + 1)) {
      const list = this.free.get(s);
      if (list?.length) return list.pop()!;
    }
    if (this.carved + size > this.cap()) return null;
    if (!this.slab || this.used + size > this.slab.byteLength) {
      // What is left of the last slab stays unused.
      while (this.nextSlab < size) this.nextSlab *= 2;
      this.slab = new ArrayBuffer(this.nextSlab);
      this.nextSlab = Math.min(this.maxSlab, 2 * this.nextSlab);
      this.used = 0;
    }
    const b: Block = { slab: this.slab, at: this.used, size };
    this.used += size;
    this.carved += size;
    return b;
  }

  /** `b` is free again once the current task has ended (see above). */
  retire(b: Block): void {
    this.retired.push(b);
    if (this.releasing) return;
    try {
      // An immediate (not a window timer, which a hidden window slows to once a second or less).
      soon(() => this.release());
      this.releasing = true;
    } catch {
      // No host timers (a unit test's bare core): retired blocks stay retired; `take` carves up to its cap, then says null.
    }
  }

  private release(): void {
    this.releasing = false;
    for (const b of this.retired) {
      let list = this.free.get(b.size);
      if (!list) this.free.set(b.size, (list = []));
      list.push(b);
    }
    this.retired = [];
  }

  /** Bytes in blocks free or retired (for tests). */
  get idleBytes(): number {
    let n = 0;
    for (const list of this.free.values()) for (const b of list) n += b.size;
    for (const b of this.retired) n += b.size;
    return n;
  }
}
