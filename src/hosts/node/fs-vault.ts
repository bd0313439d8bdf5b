/**
 * The vault port over a plain folder (the headless host): opening (scan, read, resolve), reading,
 * and taking in changes other programs make. Writing is fs-write.ts's, renaming fs-rename.ts's,
 * listing fs-scan.ts's; the picture in memory is vault-state.ts's, paths and their safety vault-paths.ts's.
 */
import { closeSync, constants as fsConstants, fstatSync, openSync, promises as fsp, readFileSync, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import * as nodePath from "node:path";
import { VaultError } from "../../core/errors";
import type { NoteMetadata } from "../../core/metadata";
import { isUnder } from "../../core/paths";
import { TimeSlice, yieldToEventLoop } from "../../core/time-slice";
import { isNotePath, parentOf, type RenamePlan, type RenameProgress, type RenameResult, type VaultEvent, type VaultFile, type VaultPort } from "../../core/vault";
import type { LogLevel } from "../common/runtime";
import { applyFrontmatterEdit } from "./frontmatter-edit";
import { renameEntry, type RenameContext } from "./fs-rename";
import { Breather, limiter, listInWorker, scanTree, type ScanContext, type ScanEntry } from "./fs-scan";
import { FsWriter } from "./fs-write";
import { NoteLinks } from "./note-links";
import { ReadPool } from "./read-pool";
import type { FileFacts } from "./scan-protocol";
import { VaultPaths } from "./vault-paths";
import { sigOf, VaultState } from "./vault-state";
import { SyncReads } from "./sync-reads";
import { VaultWatcher } from "./watcher";

export { applyFrontmatterEdit };

export interface FsVaultOptions {
  /** Obsidian's config folder name (default `.obsidian`). */
  configDir?: string;
  /** Watch for changes made by other programs (default true). */
  watch?: boolean;
  /** Quiet time before external changes are reconciled (default 150 ms). */
  debounceMs?: number;
  log?: (level: LogLevel, message: string) => void;
  /**
   * Test-only crash points (the CLI passes one when `VAULT_MCP_CRASH_AT` is set): called at named
   * points of a rename and after each note written, so a test can SIGKILL the process right there.
   */
  crash?: (point: string) => void;
  /** A synchronous read that takes longer than this (ms) switches the vault to asynchronous reads for a while (default 20; tests set it). */
  slowReadMs?: number;
  /** For how long (ms) the first slow read switches it (doubling each time; default SLOW_FOR_MS; tests set it). */
  slowReadsForMs?: number;
  /**
   * dist/scan-worker.js: the first listing's walk runs in a worker thread from that file (see
   * fs-scan.ts `listInWorker`); without it, or when the worker fails, in this thread.
   */
  scanWorkerFile?: string;
}

/**
 * Headless default: Obsidian's own default name when the user names none (--config-dir). Lint's
 * hardcoded-config-path warning stays (disabling it is not allowed): headless there is no Vault#configDir.
 */
export const DEFAULT_CONFIG_DIR = ".obsidian";

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });

/** `O_NOFOLLOW` where the platform has it (not on Windows, where every read takes the realpath check). */
const NOFOLLOW: number | undefined = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW;

/** The longest a `deferMetadata` hint holds back reading notes. */
const DEFER_METADATA_MAX_MS = 20_000;

/** Listed files up to this size are read synchronously (a read of 256 KB takes well under a millisecond). */
const SYNC_READ_MAX = 256 * 1024;

/**
 * Notes read at once while opening reads asynchronously (a slow disk, see SyncReads). One at a time
 * through `fsp.readFile`, 20k of the bench's notes took 3.6 s here (3.1 s of it the main thread's:
 * a promise for each of its open, stat, read and close); 16 at once through `readFile`'s callbacks,
 * 0.5 s (0.7 s of CPU). Synchronously: 0.24 s. Now through `ReadPool` (callbacks, reused buffers):
 * 0.11–0.29 s (0.2–0.44 s of CPU) against `readFile`'s 0.29–0.56 s in the same runs.
 */
const READ_AHEAD = 16;

/**
 * The vault port over a plain folder (headless host).
 *
 * - Listing: a recursive async scan kept in memory. Every dot-entry (`.git`, `.trash`, `.obsidian`, temp
 *   files…) is skipped entirely — neither listed nor descended into nor watched — which keeps scans and
 *   watching fast; the core hides dot-paths anyway. The config folder is skipped even without a dot.
 *   `node_modules` and other ordinary folders are listed, as Obsidian does.
 * - Paths are NFC; names the file system stores in another form (NFD from macOS) are mapped to it for I/O.
 * - Symbolic links are followed only when their real path is inside the vault (and not in a dot-folder);
 *   every path-taking method re-checks containment with `realpath` before touching the disk.
 * - Writes are atomic (temp file in the same folder, fsync, rename) and serialised per path; our own writes
 *   update the in-memory state and emit events at once; the watcher ignores their echoes.
 */
export class FsVault implements VaultPort {
  readonly name: string;
  readonly configDir: string;

  private readonly log: (level: LogLevel, message: string) => void;
  private readonly paths: VaultPaths;
  private readonly state: VaultState;
  private readonly writer: FsWriter;
  private readonly scan: ScanContext;
  private readonly renaming: RenameContext;
  private filters: string[] = [];
  private readonly listeners = new Set<(event: VaultEvent) => void>();
  private watcher: VaultWatcher | null = null;
  private listedPromise: Promise<void> = Promise.resolve();
  private readyPromise: Promise<void> = Promise.resolve();
  /** Listed notes whose metadata is not read yet (while opening). */
  private unread: string[] = [];
  private notesRead = 0;
  private notesListed = 0;
  /** See deferMetadata. */
  private metadataAfter: Promise<unknown> | null = null;
  private readingNotes = false;
  private listMs = 0;
  private closed = false;
  /** Our temp files the first listing found (disk-relative). */
  private leftovers: string[] = [];

  private constructor(
    root: string,
    private readonly opts: FsVaultOptions,
  ) {
    this.configDir = opts.configDir ?? DEFAULT_CONFIG_DIR;
    this.paths = new VaultPaths(root, this.configDir);
    this.name = nodePath.basename(this.paths.rootAbs).normalize("NFC");
    this.log = opts.log ?? (() => {});
    this.state = new VaultState(this.paths, new NoteLinks(this.log));
    const writeContext = { state: this.state, watcher: () => this.watcher, emit: (events: VaultEvent[]) => this.emitAll(events) };
    this.writer = new FsWriter(writeContext, opts.crash);
    this.renaming = { ...writeContext, writer: this.writer, log: this.log, ...(opts.crash ? { crash: opts.crash } : {}) };
    this.scan = { paths: this.paths, breather: new Breather(), log: this.log };
    this.syncReads = new SyncReads(
      opts.slowReadMs,
      // The first time at info; a disk that stays slow says so again at each window (debug).
      (ms, forMs, nth) =>
        this.log(
          nth === 1 ? "info" : "debug",
          `A read took ${Math.round(ms)} ms (a slow or busy disk): reading notes asynchronously for the next ${Math.round(forMs / 1000)} s, so that the server keeps answering meanwhile.`,
        ),
      opts.slowReadsForMs,
    );
  }

  /** Opens the vault and waits until it is listed and every note's metadata is read (see `begin`). */
  static async open(root: string, opts: FsVaultOptions = {}): Promise<FsVault> {
    const v = await FsVault.begin(root, opts);
    await v.ready();
    return v;
  }

  /**
   * Checks the folder and starts opening it in the background: resolves as soon as the folder is
   * known to be a vault (a missing folder or a file rejects here). The listing (`listed()`: every
   * file's path, size and times) and then every note's metadata and links (`ready()`) follow, in
   * slices, so a server can listen meanwhile. Either rejects only on an unexpected failure.
   */
  static async begin(root: string, opts: FsVaultOptions = {}): Promise<FsVault> {
    const v = new FsVault(root, opts);
    await v.checkRoot();
    v.listedPromise = v.list();
    v.readyPromise = v.listedPromise.then(() => v.readNotes());
    // Whoever waits reports it; unawaited, a failure must not end the process.
    v.listedPromise.catch(() => undefined);
    v.readyPromise.catch((e: unknown) => v.log("error", `Opening the vault failed: ${(e as Error).message}`));
    return v;
  }

  private async checkRoot(): Promise<void> {
    const paths = this.paths;
    let st: Stats;
    try {
      st = await fsp.stat(paths.rootAbs);
    } catch {
      throw new VaultError("not_found", `The vault folder "${this.name}" does not exist. Pass the path of an existing folder.`);
    }
    if (!st.isDirectory()) throw new VaultError("invalid_argument", `"${this.name}" is not a folder. Pass the path of the vault folder.`);
    await paths.resolveRoot();
    await this.loadFilters();
  }

  /** The first listing: every file and folder (notes' metadata comes after, see `readNotes`). */
  private async list(): Promise<void> {
    const { files, folders } = this.state;
    const paths = this.paths;
    const started = performance.now();
    const entries: ScanEntry[] = [];
    // Plain files go into the listing as they are found (nothing reads it before `listed()`).
    const onFile = (vp: string, dp: string, st: FileFacts) => {
      this.state.listFile(vp, st);
      if (isNotePath(vp)) this.unread.push(vp);
      paths.setDisk(vp, dp);
    };
    // The first listing also notes our temp files a killed write left (see removeLeftoverTemps).
    const ctx = { ...this.scan, leftovers: this.leftovers, onFile };
    const worker = this.opts.scanWorkerFile;
    if (!worker || !(await listInWorker(worker, ctx, entries, limiter(64)))) {
      if (worker) {
        // The worker's part, forgotten: listed again from the start.
        entries.length = 0;
        this.state.files.clear();
        this.unread = [];
        paths.disk.clear();
        this.leftovers.length = 0;
      }
      await scanTree(ctx, "", "", paths.rootReal, [paths.rootReal], entries, limiter(64));
    }
    const breather = this.scan.breather;
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (e.kind === "folder") folders.add(e.vp);
      else {
        this.state.listFile(e.vp, e.st!);
        if (isNotePath(e.vp)) this.unread.push(e.vp);
      }
      paths.setDisk(e.vp, e.dp);
      if ((i & 255) === 255) await breather.breathe();
    }
    this.listMs = performance.now() - started;
    this.notesListed = this.unread.length;
    if (this.opts.watch !== false && !this.closed) {
      // Changes from now on are noticed; they are applied once every note is read (see readNotes).
      this.watcher = new VaultWatcher(paths.rootAbs, {
        debounceMs: this.opts.debounceMs ?? 150,
        log: this.log,
        onChanges: async (changed, rescan) => {
          await this.readyPromise.catch(() => undefined);
          await this.reconcileBatch(changed, rescan);
        },
      });
      const dirs = [...folders].map((f) => paths.diskOf(f));
      if (!this.configDir.includes("/")) dirs.push(this.configDir);
      void this.watcher.start(dirs, yieldToEventLoop);
    }
    this.log("debug", `Listed ${files.size} files (${this.unread.length} notes) in ${folders.size} folders in ${Math.round(this.listMs)} ms.`);
  }

  /**
   * Reads and parses every listed note, resolving each slice's links as it goes (the resolver
   * already knows every file). Small notes are read synchronously (see readListedSync), in ~10 ms
   * slices between which other work runs (a server answering, the search index loading).
   */
  /**
   * See VaultPort.deferMetadata: hints are taken until the notes are being read; each is waited for
   * at most 20 s, and the notes are read once every one has resolved.
   */
  deferMetadata(until: Promise<unknown>): void {
    if (this.readingNotes) return;
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((r) => (timer = setTimeout(r, DEFER_METADATA_MAX_MS).unref()));
    const hint = Promise.race([until.catch(() => undefined), cap]).finally(() => clearTimeout(timer));
    this.metadataAfter = this.metadataAfter ? Promise.all([this.metadataAfter, hint]) : hint;
  }

  private async readNotes(): Promise<void> {
    if (this.metadataAfter) {
      const t = performance.now();
      await this.metadataAfter;
      this.log("debug", `Reading notes' metadata after ${Math.round(performance.now() - t)} ms for the search index.`);
    }
    this.readingNotes = true;
    const { files, links } = this.state;
    const paths = this.paths;
    const started = performance.now();
    const notes = this.unread;
    this.unread = [];
    let batch: string[] = [];
    // The link resolver knows every file before any note's links are resolved (not while listing:
    // whoever waits for the listing alone, search, need not wait for this too).
    let linkMs = 0;
    let n = 0;
    for (const f of files.keys()) {
      links.addFile(f);
      if ((++n & 255) === 0) await this.scan.breather.breathe();
    }
    linkMs += performance.now() - started;
    // Reads already asked for (asynchronously: a slow disk, or a big note), by index in `notes`,
    // into a few reused buffers (see ReadPool).
    const ahead = new Map<number, Promise<string>>();
    const pool = new ReadPool(decoder);
    const absOf = (vp: string): string => paths.absListed(paths.diskOf(vp));
    const readAhead = (from: number): void => {
      for (let j = from; j < notes.length && j < from + READ_AHEAD; j++) {
        const listed = ahead.has(j) ? undefined : files.get(notes[j]);
        if (!listed) continue;
        const p = pool.text(absOf(notes[j]), listed.size);
        p.catch(() => undefined); // reported when awaited (unless the vault closed first)
        ahead.set(j, p);
      }
    };
    for (let i = 0; i < notes.length; i++) {
      if (this.closed) return;
      const vp = notes[i];
      const f = files.get(vp);
      if (f) {
        try {
          let text: string;
          if (f.size <= SYNC_READ_MAX && !this.syncReads.slow && !ahead.has(i)) text = this.syncReads.run(() => readFileSync(absOf(vp), "utf8"));
          else {
            if (this.syncReads.slow) readAhead(i);
            const p = ahead.get(i) ?? pool.text(absOf(vp), f.size);
            ahead.delete(i);
            text = await p;
          }
          links.setMeta(vp, text);
          batch.push(vp);
        } catch (e) {
          this.log("warn", `Could not read "${vp}": ${(e as Error).message}`);
        }
      }
      this.notesRead = i + 1;
      // Links resolved before each breath: a slice's notes at once, never the whole vault in one go.
      if (batch.length >= 64 || i === notes.length - 1) {
        const t = performance.now();
        links.relink(batch);
        linkMs += performance.now() - t;
        batch = [];
      }
      const b = this.scan.breather.breathe();
      if (b) await b;
    }
    links.opened();
    // The link-key index sorted now, in steps: the first write after opening sorted it in one (60 ms at 100k notes).
    const slice = new TimeSlice();
    while (!links.sortKeysSome(() => slice.due())) await slice.next();
    this.log(
      "debug",
      `Opened ${files.size} files (${notes.length} notes) in ${this.state.folders.size} folders in ${Math.round(this.listMs + performance.now() - started)} ms ` +
        `(listing ${Math.round(this.listMs)} ms, reading and parsing ${Math.round(performance.now() - started - linkMs)} ms, resolving links ${Math.round(linkMs)} ms).`,
    );
  }

  /** How far opening has come: notes read of the notes listed (the total is 0 until the listing is done). */
  openingProgress(): { read: number; total: number } {
    return { read: this.notesRead, total: this.notesListed };
  }

  // ---------------------------------------------------------------- reading

  listFiles(): VaultFile[] {
    return [...this.state.files.values()];
  }

  listFolders(): string[] {
    return [...this.state.folders];
  }

  stat(path: string): VaultFile | null {
    return this.state.files.get(path) ?? null;
  }

  isFolder(path: string): boolean {
    return this.state.folders.has(path);
  }

  async read(path: string): Promise<string> {
    // A small listed note straight into a string (Node decodes it natively: no Buffer per note).
    const sig = this.smallListedSig(path);
    if (sig !== undefined) return this.readListedSync(path, sig, "utf8") ?? decoder.decode(await this.readChecked(path));
    return decoder.decode(await this.readBytes(path));
  }

  async readBinary(path: string): Promise<Uint8Array> {
    const buf = await this.readBytes(path);
    return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  /**
   * The listing's change signature of `path` when it may take the fast path (see `readBytes`); the
   * small-file variants read it synchronously.
   */
  private listedSig(path: string): number | undefined {
    return NOFOLLOW === undefined ? undefined : this.state.files.get(path)?.sig;
  }

  /** `listedSig`, for a file listed at no more than SYNC_READ_MAX bytes. */
  private smallListedSig(path: string): number | undefined {
    if (NOFOLLOW === undefined || this.syncReads.slow) return undefined;
    const f = this.state.files.get(path);
    return f !== undefined && f.size <= SYNC_READ_MAX ? f.sig : undefined;
  }

  private async readBytes(path: string): Promise<Buffer> {
    // Fast path for a listed file: open it by its lexical path without following a final symbolic link,
    // and read it only if it is the very file the listing checked (the same change signature: inode,
    // size and times). A link (ELOOP), a folder on the way swapped for a link, or a file replaced or
    // changed since the listing saw it all take the fully checked path. It saves a realpath per read,
    // most of the main-thread cost of indexing every note.
    const small = this.smallListedSig(path);
    if (small !== undefined) return this.readListedSync(path, small) ?? this.readChecked(path);
    const sig = this.listedSig(path);
    if (sig !== undefined) {
      let fh: FileHandle | undefined;
      try {
        fh = await fsp.open(this.paths.abs(this.paths.diskOf(path)), fsConstants.O_RDONLY | NOFOLLOW!);
        const st = await fh.stat();
        if (st.isFile() && sigOf(st) === sig) return await fh.readFile();
      } catch {
        // The checked path.
      } finally {
        await fh?.close().catch(() => undefined);
      }
    }
    return this.readChecked(path);
  }

  /** Reads `path` after resolving it fully (links on the way checked against the vault). */
  private async readChecked(path: string): Promise<Buffer> {
    const real = await this.paths.realFor(path);
    try {
      return await fsp.readFile(real);
    } catch (e) {
      throw this.paths.ioError(e, path);
    }
  }

  /** Notes are read synchronously except for a while after a read was slow (see SyncReads). */
  private readonly syncReads: SyncReads;

  /**
   * `readBytes`' fast path for a small listed file, synchronously: open, fstat, read and close are
   * four syscalls of microseconds, while each asynchronous call costs ~60 µs of main-thread time
   * (the thread-pool round trip). Reading 10k notes the asynchronous way took ~650 ms of main-thread
   * time, this way ~60 ms. Null when the checked path must be taken (see `readBytes`).
   */
  private readListedSync(path: string, sig: number): Buffer | null;
  private readListedSync(path: string, sig: number, encoding: "utf8"): string | null;
  private readListedSync(path: string, sig: number, encoding?: "utf8"): Buffer | string | null {
    let fd: number | undefined;
    try {
      fd = openSync(this.paths.absListed(this.paths.diskOf(path)), fsConstants.O_RDONLY | NOFOLLOW!);
      const st = fstatSync(fd);
      // Grown past the limit since it was listed: the asynchronous read (it does not block for long).
      if (!st.isFile() || sigOf(st) !== sig || st.size > SYNC_READ_MAX) return null;
      const f = fd;
      return this.syncReads.run(() => (encoding ? readFileSync(f, encoding) : readFileSync(f)));
    } catch {
      return null;
    } finally {
      if (fd !== undefined) {
        try {
          closeSync(fd);
        } catch {
          // Nothing to release.
        }
      }
    }
  }

  getMetadata(path: string): NoteMetadata | null {
    return this.state.links.get(path);
  }

  /** The port's `linkTexts`: read from the packed metadata, without unpacking it. */
  linkTexts(path: string): string[] | null {
    return this.state.links.linkTexts(path);
  }

  resolveLink(linkpath: string, sourcePath: string): string | null {
    return this.state.links.resolve(linkpath, sourcePath);
  }

  /** The live map (do not mutate), like Obsidian's `metadataCache.resolvedLinks`. */
  resolvedLinks(): Record<string, Record<string, number>> {
    return this.state.links.resolved;
  }

  unresolvedLinks(): Record<string, Record<string, number>> {
    return this.state.links.unresolved;
  }

  /** The port's `linkSources`: read from the compact link records, without making the maps' per-note records. */
  linkSources(targets: readonly string[]): Map<string, Map<string, number>> {
    return this.state.links.linkSources(targets);
  }

  excludedFilters(): string[] {
    return this.filters;
  }

  onChange(listener: (event: VaultEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * The first listing's walk runs in a worker thread (see FsVaultOptions.scanWorkerFile). Should the
   * worker fail, the listing runs in this thread after all: still true (what waited on it only
   * shares the thread with it).
   */
  get listingOffThread(): boolean {
    return this.opts.scanWorkerFile !== undefined;
  }

  /** Every file is listed (paths, sizes, times); notes' metadata may still be being read. */
  listed(): Promise<void> {
    return this.listedPromise;
  }

  /** Listed, and every note's metadata and links are known. */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  async close(): Promise<void> {
    this.closed = true;
    const w = this.watcher;
    this.watcher = null;
    await w?.close();
    this.listeners.clear();
  }

  /**
   * Removes the temp files of our atomic writes (`.<name>.<hex>.vault-mcp.tmp`) that the opening
   * listing found: a write killed half-way leaves one, and a `git add -A` would commit it. Call it
   * only while no other server can be writing to this vault (the host holds the server lock) and
   * before this one writes. Returns how many were removed.
   */
  async removeLeftoverTemps(): Promise<number> {
    const found = this.leftovers;
    this.leftovers = [];
    let removed = 0;
    for (const dp of found) {
      try {
        await fsp.rm(this.paths.abs(dp));
        removed++;
      } catch {
        /* gone already, or not ours to remove (read-only) */
      }
    }
    if (removed) this.log("info", `Removed ${removed} temp file${removed === 1 ? "" : "s"} left by an interrupted write.`);
    return removed;
  }

  /** Waits until external changes noticed so far are reconciled (tests, CLI shutdown). */
  async settle(): Promise<void> {
    await this.watcher?.idle();
  }

  // ---------------------------------------------------------------- writing (fs-write.ts, fs-rename.ts)

  process(path: string, fn: (current: string) => string): Promise<string> {
    return this.writer.process(path, fn);
  }

  create(path: string, data: string | Uint8Array): Promise<void> {
    return this.writer.create(path, data);
  }

  writeBinary(path: string, data: Uint8Array): Promise<void> {
    return this.writer.writeBinary(path, data);
  }

  createFolder(path: string): Promise<void> {
    return this.writer.createFolder(path);
  }

  trash(path: string): Promise<string> {
    return this.writer.trash(path);
  }

  rename(path: string, newPath: string, onProgress?: RenameProgress, beforeMove?: (plan: RenamePlan) => Promise<void>): Promise<RenameResult> {
    return renameEntry(this.renaming, path, newPath, onProgress, beforeMove);
  }

  processFrontMatter(path: string, fn: (fm: Record<string, unknown>) => void): Promise<void> {
    if (!isNotePath(path)) {
      return Promise.reject(new VaultError("invalid_argument", `"${path}" is not a markdown note; only notes have frontmatter.`));
    }
    return this.process(path, (text) => applyFrontmatterEdit(text, fn, path)).then(() => undefined);
  }

  private emitAll(events: VaultEvent[]): void {
    for (const event of events) {
      if (this.closed) return;
      for (const l of [...this.listeners]) {
        try {
          l(event);
        } catch (e) {
          this.log("error", `A vault change listener failed: ${(e as Error).message}`);
        }
      }
    }
  }

  // ---------------------------------------------------------------- external changes

  private async reconcileBatch(paths: Set<string>, rescan: Set<string>): Promise<void> {
    if (this.closed) return;
    for (const dir of rescan) {
      // The OS did not say what changed in `dir`: compare its listing with ours.
      const vdir = dir.normalize("NFC");
      if (dir !== "" && !this.state.folders.has(vdir)) {
        paths.add(dir);
        continue;
      }
      let names: string[] = [];
      try {
        names = await fsp.readdir(this.paths.abs(dir));
      } catch {
        paths.add(dir);
        continue;
      }
      for (const n of names) paths.add(dir ? `${dir}/${n}` : n);
      for (const f of [...this.state.files.keys(), ...this.state.folders]) if (parentOf(f) === vdir) paths.add(this.paths.diskOf(f));
    }
    const sorted = [...paths].sort((a, b) => a.split("/").length - b.split("/").length || (a < b ? -1 : 1));
    for (const dp of sorted) {
      if (this.closed) return;
      try {
        await this.reconcile(dp);
      } catch (e) {
        this.log("warn", `Could not update "${dp.normalize("NFC")}" after an outside change: ${(e as Error).message}`);
      }
    }
  }

  private async reconcile(dp: string): Promise<void> {
    const { files, folders, links } = this.state;
    const segs = dp.split("/");
    if (segs[0] === this.configDir || (this.configDir.includes("/") && isUnder(dp, this.configDir))) {
      if (dp === this.configDir) this.watcher?.watchDir(dp);
      if (dp === this.configDir || dp === `${this.configDir}/app.json`) await this.loadFilters();
      return;
    }
    if (segs.some((s) => s.startsWith(".") || s === "")) return;
    const vp = dp.normalize("NFC");
    if (this.writer.isBusy(vp)) {
      this.watcher?.requeue(dp);
      return;
    }
    const parentVp = parentOf(vp);
    if (parentVp !== "" && !folders.has(parentVp)) {
      // Its folder is new to us too: reconcile from the topmost unknown folder (which scans everything below).
      const parts = dp.split("/");
      for (let i = 1; i < parts.length; i++) {
        const anc = parts.slice(0, i).join("/");
        if (!folders.has(anc.normalize("NFC"))) return this.reconcile(anc);
      }
    }
    const abs = this.paths.abs(dp);
    let st: Stats | null = null;
    try {
      const l = await fsp.lstat(abs);
      if (l.isSymbolicLink()) {
        const r = await fsp.realpath(abs);
        if (this.paths.allowedReal(r, abs)) st = await fsp.stat(r);
      } else st = l;
    } catch {
      st = null;
    }
    const events: VaultEvent[] = [];
    if (!st || (!st.isFile() && !st.isDirectory())) {
      if (files.has(vp)) events.push(...this.state.removeFile(vp));
      else if (folders.has(vp)) {
        events.push(...this.state.removeFolder(vp));
        this.watcher?.unwatchUnder(dp);
      }
    } else if (st.isDirectory()) {
      if (files.has(vp)) events.push(...this.state.removeFile(vp));
      if (!folders.has(vp)) {
        const entries: ScanEntry[] = [{ kind: "folder", vp, dp }];
        const real = await fsp.realpath(abs);
        await scanTree(this.scan, vp, dp, real, [this.paths.rootReal, real], entries, limiter(16));
        const added: string[] = [];
        for (const e of entries) {
          if (e.dp !== e.vp) this.paths.disk.set(e.vp, e.dp);
          if (e.kind === "folder") {
            if (folders.has(e.vp)) continue;
            folders.add(e.vp);
            this.watcher?.watchDir(e.dp);
            events.push({ type: "create", path: e.vp });
          } else if (!files.has(e.vp)) {
            this.state.listFile(e.vp, e.st!);
            links.addFile(e.vp);
            if (isNotePath(e.vp)) {
              try {
                links.setMeta(e.vp, decoder.decode(await fsp.readFile(this.paths.abs(e.dp))));
              } catch {
                links.setMeta(e.vp, "");
              }
            }
            added.push(e.vp);
            events.push({ type: "create", path: e.vp });
          }
        }
        const affected = new Set<string>();
        for (const f of added) for (const s of links.affectedByFile(f, isNotePath(f) ? [f] : [])) affected.add(s);
        links.relink(affected);
      }
    } else {
      if (folders.has(vp)) {
        events.push(...this.state.removeFolder(vp));
        this.watcher?.unwatchUnder(dp);
      }
      const sig = sigOf(st);
      const known = files.has(vp);
      if (known && files.get(vp)!.sig === sig) return;
      let text: string | null = null;
      if (isNotePath(vp)) {
        try {
          text = decoder.decode(await fsp.readFile(abs));
        } catch {
          return; // gone again; a later event will tell
        }
      }
      if (this.writer.isBusy(vp)) {
        this.watcher?.requeue(dp);
        return;
      }
      this.state.listFile(vp, st);
      if (dp !== vp) this.paths.disk.set(vp, dp);
      if (text !== null) links.setMeta(vp, text);
      if (!known) {
        links.addFile(vp);
        links.relink(links.affectedByFile(vp, text !== null ? [vp] : []));
      } else if (text !== null) links.relink([vp]);
      events.push({ type: known ? "modify" : "create", path: vp });
    }
    this.emitAll(events);
  }

  private async loadFilters(): Promise<void> {
    try {
      const raw = await fsp.readFile(nodePath.join(this.paths.rootAbs, this.configDir, "app.json"), "utf8");
      const json = JSON.parse(raw) as { userIgnoreFilters?: unknown };
      const f = json.userIgnoreFilters;
      this.filters = Array.isArray(f) ? f.filter((x): x is string => typeof x === "string") : [];
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== "ENOENT" && code !== "ENOTDIR") {
        this.log("warn", `Could not read ${this.configDir}/app.json (${(e as Error).message}); keeping the previous excluded-files list.`);
        return;
      }
      this.filters = [];
    }
  }
}
