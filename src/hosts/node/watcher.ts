/**
 * Noticing what other programs change in the vault folder: native recursive watching where the OS has
 * it, a watch per folder on Linux, debounced into batches. Reports disk paths; the vault reconciles them.
 */
import { watch, type FSWatcher } from "node:fs";
import * as nodePath from "node:path";
import type { LogLevel } from "../common/runtime";

export interface WatcherOptions {
  /** Quiet time before a batch of changes is handed over (ms). */
  debounceMs: number;
  /** A batch is handed over at the latest this long after its first change, even if changes keep coming (ms). */
  maxWaitMs?: number;
  log: (level: LogLevel, message: string) => void;
  /**
   * Receives disk-relative paths (`/`-separated, as the file system spells them) that changed, and folders
   * whose whole listing must be re-read (the OS did not say which entry changed). Batches never overlap.
   */
  onChanges: (paths: Set<string>, rescan: Set<string>) => Promise<void>;
}

/**
 * Watches a vault folder for changes made by other programs.
 *
 * macOS and Windows: one native recursive `fs.watch` on the root (FSEvents / ReadDirectoryChangesW).
 * Linux: Node 20's `recursive` option is emulated in JavaScript with a synchronous stat and an inotify
 * watch for every *file* and descends into `.git` and other dot-folders, so instead we watch each
 * listed folder (inotify reports its children's changes); the vault adds and removes folders as they
 * come and go. Paths are debounced into batches.
 */
export class VaultWatcher {
  private recursive: boolean;
  private readonly dirWatchers = new Map<string, FSWatcher>();
  private rootWatcher: FSWatcher | null = null;
  private pending = new Set<string>();
  private rescan = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private firstPendingAt = 0;
  private running: Promise<void> = Promise.resolve();
  private closed = false;
  private warnedLimit = false;

  constructor(
    private readonly rootAbs: string,
    private readonly opts: WatcherOptions,
    platform: NodeJS.Platform = process.platform,
  ) {
    this.recursive = platform === "darwin" || platform === "win32";
  }

  /**
   * Starts watching the root and (on Linux) the given disk-relative folders. Folder by folder, each
   * watch is a synchronous call (~0.2 ms): with `yieldNow`, it yields every ~8 ms (124 folders at once
   * blocked the event loop ~40 ms; a vault of thousands of folders far longer).
   */
  async start(dirs: Iterable<string>, yieldNow?: () => Promise<void>): Promise<void> {
    if (this.recursive) {
      try {
        this.rootWatcher = watch(this.rootAbs, { recursive: true, persistent: false }, (_ev, name) => {
          this.noteChange(name == null ? null : String(name).split(nodePath.sep).join("/"), "");
        });
        this.rootWatcher.on("error", (e) => this.opts.log("warn", `File watcher error: ${e.message}`));
        return;
      } catch (e) {
        this.opts.log("warn", `Recursive file watching is unavailable (${(e as Error).message}); watching folder by folder.`);
        this.recursive = false;
      }
    }
    this.watchDir("");
    let since = performance.now();
    for (const d of dirs) {
      if (this.closed) return;
      this.watchDir(d);
      if (yieldNow && performance.now() - since > 8) {
        await yieldNow();
        since = performance.now();
      }
    }
  }

  /** Watches one folder's direct children (no-op with a recursive root watcher). */
  watchDir(dp: string): void {
    if (this.closed || this.rootWatcher || this.dirWatchers.has(dp)) return;
    try {
      const w = watch(nodePath.join(this.rootAbs, dp), { persistent: false }, (_ev, name) => {
        this.noteChange(name == null ? null : dp ? `${dp}/${String(name)}` : String(name), dp);
      });
      w.on("error", () => {
        // The folder went away (or became unreadable): drop the watcher and let the parent be reconciled.
        this.unwatchUnder(dp);
        this.noteChange(dp || null, parentDir(dp));
      });
      this.dirWatchers.set(dp, w);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "ENOSPC" || code === "EMFILE") {
        if (!this.warnedLimit) {
          this.warnedLimit = true;
          this.opts.log(
            "warn",
            `The system's file watch limit is reached (${code}); changes made by other programs in some folders will not be noticed until restart. On Linux raise fs.inotify.max_user_watches.`,
          );
        }
      } else if (code !== "ENOENT" && code !== "ENOTDIR") {
        this.opts.log("warn", `Cannot watch folder "${dp}": ${(e as Error).message}`);
      }
    }
  }

  /** Stops watching a folder and everything under it (after it was deleted or renamed). */
  unwatchUnder(dp: string): void {
    for (const [k, w] of this.dirWatchers) {
      if (dp === "" || k === dp || k.startsWith(dp + "/")) {
        w.close();
        this.dirWatchers.delete(k);
      }
    }
  }

  /** Queues a path again (e.g. one that was being written when its change arrived). */
  requeue(dp: string): void {
    this.noteChange(dp, parentDir(dp));
  }

  /** Resolves once every change queued so far has been handed over and handled. */
  async idle(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
      this.flush();
    }
    await this.running;
  }

  get watchedFolders(): number {
    return this.rootWatcher ? -1 : this.dirWatchers.size;
  }

  close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.rootWatcher?.close();
    this.rootWatcher = null;
    for (const w of this.dirWatchers.values()) w.close();
    this.dirWatchers.clear();
    return this.running;
  }

  private noteChange(path: string | null, dir: string): void {
    if (this.closed) return;
    if (path === null) this.rescan.add(dir);
    else this.pending.add(path);
    const now = Date.now();
    if (!this.timer) this.firstPendingAt = now;
    else clearTimeout(this.timer);
    const maxWait = this.opts.maxWaitMs ?? Math.max(1000, this.opts.debounceMs * 4);
    const wait = now - this.firstPendingAt >= maxWait ? 0 : this.opts.debounceMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, wait);
  }

  private flush(): void {
    if (this.pending.size === 0 && this.rescan.size === 0) return;
    const paths = this.pending;
    const rescan = this.rescan;
    this.pending = new Set();
    this.rescan = new Set();
    this.running = this.running
      .then(() => (this.closed ? undefined : this.opts.onChanges(paths, rescan)))
      .catch((e: unknown) => this.opts.log("error", `Handling file changes failed: ${e instanceof Error ? e.message : String(e)}`));
  }
}

function parentDir(dp: string): string {
  const i = dp.lastIndexOf("/");
  return i < 0 ? "" : dp.slice(0, i);
}
