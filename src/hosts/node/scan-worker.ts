/**
 * The first listing's walk in a worker thread (dist/scan-worker.js): every folder read and every
 * plain file stat'ed on another core, the results posted in batches (see fs-scan.ts `listInWorker`,
 * which owns the protocol's other end and everything the listing decides beyond this walk).
 *
 * It follows no symbolic link: a link is posted as it is, for the main thread to check and follow
 * (its real path must stay in the vault; see `scanLink`). It reads nothing but folder listings and
 * file times and sizes, and changes nothing on disk.
 */
import { readdirSync, statSync } from "node:fs";
import * as nodePath from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { isOurTempName } from "../common/leftovers";
import { entryNames, SCAN_BATCH, SCAN_NUMS, type ScanBatch, type ScanWorkerData } from "./scan-protocol";

function run(port: NonNullable<typeof parentPort>, data: ScanWorkerData): void {
  const { rootReal, configDir } = data;
  const sep = nodePath.sep;
  let batch = fresh();
  function fresh(): ScanBatch {
    return { files: [], disk: [], nums: new Float64Array(SCAN_BATCH * SCAN_NUMS), folders: [], links: [], leftovers: [], warnings: [] };
  }
  // The numbers go whole (transferred, not copied): the files say how many of them count.
  const flush = (): void => {
    port.postMessage({ batch }, [batch.nums.buffer]);
    batch = fresh();
  };
  /** Folder `vp0` (disk path `dp0`, real path `real0`); `chain`: the real paths of the folders above it and itself. */
  const walk = (vp0: string, dp0: string, real0: string, chain: string[]): void => {
    let entries;
    try {
      entries = readdirSync(real0, { withFileTypes: true });
    } catch (e) {
      batch.warnings.push(`Could not list "${vp0}": ${(e as Error).message}`);
      return;
    }
    for (const e of entries) {
      const name = e.name;
      if (name.startsWith(".")) {
        if (e.isFile() && isOurTempName(name)) batch.leftovers.push(dp0 ? `${dp0}/${name}` : name);
        continue;
      }
      const names = entryNames(name, vp0, dp0, real0, configDir, sep);
      if (!names) continue;
      const { vp, dp, real } = names;
      if (e.isSymbolicLink()) batch.links.push({ vp, dp, chain });
      else if (e.isDirectory()) {
        batch.folders.push(vp, dp);
        walk(vp, dp, real, [...chain, real]);
      } else if (e.isFile()) {
        let st;
        try {
          st = statSync(real, { throwIfNoEntry: false }); // undefined: gone meanwhile
        } catch {
          continue; // not ours to read
        }
        if (!st) continue;
        const at = batch.files.length * SCAN_NUMS;
        batch.files.push(vp);
        batch.disk.push(dp === vp ? null : dp);
        batch.nums[at] = st.size;
        batch.nums[at + 1] = st.mtimeMs;
        batch.nums[at + 2] = st.ctimeMs;
        batch.nums[at + 3] = st.birthtimeMs;
        batch.nums[at + 4] = st.ino;
        if (batch.files.length === SCAN_BATCH) flush();
      }
    }
  };
  walk("", "", rootReal, [rootReal]);
  flush();
  port.postMessage({ done: true });
}

if (parentPort && (workerData as { vaultMcpScan?: ScanWorkerData } | null)?.vaultMcpScan) run(parentPort, (workerData as { vaultMcpScan: ScanWorkerData }).vaultMcpScan);
