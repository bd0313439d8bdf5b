/**
 * The keyword index's byte codec: a growable byte buffer that writes varints and UTF-8, a varint
 * reader, the postings decoder, and zigzag for signed deltas. Owns bytes only: no index structures.
 */
import { TF_EXACT, tfCode } from "./postings";

/** A growable byte buffer for varints. */
export class ByteWriter {
  buf: Uint8Array;
  n = 0;
  /** `alloc`: where its buffers come from (room carved from a bigger one), when not arrays of their own. */
  constructor(
    cap = 256,
    private readonly alloc: (n: number) => Uint8Array = (n) => new Uint8Array(n),
  ) {
    this.buf = alloc(cap);
  }
  private grow(need: number): void {
    let cap = this.buf.length * 2;
    while (cap < this.n + need) cap *= 2;
    const b = this.alloc(cap);
    b.set(this.buf.subarray(0, this.n));
    this.buf = b;
  }
  varint(v: number): void {
    if (this.n + 5 > this.buf.length) this.grow(5);
    while (v >= 0x80) {
      this.buf[this.n++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    this.buf[this.n++] = v;
  }
  bytes(b: Uint8Array): void {
    if (this.n + b.length > this.buf.length) this.grow(b.length);
    this.buf.set(b, this.n);
    this.n += b.length;
  }
  /**
   * `s` as UTF-8 (at most 3 bytes per UTF-16 unit), as TextEncoder writes it (a lone surrogate as
   * U+FFFD). Encoded here rather than by `encodeInto`, which needs a view of the buffer per call:
   * saving the dictionary writes ~150k short strings at 10k notes.
   */
  text(s: string): void {
    if (this.n + s.length * 3 > this.buf.length) this.grow(s.length * 3);
    const b = this.buf;
    let n = this.n;
    for (let i = 0; i < s.length; i++) {
      let c = s.charCodeAt(i);
      if (c < 0x80) {
        b[n++] = c;
        continue;
      }
      if (c < 0x800) {
        b[n++] = 0xc0 | (c >> 6);
        b[n++] = 0x80 | (c & 0x3f);
        continue;
      }
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          // A surrogate pair: 4 bytes, in the room its two units reserved (6).
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
          b[n++] = 0xf0 | (c >> 18);
          b[n++] = 0x80 | ((c >> 12) & 0x3f);
          b[n++] = 0x80 | ((c >> 6) & 0x3f);
          b[n++] = 0x80 | (c & 0x3f);
          continue;
        }
        c = 0xfffd;
      }
      b[n++] = 0xe0 | (c >> 12);
      b[n++] = 0x80 | ((c >> 6) & 0x3f);
      b[n++] = 0x80 | (c & 0x3f);
    }
    this.n = n;
  }
  byte(b: number): void {
    if (this.n + 1 > this.buf.length) this.grow(1);
    this.buf[this.n++] = b;
  }
  result(): Uint8Array {
    return this.buf.slice(0, this.n);
  }
  /** The bytes written so far, as a view (valid until the next write or reset). */
  view(): Uint8Array {
    return this.buf.subarray(0, this.n);
  }
  reset(): void {
    this.n = 0;
  }
}

/** Reads unsigned varints. */
export class VarintReader {
  private p = 0;
  constructor(private readonly b: Uint8Array) {}
  done(): boolean {
    return this.p >= this.b.length;
  }
  next(): number {
    const b = this.b;
    let v = 0;
    let shift = 0;
    for (;;) {
      if (this.p >= b.length) throw new Error("postings truncated");
      const x = b[this.p++];
      if (shift < 28) v |= (x & 0x7f) << shift;
      else v += (x & 0x7f) * 2 ** shift;
      if (x < 0x80) return v >>> 0;
      shift += 7;
    }
  }
}

/**
 * Decodes `n` postings (zigzag chunk-id delta, tf; varints) from `src` at `pos` into `ids` and `tfs`
 * (the tf's one-byte code, see `tfCode`) at `o`.
 * Returns the position after them, or -1 when the bytes run out, a varint is longer than 28 bits (no
 * chunk id or tf is that large) or a posting names a chunk that `owner` does not tag with `tag`.
 * One tight loop: every posting loaded from disk is decoded here, when its list is first used.
 */
export function decodePostings(src: Uint8Array, pos: number, n: number, ids: Int32Array, tfs: Uint8Array, o: number, owner: Uint16Array, tag: number): number {
  const end = src.length;
  let id = 0;
  for (let i = 0; i < n; i++) {
    if (pos >= end) return -1;
    let x = src[pos++];
    let v = x & 0x7f;
    for (let shift = 7; x >= 0x80; shift += 7) {
      if (pos >= end || shift > 21) return -1;
      x = src[pos++];
      v |= (x & 0x7f) << shift;
    }
    id += (v >>> 1) ^ -(v & 1);
    if (owner[id] !== tag) return -1;
    if (pos >= end) return -1;
    x = src[pos++];
    v = x & 0x7f;
    for (let shift = 7; x >= 0x80; shift += 7) {
      if (pos >= end || shift > 21) return -1;
      x = src[pos++];
      v |= (x & 0x7f) << shift;
    }
    ids[o] = id;
    tfs[o++] = v <= TF_EXACT ? v : tfCode(v);
  }
  return pos;
}

/** Zigzag: signed deltas as unsigned varints. */
export const zig = (v: number): number => (v >= 0 ? v * 2 : -v * 2 - 1);
export const unzig = (v: number): number => (v % 2 === 0 ? v / 2 : -(v + 1) / 2);
