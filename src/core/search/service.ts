import { frontmatterTags } from "../metadata";
import { isUnder } from "../paths";
import { basenameOf, isNotePath, parentOf, type VaultEvent } from "../vault";
import { chunkNote } from "./chunk";
import type { SqlJsStatic } from "sql.js";
import type { StateStore } from "../state";
import { loadSqlJs, readBlobs, readBlobsWithSqlJs, SCHEMA_VERSION, segmentFileName, segmentTextFileName, writeBlobs } from "./db";
import { SqliteFileError } from "./sqlite-file";
import { InvertedIndex } from "./keyword/inverted-index";
import { SEGMENT_COUNT, segmentOf, type DocEntry } from "./keyword/doc";
import type { RestoredBlobs } from "./keyword/persist";
import { TEXT_PART, type LazyText } from "./keyword/lazy-text";
import { checkQueryBounds, parseQuery } from "./query";
import { TOKENIZER_VERSION } from "./tokenize";
import { clearTimer, setTimer, soon, type TimerHandle } from "../timers";
import {
  DEFAULT_SEARCH_OPTIONS,
  type IndexStatus,
  type ParsedQuery,
  type Scheduler,
  type SearchOptions,
  type SearchRequest,
  type SearchResponse,
  type SearchService,
  type SearchServiceDeps,
} from "./types";

const DEFAULT_FILE = "search-index.sqlite";
/**
 * After indexing this many notes (a first build, a large reconcile, or many edits over time), the
 * posting lists are laid out again in one buffer, giving back the space grown lists left behind.
 */
const COMPACT_AFTER_NOTES = 1000;
/** Notes read ahead while indexing. */
const PREFETCH = 8;
/**
 * The warm-up's searches (see `warmUpSearch`): terms from the upper part of the list sizes, each list
 * at most WARM_UP_MAX_POSTINGS long, in WARM_UP_ROUNDS rounds (in a fresh process at 10k notes, a
 * first search of the largest term takes 7–20 ms, the next ones 1–14 ms).
 */
const WARM_UP_QUANTILES = [0.9, 0.99, 1];
const WARM_UP_MAX_POSTINGS = 4096;
const WARM_UP_ROUNDS = 4;

export const defaultScheduler: Scheduler = {
  now: () => (typeof performance !== "undefined" ? performance.now() : Date.now()),
  // Without setTimeout(0)'s clamp where the host can (see timers.ts `soon`).
  yield: () => new Promise<void>((resolve) => soon(resolve)),
};

/** A fast 53-bit string hash (cyrb53), hex. Used to skip unchanged notes, not for security. */
export function hashText(str: string): string {
  let h1 = 0xdeadbeef ^ str.length;
  let h2 = 0x41c6ce57 ^ str.length;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (h2 >>> 0).toString(16).padStart(8, "0") + (h1 >>> 0).toString(16).padStart(8, "0") + str.length.toString(16);
}

interface Skip {
  mtime: number;
  size: number;
  reason: string;
}

export function createSearchService(deps: SearchServiceDeps): SearchService {
  return new KeywordSearchService(deps);
}

class KeywordSearchService implements SearchService {
  private readonly opts: SearchOptions;
  private readonly sched: Scheduler;
  private readonly file: string;
  private readonly index = new InvertedIndex();
  /** Loaded (or loading a persisted index): the worker runs and searches answer. */
  private ready = false;
  /** sql.js, started only when our reader cannot make sense of an index file (see readBlobs). */
  private sqlJs: Promise<SqlJsStatic> | null = null;
  /** The same, once started and loaded: the texts' files are read synchronously, inside a search. */
  private SQL: SqlJsStatic | null = null;
  /** The main file (format key, skipped notes) needs saving. */
  private mainDirty = false;
  private state: IndexStatus["state"] = "building";
  private lastError: string | null = null;
  private queue = new Set<string>();
  private reconcilePending = false;
  private readyAwaited = false;
  private busy = false;
  private stopping = false;
  private persistRequested = false;
  private debounceTimer: TimerHandle | null = null;
  private persistTimer: TimerHandle | null = null;
  private unsubscribe: (() => void) | null = null;
  private skipped = new Map<string, Skip>();
  private listeners = new Set<(s: IndexStatus) => void>();
  private idleWaiters = new Set<() => void>();
  private sliceStart = 0;
  private lastProgress = 0;
  private buildTotal = 0;
  private loop: Promise<void> | null = null;
  /** Reads started ahead of indexing (the next queued notes), so file I/O overlaps tokenizing. */
  private prefetched = new Map<string, Promise<string>>();
  /** Notes (re)indexed since the posting lists were last laid out again. */
  private indexedSinceCompaction = 0;
  /** Restored segments' texts still to load (one per step, after the queue; a search first reads the rows it needs). */
  private unloadedTexts: LazyText[] = [];
  /** Restored segments whose texts or postings turned out unusable: their notes are indexed again. */
  private lostSegments: number[] = [];
  /** Notes to index again even though their content is unchanged. */
  private forceIndex = new Set<string>();
  /** Save stamps: both files of a segment carry the same one. */
  private genCounter = 0;
  /** The search path has run once (see `warmUpSearch`). */
  private searchWarm = false;
  /** Measurements for the bench and the logs (longest single synchronous step of the last save). */
  readonly timings = { load: { waitMs: 0, rowsMs: 0, decodeMs: 0, listsMs: 0 }, loadMs: 0, lastFilesMs: 0, lastSerializeMs: 0, lastPersistBytes: 0, lastPersistMaxStepMs: 0, lastPersistFiles: 0 };

  constructor(private readonly deps: SearchServiceDeps) {
    this.opts = { ...DEFAULT_SEARCH_OPTIONS, ...(deps.options ?? {}) };
    this.sched = deps.scheduler ?? defaultScheduler;
    this.file = deps.fileName ?? DEFAULT_FILE;
    this.index.onSegmentLost = (k) => this.segmentLost(k, `Search index segment ${segmentFileName(this.file, k)} has inconsistent postings`);
  }

  private log(level: "debug" | "info" | "warn" | "error", msg: string): void {
    this.deps.log?.(level, msg);
  }

  private indexKey(): string {
    return `${SCHEMA_VERSION}/${TOKENIZER_VERSION}/${this.opts.language}/${this.opts.chunkWords}`;
  }

  private get dirty(): boolean {
    return this.mainDirty || this.index.dirtySegments().length > 0;
  }

  async start(): Promise<void> {
    const t0 = this.sched.now();
    let loaded = false;
    try {
      loaded = await this.load();
    } catch (e) {
      this.log("warn", `Search index ${this.file} is unreadable (${errText(e)}); rebuilding it from the notes.`);
    }
    // A loaded index is searched as soon as `start()` returns: compile the search path first.
    if (loaded && this.index.docs.size > 0) {
      try {
        await this.warmUpSearch();
      } catch (e) {
        this.log("warn", `Search warm-up failed: ${errText(e)}`);
      }
    }
    if (!loaded) {
      this.index.clear();
      this.unloadedTexts = [];
      this.skipped.clear();
      // Every segment file is rewritten, so none from an older index survives next to the new main file.
      this.index.markAllDirty();
      this.mainDirty = true;
    }
    this.ready = true;
    this.timings.loadMs = this.sched.now() - t0;
    this.state = loaded ? "queryable" : "building";
    this.unsubscribe = this.deps.port.onChange((ev) => this.onEvent(ev));
    this.reconcilePending = true;
    this.kick();
    this.emitProgress(true);
  }

  /** Loads the persisted index, one segment per task. False when there is none or it has another format. */
  private async load(): Promise<boolean> {
    // A file our reader cannot make sense of goes to sql.js (see readBlobs).
    const read = async (name: string, bytes: Uint8Array): Promise<Map<string, Uint8Array>> => {
      try {
        return readBlobs(bytes);
      } catch (e) {
        if (!(e instanceof SqliteFileError)) throw e;
        this.log("info", `Search index ${name} is not laid out as this version writes it (${e.message}); reading it with sql.js.`);
        return readBlobsWithSqlJs(await this.startSqlJs(), bytes);
      }
    };
    let bytes: Uint8Array | null = null;
    try {
      bytes = await this.deps.store.read(this.file);
    } catch (e) {
      this.log("warn", `Search index ${this.file} could not be read (${errText(e)}); rebuilding it.`);
      return false;
    }
    if (!bytes || bytes.length === 0) return false;
    // Yield only when the slice is used up (each yield costs a timer tick). The worker is not
    // running yet, so loading keeps its slices in `sliceStart` too.
    this.sliceStart = this.sched.now();
    const yieldIfDue = async () => {
      if (this.sliceUsed()) await this.nextSlice();
    };
    const main = await read(this.file, bytes);
    const meta = JSON.parse(text(main.get("meta"))) as { key?: string; segments?: number };
    if (meta.key !== this.indexKey() || meta.segments !== SEGMENT_COUNT) {
      this.log("info", `Search index format changed (${meta.key ?? "unknown"} → ${this.indexKey()}); rebuilding it.`);
      return false;
    }
    const names = main.get("names");
    if (!names) throw new Error("no term dictionary");
    await this.index.restoreDict(names, yieldIfDue);
    await this.sched.yield();
    this.skipped.clear();
    for (const r of JSON.parse(text(main.get("skipped")) || "[]") as { path: string; mtime: number; size: number; reason: string }[]) {
      this.skipped.set(r.path, { mtime: r.mtime, size: r.size, reason: r.reason });
    }
    // Read the segment files ahead of decoding (one per task), then the texts' files, which are
    // decoded only after loading (see LazyText).
    const all = readInOrder(
      this.deps.store,
      [...Array.from({ length: SEGMENT_COUNT }, (_, k) => segmentFileName(this.file, k)), ...Array.from({ length: SEGMENT_COUNT }, (_, k) => segmentTextFileName(this.file, k))],
      () => this.sched.yield(),
    );
    const textFiles: (Uint8Array | Error | null)[] = [];
    const now = () => this.sched.now();
    const lt = { wait: 0, rows: 0, decode: 0, lists: 0 };
    for (let k = 0; k < SEGMENT_COUNT; k++) {
      // One segment per task: a segment is 1/32 of the index, and the first ones run before V8 has
      // optimized the decoding (a yield is one setImmediate, ~0.1 ms).
      await this.nextSlice();
      const name = segmentFileName(this.file, k);
      try {
        let t = now();
        const b = await all[k];
        lt.wait += now() - t;
        if (b instanceof Error) throw b;
        if (!b || b.length === 0) throw new Error("missing");
        t = now();
        const blobs = await read(name, b);
        lt.rows += now() - t;
        // Reading a segment and decoding it are two tasks (in a fresh process, before V8 has
        // optimised either, one segment was up to ~50 ms).
        await this.sched.yield();
        t = now();
        if (text(blobs.get("key")) !== this.indexKey()) throw new Error("another format");
        const get = (n: keyof RestoredBlobs): Uint8Array => {
          const v = blobs.get(n);
          if (!v) throw new Error(`no ${n}`);
          return v;
        };
        const gen = text(blobs.get("gen"));
        const readText = (parts: number[] | null, last: boolean): Map<number, Uint8Array> => {
          const raw = textFiles[k];
          let release = last;
          try {
            if (raw instanceof Error) throw raw;
            if (!raw || raw.length === 0) throw new Error("missing");
            const rows = readBlobs(raw, parts ? ["key", "gen", ...parts.map((p) => `t${p}`)] : undefined, this.SQL);
            if (text(rows.get("key")) !== this.indexKey() || text(rows.get("gen")) !== gen) throw new Error("saved apart from its segment");
            const out = new Map<number, Uint8Array>();
            for (const [name, v] of rows) if (/^t\d+$/.test(name)) out.set(Number(name.slice(1)), v);
            return out;
          } catch (e) {
            release = true;
            throw e;
          } finally {
            if (release) textFiles[k] = null; // the file's bytes are no longer needed
          }
        };
        this.index.restoreSegment(k, { docs: get("docs"), nums: get("nums"), terms: get("terms"), postings: get("postings"), seq: get("seq") }, readText, (seg, why) => this.segmentLost(seg, `Search index texts ${segmentTextFileName(this.file, seg)} are unusable (${why})`));
        lt.decode += now() - t;
      } catch (e) {
        // Its notes are not in the index: the reconciliation indexes them again.
        this.index.dirty[k] = 1;
        this.log("warn", `Search index segment ${name} is unusable (${errText(e)}); its notes are indexed again.`);
      }
    }
    const t = now();
    await this.index.finishRestore(yieldIfDue, () => this.nextSlice());
    lt.lists = now() - t;
    // The texts' reads finished long ago (they overlapped the decoding above); keep those in use.
    this.unloadedTexts = this.index.unloadedTexts();
    const used = new Set(this.unloadedTexts.map((t) => t.seg));
    for (let k = 0; k < SEGMENT_COUNT; k++) {
      const raw = await all[SEGMENT_COUNT + k];
      textFiles[k] = used.has(k) ? raw : null;
    }
    this.timings.load = { waitMs: lt.wait, rowsMs: lt.rows, decodeMs: lt.decode, listsMs: lt.lists };
    this.log("debug", `Search index loaded: waiting for reads ${Math.round(lt.wait)} ms, reading rows ${Math.round(lt.rows)} ms, notes ${Math.round(lt.decode)} ms, lists laid out and notes registered ${Math.round(lt.lists)} ms (with yields).`);
    return true;
  }

  /** sql.js, started on first need (a fallback read): it is not needed to read or save our own files. */
  private startSqlJs(): Promise<SqlJsStatic> {
    if (!this.sqlJs) {
      this.sqlJs = loadSqlJs(this.deps.sqlWasm);
      this.sqlJs.then(
        (SQL) => (this.SQL = SQL),
        () => {},
      );
    }
    return this.sqlJs;
  }

  // ---- events ----

  private onEvent(ev: VaultEvent): void {
    if (this.stopping) return;
    const paths = ev.type === "rename" ? [ev.oldPath, ev.path] : [ev.path];
    for (const p of paths) {
      this.prefetched.delete(p);
      if (isNotePath(p)) this.queue.add(p);
      else if (ev.type !== "create" && ev.type !== "modify") this.queueFolder(p);
    }
    clearTimer(this.debounceTimer);
    this.debounceTimer = setTimer(() => {
      this.debounceTimer = null;
      this.kick();
    }, this.opts.debounceMs);
  }

  /** A folder was renamed or deleted: re-check every note we know under it and every note now under it. */
  private queueFolder(folder: string): void {
    for (const p of this.index.docs.keys()) if (isUnder(p, folder)) this.queue.add(p);
    for (const p of this.skipped.keys()) if (isUnder(p, folder)) this.queue.add(p);
    for (const f of this.deps.port.listFiles()) if (isNotePath(f.path) && isUnder(f.path, folder)) this.queue.add(f.path);
  }

  // ---- the background worker ----

  private kick(): void {
    if (this.busy || this.stopping || !this.ready) return;
    this.busy = true;
    this.loop = this.run()
      .catch((e) => {
        this.lastError = errText(e);
        this.log("error", `Search indexing failed: ${this.lastError}`);
        this.logStack(e);
        if (this.state === "building") this.state = "failed";
      })
      .finally(() => {
        this.busy = false;
        this.loop = null;
        if (!this.stopping && (this.queue.size > 0 || this.reconcilePending || this.lostSegments.length > 0) && !this.debounceTimer) this.kick();
        else {
          if (this.dirty && !this.stopping) this.schedulePersist();
          this.emitProgress(true);
          if (!this.hasPendingWork()) for (const w of [...this.idleWaiters]) w();
        }
      });
  }

  private async run(): Promise<void> {
    // The worker's steps are tasks of their own, never the tail of its caller's task (`start()`, whose
    // caller may search at once, or an event).
    await this.nextSlice();
    while (!this.stopping) {
      if (this.reconcilePending) {
        this.reconcilePending = false;
        await this.reconcile();
        continue;
      }
      if (this.lostSegments.length) {
        for (const k of this.lostSegments.splice(0)) {
          for (const p of this.index.restoredPaths(k)) {
            this.forceIndex.add(p);
            this.queue.add(p);
          }
        }
        continue;
      }
      if (this.index.hasEncodedLists) {
        // Posting lists loaded from disk are decoded on first use; the rest here, in slices.
        this.index.decodeSomeLists(this.sliceUsed);
        await this.maybeYield();
        continue;
      }
      const next = this.queue.values().next();
      if (!next.done) {
        this.prefetch(); // the next notes (this one included) are read while this one is indexed
        this.queue.delete(next.value);
        try {
          await this.processPath(next.value);
        } catch (e) {
          // One note that cannot be indexed is skipped (until it changes), with its path and why;
          // the run goes on.
          this.lastError = `"${next.value}": ${errText(e)}`;
          this.log("warn", `Could not index "${next.value}": ${errText(e)}`);
          this.logStack(e);
          const st = this.deps.port.stat(next.value);
          if (st) this.skip(next.value, st.mtime, st.size, `could not be indexed: ${errText(e)}`);
        }
        await this.maybeYield();
        continue;
      }
      if (this.index.needsCompaction() || this.indexedSinceCompaction >= COMPACT_AFTER_NOTES) {
        await this.compact();
        continue;
      }
      const lt = this.unloadedTexts.pop();
      if (lt) {
        lt.loadAll();
        await this.maybeYield();
        continue;
      }
      if (!this.searchWarm && this.index.docs.size > 0) {
        await this.warmUpSearch();
        continue;
      }
      if (this.state === "building") {
        this.state = "queryable";
        this.log("info", `Search index built: ${this.index.docs.size} notes.`);
      }
      if (this.persistRequested) {
        this.persistRequested = false;
        if (this.dirty) await this.persist();
        continue;
      }
      break;
    }
  }

  private async maybeYield(): Promise<void> {
    if (!this.sliceUsed()) return;
    this.emitProgress(false);
    await this.nextSlice();
    // A due merge of the postings log goes first, in slices of its own.
    while (this.index.mergeDue && !this.index.mergeSome(this.sliceUsed)) await this.nextSlice();
  }

  /** Yields, then starts a new slice. */
  private async nextSlice(): Promise<void> {
    await this.sched.yield();
    this.sliceStart = this.sched.now();
  }

  /** The current slice is used up. */
  private readonly sliceUsed = (): boolean => this.sched.now() - this.sliceStart >= this.opts.sliceMs;

  private async reconcile(): Promise<void> {
    if (!this.readyAwaited) {
      await this.deps.port.ready();
      this.readyAwaited = true;
      this.sliceStart = this.sched.now();
    }
    const files = this.deps.port.listFiles();
    const seen = new Set<string>();
    let i = 0;
    for (const f of files) {
      if (++i % 64 === 0) await this.maybeYield(); // it yields only when the slice is used up
      if (!isNotePath(f.path) || this.deps.policy.isHidden(f.path)) continue;
      seen.add(f.path);
      const doc = this.index.docs.get(f.path);
      if (doc && doc.mtime === f.mtime && doc.size === f.size) continue;
      const sk = this.skipped.get(f.path);
      if (!doc && sk && sk.mtime === f.mtime && sk.size === f.size) continue;
      this.queue.add(f.path);
    }
    for (const p of this.index.docs.keys()) if (!seen.has(p)) this.queue.add(p);
    for (const p of this.skipped.keys()) if (!seen.has(p)) this.queue.add(p);
    this.buildTotal = seen.size;
    this.log("debug", `Search reconcile: ${seen.size} notes, ${this.queue.size} to (re)index.`);
  }

  /**
   * Runs searches one per task, for a few of the larger terms, several rounds, so that V8 has
   * optimised the search path before the first real query: after loading, before `start()` returns;
   * after a first build, in the background. At 10k notes, a query for two terms in every note took
   * 35–57 ms as the first search in a fresh process (21–36 ms for one such term in the same process,
   * whose optimised code goes with the old index), and 5–18 ms after this warm-up (16 bench runs of
   * index v8). A single round, or terms of a few hundred chunks, left it unoptimised.
   */
  private async warmUpSearch(): Promise<void> {
    this.searchWarm = true;
    await this.sched.yield(); // picking the terms is a step of its own
    const lang = this.opts.language;
    const terms = this.index.sampleTerms(WARM_UP_QUANTILES, WARM_UP_MAX_POSTINGS);
    if (!terms.length) return;
    // Two terms at once take the AND path (clauses pruned by the earlier ones).
    const queries = terms.length > 1 ? [...terms, terms.slice(-2).join(" ")] : terms;
    const req = (query: string): SearchRequest => ({ query, limit: 10, chunksPerFile: 2, snippetWords: 200 });
    // V8 compiles each function on its first call: the first search's code is compiled over three
    // tasks (the query parser, the scoring, then the hits and snippets), not all in one.
    const steps: (() => unknown)[] = [() => parseQuery(queries[0], lang), () => this.index.matchPaths(parseQuery(queries[0], lang), req(queries[0]), lang)];
    for (let round = 0; round < WARM_UP_ROUNDS; round++) for (const q of queries) steps.push(() => this.index.search(parseQuery(q, lang), req(q), lang));
    for (const step of steps) {
      await this.sched.yield();
      if (this.stopping) return;
      step();
    }
    // What follows `start()` (a first query, say) runs in a task of its own.
    await this.nextSlice();
  }

  /** A restored segment's texts or postings are unusable (called from whatever first needed them). */
  private segmentLost(seg: number, what: string): void {
    this.log("warn", `${what}; the segment's notes are indexed again.`);
    this.lostSegments.push(seg);
    // Not now: this runs inside a search (or a save), which must not see the index change under it.
    void Promise.resolve().then(() => {
      if (!this.stopping) this.kick();
    });
  }

  private async processPath(path: string): Promise<void> {
    const port = this.deps.port;
    const force = this.forceIndex.delete(path);
    const st = port.stat(path);
    if (!st || !isNotePath(path) || this.deps.policy.isHidden(path)) {
      this.removePath(path);
      return;
    }
    const doc = this.index.docs.get(path);
    if (st.size > this.opts.maxNoteBytes) {
      this.skip(path, st.mtime, st.size, `larger than the ${formatBytes(this.opts.maxNoteBytes)} limit (${formatBytes(st.size)})`);
      return;
    }
    let text: string;
    try {
      const pre = this.prefetched.get(path);
      this.prefetched.delete(path);
      text = await (pre ?? port.read(path));
    } catch (e) {
      this.skip(path, st.mtime, st.size, `unreadable: ${errText(e)}`);
      return;
    }
    if (text.includes("\0")) {
      this.skip(path, st.mtime, st.size, "binary content (NUL bytes)");
      return;
    }
    if (text.includes("\uFFFD") && !(await this.validUtf8(path))) {
      this.skip(path, st.mtime, st.size, "not valid UTF-8");
      return;
    }
    const hash = hashText(text);
    if (doc && doc.hash === hash && !force) {
      if (doc.mtime !== st.mtime || doc.size !== st.size) {
        doc.mtime = st.mtime;
        doc.size = st.size;
        this.index.touchDoc(doc);
      }
      return;
    }
    const meta = port.getMetadata(path);
    const chunks = chunkNote(path, text, meta, { maxWords: this.opts.chunkWords });
    await this.maybeYield();
    // A long note is tokenized across several slices (one chunk at a time).
    const seg = segmentOf(path);
    const builder = this.index.docBuilder();
    for (const c of chunks) {
      builder.addChunk(c, this.opts.language);
      await this.maybeYield();
    }
    if (this.stopping) {
      this.queue.add(path);
      return;
    }
    // The note may have changed while we yielded: the next event re-queues it; apply what we read.
    const fm = meta?.frontmatter ?? {};
    const tags = new Set<string>();
    for (const t of frontmatterTags(meta?.frontmatter)) tags.add(t.slice(1).toLowerCase());
    for (const t of meta?.tags ?? []) tags.add(t.tag.replace(/^#/, "").toLowerCase());
    this.index.addDoc({ seg, path, title: basenameOf(path), folder: parentOf(path), mtime: st.mtime, size: st.size, hash, frontmatter: fm, tags: [...tags] }, chunks, builder);
    this.indexedSinceCompaction++;
    if (this.skipped.delete(path)) this.mainDirty = true;
  }

  /** Starts reading the next few queued notes. */
  private prefetch(): void {
    for (const p of this.prefetched.keys()) if (!this.queue.has(p)) this.prefetched.delete(p);
    if (this.prefetched.size >= PREFETCH) return;
    let n = 0;
    for (const p of this.queue) {
      if (n++ >= PREFETCH * 2 || this.prefetched.size >= PREFETCH) break;
      if (this.prefetched.has(p) || !isNotePath(p) || this.deps.policy.isHidden(p)) continue;
      const st = this.deps.port.stat(p);
      if (!st || st.size > this.opts.maxNoteBytes) continue;
      const read = this.deps.port.read(p);
      read.catch(() => undefined);
      this.prefetched.set(p, read);
    }
  }

  private async validUtf8(path: string): Promise<boolean> {
    try {
      const bytes = await this.deps.port.readBinary(path);
      new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      return true;
    } catch {
      return false;
    }
  }

  private removePath(path: string): void {
    this.index.removeDoc(path);
    if (this.skipped.delete(path)) this.mainDirty = true;
  }

  /** An unexpected error's stack, for `--verbose` (debug). */
  private logStack(e: unknown): void {
    if (e instanceof Error && e.stack) this.log("debug", e.stack);
  }

  private skip(path: string, mtime: number, size: number, reason: string): void {
    this.removePath(path);
    this.skipped.set(path, { mtime, size, reason });
    this.mainDirty = true;
    this.log("info", `Search skips "${path}": ${reason}.`);
  }

  private async compact(): Promise<void> {
    this.indexedSinceCompaction = 0;
    const it = { seg: 0, k: 0 };
    for (;;) {
      const more = this.index.compactSome(it, this.sliceUsed);
      if (!more) break;
      await this.maybeYield();
    }
  }

  private schedulePersist(): void {
    clearTimer(this.persistTimer);
    this.persistTimer = setTimer(() => {
      this.persistTimer = null;
      this.persistRequested = true;
      this.kick();
    }, this.opts.persistDebounceMs);
  }

  /**
   * Saves the changed segments, then the main file, each as its own small SQLite database (see
   * writeBlobs) written atomically through the state store. Each segment is serialized in one short
   * step and each of its files made in another (~1 ms at 10k notes), with the event loop given back
   * between steps.
   */
  private async persist(): Promise<void> {
    if (!this.ready) return;
    if (this.index.deadPostings > 0 && this.index.needsCompaction()) await this.compact();
    await this.maybeYield();
    let serializeMs = 0;
    let filesMs = 0;
    let bytesTotal = 0;
    let maxStep = 0;
    let files = 0;
    const write = async (name: string, bytes: Uint8Array): Promise<boolean> => {
      try {
        await this.deps.store.write(name, bytes);
        return true;
      } catch (e) {
        this.log("warn", `Could not save the search index to ${this.deps.store.description}: ${errText(e)}`);
        return false;
      }
    };
    /** A file's bytes, made in a task of its own, timed. */
    const makeFile = async (content: Record<string, Uint8Array>): Promise<Uint8Array> => {
      await this.sched.yield();
      const t0 = this.sched.now();
      const bytes = writeBlobs(content);
      const t = this.sched.now() - t0;
      filesMs += t;
      maxStep = Math.max(maxStep, t);
      return bytes;
    };
    const segs = this.index.dirtySegments();
    if (segs.length) {
      // One sliced pass over the posting lists splits them by segment…
      const job = this.index.segmentWriter(segs);
      const t0 = this.sched.now();
      while (!job.step(this.sliceUsed)) await this.maybeYield();
      serializeMs += this.sched.now() - t0;
      // …then each segment is exported and written in steps of its own: its texts first, then the
      // rest, both stamped with the same new `gen` (texts left from another save are never used).
      const key = utf8e.encode(this.indexKey());
      for (const k of segs) {
        await this.sched.yield();
        const t0 = this.sched.now();
        const { text: textBlob, ...blobs } = job.blobs(k);
        const gen = utf8e.encode(`${Date.now().toString(36)}.${(++this.genCounter).toString(36)}`);
        const t1 = this.sched.now();
        serializeMs += t1 - t0;
        maxStep = Math.max(maxStep, t1 - t0);
        const textRows: Record<string, Uint8Array> = { key, gen };
        for (let p = 0; p * TEXT_PART < textBlob.length; p++) textRows[`t${p}`] = textBlob.subarray(p * TEXT_PART, (p + 1) * TEXT_PART);
        const segmentFiles: [string, Record<string, Uint8Array>][] = [
          [segmentTextFileName(this.file, k), textRows],
          [segmentFileName(this.file, k), { ...blobs, key, gen }],
        ];
        for (const [name, content] of segmentFiles) {
          const bytes = await makeFile(content);
          bytesTotal += bytes.length;
          files++;
          await this.sched.yield();
          if (!(await write(name, bytes))) {
            for (const j of segs) this.index.dirty[j] = 1;
            return;
          }
        }
      }
      this.sliceStart = this.sched.now();
    }
    if (this.mainDirty || files > 0) {
      this.mainDirty = false;
      const skipped = [...this.skipped].map(([path, s]) => ({ path, ...s }));
      const bytes = await makeFile({
        meta: utf8e.encode(JSON.stringify({ key: this.indexKey(), segments: SEGMENT_COUNT })),
        skipped: utf8e.encode(JSON.stringify(skipped)),
        names: this.index.dictBytes(),
      });
      bytesTotal += bytes.length;
      files++;
      if (!(await write(this.file, bytes))) this.mainDirty = true;
    }
    this.sliceStart = this.sched.now();
    this.timings.lastSerializeMs = serializeMs;
    this.timings.lastFilesMs = filesMs;
    this.timings.lastPersistBytes = bytesTotal;
    this.timings.lastPersistMaxStepMs = maxStep;
    this.timings.lastPersistFiles = files;
    this.log("debug", `Search index saved (${files} files, ${formatBytes(bytesTotal)}; serialize ${Math.round(serializeMs)} ms, files ${Math.round(filesMs)} ms, longest step ${Math.round(maxStep)} ms).`);
  }

  // ---- queries and status ----

  search(req: SearchRequest): SearchResponse {
    const pq = this.parse(req.query);
    if (!this.ready) return { hits: [], total_files: 0, relaxed: false };
    return this.index.search(pq, req, this.opts.language);
  }

  matchPaths(req: SearchRequest): { paths: string[]; total: number } {
    const pq = this.parse(req.query);
    if (!this.ready) return { paths: [], total: 0 };
    return this.index.matchPaths(pq, req, this.opts.language);
  }

  /** The parsed query, or `invalid_argument` when it is too large to answer in one bounded step. */
  private parse(query: string): ParsedQuery {
    const pq = parseQuery(query, this.opts.language);
    checkQueryBounds(query, pq);
    return pq;
  }

  status(): IndexStatus {
    const indexed = this.index.docs.size;
    const total = this.state === "building" ? Math.max(this.buildTotal, indexed + this.skipped.size) : indexed + this.skipped.size + this.queueNew();
    return {
      state: this.state,
      documents_indexed: indexed,
      documents_total: total,
      queue_depth: this.queue.size,
      skipped: [...this.skipped].map(([path, s]) => ({ path, reason: s.reason })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      last_error: this.lastError,
    };
  }

  private queueNew(): number {
    let n = 0;
    for (const p of this.queue) if (!this.index.docs.has(p) && !this.skipped.has(p)) n++;
    return n;
  }

  hasPendingWork(): boolean {
    return this.queue.size > 0 || this.busy || this.reconcilePending || this.lostSegments.length > 0 || this.debounceTimer !== null;
  }

  waitForIdle(timeoutMs: number): Promise<boolean> {
    if (!this.hasPendingWork()) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimer(timer);
        this.idleWaiters.delete(waiter);
        resolve(ok);
      };
      const waiter = () => {
        if (!this.hasPendingWork()) done(true);
      };
      const timer = setTimer(() => done(!this.hasPendingWork()), timeoutMs);
      this.idleWaiters.add(waiter);
    });
  }

  reindex(): void {
    this.reconcilePending = true;
    this.kick();
  }

  onProgress(cb: (s: IndexStatus) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  private emitProgress(force: boolean): void {
    if (this.listeners.size === 0) return;
    const now = this.sched.now();
    if (!force && now - this.lastProgress < 250) return;
    this.lastProgress = now;
    const s = this.status();
    for (const cb of this.listeners) {
      try {
        cb(s);
      } catch (e) {
        this.log("warn", `Search progress listener failed: ${errText(e)}`);
      }
    }
  }

  async close(): Promise<void> {
    this.stopping = true;
    this.prefetched.clear();
    this.unsubscribe?.();
    this.unsubscribe = null;
    clearTimer(this.debounceTimer);
    clearTimer(this.persistTimer);
    this.debounceTimer = null;
    this.persistTimer = null;
    if (this.loop) await this.loop;
    if (this.ready) {
      if (this.dirty) {
        try {
          await this.persist();
        } catch (e) {
          this.log("warn", `Could not save the search index: ${errText(e)}`);
        }
      }
      this.ready = false;
    }
    for (const w of [...this.idleWaiters]) w();
    this.listeners.clear();
  }

  /** For tests and the bench: the number of entries in the in-memory index. */
  get stats(): { docs: number; chunks: number; terms: number; postings: number } {
    return { docs: this.index.docs.size, chunks: this.index.liveChunks, terms: this.index.termCount, postings: this.index.totalPostings };
  }
}

export type KeywordSearchServiceStats = { docs: number; chunks: number; terms: number; postings: number };

/** Files read at once while loading: enough to keep the disk busy, few enough that the first arrive first. */
const READ_AHEAD = 8;

/**
 * Reads `names` in order, at most READ_AHEAD at a time. Started all at once, each read's steps (open,
 * stat, read, close) queue behind every other read's, so all would arrive together at the end; in a
 * window, the first arrive while the rest are still read. Each read starts in a task of its own
 * (`yieldNow`): a store that reads synchronously (the headless one, for small files) would otherwise
 * read every file in one task, chained on the previous reads' completion. Never rejects: a failed read
 * is its Error.
 */
function readInOrder(store: StateStore, names: string[], yieldNow: () => Promise<void>): Promise<Uint8Array | null | Error>[] {
  const out: Promise<Uint8Array | null | Error>[] = [];
  for (let i = 0; i < names.length; i++) {
    const before: Promise<unknown> = i >= READ_AHEAD ? out[i - READ_AHEAD] : Promise.resolve();
    out.push(
      before
        .then(yieldNow)
        .then(() => store.read(names[i]))
        .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e)))),
    );
  }
  return out;
}

const utf8d = new TextDecoder();
const utf8e = new TextEncoder();

function text(b: Uint8Array | undefined): string {
  return b ? utf8d.decode(b) : "";
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

function formatBytes(n: number): string {
  if (n >= 1024 * 1024) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  if (n >= 1024) return `${Math.round(n / 1024)} KB`;
  return `${n} bytes`;
}

export type { DocEntry };
