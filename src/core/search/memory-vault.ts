import type { NoteMetadata } from "../metadata";
import { parseNote } from "../parser";
import { basenameOf, extensionOf, isNotePath, parentOf, type RenameResult, type VaultEvent, type VaultFile, type VaultPort } from "../vault";

/**
 * A VaultPort held in memory, for search tests and benchmarks: files are strings or bytes, metadata
 * comes from the core parser, every change emits the matching vault event synchronously.
 */
export class MemoryVault implements VaultPort {
  readonly name = "memory";
  readonly configDir = ".obsidian";
  private files = new Map<string, { data: string | Uint8Array; mtime: number; ctime: number }>();
  private meta = new Map<string, NoteMetadata>();
  private listeners = new Set<(e: VaultEvent) => void>();
  private clock = 1_700_000_000_000;
  /** When false, writes do not emit events (simulates changes made while the app was closed). */
  emitEvents = true;

  constructor(files: Record<string, string | Uint8Array> = {}) {
    for (const [p, d] of Object.entries(files)) this.put(p, d, false);
  }

  private put(path: string, data: string | Uint8Array, emit: boolean): void {
    const existed = this.files.has(path);
    const now = ++this.clock;
    this.files.set(path, { data, mtime: now, ctime: existed ? this.files.get(path)!.ctime : now });
    this.meta.delete(path);
    if (emit) this.emit({ type: existed ? "modify" : "create", path });
  }

  private emit(e: VaultEvent): void {
    if (!this.emitEvents) return;
    for (const l of this.listeners) l(e);
  }

  /** Creates or replaces a file (test helper). */
  set(path: string, data: string | Uint8Array): void {
    this.put(path, data, true);
  }
  delete(path: string): void {
    if (this.files.delete(path)) {
      this.meta.delete(path);
      this.emit({ type: "delete", path });
    }
  }
  move(oldPath: string, path: string): void {
    const f = this.files.get(oldPath);
    if (!f) return;
    this.files.delete(oldPath);
    this.meta.delete(oldPath);
    this.files.set(path, { ...f, mtime: ++this.clock });
    this.emit({ type: "rename", path, oldPath });
  }

  listFiles(): VaultFile[] {
    return [...this.files.keys()].map((p) => this.stat(p)!);
  }
  listFolders(): string[] {
    const out = new Set<string>();
    for (const p of this.files.keys()) for (let f = parentOf(p); f; f = parentOf(f)) out.add(f);
    return [...out];
  }
  stat(path: string): VaultFile | null {
    const f = this.files.get(path);
    if (!f) return null;
    const size = typeof f.data === "string" ? new TextEncoder().encode(f.data).length : f.data.length;
    return { path, basename: basenameOf(path), extension: extensionOf(path), size, mtime: f.mtime, ctime: f.ctime };
  }
  isFolder(path: string): boolean {
    return this.listFolders().includes(path);
  }
  read(path: string): Promise<string> {
    const f = this.files.get(path);
    if (!f) return Promise.reject(new Error(`No file ${path}`));
    return Promise.resolve(typeof f.data === "string" ? f.data : new TextDecoder().decode(f.data));
  }
  readBinary(path: string): Promise<Uint8Array> {
    const f = this.files.get(path);
    if (!f) return Promise.reject(new Error(`No file ${path}`));
    return Promise.resolve(typeof f.data === "string" ? new TextEncoder().encode(f.data) : f.data);
  }
  async process(path: string, fn: (current: string) => string): Promise<string> {
    const out = fn(await this.read(path));
    this.set(path, out);
    return out;
  }
  create(path: string, data: string | Uint8Array): Promise<void> {
    if (this.files.has(path)) return Promise.reject(new Error(`${path} exists`));
    this.set(path, data);
    return Promise.resolve();
  }
  writeBinary(path: string, data: Uint8Array): Promise<void> {
    this.set(path, data);
    return Promise.resolve();
  }
  createFolder(): Promise<void> {
    return Promise.resolve();
  }
  trash(path: string): Promise<string> {
    this.delete(path);
    return Promise.resolve("deleted");
  }
  rename(path: string, newPath: string): Promise<RenameResult> {
    this.move(path, newPath);
    return Promise.resolve({ path: newPath, linksUpdated: 0, notesUpdated: 0 });
  }
  processFrontMatter(): Promise<void> {
    return Promise.reject(new Error("not supported by MemoryVault"));
  }
  getMetadata(path: string): NoteMetadata | null {
    if (!isNotePath(path)) return null;
    const f = this.files.get(path);
    if (!f || typeof f.data !== "string") return null;
    let m = this.meta.get(path);
    if (!m) {
      m = parseNote(f.data);
      this.meta.set(path, m);
    }
    return m;
  }
  resolveLink(): string | null {
    return null;
  }
  resolvedLinks(): Record<string, Record<string, number>> {
    return {};
  }
  unresolvedLinks(): Record<string, Record<string, number>> {
    return {};
  }
  excludedFilters(): string[] {
    return [];
  }
  onChange(listener: (event: VaultEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  ready(): Promise<void> {
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}
