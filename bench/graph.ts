import type { AccessPolicy } from "../src/core/policy";
import { isNotePath, type VaultPort } from "../src/core/vault";
import type { MentionSearch } from "../src/core/graph/mentions";
import { createGraphService, type GraphService } from "../src/core/graph/service";
import type { GraphScheduler } from "../src/core/graph/types";
import { mulberry32 } from "../src/core/random";
import { setTimer } from "../src/core/timers";

export interface LatencyStats {
  n: number;
  p50: number;
  p95: number;
  max: number;
}

export interface GraphBenchResult {
  notes: number;
  links: number;
  /** Wall time of the initial build (slices and yields included). */
  build_ms: number;
  /** Longest stretch the build kept the event loop (between two yields). */
  build_max_block_ms: number;
  /** Per graph query, in-process milliseconds. */
  queries: Record<string, LatencyStats>;
}

function stats(samples: number[]): LatencyStats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? 0;
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { n: s.length, p50: r(at(0.5)), p95: r(at(0.95)), max: r(s[s.length - 1] ?? 0) };
}


/**
 * Measures the graph over a ready vault port: the build (and its longest event-loop block), then each
 * query over `samples` notes picked with a fixed seed. For the bench (`bench/`): call it with the
 * FsVault of a generated vault; pass `search` to time unlinked mentions through the keyword index
 * (without it mentions are skipped: a full scan reads every note and is not a graph query).
 */
export async function benchGraph(
  port: VaultPort,
  policy: AccessPolicy,
  opts: { samples?: number; seed?: number; search?: MentionSearch; /** Clock for query timings (default `performance.now`); a CPU-time clock is steadier on a busy machine. */ clock?: () => number } = {},
): Promise<GraphBenchResult> {
  await port.ready();
  const samples = opts.samples ?? 200;
  let maxBlock = 0;
  let building = true;
  let sliceStart = performance.now();
  const scheduler: GraphScheduler = {
    now: () => performance.now(),
    yield: () =>
      new Promise<void>((resolve) => {
        if (building) maxBlock = Math.max(maxBlock, performance.now() - sliceStart);
        setTimer(() => {
          sliceStart = performance.now();
          resolve();
        }, 0);
      }),
  };
  const graph: GraphService = createGraphService({ port, policy, search: opts.search, scheduler });
  const t0 = performance.now();
  sliceStart = t0;
  await graph.sync();
  const buildMs = performance.now() - t0;
  maxBlock = Math.max(maxBlock, performance.now() - sliceStart);
  building = false;

  const notes = port
    .listFiles()
    .filter((f) => isNotePath(f.path) && !policy.isHidden(f.path))
    .map((f) => f.path)
    .sort();
  const r = mulberry32(opts.seed ?? 11);
  const pick = () => notes[Math.floor(r() * notes.length)];
  const times: Record<string, number[]> = {};
  const clock = opts.clock ?? (() => performance.now());
  const time = async (name: string, fn: () => Promise<unknown>) => {
    const s = clock();
    await fn();
    (times[name] ??= []).push(clock() - s);
  };
  for (let i = 0; i < samples; i++) {
    const p = pick();
    await time("get_backlinks", () => graph.backlinks(p));
    await time("get_outlinks", () => graph.outlinks(p));
    await time("get_connection_path", () => graph.connectionPath(p, pick()));
    await time("get_context(no mentions)", () => graph.context(p, { mentions: 0 }));
    if (opts.search) {
      await time("get_unlinked_mentions", () => graph.unlinkedMentions(p, { limit: 30 }));
      await time("get_context", () => graph.context(p));
    }
    if (i < Math.min(samples, 50)) {
      await time("get_broken_links", () => graph.brokenLinks({ limit: 200 }));
      await time("get_orphan_notes", () => graph.orphans());
      await time("get_most_linked", () => graph.mostLinked());
      await time("get_recent", () => graph.recent());
    }
  }
  const status = graph.status();
  graph.close();
  const queries: Record<string, LatencyStats> = {};
  for (const [k, v] of Object.entries(times)) queries[k] = stats(v);
  return { notes: status.notes, links: status.links, build_ms: Math.round(buildMs), build_max_block_ms: Math.round(maxBlock * 10) / 10, queries };
}
