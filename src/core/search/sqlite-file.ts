/**
 * Reads and writes one table of an SQLite database file straight from and into its bytes (the
 * documented file format: https://www.sqlite.org/fileformat2.html), without starting SQLite.
 *
 * The index's files are such databases: a `blobs(name TEXT, data BLOB)` table (`writeBlobs`; files
 * saved through sql.js by earlier versions declare `name TEXT PRIMARY KEY`, and read the same).
 * Through sql.js, reading copied every byte several times (into its in-memory file system, page by
 * page into SQLite's cache, into a result buffer, out of WebAssembly memory) and, in a fresh process,
 * ran SQLite's read path before V8 had optimised it: ~120 ms for a 10k-note index's 17 MB; writing
 * was the same copies the other way (~300 ms for a full save of 40 MB). Here each value is copied
 * once: read from the file's pages (the table's b-tree walked from its root page, each row's record
 * decoded, values longer than a page gathered from their overflow pages), or written into one buffer
 * the size of the file (`writeKeyValueTable`).
 *
 * Anything unexpected while reading (bad header, a page out of range or visited twice, a record that
 * is not two text/blob columns, truncated data) throws `SqliteFileError`: the caller then reads the
 * file with sql.js, which decides whether it is a database at all.
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
    if (size > this.pages * this.usable) fail("a row longer than the file");
    const local = localPayload(size, this.usable);
    const end = r.at + local;
    if (end + (local < size ? 4 : 0) > pageEnd) fail("cell runs past its page");
    return new Payload(this, size, r.at, local, local < size ? this.u32(end) : 0);
  }
}

/**
 * How many bytes of a table leaf cell's payload of `size` bytes stay on its page (the rest goes to
 * overflow pages), for pages of `U` usable bytes: the file format's rule, shared by reader and writer.
 */
function localPayload(size: number, U: number): number {
  const X = U - 35;
  if (size <= X) return size;
  const M = Math.floor(((U - 12) * 32) / 255) - 23;
  const K = M + ((size - M) % (U - 4));
  return K <= X ? K : M;
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

  /** Bytes [a, b) of the payload, as a fresh array, or in `into` (of length b − a) when given. */
  bytes(a: number, b: number, into?: Uint8Array): Uint8Array {
    if (a < 0 || b > this.size || a > b) fail("value past its record");
    const f = this.f;
    if (b <= this.local) {
      if (!into) return f.b.slice(this.localAt + a, this.localAt + b);
      into.set(f.b.subarray(this.localAt + a, this.localAt + b));
      return into;
    }
    const out = into ?? new Uint8Array(b - a);
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
const utf8e = new TextEncoder();

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
 * Where a value of `size` bytes read for `key` goes: an array of exactly that length (the caller's
 * buffer, e.g. carved from a big one), or undefined for a fresh array of its own.
 */
export type BlobRoom = (key: string, size: number) => Uint8Array | undefined;

/**
 * The rows of `table` (a table of two columns, a text key and a blob or text value) as key → value
 * bytes; only the keys in `want`, when given. Throws `SqliteFileError` on anything unexpected.
 */
export function readKeyValueTable(bytes: Uint8Array, table: string, want?: ReadonlySet<string>, room?: BlobRoom): Map<string, Uint8Array> {
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
    const into = v.type === 0 || !room ? undefined : room(key, v.len);
    if (into && into.length !== v.len) fail("a value's room has the wrong size");
    out.set(key, v.type === 0 ? new Uint8Array(0) : p.bytes(v.at, v.at + v.len, into));
  });
  return out;
}

// ---- writing ----

/** The SQLite version recorded in a written file's header (informational: any SQLite 3 reads the file). */
const WRITER_VERSION = 3049001;

function putU16(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 8;
  b[at + 1] = v & 0xff;
}

function putU32(b: Uint8Array, at: number, v: number): void {
  b[at] = v >>> 24;
  b[at + 1] = (v >>> 16) & 0xff;
  b[at + 2] = (v >>> 8) & 0xff;
  b[at + 3] = v & 0xff;
}

function varintLength(v: number): number {
  let n = 1;
  while (v >= 128 && n < 9) {
    v = Math.floor(v / 128);
    n++;
  }
  return n;
}

/** Writes `v` (a non-negative safe integer below 2^56) as an SQLite varint at `at`; returns the end. */
function putVarint(b: Uint8Array, at: number, v: number): number {
  const n = varintLength(v);
  for (let i = n - 1; i >= 0; i--) {
    b[at + i] = (v % 128) | (i === n - 1 ? 0 : 0x80);
    v = Math.floor(v / 128);
  }
  return at + n;
}

/** One row's record: its header (size, serial types) and its values, as parts to copy. */
class RecordOut {
  /** The header, then the values. */
  private readonly parts: Uint8Array[];
  readonly size: number;
  constructor(values: Uint8Array[], serialTypes: number[]) {
    let hlen = 1;
    for (const t of serialTypes) hlen += varintLength(t);
    if (hlen >= 128) throw new Error("record header too long");
    const header = new Uint8Array(hlen);
    let at = putVarint(header, 0, hlen);
    for (const t of serialTypes) at = putVarint(header, at, t);
    this.parts = [header, ...values];
    this.size = values.reduce((s, v) => s + v.length, hlen);
  }

  /** Copies payload bytes [a, a + len) into `out` at `o`. */
  copy(a: number, len: number, out: Uint8Array, o: number): void {
    let pos = 0;
    for (const part of this.parts) {
      const end = pos + part.length;
      if (end > a) {
        const from = Math.max(a, pos) - pos;
        const to = Math.min(a + len, end) - pos;
        if (from < to) out.set(part.subarray(from, to), o + (pos + from - a));
      }
      pos = end;
      if (pos >= a + len) break;
    }
  }
}

/** A leaf cell as laid out: its record, rowid, bytes kept on the b-tree page, and its overflow pages. */
type CellOut = { rec: RecordOut; rowid: number; local: number; cellSize: number; overflowPages: number; firstOverflow: number };

/** A b-tree page to write: a leaf (cells) or an interior page (children, each with its largest rowid). */
type TreePage = { page: number; leaf: CellOut[] | null; children: TreePage[]; maxRowid: number };

/**
 * An SQLite database file holding one table, `CREATE TABLE <table>(name TEXT, data BLOB)`, with a row
 * per entry of `rows` (rowids 1, 2, … in order), laid out directly in the documented file format:
 * page 1 (the header and the schema table), page 2 (the table's root), its other b-tree pages, then
 * the overflow pages of values longer than a page. One allocation, the size of the file; each value
 * is copied once. SQLite (sql.js in the tests) reads it and finds it sound (`PRAGMA integrity_check`).
 */
export function writeKeyValueTable(table: string, rows: Iterable<[string, Uint8Array]>, pageSize = 4096, room?: (size: number) => Uint8Array | undefined): Uint8Array {
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(table)) throw new Error(`bad table name ${table}`);
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) throw new Error(`bad page size ${pageSize}`);
  const U = pageSize;
  const perOverflow = U - 4;

  const cell = (rec: RecordOut, rowid: number): CellOut => {
    const P = rec.size;
    const local = localPayload(P, U);
    const overflowPages = Math.ceil((P - local) / perOverflow);
    const cellSize = varintLength(P) + varintLength(rowid) + local + (overflowPages > 0 ? 4 : 0);
    return { rec, rowid, local, cellSize, overflowPages, firstOverflow: 0 };
  };

  // The table's rows, packed into leaves in rowid order.
  const cells: CellOut[] = [];
  let rowid = 0;
  for (const [name, data] of rows) {
    const key = utf8e.encode(name);
    cells.push(cell(new RecordOut([key, data], [key.length * 2 + 13, data.length * 2 + 12]), ++rowid));
  }
  let level: TreePage[] = [];
  let current: CellOut[] = [];
  let used = 8; // a leaf's header
  for (const c of cells) {
    if (current.length > 0 && used + c.cellSize + 2 > U) {
      level.push({ page: 0, leaf: current, children: [], maxRowid: current[current.length - 1].rowid });
      current = [];
      used = 8;
    }
    current.push(c);
    used += c.cellSize + 2;
  }
  level.push({ page: 0, leaf: current, children: [], maxRowid: current.length ? current[current.length - 1].rowid : 0 });
  // Interior levels until one page holds them all: each child but the right-most is a cell (its page
  // number and largest rowid); the right-most is in the page's header.
  const cellCost = (child: TreePage) => 4 + varintLength(child.maxRowid) + 2;
  while (level.length > 1) {
    const up: TreePage[] = [];
    let children: TreePage[] = [];
    used = 12; // an interior page's header
    for (const child of level) {
      // Adding a child turns the current right-most one into a cell.
      if (children.length > 0) {
        const grow = cellCost(children[children.length - 1]);
        if (used + grow > U) {
          up.push({ page: 0, leaf: null, children, maxRowid: children[children.length - 1].maxRowid });
          children = [];
          used = 12;
        } else used += grow;
      }
      children.push(child);
    }
    // No interior page with a single child: the last takes one from the page before (which is full,
    // so has many, and the one taken costs the last page a single cell).
    if (children.length === 1 && up.length > 0) {
      const prev = up[up.length - 1];
      children.unshift(prev.children.pop()!);
      prev.maxRowid = prev.children[prev.children.length - 1].maxRowid;
    }
    up.push({ page: 0, leaf: null, children, maxRowid: children[children.length - 1].maxRowid });
    level = up;
  }
  const root = level[0];

  // Page numbers: 1 the schema, 2 the root, then the rest of the tree breadth first, then overflow.
  let pages = 1;
  const tree: TreePage[] = [];
  const queue = [root];
  for (let i = 0; i < queue.length; i++) {
    const p = queue[i];
    p.page = ++pages;
    tree.push(p);
    for (const c of p.children) queue.push(c);
  }
  for (const c of cells) {
    if (c.overflowPages === 0) continue;
    c.firstOverflow = pages + 1;
    pages += c.overflowPages;
  }

  // In the caller's room (zeroed: it may be reused space), or an array of its own.
  const given = room?.(pages * U);
  if (given && given.length !== pages * U) throw new Error("the room for a file has the wrong size");
  const out = given ? given.fill(0) : new Uint8Array(pages * U);
  const at = (n: number) => (n - 1) * U;

  // Page 1: the database header, then the schema table's only leaf with the table's row.
  out.set(utf8e.encode(MAGIC), 0);
  putU16(out, 16, U === 65536 ? 1 : U);
  out[18] = 1; // legacy (rollback-journal) file format
  out[19] = 1;
  out[20] = 0; // no reserved bytes per page
  out[21] = 64; // payload fractions, fixed by the format
  out[22] = 32;
  out[23] = 32;
  putU32(out, 24, 1); // file change counter
  putU32(out, 28, pages); // the size in pages (valid: 92 equals 24)
  putU32(out, 40, 1); // schema cookie
  putU32(out, 44, 4); // schema format
  putU32(out, 56, 1); // UTF-8
  putU32(out, 92, 1);
  putU32(out, 96, WRITER_VERSION);
  const sql = utf8e.encode(`CREATE TABLE ${table}(name TEXT, data BLOB)`);
  const tname = utf8e.encode(table);
  const kind = utf8e.encode("table");
  const text = (b: Uint8Array) => b.length * 2 + 13;
  const schemaRow = new RecordOut([kind, tname, tname, Uint8Array.of(2), sql], [text(kind), text(tname), text(tname), 1, text(sql)]);
  const schemaCell = cell(schemaRow, 1);
  if (schemaCell.overflowPages > 0 || 100 + 8 + 2 + schemaCell.cellSize > U) throw new Error("table name too long");
  writeLeaf(out, 0, 100, [schemaCell], U);

  for (const p of tree) {
    if (p.leaf) writeLeaf(out, at(p.page), 0, p.leaf, U);
    else writeInterior(out, at(p.page), p.children, U);
  }

  // Overflow chains: each page links to the next (0 ends the chain), then carries U − 4 bytes.
  for (const c of cells) {
    let from = c.local;
    for (let i = 0; i < c.overflowPages; i++) {
      const n = c.firstOverflow + i;
      const base = at(n);
      putU32(out, base, i + 1 < c.overflowPages ? n + 1 : 0);
      const len = Math.min(perOverflow, c.rec.size - from);
      c.rec.copy(from, len, out, base + 4);
      from += len;
    }
  }
  return out;
}

/** A table leaf page at `base` (its b-tree header at `base + headerAt`): cells packed from the page's end. */
function writeLeaf(out: Uint8Array, base: number, headerAt: number, cells: CellOut[], U: number): void {
  const h = base + headerAt;
  let content = U;
  for (let i = 0; i < cells.length; i++) {
    const c = cells[i];
    content -= c.cellSize;
    putU16(out, h + 8 + 2 * i, content);
    let p = putVarint(out, base + content, c.rec.size);
    p = putVarint(out, p, c.rowid);
    c.rec.copy(0, c.local, out, p);
    if (c.overflowPages > 0) putU32(out, p + c.local, c.firstOverflow);
  }
  out[h] = LEAF_TABLE;
  putU16(out, h + 3, cells.length);
  putU16(out, h + 5, content === 65536 ? 0 : content);
}

/** A table interior page at `base`: a cell (child page, its largest rowid) per child but the last, which is the right-most pointer. */
function writeInterior(out: Uint8Array, base: number, children: TreePage[], U: number): void {
  let content = U;
  for (let i = 0; i < children.length - 1; i++) {
    const c = children[i];
    content -= 4 + varintLength(c.maxRowid);
    putU16(out, base + 12 + 2 * i, content);
    putU32(out, base + content, c.page);
    putVarint(out, base + content + 4, c.maxRowid);
  }
  out[base] = INTERIOR_TABLE;
  putU16(out, base + 3, children.length - 1);
  putU16(out, base + 5, content === 65536 ? 0 : content);
  putU32(out, base + 8, children[children.length - 1].page);
}
