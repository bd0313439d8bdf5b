/**
 * Reads one table's rows straight from the bytes of an SQLite database file (the documented file
 * format: https://www.sqlite.org/fileformat2.html), without starting SQLite.
 *
 * The index's files are written by sql.js (`writeBlobs`: a `blobs(name TEXT PRIMARY KEY, data BLOB)`
 * table). Reading them back through sql.js copies every byte several times (into its in-memory file
 * system, page by page into SQLite's cache, into a result buffer, out of WebAssembly memory) and, in
 * a fresh process, runs SQLite's read path before V8 has optimised it: ~120 ms for a 10k-note index's
 * 17 MB. Here each value is copied once, straight from the file's pages: the table's b-tree is
 * walked from its root page, each row's record decoded, and values longer than a page gathered from
 * their overflow pages.
 *
 * Anything unexpected (bad header, a page out of range or visited twice, a record that is not two
 * text/blob columns, truncated data) throws `SqliteFileError`: the caller then reads the file with
 * sql.js, which decides whether it is a database at all.
 */

export class SqliteFileError extends Error {}

const MAGIC = "SQLite format 3\0";
const LEAF_TABLE = 13;
const INTERIOR_TABLE = 5;

function fail(why: string): never {
  throw new SqliteFileError(`not a readable SQLite file: ${why}`);
}

class File {
  readonly pageSize: number;
  /** Usable bytes per page (the page size less the reserved bytes at each page's end). */
  readonly usable: number;
  readonly pages: number;
  /** B-tree pages walked so far: a page met twice is a loop. (Overflow chains end by length.) */
  private readonly seen: Uint8Array;

  constructor(readonly b: Uint8Array) {
    if (b.length < 512) fail("too short");
    for (let i = 0; i < MAGIC.length; i++) if (b[i] !== MAGIC.charCodeAt(i)) fail("no SQLite header");
    const ps = (b[16] << 8) | b[17];
    this.pageSize = ps === 1 ? 65536 : ps;
    if (this.pageSize < 512 || (this.pageSize & (this.pageSize - 1)) !== 0) fail("bad page size");
    this.usable = this.pageSize - b[20];
    if (this.usable < 480) fail("bad reserved space");
    if (b.length % this.pageSize !== 0) fail("length is not a whole number of pages");
    this.pages = b.length / this.pageSize;
    const encoding = this.u32(56);
    if (encoding !== 0 && encoding !== 1) fail("text is not UTF-8");
    this.seen = new Uint8Array(this.pages + 1);
  }

  u16(at: number): number {
    return (this.b[at] << 8) | this.b[at + 1];
  }

  u32(at: number): number {
    return ((this.b[at] << 24) >>> 0) + ((this.b[at + 1] << 16) | (this.b[at + 2] << 8) | this.b[at + 3]);
  }

  /** Byte offset of page `n` (1-based), checked. */
  page(n: number): number {
    if (!Number.isInteger(n) || n < 1 || n > this.pages) fail(`page ${n} out of range`);
    return (n - 1) * this.pageSize;
  }

  /** `page(n)` of a b-tree page, which the walk must meet only once (else a loop). */
  treePage(n: number): number {
    const at = this.page(n);
    if (this.seen[n]) fail(`page ${n} reached twice`);
    this.seen[n] = 1;
    return at;
  }

  /** Calls `row(payload)` for each row of the table b-tree rooted at page `root`, in rowid order. */
  eachRow(root: number, row: (p: Payload) => void): void {
    const stack = [root];
    while (stack.length > 0) {
      const n = stack.pop()!;
      const base = this.treePage(n);
      const h = n === 1 ? base + 100 : base;
      const type = this.b[h];
      const cells = this.u16(h + 3);
      if (type === INTERIOR_TABLE) {
        const ptrs = h + 12;
        if (ptrs + 2 * cells > base + this.usable) fail("cell pointers past the page");
        // Children left to right: push the right-most first.
        stack.push(this.u32(h + 8));
        for (let i = cells - 1; i >= 0; i--) {
          const c = base + this.u16(ptrs + 2 * i);
          if (c < ptrs || c + 4 > base + this.usable) fail("cell out of its page");
          stack.push(this.u32(c));
        }
      } else if (type === LEAF_TABLE) {
        const ptrs = h + 8;
        if (ptrs + 2 * cells > base + this.usable) fail("cell pointers past the page");
        for (let i = 0; i < cells; i++) {
          const c = base + this.u16(ptrs + 2 * i);
          if (c < ptrs || c >= base + this.usable) fail("cell out of its page");
          row(this.payload(c, base + this.usable));
        }
      } else fail(`page ${n} is not a table page (type ${type})`);
    }
  }

  /** A leaf cell's payload: its local part, and where the rest continues. */
  private payload(cell: number, pageEnd: number): Payload {
    const r = { at: cell };
    const size = varint(this.b, r, pageEnd);
    varint(this.b, r, pageEnd); // rowid
    const U = this.usable;
    if (size > this.pages * U) fail("a row longer than the file");
    const X = U - 35;
    let local = size;
    if (size > X) {
      const M = Math.floor(((U - 12) * 32) / 255) - 23;
      const K = M + ((size - M) % (U - 4));
      local = K <= X ? K : M;
    }
    const end = r.at + local;
    if (end + (local < size ? 4 : 0) > pageEnd) fail("cell runs past its page");
    return new Payload(this, size, r.at, local, local < size ? this.u32(end) : 0);
  }
}

/** A row's record bytes, read on demand from the cell's local part and its overflow pages. */
class Payload {
  constructor(
    private readonly f: File,
    readonly size: number,
    private readonly localAt: number,
    private readonly local: number,
    private readonly overflow: number,
  ) {}

  /** Bytes [a, b) of the payload, as a fresh array. */
  bytes(a: number, b: number): Uint8Array {
    if (a < 0 || b > this.size || a > b) fail("value past its record");
    const f = this.f;
    if (b <= this.local) return f.b.slice(this.localAt + a, this.localAt + b);
    const out = new Uint8Array(b - a);
    let o = 0;
    if (a < this.local) {
      out.set(f.b.subarray(this.localAt + a, this.localAt + this.local), 0);
      o = this.local - a;
    }
    // Overflow pages: a 4-byte link to the next one, then usable − 4 bytes of payload each. The
    // chain is followed only as far as the payload's length reaches (a looping chain ends there).
    const per = f.usable - 4;
    let at = this.local; // payload offset where the current overflow page starts
    let next = this.overflow;
    while (at < b) {
      if (next === 0) fail("overflow chain ends early");
      const base = f.page(next);
      next = f.u32(base);
      const from = Math.max(a, at);
      const to = Math.min(b, at + per);
      if (from < to) {
        out.set(f.b.subarray(base + 4 + (from - at), base + 4 + (to - at)), o);
        o += to - from;
      }
      at += per;
    }
    return out;
  }
}

/** An SQLite varint (big-endian, 7 bits a byte, the ninth byte whole) at `r.at`, advancing it. */
function varint(b: Uint8Array, r: { at: number }, end: number): number {
  let v = 0;
  for (let i = 0; i < 9; i++) {
    if (r.at >= end) fail("varint past its page");
    const x = b[r.at++];
    if (i === 8) return v * 256 + x;
    v = v * 128 + (x & 0x7f);
    if (x < 0x80) return v;
  }
  return v;
}

/** A record's columns: serial type and payload offset of each. */
function columns(p: Payload): { type: number; at: number; len: number }[] {
  // The header is short (two columns here): read up to its first 64 bytes.
  const head = p.bytes(0, Math.min(p.size, 64));
  const r = { at: 0 };
  const hsize = varint(head, r, head.length);
  if (hsize > head.length || hsize < 1) fail("record header too long");
  const out: { type: number; at: number; len: number }[] = [];
  let at = hsize;
  while (r.at < hsize) {
    const type = varint(head, r, hsize);
    let len: number;
    if (type >= 12) len = (type - (type % 2 === 0 ? 12 : 13)) / 2;
    else if (type === 10 || type === 11) fail("reserved serial type");
    else len = FIXED_SIZES[type];
    out.push({ type, at, len });
    at += len;
  }
  if (at > p.size) fail("record longer than its payload");
  return out;
}

/** Bytes of serial types 0–9 (NULL, integers of 1–8 bytes, a float, the constants 0 and 1). */
const FIXED_SIZES = [0, 1, 2, 3, 4, 6, 8, 8, 0, 0];

const utf8 = new TextDecoder("utf-8", { fatal: false });

function textOf(p: Payload, c: { type: number; at: number; len: number }): string {
  if (c.type < 13 || c.type % 2 === 0) fail("expected a text column");
  return utf8.decode(p.bytes(c.at, c.at + c.len));
}

function intOf(p: Payload, c: { type: number; at: number; len: number }): number {
  if (c.type === 8) return 0;
  if (c.type === 9) return 1;
  if (c.type < 1 || c.type > 6) fail("expected an integer column");
  const b = p.bytes(c.at, c.at + c.len);
  let v = b[0] & 0x80 ? -1 : 0;
  for (const x of b) v = v * 256 + x;
  return v;
}

/**
 * The rows of `table` (a table of two columns, a text key and a blob or text value) as key → value
 * bytes; only the keys in `want`, when given. Throws `SqliteFileError` on anything unexpected.
 */
export function readKeyValueTable(bytes: Uint8Array, table: string, want?: ReadonlySet<string>): Map<string, Uint8Array> {
  const f = new File(bytes);
  let root = 0;
  f.eachRow(1, (p) => {
    const c = columns(p);
    if (c.length !== 5) fail("unexpected schema table");
    if (textOf(p, c[0]) === "table" && textOf(p, c[1]) === table) root = intOf(p, c[3]);
  });
  if (root === 0) fail(`no table ${table}`);
  const out = new Map<string, Uint8Array>();
  f.eachRow(root, (p) => {
    const c = columns(p);
    if (c.length !== 2) fail("a row is not a key and a value");
    const key = textOf(p, c[0]);
    if (want && !want.has(key)) return;
    const v = c[1];
    if (v.type !== 0 && v.type < 12) fail("a value is not a blob or text");
    out.set(key, v.type === 0 ? new Uint8Array(0) : p.bytes(v.at, v.at + v.len));
  });
  return out;
}
