/**
 * One server per state folder (and so per vault): a lock file, `server-<machine>.lock`, in the
 * folder where the server keeps its index and log. Both hosts take it before they touch the folder
 * or the vault: two servers on one vault would write the same index files and log, each over the
 * other's.
 *
 * The file holds who holds it (pid, host, port, start time, machine, and a random instance id). It
 * is created whole or not at all (written to a temp file, then hard-linked to its name, which fails
 * when the name exists), and kept fresh: its holder touches its mtime every `heartbeatMs`. A lock is
 * stale, and is taken over, when its holder is gone:
 * - its pid is not a live process, or
 * - its mtime is older than `staleMs`: the holder was killed and its pid reused by an unrelated
 *   process (a live pid alone proves nothing; a process start time would, but only Linux gives it
 *   cheaply, while an mtime works on every platform and file system). Five minutes, five heartbeats:
 *   a background Obsidian window's timers may be throttled to one a minute, and a stale lock is rare;
 * - its pid is this very process but the instance is none of the locks this process holds now
 *   (Obsidian reloaded its window: same process, the old plugin instance gone without unloading).
 * The machine is in the file's name: a vault in a synced folder (iCloud, Dropbox, Syncthing) carries
 * the file to other machines, where its pid means nothing and its mtime may not follow. Each machine
 * minds its own servers; two machines on one synced vault cannot coordinate through it anyway.
 */
import { randomBytes } from "node:crypto";
import { closeSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmdirSync, rmSync, statSync, utimesSync, writeSync } from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import { clearTimer, setTimer, type TimerHandle } from "../../core/timers";

/** How often the holder touches the lock (rarely: a sync client may notice each touch). */
export const LOCK_HEARTBEAT_MS = 60_000;
/** A lock not touched for this long has no live holder. */
export const LOCK_STALE_MS = 5 * 60_000;
/** Another machine's lock untouched this long is removed (its machine was renamed, or is gone). */
const FOREIGN_LOCK_MAX_AGE_MS = 7 * 24 * 3600_000;

/** `server-<this machine>.lock` (the host name made safe as a file name). */
export function lockFileName(hostname = os.hostname()): string {
  const safe = hostname.normalize("NFC").replace(/[^\p{L}\p{N}._-]+/gu, "_").slice(0, 60) || "host";
  return `server-${safe}.lock`;
}

/** The instance ids of the locks this process holds now (shared by every copy of this module in it). */
function heldHere(): Set<string> {
  const key = Symbol.for("vault-mcp.server-locks");
  const bag = process as unknown as Record<symbol, Set<string> | undefined>;
  return (bag[key] ??= new Set<string>());
}

export type LockHost = "node" | "obsidian";

/** What the lock file says. */
export interface LockHolder {
  pid: number;
  host: LockHost;
  /** The port it listens on (null while it starts). */
  port: number | null;
  /** ISO time it started. */
  started: string;
  hostname: string;
  /** Random, per lock taken. */
  instance: string;
}

/** Another live server holds the lock. */
export class ServerLockedError extends Error {
  constructor(
    readonly holder: LockHolder,
    readonly file: string,
  ) {
    super(`${describeHolder(holder)} is already serving this vault. Only one server may use a vault at a time: stop that one, or use it.`);
    this.name = "ServerLockedError";
  }
}

/** "The headless Vault MCP server (pid 1234, port 28765, started 2026-11-25 19:35 UTC)" */
export function describeHolder(h: LockHolder): string {
  const who = h.host === "obsidian" ? "The Vault MCP plugin in Obsidian" : "The headless Vault MCP server";
  const started = /^\d{4}-\d\d-\d\dT\d\d:\d\d/.test(h.started) ? `${h.started.slice(0, 10)} ${h.started.slice(11, 16)} UTC` : h.started;
  const where = h.hostname && h.hostname !== os.hostname() ? `, on the machine "${h.hostname}"` : "";
  return `${who} (pid ${h.pid}${h.port !== null ? `, port ${h.port}` : ", starting"}, started ${started}${where})`;
}

export interface ServerLock {
  readonly file: string;
  /** The holder of the stale lock this one replaced (it ended without releasing it: killed, crashed), or null. */
  readonly tookOver: LockHolder | null;
  /** Records the port once the server listens. */
  setPort(port: number): void;
  /** Removes the lock (when it is still ours). Synchronous, so it can run in an `exit` handler. */
  release(): void;
}

export interface LockOptions {
  host: LockHost;
  heartbeatMs?: number;
  staleMs?: number;
}

/**
 * Takes the lock in `dir` (created when missing), taking over a stale one. Throws `ServerLockedError`
 * when a live server holds it; other errors (a read-only folder) are thrown as they are.
 */
export function acquireServerLock(dir: string, opts: LockOptions): ServerLock {
  const file = nodePath.join(dir, lockFileName());
  const staleMs = opts.staleMs ?? LOCK_STALE_MS;
  let tookOver: LockHolder | null = null;
  let mine: LockHolder = { pid: process.pid, host: opts.host, port: null, started: new Date().toISOString(), hostname: os.hostname(), instance: randomBytes(8).toString("hex") };
  // A folder made only for the lock goes again with it.
  const made = mkdirSync(dir, { recursive: true }) !== undefined;
  for (let attempt = 0; ; attempt++) {
    if (attempt >= 5) throw new Error(`Could not take the lock ${file}: other servers keep taking it.`);
    if (createExclusive(file, JSON.stringify(mine))) break;
    const seen = readLock(file);
    if (seen === "missing") continue; // released meanwhile: try again
    if (seen !== "garbage" && !isStale(seen.holder, seen.mtimeMs, staleMs)) throw new ServerLockedError(seen.holder, file);
    // Stale: move it aside (atomic: of two servers taking over at once only one moves it) and check
    // that what was moved is the stale lock judged above, not a fresh one taken meanwhile.
    const aside = `${file}.${randomBytes(6).toString("hex")}.stale`;
    try {
      renameSync(file, aside);
    } catch {
      continue;
    }
    const moved = readLock(aside);
    if (seen !== "garbage" && moved !== "missing" && moved !== "garbage" && JSON.stringify(moved.holder) !== JSON.stringify(seen.holder)) {
      // A fresh lock: put it back and report its holder.
      try {
        linkSync(aside, file);
      } catch {
        /* yet another one is there now; it speaks for itself */
      }
      rmSync(aside, { force: true });
      throw new ServerLockedError(moved.holder, file);
    }
    rmSync(aside, { force: true });
    if (seen !== "garbage") tookOver = seen.holder;
  }
  heldHere().add(mine.instance);
  removeOldForeignLocks(dir, file);

  const heartbeatMs = opts.heartbeatMs ?? LOCK_HEARTBEAT_MS;
  let timer: TimerHandle | null = null;
  let released = false;
  const beat = () => {
    timer = null;
    if (released) return;
    try {
      if (isOurs()) {
        const now = new Date();
        utimesSync(file, now, now);
      }
    } catch {
      /* the folder went away; the next start takes the lock again */
    }
    schedule();
  };
  const schedule = () => {
    timer = setTimer(beat, heartbeatMs);
    (timer as { unref?: () => void }).unref?.();
  };
  const isOurs = (): boolean => {
    const now = readLock(file);
    return typeof now === "object" && now.holder.instance === mine.instance;
  };
  schedule();
  return {
    file,
    tookOver,
    setPort(port: number) {
      if (released || !isOurs()) return;
      mine = { ...mine, port };
      // Rewritten whole (temp file, rename): a reader never sees half of it.
      const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
      try {
        writeWhole(tmp, JSON.stringify(mine));
        renameSync(tmp, file);
      } catch {
        rmSync(tmp, { force: true });
      }
    },
    release() {
      if (released) return;
      released = true;
      heldHere().delete(mine.instance);
      clearTimer(timer);
      timer = null;
      try {
        if (isOurs()) rmSync(file, { force: true });
        if (made) rmdirSync(dir);
      } catch {
        /* nothing to release, or the folder holds more than the lock now */
      }
    },
  };
}

function isStale(h: LockHolder, mtimeMs: number, staleMs: number): boolean {
  const age = Date.now() - mtimeMs;
  if (age > staleMs) return true; // no heartbeat: the holder is gone (its pid may have been reused)
  if (h.pid === process.pid) return !heldHere().has(h.instance);
  return !processAlive(h.pid);
}

function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists, but belongs to another user.
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readLock(file: string): { holder: LockHolder; mtimeMs: number } | "missing" | "garbage" {
  let text: string;
  let mtimeMs: number;
  try {
    mtimeMs = statSync(file).mtimeMs;
    text = readFileSync(file, "utf8");
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "garbage";
  }
  try {
    const v = JSON.parse(text) as Partial<LockHolder>;
    if (typeof v.pid !== "number" || (v.host !== "node" && v.host !== "obsidian")) return "garbage";
    return {
      holder: { pid: v.pid, host: v.host, port: typeof v.port === "number" ? v.port : null, started: String(v.started ?? ""), hostname: String(v.hostname ?? ""), instance: String(v.instance ?? "") },
      mtimeMs,
    };
  } catch {
    return "garbage";
  }
}

/** Removes other machines' lock files nobody touched for a week (litter of a renamed or retired machine). */
function removeOldForeignLocks(dir: string, own: string): void {
  try {
    for (const name of readdirSync(dir)) {
      if (!/^server-.+\.lock$/.test(name) || name === nodePath.basename(own)) continue;
      const f = nodePath.join(dir, name);
      if (Date.now() - statSync(f).mtimeMs > FOREIGN_LOCK_MAX_AGE_MS) rmSync(f, { force: true });
    }
  } catch {
    /* best effort */
  }
}

/** Creates `file` holding `text`, whole, unless it exists (false then). */
function createExclusive(file: string, text: string): boolean {
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  writeWhole(tmp, text);
  try {
    linkSync(tmp, file);
    return true;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    // No hard links on this file system (exFAT, some network shares): an exclusive create instead.
    try {
      const fd = openSync(file, "wx");
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
      return true;
    } catch (e2) {
      if ((e2 as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e2;
    }
  } finally {
    rmSync(tmp, { force: true });
  }
}

function writeWhole(file: string, text: string): void {
  const fd = openSync(file, "wx");
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}
