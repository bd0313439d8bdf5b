/**
 * The headless vault's picture in memory: the listing (files, change signatures, folders), where each
 * entry lives on disk (VaultPaths) and the notes' metadata and links (NoteLinks). Applies a change to
 * all of them at once and returns the events to emit; does no I/O and emits nothing itself.
 */
import type { FileFacts } from "./scan-protocol";
import { hash53OfWords } from "../../core/hash";
import { isUnder } from "../../core/paths";
import { basenameOf, extensionOf, type VaultEvent, type VaultFile } from "../../core/vault";
import type { NoteLinks } from "./note-links";
import type { VaultPaths } from "./vault-paths";

export class VaultState {
  readonly files = new Map<string, ListedFile>();
  readonly folders = new Set<string>();

  constructor(
    readonly paths: VaultPaths,
    readonly links: NoteLinks,
  ) {}

  /** Records a file's listing entry (its links are the caller's: `links.addFile`, `relink`). */
  listFile(vp: string, st: FileFacts): void {
    this.files.set(vp, listedFile(vp, st));
  }

  /** Forgets a file and re-resolves the notes its departure affects. */
  removeFile(path: string): VaultEvent[] {
    if (!this.files.has(path)) return [];
    this.files.delete(path);
    this.paths.disk.delete(path);
    this.links.removeFile(path);
    return [{ type: "delete", path }];
  }

  /** Forgets a folder and everything under it. */
  removeFolder(folder: string): VaultEvent[] {
    const events: VaultEvent[] = [];
    for (const f of [...this.files.keys()]) if (isUnder(f, folder)) events.push(...this.removeFile(f));
    const sub = [...this.folders].filter((f) => isUnder(f, folder)).sort((a, b) => b.length - a.length);
    for (const f of sub) {
      this.folders.delete(f);
      this.paths.disk.delete(f);
      events.push({ type: "delete", path: f });
    }
    return events;
  }

  /** Moves files and folders in memory (after the disk move) and re-resolves what it affects. */
  move(fileMap: Map<string, string>, folderMap: Map<string, string>, oldDp: string, newDp: string): VaultEvent[] {
    const disk = this.paths.disk;
    const events: VaultEvent[] = [];
    const affected = new Set<string>();
    const remapDisk = (oldVp: string, newVp: string) => {
      const d = disk.get(oldVp);
      disk.delete(oldVp);
      const nd = d !== undefined && d.startsWith(oldDp) ? newDp + d.slice(oldDp.length) : d;
      if (nd !== undefined && nd !== newVp) disk.set(newVp, nd);
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
      this.files.set(n, f.movedTo(n));
      remapDisk(o, n);
      this.links.moveFile(o, n, affected);
      events.push({ type: "rename", path: n, oldPath: o });
    }
    for (const o of fileMap.keys()) affected.delete(o);
    this.links.relink(affected);
    return events;
  }
}

/**
 * A listed file, as the port gives it (`VaultFile`), with its change signature beside it (`sigOf`:
 * private, not part of the object callers see). Its basename and extension are made from its path
 * when asked. At 100k files, the basename as a field (a sliced string a file) and the signatures in
 * a map of their own took ~7 MB; the extension as a field, 0.8 MB.
 */
export class ListedFile implements VaultFile {
  readonly #sig: number;

  constructor(
    readonly path: string,
    readonly size: number,
    readonly mtime: number,
    readonly ctime: number,
    sig: number,
  ) {
    this.#sig = sig;
  }

  get basename(): string {
    return basenameOf(this.path);
  }

  get extension(): string {
    return extensionOf(this.path);
  }

  /** Its change signature when it was listed (see `sigOf`). */
  get sig(): number {
    return this.#sig;
  }

  /** The same file under another path (a rename). */
  movedTo(path: string): ListedFile {
    return new ListedFile(path, this.size, this.mtime, this.ctime, this.#sig);
  }
}

export function listedFile(vp: string, st: FileFacts): ListedFile {
  return new ListedFile(vp, st.size, Math.floor(st.mtimeMs), Math.floor(st.birthtimeMs || st.ctimeMs), sigOf(st));
}

/**
 * A file's change signature: its size, mtimeMs, ctimeMs and inode hashed to one 53-bit number
 * (`hash53OfWords`, over the numbers' 64 bits each; hashing a string of them, 100k files took
 * ~0.1 s of a warm start's main thread). A number is a box of 16 bytes; the string was ~70 (6.8 MB
 * at 100k files). Two signatures of one path match by chance once in 2^53: a change missed, or a
 * fast read of a file swapped since it was listed (see `FsVault.readBytes`), that unlikely. Not one
 * made on purpose either: the inode and ctime in it are the kernel's to set, and setting a time sets
 * ctime. Never saved: a process compares only the signatures it made.
 */
export function sigOf(st: FileFacts): number {
  sigFacts[0] = st.size;
  sigFacts[1] = st.mtimeMs;
  sigFacts[2] = st.ctimeMs;
  sigFacts[3] = st.ino;
  return hash53OfWords(sigWords);
}
const sigFacts = new Float64Array(4);
const sigWords = new Int32Array(sigFacts.buffer);
