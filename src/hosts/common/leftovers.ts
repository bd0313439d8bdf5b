/**
 * Our own temp files left behind by a killed write (the write goes to a temp file, then a rename):
 * removed at start-up, once the server holds the lock (no other live server could be writing them).
 * Only names we make are touched:
 * - `.<name>.<12 hex>.vault-mcp.tmp`: atomic writes of both hosts (notes headless, state files);
 * - `<name>.tmp-<base36>`: the plugin's state files before this naming (older versions);
 * - `server-<machine>.lock.<12 hex>.tmp` / `.stale`: the lock's own.
 */
import { promises as fsp, readdirSync, rmSync } from "node:fs";
import * as nodePath from "node:path";

const ATOMIC_TEMP = /^\.[\s\S]*\.[0-9a-f]{12}\.vault-mcp\.tmp$/;
const OLD_PLUGIN_TEMP = /^[^/]+\.tmp-[0-9a-z]{8,16}$/;
const LOCK_TEMP = /^server-[^/]+\.lock\.[0-9a-f]{12}\.(tmp|stale)$/;

/** True for a note folder's temp file of ours (an atomic write's). */
export function isOurTempName(name: string): boolean {
  return ATOMIC_TEMP.test(name);
}

/** True for a temp file of ours in the state folder (any of the three kinds). */
export function isOurStateTempName(name: string): boolean {
  return ATOMIC_TEMP.test(name) || OLD_PLUGIN_TEMP.test(name) || LOCK_TEMP.test(name);
}

/** Removes our temp files directly in the state folder `dir` (not below it); returns how many. */
export function removeStateLeftovers(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (!isOurStateTempName(name)) continue;
    try {
      rmSync(nodePath.join(dir, name), { force: true });
      removed++;
    } catch {
      /* in use or read-only: left */
    }
  }
  return removed;
}

/**
 * Removes our atomic writes' temp files directly in each of `dirs` (absolute folders of the vault),
 * one folder at a time (asynchronously: the plugin runs it on Obsidian's thread); returns how many.
 */
export async function removeFolderLeftovers(dirs: readonly string[]): Promise<number> {
  let removed = 0;
  for (const dir of dirs) {
    try {
      for (const name of await fsp.readdir(dir)) {
        if (!isOurTempName(name)) continue;
        await fsp.rm(nodePath.join(dir, name), { force: true });
        removed++;
      }
    } catch {
      /* gone meanwhile, or unreadable */
    }
  }
  return removed;
}
