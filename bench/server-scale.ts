/**
 * The headless server measured from outside, as a user meets it (`npm run bench -- --100k`; any size
 * with `--server`): `dist/cli.js` spawned on a vault, cold (no saved index) and then warm (restarted
 * on the index it saved). Measured per phase:
 * - spawn → `/health` answers; spawn → every note searchable (a search's `_meta.index_stale` false and
 *   no `index_loading`);
 * - the server's RSS (`/proc/<pid>/status` VmRSS) once settled (state files unchanged for 3 s, then 15 s
 *   without requests), and its peak (VmHWM);
 * - search p50 over MCP HTTP with the SDK client;
 * - the longest event-loop block, seen from outside: `/health` is requested all the while, about
 *   once a millisecond (from a worker thread, apart from the bench's own client), and its longest
 *   answer (minus the median one) is the longest time the server's event loop did nothing else
 *   (sampled, so a lower bound; within ~2 ms).
 * Side by side in the same run: SQLite FTS5 in a process of its own (`--fts5-child`), built over the
 * same chunks and tokens, with its build time, its RSS, and its search p50 in-process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync, type Dirent } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Worker } from "node:worker_threads";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

export interface ServerPhase {
  /** spawn → `/health` answered. */
  healthMs: number;
  /** spawn → every note searchable. */
  searchableMs: number;
  /**
   * spawn → the vault open: every tool answers (they wait for the listing and every note's metadata;
   * search answers before, from its index). RSS, p50 and the rest are measured after it.
   */
  openMs: number;
  /** RSS once settled after `openMs` (MB). */
  rssMB: number;
  /** The process's peak RSS so far (MB). */
  peakRssMB: number;
  /** RSS after the searches, read the same way (15 s without requests): what the searches' caches and scratch left (MB). */
  rssAfterSearchesMB: number;
  /** Search over MCP HTTP once every note is searchable, one client and nothing else asking. */
  searchP50Ms: number;
  searchP99Ms: number;
  /** The same queries again: the server has warmed up over the first pass (V8 optimises its paths over a few hundred searches). */
  searchP50AgainMs: number;
  /** And a third time, with the block probe running (a `/health` request every ~1 ms, from a thread of the bench's). */
  searchP50ProbedMs: number;
  /** The longest `/health` answer minus the median one, from spawn to the end of the searches (ms). */
  maxBlockMs: number;
}

export interface ServerScaleResult {
  notes: number;
  cold: ServerPhase;
  warm: ServerPhase;
  /** The saved index: files and bytes in the state folder's index. */
  indexFiles: number;
  indexBytes: number;
  fts5: { buildMs: number; rssMB: number; searchP50Ms: number; chunks: number } | null;
  fts5Note?: string;
}

const mb = (n: number) => n / (1024 * 1024);

/** How long the server is left without requests before its RSS is read (see where it is used). */
const QUIET_BEFORE_RSS_MS = 15_000;

function procStatus(pid: number): { rss: number; hwm: number } {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(s)?.[1] ?? NaN) * 1024;
    return { rss: kb("VmRSS"), hwm: kb("VmHWM") };
  } catch {
    return { rss: NaN, hwm: NaN };
  }
}

function getHealth(port: number, timeoutMs = 60_000): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/health", method: "GET", headers: { Host: `127.0.0.1:${port}` }, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode === 200));
    });
    req.on("error", () => resolve(false));
    req.on("timeout", () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/**
 * The probe's loop, in a worker thread of its own: in the bench's main thread the answers waited
 * for the bench's own work too (its MCP client's first connection compiles the SDK; every search's
 * answer is parsed there), which read as the server's blocks in the first second of a cold start.
 * Times are absolute (`timeOrigin + now()`), the threads' clocks having different origins.
 */
const PROBE_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { request } = require("node:http");
const port = workerData.port;
const now = () => performance.timeOrigin + performance.now();
const times = [];
let slowest = -1, slowestAt = 0, running = true, pausedUntil = 0;
parentPort.on("message", (m) => {
  if (m.pause) pausedUntil = now() + m.pause;
  if (m.hold) pausedUntil = Infinity;
  if (m.resume) pausedUntil = 0;
  if (m.stop) running = false;
});
const health = () => new Promise((resolve) => {
  const req = request({ host: "127.0.0.1", port, path: "/health", method: "GET", headers: { Host: "127.0.0.1:" + port }, timeout: 60000 }, (res) => {
    res.resume();
    res.on("end", () => resolve(res.statusCode === 200));
  });
  req.on("error", () => resolve(false));
  req.on("timeout", () => { req.destroy(); resolve(false); });
  req.end();
});
(async () => {
  while (running) {
    if (now() < pausedUntil) { await new Promise((r) => setTimeout(r, 20)); continue; }
    const t = now();
    if (await health()) {
      const d = now() - t;
      times.push(d);
      if (d > slowest) { slowest = d; slowestAt = t; }
      // One request a millisecond or so, not back to back: the thread of its own would otherwise
      // flood the server (~2.5k requests a second) on a 2-core machine beside the server and the client.
      await new Promise((r) => setTimeout(r, 1));
    } else await new Promise((r) => setTimeout(r, 5));
  }
  parentPort.postMessage({ times, slowestAt });
})();
`;

/** Requests `/health` back to back (in a worker thread: see PROBE_SOURCE); `stop()` returns the answers' durations. */
function healthProbe(port: number): { stop(): Promise<number[]>; pause(ms: number): Promise<void>; hold(): Promise<void>; resume(): void; slowestAt(): number } {
  const worker = new Worker(PROBE_SOURCE, { eval: true, workerData: { port } });
  const result = new Promise<{ times: number[]; slowestAt: number }>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  /** When the slowest answer was asked for (this thread's performance.now()). */
  let slowestAt = 0;
  return {
    async stop() {
      worker.postMessage({ stop: true });
      const r = await result;
      await worker.terminate();
      slowestAt = r.slowestAt - performance.timeOrigin;
      return r.times;
    },
    slowestAt: () => slowestAt,
    /** No requests until `resume` (resolves once a request under way has had time to end). */
    async hold() {
      worker.postMessage({ hold: true });
      await new Promise((r) => setTimeout(r, 50));
    },
    resume() {
      worker.postMessage({ resume: true });
    },
    /** No requests for `ms` (resolves when the time is up). */
    async pause(ms: number) {
      worker.postMessage({ pause: ms });
      await new Promise((r) => setTimeout(r, ms));
    },
  };
}

/** The newest modification time of a file in `dir` (0 when none). */
function newestMtime(dir: string): number {
  let t = 0;
  try {
    for (const f of readdirSync(dir)) t = Math.max(t, statSync(path.join(dir, f)).mtimeMs);
  } catch {
    // Not made yet.
  }
  return t;
}

/** Waits at least `minMs`, then until no file in `dir` changed for `quietMs` (at most `maxMs`); returns the time waited. */
async function settle(dir: string, minMs: number, quietMs: number, maxMs: number): Promise<number> {
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, minMs));
  while (performance.now() - t0 < maxMs && Date.now() - newestMtime(dir) < quietMs) await new Promise((r) => setTimeout(r, 250));
  return performance.now() - t0;
}

function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
}

async function phase(cli: string, vault: string, stateDir: string, queries: string[], log: (s: string) => void, label: string): Promise<ServerPhase> {
  const port = 30000 + Math.floor(Math.random() * 20000);
  const token = randomBytes(16).toString("hex");
  const t0 = performance.now();
  const child: ChildProcess = spawn(process.execPath, [cli, vault, "--port", String(port), "--token", token, "--state-dir", stateDir, "--no-git", "--tool-timeout", "0"], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  try {
    let healthMs = NaN;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`the server exited (${child.exitCode}): ${stderr}`);
      if (await getHealth(port, 2000)) {
        healthMs = performance.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 10));
    }
    const probe = healthProbe(port);
    const client = new Client({ name: "bench", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    let searchableMs = NaN;
    for (let i = 0; ; i++) {
      const r = (await client.callTool({ name: "search", arguments: { query: queries[i % queries.length], limit: 5 } })) as { _meta?: { index_stale?: boolean; index_loading?: unknown }; structuredContent?: { index_loading?: unknown } };
      if (r._meta?.index_stale === false && !r._meta.index_loading && !r.structuredContent?.index_loading) {
        searchableMs = performance.now() - t0;
        break;
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    // The server listens before the vault is open: a tool that needs it (a read of a note that is not
    // there) answers once it is. Measured from here on: the server once its start-up is over.
    await client.callTool({ name: "read", arguments: { path: "no such note (bench).md" } });
    const openMs = performance.now() - t0;
    log(`  ${label}: /health after ${healthMs.toFixed(0)} ms, every note searchable after ${searchableMs.toFixed(0)} ms, the vault open (every tool answers) after ${openMs.toFixed(0)} ms`);
    // Let saving and background work finish before RSS is read (the plugin's steady state): at least
    // 8 s, and until no state file has changed for 3 s (a cold build's save takes longer than 8 s on
    // a busy machine). Then 15 s without requests, the /health probe's included: the server hints a
    // collection once quiet 5 s after serving requests (transport/http.ts), as it does for a client
    // that stops asking, and once more 8 s after its last hint (core/memory.ts: V8 shrinks its young
    // generation only after a quiet stretch); the probe's own garbage is not the server's steady
    // state. (Until 2026-11-26's seventh pass: 8 s, before that follow-up.)
    const settledMs = await settle(stateDir, 8000, 3000, 90_000);
    await probe.pause(QUIET_BEFORE_RSS_MS);
    const mem = procStatus(child.pid!);
    log(`  ${label}: state files settled ${(settledMs / 1000).toFixed(1)} s after the vault opened; RSS read after ${QUIET_BEFORE_RSS_MS / 1000} s without requests`);
    for (const q of queries.slice(0, 20)) await client.callTool({ name: "search", arguments: { query: q } });
    const searches = async (): Promise<number[]> => {
      const lat: number[] = [];
      for (const q of queries) {
        const s = performance.now();
        await client.callTool({ name: "search", arguments: { query: q } });
        lat.push(performance.now() - s);
      }
      return lat;
    };
    // The queries three times: twice as one client meets them (the probe held: on two cores its
    // thread, the server and the client compete, and its ~1k requests a second take server time
    // too), the first pass the target's, then with the probe, for the blocks while searching.
    await probe.hold();
    const lat = await searches();
    const again = await searches();
    probe.resume();
    const probed = await searches();
    const health = await probe.stop();
    await new Promise((res) => setTimeout(res, QUIET_BEFORE_RSS_MS));
    const afterSearches = procStatus(child.pid!);
    await client.close();
    const phaseResult: ServerPhase = {
      healthMs,
      searchableMs,
      openMs,
      rssMB: mb(mem.rss),
      peakRssMB: mb(afterSearches.hwm),
      rssAfterSearchesMB: mb(afterSearches.rss),
      searchP50Ms: pct(lat, 0.5),
      searchP99Ms: pct(lat, 0.99),
      searchP50AgainMs: pct(again, 0.5),
      searchP50ProbedMs: pct(probed, 0.5),
      maxBlockMs: Math.max(0, Math.max(...health) - pct(health, 0.5)),
    };
    // When the longest block was, against the phase's landmarks (to tell start-up, saving and searching apart).
    const at = (probe.slowestAt() - t0) / 1000;
    const when = at * 1000 < searchableMs ? "before every note was searchable" : at * 1000 < openMs ? "before the vault was open" : at * 1000 < openMs + settledMs ? "while it saved and settled" : "during the searches";
    log(`  ${label}: RSS ${phaseResult.rssMB.toFixed(0)} MB (after the searches ${phaseResult.rssAfterSearchesMB.toFixed(0)}, peak ${phaseResult.peakRssMB.toFixed(0)}), search p50 ${phaseResult.searchP50Ms.toFixed(2)} ms over HTTP (the same queries again ${phaseResult.searchP50AgainMs.toFixed(2)}, a third time with the block probe ${phaseResult.searchP50ProbedMs.toFixed(2)}), longest block ${phaseResult.maxBlockMs.toFixed(0)} ms at ${at.toFixed(1)} s, ${when} (${health.length} /health samples)`);
    return phaseResult;
  } finally {
    child.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15000))]);
    if (child.exitCode === null) child.kill("SIGKILL");
  }
}

function dirStats(dir: string): { files: number; bytes: number } {
  let files = 0;
  let bytes = 0;
  const walk = (d: string) => {
    for (const e of readdirSafe(d)) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        files++;
        bytes += statSafe(p);
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

function readdirSafe(d: string): Dirent[] {
  try {
    return readdirSync(d, { withFileTypes: true });
  } catch {
    return [];
  }
}
function statSafe(p: string): number {
  try {
    return statSync(p).size;
  } catch {
    return 0;
  }
}

/** FTS5 over the same chunks, in a process of its own (this bench script run with `--fts5-child`). */
function fts5InChild(benchJs: string, vault: string, queriesFile: string): Promise<ServerScaleResult["fts5"]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--expose-gc", benchJs, "--fts5-child", vault, queriesFile], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-2000)));
    child.on("exit", (code) => {
      if (code !== 0) return reject(new Error(`FTS5 child exited ${code}: ${err}`));
      try {
        resolve(JSON.parse(out.trim().split("\n").pop()!) as ServerScaleResult["fts5"]);
      } catch (e) {
        reject(e instanceof Error ? e : new Error(String(e)));
      }
    });
  });
}

export async function benchServerScale(opts: { benchJs: string; cli: string; vault: string; notes: number; queries: string[]; log: (s: string) => void }): Promise<ServerScaleResult> {
  const { log } = opts;
  const work = mkdtempSync(path.join(tmpdir(), "vault-mcp-server-scale-"));
  const stateDir = path.join(work, "state");
  try {
    log(`\n== the headless server on ${opts.notes} notes, spawned (cold, then warm)`);
    const cold = await phase(opts.cli, opts.vault, stateDir, opts.queries, log, "cold");
    const idx = dirStats(stateDir);
    const warm = await phase(opts.cli, opts.vault, stateDir, opts.queries, log, "warm");
    let fts5: ServerScaleResult["fts5"] = null;
    let fts5Note: string | undefined;
    try {
      const qf = path.join(work, "queries.json");
      writeFileSync(qf, JSON.stringify(opts.queries));
      fts5 = await fts5InChild(opts.benchJs, opts.vault, qf);
      if (fts5) log(`  FTS5 in its own process: built in ${fts5.buildMs.toFixed(0)} ms (${fts5.chunks} chunks), RSS ${fts5.rssMB.toFixed(0)} MB, search p50 ${fts5.searchP50Ms.toFixed(2)} ms in-process`);
    } catch (e) {
      fts5Note = e instanceof Error ? e.message : String(e);
      log(`  FTS5 not measured: ${fts5Note}`);
    }
    return { notes: opts.notes, cold, warm, indexFiles: idx.files, indexBytes: idx.bytes, fts5, ...(fts5Note ? { fts5Note } : {}) };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

export const SERVER_TARGETS: { name: string; limit: number; value: (r: ServerScaleResult) => number }[] = [
  { name: "cold build, spawn → fully indexed (s)", limit: 60, value: (r) => r.cold.searchableMs / 1000 },
  { name: "cold: spawn → /health (s)", limit: 1, value: (r) => r.cold.healthMs / 1000 },
  { name: "RSS after the cold build (MB)", limit: 500, value: (r) => r.cold.rssMB },
  { name: "warm: spawn → /health (s)", limit: 1, value: (r) => r.warm.healthMs / 1000 },
  { name: "warm: spawn → every note searchable (s)", limit: 3, value: (r) => r.warm.searchableMs / 1000 },
  { name: "RSS after a warm restart (MB)", limit: 400, value: (r) => r.warm.rssMB },
  { name: "search p50 over HTTP, cold (ms)", limit: 5, value: (r) => r.cold.searchP50Ms },
  { name: "search p50 over HTTP, warm (ms)", limit: 5, value: (r) => r.warm.searchP50Ms },
  { name: "longest event-loop block, any phase (ms)", limit: 50, value: (r) => Math.max(r.cold.maxBlockMs, r.warm.maxBlockMs) },
];

export function serverScaleTable(rs: ServerScaleResult[]): string {
  const f = (x: number, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : "n/a");
  const lines = [`| headless server, spawned | ${rs.map((r) => `${r.notes / 1000}k notes`).join(" | ")} | target |`, `|---|${rs.map(() => "---|").join("")}---|`];
  for (const t of SERVER_TARGETS) {
    lines.push(`| ${t.name} | ${rs.map((r) => { const v = t.value(r); return `${f(v, v < 10 ? 2 : 0)} ${v <= t.limit ? "✓" : "✗"}`; }).join(" | ")} | ≤ ${t.limit} |`);
  }
  lines.push(`| spawn → the vault open, every tool answers: cold / warm (s) | ${rs.map((r) => `${f(r.cold.openMs / 1000, 1)} / ${f(r.warm.openMs / 1000, 1)}`).join(" | ")} | |`);
  lines.push(`| RSS after the searches and 15 s without requests, cold / warm (MB) | ${rs.map((r) => `${f(r.cold.rssAfterSearchesMB, 0)} / ${f(r.warm.rssAfterSearchesMB, 0)}`).join(" | ")} | |`);
  lines.push(`| peak RSS, cold / warm (MB) | ${rs.map((r) => `${f(r.cold.peakRssMB, 0)} / ${f(r.warm.peakRssMB, 0)}`).join(" | ")} | |`);
  lines.push(`| the same queries again: p50, cold / warm (ms) | ${rs.map((r) => `${f(r.cold.searchP50AgainMs, 2)} / ${f(r.warm.searchP50AgainMs, 2)}`).join(" | ")} | |`);
  lines.push(`| a third time, the block probe running: p50, cold / warm (ms) | ${rs.map((r) => `${f(r.cold.searchP50ProbedMs, 2)} / ${f(r.warm.searchP50ProbedMs, 2)}`).join(" | ")} | |`);
  lines.push(`| search p99 over HTTP, cold / warm (ms) | ${rs.map((r) => `${f(r.cold.searchP99Ms, 2)} / ${f(r.warm.searchP99Ms, 2)}`).join(" | ")} | |`);
  lines.push(`| saved index: files / MB | ${rs.map((r) => `${r.indexFiles} / ${f(mb(r.indexBytes), 0)}`).join(" | ")} | |`);
  lines.push(`| SQLite FTS5, own process: build (s) / RSS (MB) / search p50 in-process (ms) | ${rs.map((r) => (r.fts5 ? `${f(r.fts5.buildMs / 1000, 1)} / ${f(r.fts5.rssMB, 0)} / ${f(r.fts5.searchP50Ms, 2)}` : "n/a")).join(" | ")} | |`);
  return lines.join("\n");
}
