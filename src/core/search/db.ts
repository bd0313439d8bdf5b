/**
 * The index files' format: each a SQLite database with one `blobs(name, data)` table, written and read
 * by sqlite-file.ts (sql.js only as the fallback reader); names of the segments' files. No index logic.
 */
import initSqlJs, { type SqlJsStatic } from "sql.js";
import { type BlobRoom, readKeyValueTable, SqliteFileError, writeKeyValueTable } from "./sqlite-file";

/**
 * Bump when the stored form changes: an older index is rebuilt once.
 *
 * Layout (v9): the index is sharded into several small SQLite databases, each written atomically
 * through the StateStore (temp file + rename): a main file (`search-index.sqlite`: format key,
 * segment count, term dictionary, skipped notes) and one file per segment: `search-index-NN.sqlite`
 * (its notes as JSON, their chunk numbers, a term header (term id, posting count), varint-coded
 * postings and term sequences, as blobs). (v5–v8 also kept `search-index-NN-text.sqlite`, its chunk
 * texts.) Saving
 * after an edit exports only the segments that changed, each in short steps, instead of one large
 * database. v4: chunk numbers as varints instead of JSON; the term header lets loading lay out every
 * posting list first and decode each posting once. v5: each segment's chunk texts (more than half of
 * the bytes) are in a file of their own, loaded after the index is queryable (or when a search needs
 * them first); both files carry the same save stamp (`gen`), so texts from another save are never
 * used; 32 segments instead of 128. v6: the term header also gives each term's bytes of postings, so
 * loading leaves postings encoded and decodes each list on first use. v7: a segment's texts are
 * stored in rows of 64 KB (`t0`, `t1`, …), so a search reads only the rows its snippets need. v8:
 * each note keeps its title's and aliases' term ids (`ti`), so no search tokenizes titles. v9: no
 * chunk texts (no `-NN-text.sqlite` files, no text lengths in the chunk numbers): a hit's snippet is
 * cut from its note, read when it is found (keyword/sections.ts); an index saved before is rebuilt
 * once and its text files removed. v10: a note's frontmatter is saved as its JSON text (`f`), its
 * chunks' headings as one string (`hd`, joined by "\n", see DocEntry.headings), and its chunks
 * have consecutive ids (checked when loading).
 */
export const SCHEMA_VERSION = 10;

/**
 * The table of every index file: `name TEXT, data BLOB` (files saved before our own writer, by
 * sql.js, declare `name TEXT PRIMARY KEY`; both read the same).
 */
const TABLE = "blobs";

const utf8 = new TextEncoder();

const sqlCache = new WeakMap<Uint8Array, Promise<SqlJsStatic>>();

/** sql.js, initialised once per WASM buffer. */
export function loadSqlJs(wasm: Uint8Array): Promise<SqlJsStatic> {
  let p = sqlCache.get(wasm);
  if (!p) {
    p = initSqlJs({ wasmBinary: wasm });
    sqlCache.set(wasm, p);
  }
  return p;
}

/**
 * A database file holding `blobs` in a `blobs(name, data)` table, laid out by our own writer of the
 * SQLite format (`writeKeyValueTable`): one allocation the size of the file, each blob copied once.
 * (Through sql.js, a save copied every byte several times: into WebAssembly memory, into SQLite's
 * pages, into its in-memory file system, growing by doubling, and out again; at 10k notes ~300 ms of
 * a full save, and short-lived buffers several times its 40 MB, which set off major collections.)
 */
export function writeBlobs(blobs: Record<string, Uint8Array>, room?: (size: number) => Uint8Array | undefined): Uint8Array {
  return writeKeyValueTable(TABLE, Object.entries(blobs), undefined, room);
}

/**
 * The blobs of a database written by `writeBlobs` (only those named in `names`, when given), read
 * straight from the file's bytes (`readKeyValueTable`: one copy per blob, no SQLite). Only when that
 * reader cannot make sense of the file are the bytes handed to sql.js (`SQL`, when given), which
 * reads any valid database; bytes that are not such a database throw either way.
 */
export function readBlobs(bytes: Uint8Array, names?: string[], SQL?: SqlJsStatic | null, room?: BlobRoom): Map<string, Uint8Array> {
  try {
    return readKeyValueTable(bytes, TABLE, names ? new Set(names) : undefined, room);
  } catch (e) {
    if (!(e instanceof SqliteFileError) || !SQL) throw e;
    return readBlobsWithSqlJs(SQL, bytes, names);
  }
}

/** `readBlobs` through sql.js's statements (the fallback; tests check that both agree). */
export function readBlobsWithSqlJs(SQL: SqlJsStatic, bytes: Uint8Array, names?: string[]): Map<string, Uint8Array> {
  const db = new SQL.Database(bytes);
  try {
    const out = new Map<string, Uint8Array>();
    const st = db.prepare(names ? `SELECT name, data FROM ${TABLE} WHERE name IN (${names.map(() => "?").join(", ")})` : `SELECT name, data FROM ${TABLE}`);
    try {
      if (names) st.bind(names);
      while (st.step()) {
        const [name, data] = st.get();
        out.set(String(name), data instanceof Uint8Array ? data : typeof data === "string" ? utf8.encode(data) : new Uint8Array(0));
      }
    } finally {
      st.free();
    }
    return out;
  } finally {
    db.close();
  }
}

/** The name of segment `k`'s file next to the main file. */
export function segmentFileName(main: string, k: number): string {
  const base = main.replace(/\.sqlite$/, "");
  return `${base}-${String(k).padStart(2, "0")}.sqlite`;
}

/** The name of the file that held segment `k`'s chunk texts, before v9 (removed when such an index is found). */
export function segmentTextFileName(main: string, k: number): string {
  return segmentFileName(main, k).replace(/\.sqlite$/, "-text.sqlite");
}
