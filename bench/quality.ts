/**
 * `npm run quality`: how often search finds the right note, side by side with plain baselines on
 * the same queries in the same run. Not part of CI (it needs real vaults and minutes).
 *
 *   node dist/quality.js [--vault DIR]… [--generated 1000,10000] [--queries 200] [--seed 1]
 *                        [--hybrid] [--out bench-results/] [--docs docs/quality.md]
 *                        [--embeddings ollama|openai|builtin [--embeddings-model M] [--embeddings-url U] …]
 *
 * Query sets, each generated from the vault itself (seeded, so one vault always gets the same set):
 * - known-item: 4 content words of one paragraph (3 for a Chinese/Japanese/Korean paragraph), kept
 *   only when at most 3 notes contain all of them; the answer is the note of the paragraph;
 * - navigational: a note's title (or an alias) typed partly (its first 60%) or with a typo (one letter
 *   dropped), for `find_notes` and `search`; the answer is that note;
 * - hand-written (Obsidian's help vaults only): the real-vault suite's queries written the way people
 *   ask (tests/support/help-*-queries.ts), for a vault holding the notes they name; any named note
 *   is an answer. Generated queries reward matching a paragraph's words; these also lean on titles
 *   and word forms, so a scoring change is judged on both.
 * Content words: word-like segments (Intl.Segmenter, line by line), not an English stop word, not a
 * number, 3+ characters (2+ in CJK), in at most a quarter of the notes.
 *
 * Systems: our `search` (keyword; with --hybrid also hybrid mode on the deterministic embedder) and
 * `find_notes`; MiniSearch BM25 configured plainly (fields title and body, title boost 2, AND, words
 * from Intl.Segmenter); SQLite FTS5 `bm25()` (better-sqlite3, title weight 2, the same words, AND).
 * Metrics: MRR@10 and recall@10 of the answer.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import MiniSearch from "minisearch";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { createLookupService } from "../src/core/lookup";
import { AccessPolicy } from "../src/core/policy";
import { createSearchService, type SearchService } from "../src/core/search";
import { hybridSearch } from "../src/core/search/hybrid";
import { HashingEmbedder } from "../src/core/search/vector/hashing-embedder";
import { SemanticService } from "../src/core/search/vector/semantic-service";
import { MemoryStateStore } from "../src/core/state";
import { useHostTimers } from "../src/core/timers";
import { nodeTimers } from "../src/hosts/common/node-timers";
import { FsVault } from "../src/hosts/node/fs-vault";
import { generateVault, rng } from "./generate";
import { semanticSystems, takeEmbeddingsFlag } from "./quality-embeddings";
import { loadBetterSqlite3 } from "./reference";
import { knownItemQueries, readNotes, words, type Note, type Query } from "./vault-text";
import { EN_CASES } from "../tests/support/help-en-queries";
import { JA_CASES } from "../tests/support/help-ja-queries";

interface Args {
  vaults: string[];
  generated: number[];
  queries: number;
  seed: number;
  hybrid: boolean;
  out: string;
  docs: string | null;
  /** The headless server's --embeddings… flags (quality-embeddings.ts): "ours, semantic" and "ours, hybrid" on that provider. */
  embeddings: string[];
}

function parseArgs(argv: string[]): Args {
  const a: Args = { vaults: [], generated: [], queries: 200, seed: 1, hybrid: false, out: "bench-results", docs: null, embeddings: [] };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === "--vault") a.vaults.push(path.resolve(argv[++i]));
    else if (k === "--generated") a.generated = argv[++i].split(",").map(Number);
    else if (k === "--queries") a.queries = Number(argv[++i]);
    else if (k === "--seed") a.seed = Number(argv[++i]);
    else if (k === "--hybrid") a.hybrid = true;
    else if (k === "--out") a.out = argv[++i];
    else if (k === "--docs") a.docs = argv[++i];
    else if (k.startsWith("--embeddings")) i = takeEmbeddingsFlag(argv, i, a.embeddings);
    else if (k === "--help" || k === "-h") {
      process.stdout.write("node dist/quality.js [--vault DIR]… [--generated 1000,10000] [--queries 200] [--seed 1] [--hybrid] [--out bench-results/] [--docs docs/quality.md]\n");
      process.exit(0);
    } else throw new Error(`Unknown argument ${k}`);
  }
  if (!a.vaults.length && !a.generated.length) {
    for (const v of ["../shared/vaults/help-en", "../shared/vaults/help-ja"]) if (existsSync(v)) a.vaults.push(path.resolve(v));
    a.generated = [1000];
  }
  return a;
}

const log = (s: string) => process.stderr.write(s + "\n");

/** The hand-written set whose notes the vault holds (nine in ten of them at least), else none. */
function handWrittenQueries(notes: Note[]): Query[] {
  const paths = new Set(notes.map((n) => n.path));
  for (const cases of [EN_CASES, JA_CASES]) {
    const named = cases.flatMap((c) => c.expect);
    if (named.filter((p) => paths.has(p)).length >= named.length * 0.9) return cases.map((c) => ({ q: c.q, answers: c.expect }));
  }
  return [];
}

function navigationalQueries(notes: Note[], n: number, seed: number): Query[] {
  const r = rng(seed + 1);
  const byName = new Map<string, string[]>();
  for (const note of notes) for (const name of [note.title, ...note.aliases]) {
    const k = name.toLowerCase();
    byName.set(k, [...(byName.get(k) ?? []), note.path]);
  }
  const out: Query[] = [];
  for (let i = 0; out.length < n && i < n * 10; i++) {
    const note = notes[Math.floor(r() * notes.length)];
    const names = [note.title, ...note.aliases].filter((s) => s.trim().length >= 4);
    if (!names.length) continue;
    const name = names[Math.floor(r() * names.length)];
    let q: string;
    if (out.length % 2 === 0) q = name.slice(0, Math.max(3, Math.ceil([...name].length * 0.6)));
    else {
      const chars = [...name];
      if (chars.length <= 5) continue;
      const at = 1 + Math.floor(r() * (chars.length - 2));
      if (!/\p{L}/u.test(chars[at])) continue;
      chars.splice(at, 1);
      q = chars.join("");
    }
    // Every note holding that name counts as an answer (two notes may share a title in two folders).
    out.push({ q: q.trim(), answers: byName.get(name.toLowerCase()) ?? [note.path] });
  }
  return out;
}

// ---------------------------------------------------------------- systems

type Ranker = (q: string) => Promise<string[]> | string[];

function miniSearchRanker(notes: Note[]): Ranker {
  const ms = new MiniSearch<{ id: number; title: string; body: string }>({
    fields: ["title", "body"],
    tokenize: (text) => words(text),
    processTerm: (t) => t.toLowerCase(),
    searchOptions: { boost: { title: 2 }, combineWith: "AND" },
  });
  ms.addAll(notes.map((note, id) => ({ id, title: note.title, body: note.body })));
  return (q) => ms.search(q).slice(0, 10).map((h) => notes[h.id as number].path);
}

function fts5Ranker(notes: Note[]): Ranker {
  const Database = loadBetterSqlite3();
  const db = new Database(":memory:");
  db.exec("CREATE VIRTUAL TABLE n USING fts5(path UNINDEXED, title, body, tokenize = 'unicode61 remove_diacritics 0')");
  const ins = db.prepare("INSERT INTO n (path, title, body) VALUES (?, ?, ?)");
  db.exec("BEGIN");
  for (const note of notes) ins.run(note.path, words(note.title).join(" "), words(note.body).join(" "));
  db.exec("COMMIT");
  const stmt = db.prepare("SELECT path FROM n WHERE n MATCH ? ORDER BY bm25(n, 0, 2, 1) LIMIT 10");
  return (q) => {
    const ws = words(q);
    if (!ws.length) return [];
    const match = ws.map((w) => `"${w.replace(/"/g, '""')}"`).join(" AND ");
    return (stmt.all(match) as { path: string }[]).map((r) => r.path);
  };
}

interface Score {
  mrr: number;
  recall: number;
  n: number;
}

async function score(queries: Query[], rank: Ranker): Promise<Score & { ranks: (number | null)[] }> {
  let mrr = 0;
  let found = 0;
  const ranks: (number | null)[] = [];
  for (const q of queries) {
    const top = (await rank(q.q)).slice(0, 10);
    const i = top.findIndex((p) => q.answers.includes(p));
    ranks.push(i < 0 ? null : i + 1);
    if (i >= 0) {
      mrr += 1 / (i + 1);
      found++;
    }
  }
  return { mrr: mrr / Math.max(1, queries.length), recall: found / Math.max(1, queries.length), n: queries.length, ranks };
}

// ---------------------------------------------------------------- one vault

interface VaultResult {
  vault: string;
  notes: number;
  sets: Record<string, Record<string, Score>>;
}

async function measureVault(label: string, root: string, args: Args): Promise<VaultResult> {
  log(`\n== ${label} (${root})`);
  const notes = readNotes(root);
  const known = knownItemQueries(notes, args.queries, args.seed);
  const nav = navigationalQueries(notes, Math.min(100, args.queries), args.seed);
  const hand = handWrittenQueries(notes);
  log(`  ${notes.length} notes; ${known.length} known-item, ${nav.length} navigational and ${hand.length} hand-written queries`);

  const vault = await FsVault.open(root, { watch: false });
  const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
  const search: SearchService = createSearchService({ port: vault, policy, store: new MemoryStateStore(), sqlWasm });
  await search.start();
  await search.waitForIdle(30 * 60_000);
  const lookup = createLookupService({ port: vault, policy });
  const ours: Ranker = async (q) => (await search.search({ query: q, limit: 10, chunksPerFile: 1, snippetWords: 18 })).hits.map((h) => h.path);
  const findNotes: Ranker = async (q) => (await lookup.findNotes(q, 10)).map((h) => h.path);
  const mini = miniSearchRanker(notes);
  const fts5 = fts5Ranker(notes);

  const systems: Record<string, Ranker> = { ours, "MiniSearch BM25": mini, "FTS5 bm25": fts5 };
  let semantic: SemanticService | null = null;
  if (args.hybrid) {
    const embedder = new HashingEmbedder(384, { batchSize: 16 });
    semantic = new SemanticService({ port: vault, policy, store: new MemoryStateStore(), embedder });
    await semantic.start();
    await semantic.waitForIdle(30 * 60_000);
    const sem = semantic;
    systems["ours, hybrid"] = async (q) =>
      (await hybridSearch(search, sem, vault, { query: q, limit: 10, chunksPerFile: 1, snippetWords: 18 }, embedder.embedOne(q), "en")).hits.map((h) => h.path);
  }

  const withModel = args.embeddings.length ? await semanticSystems(args.embeddings, vault, policy, search, log) : null;
  if (withModel) Object.assign(systems, withModel.systems);

  const sets: Record<string, Record<string, Score>> = { "known-item": {}, navigational: {} };
  for (const [name, rank] of Object.entries(systems)) {
    const { ranks: _r, ...s } = await score(known, rank);
    sets["known-item"][name] = s;
  }
  if (hand.length) {
    sets["hand-written"] = {};
    for (const [name, rank] of Object.entries(systems)) {
      const { ranks: _r, ...s } = await score(hand, rank);
      sets["hand-written"][name] = s;
    }
  }
  for (const [name, rank] of Object.entries({ ...systems, "ours, find_notes": findNotes })) {
    const { ranks: _r, ...s } = await score(nav, rank);
    sets.navigational[name] = s;
  }
  if (process.env.QUALITY_MISSES) {
    // QUALITY_MISSES=fts5 compares with FTS5, anything else with MiniSearch.
    const fts = process.env.QUALITY_MISSES === "fts5";
    const { ranks } = await score(known, ours);
    const { ranks: mr } = await score(known, fts ? fts5 : mini);
    for (const [i, q] of known.entries()) {
      if ((ranks[i] ?? 99) > (mr[i] ?? 99)) log(`  miss: "${q.q}" → ${q.answers[0]}: ours ${ranks[i] ?? "-"}, ${fts ? "FTS5" : "MiniSearch"} ${mr[i] ?? "-"}; ours top: ${(await ours(q.q)).slice(0, 3).join(" | ")}`);
    }
  }
  lookup.close();
  await semantic?.close();
  await withModel?.close();
  await search.close();
  await vault.close();
  return { vault: label, notes: notes.length, sets };
}

function table(results: VaultResult[], set: string): string {
  const systems = [...new Set(results.flatMap((r) => Object.keys(r.sets[set] ?? {})))];
  const head = `| vault | notes | queries | ${systems.map((s) => `${s} MRR@10 / R@10`).join(" | ")} |`;
  const sep = `|---|---|---|${systems.map(() => "---").join("|")}|`;
  const rows = results.map((r) => {
    const s = r.sets[set];
    const n = Object.values(s)[0]?.n ?? 0;
    const best = Math.max(...systems.filter((x) => !x.startsWith("ours")).map((x) => s[x]?.mrr ?? 0));
    return `| ${r.vault} | ${r.notes} | ${n} | ${systems
      .map((x) => (s[x] ? `${s[x].mrr.toFixed(3)} / ${s[x].recall.toFixed(3)}${x.startsWith("ours") && x !== "ours, find_notes" ? ` (${s[x].mrr - best >= 0 ? "+" : ""}${(s[x].mrr - best).toFixed(3)})` : ""}` : "—"))
      .join(" | ")} |`;
  });
  return [head, sep, ...rows].join("\n");
}

async function main(): Promise<void> {
  useHostTimers(nodeTimers);
  const args = parseArgs(process.argv.slice(2));
  const results: VaultResult[] = [];
  for (const v of args.vaults) results.push(await measureVault(path.basename(v), v, args));
  for (const size of args.generated) {
    const dir = mkdtempSync(path.join(tmpdir(), "vault-mcp-quality-"));
    try {
      generateVault(dir, size);
      results.push(await measureVault(`generated ${size}`, dir, args));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const md = [
    `Known-item queries (4 content words of a paragraph; 3 in CJK), seed ${args.seed}:`,
    "",
    table(results, "known-item"),
    "",
    "Navigational queries (a title or alias, partly typed or with a typo):",
    "",
    table(results, "navigational"),
    "",
    ...(results.some((r) => r.sets["hand-written"])
      ? ["Hand-written queries (the real-vault suite's, on Obsidian's help vaults; any note a case names counts):", "", table(results.filter((r) => r.sets["hand-written"]), "hand-written"), ""]
      : []),
  ].join("\n");
  process.stdout.write("\n" + md);
  mkdirSync(args.out, { recursive: true });
  writeFileSync(path.join(args.out, "quality.json"), JSON.stringify({ date: new Date().toISOString(), seed: args.seed, results }, null, 2));
  if (args.docs) {
    const doc = existsSync(args.docs) ? readFileSync(args.docs, "utf8") : "";
    const start = "<!-- quality:start -->";
    const end = "<!-- quality:end -->";
    const block = `${start}\n${md}\n${end}`;
    writeFileSync(args.docs, doc.includes(start) ? doc.replace(new RegExp(`${start}[\\s\\S]*?${end}`), block) : `${doc}\n${block}\n`);
  }
  log(`\nwrote ${path.join(args.out, "quality.json")}`);
}

main().catch((e: unknown) => {
  log(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
});
