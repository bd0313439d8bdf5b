/**
 * The keyword index's files in the state store: loading them into an InvertedIndex (one segment per
 * task) and saving its changed segments and the main file, in short steps. Owns the file
 * names, the format key check, the save stamps and sql.js as a fallback reader; it must not decide
 * what to index or when to save (the service does), nor encode rows itself (persist.ts, restore.ts).
 */
import type { SqlJsStatic } from "sql.js";
import type { StateStore } from "../../state";
import { errText, formatBytes } from "../../strings";
import { loadSqlJs, readBlobs, readBlobsWithSqlJs, segmentFileName, segmentTextFileName, writeBlobs } from "../db";
import type { SliceClock } from "../slices";
import { type BlobRoom, SqliteFileError } from "../sqlite-file";
import { ScratchChunks } from "./carve";
import { validSegmentCount } from "./doc";
import type { InvertedIndex } from "./inverted-index";
import type { RestoredBlobs } from "./persist";
import { KEPT_BLOBS } from "./restore";

/** A note the index leaves out (too large, unreadable, binary), until its mtime or size changes. */
export interface Skip {
  mtime: number;
  size: number;
  reason: string;
}

/** Measurements for the bench and the logs (longest single synchronous step of the last save). */
export interface IndexFileTimings {
  load: { waitMs: number; rowsMs: number; decodeMs: number; listsMs: number };
  loadMs: number;
  lastFilesMs: number;
  lastSerializeMs: number;
  lastPersistBytes: number;
  lastPersistMaxStepMs: number;
  lastPersistFiles: number;
}

export interface IndexFilesDeps {
  store: StateStore;
  /** The main file's name; the segments' files are named after it (see db.ts). */
  file: string;
  /** Format key: schema, tokenizer, language, chunk size. Files with another are not loaded. */
  key: string;
  index: InvertedIndex;
  clock: SliceClock;
  sqlWasm: Uint8Array;
  log: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
}

/** What a load found besides the index it filled. */
export interface LoadedFiles {
  skipped: Map<string, Skip>;
}

/** Files read at once while loading: enough to keep the disk busy, few enough that the first arrive first. */
export const READ_AHEAD = 8;

export class KeywordIndexFiles {
  readonly timings: IndexFileTimings = { load: { waitMs: 0, rowsMs: 0, decodeMs: 0, listsMs: 0 }, loadMs: 0, lastFilesMs: 0, lastSerializeMs: 0, lastPersistBytes: 0, lastPersistMaxStepMs: 0, lastPersistFiles: 0 };
  /** sql.js, started only when our reader cannot make sense of an index file (see readBlobs). */
  private sqlJs: Promise<SqlJsStatic> | null = null;
  /** Save stamps (`gen`): each segment file carries the save it was written by. */
  private genCounter = 0;
  /**
   * Segments of the index found at start beyond the current layout (one saved with more segments,
   * rebuilt): their files are removed after the next save of the main file.
   */
  private staleSegments = 0;

  constructor(private readonly deps: IndexFilesDeps) {}

  /**
   * Loads the persisted index into `deps.index`, one segment per task. Null when there is none or it
   * has another format; throws when the main file is unreadable. A segment that cannot be used is
   * marked dirty (its notes are indexed again by the reconciliation).
   */
  async load(): Promise<LoadedFiles | null> {
    const { store, file, index, clock, log } = this.deps;
    const sched = clock.sched;
    // A file our reader cannot make sense of goes to sql.js (see readBlobs).
    const read = async (name: string, bytes: Uint8Array, room?: BlobRoom): Promise<Map<string, Uint8Array>> => {
      try {
        return readBlobs(bytes, undefined, null, room);
      } catch (e) {
        if (!(e instanceof SqliteFileError)) throw e;
        log("info", `Search index ${name} is not laid out as this version writes it (${e.message}); reading it with sql.js.`);
        return readBlobsWithSqlJs(await this.startSqlJs(), bytes);
      }
    };
    let bytes: Uint8Array | null = null;
    try {
      bytes = await store.read(file);
    } catch (e) {
      log("warn", `Search index ${file} could not be read (${errText(e)}); rebuilding it.`);
      return null;
    }
    if (!bytes || bytes.length === 0) {
      log("info", `No saved search index (${file} in ${store.description}); indexing every note.`);
      return null;
    }
    // Yield only when the slice is used up (each yield costs a timer tick). The worker is not
    // running yet, so loading keeps its slices on the same clock.
    clock.restart();
    const yieldIfDue = async () => {
      if (clock.used()) await clock.next();
    };
    const main = await read(file, bytes);
    const meta = JSON.parse(text(main.get("meta"))) as { key?: string; segments?: number };
    const count = meta.segments;
    if (validSegmentCount(count)) this.staleSegments = count;
    if (meta.key !== this.deps.key || !validSegmentCount(count)) {
      log("info", `Search index format changed (${meta.key ?? "unknown"} → ${this.deps.key}); rebuilding it.`);
      // (Before the layout grew with the vault, every index had 32 segments.)
      await this.removeOldTexts(validSegmentCount(count) ? count : 32);
      return null;
    }
    const names = main.get("names");
    if (!names) throw new Error("no term dictionary");
    await index.restoreDict(names, yieldIfDue);
    await sched.yield();
    const skipped = new Map<string, Skip>();
    for (const r of JSON.parse(text(main.get("skipped")) || "[]") as { path: string; mtime: number; size: number; reason: string }[]) {
      skipped.set(r.path, { mtime: r.mtime, size: r.size, reason: r.reason });
    }
    // Read the segment files ahead of decoding (one per task), into scratch chunks (see carve.ts)
    // with the blobs only decoding uses; what the index keeps goes where it says (restoreRoom).
    const scratch = count >= SCRATCH_SEGMENTS ? new ScratchChunks() : null;
    const files = new ReadWindow(
      store,
      Array.from({ length: count }, (_, k) => segmentFileName(file, k)),
      () => sched.yield(),
      scratch ? (k, size) => scratch.take(k, size) : undefined,
    );
    const now = () => sched.now();
    const lt = { wait: 0, rows: 0, decode: 0, lists: 0, longest: 0 };
    index.segCount = count;
    for (let k = 0; k < count; k++) {
      // One segment per task: a segment is a small part of the index, and the first ones run before V8 has
      // optimized the decoding (a yield is one setImmediate, ~0.1 ms).
      await clock.next();
      const name = segmentFileName(file, k);
      try {
        let t = now();
        const b = await files.take(k);
        lt.wait += now() - t;
        if (b instanceof Error) throw b;
        if (!b || b.length === 0) throw new Error("missing");
        t = now();
        const blobs = await read(name, b, (key, size) => index.restoreRoom(key, size) ?? (KEPT_BLOBS.has(key) ? undefined : scratch?.take(k, size)));
        lt.rows += now() - t;
        // Reading a segment and decoding it are two tasks (in a fresh process, before V8 has
        // optimised either, one segment was up to ~50 ms), and decoding is in pieces of notes, a
        // task each once the slice is used.
        await clock.next();
        if (text(blobs.get("key")) !== this.deps.key) throw new Error("another format");
        const get = (n: keyof RestoredBlobs): Uint8Array => {
          const v = blobs.get(n);
          if (!v) throw new Error(`no ${n}`);
          return v;
        };
        const steps = index.restoreSegmentSteps(k, { docs: get("docs"), nums: get("nums"), terms: get("terms"), postings: get("postings"), seq: get("seq") });
        for (;;) {
          t = now();
          const done = steps.next().done;
          const d = now() - t;
          lt.decode += d;
          if (d > lt.longest) lt.longest = d;
          if (done) break;
          if (clock.used()) await clock.next();
        }
        // Nothing of the segment's file is kept beyond what its notes use.
        blobs.clear();
      } catch (e) {
        // Its notes are not in the index: the reconciliation indexes them again.
        index.dirty[k] = 1;
        log("warn", `Search index segment ${name} is unusable (${errText(e)}); its notes are indexed again.`);
      } finally {
        // The segment's file and the blobs only its decoding used: that scratch space is reused.
        scratch?.done(k);
      }
    }
    // Every file is read and decoded: the scratch chunks' memory goes back now, not at V8's next
    // full collection (a warm start's peak RSS at 100k notes, with the encoded postings' chunks: 799 -> 731 MB).
    scratch?.release();
    const t = now();
    await index.finishRestore(yieldIfDue, () => clock.next());
    lt.lists = now() - t;
    this.timings.load = { waitMs: lt.wait, rowsMs: lt.rows, decodeMs: lt.decode, listsMs: lt.lists };
    log("debug", `Search index loaded: waiting for reads ${Math.round(lt.wait)} ms, reading rows ${Math.round(lt.rows)} ms, notes ${Math.round(lt.decode)} ms (the longest piece ${Math.round(lt.longest)} ms), lists laid out and notes registered ${Math.round(lt.lists)} ms (with yields).`);
    return { skipped };
  }

  /**
   * The chunk texts' files an index saved before v9 kept beside each segment (`-NN-text.sqlite`):
   * removed when such an index is found, which is then built again without them. A file that cannot
   * be removed is left (it is never read).
   */
  private async removeOldTexts(count: number): Promise<void> {
    const { store, file, log } = this.deps;
    for (let k = 0; k < count; k++) {
      try {
        await store.remove(segmentTextFileName(file, k));
      } catch (e) {
        log("debug", `Could not remove ${segmentTextFileName(file, k)}: ${errText(e)}`);
      }
    }
  }

  /** sql.js, started on first need (a fallback read): it is not needed to read or save our own files. */
  private startSqlJs(): Promise<SqlJsStatic> {
    this.sqlJs ??= loadSqlJs(this.deps.sqlWasm);
    return this.sqlJs;
  }

  /**
   * Saves the changed segments, then the main file, each as its own small SQLite database (see
   * writeBlobs) written atomically through the state store. Each segment is serialized in one short
   * step and each of its files made in another (~1 ms at 10k notes), with the event loop given back
   * between steps (`maybeYield` between the slices of the pass over the posting lists). Returns
   * whether the main file still needs saving; a segment that could not be written leaves every
   * changed segment dirty. A file the store could not write is not logged here: `failed` says why
   * (the caller reports a failure that recurs once); an error while serializing leaves every
   * changed segment dirty and is thrown.
   */
  async save(mainDirty: boolean, skipped: ReadonlyMap<string, Skip>, maybeYield: () => Promise<void>): Promise<{ mainDirty: boolean; failed: string | null }> {
    const segs = this.deps.index.dirtySegments();
    try {
      return await this.saveSteps(segs, mainDirty, skipped, maybeYield);
    } catch (e) {
      for (const j of segs) this.deps.index.dirty[j] = 1;
      throw e;
    }
  }

  private async saveSteps(segs: number[], mainDirty: boolean, skipped: ReadonlyMap<string, Skip>, maybeYield: () => Promise<void>): Promise<{ mainDirty: boolean; failed: string | null }> {
    const { store, file, index, clock, log } = this.deps;
    const sched = clock.sched;
    let serializeMs = 0;
    let filesMs = 0;
    let bytesTotal = 0;
    let maxStep = 0;
    let files = 0;
    let failed: string | null = null;
    const write = async (name: string, bytes: Uint8Array): Promise<boolean> => {
      try {
        await store.write(name, bytes);
        return true;
      } catch (e) {
        failed = `could not write it to ${store.description}: ${errText(e)}`;
        return false;
      }
    };
    // A big save's short-lived buffers (segment writers, files' bytes) carved from reused chunks (see carve.ts).
    const scratch = segs.length >= SCRATCH_SEGMENTS ? new ScratchChunks() : null;
    /** A file's bytes, made in a task of its own, timed. */
    const makeFile = async (content: Record<string, Uint8Array>, k: number): Promise<Uint8Array> => {
      await sched.yield();
      const t0 = sched.now();
      const bytes = writeBlobs(content, scratch ? (size) => scratch.take(k, size) : undefined);
      const t = sched.now() - t0;
      filesMs += t;
      maxStep = Math.max(maxStep, t);
      return bytes;
    };
    if (segs.length) {
      // One sliced pass over the posting lists splits them by segment…
      const job = index.segmentWriter(segs, scratch ?? undefined);
      const t0 = sched.now();
      while (!job.step(clock.used)) await maybeYield();
      serializeMs += sched.now() - t0;
      // …then each segment is exported and written in steps of its own, stamped with a new `gen`.
      const key = utf8e.encode(this.deps.key);
      for (const k of segs) {
        await sched.yield();
        const t0 = sched.now();
        const blobs = job.blobs(k);
        const gen = utf8e.encode(`${Date.now().toString(36)}.${(++this.genCounter).toString(36)}`);
        const t1 = sched.now();
        serializeMs += t1 - t0;
        maxStep = Math.max(maxStep, t1 - t0);
        const bytes = await makeFile({ ...blobs, key, gen }, k);
        bytesTotal += bytes.length;
        files++;
        await sched.yield();
        const written = await write(segmentFileName(file, k), bytes);
        // The store has the bytes (written, or failed): the segment's scratch pieces are free.
        scratch?.done(k);
        if (!written) {
          for (const j of segs) index.dirty[j] = 1;
          return { mainDirty, failed };
        }
      }
      clock.restart();
    }
    if (mainDirty || files > 0) {
      mainDirty = false;
      const skippedRows = [...skipped].map(([path, s]) => ({ path, ...s }));
      // The dictionary in steps (see DictWriter): at once, ~1 s expected at 4.65M terms.
      const names = index.dictWriter();
      const t0 = sched.now();
      while (!names.step(clock.used)) await maybeYield();
      serializeMs += sched.now() - t0;
      const bytes = await makeFile({
        meta: utf8e.encode(JSON.stringify({ key: this.deps.key, segments: index.segCount })),
        skipped: utf8e.encode(JSON.stringify(skippedRows)),
        names: names.bytes(),
      }, MAIN_PIECES);
      bytesTotal += bytes.length;
      files++;
      const written = await write(file, bytes);
      scratch?.done(MAIN_PIECES);
      if (!written) mainDirty = true;
      else if (this.staleSegments > index.segCount) {
        // The main file no longer names them: the files of segments past the layout go.
        for (let k = index.segCount; k < this.staleSegments; k++) {
          await store.remove(segmentFileName(file, k)).catch(() => {});
        }
        this.staleSegments = index.segCount;
      }
    }
    clock.restart();
    this.timings.lastSerializeMs = serializeMs;
    this.timings.lastFilesMs = filesMs;
    this.timings.lastPersistBytes = bytesTotal;
    this.timings.lastPersistMaxStepMs = maxStep;
    this.timings.lastPersistFiles = files;
    if (failed === null) log("debug", `Search index saved (${files} files, ${formatBytes(bytesTotal)}; serialize ${Math.round(serializeMs)} ms, files ${Math.round(filesMs)} ms, longest step ${Math.round(maxStep)} ms).`);
    return { mainDirty, failed };
  }
}

/**
 * Reads `names` in order, at most READ_AHEAD at a time, and no further ahead of the reader than that:
 * `take(k)` hands over file k and starts the reads up to k + READ_AHEAD. Started all at once, each
 * read's steps (open, stat, read, close) queue behind every other read's, so all would arrive together
 * at the end; in a window, the first arrive while the rest are still read. The window follows what was
 * taken, not what was read: when reads ran ahead of decoding, every file of a 100k-note index
 * (175 MB) was in memory at once, and the allocator kept that peak (in-process RSS after a warm start
 * 835 -> 689 MB). Each read starts in a task of its own (`yieldNow`): a store that reads
 * synchronously (the headless one, for small files) would otherwise read every file in one task. A
 * failed read is its Error.
 */
export class ReadWindow {
  private readonly reads: Promise<Uint8Array | null | Error>[] = [];
  constructor(
    private readonly store: StateStore,
    private readonly names: string[],
    private readonly yieldNow: () => Promise<void>,
    /** Where file k's bytes may go (see StateStore.readInto), when the store can read into it. */
    private readonly room?: (k: number, size: number) => Uint8Array | undefined,
  ) {}
  take(k: number): Promise<Uint8Array | null | Error> {
    const end = Math.min(this.names.length, k + READ_AHEAD);
    for (let i = this.reads.length; i < end; i++) {
      const before: Promise<unknown> = i >= READ_AHEAD ? this.reads[i - READ_AHEAD] : Promise.resolve();
      const name = this.names[i];
      this.reads.push(
        before
          .then(this.yieldNow)
          .then(() => (this.room && this.store.readInto ? this.store.readInto(name, (size) => this.room!(i, size)) : this.store.read(name)))
          .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))),
      );
    }
    const r = this.reads[k];
    // Let go of it: a file is read once.
    this.reads[k] = DONE;
    return r;
  }
}
const DONE: Promise<null> = Promise.resolve(null);

/**
 * A load of this many segment files or more, or a save of this many segments, carves its short-lived
 * buffers (see carve.ts). Fewer make too little garbage to matter, and a 33 MB chunk for a save of
 * the one segment an edit touched would only add to V8's external-memory count (a collection sooner).
 */
const SCRATCH_SEGMENTS = 32;

/** The save's scratch pieces of the main file (segments are 0 and up). */
const MAIN_PIECES = -1;

const utf8d = new TextDecoder();
const utf8e = new TextEncoder();

function text(b: Uint8Array | undefined): string {
  return b ? utf8d.decode(b) : "";
}
