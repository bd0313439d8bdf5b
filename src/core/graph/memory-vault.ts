import { VaultError } from "../errors";
import { splitLinkpath, type NoteMetadata } from "../metadata";
import { parseNote } from "../parser";
import { basenameOf, extensionOf, isNotePath, parentOf, type RenameResult, type VaultEvent, type VaultFile, type VaultPort } from "../vault";
import { nameKey } from "./link-graph";

interface MemFile {
  data: string | Uint8Array;
  mtime: number;
  ctime: number;
  meta: NoteMetadata | null;
}

/**
 * A vault held in memory, for tests and benchmarks of the core: notes are parsed with the headless
 * parser and links resolved the way Obsidian does (exact path, then relative to the note, then by file
 * name, preferring the note's own folder, then the shortest path). Change helpers (`write`, `remove`,
 * `move`) emit the same events an adapter would.
 */
export class MemoryVault implements VaultPort {
  readonly configDir = ".obsidian";
  private readonly files = new Map<string, MemFile>();
  private readonly folders = new Set<string>();
  private readonly byName = new Map<string, Set<string>>();
  private readonly listeners = new Set<(e: VaultEvent) => void>();
  private excluded: string[] = [];
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
    const k = nameKey(path);
    let set = this.byName.get(k);
    if (!set) this.byName.set(k, (set = new Set()));
    set.add(path);
    this.addFolders(path);
  }

  private addFolders(path: string): void {
    for (let p = parentOf(path); p !== ""; p = parentOf(p)) this.folders.add(p);
  }

  private unindex(path: string): void {
    const set = this.byName.get(nameKey(path));
    set?.delete(path);
    if (set && set.size === 0) this.byName.delete(nameKey(path));
  }

  private drop(path: string): void {
    this.unindex(path);
    this.files.delete(path);
  }

  private emit(e: VaultEvent): void {
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
  rename(path: string, newPath: string): Promise<RenameResult> {
    this.move(path, newPath);
    return Promise.resolve({ path: newPath, linksUpdated: 0, notesUpdated: 0 });
  }
  async processFrontMatter(): Promise<void> {
    return Promise.reject(new VaultError("unavailable", "processFrontMatter is not implemented by the memory vault."));
  }
  getMetadata(path: string): NoteMetadata | null {
    return this.files.get(path)?.meta ?? null;
  }

  resolveLink(linkpath: string, sourcePath: string): string | null {
    const lp = linkpath.normalize("NFC").trim();
    if (lp === "") return this.files.has(sourcePath) ? sourcePath : null;
    const exact = (p: string): string | null => {
      if (this.files.has(p)) return p;
      if (this.files.has(p + ".md")) return p + ".md";
      return null;
    };
    // Relative to the note (`./x`, `../x`).
    if (lp.startsWith("./") || lp.startsWith("../")) {
      const segs = parentOf(sourcePath) ? parentOf(sourcePath).split("/") : [];
      for (const s of lp.split("/")) {
        if (s === "..") segs.pop();
        else if (s !== "." && s !== "") segs.push(s);
      }
      return exact(segs.join("/"));
    }
    const direct = exact(lp.replace(/^\/+/, ""));
    if (direct) return direct;
    const candidates = this.byName.get(nameKey(lp));
    if (!candidates) return null;
    const want = lp.replace(/^\/+/, "").toLowerCase().replace(/\.md$/, "");
    const folder = parentOf(sourcePath);
    let best: string | null = null;
    for (const p of candidates) {
      const bare = p.toLowerCase().replace(/\.md$/, "");
      if (!(bare === want || bare.endsWith("/" + want))) continue;
      if (!isNotePath(p) && extensionOf(lp) === "") continue; // attachments need their extension
      if (best === null) best = p;
      else {
        const rank = (x: string) => [parentOf(x) === folder ? 0 : 1, x.split("/").length, x] as const;
        const a = rank(p);
        const b = rank(best);
        if (a[0] < b[0] || (a[0] === b[0] && (a[1] < b[1] || (a[1] === b[1] && a[2] < b[2])))) best = p;
      }
    }
    return best;
  }

  private linkCounts(resolved: boolean): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {};
    for (const [path, f] of this.files) {
      if (!f.meta) continue;
      const row: Record<string, number> = {};
      const all = [...f.meta.links, ...f.meta.embeds, ...f.meta.frontmatterLinks];
      for (const l of all) {
        const { path: lp } = splitLinkpath(l.link);
        const t = this.resolveLink(lp, path);
        const key = resolved ? t : t === null ? lp : null;
        if (key === null) continue;
        row[key] = (row[key] ?? 0) + 1;
      }
      out[path] = row;
    }
    return out;
  }
  resolvedLinks(): Record<string, Record<string, number>> {
    return this.linkCounts(true);
  }
  unresolvedLinks(): Record<string, Record<string, number>> {
    return this.linkCounts(false);
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
