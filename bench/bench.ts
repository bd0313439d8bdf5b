/**
 * `npm run bench`: builds seeded synthetic vaults (1k and 10k notes by default; `--50k` adds 50k;
 * `--vault <dir>` measures a real folder too) and measures our keyword index against native SQLite
 * FTS5 (better-sqlite3, same chunks, same tokens, bm25 with the same column weights) and against a
 * brute-force scan. Prints a markdown table with pass/fail against the targets, writes
 * `bench-results/bench.json` and `bench-results/scaling.svg`.
 *
 *   node --expose-gc dist/bench.js [--sizes 1000,10000] [--50k] [--vault <dir>] [--out bench-results/]
 *                                  [--queries 300] [--no-http] [--keep] [--hostile]
 *
 * At 10k notes it also runs the hostile calls of `hostile.ts` (`--hostile`: only those, at the
 * largest size).
 */
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { constants as perfConstants, monitorEventLoopDelay, performance, PerformanceObserver } from "node:perf_hooks";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { generateVariedVault, variedQueries } from "./generate-varied";
import { benchGraph, type GraphBenchResult } from "./graph";
import { benchSemantic, type SemanticBenchResult } from "./semantic";
import { benchGit, generateRepo, GIT_TARGETS, gitTable, type GitBenchResult } from "./git";
import { createLookupService } from "../src/core/lookup";
import { AccessPolicy } from "../src/core/policy";
import { chunkNote, createSearchService, FIELD_WEIGHTS, tokenize, type SearchService } from "../src/core/search";
import { isNotePath } from "../src/core/vault";
import { parseNote } from "../src/core/parser";
import { startRuntime } from "../src/hosts/common/runtime";
import { FsVault } from "../src/hosts/node/fs-vault";
import { FsStateStore } from "../src/hosts/node/state-store";
import { generateVault, makeQueries, rng } from "./generate";
import { bruteForceSearch, Fts5Reference, type ColumnWeights, type RefChunk } from "./reference";
import { benchHostile, hostileTable, type HostileResult } from "./hostile";
import { scalingSvg } from "./svg";
import { benchServerScale, SERVER_TARGETS, serverScaleTable, type ServerScaleResult } from "./server-scale";
import { useHostTimers } from "../src/core/timers";
import { nodeTimers } from "../src/hosts/common/node-timers";
import budgets from "../tests/budgets.json";

interface Args {
  /** Only the hostile-calls section (at the largest size). */
  hostileOnly: boolean;
  sizes: number[];
  vault: string | null;
  out: string;
  queries: number;
  http: boolean;
  keep: boolean;
  /** The git section: a generated repository of this many notes and commits (null: skipped). */
  git: { notes: number; commits: number } | null;
  gitOnly: boolean;
  /** Sizes at which the headless server is also spawned and measured from outside (server-scale.ts). */
  server: Set<number>;
  /** Only the server measurements (at the `server` sizes). */
  serverOnly: boolean;
  /** The server phases on `generate-varied.ts`'s vault (millions of terms) instead of the Zipf one. */
  varied: boolean;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { hostileOnly: false, sizes: [1000, 10000], vault: null, out: "bench-results", queries: 300, http: true, keep: false, git: { notes: 10000, commits: 20000 }, gitOnly: false, server: new Set(), serverOnly: false, varied: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === "--sizes") a.sizes = argv[++i].split(",").map((s) => Math.round(Number(s.replace(/k$/i, "")) * (/k$/i.test(s) ? 1000 : 1)));
    else if (k === "--50k") a.sizes = [...new Set([...a.sizes, 50000])];
    else if (k === "--100k") {
      a.sizes = [...new Set([...a.sizes, 100000])];
      a.server.add(10000).add(100000);
    } else if (k === "--server") for (const n of argv[++i].split(",")) a.server.add(Math.round(Number(n.replace(/k$/i, "")) * (/k$/i.test(n) ? 1000 : 1)));
    else if (k === "--server-only") a.serverOnly = true;
    else if (k === "--varied") a.varied = true;
    else if (k === "--vault") a.vault = path.resolve(argv[++i]);
    else if (k === "--out") a.out = argv[++i];
    else if (k === "--queries") a.queries = Number(argv[++i]);
    else if (k === "--no-http") a.http = false;
    else if (k === "--keep") a.keep = true;
    else if (k === "--hostile") a.hostileOnly = true;
    else if (k === "--no-git") a.git = null;
    else if (k === "--git-only") a.gitOnly = true;
    else if (k === "--git-repo") {
      const [n, c] = argv[++i].split("/").map(Number);
      a.git = { notes: n, commits: c };
    }
    else if (k === "--help" || k === "-h") {
      process.stdout.write("node --expose-gc dist/bench.js [--sizes 1000,10000] [--50k] [--100k] [--server 10k,100k] [--server-only [--varied]] [--vault <dir>] [--out bench-results/] [--queries 300] [--no-http] [--keep] [--hostile] [--no-git | --git-only] [--git-repo 10000/20000]\n");
      process.exit(0);
    } else throw new Error(`Unknown argument ${k}`);
  }
  if (a.sizes.some((n) => !Number.isFinite(n) || n < 10)) throw new Error("--sizes takes note counts such as 1000,10000");
  return a;
}

interface Latency {
  p50: number;
  p99: number;
  mean: number;
  max: number;
  n: number;
}

function latency(samples: number[]): Latency {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(p * s.length))] : NaN);
  return { p50: q(0.5), p99: q(0.99), mean: s.reduce((x, y) => x + y, 0) / (s.length || 1), max: s[s.length - 1] ?? NaN, n: s.length };
}

interface SizeResult {
  label: string;
  notes: number;
  megabytes: number;
  ours: {
    vaultOpenMs: number;
    coldBuildMs: number;
    coldBuildCpuMs: number;
    searchCpuMeanMs: number;
    maxEventLoopBlockMs: number;
    warmStartMs: number;
    /** Median of three warm starts, each in a fresh process (null when they could not run). */
    freshWarmStartMs: number | null;
    freshWarmStartRunsMs: number[];
    freshWarmMaxBlockMs: number | null;
    /** In the median fresh run: the first query, one task while V8 compiles the search path. */
    freshFirstQueryMs: number | null;
    warmReconcileMs: number;
    search: Latency;
    http: Latency | null;
    httpNote?: string;
    /** Bytes of a default search's answer over HTTP (p50, max of 50 queries) and of tools/list. */
    answerBytes: { searchP50: number; searchMax: number; toolsList: number; tools: number } | null;
    writeToSearchable: Latency;
    rssGrowthMB: number;
    heapUsedMB: number;
    rssMB: number;
    indexBytes: number;
    /** Saving the index after the build: longest single step, files written, total ms. */
    persistMaxStepMs: number | null;
    persistFiles: number | null;
    /** Longest event-loop block from the end of the build to close (queries aside: writes, saving). */
    maxBlockAfterBuildMs: number;
    /** Longest event-loop block while loading the persisted index. */
    warmMaxBlockMs: number;
  };
  graph: GraphBenchResult | null;
  semantic: SemanticBenchResult | null;
  findNotes: { firstMs: number; search: Latency; hit3: number };
  grep: Latency;
  fts5: { buildMs: number; buildCpuMs: number; searchCpuMeanMs: number; prepMs: number; insertMs: number; search: Latency; dbBytes: number; chunks: number } | null;
  brute: { search: Latency } | null;
  agreement: { top1: number; overlap10: number } | null;
}

const mb = (n: number) => n / (1024 * 1024);
/** CPU milliseconds (user + system) used by this process since `from`. Under contention wall time lies; CPU time does not. */
const cpuMs = (from: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(from);
  return (d.user + d.system) / 1000;
};
const gc = () => (globalThis as { gc?: () => void }).gc?.();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Lets the event loop turn, so that `monitorEventLoopDelay` records the task that just ran. */
const nextTurn = () => sleep(5);
/**
 * Memory after garbage collection has settled: V8 frees ArrayBuffer backing stores on a background
 * thread after a GC, so a reading taken at once still counts tens of MB of freed buffers (the same
 * build measured 274 to 320 MB of RSS growth depending on that timing).
 */
async function settledMemory(): Promise<NodeJS.MemoryUsage> {
  gc();
  await sleep(200);
  gc();
  await sleep(50);
  return process.memoryUsage();
}
const log = (s: string) => process.stderr.write(s + "\n");

function dirBytes(dir: string): number {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? dirBytes(p) : statSync(p).size;
  }
  return n;
}

function req(query: string) {
  return { query, limit: 10, chunksPerFile: 2, snippetWords: 200 };
}

/** Queries from a real folder: 1–2 words of 4+ letters picked from random lines of random notes. */
function queriesFromFolder(root: string, paths: string[], n: number): string[] {
  const r = rng(11);
  const out: string[] = [];
  for (let tries = 0; out.length < n && tries < n * 20; tries++) {
    const text = readFileSync(path.join(root, paths[Math.floor(r() * paths.length)]), "utf8");
    const words = text.match(/[\p{L}]{4,}/gu) ?? [];
    if (words.length < 2) continue;
    const i = Math.floor(r() * (words.length - 1));
    out.push((r() < 0.5 ? words[i] : `${words[i]} ${words[i + 1]}`).toLowerCase());
  }
  return out;
}

async function measure(label: string, root: string, queries: string[], args: Args, work: string): Promise<SizeResult> {
  log(`\n== ${label}: ${root}`);
  const rss0 = (await settledMemory()).rss;
  let t = performance.now();
  const vault = await FsVault.open(root, { watch: false });
  const vaultOpenMs = performance.now() - t;
  const notePaths = vault
    .listFiles()
    .filter((f) => isNotePath(f.path) && !f.path.startsWith("."))
    .map((f) => f.path);
  const megabytes = mb(notePaths.reduce((s, p) => s + (vault.stat(p)?.size ?? 0), 0));
  log(`  vault open (list + parse ${notePaths.length} notes): ${vaultOpenMs.toFixed(0)} ms`);
  const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });

  // find_notes (MiniSearch over titles and aliases, built on first use) and grep (reads every note).
  const lookup = createLookupService({ port: vault, policy });
  const nameQueries = notePaths.slice(0, 200).map((p, i) => {
    const title = p.slice(p.lastIndexOf("/") + 1, -3).toLowerCase();
    // Every other lookup is a prefix, every third has a typo (a dropped letter).
    const cut = i % 2 ? title.slice(0, Math.max(3, Math.ceil(title.length * 0.6))) : title;
    return i % 3 === 0 && cut.length > 5 ? cut.slice(0, 2) + cut.slice(3) : cut;
  });
  t = performance.now();
  await lookup.findNotes(nameQueries[0], 10);
  const findFirstMs = performance.now() - t;
  const fn: number[] = [];
  let found = 0;
  for (const [i, q] of nameQueries.entries()) {
    const s = performance.now();
    const hits = await lookup.findNotes(q, 10);
    fn.push(performance.now() - s);
    if (hits.slice(0, 3).some((h) => h.path === notePaths[i])) found++;
  }
  const findNotes = { firstMs: findFirstMs, search: latency(fn), hit3: found / nameQueries.length };
  const gr: number[] = [];
  for (const q of queries.slice(0, 5)) {
    const s = performance.now();
    await lookup.grep({ pattern: q.split(" ")[0], limit: 100 });
    gr.push(performance.now() - s);
  }
  const grep = latency(gr);
  lookup.close();
  log(`  find_notes: first call (builds the name index) ${findFirstMs.toFixed(0)} ms, then p50 ${findNotes.search.p50.toFixed(2)} ms, p99 ${findNotes.search.p99.toFixed(2)} ms, target in top 3 for ${(findNotes.hit3 * 100).toFixed(0)}%; grep p50 ${grep.p50.toFixed(0)} ms`);
  const stateDir = path.join(work, `state-${label}`);
  const newService = () => createSearchService({ port: vault, policy, store: new FsStateStore(stateDir), sqlWasm });

  // Cold build, watching the event loop.
  const h = monitorEventLoopDelay({ resolution: 1 });
  let svc: SearchService = newService();
  h.enable();
  t = performance.now();
  let cpu = process.cpuUsage();
  await svc.start();
  await svc.waitForIdle(10 * 60_000);
  const coldBuildMs = performance.now() - t;
  const coldBuildCpuMs = cpuMs(cpu);
  h.disable();
  const maxEventLoopBlockMs = h.max / 1e6;
  log(`  cold build: ${coldBuildMs.toFixed(0)} ms wall, ${coldBuildCpuMs.toFixed(0)} ms CPU (status ${svc.status().state}, ${svc.status().documents_indexed} docs), longest event-loop block ${maxEventLoopBlockMs.toFixed(1)} ms (longest GC pause ${await longestGc(t, t + coldBuildMs)})`);
  const mem = await settledMemory();

  // In-process search latency.
  for (const q of queries.slice(0, 20)) await svc.search(req(q));
  const samples: number[] = [];
  const ourTop = new Map<string, string[]>();
  cpu = process.cpuUsage();
  // The query matching the most notes: the warm starts below answer it first, the costliest first
  // query for a search path V8 has not compiled yet.
  let broadest = { query: queries[0], files: -1 };
  for (const q of queries) {
    const s = performance.now();
    const res = await svc.search(req(q));
    samples.push(performance.now() - s);
    ourTop.set(q, res.hits.map((x) => x.path));
    if (res.total_files > broadest.files) broadest = { query: q, files: res.total_files };
  }
  const search = latency(samples);
  const searchCpuMeanMs = cpuMs(cpu) / queries.length;
  log(`  search in-process: p50 ${search.p50.toFixed(2)} ms, p99 ${search.p99.toFixed(2)} ms`);

  // Write → searchable: append a unique word to a note through the port, poll until search finds it.
  // The event loop is watched from here to close (saving the index included).
  const h2 = monitorEventLoopDelay({ resolution: 1 });
  h2.enable();
  const afterBuildFrom = performance.now();
  const writes: number[] = [];
  const r = rng(5);
  for (let i = 0; i < 15; i++) {
    const p = notePaths[Math.floor(r() * notePaths.length)];
    const word = `zqvbench${randomBytes(4).toString("hex").replace(/\d/g, "x")}`;
    const s = performance.now();
    await vault.process(p, (cur) => `${cur}\n\nMarker ${word}\n`);
    for (;;) {
      if ((await svc.search(req(word))).hits.some((x) => x.path === p)) break;
      if (performance.now() - s > 10_000) break;
      await sleep(1);
    }
    writes.push(performance.now() - s);
  }
  const writeToSearchable = latency(writes);
  log(`  write → searchable: p50 ${writeToSearchable.p50.toFixed(0)} ms, max ${writeToSearchable.max.toFixed(0)} ms`);

  // Let the debounced save run (it starts ~5 s after the last change) while the loop is watched.
  await sleep(6000);
  await svc.waitForIdle(60_000);
  await svc.close();
  h2.disable();
  const maxBlockAfterBuildMs = h2.max / 1e6;
  const tm = (svc as unknown as { timings?: { lastPersistMaxStepMs: number; lastPersistFiles: number } }).timings;
  const persistMaxStepMs = tm ? tm.lastPersistMaxStepMs : null;
  const persistFiles = tm ? tm.lastPersistFiles : null;
  log(`  after the build (writes, save, close): longest event-loop block ${maxBlockAfterBuildMs.toFixed(1)} ms (longest GC pause ${await longestGc(afterBuildFrom, performance.now())}); last save: longest step ${f(persistMaxStepMs, 1)} ms over ${persistFiles ?? "?"} files`);
  const indexBytes = dirBytes(stateDir);

  // Warm start: reopen the persisted index and answer a first query. First let the collector finish
  // with the closed index (~100 MB): an app starting up has no old index to sweep.
  await settledMemory();
  svc = newService();
  const h3 = monitorEventLoopDelay({ resolution: 1 });
  h3.enable();
  t = performance.now();
  await svc.start();
  let warmHits = (await svc.search(req(broadest.query))).hits.length;
  const warmStartMs = performance.now() - t;
  await nextTurn(); // the monitor records the first query's task when the loop turns
  h3.disable();
  const warmMaxBlockMs = h3.max / 1e6;
  await svc.waitForIdle(10 * 60_000);
  const warmReconcileMs = performance.now() - t;
  warmHits = Math.max(warmHits, (await svc.search(req(broadest.query))).hits.length);
  const lt = (svc as unknown as { timings?: { loadMs?: number; load?: { waitMs: number; rowsMs: number; decodeMs: number; listsMs: number } } }).timings;
  const loadParts = lt?.load ? `; loading ${f(lt.loadMs ?? null, 0)} ms: reading rows ${f(lt.load.rowsMs, 0)}, notes and term headers ${f(lt.load.decodeMs, 0)}, lists ${f(lt.load.listsMs, 0)}, waiting for reads ${f(lt.load.waitMs, 0)}` : "";
  log(`  warm start → first answer (to "${broadest.query}", the bench query matching the most notes: ${broadest.files}): ${warmStartMs.toFixed(0)} ms (state ${svc.status().state}, longest block ${warmMaxBlockMs.toFixed(1)} ms, longest GC pause ${await longestGc(t, t + warmStartMs)}${loadParts}); reconcile done after ${warmReconcileMs.toFixed(0)} ms; index ${mb(indexBytes).toFixed(1)} MB`);
  void warmHits;

  // Graph tools (link graph built from the same vault; unlinked mentions through this index).
  let graph: GraphBenchResult | null = null;
  try {
    graph = await benchGraph(vault, policy, { samples: 200, search: svc });
    log(`  graph: build ${graph.build_ms} ms (longest block ${graph.build_max_block_ms} ms), ${graph.links} links; p50 ${Object.entries(graph.queries).map(([k, v]) => `${k} ${v.p50}`).join(", ")} ms`);
  } catch (e) {
    log(`  graph bench failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  // Semantic and hybrid search (the keyword half from this index).
  let semantic: SemanticBenchResult | null = null;
  try {
    semantic = await benchSemantic(vault, policy, svc, queries, log);
  } catch (e) {
    log(`  semantic bench failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  await svc.close();

  // Warm start as a user gets it after restarting the app: a fresh process (nothing compiled yet).
  const fresh = freshWarmStarts(root, stateDir, broadest.query, 3);
  if (fresh) log(`  warm start in a fresh process → first answer: median ${fresh.ms.toFixed(0)} ms of ${fresh.all.map((x) => x.toFixed(0)).join(", ")} (longest block while loading and answering ${fresh.maxBlockMs.toFixed(1)} ms; longest GC pauses ${fresh.gc.join(", ")}; the first query itself ${fresh.firstQueryMs.toFixed(0)} ms)`);

  // Over MCP HTTP with the SDK client, as a real client would call it.
  let http: Latency | null = null;
  let httpNote: string | undefined;
  let answerBytes: SizeResult["ours"]["answerBytes"] = null;
  if (args.http) {
    try {
      const token = randomBytes(24).toString("base64url");
      const rt = await startRuntime({
        port: vault,
        host: "node",
        listenPort: 0,
        token: () => token,
        allowedOrigins: [],
        writeMode: false,
        stateStore: new FsStateStore(stateDir),
        sqlWasm,
        version: "bench",
      });
      const client = new Client({ name: "vault-mcp-bench", version: "1.0.0" });
      await client.connect(new StreamableHTTPClientTransport(new URL(rt.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
      const listed = await client.listTools();
      const tools = listed.tools.map((x) => x.name);
      if (!tools.includes("search")) {
        httpNote = "the server does not offer the search tool yet";
      } else {
        // Let the runtime's index finish loading/reconciling before timing.
        const first = await client.callTool({ name: "search", arguments: { query: queries[0], wait_for_pending_writes: true } });
        if (first.isError) {
          httpNote = `search failed: ${JSON.stringify(first.content).slice(0, 200)}`;
        } else {
          for (let i = 0; i < 100 && (first._meta as { index_stale?: boolean } | undefined)?.index_stale; i++) {
            const again = await client.callTool({ name: "search", arguments: { query: queries[0], wait_for_pending_writes: true } });
            if (!(again._meta as { index_stale?: boolean } | undefined)?.index_stale) break;
          }
          // Warm up as the in-process measurement does (20 queries), so both time a running server.
          for (const q of queries.slice(0, 20)) await client.callTool({ name: "search", arguments: { query: q } });
          const hs: number[] = [];
          for (const q of queries.slice(0, Math.min(queries.length, 200))) {
            const s = performance.now();
            await client.callTool({ name: "search", arguments: { query: q } });
            hs.push(performance.now() - s);
          }
          http = latency(hs);
          log(`  search over MCP HTTP: p50 ${http.p50.toFixed(2)} ms, p99 ${http.p99.toFixed(2)} ms`);
          // Bytes a client receives (the JSON-RPC body): what a model pays for in its context.
          const bytes: number[] = [];
          for (const q of queries.slice(0, 50)) {
            const result = await client.callTool({ name: "search", arguments: { query: q } });
            bytes.push(Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 1, result })));
          }
          bytes.sort((a, b) => a - b);
          const listBytes = Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 1, result: listed }));
          answerBytes = { searchP50: bytes[Math.floor(bytes.length / 2)], searchMax: bytes[bytes.length - 1], toolsList: listBytes, tools: tools.length };
          log(`  answer sizes: default search p50 ${answerBytes.searchP50} B, max ${answerBytes.searchMax} B (budget ${budgets.search_default_answer_bytes}); tools/list ${listBytes} B for ${tools.length} tools (headless, read-only)`);
        }
      }
      await client.close();
      await rt.close();
    } catch (e) {
      httpNote = `not measured: ${e instanceof Error ? e.message : String(e)}`;
    }
    if (httpNote) log(`  HTTP: ${httpNote}`);
  }

  // The FTS5 reference on the same chunks and tokens.
  let fts5: SizeResult["fts5"] = null;
  let agreement: SizeResult["agreement"] = null;
  try {
    const dbFile = path.join(work, `fts5-${label}.db`);
    const w = FIELD_WEIGHTS;
    const ref = new Fts5Reference((s) => tokenize(s), [w.title, w.aliases, w.headings, w.tags, w.body] as ColumnWeights, dbFile);
    // Same work as our build: read, chunk (our chunker), tokenize (our tokenizer), then insert.
    t = performance.now();
    cpu = process.cpuUsage();
    const rows: RefChunk[] = [];
    for (const p of notePaths) {
      const text = readFileSync(path.join(root, p), "utf8");
      for (const c of chunkNote(p, text, vault.getMetadata(p))) {
        rows.push(ref.tokenizeChunk({ path: p, title: c.title, aliases: c.aliases.join(" "), headings: c.headings.join(" "), tags: c.tags.join(" "), body: c.text }));
      }
    }
    const prepMs = performance.now() - t;
    t = performance.now();
    ref.insert(rows);
    const insertMs = performance.now() - t;
    const buildMs = prepMs + insertMs;
    const buildCpuMs = cpuMs(cpu);
    const chunks = rows.length;
    rows.length = 0;
    for (const q of queries.slice(0, 20)) ref.search(q, 10);
    const fs: number[] = [];
    cpu = process.cpuUsage();
    let top1 = 0;
    let overlap = 0;
    let compared = 0;
    for (const q of queries) {
      const s = performance.now();
      const hits = ref.search(q, 10);
      fs.push(performance.now() - s);
      const ours = ourTop.get(q) ?? [];
      if (hits.length && ours.length) {
        compared++;
        if (hits[0].path === ours[0]) top1++;
        const set = new Set(ours);
        overlap += hits.filter((x) => set.has(x.path)).length / Math.max(hits.length, ours.length);
      }
    }
    const searchCpuMean = cpuMs(cpu) / queries.length;
    ref.close();
    fts5 = { buildMs, buildCpuMs, searchCpuMeanMs: searchCpuMean, prepMs, insertMs, search: latency(fs), dbBytes: statSync(dbFile).size, chunks };
    agreement = compared ? { top1: top1 / compared, overlap10: overlap / compared } : null;
    log(`  FTS5 reference: build ${buildMs.toFixed(0)} ms = read+chunk+tokenize ${prepMs.toFixed(0)} + insert ${insertMs.toFixed(0)} (${chunks} chunks), search p50 ${fts5.search.p50.toFixed(2)} ms, p99 ${fts5.search.p99.toFixed(2)} ms`);
  } catch (e) {
    log(`  FTS5 reference not measured: ${e instanceof Error ? e.message : String(e)}`);
  }

  // Brute force: read every file for every query (few queries: it is slow by design).
  const bq = queries.slice(0, notePaths.length > 20000 ? 3 : notePaths.length > 5000 ? 10 : 30);
  const bs: number[] = [];
  for (const q of bq) {
    const s = performance.now();
    bruteForceSearch(root, notePaths, q, 10);
    bs.push(performance.now() - s);
  }
  const brute = { search: latency(bs) };
  log(`  brute-force scan: p50 ${brute.search.p50.toFixed(1)} ms over ${bs.length} queries`);

  await vault.close();
  return {
    label,
    notes: notePaths.length,
    megabytes,
    ours: {
      vaultOpenMs,
      coldBuildMs,
      coldBuildCpuMs,
      searchCpuMeanMs,
      maxEventLoopBlockMs,
      warmStartMs,
      freshWarmStartMs: fresh?.ms ?? null,
      freshWarmStartRunsMs: fresh?.all ?? [],
      freshWarmMaxBlockMs: fresh?.maxBlockMs ?? null,
      freshFirstQueryMs: fresh?.firstQueryMs ?? null,
      warmReconcileMs,
      search,
      http,
      httpNote,
      answerBytes,
      writeToSearchable,
      rssGrowthMB: mb(mem.rss - rss0),
      heapUsedMB: mb(mem.heapUsed),
      rssMB: mb(mem.rss),
      indexBytes,
      persistMaxStepMs,
      persistFiles,
      maxBlockAfterBuildMs,
      warmMaxBlockMs,
    },
    graph,
    semantic,
    findNotes,
    grep,
    fts5,
    brute,
    agreement,
  };
}

interface Target {
  name: string;
  limit: number;
  unit: string;
  value: (r: SizeResult) => number | null;
}

const TARGETS: Target[] = [
  { name: "cold build", limit: 6000, unit: "ms", value: (r) => r.ours.coldBuildMs },
  { name: "warm start → first answer (fresh process, median of 3)", limit: 500, unit: "ms", value: (r) => r.ours.freshWarmStartMs },
  { name: "search p50 (in-process)", limit: 2, unit: "ms", value: (r) => r.ours.search.p50 },
  { name: "search p99 (in-process)", limit: 15, unit: "ms", value: (r) => r.ours.search.p99 },
  { name: "search p50 (MCP HTTP)", limit: 5, unit: "ms", value: (r) => r.ours.http?.p50 ?? null },
  { name: "write → searchable (max)", limit: 100, unit: "ms", value: (r) => r.ours.writeToSearchable.max },
  { name: "longest event-loop block during build", limit: 50, unit: "ms", value: (r) => r.ours.maxEventLoopBlockMs },
  { name: "longest event-loop block after build (writes, save)", limit: 50, unit: "ms", value: (r) => r.ours.maxBlockAfterBuildMs },
  { name: "longest event-loop block loading the index", limit: 50, unit: "ms", value: (r) => Math.max(r.ours.warmMaxBlockMs, r.ours.freshWarmMaxBlockMs ?? 0) },
  { name: "graph tools p50 (slowest tool)", limit: 5, unit: "ms", value: (r) => (r.graph ? Math.max(...Object.values(r.graph.queries).map((q) => q.p50)) : null) },
  { name: "RSS growth", limit: 250, unit: "MB", value: (r) => r.ours.rssGrowthMB },
  { name: "semantic search p50 (in-process, query embedding apart)", limit: 5, unit: "ms", value: (r) => r.semantic?.semanticP50Ms ?? null },
  { name: "hybrid search p50 (in-process, query embedding apart)", limit: 8, unit: "ms", value: (r) => r.semantic?.hybridP50Ms ?? null },
  { name: "get_similar p50", limit: 10, unit: "ms", value: (r) => r.semantic?.similarP50Ms ?? null },
];

function f(n: number | null | undefined, digits = 1): string {
  return n === null || n === undefined || !Number.isFinite(n) ? "n/a" : n.toFixed(digits);
}

function ratio(a: number | null | undefined, b: number | null | undefined): string {
  return a && b && Number.isFinite(a) && Number.isFinite(b) ? `${(a / b).toFixed(2)}×` : "n/a";
}

function table(results: SizeResult[], mainJsBytes: number | null): string {
  const cols = results.map((r) => `${r.label} (${r.notes} notes, ${r.megabytes.toFixed(1)} MB)`);
  const rows: [string, (r: SizeResult) => string][] = [
    ["vault open: list + parse (ms)", (r) => f(r.ours.vaultOpenMs, 0)],
    ["cold build (ms)", (r) => f(r.ours.coldBuildMs, 0)],
    ["FTS5 build, same chunks (ms)", (r) => f(r.fts5?.buildMs, 0)],
    ["  of which read + chunk + tokenize / FTS5 insert (ms)", (r) => (r.fts5 ? `${f(r.fts5.prepMs, 0)} / ${f(r.fts5.insertMs, 0)}` : "n/a")],
    ["cold build vs FTS5", (r) => ratio(r.ours.coldBuildMs, r.fts5?.buildMs)],
    ["CPU time: cold build / FTS5 build (ms)", (r) => `${f(r.ours.coldBuildCpuMs, 0)} / ${f(r.fts5?.buildCpuMs, 0)} (${ratio(r.ours.coldBuildCpuMs, r.fts5?.buildCpuMs)})`],
    ["warm start → first answer, fresh process: median (runs) (ms)", (r) => (r.ours.freshWarmStartMs === null ? "n/a" : `${f(r.ours.freshWarmStartMs, 0)} (${r.ours.freshWarmStartRunsMs.map((x) => f(x, 0)).join(", ")})`)],
    ["warm start → first answer, in this process (ms)", (r) => f(r.ours.warmStartMs, 0)],
    ["first query in a fresh process, the broadest bench query (one task) (ms)", (r) => f(r.ours.freshFirstQueryMs, 0)],
    ["warm start → reconciled (ms)", (r) => f(r.ours.warmReconcileMs, 0)],
    ["search p50 / p99 (ms)", (r) => `${f(r.ours.search.p50, 2)} / ${f(r.ours.search.p99, 2)}`],
    ["FTS5 search p50 / p99 (ms)", (r) => (r.fts5 ? `${f(r.fts5.search.p50, 2)} / ${f(r.fts5.search.p99, 2)}` : "n/a")],
    ["CPU per query: ours / FTS5 (ms)", (r) => `${f(r.ours.searchCpuMeanMs, 2)} / ${f(r.fts5?.searchCpuMeanMs, 2)} (${ratio(r.ours.searchCpuMeanMs, r.fts5?.searchCpuMeanMs)})`],
    ["search p50 / p99 vs FTS5", (r) => `${ratio(r.ours.search.p50, r.fts5?.search.p50)} / ${ratio(r.ours.search.p99, r.fts5?.search.p99)}`],
    ["brute-force scan p50 (ms)", (r) => f(r.brute?.search.p50, 1)],
    ["brute force vs FTS5 (p50)", (r) => ratio(r.brute?.search.p50, r.fts5?.search.p50)],
    ["search over MCP HTTP p50 / p99 (ms)", (r) => (r.ours.http ? `${f(r.ours.http.p50, 2)} / ${f(r.ours.http.p99, 2)}` : (r.ours.httpNote ?? "n/a"))],
    ["default search answer p50 / max (bytes)", (r) => (r.ours.answerBytes ? `${r.ours.answerBytes.searchP50} / ${r.ours.answerBytes.searchMax}` : "n/a")],
    ["tools/list, headless read-only (bytes)", (r) => (r.ours.answerBytes ? `${r.ours.answerBytes.toolsList} (${r.ours.answerBytes.tools} tools)` : "n/a")],
    ["write → searchable p50 / max (ms)", (r) => `${f(r.ours.writeToSearchable.p50, 0)} / ${f(r.ours.writeToSearchable.max, 0)}`],
    ["longest event-loop block in build (ms)", (r) => f(r.ours.maxEventLoopBlockMs, 1)],
    ["longest event-loop block after build: writes + save (ms)", (r) => f(r.ours.maxBlockAfterBuildMs, 1)],
    ["save: longest step / files (ms)", (r) => `${f(r.ours.persistMaxStepMs, 1)} / ${r.ours.persistFiles ?? "n/a"}`],
    ["longest event-loop block loading the index and answering a first query: this process / fresh (ms)", (r) => `${f(r.ours.warmMaxBlockMs, 1)} / ${f(r.ours.freshWarmMaxBlockMs, 1)}`],
    ["RSS growth / RSS / heap used (MB)", (r) => `${f(r.ours.rssGrowthMB, 0)} / ${f(r.ours.rssMB, 0)} / ${f(r.ours.heapUsedMB, 0)}`],
    ["find_notes: first call / p50 / p99 (ms)", (r) => `${f(r.findNotes.firstMs, 0)} / ${f(r.findNotes.search.p50, 2)} / ${f(r.findNotes.search.p99, 2)}`],
    ["find_notes: title (prefix, typo) in top 3", (r) => `${(r.findNotes.hit3 * 100).toFixed(0)}%`],
    ["grep, whole vault, p50 (ms)", (r) => f(r.grep.p50, 0)],
    ["index on disk (MB)", (r) => f(mb(r.ours.indexBytes), 1)],
    ["FTS5 db on disk (MB)", (r) => f(r.fts5 ? mb(r.fts5.dbBytes) : null, 1)],
    ["ranking vs FTS5: same top-1 / top-10 overlap", (r) => (r.agreement ? `${(r.agreement.top1 * 100).toFixed(0)}% / ${(r.agreement.overlap10 * 100).toFixed(0)}%` : "n/a")],
    ["graph: build (ms) / longest block (ms)", (r) => (r.graph ? `${r.graph.build_ms} / ${r.graph.build_max_block_ms}` : "n/a")],
    ["semantic: sections × dimension, embedded in (s) (deterministic embedder)", (r) => (r.semantic ? `${r.semantic.chunks} × ${r.semantic.dimension}, ${f(r.semantic.buildMs / 1000, 1)}` : "n/a")],
    ["semantic / hybrid search p50 (ms), query embedding apart", (r) => (r.semantic ? `${f(r.semantic.semanticP50Ms, 2)} / ${f(r.semantic.hybridP50Ms, 2)}` : "n/a")],
    ["nearest-section scan p50: int8 (ours) / float32 / Orama (ms)", (r) => (r.semantic ? `${f(r.semantic.int8ScanP50Ms, 2)} / ${f(r.semantic.float32ScanP50Ms, 2)} / ${f(r.semantic.orama?.searchP50Ms, 2)}` : "n/a")],
    ["int8 recall@10 vs float32", (r) => (r.semantic ? f(r.semantic.int8RecallAt10, 3) : "n/a")],
    ["get_similar p50 (ms)", (r) => f(r.semantic?.similarP50Ms, 2)],
    ["vectors: memory / on disk (MB)", (r) => (r.semantic ? `${f(mb(r.semantic.vectorMemoryBytes), 1)} / ${f(mb(r.semantic.fileBytes), 1)}` : "n/a")],
  ];
  const graphTools = [...new Set(results.flatMap((r) => Object.keys(r.graph?.queries ?? {})))];
  for (const tool of graphTools) {
    rows.push([`graph ${tool} p50 / p95 (ms)`, (r) => {
      const q = r.graph?.queries[tool];
      return q ? `${f(q.p50, 2)} / ${f(q.p95, 2)}` : "n/a";
    }]);
  }
  const out: string[] = [];
  out.push(`| metric | ${cols.join(" | ")} |`, `|---|${cols.map(() => "---").join("|")}|`);
  for (const [name, fn] of rows) out.push(`| ${name} | ${results.map(fn).join(" | ")} |`);
  out.push("", `main.js: ${mainJsBytes === null ? "not built" : `${(mainJsBytes / 1024).toFixed(0)} KB`}`);
  return out.join("\n");
}

function verdicts(results: SizeResult[]): { lines: string[]; checks: { target: string; limit: number; value: number | null; pass: boolean | null }[] } {
  const at = results.find((r) => r.label === "10k") ?? null;
  const lines: string[] = [];
  const checks: { target: string; limit: number; value: number | null; pass: boolean | null }[] = [];
  if (!at) {
    lines.push("(No 10k-note run: targets are defined at 10k notes; run with --sizes including 10000.)");
    return { lines, checks };
  }
  lines.push("Targets at 10k notes:", "");
  for (const t of TARGETS) {
    const v = t.value(at);
    const pass = v === null ? null : v <= t.limit;
    checks.push({ target: t.name, limit: t.limit, value: v, pass });
    lines.push(`- ${pass === null ? "SKIP" : pass ? "PASS" : "FAIL"} ${t.name}: ${f(v, t.unit === "ms" && t.limit < 10 ? 2 : 0)} ${t.unit} (target ≤ ${t.limit} ${t.unit})`);
  }
  return { lines, checks };
}

/**
 * Garbage-collection pauses (V8 reports them through perf_hooks), so a long event-loop block can be
 * told apart: a collection landing on a slice, or our own code.
 */
const gcPauses: { at: number; ms: number; kind: string }[] = [];
let gcObserver: PerformanceObserver | null = null;
function watchGc(): void {
  if (gcObserver) return;
  const kinds: Record<number, string> = {
    [perfConstants.NODE_PERFORMANCE_GC_MINOR]: "scavenge",
    [perfConstants.NODE_PERFORMANCE_GC_MAJOR]: "mark-compact",
    [perfConstants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental marking",
    [perfConstants.NODE_PERFORMANCE_GC_WEAKCB]: "weak callbacks",
  };
  gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as unknown as { detail?: { kind?: number } }).detail?.kind ?? 0;
      gcPauses.push({ at: e.startTime, ms: e.duration, kind: kinds[kind] ?? `kind ${kind}` });
    }
  });
  gcObserver.observe({ entryTypes: ["gc"] });
}

/** The longest garbage-collection pause between two `performance.now()` times (after the observer has caught up). */
async function longestGc(from: number, to: number): Promise<string> {
  await new Promise((r) => setTimeout(r, 0));
  let best: { ms: number; kind: string } | null = null;
  for (const g of gcPauses) if (g.at >= from && g.at <= to && (!best || g.ms > best.ms)) best = g;
  return best ? `${best.ms.toFixed(1)} ms (${best.kind})` : "none";
}

/**
 * `--warm-child <vault> <state dir> <query>`: one warm start in this fresh process, as after an
 * app restart (V8 has compiled nothing yet): opens the vault (not timed: Obsidian has it loaded
 * already), then times opening the persisted index and answering the query. Prints JSON.
 */
/**
 * `--fts5-child <vault> <queries.json>`: SQLite FTS5 over the vault's chunks (our chunker and
 * tokenizer, as in `measure`) in a process of its own, for the server measurements: prints one JSON
 * line with its build time, its search p50 in-process and the process's RSS after the searches
 * (the database on disk, as a server keeping one would; the chunks let go, after a GC).
 */
async function fts5Child(root: string, queriesFile: string): Promise<void> {
  const queries = JSON.parse(readFileSync(queriesFile, "utf8")) as string[];
  const w = FIELD_WEIGHTS;
  // On disk, as a server keeping an FTS5 index would (an in-memory database would count its pages as RSS).
  const dbFile = path.join(path.dirname(queriesFile), "fts5.db");
  const ref = new Fts5Reference((s) => tokenize(s), [w.title, w.aliases, w.headings, w.tags, w.body] as ColumnWeights, dbFile);
  const t = performance.now();
  const notePaths: string[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(dir, e.name), r);
      else if (isNotePath(r)) notePaths.push(r);
    }
  };
  walk(root, "");
  let chunks = 0;
  // In batches of 1,000 notes, so the chunks' text is not all held at once.
  for (let i = 0; i < notePaths.length; i += 1000) {
    const rows: RefChunk[] = [];
    for (const p of notePaths.slice(i, i + 1000)) {
      const text = readFileSync(path.join(root, p), "utf8");
      for (const c of chunkNote(p, text, parseNote(text))) {
        rows.push(ref.tokenizeChunk({ path: p, title: c.title, aliases: c.aliases.join(" "), headings: c.headings.join(" "), tags: c.tags.join(" "), body: c.text }));
      }
    }
    chunks += rows.length;
    ref.insert(rows);
  }
  const buildMs = performance.now() - t;
  for (const q of queries.slice(0, 20)) ref.search(q, 10);
  const lat: number[] = [];
  for (const q of queries) {
    const s = performance.now();
    ref.search(q, 10);
    lat.push(performance.now() - s);
  }
  const rss = (await settledMemory()).rss;
  ref.close();
  process.stdout.write(JSON.stringify({ buildMs, rssMB: mb(rss), searchP50Ms: latency(lat).p50, chunks }) + "\n");
}

async function warmChild(root: string, stateDir: string, query: string): Promise<void> {
  const vault = await FsVault.open(root, { watch: false });
  const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
  const svc = createSearchService({ port: vault, policy, store: new FsStateStore(stateDir), sqlWasm });
  watchGc();
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  const t = performance.now();
  await svc.start();
  // The first query is one task (see the README); the longest block counts it.
  const q = performance.now();
  const hits = (await svc.search(req(query))).hits.length;
  const end = performance.now();
  await nextTurn();
  h.disable();
  const gc = await longestGc(t, end);
  const state = svc.status().state;
  await svc.close();
  await vault.close();
  process.stdout.write(JSON.stringify({ ms: end - t, maxBlockMs: h.max / 1e6, firstQueryMs: end - q, hits, state, gc }) + "\n");
}

/** Median of `runs` warm starts, each in a fresh Node process (see `warmChild`). */
function freshWarmStarts(root: string, stateDir: string, query: string, runs: number): { ms: number; maxBlockMs: number; firstQueryMs: number; all: number[]; gc: string[] } | null {
  const all: { ms: number; maxBlockMs: number; firstQueryMs: number; gc?: string }[] = [];
  for (let i = 0; i < runs; i++) {
    const r = spawnSync(process.execPath, ["--expose-gc", process.argv[1], "--warm-child", root, stateDir, query], { encoding: "utf8", timeout: 120_000 });
    const line = r.stdout?.trim().split("\n").pop();
    if (r.status !== 0 || !line) {
      log(`  fresh-process warm start failed: ${(r.stderr ?? "").slice(0, 300)}`);
      return null;
    }
    const run = JSON.parse(line) as { ms: number; maxBlockMs: number; firstQueryMs: number; state: string; gc?: string };
    if (run.state !== "queryable") {
      // It rebuilt instead of loading: not a warm start.
      log(`  fresh-process warm start did not load the index (state ${run.state})`);
      return null;
    }
    all.push(run);
  }
  const byMs = [...all].sort((a, b) => a.ms - b.ms);
  const mid = byMs[Math.floor(byMs.length / 2)];
  return { ms: mid.ms, maxBlockMs: Math.max(...all.map((x) => x.maxBlockMs)), firstQueryMs: mid.firstQueryMs, all: all.map((x) => x.ms), gc: all.map((x) => x.gc ?? "?") };
}

async function main(): Promise<void> {
  useHostTimers(nodeTimers);
  if (process.argv[2] === "--warm-child") return warmChild(process.argv[3], process.argv[4], process.argv[5]);
  if (process.argv[2] === "--fts5-child") return fts5Child(process.argv[3], process.argv[4]);
  const args = parseArgs(process.argv.slice(2));
  watchGc();
  if (!(globalThis as { gc?: unknown }).gc) log("(run with node --expose-gc for stable memory numbers)");
  if (loadavg()[0] > cpus().length) log(`warning: load average ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs — wall-clock numbers will be inflated; compare the CPU-time rows and the ratios.`);
  const work = mkdtempSync(path.join(tmpdir(), "vault-mcp-bench-"));
  const results: SizeResult[] = [];
  const serverResults: ServerScaleResult[] = [];
  const gitResults: GitBenchResult[] = [];
  let hostile: HostileResult | null = null;
  const started = performance.now();
  try {
    const sizes = args.serverOnly ? [...args.server] : args.sizes;
    if (args.serverOnly) args.git = null;
    for (const n of args.gitOnly ? [] : [...sizes].sort((a, b) => a - b)) {
      const label = n % 1000 === 0 ? `${n / 1000}k` : String(n);
      const t = performance.now();
      if (args.varied && args.serverOnly) {
        const root = path.join(work, `vault-varied-${label}`);
        if (!existsSync(root)) generateVariedVault(root, n);
        log(`varied vault of ${n} notes at ${root}`);
        serverResults.push(await benchServerScale({ benchJs: process.argv[1], cli: path.resolve("dist/cli.js"), vault: root, notes: n, queries: variedQueries(root, args.queries), log }));
        if (!args.keep) rmSync(root, { recursive: true, force: true });
        continue;
      }
      const v = generateVault(path.join(work, `vault-${label}`), n, 42);
      log(`generated ${n} notes (${mb(v.bytes).toFixed(1)} MB, ${(v.bytes / n).toFixed(0)} B/note) in ${(performance.now() - t).toFixed(0)} ms`);
      const largest = n === Math.max(...args.sizes);
      if (!args.hostileOnly && !args.serverOnly) results.push(await measure(label, v.root, makeQueries(v, args.queries), args, work));
      if (args.server.has(n) && !args.hostileOnly) {
        serverResults.push(await benchServerScale({ benchJs: process.argv[1], cli: path.resolve("dist/cli.js"), vault: v.root, notes: n, queries: makeQueries(v, args.queries), log }));
      }
      if ((args.hostileOnly && largest) || (!args.hostileOnly && !args.serverOnly && n === 10000)) {
        log(`\n== hostile calls at ${label} (write mode, on a copy)`);
        hostile = await benchHostile(v.root, work, log);
      }
      if (!args.keep) rmSync(v.root, { recursive: true, force: true });
    }
    if (args.git) {
      const { notes, commits } = args.git;
      log(`\n== git: a generated repository of ${notes} notes and ${commits} commits`);
      // Kept between runs (generating it takes a while); reset to its generated tip each time.
      const repo = path.join(tmpdir(), `vault-mcp-bench-git-${notes}-${commits}`);
      const t = performance.now();
      await generateRepo(repo, notes, commits);
      log(`  repository ready in ${(performance.now() - t).toFixed(0)} ms`);
      const r = await benchGit(repo, `${notes / 1000}k notes, ${commits / 1000}k commits`, { writes: true, log });
      if (r) gitResults.push(r);
      if (args.vault) {
        const rv = await benchGit(args.vault, path.basename(args.vault), { writes: false, log });
        if (rv) gitResults.push(rv);
      }
    }
    if (args.vault && !args.gitOnly) {
      const vault = await FsVault.open(args.vault, { watch: false });
      const paths = vault
        .listFiles()
        .filter((x) => isNotePath(x.path) && !x.path.startsWith("."))
        .map((x) => x.path);
      await vault.close();
      // Work on a copy: the write test appends to notes.
      const copy = path.join(work, "vault-copy");
      copyTree(args.vault, copy);
      results.push(await measure(path.basename(args.vault), copy, queriesFromFolder(copy, paths, args.queries), args, work));
    }
  } finally {
    if (!args.keep) rmSync(work, { recursive: true, force: true });
    else log(`kept ${work}`);
  }

  const mainJs = path.resolve("main.js");
  const mainJsBytes = existsSync(mainJs) ? statSync(mainJs).size : null;
  const md = [results.length ? table(results, mainJsBytes) : "", hostile ? hostileTable(hostile) : "", serverResults.length ? serverScaleTable(serverResults) : "", gitResults.length ? gitTable(gitResults) : ""].filter(Boolean).join("\n\n");
  const v = verdicts(results);
  if (gitResults.length) {
    v.lines.push("", `Git targets (${gitResults[0].label}):`, "");
    for (const t of GIT_TARGETS) {
      const value = t.value(gitResults[0]);
      const pass = value === null ? null : value <= t.limit;
      v.checks.push({ target: `git: ${t.name}`, limit: t.limit, value, pass });
      v.lines.push(`- ${pass === null ? "SKIP" : pass ? "PASS" : "FAIL"} ${t.name}: ${f(value, 2)} (target ≤ ${t.limit})`);
    }
  }
  for (const r of serverResults) {
    v.lines.push("", `Headless server targets (${r.notes / 1000}k notes):`, "");
    for (const t of SERVER_TARGETS) {
      const value = t.value(r);
      const pass = Number.isFinite(value) ? value <= t.limit : null;
      v.checks.push({ target: `server ${r.notes / 1000}k: ${t.name}`, limit: t.limit, value, pass });
      v.lines.push(`- ${pass === null ? "SKIP" : pass ? "PASS" : "FAIL"} ${t.name}: ${f(value, 2)} (target ≤ ${t.limit})`);
    }
  }
  const totalS = (performance.now() - started) / 1000;
  const busy = loadavg()[0] > cpus().length ? `\n\nWARNING: the machine was busy (load average ${loadavg()[0].toFixed(1)} on ${cpus().length} CPUs): wall-clock times and pass/fail are inflated; the CPU-time rows and the ratios to FTS5 are the fairer comparison.` : "";
  process.stdout.write(`\n${md}\n\n${v.lines.join("\n")}${busy}\n\nNode ${process.version}, ${process.platform}/${process.arch}, ${cpus().length} CPUs, load average ${loadavg()[0].toFixed(1)} at the end; bench took ${totalS.toFixed(0)} s.\n`);

  mkdirSync(args.out, { recursive: true });
  const json = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, loadAverage: loadavg(), platform: `${process.platform}/${process.arch}`, seconds: totalS, mainJsBytes, results, server: serverResults, hostile, git: gitResults, targets: v.checks };
  writeFileSync(path.join(args.out, "bench.json"), JSON.stringify(json, null, 2));
  const synthetic = results.filter((r) => /^\d+k?$/.test(r.label));
  const svg = scalingSvg(
    [
      {
        title: "Search latency p50",
        unit: "ms",
        series: [
          { name: "ours (in-process)", color: "#7b3fe4", points: synthetic.map((r) => [r.notes, r.ours.search.p50]) },
          { name: "ours (MCP HTTP)", color: "#b48ef0", points: synthetic.filter((r) => r.ours.http).map((r) => [r.notes, r.ours.http!.p50]) },
          { name: "SQLite FTS5 (native)", color: "#1f8a4c", points: synthetic.filter((r) => r.fts5).map((r) => [r.notes, r.fts5!.search.p50]) },
          { name: "brute-force scan", color: "#d9480f", points: synthetic.filter((r) => r.brute).map((r) => [r.notes, r.brute!.search.p50]) },
        ],
      },
      {
        title: "Search latency p99",
        unit: "ms",
        series: [
          { name: "ours (in-process)", color: "#7b3fe4", points: synthetic.map((r) => [r.notes, r.ours.search.p99]) },
          { name: "SQLite FTS5 (native)", color: "#1f8a4c", points: synthetic.filter((r) => r.fts5).map((r) => [r.notes, r.fts5!.search.p99]) },
        ],
      },
      {
        title: "Build time",
        unit: "ms",
        series: [
          { name: "ours: cold build", color: "#7b3fe4", points: synthetic.map((r) => [r.notes, r.ours.coldBuildMs]) },
          { name: "ours: warm start", color: "#b48ef0", points: synthetic.map((r) => [r.notes, r.ours.warmStartMs]) },
          { name: "SQLite FTS5 build", color: "#1f8a4c", points: synthetic.filter((r) => r.fts5).map((r) => [r.notes, r.fts5!.buildMs]) },
        ],
      },
    ],
    `vault-mcp bench ${json.date.slice(0, 10)} · Node ${process.version} · synthetic vaults ~2.4 KB/note · same chunks and queries for every engine`,
  );
  writeFileSync(path.join(args.out, "scaling.svg"), svg);
  log(`wrote ${path.join(args.out, "bench.json")} and ${path.join(args.out, "scaling.svg")}`);
}

function copyTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const a = path.join(from, e.name);
    const b = path.join(to, e.name);
    if (e.isDirectory()) copyTree(a, b);
    else if (e.isFile()) writeFileSync(b, readFileSync(a));
  }
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    process.stderr.write(`bench failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);
