/**
 * The index's files: blobs written by our writer of the SQLite format (`writeBlobs`; see also
 * sqlite-write.test.ts) or, as older versions saved them, through sql.js, and read back from the
 * file's bytes by our own reader (`readBlobs` → `readKeyValueTable`), which must agree byte for
 * byte with what sql.js reads, for any page size and b-tree depth; and bytes that are not such a
 * file (junk, truncated, looping pages, flipped bytes) must throw or answer, never hang.
 */
import { describe, expect, test } from "@jest/globals";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import type { SqlJsStatic } from "sql.js";
import { loadSqlJs, readBlobs, readBlobsWithSqlJs, writeBlobs } from "../../src/core/search/db";
import { readKeyValueTable, SqliteFileError } from "../../src/core/search/sqlite-file";
import { bytes } from "../support/bytes";

const same = (a: Map<string, Uint8Array>, b: Map<string, Uint8Array>) => {
  expect([...a.keys()].sort()).toEqual([...b.keys()].sort());
  for (const [k, v] of b) expect(Buffer.from(a.get(k)!).equals(Buffer.from(v))).toBe(true);
};

/** A blobs table written with the given page size (optionally with auto-vacuum's pointer-map pages, and rows deleted). */
function customFile(SQL: SqlJsStatic, pageSize: number, rows: Record<string, Uint8Array | string>, opts: { autoVacuum?: boolean; deleteSome?: boolean } = {}): Uint8Array {
  const db = new SQL.Database();
  try {
    db.exec(`PRAGMA page_size=${pageSize};${opts.autoVacuum ? " PRAGMA auto_vacuum=FULL;" : ""}`);
    db.exec("CREATE TABLE blobs(name TEXT PRIMARY KEY, data BLOB);");
    const st = db.prepare("INSERT INTO blobs(name, data) VALUES (?, ?)");
    for (const [k, v] of Object.entries(rows)) {
      st.bind([k, v]);
      st.step();
      st.reset();
    }
    st.free();
    if (opts.deleteSome) db.exec("DELETE FROM blobs WHERE name LIKE '%3%'");
    return db.export();
  } finally {
    db.close();
  }
}

describe("index files (SQLite format, read without sql.js)", () => {
  const blobs: Record<string, Uint8Array> = {
    empty: new Uint8Array(0),
    one: bytes(1, 1),
    page: bytes(5000, 2), // spills into an overflow page
    large: bytes(3 * 1024 * 1024 + 17, 3), // a long overflow chain
    "naïve ключ 名前": bytes(300, 4), // a non-ASCII name
  };

  test("our reader and sql.js return the same blobs, all or only the named ones, from our files and from sql.js's", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    // Files as we write them, and as versions before our own writer saved them (through sql.js).
    for (const file of [writeBlobs(blobs), customFile(SQL, 4096, blobs)]) {
      const got = readBlobs(file);
      same(got, readBlobsWithSqlJs(SQL, file));
      same(got, new Map(Object.entries(blobs)));
      // Only the named rows (one name that does not exist).
      const some = readBlobs(file, ["page", "naïve ключ 名前", "missing"]);
      expect([...some.keys()].sort()).toEqual(["naïve ключ 名前", "page"]);
      same(some, readBlobsWithSqlJs(SQL, file, ["page", "naïve ключ 名前", "missing"]));
    }
  });

  test("any page size, deep b-trees, text values, deleted rows, auto-vacuum pages: as sql.js reads them", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    const rows: Record<string, Uint8Array | string> = {};
    for (let i = 0; i < 900; i++) rows[`row ${i} ${"k".repeat(i % 40)}`] = i % 5 === 0 ? `text value ${i} ${"é".repeat(i % 300)}` : bytes((i * 97) % 9000, i);
    rows.big = bytes(200_000, 9);
    for (const pageSize of [512, 1024, 4096, 65536]) {
      for (const opts of [{}, { deleteSome: true }, { autoVacuum: true, deleteSome: true }]) {
        const file = customFile(SQL, pageSize, rows, opts);
        expect(new DataView(file.buffer, file.byteOffset).getUint16(16)).toBe(pageSize === 65536 ? 1 : pageSize);
        same(readKeyValueTable(file, "blobs"), readBlobsWithSqlJs(SQL, file));
      }
    }
  });

  test("a blob is a copy: changing the file's bytes later does not change it", async () => {
    const file = writeBlobs({ small: bytes(100, 5), big: bytes(70000, 6) });
    const got = readBlobs(file);
    file.fill(0);
    expect(Buffer.from(got.get("small")!).equals(Buffer.from(bytes(100, 5)))).toBe(true);
    expect(Buffer.from(got.get("big")!).equals(Buffer.from(bytes(70000, 6)))).toBe(true);
  });

  test("bytes that are not such a file throw, with or without sql.js to fall back on", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    const junk = bytes(8192, 7);
    expect(() => readBlobs(junk)).toThrow(SqliteFileError);
    expect(() => readBlobs(junk, undefined, SQL)).toThrow();
    // A database without the blobs table.
    const db = new SQL.Database();
    db.exec("CREATE TABLE other(x)");
    const other = db.export();
    db.close();
    expect(() => readBlobs(other)).toThrow(/no table blobs/);
    expect(() => readBlobs(other, undefined, SQL)).toThrow();
    // A row whose stated length is larger than the whole file (a damaged length varint).
    const one = writeBlobs({ x: bytes(10, 8) });
    const huge = one.slice();
    const leaf = (readRoot(huge) - 1) * 4096;
    expect(huge[leaf]).toBe(13); // a table leaf, its one cell starting with the row's length
    huge.set([0xff, 0xff, 0xff, 0xff, 0x7f], leaf + new DataView(huge.buffer).getUint16(leaf + 8));
    expect(() => readKeyValueTable(huge, "blobs")).toThrow(/longer than the file/);
    // Truncated in the middle of an overflow chain.
    const file = writeBlobs(blobs);
    expect(() => readBlobs(file.subarray(0, file.length - 4096 * 10))).toThrow(SqliteFileError);
  });

  test("a page that points back into the tree is an error, not an endless loop", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    const rows: Record<string, Uint8Array> = {};
    for (let i = 0; i < 400; i++) rows[`r${i}`] = bytes(300, i);
    const file = customFile(SQL, 512, rows);
    // The table's root is an interior page: point its right-most child at itself.
    const root = readRoot(file);
    const at = (root - 1) * 512;
    expect(file[at]).toBe(5);
    new DataView(file.buffer, file.byteOffset).setUint32(at + 8, root);
    expect(() => readKeyValueTable(file, "blobs")).toThrow(/reached twice/);
  });

  test("flipped bytes anywhere: each read answers or throws its own error (no hang, no other exception)", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    const rows: Record<string, Uint8Array> = {};
    for (let i = 0; i < 60; i++) rows[`r${i}`] = bytes(50 + ((i * 331) % 6000), i);
    const good = customFile(SQL, 1024, rows);
    let seed = 11;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    let answered = 0;
    for (let round = 0; round < 300; round++) {
      const bad = good.slice();
      for (let k = 0; k < 1 + rnd(3); k++) bad[rnd(bad.length)] = rnd(256);
      let ours: Map<string, Uint8Array> | null = null;
      try {
        ours = readKeyValueTable(bad, "blobs");
      } catch (e) {
        expect(e).toBeInstanceOf(SqliteFileError);
      }
      if (ours) answered++;
    }
    expect(answered).toBeGreaterThan(0); // most flips land in blob bytes, which no format check can see
  });
});

/** The blobs table's root page, from the schema row on page 1 (the last cell of a one-page schema). */
function readRoot(file: Uint8Array): number {
  const text = Buffer.from(file.subarray(0, 4096)).toString("latin1");
  const i = text.indexOf("tableblobsblobs");
  expect(i).toBeGreaterThan(0);
  return file[i + "tableblobsblobs".length];
}
