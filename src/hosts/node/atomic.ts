/**
 * Atomic file writes for the headless host (temp file, fsync, rename) and an existence check. Knows
 * nothing of vaults: callers check paths first.
 */
import { randomBytes } from "node:crypto";
import { promises as fsp } from "node:fs";
import nodePath from "node:path";

/** True when something (a file, folder or link) is at `p`. */
export async function exists(p: string): Promise<boolean> {
  try {
    await fsp.lstat(p);
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes `data` to `target` atomically: a temp file (dot-named, so scans and the watcher ignore it) in
 * the same folder, fsync, then rename over the target (or, with `exclusive`, a hard link that fails if
 * the target appeared meanwhile). Keeps the old file's permission bits.
 */
export async function writeAtomic(target: string, data: Uint8Array | string, opts: { exclusive?: boolean; existsError?: () => Error } = {}): Promise<void> {
  const dir = nodePath.dirname(target);
  const alreadyThere = opts.existsError ?? (() => new Error(`${nodePath.basename(target)} already exists`));
  const tmp = nodePath.join(dir, `.${nodePath.basename(target).slice(0, 40)}.${randomBytes(6).toString("hex")}.vault-mcp.tmp`);
  let mode: number | undefined;
  if (!opts.exclusive) {
    try {
      mode = (await fsp.stat(target)).mode & 0o7777;
    } catch {
      mode = undefined;
    }
  }
  const fh = await fsp.open(tmp, "wx", mode ?? 0o666);
  try {
    await fh.writeFile(data);
    await fh.sync();
  } catch (e) {
    await fh.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  await fh.close();
  try {
    if (opts.exclusive) {
      try {
        await fsp.link(tmp, target);
        await fsp.rm(tmp, { force: true });
      } catch (e) {
        const code = (e as NodeJS.ErrnoException).code;
        if (code === "EEXIST") throw alreadyThere();
        // No hard links on this file system (exFAT, some network shares): check then rename.
        if (await exists(target)) throw alreadyThere();
        await fsp.rename(tmp, target);
      }
    } else {
      await fsp.rename(tmp, target);
    }
  } catch (e) {
    await fsp.rm(tmp, { force: true });
    throw e;
  }
  await syncDir(dir);
}

async function syncDir(dir: string): Promise<void> {
  if (process.platform === "win32") return;
  try {
    const fh = await fsp.open(dir, "r");
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    /* some file systems refuse fsync on folders; the rename is still atomic */
  }
}
