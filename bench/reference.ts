/**
 * The two baselines the bench compares our index with, on the same chunks and queries:
 * - native SQLite FTS5 through better-sqlite3 (bm25 with the same column weights) — the reference;
 * - a brute-force scan that reads every file for every query, as peer servers do.
 */
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import type BetterSqlite3 from "better-sqlite3";
import type { Database as Db, Statement } from "better-sqlite3";

export interface RefChunk {
  path: string;
  title: string;
  aliases: string;
  headings: string;
  tags: string;
  body: string;
}

export interface RefHit {
  path: string;
  score: number;
}

type Tokenize = (text: string) => string[];

/** Column weights in the order title, aliases, headings, tags, body. */
export type ColumnWeights = [number, number, number, number, number];

/** Native FTS5 over pre-tokenized chunks (our tokenizer's terms, joined by spaces). */
export class Fts5Reference {
  private db: Db;
  private readonly query: Statement;

  constructor(
    private readonly tokenize: Tokenize,
    private readonly weights: ColumnWeights,
    file = ":memory:",
  ) {
    const Database = loadBetterSqlite3();
    this.db = new Database(file);
    this.db.pragma("journal_mode = OFF");
    this.db.pragma("synchronous = OFF");
    this.db.exec(
      "CREATE VIRTUAL TABLE chunks USING fts5(path UNINDEXED, title, aliases, headings, tags, body, tokenize = 'unicode61 remove_diacritics 0', detail = full)",
    );
    const w = this.weights.join(", ");
    this.query = this.db.prepare(`SELECT path, bm25(chunks, 0, ${w}) AS score FROM chunks WHERE chunks MATCH ? ORDER BY score LIMIT ?`);
  }

  /** Our tokenizer's terms of each field, joined by spaces (FTS5's unicode61 then splits on the spaces). */
  tokenizeChunk(c: RefChunk): RefChunk {
    const t = (s: string) => this.tokenize(s).join(" ");
    return { path: c.path, title: t(c.title), aliases: t(c.aliases), headings: t(c.headings), tags: t(c.tags), body: t(c.body) };
  }

  /** Inserts already tokenized chunks in one transaction. */
  insert(rows: Iterable<RefChunk>): void {
    const ins = this.db.prepare("INSERT INTO chunks (path, title, aliases, headings, tags, body) VALUES (?, ?, ?, ?, ?, ?)");
    const tx = this.db.transaction((items: Iterable<RefChunk>) => {
      for (const c of items) ins.run(c.path, c.title, c.aliases, c.headings, c.tags, c.body);
    });
    tx(rows);
  }

  /** Tokenizes and inserts every chunk. */
  build(chunks: Iterable<RefChunk>): void {
    const tokenizeChunk = (c: RefChunk) => this.tokenizeChunk(c);
    function* rows(): Generator<RefChunk> {
      for (const c of chunks) yield tokenizeChunk(c);
    }
    this.insert(rows());
  }

  optimize(): void {
    this.db.exec("INSERT INTO chunks(chunks) VALUES('optimize')");
  }

  /** AND of the terms; when nothing matches, OR (as our engine relaxes). Top files by best chunk. */
  search(q: string, limit: number): RefHit[] {
    const terms = this.tokenize(q);
    if (terms.length === 0) return [];
    const quoted = terms.map((t) => `"${t.replace(/"/g, '""')}"`);
    let rows = this.query.all(quoted.join(" AND "), limit * 4) as RefHit[];
    if (rows.length === 0 && terms.length > 1) rows = this.query.all(quoted.join(" OR "), limit * 4) as RefHit[];
    const seen = new Set<string>();
    const out: RefHit[] = [];
    for (const r of rows) {
      if (seen.has(r.path)) continue;
      seen.add(r.path);
      out.push({ path: r.path, score: -r.score });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Bytes of the database when `file` was a path (0 in memory). */
  sizeOnDisk(file: string): number {
    try {
      return statSync(file).size;
    } catch {
      return 0;
    }
  }

  close(): void {
    this.db.close();
  }
}

/**
 * Reads every note for every query and scores files by term frequency (lower-cased substring
 * counts), like servers that have no index.
 */
export function bruteForceSearch(root: string, paths: readonly string[], q: string, limit: number): RefHit[] {
  const terms = q
    .toLowerCase()
    .split(/\s+/)
    .filter((t) => t.length > 0);
  if (terms.length === 0) return [];
  const hits: RefHit[] = [];
  for (const p of paths) {
    const text = readFileSync(path.join(root, p), "utf8").toLowerCase();
    let score = 0;
    let all = true;
    for (const t of terms) {
      let n = 0;
      for (let i = text.indexOf(t); i >= 0; i = text.indexOf(t, i + t.length)) n++;
      if (n === 0) all = false;
      score += n;
    }
    if (score > 0) hits.push({ path: p, score: all ? score * 10 : score });
  }
  hits.sort((a, b) => b.score - a.score);
  return hits.slice(0, limit);
}

/**
 * better-sqlite3, for the FTS5 reference only. It is not a dependency (installing it compiles SQLite,
 * ~2 minutes of a fresh `npm ci`): the bench installs it on first use, without saving it, and runs
 * without the reference when that fails (no network, no compiler).
 */
export function loadBetterSqlite3(): typeof BetterSqlite3 {
  const req = createRequire(path.join(process.cwd(), "package.json"));
  try {
    return req("better-sqlite3") as typeof BetterSqlite3;
  } catch {
    process.stderr.write("The bench's FTS5 reference needs better-sqlite3; installing it (npm install --no-save better-sqlite3@12)…\n");
    execFileSync("npm", ["install", "--no-save", "--no-audit", "--no-fund", "better-sqlite3@12"], { stdio: "inherit" });
    // By its entry file: Node remembers that the name (and its package.json) did not resolve.
    const dir = path.join(process.cwd(), "node_modules", "better-sqlite3");
    const main = (JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { main?: string }).main ?? "index.js";
    return req(path.join(dir, main)) as typeof BetterSqlite3;
  }
}
