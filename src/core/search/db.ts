import initSqlJs, { type Database, type SqlJsStatic } from "sql.js";

/**
 * Bump when the stored form changes: an older index is rebuilt once.
 *
 * Layout (v5): the index is sharded into several small sql.js databases, each written atomically
 * through the StateStore (temp file + rename): a main file (`search-index.sqlite`: format key,
 * segment count, term dictionary, skipped notes) and two files per segment: `search-index-NN.sqlite`
 * (its notes as JSON, their chunk numbers, a term header (term id, posting count), varint-coded
 * postings and term sequences, as blobs) and `search-index-NN-text.sqlite` (its chunk texts). Saving
 * after an edit exports only the segments that changed, each in short steps, instead of one large
 * database. v4: chunk numbers as varints instead of JSON; the term header lets loading lay out every
 * posting list first and decode each posting once. v5: each segment's chunk texts (more than half of
 * the bytes) are in a file of their own, loaded after the index is queryable (or when a search needs
 * them first); both files carry the same save stamp (`gen`), so texts from another save are never
 * used; 32 segments instead of 128. v6: the term header also gives each term's bytes of postings, so
 * loading leaves postings encoded and decodes each list on first use. v7: a segment's texts are
 * stored in rows of 64 KB (`t0`, `t1`, …), so a search reads only the rows its snippets need.
 */
export const SCHEMA_VERSION = 7;

const sqlCache = new WeakMap<Uint8Array, Promise<SqlJsStatic>>();
/** The WebAssembly memory of each sql.js instance we started (for `RawApi`). */
const memories = new WeakMap<SqlJsStatic, WebAssembly.Memory>();

/**
 * sql.js, initialised once per WASM buffer. We instantiate the module ourselves (Emscripten's
 * `instantiateWasm` hook) only to keep a handle on its memory: reading a blob through sql.js copies
 * it into JavaScript one byte at a time (~45 ms for a 10k-note index, ~100 ms before V8 has
 * optimised that loop); `readSteps` copies it in one `slice` instead.
 */
export function loadSqlJs(wasm: Uint8Array): Promise<SqlJsStatic> {
  let p = sqlCache.get(wasm);
  if (!p) {
    p = new Promise<SqlJsStatic>((resolve, reject) => {
      let memory: WebAssembly.Memory | undefined;
      initSqlJs({
        wasmBinary: wasm,
        instantiateWasm: (imports, done) => {
          WebAssembly.instantiate(wasm as BufferSource, imports).then(({ instance, module }) => {
            memory = Object.values(instance.exports).find((x): x is WebAssembly.Memory => x instanceof WebAssembly.Memory);
            done(instance, module);
          }, reject);
          return {};
        },
      }).then((SQL) => {
        if (memory) memories.set(SQL, memory);
        resolve(SQL);
      }, reject);
    });
    sqlCache.set(wasm, p);
  }
  return p;
}

/** The few SQLite C functions sql.js exports, for reading blobs without its byte-by-byte copy. */
interface RawApi {
  memory: WebAssembly.Memory;
  stackSave(): number;
  stackAlloc(bytes: number): number;
  stackRestore(sp: number): void;
  stringToNewUTF8(s: string): number;
  UTF8ToString(ptr: number): string;
  _free(ptr: number): void;
  _sqlite3_prepare_v2(db: number, sql: number, bytes: number, stmtOut: number, tail: number): number;
  _sqlite3_bind_text(stmt: number, i: number, text: number, bytes: number, destructor: number): number;
  _sqlite3_step(stmt: number): number;
  _sqlite3_column_text(stmt: number, col: number): number;
  _sqlite3_column_blob(stmt: number, col: number): number;
  _sqlite3_column_bytes(stmt: number, col: number): number;
  _sqlite3_finalize(stmt: number): number;
}

const RAW_FUNCTIONS = ["stackSave", "stackAlloc", "stackRestore", "stringToNewUTF8", "UTF8ToString", "_free", "_sqlite3_prepare_v2", "_sqlite3_bind_text", "_sqlite3_step", "_sqlite3_column_text", "_sqlite3_column_blob", "_sqlite3_column_bytes", "_sqlite3_finalize"] as const;

/** Whether `readBlobs` reads through SQLite's C API on this sql.js (else through sql.js's statements). */
export function rawReadsAvailable(SQL: SqlJsStatic): boolean {
  const db = new SQL.Database();
  try {
    return rawApi(SQL, db) !== null;
  } finally {
    db.close();
  }
}

const rawApis = new WeakMap<SqlJsStatic, RawApi | null>();

/** The raw API and the open database's handle, when this sql.js build offers both (else sql.js's own path is used). */
function rawApi(SQL: SqlJsStatic, db: Database): { api: RawApi; handle: number } | null {
  let api = rawApis.get(SQL);
  if (api === undefined) {
    const memory = memories.get(SQL);
    const mod = SQL as unknown as Record<string, unknown>;
    api = memory && RAW_FUNCTIONS.every((f) => typeof mod[f] === "function") ? { ...(mod as unknown as RawApi), memory } : null;
    rawApis.set(SQL, api);
  }
  const handle = (db as unknown as { db?: unknown }).db;
  return api && typeof handle === "number" ? { api, handle } : null;
}

/**
 * Runs sql.js's write path once on a tiny database, one step per task. V8 compiles SQLite's
 * WebAssembly lazily, function by function: done inside the first real save, that compiling is one
 * ~35–45 ms pause; in these steps none is longer than ~15 ms.
 */
export async function warmUpWriter(SQL: SqlJsStatic, yieldNow: () => Promise<void>): Promise<void> {
  await runStepwise(writeSteps(SQL, { "warm-up": new Uint8Array(8192) }), yieldNow);
}

/** `readBlobs`, one step per task: for the first database read, while sql.js compiles its read path (see `warmUpWriter`). */
export function readBlobsStepwise(SQL: SqlJsStatic, bytes: Uint8Array, yieldNow: () => Promise<void>): Promise<Map<string, Uint8Array>> {
  return runStepwise(readSteps(SQL, bytes), yieldNow);
}

/** A fresh database holding `blobs` in a `blobs(name, data)` table, exported to bytes. */
export function writeBlobs(SQL: SqlJsStatic, blobs: Record<string, Uint8Array>): Uint8Array {
  return runAtOnce(writeSteps(SQL, blobs));
}

/**
 * The blobs of a database written by `writeBlobs` (only those named in `names`, when given: SQLite
 * then reads only their pages). Throws when the bytes are not such a database.
 */
export function readBlobs(SQL: SqlJsStatic, bytes: Uint8Array, names?: string[], via: "auto" | "sql.js" = "auto"): Map<string, Uint8Array> {
  return runAtOnce(readSteps(SQL, bytes, names, via));
}

/** Writes the blobs, pausing (yield) between opening, the schema, the rows and the export. */
function* writeSteps(SQL: SqlJsStatic, blobs: Record<string, Uint8Array>): Generator<void, Uint8Array> {
  const db = new SQL.Database();
  try {
    yield;
    db.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;");
    yield;
    db.exec("CREATE TABLE blobs(name TEXT PRIMARY KEY, data BLOB);");
    yield;
    const st = db.prepare("INSERT INTO blobs(name, data) VALUES (?, ?)");
    try {
      for (const [name, data] of Object.entries(blobs)) {
        st.bind([name, data]);
        st.step();
        st.reset();
      }
    } finally {
      st.free();
    }
    yield;
    return db.export();
  } finally {
    db.close();
  }
}

/** Reads the blobs, pausing (yield) after opening the database and after preparing the query. */
function* readSteps(SQL: SqlJsStatic, bytes: Uint8Array, names?: string[], via: "auto" | "sql.js" = "auto"): Generator<void, Map<string, Uint8Array>> {
  const db = new SQL.Database(bytes);
  try {
    yield;
    const out = new Map<string, Uint8Array>();
    const sql = names ? `SELECT name, data FROM blobs WHERE name IN (${names.map(() => "?").join(", ")})` : "SELECT name, data FROM blobs";
    const raw = via === "auto" ? rawApi(SQL, db) : null;
    if (raw) {
      yield* rawRead(raw.api, raw.handle, sql, names ?? [], out);
      return out;
    }
    const st = db.prepare(sql);
    try {
      if (names) st.bind(names);
      yield;
      while (st.step()) {
        const [name, data] = st.get();
        out.set(String(name), data instanceof Uint8Array ? data : new Uint8Array(0));
      }
    } finally {
      st.free();
    }
    return out;
  } finally {
    db.close();
  }
}

/** `readSteps`' query through SQLite's C API: each blob leaves WebAssembly memory in one copy. */
function* rawRead(api: RawApi, db: number, sql: string, params: string[], out: Map<string, Uint8Array>): Generator<void, void> {
  const SQLITE_ROW = 100;
  const SQLITE_DONE = 101;
  const SQLITE_TRANSIENT = -1;
  let stmt = 0;
  // Prepared and bound in one go: nothing on the stack or in malloc'd strings outlives this block
  // (another read may run while this one is paused).
  const sp = api.stackSave();
  const allocated: number[] = [];
  const cString = (s: string) => {
    const p = api.stringToNewUTF8(s);
    allocated.push(p);
    return p;
  };
  try {
    const stmtOut = api.stackAlloc(4);
    const rc = api._sqlite3_prepare_v2(db, cString(sql), -1, stmtOut, 0);
    stmt = new Int32Array(api.memory.buffer, stmtOut, 1)[0];
    if (rc !== 0 || !stmt) throw new Error(`SQLite could not prepare the query (code ${rc})`);
    params.forEach((p, i) => {
      const brc = api._sqlite3_bind_text(stmt, i + 1, cString(p), -1, SQLITE_TRANSIENT);
      if (brc !== 0) throw new Error(`SQLite could not bind a parameter (code ${brc})`);
    });
  } catch (e) {
    if (stmt) api._sqlite3_finalize(stmt);
    throw e;
  } finally {
    for (const p of allocated) api._free(p);
    api.stackRestore(sp);
  }
  try {
    yield;
    for (;;) {
      const src = api._sqlite3_step(stmt);
      if (src === SQLITE_DONE) break;
      if (src !== SQLITE_ROW) throw new Error(`SQLite could not read the database (code ${src})`);
      const name = api.UTF8ToString(api._sqlite3_column_text(stmt, 0));
      const ptr = api._sqlite3_column_blob(stmt, 1);
      const n = api._sqlite3_column_bytes(stmt, 1);
      // The memory may have grown (a new buffer) during the step: take the buffer now.
      out.set(name, n > 0 ? new Uint8Array(api.memory.buffer, ptr, n).slice() : new Uint8Array(0));
    }
  } finally {
    api._sqlite3_finalize(stmt);
  }
}

/** Runs steps to the end in one go. */
function runAtOnce<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** Runs steps to the end, one per task. */
async function runStepwise<T>(steps: Generator<void, T>, yieldNow: () => Promise<void>): Promise<T> {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await yieldNow();
  }
}

/** The name of segment `k`'s file next to the main file. */
export function segmentFileName(main: string, k: number): string {
  const base = main.replace(/\.sqlite$/, "");
  return `${base}-${String(k).padStart(2, "0")}.sqlite`;
}

/** The name of the file holding segment `k`'s chunk texts. */
export function segmentTextFileName(main: string, k: number): string {
  return segmentFileName(main, k).replace(/\.sqlite$/, "-text.sqlite");
}
