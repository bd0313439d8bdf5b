import { closeSync, promises as fsp, openSync, readFileSync, readSync, statSync } from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";
import type { StateStore } from "../../core/state";
import { writeAtomic } from "./atomic";
import { SyncReads } from "./sync-reads";

/** State files up to this size are read synchronously (except for a while after a read was slow, see SyncReads). */
const SYNC_READ_MAX = 8 * 1024 * 1024;

/**
 * The headless StateStore: files in one folder (see `resolveStateDir`), created on first write.
 * Writes are atomic (temp file in the same folder, fsync, rename); `append` is for line logs.
 */
export class FsStateStore implements StateStore {
  readonly description: string;
  private readonly dir: string;
  private made: Promise<void> | null = null;
  /** Files are read synchronously except for a while after a read was slow (see SyncReads). */
  private readonly syncReads = new SyncReads();

  /** `vaultRoot` only shapes `description` (vault-relative when the folder is inside the vault). */
  constructor(dir: string, vaultRoot?: string, homedir: string = os.homedir()) {
    this.dir = nodePath.resolve(dir);
    this.description = describe(this.dir, vaultRoot, homedir);
  }

  async read(name: string): Promise<Uint8Array | null> {
    try {
      const file = this.file(name);
      // Files up to a few MB synchronously (a millisecond or two): each asynchronous fs call costs
      // ~60 µs of main-thread time, and fsp.readFile makes several per file (open, fstat, reads, close).
      const st = statSync(file, { throwIfNoEntry: false });
      if (!st) return null;
      const buf = st.isFile() && st.size <= SYNC_READ_MAX && !this.syncReads.slow ? this.syncReads.run(() => readFileSync(file)) : await fsp.readFile(file);
      return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    }
  }

  async readInto(name: string, room: (size: number) => Uint8Array | undefined): Promise<Uint8Array | null> {
    const file = this.file(name);
    let fh: fsp.FileHandle | null = null;
    let fd: number | null = null;
    try {
      const st = statSync(file, { throwIfNoEntry: false });
      if (!st) return null;
      if (!st.isFile()) return await this.read(name);
      const into = room(st.size);
      if (!into) return await this.read(name);
      let n = 0;
      if (st.size <= SYNC_READ_MAX && !this.syncReads.slow) {
        // Synchronously, like `read` (see there).
        const f = (fd = openSync(file, "r"));
        n = this.syncReads.run(() => {
          let got = 0;
          for (let r; got < into.length && (r = readSync(f, into, got, into.length - got, got)) > 0; ) got += r;
          return got;
        });
      } else {
        fh = await fsp.open(file, "r");
        for (let r; n < into.length && (r = (await fh.read(into, n, into.length - n, n)).bytesRead) > 0; ) n += r;
      }
      return n === into.length ? into : into.subarray(0, n);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw e;
    } finally {
      if (fd !== null) closeSync(fd);
      await fh?.close();
    }
  }

  /** Whether a synchronous read was slow lately (reads are asynchronous for a while after it). */
  get readsAsync(): boolean {
    return this.syncReads.slow;
  }

  /** A synchronous read longer than this (ms) switches the store to asynchronous reads (tests set it). */
  set slowReadMs(ms: number) {
    this.syncReads.limitMs = ms;
  }

  async write(name: string, data: Uint8Array | string): Promise<void> {
    const target = this.file(name);
    await this.ensureDir(nodePath.dirname(target));
    await writeAtomic(target, data);
  }

  async append(name: string, line: string): Promise<void> {
    const target = this.file(name);
    await this.ensureDir(nodePath.dirname(target));
    await fsp.appendFile(target, line.endsWith("\n") ? line : line + "\n");
  }

  async remove(name: string): Promise<void> {
    await fsp.rm(this.file(name), { force: true });
  }

  private file(name: string): string {
    const segs = name.split(/[\\/]/);
    if (!name || nodePath.isAbsolute(name) || segs.some((s) => s === "" || s === "." || s === "..")) {
      throw new Error(`Invalid state file name "${name}": use a plain relative name such as "index.db".`);
    }
    return nodePath.join(this.dir, ...segs);
  }

  private ensureDir(dir: string): Promise<void> {
    if (dir === this.dir) {
      this.made ??= fsp.mkdir(this.dir, { recursive: true }).then(
        () => undefined,
        (e: unknown) => {
          this.made = null;
          throw e;
        },
      );
      return this.made;
    }
    return fsp.mkdir(dir, { recursive: true }).then(() => undefined);
  }
}

function describe(dir: string, vaultRoot: string | undefined, homedir: string): string {
  if (vaultRoot) {
    const rel = nodePath.relative(nodePath.resolve(vaultRoot), dir);
    if (rel === "") return "(the vault folder)";
    if (!rel.startsWith("..") && !nodePath.isAbsolute(rel)) return rel.split(nodePath.sep).join("/");
  }
  if (homedir) {
    const rel = nodePath.relative(homedir, dir);
    if (rel === "") return "~";
    if (!rel.startsWith("..") && !nodePath.isAbsolute(rel)) return `~/${rel.split(nodePath.sep).join("/")}`;
  }
  return dir;
}
