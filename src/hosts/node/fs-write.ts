/**
 * Writing to the headless vault: atomic writes, creating folders, moving to the vault's `.trash`, all
 * serialised per path (the locks also tell the watcher which changes are our own). Each write updates
 * the picture in memory and emits its events at once. Renames (and their link rewriting) are fs-rename.ts's.
 */
import { promises as fsp } from "node:fs";
import * as nodePath from "node:path";
import { VaultError } from "../../core/errors";
import { isNotePath, parentOf, type VaultEvent } from "../../core/vault";
import type { VaultWatcher } from "./watcher";
import { exists, writeAtomic } from "./atomic";
import { assertPath, existsError, notFound } from "./vault-paths";
import type { VaultState } from "./vault-state";

const TRASH = ".trash";
const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
const encoder = new TextEncoder();

export interface WriteContext {
  state: VaultState;
  /** The watcher, while there is one (it watches new folders and forgets removed ones). */
  watcher: () => VaultWatcher | null;
  emit: (events: VaultEvent[]) => void;
}

export class FsWriter {
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly busy = new Map<string, number>();

  /** Notes written by `process` since the vault opened (for the test-only crash point `write:<n>`). */
  private processed = 0;

  constructor(
    private readonly ctx: WriteContext,
    private readonly crash?: (point: string) => void,
  ) {}

  private get state(): VaultState {
    return this.ctx.state;
  }

  process(path: string, fn: (current: string) => string): Promise<string> {
    const paths = this.state.paths;
    return this.withLocks([path], async () => {
      const real = await paths.realFor(path);
      let current: string;
      try {
        current = decoder.decode(await fsp.readFile(real));
      } catch (e) {
        throw paths.ioError(e, path);
      }
      const next = fn(current);
      if (typeof next !== "string") throw new VaultError("invalid_argument", `The new content of "${path}" must be text.`);
      if (next === current && this.state.files.has(path)) return current;
      await writeAtomic(real, encoder.encode(next));
      await this.afterWrite(path, real, next);
      this.crash?.(`write:${++this.processed}`);
      return next;
    });
  }

  create(path: string, data: string | Uint8Array): Promise<void> {
    assertPath(path);
    const paths = this.state.paths;
    return this.withLocks([path], async () => {
      if (this.state.files.has(path) || this.state.folders.has(path)) throw existsError(path);
      const real = await paths.realFor(path);
      if (await exists(real)) throw existsError(path);
      const events = await this.ensureParents(parentOf(path));
      const bytes = typeof data === "string" ? encoder.encode(data) : data;
      await paths.checkParentReal(real, path);
      await writeAtomic(real, bytes, { exclusive: true, existsError: () => existsError(path) });
      this.ctx.emit(events);
      await this.afterWrite(path, real, isNotePath(path) ? (typeof data === "string" ? data : decoder.decode(data)) : null);
    });
  }

  writeBinary(path: string, data: Uint8Array): Promise<void> {
    assertPath(path);
    const paths = this.state.paths;
    return this.withLocks([path], async () => {
      if (this.state.folders.has(path)) throw new VaultError("invalid_argument", `"${path}" is a folder, not a file.`);
      const real = await paths.realFor(path);
      const events = await this.ensureParents(parentOf(path));
      await paths.checkParentReal(real, path);
      await writeAtomic(real, data);
      this.ctx.emit(events);
      await this.afterWrite(path, real, isNotePath(path) ? decoder.decode(data) : null);
    });
  }

  createFolder(path: string): Promise<void> {
    assertPath(path);
    return this.withLocks([path], async () => {
      if (this.state.files.has(path)) throw existsError(path);
      if (this.state.folders.has(path)) return;
      await this.state.paths.realFor(path);
      this.ctx.emit(await this.ensureParents(path));
    });
  }

  /** Moves a file or folder to the vault's `.trash` folder; says where it went. */
  trash(path: string): Promise<string> {
    assertPath(path);
    const paths = this.state.paths;
    return this.withLocks([path], async () => {
      const isFile = this.state.files.has(path);
      if (!isFile && !this.state.folders.has(path)) throw notFound(path);
      const real = await paths.entryFor(path);
      const trashAbs = paths.abs(TRASH);
      await fsp.mkdir(trashAbs, { recursive: true });
      const trashReal = await fsp.realpath(trashAbs);
      if (!paths.inside(trashReal)) throw new VaultError("forbidden", `The vault's ${TRASH} folder points outside the vault; remove that link, then retry.`);
      const name = nodePath.basename(real);
      const chosen = await freeName(trashReal, name, isFile);
      const dest = nodePath.join(trashReal, chosen);
      try {
        await fsp.rename(real, dest);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EXDEV") throw paths.ioError(e, path);
        await fsp.cp(real, dest, { recursive: true, preserveTimestamps: true });
        await fsp.rm(real, { recursive: true, force: true });
      }
      const events = isFile ? this.state.removeFile(path) : this.state.removeFolder(path);
      this.ctx.watcher()?.unwatchUnder(paths.diskOf(path));
      this.ctx.emit(events);
      const shown = chosen.normalize("NFC");
      return shown === name.normalize("NFC") ? `the vault's ${TRASH} folder` : `the vault's ${TRASH} folder (as "${shown}")`;
    });
  }

  /** After a write to `real`: its listing entry, its metadata and links, and a create or modify event. */
  private async afterWrite(path: string, real: string, text: string | null): Promise<void> {
    const { files, links, paths } = this.state;
    const st = await fsp.stat(real);
    const isNew = !files.has(path);
    this.state.listFile(path, st);
    paths.setDisk(path, paths.diskOfNew(path));
    if (isNotePath(path)) links.setMeta(path, text ?? decoder.decode(await fsp.readFile(real)));
    if (isNew) {
      links.addFile(path);
      links.relink(links.affectedByFile(path, [path]));
    } else if (isNotePath(path)) {
      links.relink([path]);
    }
    this.ctx.emit([isNew ? { type: "create", path } : { type: "modify", path }]);
  }

  /** Creates missing parent folders of a new entry on disk and in memory; returns their create events. */
  async ensureParents(folder: string): Promise<VaultEvent[]> {
    const { files, folders, paths } = this.state;
    const missing: string[] = [];
    for (let f = folder; f !== "" && !folders.has(f); f = parentOf(f)) {
      if (files.has(f)) throw new VaultError("conflict", `"${f}" is a file, so it cannot hold other files; choose another folder.`);
      missing.unshift(f);
    }
    if (missing.length === 0) return [];
    const real = await paths.realFor(folder);
    try {
      await fsp.mkdir(real, { recursive: true });
    } catch (e) {
      throw paths.ioError(e, folder);
    }
    const events: VaultEvent[] = [];
    for (const f of missing) {
      folders.add(f);
      const dp = paths.diskOfNew(f);
      paths.setDisk(f, dp);
      this.ctx.watcher()?.watchDir(dp);
      events.push({ type: "create", path: f });
    }
    return events;
  }

  /** True while one of our own operations holds `vp` or a folder above it (the watcher then waits). */
  isBusy(vp: string): boolean {
    if (this.busy.size === 0) return false;
    for (let p = vp; ; p = parentOf(p)) {
      if (this.busy.has(p)) return true;
      if (p === "") return false;
    }
  }

  /** Runs `fn` once earlier operations on any of `paths` are done; marks them busy meanwhile. */
  async withLocks<T>(paths: string[], fn: () => Promise<T>): Promise<T> {
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
}

/** `name` in `dir`, or `name 1`, `name 2`… (before the extension) when it is taken. */
async function freeName(dir: string, name: string, isFile: boolean): Promise<string> {
  const dot = isFile ? name.lastIndexOf(".") : -1;
  const base = dot > 0 ? name.slice(0, dot) : name;
  const ext = dot > 0 ? name.slice(dot) : "";
  for (let i = 0; ; i++) {
    const candidate = i === 0 ? name : `${base} ${i}${ext}`;
    if (!(await exists(nodePath.join(dir, candidate)))) return candidate;
  }
}
