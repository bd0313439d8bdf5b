import { VaultError } from "./errors";
import { computeLinkMaps, LinkResolver, type LinkMaps } from "./links/resolver";
import type { NoteMetadata } from "./metadata";
import { parseNote } from "./parser";
import { basenameOf, extensionOf, isNotePath, parentOf, type RenamePlan, type RenameProgress, type RenameResult, type VaultEvent, type VaultFile, type VaultPort } from "./vault";

interface MemFile {
  data: string | Uint8Array;
  mtime: number;
  ctime: number;
  meta: NoteMetadata | null;
}

/**
 * A vault held in memory, for tests and benchmarks of the core: notes are parsed with the headless
 * parser and links resolved by the shared `LinkResolver` (Obsidian's rules). Change helpers (`write`, `remove`,
 * `move`) emit the same events an adapter would.
 */
export class MemoryVault implements VaultPort {
  // Lint's hardcoded-config-path warning stays (disabling it is not allowed): a vault in memory for
  // tests and the bench has no Obsidian Vault to ask; Obsidian's default name stands in.
  readonly configDir = ".obsidian";
  private readonly files = new Map<string, MemFile>();
  private readonly folders = new Set<string>();
  private readonly resolver = new LinkResolver();
  private readonly listeners = new Set<(e: VaultEvent) => void>();
  private excluded: string[] = [];
  /** Set false to change files "while the app is closed": no events are emitted (reconcile tests). */
  emitEvents = true;
  private clock = 1_700_000_000_000;

  constructor(
    files: Record<string, string | Uint8Array> = {},
    readonly name = "memory",
  ) {
    for (const [p, d] of Object.entries(files)) this.put(p, d);
  }

  /** Creates or replaces a file and emits `create` or `modify`. */
  write(path: string, data: string | Uint8Array, mtime?: number): void {
    const existed = this.files.has(path);
    this.put(path, data, mtime);
    this.emit(existed ? { type: "modify", path } : { type: "create", path });
  }

  /** Deletes a file or a folder (with everything in it) and emits `delete`. */
  remove(path: string): void {
    if (this.files.has(path)) this.drop(path);
    else if (this.folders.has(path)) {
      for (const p of [...this.files.keys()]) if (p.startsWith(path + "/")) this.drop(p);
      for (const f of [...this.folders]) if (f === path || f.startsWith(path + "/")) this.folders.delete(f);
    } else return;
    this.emit({ type: "delete", path });
  }

  /** Renames a file or folder without rewriting links; emits `rename`. */
  move(oldPath: string, newPath: string): void {
    if (this.files.has(oldPath)) {
      const f = this.files.get(oldPath)!;
      this.drop(oldPath);
      this.put(newPath, f.data, f.mtime);
    } else if (this.folders.has(oldPath)) {
      for (const [p, f] of [...this.files]) {
        if (!p.startsWith(oldPath + "/")) continue;
        this.drop(p);
        this.put(newPath + p.slice(oldPath.length), f.data, f.mtime);
      }
      for (const f of [...this.folders]) if (f === oldPath || f.startsWith(oldPath + "/")) this.folders.delete(f);
      this.addFolders(newPath + "/x");
    } else throw new VaultError("not_found", `No file or folder at "${oldPath}".`);
    this.emit({ type: "rename", path: newPath, oldPath });
  }

  setExcludedFilters(filters: string[]): void {
    this.excluded = filters;
  }

  private put(path: string, data: string | Uint8Array, mtime?: number): void {
    const old = this.files.get(path);
    if (old) this.unindex(path);
    const t = mtime ?? this.clock++;
    this.files.set(path, { data, mtime: t, ctime: old?.ctime ?? t, meta: typeof data === "string" && isNotePath(path) ? parseNote(data) : null });
    this.resolver.add(path);
    this.addFolders(path);
  }

  private addFolders(path: string): void {
    for (let p = parentOf(path); p !== ""; p = parentOf(p)) this.folders.add(p);
  }

  private unindex(path: string): void {
    this.resolver.remove(path);
  }

  private drop(path: string): void {
    this.unindex(path);
    this.files.delete(path);
  }

  private emit(e: VaultEvent): void {
    if (!this.emitEvents) return;
    for (const l of [...this.listeners]) l(e);
  }

  private toFile(path: string, f: MemFile): VaultFile {
    const size = typeof f.data === "string" ? new TextEncoder().encode(f.data).length : f.data.length;
    return { path, basename: basenameOf(path), extension: extensionOf(path), size, mtime: f.mtime, ctime: f.ctime };
  }

  listFiles(): VaultFile[] {
    return [...this.files].map(([p, f]) => this.toFile(p, f));
  }
  listFolders(): string[] {
    return [...this.folders];
  }
  stat(path: string): VaultFile | null {
    const f = this.files.get(path);
    return f ? this.toFile(path, f) : null;
  }
  isFolder(path: string): boolean {
    return this.folders.has(path);
  }
  read(path: string): Promise<string> {
    const f = this.files.get(path);
    if (!f) return Promise.reject(new VaultError("not_found", `No file at "${path}".`));
    return Promise.resolve(typeof f.data === "string" ? f.data : new TextDecoder().decode(f.data));
  }
  readBinary(path: string): Promise<Uint8Array> {
    const f = this.files.get(path);
    if (!f) return Promise.reject(new VaultError("not_found", `No file at "${path}".`));
    return Promise.resolve(typeof f.data === "string" ? new TextEncoder().encode(f.data) : f.data);
  }
  async process(path: string, fn: (current: string) => string): Promise<string> {
    const next = fn(await this.read(path));
    this.write(path, next);
    return next;
  }
  create(path: string, data: string | Uint8Array): Promise<void> {
    if (this.files.has(path)) return Promise.reject(new VaultError("exists", `"${path}" exists.`));
    this.write(path, data);
    return Promise.resolve();
  }
  writeBinary(path: string, data: Uint8Array): Promise<void> {
    this.write(path, data);
    return Promise.resolve();
  }
  createFolder(path: string): Promise<void> {
    this.addFolders(path + "/x");
    return Promise.resolve();
  }
  trash(path: string): Promise<string> {
    this.remove(path);
    return Promise.resolve("deleted (memory vault)");
  }
  async rename(path: string, newPath: string, _onProgress?: RenameProgress, beforeMove?: (plan: RenamePlan) => Promise<void>): Promise<RenameResult> {
    const files = new Map<string, string>();
    for (const p of this.files.keys()) if (p === path || p.startsWith(path + "/")) files.set(p, newPath + p.slice(path.length));
    await beforeMove?.({ files, notes: [] });
    this.move(path, newPath);
    return { path: newPath, linksUpdated: 0, notesUpdated: 0 };
  }
  async processFrontMatter(): Promise<void> {
    return Promise.reject(new VaultError("unavailable", "processFrontMatter is not implemented by the memory vault."));
  }
  getMetadata(path: string): NoteMetadata | null {
    return this.files.get(path)?.meta ?? null;
  }

  resolveLink(linkpath: string, sourcePath: string): string | null {
    return this.resolver.resolve(linkpath, sourcePath);
  }

  private linkCounts(): LinkMaps {
    const notes: [string, NoteMetadata][] = [];
    for (const [path, f] of this.files) if (f.meta) notes.push([path, f.meta]);
    return computeLinkMaps(notes, this.resolver);
  }
  resolvedLinks(): Record<string, Record<string, number>> {
    return this.linkCounts().resolved;
  }
  unresolvedLinks(): Record<string, Record<string, number>> {
    return this.linkCounts().unresolved;
  }
  excludedFilters(): string[] {
    return this.excluded;
  }
  onChange(listener: (event: VaultEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  ready(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}
