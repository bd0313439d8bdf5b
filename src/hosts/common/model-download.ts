/**
 * The built-in model's download, for both hosts: a catalog model's files fetched into a folder
 * (the plugin's data folder, the headless state folder) the first time embedding starts, resumable,
 * cancellable, each file checked before it is used (model-files.ts). Reports progress to whoever watches.
 */
import { ensureModelFiles, ModelDownloadError, rangeFetchOver, RANGE_BYTES, type ModelFile, type RangeFetch } from "../../core/search/vector/model-files";
import type { EmbedderDownload } from "../../core/search/vector/embedder";
import { nodeBinaryHttp } from "./http-client";
import { FsModelFolder } from "./model-folder";
import type { ModelFolder } from "../../core/search/vector/model-files";

export interface ModelDownloaderOptions {
  files: readonly ModelFile[];
  /** The folder the files go to (absolute), or a ModelFolder (tests: a disk that fills up). */
  dir: string | ModelFolder;
  fetchRange?: RangeFetch;
  rangeBytes?: number;
  /** About how many bytes in all (for files whose size is not pinned, a guess until the hub states it). */
  approxBytes?: number;
}

export class ModelDownloader {
  private running: Promise<void> | null = null;
  private ctl: AbortController | null = null;
  private state: EmbedderDownload | null = null;
  private readonly watchers = new Set<() => void>();

  constructor(private readonly o: ModelDownloaderOptions) {}

  /** Fetches what is missing (once at a time); resolves when every file is there and checked. */
  run(): Promise<void> {
    if (this.running) return this.running;
    const ctl = new AbortController();
    this.ctl = ctl;
    const folder = typeof this.o.dir === "string" ? new FsModelFolder(this.o.dir) : this.o.dir;
    const files = this.o.files;
    const pinned = files.reduce((n, f) => n + (f.bytes ?? 0), 0);
    const total = Math.max(pinned, this.o.approxBytes ?? 0);
    const sizes = new Map<string, number>();
    const doneOf = new Map<string, number>();
    let started = false;
    this.running = ensureModelFiles(
      files,
      folder,
      this.o.fetchRange ?? rangeFetchOver(nodeBinaryHttp),
      (p) => {
        started = true;
        sizes.set(p.file, p.total);
        doneOf.set(p.file, p.done);
        const idx = files.findIndex((f) => f.name === p.file);
        // Files before this one are complete (their size known when fetched, else pinned or unknown: 0).
        let bytesDone = 0;
        for (const [i, f] of files.entries()) if (i < idx) bytesDone += sizes.get(f.name) ?? f.bytes ?? 0;
        bytesDone += p.done;
        const known = files.reduce((n, f) => n + (sizes.get(f.name) ?? f.bytes ?? 0), 0);
        this.state = { file: p.file, files_done: idx, files_total: files.length, bytes_done: bytesDone, bytes_total: Math.max(total, known, bytesDone) };
        this.notify();
      },
      this.o.rangeBytes ?? RANGE_BYTES,
      ctl.signal,
    ).finally(() => {
      this.running = null;
      this.ctl = null;
      if (started || this.state) {
        this.state = null;
        this.notify();
      }
    });
    return this.running;
  }

  /** The download under way, or null. */
  progress(): EmbedderDownload | null {
    return this.state;
  }

  /** Stops the download under way between two ranges (true when there was one). */
  cancel(): boolean {
    if (!this.ctl) return false;
    this.ctl.abort();
    return true;
  }

  watch(cb: () => void): () => void {
    this.watchers.add(cb);
    return () => this.watchers.delete(cb);
  }

  private notify(): void {
    for (const w of this.watchers) {
      try {
        w();
      } catch {
        // A watcher's failure is its own.
      }
    }
  }
}

export { ModelDownloadError };
