import { closeSync, constants as fsConstants, fstatSync, openSync, promises as fsp, readFileSync, statSync, type Dirent, type Stats } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import * as nodePath from "node:path";
import { Document, isMap, parseDocument } from "yaml";
import { VaultError, isVaultError } from "../../core/errors";
import { splitFrontmatter } from "../../core/frontmatter";
import { LinkResolver, computeLinkMaps } from "../../core/links/resolver";
import { renameContext, rewriteLinks } from "../../core/links/rewrite";
import { splitLinkpath, type NoteMetadata } from "../../core/metadata";
import { parseNote } from "../../core/parser";
import { isUnder } from "../../core/paths";
import { SLICE_MS, TimeSlice } from "../../core/time-slice";
import { basenameOf, extensionOf, isNotePath, parentOf, type RenameProgress, type RenameResult, type VaultEvent, type VaultFile, type VaultPort } from "../../core/vault";
import type { LogLevel } from "../common/runtime";
import { pack, unpack, type PackedMetadata } from "./packed-metadata";
import { VaultWatcher } from "./watcher";
import { exists, writeAtomic } from "./atomic";

export interface FsVaultOptions {
  /** Obsidian's config folder name (default `.obsidian`). */
  configDir?: string;
  /** Watch for changes made by other programs (default true). */
  watch?: boolean;
  /** Quiet time before external changes are reconciled (default 150 ms). */
  debounceMs?: number;
  log?: (level: LogLevel, message: string) => void;
}

type LinkMap = Record<string, Record<string, number>>;

interface LinkPlan {
  renames: Map<string, string>;
  /** Notes (old paths) whose text may need rewriting. */
  sources: string[];
  context: ReturnType<typeof renameContext> | null;
}

interface ScanEntry {
  kind: "file" | "folder";
  vp: string;
  dp: string;
  st?: Stats;
}

const TRASH = ".trash";
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

/** `O_NOFOLLOW` where the platform has it (not on Windows, where every read takes the realpath check). */
const NOFOLLOW: number | undefined = (fsConstants as { O_NOFOLLOW?: number }).O_NOFOLLOW;

/** Listed files up to this size are read synchronously (a read of 256 KB takes well under a millisecond). */
const SYNC_READ_MAX = 256 * 1024;

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

  private readonly rootAbs: string;
  private rootReal = "";
  private readonly log: (level: LogLevel, message: string) => void;
  /** When the current run of synchronous file work began (see `breathe`). */
  private sliceStart = 0;
  private readonly files = new Map<string, VaultFile>();
  /** Change signature (size, mtime, ctime, inode) used to tell real changes from our own echoes. */
  private readonly sigs = new Map<string, string>();
  private readonly folders = new Set<string>();
  /** Vault path → disk-relative path, only where they differ (non-NFC names on disk). */
  private readonly disk = new Map<string, string>();
  /** Each note's metadata, packed (see `packed-metadata`). */
  private readonly meta = new Map<string, PackedMetadata>();
  private resolver = new LinkResolver();
  private readonly resolved: LinkMap = {};
  private readonly unresolved: LinkMap = {};
  /** Last-segment key of a link target → notes with such a link (to know whom a new/removed file affects). */
  private readonly linkKeyIndex = new Map<string, Set<string>>();
  private readonly keysOfSource = new Map<string, string[]>();
  private filters: string[] = [];
  private readonly listeners = new Set<(event: VaultEvent) => void>();
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly busy = new Map<string, number>();
  private watcher: VaultWatcher | null = null;
  private readyPromise: Promise<void> = Promise.resolve();
  private closed = false;

  private constructor(
    root: string,
    private readonly opts: FsVaultOptions,
  ) {
    this.rootAbs = nodePath.resolve(root);
    this.name = nodePath.basename(this.rootAbs).normalize("NFC");
    // Headless default: Obsidian's own default name when the user names none (the lint warning is expected here).
    this.configDir = opts.configDir ?? ".obsidian";
    this.log = opts.log ?? (() => {});
  }

  static async open(root: string, opts: FsVaultOptions = {}): Promise<FsVault> {
    const v = new FsVault(root, opts);
    v.readyPromise = v.init();
    await v.readyPromise;
    return v;
  }

  private async init(): Promise<void> {
    let st: Stats;
    try {
      st = await fsp.stat(this.rootAbs);
    } catch {
      throw new VaultError("not_found", `The vault folder "${this.name}" does not exist. Pass the path of an existing folder.`);
    }
    if (!st.isDirectory()) throw new VaultError("invalid_argument", `"${this.name}" is not a folder. Pass the path of the vault folder.`);
    this.rootReal = await fsp.realpath(this.rootAbs);
    const started = Date.now();
    await this.loadFilters();
    const entries: ScanEntry[] = [];
    await this.scanTree("", "", this.rootReal, [this.rootReal], entries, limiter(64));
    const notes: string[] = [];
    for (const e of entries) {
      if (e.kind === "folder") this.folders.add(e.vp);
      else {
        this.files.set(e.vp, toVaultFile(e.vp, e.st!));
        this.sigs.set(e.vp, sigOf(e.st!));
        if (isNotePath(e.vp)) notes.push(e.vp);
      }
      if (e.dp !== e.vp) this.disk.set(e.vp, e.dp);
    }
    const scanned = Date.now();
    // Small notes are read synchronously (see readListedSync), in slices between which other work runs.
    for (const vp of notes) {
      try {
        const abs = nodePath.join(this.rootAbs, this.diskOf(vp));
        const small = (this.files.get(vp)?.size ?? Infinity) <= SYNC_READ_MAX;
        this.setMeta(vp, small ? readFileSync(abs, "utf8") : decoder.decode(await fsp.readFile(abs)));
      } catch (e) {
        this.log("warn", `Could not read "${vp}": ${(e as Error).message}`);
      }
      await this.breathe();
    }
    const parsed = Date.now();
    this.resolver = new LinkResolver(this.files.keys());
    this.relink(this.meta.keys());
    const done = Date.now();
    this.log(
      "debug",
      `Opened ${this.files.size} files (${notes.length} notes) in ${this.folders.size} folders in ${done - started} ms ` +
        `(listing ${scanned - started} ms, reading and parsing ${parsed - scanned} ms, resolving links ${done - parsed} ms).`,
    );
    if (this.opts.watch !== false) {
      this.watcher = new VaultWatcher(this.rootAbs, {
        debounceMs: this.opts.debounceMs ?? 150,
        log: this.log,
        onChanges: (paths, rescan) => this.reconcileBatch(paths, rescan),
      });
      const dirs = [...this.folders].map((f) => this.diskOf(f));
      if (!this.configDir.includes("/")) dirs.push(this.configDir);
      this.watcher.start(dirs);
    }
  }

  // ---------------------------------------------------------------- reading

  listFiles(): VaultFile[] {
    return [...this.files.values()];
  }

  listFolders(): string[] {
    return [...this.folders];
  }

  stat(path: string): VaultFile | null {
    return this.files.get(path) ?? null;
  }

  isFolder(path: string): boolean {
    return this.folders.has(path);
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
  private listedSig(path: string): string | undefined {
    return NOFOLLOW === undefined ? undefined : this.sigs.get(path);
  }

  /** `listedSig`, for a file listed at no more than SYNC_READ_MAX bytes. */
  private smallListedSig(path: string): string | undefined {
    const sig = this.listedSig(path);
    return sig !== undefined && Number(sig.slice(0, sig.indexOf(":"))) <= SYNC_READ_MAX ? sig : undefined;
  }

  private async readBytes(path: string): Promise<Buffer> {
    // Fast path for a listed file: open it by its lexical path without following a final symbolic link,
    // and read it only if it is the very file the listing checked (same inode). A link (ELOOP), a folder
    // on the way swapped for a link, or a file replaced since (another inode) all take the fully checked
    // path. It saves a realpath per read, most of the main-thread cost of indexing every note.
    const small = this.smallListedSig(path);
    if (small !== undefined) return this.readListedSync(path, small) ?? this.readChecked(path);
    const sig = this.listedSig(path);
    if (sig !== undefined) {
      let fh: FileHandle | undefined;
      try {
        fh = await fsp.open(nodePath.join(this.rootAbs, this.diskOf(path)), fsConstants.O_RDONLY | NOFOLLOW!);
        const st = await fh.stat();
        if (st.isFile() && String(st.ino) === sig.slice(sig.lastIndexOf(":") + 1)) return await fh.readFile();
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
    const real = await this.realFor(path);
    try {
      return await fsp.readFile(real);
    } catch (e) {
      throw this.ioError(e, path);
    }
  }

  /**
   * `readBytes`' fast path for a small listed file, synchronously: open, fstat, read and close are
   * four syscalls of microseconds, while each asynchronous call costs ~60 µs of main-thread time
   * (the thread-pool round trip). Reading 10k notes the asynchronous way took ~650 ms of main-thread
   * time, this way ~60 ms. Null when the checked path must be taken (see `readBytes`).
   */
  private readListedSync(path: string, sig: string): Buffer | null;
  private readListedSync(path: string, sig: string, encoding: "utf8"): string | null;
  private readListedSync(path: string, sig: string, encoding?: "utf8"): Buffer | string | null {
    let fd: number | undefined;
    try {
      fd = openSync(nodePath.join(this.rootAbs, this.diskOf(path)), fsConstants.O_RDONLY | NOFOLLOW!);
      const st = fstatSync(fd);
      // Grown past the limit since it was listed: the asynchronous read (it does not block for long).
      if (!st.isFile() || String(st.ino) !== sig.slice(sig.lastIndexOf(":") + 1) || st.size > SYNC_READ_MAX) return null;
      return encoding ? readFileSync(fd, encoding) : readFileSync(fd);
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
    const m = this.meta.get(path);
    return m ? unpack(m) : null;
  }

  resolveLink(linkpath: string, sourcePath: string): string | null {
    return this.resolver.resolve(linkpath, sourcePath);
  }

  /** The live map (do not mutate), like Obsidian's `metadataCache.resolvedLinks`. */
  resolvedLinks(): Record<string, Record<string, number>> {
    return this.resolved;
  }

  unresolvedLinks(): Record<string, Record<string, number>> {
    return this.unresolved;
  }

  excludedFilters(): string[] {
    return this.filters;
  }

  onChange(listener: (event: VaultEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

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

  /** Waits until external changes noticed so far are reconciled (tests, CLI shutdown). */
  async settle(): Promise<void> {
    await this.watcher?.idle();
  }

  // ---------------------------------------------------------------- writing

  process(path: string, fn: (current: string) => string): Promise<string> {
    return this.withLocks([path], async () => {
      const real = await this.realFor(path);
      let current: string;
      try {
        current = decoder.decode(await fsp.readFile(real));
      } catch (e) {
        throw this.ioError(e, path);
      }
      const next = fn(current);
      if (typeof next !== "string") throw new VaultError("invalid_argument", `The new content of "${path}" must be text.`);
      if (next === current && this.files.has(path)) return current;
      await writeAtomic(real, encoder.encode(next));
      await this.afterWrite(path, real, next);
      return next;
    });
  }

  create(path: string, data: string | Uint8Array): Promise<void> {
    this.assertPath(path);
    return this.withLocks([path], async () => {
      if (this.files.has(path) || this.folders.has(path)) throw existsError(path);
      const real = await this.realFor(path);
      if (await exists(real)) throw existsError(path);
      const events = await this.ensureParents(parentOf(path));
      const bytes = typeof data === "string" ? encoder.encode(data) : data;
      await this.checkParentReal(real, path);
      await writeAtomic(real, bytes, { exclusive: true, existsError: () => existsError(path) });
      this.emitAll(events);
      await this.afterWrite(path, real, isNotePath(path) ? (typeof data === "string" ? data : decoder.decode(data)) : null);
    });
  }

  writeBinary(path: string, data: Uint8Array): Promise<void> {
    this.assertPath(path);
    return this.withLocks([path], async () => {
      if (this.folders.has(path)) throw new VaultError("invalid_argument", `"${path}" is a folder, not a file.`);
      const real = await this.realFor(path);
      const events = await this.ensureParents(parentOf(path));
      await this.checkParentReal(real, path);
      await writeAtomic(real, data);
      this.emitAll(events);
      await this.afterWrite(path, real, isNotePath(path) ? decoder.decode(data) : null);
    });
  }

  createFolder(path: string): Promise<void> {
    this.assertPath(path);
    return this.withLocks([path], async () => {
      if (this.files.has(path)) throw existsError(path);
      if (this.folders.has(path)) return;
      await this.realFor(path);
      this.emitAll(await this.ensureParents(path));
    });
  }

  trash(path: string): Promise<string> {
    this.assertPath(path);
    return this.withLocks([path], async () => {
      const isFile = this.files.has(path);
      if (!isFile && !this.folders.has(path)) throw notFound(path);
      const real = await this.entryFor(path);
      const trashAbs = nodePath.join(this.rootAbs, TRASH);
      await fsp.mkdir(trashAbs, { recursive: true });
      const trashReal = await fsp.realpath(trashAbs);
      if (!this.inside(trashReal)) throw new VaultError("forbidden", `The vault's ${TRASH} folder points outside the vault; remove that link, then retry.`);
      const name = nodePath.basename(real);
      const chosen = await freeName(trashReal, name, isFile);
      const dest = nodePath.join(trashReal, chosen);
      try {
        await fsp.rename(real, dest);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw this.ioError(e, path);
        await fsp.cp(real, dest, { recursive: true, preserveTimestamps: true });
        await fsp.rm(real, { recursive: true, force: true });
      }
      const events = isFile ? this.removeFileLocal(path) : this.removeFolderLocal(path);
      this.watcher?.unwatchUnder(this.diskOfRemoved(path));
      this.emitAll(events);
      const shown = chosen.normalize("NFC");
      return shown === name.normalize("NFC") ? `the vault's ${TRASH} folder` : `the vault's ${TRASH} folder (as "${shown}")`;
    });
  }

  async rename(path: string, newPath: string, onProgress?: RenameProgress): Promise<RenameResult> {
    this.assertPath(path);
    this.assertPath(newPath);
    if (path === newPath) return { path: newPath, linksUpdated: 0, notesUpdated: 0 };
    if (isUnder(newPath, path)) {
      throw new VaultError("invalid_argument", `Cannot move "${path}" into itself ("${newPath}"); pick a destination outside it.`);
    }
    const plan = await this.withLocks([path, newPath], async () => {
      const isFile = this.files.has(path);
      if (!isFile && !this.folders.has(path)) throw notFound(path);
      const src = await this.entryFor(path);
      const dst = await this.realFor(newPath);
      if (this.files.has(newPath) || this.folders.has(newPath)) {
        if (!(await sameEntry(src, dst))) throw existsError(newPath);
      } else if ((await exists(dst)) && !(await sameEntry(src, dst))) throw existsError(newPath);
      const map = new Map<string, string>();
      if (isFile) map.set(path, newPath);
      else for (const f of this.files.keys()) if (isUnder(f, path)) map.set(f, newPath + f.slice(path.length));
      const linkPlan = await this.planLinkUpdates(map);
      const events = await this.ensureParents(parentOf(newPath));
      await this.checkParentReal(dst, newPath);
      try {
        await fsp.rename(src, dst);
      } catch (e) {
        throw this.ioError(e, path);
      }
      const oldDp = this.diskOf(path);
      const newDp = this.diskOfNew(newPath);
      if (isFile) {
        events.push(...this.moveLocal(map, new Map(), oldDp, newDp));
        const st = await fsp.stat(dst);
        this.files.set(newPath, toVaultFile(newPath, st));
        this.sigs.set(newPath, sigOf(st));
      } else {
        const folderMap = new Map<string, string>([[path, newPath]]);
        for (const f of this.folders) if (f !== path && isUnder(f, path)) folderMap.set(f, newPath + f.slice(path.length));
        this.watcher?.unwatchUnder(oldDp);
        events.push(...this.moveLocal(map, folderMap, oldDp, newDp));
        for (const f of folderMap.values()) this.watcher?.watchDir(this.diskOf(f));
      }
      this.emitAll(events);
      return linkPlan;
    });
    const { linksUpdated, notesUpdated } = await this.updateLinksAfterRename(plan, onProgress);
    return { path: newPath, linksUpdated, notesUpdated };
  }

  /**
   * Before a move: which notes have links to the moving files (plus the moving notes themselves, whose
   * relative links may need recomputing), and how links resolved before the move.
   */
  private async planLinkUpdates(renames: Map<string, string>): Promise<LinkPlan> {
    // Both snapshots first, then the work in slices: at 10k notes the scan and the two resolvers
    // (before and after the move) held the event loop for 55-190 ms in one step.
    const links = Object.entries(this.resolved);
    const paths = [...this.resolver.paths()];
    const slice = new TimeSlice(SLICE_MS, 256);
    const sources = new Set<string>();
    for (const [src, targets] of links) {
      if (slice.due()) await slice.next();
      for (const t in targets) {
        if (renames.has(t)) {
          sources.add(src);
          break;
        }
      }
    }
    for (const p of renames.keys()) if (this.meta.has(p)) sources.add(p);
    if (sources.size === 0) return { renames, sources: [], context: null };
    const before = new LinkResolver();
    const after = new LinkResolver();
    for (const p of paths) {
      if (slice.due()) await slice.next();
      before.add(p);
      after.add(renames.get(p) ?? p);
    }
    return { renames, sources: [...sources], context: renameContext(before, renames, after) };
  }

  /**
   * After files moved: rewrites every link that pointed at a moved file (and a moved note's own relative
   * links) with `rewriteLinks`, each note through `this.process` — after the renamed paths' locks are
   * released. A note that fails to update is logged and skipped; the rename itself stands.
   */
  private async updateLinksAfterRename(plan: LinkPlan, onProgress?: RenameProgress): Promise<{ linksUpdated: number; notesUpdated: number }> {
    let linksUpdated = 0;
    let notesUpdated = 0;
    const ctx = plan.context;
    if (!ctx) return { linksUpdated, notesUpdated };
    // Progress at the start, every 25 notes (~a second of rewriting a large vault at worst) and at the end.
    const total = plan.sources.length;
    onProgress?.(0, total);
    for (const [i, oldSource] of plan.sources.entries()) {
      if (i > 0 && i % 25 === 0) onProgress?.(i, total);
      const newSource = plan.renames.get(oldSource) ?? oldSource;
      if (!this.files.has(newSource)) continue;
      let count = 0;
      try {
        await this.process(newSource, (text) => {
          const r = rewriteLinks(text, parseNote(text), oldSource, newSource, plan.renames, ctx.resolveOld, ctx.resolveNewShortest);
          count = r.count;
          return r.text;
        });
      } catch (e) {
        this.log("warn", `Could not update links in "${newSource}" after a rename: ${(e as Error).message}`);
        continue;
      }
      if (count > 0) {
        linksUpdated += count;
        notesUpdated++;
      }
    }
    onProgress?.(total, total);
    return { linksUpdated, notesUpdated };
  }

  processFrontMatter(path: string, fn: (fm: Record<string, unknown>) => void): Promise<void> {
    if (!isNotePath(path)) {
      return Promise.reject(new VaultError("invalid_argument", `"${path}" is not a markdown note; only notes have frontmatter.`));
    }
    return this.process(path, (text) => applyFrontmatterEdit(text, fn, path)).then(() => undefined);
  }

  // ---------------------------------------------------------------- state updates

  private async afterWrite(path: string, real: string, text: string | null): Promise<void> {
    const st = await fsp.stat(real);
    const isNew = !this.files.has(path);
    this.files.set(path, toVaultFile(path, st));
    this.sigs.set(path, sigOf(st));
    const dp = this.diskOfNew(path);
    if (dp !== path) this.disk.set(path, dp);
    if (isNotePath(path)) this.setMeta(path, text ?? decoder.decode(await fsp.readFile(real)));
    if (isNew) {
      this.resolver.add(path);
      this.relink(this.affectedByFile(path, [path]));
    } else if (isNotePath(path)) {
      this.relink([path]);
    }
    this.emit(isNew ? { type: "create", path } : { type: "modify", path });
  }

  /** Creates missing parent folders of a new entry on disk and in memory; returns their create events. */
  private async ensureParents(folder: string): Promise<VaultEvent[]> {
    const missing: string[] = [];
    for (let f = folder; f !== "" && !this.folders.has(f); f = parentOf(f)) {
      if (this.files.has(f)) throw new VaultError("conflict", `"${f}" is a file, so it cannot hold other files; choose another folder.`);
      missing.unshift(f);
    }
    if (missing.length === 0) return [];
    const real = await this.realFor(folder);
    try {
      await fsp.mkdir(real, { recursive: true });
    } catch (e) {
      throw this.ioError(e, folder);
    }
    const events: VaultEvent[] = [];
    for (const f of missing) {
      this.folders.add(f);
      const dp = this.diskOfNew(f);
      if (dp !== f) this.disk.set(f, dp);
      this.watcher?.watchDir(dp);
      events.push({ type: "create", path: f });
    }
    return events;
  }

  private setMeta(path: string, text: string): void {
    let m: NoteMetadata;
    try {
      m = parseNote(text);
    } catch (e) {
      this.log("warn", `Could not parse "${path}": ${(e as Error).message}`);
      m = { headings: [], links: [], embeds: [], frontmatterLinks: [], tags: [], blocks: {} };
    }
    this.unindexSource(path);
    this.meta.set(path, pack(m));
    this.indexSource(path, m);
  }

  private unindexSource(path: string): void {
    for (const k of this.keysOfSource.get(path) ?? []) {
      const s = this.linkKeyIndex.get(k);
      s?.delete(path);
      if (s?.size === 0) this.linkKeyIndex.delete(k);
    }
    this.keysOfSource.delete(path);
  }

  /** Notes whose links may resolve differently now that `file` appeared or disappeared. */
  private affectedByFile(file: string, extra: Iterable<string> = []): Set<string> {
    const out = new Set<string>(extra);
    for (const k of fileKeys(file)) for (const s of this.linkKeyIndex.get(k) ?? []) out.add(s);
    return out;
  }

  /** Recomputes the link maps of the given sources (those that are no longer notes are dropped). */
  private relink(sources: Iterable<string>): void {
    const notes: [string, PackedMetadata][] = [];
    for (const s of sources) {
      delete this.resolved[s];
      delete this.unresolved[s];
      const m = this.meta.get(s);
      if (m) notes.push([s, m]);
    }
    if (notes.length === 0) return;
    // Unpacked one note at a time: all of them at once (opening the vault) would be ~600k objects at
    // 10k notes, alive long enough to be promoted and then left for a full collection to clear.
    const unpacked = function* (): Generator<[string, NoteMetadata]> {
      for (const [s, m] of notes) yield [s, unpack(m)];
    };
    const maps = computeLinkMaps(unpacked(), this.resolver);
    for (const [s] of notes) {
      this.resolved[s] = maps.resolved[s] ?? {};
      this.unresolved[s] = maps.unresolved[s] ?? {};
    }
  }

  private removeFileLocal(path: string): VaultEvent[] {
    if (!this.files.has(path)) return [];
    this.files.delete(path);
    this.sigs.delete(path);
    this.disk.delete(path);
    this.resolver.remove(path);
    this.unindexSource(path);
    this.meta.delete(path);
    delete this.resolved[path];
    delete this.unresolved[path];
    this.relink(this.affectedByFile(path));
    return [{ type: "delete", path }];
  }

  private removeFolderLocal(folder: string): VaultEvent[] {
    const events: VaultEvent[] = [];
    for (const f of [...this.files.keys()]) if (isUnder(f, folder)) events.push(...this.removeFileLocal(f));
    const sub = [...this.folders].filter((f) => isUnder(f, folder)).sort((a, b) => b.length - a.length);
    for (const f of sub) {
      this.folders.delete(f);
      this.disk.delete(f);
      events.push({ type: "delete", path: f });
    }
    return events;
  }

  /** Moves files and folders in memory (after the disk move) and re-resolves what it affects. */
  private moveLocal(fileMap: Map<string, string>, folderMap: Map<string, string>, oldDp: string, newDp: string): VaultEvent[] {
    const events: VaultEvent[] = [];
    const affected = new Set<string>();
    const remapDisk = (oldVp: string, newVp: string) => {
      const d = this.disk.get(oldVp);
      this.disk.delete(oldVp);
      const nd = d !== undefined && d.startsWith(oldDp) ? newDp + d.slice(oldDp.length) : d;
      if (nd !== undefined && nd !== newVp) this.disk.set(newVp, nd);
    };
    for (const [o, n] of folderMap) {
      this.folders.delete(o);
      this.folders.add(n);
      remapDisk(o, n);
      events.push({ type: "rename", path: n, oldPath: o });
    }
    for (const [o, n] of fileMap) {
      const f = this.files.get(o)!;
      this.files.delete(o);
      this.files.set(n, { ...f, path: n, basename: basenameOf(n), extension: extensionOf(n) });
      const sig = this.sigs.get(o);
      this.sigs.delete(o);
      if (sig) this.sigs.set(n, sig);
      remapDisk(o, n);
      this.resolver.remove(o);
      this.resolver.add(n);
      const m = this.meta.get(o);
      if (m) {
        this.unindexSource(o);
        this.meta.delete(o);
        delete this.resolved[o];
        delete this.unresolved[o];
        this.meta.set(n, m);
        this.indexSource(n, unpack(m));
        affected.add(n);
      }
      for (const s of this.affectedByFile(o)) affected.add(s);
      for (const s of this.affectedByFile(n)) affected.add(s);
      events.push({ type: "rename", path: n, oldPath: o });
    }
    for (const o of fileMap.keys()) affected.delete(o);
    this.relink(affected);
    return events;
  }

  private indexSource(path: string, m: NoteMetadata): void {
    this.unindexSource(path);
    const keys = new Set<string>();
    for (const l of [...m.links, ...m.embeds, ...m.frontmatterLinks]) for (const k of linkKeys(l.link)) keys.add(k);
    const arr = [...keys];
    this.keysOfSource.set(path, arr);
    for (const k of arr) {
      let s = this.linkKeyIndex.get(k);
      if (!s) this.linkKeyIndex.set(k, (s = new Set()));
      s.add(path);
    }
  }

  private emit(event: VaultEvent): void {
    if (this.closed) return;
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch (e) {
        this.log("error", `A vault change listener failed: ${(e as Error).message}`);
      }
    }
  }

  private emitAll(events: VaultEvent[]): void {
    for (const e of events) this.emit(e);
  }

  // ---------------------------------------------------------------- external changes

  private async reconcileBatch(paths: Set<string>, rescan: Set<string>): Promise<void> {
    if (this.closed) return;
    for (const dir of rescan) {
      // The OS did not say what changed in `dir`: compare its listing with ours.
      const vdir = dir.normalize("NFC");
      if (dir !== "" && !this.folders.has(vdir)) {
        paths.add(dir);
        continue;
      }
      let names: string[] = [];
      try {
        names = await fsp.readdir(nodePath.join(this.rootAbs, dir));
      } catch {
        paths.add(dir);
        continue;
      }
      for (const n of names) paths.add(dir ? `${dir}/${n}` : n);
      for (const f of [...this.files.keys(), ...this.folders]) if (parentOf(f) === vdir) paths.add(this.diskOf(f));
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
    const segs = dp.split("/");
    if (segs[0] === this.configDir || (this.configDir.includes("/") && isUnder(dp, this.configDir))) {
      if (dp === this.configDir) this.watcher?.watchDir(dp);
      if (dp === this.configDir || dp === `${this.configDir}/app.json`) await this.loadFilters();
      return;
    }
    if (segs.some((s) => s.startsWith(".") || s === "")) return;
    const vp = dp.normalize("NFC");
    if (this.isBusy(vp)) {
      this.watcher?.requeue(dp);
      return;
    }
    const parentVp = parentOf(vp);
    if (parentVp !== "" && !this.folders.has(parentVp)) {
      // Its folder is new to us too: reconcile from the topmost unknown folder (which scans everything below).
      const parts = dp.split("/");
      for (let i = 1; i < parts.length; i++) {
        const anc = parts.slice(0, i).join("/");
        if (!this.folders.has(anc.normalize("NFC"))) return this.reconcile(anc);
      }
    }
    const abs = nodePath.join(this.rootAbs, dp);
    let st: Stats | null = null;
    try {
      const l = await fsp.lstat(abs);
      if (l.isSymbolicLink()) {
        const r = await fsp.realpath(abs);
        if (this.allowedReal(r, abs)) st = await fsp.stat(r);
      } else st = l;
    } catch {
      st = null;
    }
    const events: VaultEvent[] = [];
    if (!st || (!st.isFile() && !st.isDirectory())) {
      if (this.files.has(vp)) events.push(...this.removeFileLocal(vp));
      else if (this.folders.has(vp)) {
        events.push(...this.removeFolderLocal(vp));
        this.watcher?.unwatchUnder(dp);
      }
    } else if (st.isDirectory()) {
      if (this.files.has(vp)) events.push(...this.removeFileLocal(vp));
      if (!this.folders.has(vp)) {
        const entries: ScanEntry[] = [{ kind: "folder", vp, dp }];
        const real = await fsp.realpath(abs);
        await this.scanTree(vp, dp, real, [this.rootReal, real], entries, limiter(16));
        const added: string[] = [];
        for (const e of entries) {
          if (e.dp !== e.vp) this.disk.set(e.vp, e.dp);
          if (e.kind === "folder") {
            if (this.folders.has(e.vp)) continue;
            this.folders.add(e.vp);
            this.watcher?.watchDir(e.dp);
            events.push({ type: "create", path: e.vp });
          } else if (!this.files.has(e.vp)) {
            this.files.set(e.vp, toVaultFile(e.vp, e.st!));
            this.sigs.set(e.vp, sigOf(e.st!));
            this.resolver.add(e.vp);
            if (isNotePath(e.vp)) {
              try {
                this.setMeta(e.vp, decoder.decode(await fsp.readFile(nodePath.join(this.rootAbs, e.dp))));
              } catch {
                this.setMeta(e.vp, "");
              }
            }
            added.push(e.vp);
            events.push({ type: "create", path: e.vp });
          }
        }
        const affected = new Set<string>();
        for (const f of added) for (const s of this.affectedByFile(f, isNotePath(f) ? [f] : [])) affected.add(s);
        this.relink(affected);
      }
    } else {
      if (this.folders.has(vp)) {
        events.push(...this.removeFolderLocal(vp));
        this.watcher?.unwatchUnder(dp);
      }
      const sig = sigOf(st);
      const known = this.files.has(vp);
      if (known && this.sigs.get(vp) === sig) return;
      let text: string | null = null;
      if (isNotePath(vp)) {
        try {
          text = decoder.decode(await fsp.readFile(abs));
        } catch {
          return; // gone again; a later event will tell
        }
      }
      if (this.isBusy(vp)) {
        this.watcher?.requeue(dp);
        return;
      }
      this.files.set(vp, toVaultFile(vp, st));
      this.sigs.set(vp, sig);
      if (dp !== vp) this.disk.set(vp, dp);
      if (text !== null) this.setMeta(vp, text);
      if (!known) {
        this.resolver.add(vp);
        this.relink(this.affectedByFile(vp, text !== null ? [vp] : []));
      } else if (text !== null) this.relink([vp]);
      events.push({ type: known ? "modify" : "create", path: vp });
    }
    this.emitAll(events);
  }

  private async loadFilters(): Promise<void> {
    try {
      const raw = await fsp.readFile(nodePath.join(this.rootAbs, this.configDir, "app.json"), "utf8");
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

  // ---------------------------------------------------------------- scanning

  private async scanTree(vp0: string, dp0: string, real0: string, chain: string[], out: ScanEntry[], limit: Limiter): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await limit(() => fsp.readdir(nodePath.join(this.rootAbs, dp0), { withFileTypes: true }));
    } catch (e) {
      this.log("warn", `Could not list "${vp0}": ${(e as Error).message}`);
      return;
    }
    const jobs: Promise<void>[] = [];
    for (const e of entries) {
      const name = e.name;
      if (name.startsWith(".")) continue;
      const vname = name.normalize("NFC");
      const vp = vp0 ? `${vp0}/${vname}` : vname;
      if (vp === this.configDir) continue;
      const dp = dp0 ? `${dp0}/${name}` : name;
      let real = nodePath.join(real0, name);
      if (e.isSymbolicLink()) {
        jobs.push(
          (async () => {
            const abs = nodePath.join(this.rootAbs, dp);
            let r: string;
            let st: Stats;
            try {
              r = await fsp.realpath(abs);
              st = await fsp.stat(r);
            } catch {
              return; // dangling
            }
            if (!this.allowedReal(r, abs)) {
              this.log("debug", `Skipping "${vp}": a symbolic link to outside the vault.`);
              return;
            }
            real = r;
            if (st.isDirectory()) {
              if (chain.some((c) => c === r || c.startsWith(r + nodePath.sep))) return; // a cycle
              out.push({ kind: "folder", vp, dp });
              await this.scanTree(vp, dp, r, [...chain, r], out, limit);
            } else if (st.isFile()) out.push({ kind: "file", vp, dp, st });
          })(),
        );
      } else if (e.isDirectory()) {
        out.push({ kind: "folder", vp, dp });
        jobs.push(this.scanTree(vp, dp, real, [...chain, real], out, limit));
      } else if (e.isFile()) {
        // Synchronously: a stat is a syscall of microseconds, an asynchronous one ~60 µs of main-thread time.
        try {
          out.push({ kind: "file", vp, dp, st: statSync(real) });
        } catch {
          /* gone meanwhile */
        }
        await this.breathe();
      }
    }
    await Promise.all(jobs);
  }

  /** Lets other work run once ~20 ms of synchronous file work have gone by (scanning, reading every note). */
  private async breathe(): Promise<void> {
    const now = performance.now();
    if (now - this.sliceStart < 20) return;
    await new Promise((r) => setImmediate(r));
    this.sliceStart = performance.now();
  }

  // ---------------------------------------------------------------- paths and safety

  private inside(real: string): boolean {
    return real === this.rootReal || real.startsWith(this.rootReal.endsWith(nodePath.sep) ? this.rootReal : this.rootReal + nodePath.sep);
  }

  /**
   * A real path may be used when it is inside the vault; when it differs from the path as written
   * (a symbolic link on the way) it must also not land in a dot-folder (config, `.git`, `.trash`).
   */
  private allowedReal(real: string, lexicalAbs: string): boolean {
    if (!this.inside(real)) return false;
    const rel = nodePath.relative(this.rootReal, real);
    if (rel === nodePath.relative(this.rootAbs, lexicalAbs)) return true;
    return !rel.split(nodePath.sep).some((s) => s.startsWith(".")) && !isUnder(rel.split(nodePath.sep).join("/"), this.configDir);
  }

  /** The real path to use for I/O on `path`, after checking it (or its nearest existing ancestor) stays in the vault. */
  private async realFor(path: string): Promise<string> {
    if (path.startsWith("/") || path.split("/").some((s) => s === ".." || s === ".") || path.includes("\0")) {
      throw new VaultError("invalid_path", `"${path}" is not a vault-relative path; use a path such as "Folder/Note.md".`);
    }
    const abs = nodePath.join(this.rootAbs, this.diskOf(path));
    let cur = abs;
    const rest: string[] = [];
    for (;;) {
      try {
        const r = await fsp.realpath(cur);
        if (!this.allowedReal(r, cur)) throw forbidden(path);
        return rest.length ? nodePath.join(r, ...rest.reverse()) : r;
      } catch (e) {
        if (isVaultError(e)) throw e;
        const code = (e as NodeJS.ErrnoException).code;
        if ((code !== "ENOENT" && code !== "ENOTDIR") || cur === this.rootAbs) throw this.ioError(e, path);
        try {
          // Missing because it is a dangling symbolic link? Never write through one.
          if ((await fsp.lstat(cur)).isSymbolicLink()) throw forbidden(path);
        } catch (e2) {
          if (isVaultError(e2)) throw e2;
        }
        rest.push(nodePath.basename(cur));
        cur = nodePath.dirname(cur);
      }
    }
  }

  /**
   * The on-disk entry itself (not where a symbolic link points), for moving it: its folder's real path
   * (checked to be inside the vault) plus its own name. Renaming or trashing an in-vault link moves the link.
   */
  private async entryFor(path: string): Promise<string> {
    const parent = parentOf(path);
    const dir = parent === "" ? this.rootReal : await this.realFor(parent);
    const dp = this.diskOf(path);
    return nodePath.join(dir, dp.slice(dp.lastIndexOf("/") + 1));
  }

  /** After creating parents: the folder we will write into must still be inside the vault. */
  private async checkParentReal(real: string, path: string): Promise<void> {
    const dir = nodePath.dirname(real);
    const r = await fsp.realpath(dir).catch(() => null);
    if (!r || !this.inside(r)) throw forbidden(path);
  }

  private diskOf(vp: string): string {
    const d = this.disk.get(vp);
    if (d !== undefined) return d;
    for (let i = vp.lastIndexOf("/"); i > 0; i = vp.lastIndexOf("/", i - 1)) {
      const da = this.disk.get(vp.slice(0, i));
      if (da !== undefined) return da + vp.slice(i);
    }
    return vp;
  }

  /** Disk path of an entry we are creating: its known ancestors' disk names plus its own (NFC) name. */
  private diskOfNew(vp: string): string {
    if (this.disk.has(vp)) return this.disk.get(vp)!;
    const parent = parentOf(vp);
    const name = vp.slice(vp.lastIndexOf("/") + 1);
    return parent ? `${this.diskOf(parent)}/${name}` : name;
  }

  private diskOfRemoved(vp: string): string {
    return this.diskOf(vp);
  }

  private assertPath(path: string): void {
    if (typeof path !== "string" || path === "" || path.startsWith("/") || path.endsWith("/")) {
      throw new VaultError("invalid_path", `"${String(path)}" is not a valid vault path; give a path such as "Folder/Note.md".`);
    }
  }

  private isBusy(vp: string): boolean {
    if (this.busy.size === 0) return false;
    for (let p = vp; ; p = parentOf(p)) {
      if (this.busy.has(p)) return true;
      if (p === "") return false;
    }
  }

  /** Runs `fn` once earlier operations on any of `paths` are done; marks them busy meanwhile. */
  private async withLocks<T>(paths: string[], fn: () => Promise<T>): Promise<T> {
    const keys = [...new Set(paths)];
    const prev = keys.map((k) => this.locks.get(k) ?? Promise.resolve());
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    for (const k of keys) this.locks.set(k, mine);
    await Promise.all(prev.map((p) => p.catch(() => undefined)));
    for (const k of keys) this.busy.set(k, (this.busy.get(k) ?? 0) + 1);
    try {
      return await fn();
    } finally {
      for (const k of keys) {
        const n = (this.busy.get(k) ?? 1) - 1;
        if (n <= 0) this.busy.delete(k);
        else this.busy.set(k, n);
        if (this.locks.get(k) === mine) this.locks.delete(k);
      }
      release();
    }
  }

  private ioError(e: unknown, path: string): Error {
    if (isVaultError(e)) return e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return notFound(path);
    if (code === "EISDIR") return new VaultError("invalid_argument", `"${path}" is a folder, not a file.`);
    if (code === "EACCES" || code === "EPERM") return new VaultError("forbidden", `The operating system refused access to "${path}" (permissions); check the file's permissions.`);
    if (code === "EEXIST" || code === "ENOTEMPTY") return existsError(path);
    const msg = e instanceof Error ? e.message : String(e);
    // Never leak the machine path: keep the error code only.
    return new Error(`File system error on "${path}"${code ? ` (${code})` : ""}${code ? "" : `: ${msg.split(this.rootAbs).join("<vault>")}`}`);
  }
}

// ------------------------------------------------------------------ helpers

function toVaultFile(vp: string, st: Stats): VaultFile {
  return {
    path: vp,
    basename: basenameOf(vp),
    extension: extensionOf(vp),
    size: st.size,
    mtime: Math.floor(st.mtimeMs),
    ctime: Math.floor(st.birthtimeMs || st.ctimeMs),
  };
}

function sigOf(st: Stats): string {
  return `${st.size}:${st.mtimeMs}:${st.ctimeMs}:${st.ino}`;
}

function stripExt(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(0, dot) : name;
}

/** Index keys of a link target: its last segment, with and without extension, lower-cased. */
function linkKeys(link: string): string[] {
  const path = splitLinkpath(link).path.trim();
  if (!path) return [];
  const seg = path.slice(path.lastIndexOf("/") + 1).normalize("NFC").toLowerCase();
  const a = stripExt(seg);
  return a === seg ? [seg] : [seg, a];
}

function fileKeys(vp: string): string[] {
  const name = vp.slice(vp.lastIndexOf("/") + 1).toLowerCase();
  const a = stripExt(name);
  return a === name ? [name] : [name, a];
}

function notFound(path: string): VaultError {
  return new VaultError("not_found", `No note or file at "${path}". Use list_documents or find_notes to see what exists.`);
}

function existsError(path: string): VaultError {
  return new VaultError("exists", `"${path}" already exists. Choose another name, or edit the existing file instead.`);
}

function forbidden(path: string): VaultError {
  return new VaultError("forbidden", `"${path}" leads outside the vault (a symbolic link); it cannot be read or changed through this server.`);
}

/** True when both paths are the same directory entry (a case-only rename on a case-insensitive disk). */
async function sameEntry(a: string, b: string): Promise<boolean> {
  try {
    const [sa, sb] = await Promise.all([fsp.lstat(a), fsp.lstat(b)]);
    return sa.ino === sb.ino && sa.dev === sb.dev && a.toLowerCase() === b.toLowerCase();
  } catch {
    return false;
  }
}

async function freeName(dir: string, name: string, isFile: boolean): Promise<string> {
  const dot = isFile ? name.lastIndexOf(".") : -1;
  const base = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : "";
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? name : `${base} ${i}${ext}`;
    if (!(await exists(nodePath.join(dir, candidate)))) return candidate;
  }
}


type Limiter = <T>(fn: () => Promise<T>) => Promise<T>;

function limiter(n: number): Limiter {
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

// ------------------------------------------------------------------ frontmatter editing

/**
 * Applies `fn` to a note's frontmatter and returns the new text. The YAML block is edited through
 * yaml's Document API, so untouched keys keep their comments, order and style; the body after the
 * block is kept byte for byte; CRLF notes stay CRLF; a BOM stays. Returns `text` itself when `fn`
 * changed nothing. Invalid YAML → `invalid_argument` (the caller writes nothing).
 */
export function applyFrontmatterEdit(text: string, fn: (fm: Record<string, unknown>) => void, path: string): string {
  const split = splitFrontmatter(text);
  const bom = text.charCodeAt(0) === 0xfeff ? "\uFEFF" : "";
  const firstNl = text.indexOf("\n");
  const eol = firstNl > 0 && text.charCodeAt(firstNl - 1) === 13 ? "\r\n" : "\n";
  let doc: Document;
  let original: Record<string, unknown> = {};
  if (split.yaml !== null) {
    let js: unknown;
    try {
      doc = parseDocument(split.yaml, { schema: "core", prettyErrors: false, logLevel: "silent" });
      if (doc.errors.length > 0) throw doc.errors[0];
      js = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
      throw new VaultError("invalid_argument", `The frontmatter of "${path}" is not valid YAML (${why}). Fix it with a full edit of the note, then retry.`);
    }
    if (js !== null && js !== undefined) {
      if (typeof js !== "object" || Array.isArray(js)) {
        throw new VaultError("invalid_argument", `The frontmatter of "${path}" is not a list of properties (key: value). Fix it with a full edit of the note, then retry.`);
      }
      original = js as Record<string, unknown>;
    }
  } else {
    doc = new Document({});
  }
  const working = structuredClone(original);
  fn(working);
  if (deepEqual(working, original)) return text;
  if (!isMap(doc.contents)) doc.contents = doc.createNode({});
  for (const key of Object.keys(original)) if (!Object.prototype.hasOwnProperty.call(working, key)) doc.delete(key);
  for (const [k, v] of Object.entries(working)) {
    if (v === undefined) {
      doc.delete(k);
      continue;
    }
    if (!Object.prototype.hasOwnProperty.call(original, k) || !deepEqual(v, original[k])) doc.set(k, v);
  }
  let yamlText = isMap(doc.contents) && doc.contents.items.length === 0 && !doc.commentBefore && !doc.comment ? "" : doc.toString({ lineWidth: 0 });
  yamlText = yamlText.replace(/\r?\n/g, eol);
  if (split.yaml !== null) {
    const body = split.bodyOffset <= text.length ? text.slice(split.bodyOffset) : "";
    const closing = split.bodyOffset <= text.length ? eol : "";
    return `${bom}---${eol}${yamlText}---${closing}${body}`;
  }
  return `${bom}---${eol}${yamlText}---${eol}${text.slice(bom.length)}`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  const ka = Object.keys(a);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}
