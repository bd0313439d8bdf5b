/**
 * The index's sql.js files: blobs written by `writeBlobs` read back by `readBlobs`, through SQLite's
 * C API (one copy per blob) and through sql.js's own statements (the fallback when the raw API is
 * not available, e.g. sql.js was started elsewhere in the process first: it keeps its first module),
 * which must agree byte for byte.
 */
import { describe, expect, test } from "@jest/globals";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { loadSqlJs, rawReadsAvailable, readBlobs, writeBlobs } from "../../src/core/search/db";

function bytes(n: number, seed: number): Uint8Array {
  const out = new Uint8Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe("sql.js blob files", () => {
  const blobs: Record<string, Uint8Array> = {
    empty: new Uint8Array(0),
    one: bytes(1, 1),
    page: bytes(5000, 2), // spills into an overflow page
    large: bytes(3 * 1024 * 1024 + 17, 3), // a long overflow chain
    "naïve ключ 名前": bytes(300, 4), // a non-ASCII name
  };

  test("the raw read and sql.js's own read return the same blobs", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    expect(rawReadsAvailable(SQL)).toBe(true);
    const file = writeBlobs(SQL, blobs);
    for (const via of ["auto", "sql.js"] as const) {
      const got = readBlobs(SQL, file, undefined, via);
      expect([...got.keys()].sort()).toEqual(Object.keys(blobs).sort());
      for (const [name, data] of Object.entries(blobs)) expect(Buffer.from(got.get(name)!).equals(Buffer.from(data))).toBe(true);
      // Only the named rows (one name that does not exist).
      const some = readBlobs(SQL, file, ["page", "naïve ключ 名前", "missing"], via);
      expect([...some.keys()].sort()).toEqual(["naïve ключ 名前", "page"]);
      expect(Buffer.from(some.get("page")!).equals(Buffer.from(blobs.page))).toBe(true);
    }
  });

  test("a blob read raw is a copy: later reads do not change it", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    const a = readBlobs(SQL, writeBlobs(SQL, { x: bytes(70000, 5) })).get("x")!;
    readBlobs(SQL, writeBlobs(SQL, { x: bytes(70000, 6) }));
    expect(Buffer.from(a).equals(Buffer.from(bytes(70000, 5)))).toBe(true);
  });

  test("bytes that are not such a database throw, with either read", async () => {
    const SQL = await loadSqlJs(sqlWasm);
    const junk = bytes(8192, 7);
    expect(() => readBlobs(SQL, junk)).toThrow();
    expect(() => readBlobs(SQL, junk, undefined, "sql.js")).toThrow();
    // A database without the blobs table.
    const db = new SQL.Database();
    db.exec("CREATE TABLE other(x)");
    const other = db.export();
    db.close();
    expect(() => readBlobs(SQL, other)).toThrow(/prepare/);
    expect(() => readBlobs(SQL, other, undefined, "sql.js")).toThrow();
  });
});
