/**
 * Profiling helper (not part of `npm run bench`): in-process search latency (p50 of each round over
 * every query, and their median) on the bench's generated vault and queries, or on a real vault
 * (`real` instead of a note count: 400 queries of 1–4 words of its notes, some phrases and prefixes).
 * DUMP=file writes every query's answer (paths, scores, sections) to compare two versions' rankings.
 * QUERIES=file (a JSON array) searches those on the vault as it is; STATE=dir restores the index
 * saved there (a warm start); TOOL=1 asks as the search tool does by default; PERQ=file: per query.
 *   npx esbuild bench/prof-search.ts --bundle --platform=node --target=node20 --outfile=/tmp/prof-search.js --loader:.wasm=binary
 *   node [--cpu-prof] /tmp/prof-search.js <dir> [notes|real] [rounds]
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { AccessPolicy } from "../src/core/policy";
import { createSearchService } from "../src/core/search";
import { MemoryStateStore } from "../src/core/state";
import { useHostTimers } from "../src/core/timers";
import { nodeTimers } from "../src/hosts/common/node-timers";
import { FsVault } from "../src/hosts/node/fs-vault";
import { FsStateStore } from "../src/hosts/node/state-store";
import { generateVault, makeQueries, rng } from "./generate";

async function main(): Promise<void> {
  useHostTimers(nodeTimers);
  const root = process.argv[2] ?? "/tmp/vault-10k";
  const n = Number(process.argv[3] ?? 10000);
  const rounds = Number(process.argv[4] ?? 5);
  let queries: string[];
  if (process.argv[3] === "real") {
    // A real vault: 1–4 words of random lines of random notes (a phrase now and then).
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.name.startsWith(".")) continue;
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (p.endsWith(".md")) files.push(p);
      }
    };
    walk(root);
    const r = rng(5);
    queries = [];
    for (let tries = 0; queries.length < 400 && tries < 20000; tries++) {
      const words = readFileSync(files[Math.floor(r() * files.length)], "utf8").match(/[\p{L}\p{N}]{2,}/gu) ?? [];
      if (words.length < 4) continue;
      const k = 1 + Math.floor(r() * 4);
      const i = Math.floor(r() * (words.length - k));
      const q = words.slice(i, i + k).map((w) => w.slice(0, 6)).join(" ");
      queries.push(r() < 0.1 ? `"${q}"` : r() < 0.1 ? q + "*" : q);
    }
  } else if (process.env.QUERIES) {
    // QUERIES=file: these queries (a JSON array), on the vault as it is (not generated again).
    queries = JSON.parse(readFileSync(process.env.QUERIES, "utf8")) as string[];
  } else {
    queries = makeQueries(generateVault(root, n, 42), 300);
  }
  const vault = await FsVault.open(root, { watch: false });
  const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
  // STATE=dir: restore the index saved there (a warm start, as the CLI's --state-dir) instead of building it.
  const store = process.env.STATE ? new FsStateStore(process.env.STATE, root) : new MemoryStateStore();
  const svc = createSearchService({ port: vault, policy, store, sqlWasm });
  await svc.start();
  // The vault's own reading of its notes' metadata (headless) and the index's background work both
  // done: measured beside them, a warm start's searches read 2× slower.
  await vault.ready();
  await svc.waitForIdle(10 * 60_000);
  // TOOL=1: the search tool's defaults (one section a note, 18-word snippets), as a client gets them.
  const req = (query: string) => (process.env.TOOL ? { query, limit: 10, chunksPerFile: 1, snippetWords: 18 } : { query, limit: 10, chunksPerFile: 2, snippetWords: 200 });
  for (const q of queries.slice(0, 20)) await svc.search(req(q));
  const p50s: number[] = [];
  const perQuery = queries.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    const s: number[] = [];
    for (let i = 0; i < queries.length; i++) {
      const t = performance.now();
      await svc.search(req(queries[i]));
      const ms = performance.now() - t;
      s.push(ms);
      perQuery[i].push(ms);
    }
    s.sort((a, b) => a - b);
    p50s.push(s[s.length >> 1]);
  }
  // PERQ=file: each query's median time over the rounds, its files matched, slowest first.
  if (process.env.PERQ) {
    const rows: string[] = [];
    for (let i = 0; i < queries.length; i++) {
      const t = perQuery[i].sort((a, b) => a - b)[perQuery[i].length >> 1];
      const res = await svc.search(req(queries[i]));
      rows.push(`${t.toFixed(3)}\t${res.total_files}\t${res.partial_files ?? 0}\t${queries[i]}`);
    }
    rows.sort((a, b) => parseFloat(b) - parseFloat(a));
    writeFileSync(process.env.PERQ, rows.join("\n") + "\n");
  }
  const dump = process.env.DUMP;
  if (dump) {
    const lines: string[] = [];
    for (const q of queries) {
      const res = await svc.search(req(q));
      lines.push(JSON.stringify([q, res.total_files, res.partial_files ?? 0, res.relaxed, res.hits.map((h) => [h.path, h.score, h.missing ?? null, h.sections.map((x) => [x.heading, x.score, x.content.length])])]));
    }
    writeFileSync(dump, lines.join("\n") + "\n");
  }
  const sorted = [...p50s].sort((a, b) => a - b);
  process.stdout.write(JSON.stringify({ p50s: p50s.map((x) => +x.toFixed(3)), median: +sorted[sorted.length >> 1].toFixed(3) }) + "\n");
  process.exit(0);
}
void main();
