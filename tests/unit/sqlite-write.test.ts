/**
 * Our SQLite writer (`writeKeyValueTable`): the index's files are laid out directly in SQLite's file
 * format. SQLite itself (sql.js) must find every file sound (`PRAGMA integrity_check`), read back
 * exactly the rows written, in order, and be able to go on changing the file; our reader must agree.
 * Sizes are chosen at the format's edges: values that just fit on a page or just spill, overflow
 * chains ending exactly on a page, b-trees of one to four levels, every page size.
 */
import { beforeAll, describe, expect, test } from "@jest/globals";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import type { SqlJsStatic } from "sql.js";
import { loadSqlJs } from "../../src/core/search/db";
import { readKeyValueTable, writeKeyValueTable } from "../../src/core/search/sqlite-file";
import { bytes } from "../support/bytes";

let SQL: SqlJsStatic;
beforeAll(async () => {
  SQL = await loadSqlJs(sqlWasm);
});

/** What SQLite reads from the file: the integrity check and the rows in rowid order. */
function sqliteView(file: Uint8Array): { check: string; rows: [number, string, Uint8Array][]; sql: string } {
  const db = new SQL.Database(file);
  try {
    const check = db.exec("PRAGMA integrity_check")[0].values.map((r) => String(r[0])).join("; ");
    const rows: [number, string, Uint8Array][] = [];
    const st = db.prepare("SELECT rowid, name, data FROM blobs ORDER BY rowid");
    while (st.step()) {
      const [rowid, name, data] = st.get();
      rows.push([Number(rowid), String(name), data as Uint8Array]);
    }
    st.free();
    const sql = String(db.exec("SELECT sql FROM sqlite_schema WHERE name = 'blobs'")[0].values[0][0]);
    return { check, rows, sql };
  } finally {
    db.close();
  }
}

/** Writes `rows`, then checks SQLite's and our reader's view of the file against them. */
function roundTrip(rows: [string, Uint8Array][], pageSize?: number): Uint8Array {
  const file = writeKeyValueTable("blobs", rows, pageSize);
  expect(file.length % (pageSize ?? 4096)).toBe(0);
  const view = sqliteView(file);
  expect(view.check).toBe("ok");
  expect(view.sql).toBe("CREATE TABLE blobs(name TEXT, data BLOB)");
  expect(view.rows.length).toBe(rows.length);
  // Compared in bulk (a failing row is named): one expect per row is slow at 90,000 rows.
  const wrong = view.rows.findIndex(([rowid, name, data], i) => rowid !== i + 1 || name !== rows[i][0] || !Buffer.from(data ?? new Uint8Array(0)).equals(Buffer.from(rows[i][1])));
  expect(wrong === -1 ? "all rows as written" : `row ${wrong + 1} differs`).toBe("all rows as written");
  const ours = readKeyValueTable(file, "blobs");
  expect(ours.size).toBe(new Set(rows.map((r) => r[0])).size);
  const oursWrong = rows.find(([name, data]) => !Buffer.from(ours.get(name)!).equals(Buffer.from(data)));
  expect(oursWrong?.[0] ?? "none").toBe("none");
  return file;
}

/** The payload sizes where a cell's layout changes (all local, local K, local M; chains ending on a page's last byte). */
function edgeSizes(U: number): number[] {
  const X = U - 35;
  const M = Math.floor(((U - 12) * 32) / 255) - 23;
  const per = U - 4;
  // A payload is the record header (3 bytes here: its size and two serial types, short names and
  // values under 64 bytes use one byte each) plus the name (1 byte, "v") plus the value.
  const out = new Set<number>();
  for (const p of [X - 1, X, X + 1, X + 2, M + per, M + per + 1, M + 2 * per, M + 2 * per - 1, X + per, X + per + 1, M + per + (X - M), M + per + (X - M) + 1]) {
    for (const header of [3, 4, 5]) {
      const v = p - header - 1;
      if (v >= 0) out.add(v);
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** Levels of the table's b-tree (root on page 2), following right-most pointers down to a leaf. */
function treeDepth(file: Uint8Array, U: number): number {
  let page = 2;
  for (let depth = 1; ; depth++) {
    const at = (page - 1) * U;
    if (file[at] === 13) return depth;
    expect(file[at]).toBe(5);
    page = new DataView(file.buffer, file.byteOffset).getUint32(at + 8);
  }
}

describe("writeKeyValueTable: files SQLite reads as sound", () => {
  test("an empty table, empty values and names, non-ASCII names", () => {
    roundTrip([]);
    roundTrip([["", new Uint8Array(0)]]);
    roundTrip([
      ["empty", new Uint8Array(0)],
      ["naïve ключ 名前", bytes(300, 4)],
      ["one", bytes(1, 1)],
    ]);
  });

  for (const U of [512, 1024, 4096, 65536]) {
    test(`page size ${U}: values at every edge of a cell's layout, alone and together`, () => {
      const sizes = edgeSizes(U);
      expect(sizes.length).toBeGreaterThan(10);
      for (const n of sizes) roundTrip([["v", bytes(n, n)]], U);
      roundTrip(
        sizes.map((n, i) => [`v${i}`, bytes(n, i)]),
        U,
      );
    });
  }

  test("a multi-megabyte value (a long overflow chain) between small ones", () => {
    roundTrip(
      [
        ["key", new TextEncoder().encode("7/3/en/200")],
        ["postings", bytes(5 * 1024 * 1024 + 123, 9)],
        ["gen", new TextEncoder().encode("abc.1")],
      ],
      4096,
    );
  });

  test("many rows: b-trees of two, three and four levels", () => {
    const depths: number[] = [];
    for (const [count, size] of [
      [200, 40],
      [3000, 20],
      [90000, 4],
    ] as const) {
      const rows: [string, Uint8Array][] = [];
      for (let i = 0; i < count; i++) rows.push([`r${i}`, bytes(size + (i % 7), i)]);
      depths.push(treeDepth(roundTrip(rows, 512), 512));
    }
    expect(depths).toEqual([2, 3, 4]);
  });

  test("leaf counts that leave one child over for the last interior page (SQLite calls such a page malformed)", () => {
    // 300-byte values on 512-byte pages: one row per leaf, ~70 children per interior page.
    for (let n = 60; n <= 150; n++) {
      const rows: [string, Uint8Array][] = [];
      for (let i = 0; i < n; i++) rows.push([`r${i}`, bytes(300, i)]);
      roundTrip(rows, 512);
    }
  });

  test("random tables at random page sizes", () => {
    let seed = 5;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    for (let round = 0; round < 40; round++) {
      const U = [512, 1024, 2048, 4096][rnd(4)];
      const rows: [string, Uint8Array][] = [];
      const count = rnd(4) === 0 ? rnd(3000) : rnd(60);
      for (let i = 0; i < count; i++) rows.push([`row ${i} ${"x".repeat(rnd(30))}`, bytes(rnd(4) === 0 ? rnd(3 * U) : rnd(60), i)]);
      roundTrip(rows, U);
    }
  });

  test("SQLite can go on changing a file we wrote (insert, delete, vacuum) and it stays sound", () => {
    const rows: [string, Uint8Array][] = [];
    for (let i = 0; i < 50; i++) rows.push([`r${i}`, bytes(100 + i * 97, i)]);
    const db = new SQL.Database(writeKeyValueTable("blobs", rows));
    try {
      db.run("INSERT INTO blobs(name, data) VALUES (?, ?)", ["new", bytes(20000, 77)]);
      db.run("DELETE FROM blobs WHERE name IN ('r3', 'r17')");
      db.run("VACUUM");
      expect(db.exec("PRAGMA integrity_check")[0].values[0][0]).toBe("ok");
      expect(db.exec("SELECT count(*) FROM blobs")[0].values[0][0]).toBe(49);
      const back = readKeyValueTable(db.export(), "blobs");
      expect(Buffer.from(back.get("new")!).equals(Buffer.from(bytes(20000, 77)))).toBe(true);
      expect(back.has("r3")).toBe(false);
    } finally {
      db.close();
    }
  });

  test("rejects a table name that is not a plain identifier, and a bad page size", () => {
    expect(() => writeKeyValueTable("blobs; DROP", [])).toThrow(/table name/);
    expect(() => writeKeyValueTable("blobs", [], 3000)).toThrow(/page size/);
  });
});
