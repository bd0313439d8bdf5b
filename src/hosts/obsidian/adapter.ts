import { normalizePath, TFile, TFolder, type App, type CachedMetadata, type EventRef, type Events, type Pos as ObsidianPos, type TAbstractFile } from "obsidian";
import { dict } from "../../core/dict";
import { VaultError } from "../../core/errors";
import type { BlockRef, FrontmatterLinkRef, HeadingRef, LinkRef, NoteMetadata, Pos, TagRef } from "../../core/metadata";
import { isUnder } from "../../core/paths";
import { isNotePath, parentOf, type RenamePlan, type RenameProgress, type RenameResult, type VaultEvent, type VaultFile, type VaultPort } from "../../core/vault";

/** Hands an event registration to its owner (the plugin's `registerEvent`), so unloading removes it. */
export type EventRegistrar = (ref: EventRef) => void;

/** Internal Obsidian APIs we use when present; none is in the public types, so every use is guarded. */
interface VaultWithConfig {
  getConfig?: (key: string) => unknown;
}
interface MetadataCacheWithResolved {
  resolved?: unknown;
}

/**
 * The vault port over Obsidian's `App`. Reads and writes go through `app.vault` and `app.fileManager`
 * so Obsidian's own caches, link updates, trash setting and sync stay in charge.
 *
 * Change events: vault `create`/`delete`/`rename` are passed on at once; for notes, `modify` is passed on
 * when the metadata cache has re-indexed the note (`metadataCache` `changed`), so listeners that read
 * `getMetadata` see the new links and headings. Attachments' `modify` is passed on at once.
 */
export class ObsidianVault implements VaultPort {
  private readonly listeners = new Set<(event: VaultEvent) => void>();
  private readonly refs: { emitter: Events; ref: EventRef }[] = [];
  private closed = false;

  constructor(
    private readonly app: App,
    private readonly register: EventRegistrar = () => {},
  ) {
    const { vault, metadataCache } = app;
    this.listen(vault, vault.on("create", (f) => this.fileEvent("create", f)));
    this.listen(
      vault,
      vault.on("modify", (f) => {
        if (f instanceof TFile && !isNotePath(f.path)) this.emit({ type: "modify", path: f.path });
      }),
    );
    this.listen(vault, vault.on("delete", (f) => this.fileEvent("delete", f)));
    this.listen(
      vault,
      vault.on("rename", (f, oldPath) => {
        if (f instanceof TFile) this.emit({ type: "rename", path: f.path, oldPath });
      }),
    );
    this.listen(metadataCache, metadataCache.on("changed", (f) => this.emit({ type: "modify", path: f.path })));
  }

  get name(): string {
    return this.app.vault.getName();
  }

  get configDir(): string {
    return this.app.vault.configDir;
  }

  private listen(emitter: Events, ref: EventRef): void {
    this.refs.push({ emitter, ref });
    this.register(ref);
  }

  private fileEvent(type: "create" | "delete", f: TAbstractFile): void {
    if (f instanceof TFile) this.emit({ type, path: f.path });
  }

  private emit(event: VaultEvent): void {
    if (this.closed || isUnder(event.path, this.configDir)) return;
    for (const l of [...this.listeners]) {
      try {
        l(event);
      } catch (e) {
        console.error("[vault-mcp] a vault change listener failed", e);
      }
    }
  }

  // ---- listing ----------------------------------------------------------------------------

  listFiles(): VaultFile[] {
    return this.app.vault
      .getFiles()
      .filter((f) => !isUnder(f.path, this.configDir))
      .map(toVaultFile);
  }

  listFolders(): string[] {
    return this.app.vault
      .getAllLoadedFiles()
      .filter((f): f is TFolder => f instanceof TFolder && !f.isRoot() && f.path !== "" && f.path !== "/")
      .map((f) => f.path)
      .filter((p) => !isUnder(p, this.configDir));
  }

  stat(path: string): VaultFile | null {
    const f = this.file(path);
    return f ? toVaultFile(f) : null;
  }

  isFolder(path: string): boolean {
    if (path === "") return true;
    return this.app.vault.getAbstractFileByPath(path) instanceof TFolder;
  }

  private file(path: string): TFile | null {
    if (path === "") return null;
    const f = this.app.vault.getAbstractFileByPath(path);
    return f instanceof TFile ? f : null;
  }

  private requireFile(path: string): TFile {
    const f = this.file(path);
    if (!f) {
      const what = this.isFolder(path) ? "is a folder, not a file" : "does not exist";
      throw new VaultError("not_found", `"${path}" ${what}. Use list_documents or find_notes to see what exists.`);
    }
    return f;
  }

  // ---- reading ----------------------------------------------------------------------------

  async read(path: string): Promise<string> {
    return this.app.vault.read(this.requireFile(path));
  }

  async readBinary(path: string): Promise<Uint8Array> {
    return new Uint8Array(await this.app.vault.readBinary(this.requireFile(path)));
  }

  // ---- writing ----------------------------------------------------------------------------

  async process(path: string, fn: (current: string) => string): Promise<string> {
    return this.app.vault.process(this.requireFile(path), fn);
  }

  async create(path: string, data: string | Uint8Array): Promise<void> {
    if (this.app.vault.getAbstractFileByPath(path)) {
      throw new VaultError("exists", `"${path}" already exists. Choose another path, or edit the existing file instead.`);
    }
    await this.ensureFolder(parentOf(path));
    if (typeof data === "string") await this.app.vault.create(path, data);
    else await this.app.vault.createBinary(path, toArrayBuffer(data));
  }

  async writeBinary(path: string, data: Uint8Array): Promise<void> {
    const f = this.file(path);
    if (f) await this.app.vault.modifyBinary(f, toArrayBuffer(data));
    else await this.create(path, data);
  }

  async createFolder(path: string): Promise<void> {
    const existing = this.app.vault.getAbstractFileByPath(path);
    if (existing instanceof TFile) {
      throw new VaultError("exists", `"${path}" is a file; a folder cannot be created there. Choose another folder name.`);
    }
    await this.ensureFolder(path);
  }

  /** Creates `path` and any missing parents; an existing folder is fine. */
  private async ensureFolder(path: string): Promise<void> {
    if (path === "") return;
    let sofar = "";
    for (const seg of path.split("/")) {
      sofar = sofar ? `${sofar}/${seg}` : seg;
      const f = this.app.vault.getAbstractFileByPath(sofar);
      if (f instanceof TFolder) continue;
      if (f) throw new VaultError("exists", `"${sofar}" is a file, so it cannot hold "${path}". Choose another folder.`);
      try {
        await this.app.vault.createFolder(normalizePath(sofar));
      } catch (e) {
        // Another writer may have created it meanwhile.
        if (!(this.app.vault.getAbstractFileByPath(sofar) instanceof TFolder)) throw e;
      }
    }
  }

  async trash(path: string): Promise<string> {
    const f = path === "" ? null : this.app.vault.getAbstractFileByPath(path);
    if (!f) throw new VaultError("not_found", `"${path}" does not exist, so there is nothing to delete. Use list_documents to see what exists.`);
    const where = this.trashDescription();
    await this.app.fileManager.trashFile(f);
    return where;
  }

  /** Where `fileManager.trashFile` sends files, from the user's "Deleted files" setting. */
  trashDescription(): string {
    const option = this.config("trashOption");
    if (option === "system") return "the system trash";
    if (option === "local") return "the vault's .trash folder";
    if (option === "none") return "permanently deleted";
    return "the trash chosen in Obsidian's settings";
  }

  async rename(path: string, newPath: string, _onProgress?: RenameProgress, beforeMove?: (plan: RenamePlan) => Promise<void>): Promise<RenameResult> {
    const f = path === "" ? null : this.app.vault.getAbstractFileByPath(path);
    if (!f) throw new VaultError("not_found", `"${path}" does not exist, so it cannot be moved. Use list_documents to see what exists.`);
    if (newPath === path) return { path, linksUpdated: 0, notesUpdated: 0 };
    const existing = this.app.vault.getAbstractFileByPath(newPath);
    if (existing && existing !== f && newPath.toLowerCase() !== path.toLowerCase()) {
      throw new VaultError("exists", `"${newPath}" already exists. Choose another destination, or move that file away first.`);
    }
    if (f instanceof TFolder && isUnder(newPath, path)) {
      throw new VaultError("invalid_argument", `A folder cannot be moved into itself ("${path}" → "${newPath}"). Choose a destination outside it.`);
    }
    await this.ensureFolder(parentOf(newPath));

    // Which notes link to the moved file(s), and their text before the move.
    const moved = new Map<string, string>();
    const collect = (x: TAbstractFile) => {
      if (x instanceof TFile) moved.set(x.path, newPath + x.path.slice(path.length));
      else if (x instanceof TFolder) x.children.forEach(collect);
    };
    collect(f);
    const before = new Map<string, { text: string; originals: Set<string> }>();
    const notes = new Set<string>();
    for (const [source, targets] of Object.entries(this.app.metadataCache.resolvedLinks)) {
      if (!Object.keys(targets).some((t) => moved.has(t))) continue;
      notes.add(source);
      const file = this.file(source);
      const cache = file ? this.app.metadataCache.getFileCache(file) : null;
      if (!file || !cache) continue;
      const originals = new Set<string>();
      for (const ref of [...(cache.links ?? []), ...(cache.embeds ?? []), ...(cache.frontmatterLinks ?? [])]) {
        const target = this.resolveLink(ref.link.split("#")[0], source);
        if (target && moved.has(target)) originals.add(ref.original);
      }
      if (originals.size) before.set(source, { text: await this.app.vault.read(file), originals });
    }

    // The journal (the write service's): Obsidian moves the file, then rewrites each linking note; a
    // crash in between is finished at the next start from this plan.
    for (const p of moved.keys()) if (isNotePath(p)) notes.add(p);
    await beforeMove?.({ files: moved, notes: [...notes] });
    await this.app.fileManager.renameFile(f, normalizePath(newPath));

    // Count what Obsidian actually rewrote: for each linking note, how many of those links' texts are gone.
    let linksUpdated = 0;
    let notesUpdated = 0;
    const updatedPaths: string[] = [];
    for (const [source, { text, originals }] of before) {
      const file = this.file(moved.get(source) ?? source);
      if (!file) continue;
      const after = await this.app.vault.read(file);
      if (after === text) continue;
      notesUpdated++;
      updatedPaths.push(file.path);
      for (const o of originals) linksUpdated += Math.max(0, countOccurrences(text, o) - countOccurrences(after, o));
    }
    return { path: newPath, linksUpdated, notesUpdated, updatedPaths };
  }

  async processFrontMatter(path: string, fn: (fm: Record<string, unknown>) => void): Promise<void> {
    const file = this.requireFile(path);
    let called = false;
    try {
      await this.app.fileManager.processFrontMatter(file, (fm: Record<string, unknown>) => {
        called = true;
        fn(fm);
      });
    } catch (e) {
      // Obsidian throws before calling `fn` when the existing YAML does not parse.
      if (called) throw e;
      const detail = e instanceof Error ? e.message : String(e);
      throw new VaultError(
        "invalid_argument",
        `The frontmatter of "${path}" is not valid YAML (${detail}); fix it by editing the note's text, then try again.`,
      );
    }
  }

  // ---- metadata ---------------------------------------------------------------------------

  getMetadata(path: string): NoteMetadata | null {
    const f = this.file(path);
    if (!f || !isNotePath(f.path)) return null;
    const cache = this.app.metadataCache.getFileCache(f);
    return cache ? toNoteMetadata(cache) : null;
  }

  resolveLink(linkpath: string, sourcePath: string): string | null {
    return this.app.metadataCache.getFirstLinkpathDest(linkpath, sourcePath)?.path ?? null;
  }

  resolvedLinks(): Record<string, Record<string, number>> {
    return this.app.metadataCache.resolvedLinks;
  }

  unresolvedLinks(): Record<string, Record<string, number>> {
    return this.app.metadataCache.unresolvedLinks;
  }

  excludedFilters(): string[] {
    const v = this.config("userIgnoreFilters");
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string" && x !== "") : [];
  }

  private config(key: string): unknown {
    const vault = this.app.vault as unknown as VaultWithConfig;
    if (typeof vault.getConfig !== "function") return undefined;
    try {
      return vault.getConfig(key);
    } catch {
      return undefined;
    }
  }

  // ---- lifecycle --------------------------------------------------------------------------

  onChange(listener: (event: VaultEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Obsidian has listed the vault's files before the layout is ready, when the server starts. */
  listed(): Promise<void> {
    return Promise.resolve();
  }

  ready(): Promise<void> {
    const resolved = (this.app.metadataCache as unknown as MetadataCacheWithResolved).resolved;
    // `resolved` is internal; when it is missing we cannot know, so we do not wait (metadata may fill in later).
    if (resolved !== false) return Promise.resolve();
    return new Promise((resolve) => {
      const ref = this.app.metadataCache.on("resolved", () => {
        this.app.metadataCache.offref(ref);
        resolve();
      });
      this.listen(this.app.metadataCache, ref);
    });
  }

  close(): Promise<void> {
    this.closed = true;
    this.listeners.clear();
    for (const { emitter, ref } of this.refs.splice(0)) emitter.offref(ref);
    return Promise.resolve();
  }
}

function toVaultFile(f: TFile): VaultFile {
  return {
    path: f.path,
    basename: f.basename,
    extension: f.extension.toLowerCase(),
    size: f.stat.size,
    mtime: f.stat.mtime,
    ctime: f.stat.ctime,
  };
}

function toArrayBuffer(data: Uint8Array): ArrayBuffer {
  return data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer;
}

function countOccurrences(text: string, needle: string): number {
  if (!needle) return 0;
  let n = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

function pos(p: ObsidianPos): Pos {
  return {
    start: { line: p.start.line, col: p.start.col, offset: p.start.offset },
    end: { line: p.end.line, col: p.end.col, offset: p.end.offset },
  };
}

/** Obsidian's `CachedMetadata` → our `NoteMetadata` (lists always present, block ids keyed lower-case). */
export function toNoteMetadata(cache: CachedMetadata): NoteMetadata {
  const ref = (r: { link: string; original: string; displayText?: string; position: ObsidianPos }): LinkRef => {
    const out: LinkRef = { link: r.link, original: r.original, position: pos(r.position) };
    if (r.displayText !== undefined) out.displayText = r.displayText;
    return out;
  };
  const blocks = dict<BlockRef>();
  for (const [key, b] of Object.entries(cache.blocks ?? {})) blocks[key.toLowerCase()] = { id: b.id, position: pos(b.position) };
  const meta: NoteMetadata = {
    headings: (cache.headings ?? []).map((h): HeadingRef => ({ heading: h.heading, level: h.level, position: pos(h.position) })),
    links: (cache.links ?? []).map(ref),
    embeds: (cache.embeds ?? []).map(ref),
    frontmatterLinks: (cache.frontmatterLinks ?? []).map((l): FrontmatterLinkRef => {
      const out: FrontmatterLinkRef = { key: l.key, link: l.link, original: l.original };
      if (l.displayText !== undefined) out.displayText = l.displayText;
      return out;
    }),
    tags: (cache.tags ?? []).map((t): TagRef => ({ tag: t.tag, position: pos(t.position) })),
    blocks,
  };
  if (cache.frontmatter) meta.frontmatter = { ...(cache.frontmatter as Record<string, unknown>) };
  if (cache.frontmatterPosition) {
    meta.frontmatterPosition = pos(cache.frontmatterPosition);
    // Obsidian leaves `frontmatter` out when the YAML does not parse; an empty block spans just its two fences.
    const lines = cache.frontmatterPosition.end.line - cache.frontmatterPosition.start.line;
    if (!cache.frontmatter && lines > 1) meta.frontmatterError = "The frontmatter is not valid YAML.";
  }
  return meta;
}
