/**
 * Listing a vault folder on disk: a recursive scan that skips dot-entries and the config folder,
 * follows symbolic links only to inside the vault (and never round a cycle), and gives the event loop
 * back every ~5 ms; or, for the first listing, the same walk done by a worker thread (`listInWorker`,
 * scan-worker.ts). Returns entries; it must not change the vault's picture in memory (the vault does).
 */
import { promises as fsp, statSync, type Dirent, type Stats } from "node:fs";
import * as nodePath from "node:path";
import { Worker } from "node:worker_threads";
import { yieldToEventLoop } from "../../core/time-slice";
import { isOurTempName } from "../common/leftovers";
import type { LogLevel } from "../common/runtime";
import { entryNames, SCAN_NUMS, type FileFacts, type ScanLink, type ScanMessage, type ScanWorkerData } from "./scan-protocol";
import type { VaultPaths } from "./vault-paths";

export interface ScanEntry {
  kind: "file" | "folder";
  /** Vault path (NFC). */
  vp: string;
  /** Disk-relative path, as the file system spells it. */
  dp: string;
  st?: FileFacts;
}

/** Runs at most a given number of file system calls at once. */
export type Limiter = <T>(fn: () => Promise<T>) => Promise<T>;

export function limiter(n: number): Limiter {
  let active = 0;
  const queue: (() => void)[] = [];
  return async <T>(fn: () => Promise<T>): Promise<T> => {
    if (active >= n) await new Promise<void>((r) => queue.push(r));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

/**
 * How long a run of synchronous file work may go before it lets other work run. 5 ms, not 10: in the
 * first 5 s of opening a 100k-note vault, a `/health` flood was answered twice as often (814–834 vs
 * 439–444 answers, three runs each), its slowest answers 29–38 ms instead of 36–43 (the first one
 * aside), and opening took 4.44 s instead of 4.39.
 */
const SLICE_MS = 5;

/**
 * Lets other work run once SLICE_MS of synchronous file work have gone by (scanning, reading every
 * note). Shared by concurrent callers (a scan's folders are listed at once): when one yields, the
 * others wait for the same turn, and the first to resume starts the next slice for all — each
 * yielding on its own would queue one immediate per folder, and Node runs every queued immediate
 * in one turn of the event loop, slice after slice (hundreds of ms in a vault of many folders).
 */
export class Breather {
  /** When the current run of synchronous file work began. */
  private sliceStart = 0;
  private turn: Promise<void> | null = null;

  breathe(): Promise<void> | undefined {
    if (this.turn) return this.turn;
    if (performance.now() - this.sliceStart < SLICE_MS) return undefined;
    this.turn = yieldToEventLoop().then(() => {
      this.turn = null;
      this.sliceStart = performance.now();
    });
    return this.turn;
  }
}

export interface ScanContext {
  paths: VaultPaths;
  breather: Breather;
  log: (level: LogLevel, message: string) => void;
  /** Our own temp files the listing passed by (dot-named: never listed), by disk-relative path. */
  leftovers?: string[];
  /**
   * Takes each plain file as it is found, instead of `out`: its Stats (with four Dates on Node 20)
   * then die young, where 100k of them kept to the end of the scan were promoted and collected late.
   */
  onFile?: (vp: string, dp: string, st: FileFacts) => void;
}

/**
 * Lists the folder at vault path `vp0` (disk path `dp0`, real path `real0`) and everything below it
 * into `out`. `chain`: the real paths of the folders above (a link back to one of them is a cycle).
 */
export async function scanTree(ctx: ScanContext, vp0: string, dp0: string, real0: string, chain: string[], out: ScanEntry[], limit: Limiter): Promise<void> {
  const { paths, log } = ctx;
  let entries: Dirent[];
  try {
    entries = await limit(() => fsp.readdir(paths.abs(dp0), { withFileTypes: true }));
  } catch (e) {
    log("warn", `Could not list "${vp0}": ${(e as Error).message}`);
    return;
  }
  const jobs: Promise<void>[] = [];
  for (const e of entries) {
    const name = e.name;
    if (name.startsWith(".")) {
      if (ctx.leftovers && e.isFile() && isOurTempName(name)) ctx.leftovers.push(dp0 ? `${dp0}/${name}` : name);
      continue;
    }
    const names = entryNames(name, vp0, dp0, real0, paths.configDir, nodePath.sep);
    if (!names) continue;
    const { vp, dp, real } = names;
    if (e.isSymbolicLink()) jobs.push(scanLink(ctx, vp, dp, chain, out, limit));
    else if (e.isDirectory()) {
      out.push({ kind: "folder", vp, dp });
      jobs.push(scanTree(ctx, vp, dp, real, [...chain, real], out, limit));
    } else if (e.isFile()) {
      // Synchronously: a stat is a syscall of microseconds, an asynchronous one ~60 µs of main-thread time.
      try {
        const st = statSync(real, { throwIfNoEntry: false }); // undefined: gone meanwhile
        if (st) {
          if (ctx.onFile) ctx.onFile(vp, dp, st);
          else out.push({ kind: "file", vp, dp, st });
        }
      } catch {
        /* not ours to read */
      }
      const b = ctx.breather.breathe();
      if (b) await b;
    }
  }
  await Promise.all(jobs);
}

/**
 * A symbolic link at vault path `vp` (disk path `dp`) in a folder whose real path and those above it
 * are `chain`: followed when its target is inside the vault
 * (not in a dot-folder; see `VaultPaths.allowedReal`) and not a folder above it (a cycle); a folder
 * is listed into `out` with everything below it.
 */
export async function scanLink(ctx: ScanContext, vp: string, dp: string, chain: string[], out: ScanEntry[], limit: Limiter): Promise<void> {
  const abs = ctx.paths.abs(dp);
  let r: string;
  let st: Stats;
  try {
    r = await fsp.realpath(abs);
    st = await fsp.stat(r);
  } catch {
    return; // dangling
  }
  if (!ctx.paths.allowedReal(r, abs)) {
    ctx.log("debug", `Skipping "${vp}": a symbolic link to outside the vault.`);
    return;
  }
  if (st.isDirectory()) {
    if (chain.some((c) => c === r || c.startsWith(r + nodePath.sep))) return; // a cycle
    out.push({ kind: "folder", vp, dp });
    await scanTree(ctx, vp, dp, r, [...chain, r], out, limit);
  } else if (st.isFile()) {
    if (ctx.onFile) ctx.onFile(vp, dp, st);
    else out.push({ kind: "file", vp, dp, st });
  }
}

/**
 * The whole vault listed as `scanTree(ctx, "", "", rootReal, …)` does, but its walk (every folder
 * read, every plain file stat'ed: ~0.6 s of the main thread at 100k notes) done by a worker thread
 * running `workerFile` (dist/scan-worker.js), on the other core while this one loads the search
 * index. Its results come in batches, taken in here between breaths (`ctx.onFile` for each file,
 * folders into `out`); the symbolic links it passed by are then followed here (`scanLink`).
 * Resolves false when the worker could not start or ended before it was done: what it had sent is
 * then already taken in, and the caller lists again in this thread (from a clean picture).
 */
export async function listInWorker(workerFile: string, ctx: ScanContext, out: ScanEntry[], limit: Limiter): Promise<boolean> {
  const data: ScanWorkerData = { rootReal: ctx.paths.rootReal, configDir: ctx.paths.configDir };
  let worker: Worker;
  try {
    worker = new Worker(workerFile, { workerData: { vaultMcpScan: data } });
  } catch (e) {
    ctx.log("debug", `The listing's worker did not start (${(e as Error).message}); listing in this thread.`);
    return false;
  }
  const inbox: ScanMessage[] = [];
  /** Why the worker ended before it was done (set by its events). */
  const early: { why: string | null } = { why: null };
  let wake: (() => void) | null = null;
  const nudge = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  worker.on("message", (m: ScanMessage) => {
    inbox.push(m);
    nudge();
  });
  worker.on("error", (e: Error) => {
    early.why ??= e.message;
    nudge();
  });
  worker.on("exit", (code: number) => {
    early.why ??= `it exited with code ${code}`;
    nudge();
  });
  const links: ScanLink[] = [];
  try {
    for (let read = 0; ; ) {
      const m = inbox.shift();
      if (!m) {
        if (early.why !== null) {
          ctx.log("debug", `The listing's worker ended early (${early.why}); listing in this thread.`);
          return false;
        }
        await new Promise<void>((r) => (wake = r));
        continue;
      }
      if (m.done) break;
      const b = m.batch;
      for (const w of b.warnings) ctx.log("warn", w);
      if (ctx.leftovers) ctx.leftovers.push(...b.leftovers);
      for (let i = 0; i < b.folders.length; i += 2) out.push({ kind: "folder", vp: b.folders[i], dp: b.folders[i + 1] });
      links.push(...b.links);
      const nums = b.nums;
      for (let i = 0; i < b.files.length; i++) {
        const at = i * SCAN_NUMS;
        const facts: FileFacts = { size: nums[at], mtimeMs: nums[at + 1], ctimeMs: nums[at + 2], birthtimeMs: nums[at + 3], ino: nums[at + 4] };
        const vp = b.files[i];
        if (ctx.onFile) ctx.onFile(vp, b.disk[i] ?? vp, facts);
        else out.push({ kind: "file", vp, dp: b.disk[i] ?? vp, st: facts });
        if ((++read & 255) === 0) {
          const breath = ctx.breather.breathe();
          if (breath) await breath;
        }
      }
    }
  } finally {
    void worker.terminate();
  }
  await Promise.all(links.map((l) => scanLink(ctx, l.vp, l.dp, l.chain, out, limit)));
  return true;
}
