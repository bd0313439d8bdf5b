/**
 * Lists of ids (non-negative numbers, or -1), one per index, all in one growable `Int32Array`:
 * list `i` is `data[start[i] .. start[i] + len[i])`, with room up to `cap[i]`. The link graph's
 * forward and backward lists: at 100k notes they were ~200k JS arrays (~32 MB of heap, each an
 * object the collector marks, and garbage each time one grew); here they are a few typed arrays
 * (~10 MB outside the JS heap). A list that outgrows its room moves to the end (its old place is
 * dead space); `compact` packs the lists again once dead space is more than the live ids.
 *
 * A list can be absent (`len` -1: "no list", as a note that is not in the graph) or empty (`len` 0).
 * Read a list with `startOf`/`lengthOf` and `data` (re-read `data` after any change: it may be
 * replaced when the store grows).
 */
import { grownArray } from "../memory";

export class IdLists {
  data: Int32Array = new Int32Array(1024);
  private start: Int32Array = new Int32Array(0);
  private len: Int32Array = new Int32Array(0);
  private cap: Int32Array = new Int32Array(0);
  /** Used length of `data` (next free slot). */
  private top = 0;
  /** Slots of `data` below `top` no list uses. */
  private dead = 0;

  /** Indexes with room (lists beyond are absent). */
  get size(): number {
    return this.len.length;
  }

  startOf(i: number): number {
    return this.start[i];
  }

  /** The list's length; -1 when absent (indexes beyond the store included). */
  lengthOf(i: number): number {
    return i < this.len.length ? this.len[i] : -1;
  }

  /** Forgets every list. */
  clear(): void {
    this.data = new Int32Array(1024);
    this.start = new Int32Array(0);
    this.len = new Int32Array(0);
    this.cap = new Int32Array(0);
    this.top = 0;
    this.dead = 0;
  }

  /** Makes list `i` absent (its room is kept for when it comes back). */
  remove(i: number): void {
    if (i < this.len.length) this.len[i] = -1;
  }

  /** Replaces list `i` with `ids` (present, maybe empty). */
  set(i: number, ids: ArrayLike<number>): void {
    this.ensureIndex(i);
    const n = ids.length;
    if (this.cap[i] < n) this.move(i, n, 0);
    const s = this.start[i];
    const d = this.data;
    for (let k = 0; k < n; k++) d[s + k] = ids[k];
    this.len[i] = n;
  }

  /** Appends `id` to list `i` (an absent list becomes `[id]`). */
  push(i: number, id: number): void {
    this.ensureIndex(i);
    const n = this.len[i] < 0 ? 0 : this.len[i];
    if (this.cap[i] <= n) this.move(i, Math.max(4, n * 2), n);
    this.data[this.start[i] + n] = id;
    this.len[i] = n + 1;
  }

  /** True when list `i` holds `id`; with `lastOnly`, looks at its last id only. */
  includes(i: number, id: number, lastOnly = false): boolean {
    const n = this.lengthOf(i);
    if (n <= 0) return false;
    const s = this.start[i];
    const d = this.data;
    if (d[s + n - 1] === id) return true;
    if (lastOnly) return false;
    for (let k = s; k < s + n - 1; k++) if (d[k] === id) return true;
    return false;
  }

  /** True when list `i` holds an id other than `id` (and than -1). */
  holdsOther(i: number, id: number): boolean {
    const n = this.lengthOf(i);
    if (n <= 0) return false;
    const s = this.start[i];
    const d = this.data;
    for (let k = s; k < s + n; k++) if (d[k] >= 0 && d[k] !== id) return true;
    return false;
  }

  /** Removes the last occurrence of `id` from list `i` (the last id takes its place); true when found. */
  removeOne(i: number, id: number): boolean {
    const n = this.lengthOf(i);
    if (n <= 0) return false;
    const s = this.start[i];
    const d = this.data;
    for (let k = s + n - 1; k >= s; k--) {
      if (d[k] !== id) continue;
      d[k] = d[s + n - 1];
      this.len[i] = n - 1;
      return true;
    }
    return false;
  }

  /** Packs the lists (each with room for its length only) when dead space exceeds the live ids, or when `force`. */
  compact(force = false): void {
    const live = this.top - this.dead;
    if (!force && this.dead <= Math.max(live, 4096)) return;
    let total = 0;
    for (let i = 0; i < this.len.length; i++) if (this.len[i] > 0) total += this.len[i];
    const out = grownArray(Int32Array, null, Math.max(1024, total));
    let at = 0;
    const d = this.data;
    for (let i = 0; i < this.len.length; i++) {
      const n = this.len[i];
      // Copied id by id: most lists are short, and a subarray per list (~300k at 100k notes) was most of the time.
      for (let k = 0, s = this.start[i]; k < n; k++) out[at + k] = d[s + k];
      this.start[i] = at;
      this.cap[i] = n > 0 ? n : 0;
      at += n > 0 ? n : 0;
    }
    this.data = out;
    this.top = at;
    this.dead = 0;
  }

  /** Moves list `i` to the end of `data` with room for `room` ids, keeping its first `keep`. */
  private move(i: number, room: number, keep: number): void {
    if (this.dead > Math.max(this.top - this.dead, 65536)) this.compact(true);
    if (this.top + room > this.data.length) this.data = grownArray(Int32Array, this.data, Math.max(this.data.length * 2, this.top + room));
    const s = this.start[i];
    if (keep > 0) this.data.copyWithin(this.top, s, s + keep);
    this.dead += this.cap[i];
    this.start[i] = this.top;
    this.cap[i] = room;
    this.top += room;
  }

  private ensureIndex(i: number): void {
    if (i < this.len.length) return;
    const n = Math.max(1024, this.len.length * 2, i + 1);
    const grow = (a: Int32Array, fill: number): Int32Array => {
      const was = a.length;
      const b = grownArray(Int32Array, a, n);
      if (fill !== 0) b.fill(fill, was);
      return b;
    };
    this.start = grow(this.start, 0);
    this.len = grow(this.len, -1);
    this.cap = grow(this.cap, 0);
  }
}
