import initSqlJs, { type Database, type SqlJsStatic, type SqlValue, type Statement } from "sql.js";
import type { DocEntry, SerializedPostings, StoredChunk } from "./engine";

/** Bump when the tables change: an older file is rebuilt once. */
export const SCHEMA_VERSION = 2;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS docs(path TEXT PRIMARY KEY, mtime REAL, size INTEGER, hash TEXT, title TEXT, folder TEXT, fm TEXT, tags TEXT, chunks TEXT);
CREATE TABLE IF NOT EXISTS skipped(path TEXT PRIMARY KEY, mtime REAL, size INTEGER, reason TEXT);
CREATE TABLE IF NOT EXISTS chunks(id INTEGER PRIMARY KEY, heading TEXT, line_start INTEGER, line_end INTEGER, text TEXT, seq BLOB);
CREATE TABLE IF NOT EXISTS blobs(name TEXT PRIMARY KEY, data BLOB);
`;

export interface SkippedRow {
  path: string;
  mtime: number;
  size: number;
  reason: string;
}

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

/** The persistent side of the search index: a sql.js database holding documents, chunk texts and the serialized postings. */
export class SearchDb {
  private stmts = new Map<string, Statement>();

  private constructor(readonly db: Database) {}

  static create(SQL: SqlJsStatic, bytes: Uint8Array | null): SearchDb {
    const d = new SearchDb(new SQL.Database(bytes ?? undefined));
    d.db.exec("PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF;");
    if (!bytes) d.db.exec(SCHEMA);
    return d;
  }

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private run(sql: string, params: SqlValue[]): void {
    const s = this.stmt(sql);
    s.bind(params);
    s.step();
    s.reset();
  }

  getMeta(key: string): string | null {
    const s = this.stmt("SELECT value FROM meta WHERE key = ?");
    s.bind([key]);
    const v = s.step() ? (s.get()[0] as string | null) : null;
    s.reset();
    return v;
  }

  setMeta(key: string, value: string): void {
    this.run("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", [key, value]);
  }

  begin(): void {
    this.db.exec("BEGIN");
  }
  commit(): void {
    this.db.exec("COMMIT");
  }

  /** Replaces a document's row and chunks. */
  putDoc(doc: DocEntry, chunks: StoredChunk[], sequences: Uint8Array[], oldChunkIds: number[]): void {
    for (const id of oldChunkIds) this.run("DELETE FROM chunks WHERE id = ?", [id]);
    for (let i = 0; i < chunks.length; i++) {
      const c = chunks[i];
      this.run("INSERT OR REPLACE INTO chunks(id, heading, line_start, line_end, text, seq) VALUES (?, ?, ?, ?, ?, ?)", [
        doc.chunkIds[i],
        c.heading,
        c.lineStart,
        c.lineEnd,
        c.text,
        sequences[i],
      ]);
    }
    this.putDocRow(doc);
    this.run("DELETE FROM skipped WHERE path = ?", [doc.path]);
  }

  putDocRow(doc: DocEntry): void {
    this.run("INSERT OR REPLACE INTO docs(path, mtime, size, hash, title, folder, fm, tags, chunks) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [
      doc.path,
      doc.mtime,
      doc.size,
      doc.hash,
      doc.title,
      doc.folder,
      safeJson(doc.frontmatter),
      JSON.stringify(doc.tags),
      JSON.stringify([doc.chunkIds, doc.chunkLens]),
    ]);
  }

  removeDoc(path: string, chunkIds: number[]): void {
    for (const id of chunkIds) this.run("DELETE FROM chunks WHERE id = ?", [id]);
    this.run("DELETE FROM docs WHERE path = ?", [path]);
  }

  putSkipped(row: SkippedRow): void {
    this.run("INSERT OR REPLACE INTO skipped(path, mtime, size, reason) VALUES (?, ?, ?, ?)", [row.path, row.mtime, row.size, row.reason]);
  }

  removeSkipped(path: string): void {
    this.run("DELETE FROM skipped WHERE path = ?", [path]);
  }

  chunk(id: number): StoredChunk | null {
    const s = this.stmt("SELECT heading, line_start, line_end, text FROM chunks WHERE id = ?");
    s.bind([id]);
    let out: StoredChunk | null = null;
    if (s.step()) {
      const r = s.get();
      out = { heading: r[0] as string, lineStart: r[1] as number, lineEnd: r[2] as number, text: r[3] as string };
    }
    s.reset();
    return out;
  }

  sequence(id: number): Uint8Array | null {
    const s = this.stmt("SELECT seq FROM chunks WHERE id = ?");
    s.bind([id]);
    const v = s.step() ? (s.get()[0] as Uint8Array | null) : null;
    s.reset();
    return v;
  }

  *docs(): Generator<Omit<DocEntry, "slot">> {
    const s = this.db.prepare("SELECT path, mtime, size, hash, title, folder, fm, tags, chunks FROM docs");
    try {
      while (s.step()) {
        const r = s.get();
        const [ids, lens] = JSON.parse(r[8] as string) as [number[], number[]];
        yield {
          path: r[0] as string,
          mtime: r[1] as number,
          size: r[2] as number,
          hash: r[3] as string,
          title: r[4] as string,
          folder: r[5] as string,
          frontmatter: JSON.parse(r[6] as string) as Record<string, unknown>,
          tags: JSON.parse(r[7] as string) as string[],
          chunkIds: ids,
          chunkLens: lens,
        };
      }
    } finally {
      s.free();
    }
  }

  skippedRows(): SkippedRow[] {
    const out: SkippedRow[] = [];
    const s = this.db.prepare("SELECT path, mtime, size, reason FROM skipped");
    try {
      while (s.step()) {
        const r = s.get();
        out.push({ path: r[0] as string, mtime: r[1] as number, size: r[2] as number, reason: r[3] as string });
      }
    } finally {
      s.free();
    }
    return out;
  }

  putPostings(p: SerializedPostings): void {
    const enc = new TextEncoder();
    this.run("INSERT OR REPLACE INTO blobs(name, data) VALUES (?, ?)", ["terms", enc.encode(p.terms)]);
    this.run("INSERT OR REPLACE INTO blobs(name, data) VALUES (?, ?)", ["counts", bytesOf(p.counts)]);
    this.run("INSERT OR REPLACE INTO blobs(name, data) VALUES (?, ?)", ["term_ids", bytesOf(p.termIds)]);
    this.run("INSERT OR REPLACE INTO blobs(name, data) VALUES (?, ?)", ["ids", bytesOf(p.ids)]);
    this.run("INSERT OR REPLACE INTO blobs(name, data) VALUES (?, ?)", ["tfs", bytesOf(p.tfs)]);
  }

  getPostings(): SerializedPostings | null {
    const get = (name: string): Uint8Array | null => {
      const s = this.stmt("SELECT data FROM blobs WHERE name = ?");
      s.bind([name]);
      const v = s.step() ? (s.get()[0] as Uint8Array | null) : null;
      s.reset();
      return v;
    };
    const terms = get("terms");
    const counts = get("counts");
    const termIds = get("term_ids");
    const ids = get("ids");
    const tfs = get("tfs");
    if (!terms || !counts || !ids || !tfs || !termIds) return null;
    if (counts.length % 4 || ids.length % 4 || tfs.length % 4 || termIds.length % 4) throw new Error("postings blobs have odd sizes");
    return {
      terms: new TextDecoder().decode(terms),
      counts: new Uint32Array(aligned(counts)),
      termIds: new Int32Array(aligned(termIds)),
      ids: new Int32Array(aligned(ids)),
      tfs: new Float32Array(aligned(tfs)),
    };
  }

  export(): Uint8Array {
    return this.db.export();
  }

  close(): void {
    for (const s of this.stmts.values()) s.free();
    this.stmts.clear();
    this.db.close();
  }
}

function bytesOf(a: Uint32Array | Int32Array | Float32Array): Uint8Array {
  return new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
}

/** A copy in a fresh, 4-byte-aligned buffer. */
function aligned(b: Uint8Array): ArrayBuffer {
  const out = new ArrayBuffer(b.length);
  new Uint8Array(out).set(b);
  return out;
}

function safeJson(v: unknown): string {
  try {
    return JSON.stringify(v ?? {}) ?? "{}";
  } catch {
    return "{}";
  }
}
