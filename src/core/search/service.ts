/**
 * The search service the tools call: it keeps the keyword index in step with the vault (events, a
 * reconciliation, one note per step), answers searches and reports status. Owns what to index and
 * when to save; background work runs in slices on the worker (slices.ts), the index's files are read
 * and written by keyword/index-files.ts, and it must not reach into the index's internals.
 */
import { isUnder } from "../paths";
import { hash53 } from "../hash";
import { errText } from "../strings";
import { clearTimer, setTimer, type TimerHandle } from "../timers";
import { isNotePath, whenListed, type VaultEvent } from "../vault";
import { chunkNoteSliced } from "./chunk";
import { readNoteForIndex } from "./note-reader";
import { SCHEMA_VERSION, segmentFileName } from "./db";
import { segmentCountFor, segmentOf, type DocEntry } from "./keyword/doc";
import { KeywordIndexFiles, type IndexFileTimings, type Skip } from "./keyword/index-files";
import { InvertedIndex } from "./keyword/inverted-index";
import { filterTags } from "./keyword/score";
import { fillSections, type KeywordAnswer, type NoteTextReader } from "./keyword/sections";
import { warmUpSearch } from "./keyword/warm-up";
import { checkQueryBounds, parseQuery } from "./query";
import { BackgroundWorker, defaultScheduler, IdleWaiters, ProgressListeners, SliceClock } from "./slices";
import { TOKENIZER_VERSION } from "./tokenize";
import { releaseGarbage } from "../memory";
import { TimeSlice } from "../time-slice";
import {
  DEFAULT_SEARCH_OPTIONS,
  type IndexStatus,
  type ParsedQuery,
  type SearchOptions,
  type SearchRequest,
  type SearchResponse,
  type SearchService,
  type SearchServiceDeps,
} from "./types";

export { defaultScheduler };

/** A listing of up to this many files is counted at once (a few ms); a bigger one in slices (see visibleNotes). */
const SYNC_COUNT_FILES = 20_000;
/** A queue up to this long is counted at every status; a longer one every QUEUE_RECOUNT_MS (see `documentsTotal`). */
const SYNC_COUNT_QUEUE = 2048;
const QUEUE_RECOUNT_MS = 1000;

const DEFAULT_FILE = "search-index.sqlite";
/**
 * After indexing this many notes (a first build, a large reconcile, or many edits over time), the
 * posting lists are laid out again in one buffer, giving back the space grown lists left behind.
 */
const COMPACT_AFTER_NOTES = 1000;
/** How often a build packs a big dictionary's new short lists (see `InvertedIndex.flattenNewLists`). */
const FLATTEN_EVERY_NOTES = 1024;
/** A save that wrote this much or more hints the engine to collect (see core/memory.ts). */
const SAVE_GARBAGE_HINT_BYTES = 32 << 20;
/** Notes read ahead while indexing. */
const PREFETCH = 8;
/**
 * After a failed save or a failed run of the worker, the next try waits longer each time (the save's
 * debounce, or a second, doubled per failure) up to this: a failure that recurs must not run (and
 * log) every few seconds for as long as the server runs.
 */
const MAX_RETRY_MS = 5 * 60_000;
/** The warm-up's reader: no note (see `warmUp`). */
const noRead: NoteTextReader = () => Promise.resolve(null);

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export function createSearchService(deps: SearchServiceDeps): SearchService {
  return new KeywordSearchService(deps);
}

class KeywordSearchService implements SearchService {
  private readonly opts: SearchOptions;
  private readonly file: string;
  private readonly index = new InvertedIndex();
  private readonly clock: SliceClock;
  private readonly worker: BackgroundWorker;
  private readonly files: KeywordIndexFiles;
  /** The saved index is loaded (or there was none): the worker runs and searches read the index. */
  private loaded = false;
  /** See `ready`: set once, when every note the first reconciliation found missing is indexed. */
  private covered = false;
  /** The first reconciliation has run (the vault's notes are known). */
  private reconciled = false;
  /** Notes the first reconciliation found that the index does not hold (all of them on a first build); null before it and once covered. */
  private uncovered: Set<string> | null = null;
  /** Callers waiting for `ready` (bounded each). */
  private readonly readyWaiters = new IdleWaiters();
  /** The main file (format key, skipped notes) needs saving. */
  private mainDirty = false;
  private state: IndexStatus["state"] = "building";
  private lastError: string | null = null;
  private queue = new Set<string>();
  private reconcilePending = false;
  private listedAwaited = false;
  /** The vault's notes' metadata is read (a note is chunked by its headings and frontmatter). */
  private metadataReady = false;
  /** The note being indexed now (out of the queue, not in the index yet). */
  private indexing: string | null = null;
  /** See firstPass. */
  private readonly firstPassDone = deferred();
  /** See visibleNotes. */
  private visibleCount: { n: number; at: number } | null = null;
  /** `documentsTotal`'s last count of a long queue. */
  private totalCount: { n: number; at: number } | null = null;
  /** A count of visible notes is running in slices (see visibleNotes). */
  private counting = false;
  /** The vault is open (its notes' metadata read): see decodeListsStep. */
  private vaultOpen = false;
  /** The vault's notes are being compared with the index (see reconcile). */
  private reconciling = false;
  private stopping = false;
  private persistRequested = false;
  private debounceTimer: TimerHandle | null = null;
  private persistTimer: TimerHandle | null = null;
  /** The next run after a failed one (see MAX_RETRY_MS). */
  private retryTimer: TimerHandle | null = null;
  /** The worker's last run ended with an error. */
  private runFailed = false;
  /** Runs that failed in a row, and the last failure's message (a recurring one is logged once). */
  private runFailures = 0;
  private runError: string | null = null;
  /** Saves that failed in a row, and why the last one did (a recurring reason is logged once). */
  private saveFailures = 0;
  private saveError: string | null = null;
  private unsubscribe: (() => void) | null = null;
  private skipped = new Map<string, Skip>();
  private readonly idle = new IdleWaiters();
  private readonly progress: ProgressListeners<IndexStatus>;
  private buildTotal = 0;
  /** Reads started ahead of indexing (the next queued notes), so file I/O overlaps tokenizing. */
  private prefetched = new Map<string, Promise<string>>();
  /** Notes (re)indexed since the posting lists were last laid out again. */
  private indexedSinceCompaction = 0;
  /** Notes indexed since `flattenNewLists` last started, and whether it is part-way. */
  private indexedSinceFlatten = 0;
  private flattening = false;
  /** Restored segments whose postings turned out unusable: their notes are indexed again. */
  private lostSegments: number[] = [];
  /** Notes to index again even though their content is unchanged. */
  private forceIndex = new Set<string>();
  /** The search path has run once (see keyword/warm-up.ts). */
  private searchWarm = false;
  /** A loaded index is to be warmed up after the first reconciliation (see warmUpLoadedStep). */
  private warmLoaded = false;
  /** Measurements for the bench and the logs (see IndexFileTimings). */
  readonly timings: IndexFileTimings;

  constructor(private readonly deps: SearchServiceDeps) {
    this.opts = { ...DEFAULT_SEARCH_OPTIONS, ...(deps.options ?? {}) };
    this.file = deps.fileName ?? DEFAULT_FILE;
    this.clock = new SliceClock(deps.scheduler ?? defaultScheduler, this.opts.sliceMs);
    this.progress = new ProgressListeners(this.clock, (e) => this.log("warn", `Search progress listener failed: ${errText(e)}`));
    this.files = new KeywordIndexFiles({
      store: deps.store,
      file: this.file,
      key: this.indexKey(),
      index: this.index,
      clock: this.clock,
      sqlWasm: deps.sqlWasm,
      log: (level, msg) => this.log(level, msg),
    });
    this.timings = this.files.timings;
    this.worker = new BackgroundWorker(this.clock, {
      // Most urgent first; each step that did something starts the list again.
      steps: [
        () => this.reconcileStep(),
        () => this.requeueLostSegments(),
        () => this.warmUpLoadedStep(),
        () => this.decodeListsStep(),
        () => this.indexNextNote(),
        () => this.compactStep(),
        () => this.warmUpStep(),
        () => this.markBuilt(),
        () => this.packStep(),
        () => this.mergeStep(),
        () => this.persistStep(),
      ],
      onError: (e) => {
        // Reported once while it recurs (then at debug level); searches go on with what is indexed.
        const msg = errText(e);
        this.lastError = msg;
        this.runFailed = true;
        this.runFailures++;
        if (msg !== this.runError) {
          this.log("error", `Search indexing failed: ${msg}`);
          this.logStack(e);
        } else this.log("debug", `Search indexing failed again (${this.runFailures} times in a row): ${msg}`);
        this.runError = msg;
        this.firstPassDone.resolve();
        if (this.state === "building") this.state = "failed";
        this.readyWaiters.notify();
      },
      onSettled: () => {
        if (this.runFailed) {
          // Not again at once: a step that throws would throw again, in a loop.
          this.runFailed = false;
          if (!this.stopping) this.retryLater();
          this.emitProgress(true);
          this.idle.notify();
        } else if (!this.stopping && (this.queue.size > 0 || this.reconcilePending || this.lostSegments.length > 0) && !this.debounceTimer) this.kick();
        else {
          this.index.releaseScratch();
          if (this.dirty && !this.stopping) this.schedulePersist();
          this.emitProgress(true);
          this.idle.notify();
        }
      },
    });
    this.index.listedPath = (p) => this.deps.port.stat(p)?.path;
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
    // The vault's listing first, where it is work for this thread too: the first reconciliation needs
    // it anyway (listing 100k files and loading their index side by side took as long as one after the
    // other, and made the listing, which clients wait for at initialize, twice as slow). Headless, its
    // walk runs in a worker thread (`listingOffThread`): the index loads meanwhile (starting ~0.7 s
    // sooner at 100k notes; every note searchable ~0.3 s sooner), its notes given the vault's path
    // strings once listed (see reconcile).
    if (!this.deps.port.listingOffThread) await whenListed(this.deps.port);
    const t0 = this.clock.sched.now();
    let loaded = false;
    try {
      const found = await this.files.load();
      if (found) {
        this.skipped = found.skipped;
        loaded = true;
      }
    } catch (e) {
      this.log("warn", `Search index ${this.file} is unreadable (${errText(e)}); rebuilding it from the notes.`);
    }
    // A loaded index is searched as soon as `start()` returns; its warm-up comes right after the first
    // reconciliation, before the worker's other work (see warmUpLoadedStep).
    this.warmLoaded = loaded && this.index.docs.size > 0;
    if (!loaded) {
      this.index.clear();
      this.skipped.clear();
      // Every segment file is rewritten, so none from an older index survives next to the new main file.
      this.index.markAllDirty();
      this.mainDirty = true;
    }
    this.loaded = true;
    this.timings.loadMs = this.clock.sched.now() - t0;
    this.state = loaded ? "queryable" : "building";
    this.unsubscribe = this.deps.port.onChange((ev) => this.onEvent(ev));
    // Background work that only makes later searches faster waits for the open vault.
    void this.deps.port.ready().then(
      () => {
        this.vaultOpen = true;
        this.kick();
      },
      () => undefined,
    );
    this.reconcilePending = true;
    this.kick();
    this.emitProgress(true);
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

  // ---- the background worker's steps (see slices.ts), most urgent first ----

  private kick(): void {
    if (this.stopping || !this.loaded || this.retryTimer) return;
    this.worker.kick();
  }

  /** The next run after a failed one: after a second, doubled per failure in a row, at most MAX_RETRY_MS. */
  private retryLater(): void {
    clearTimer(this.retryTimer);
    this.retryTimer = setTimer(
      () => {
        this.retryTimer = null;
        this.kick();
      },
      Math.min(MAX_RETRY_MS, 1000 * 2 ** Math.min(this.runFailures - 1, 20)),
    );
  }

  /** A run got through every step it had: a failure before is over. */
  private runSucceeded(): void {
    if (this.runError === null) return;
    this.log("info", `Search indexing works again (after ${this.runFailures} failed ${this.runFailures === 1 ? "try" : "tries"}).`);
    if (this.lastError === this.runError) this.lastError = null;
    this.runError = null;
    this.runFailures = 0;
  }

  private async reconcileStep(): Promise<boolean> {
    if (!this.reconcilePending) return false;
    this.reconcilePending = false;
    this.reconciling = true;
    try {
      await this.reconcile();
    } finally {
      this.reconciling = false;
    }
    this.idle.notify();
    return true;
  }

  private requeueLostSegments(): boolean {
    if (!this.lostSegments.length) return false;
    for (const k of this.lostSegments.splice(0)) {
      for (const p of this.index.restoredPaths(k)) {
        this.forceIndex.add(p);
        this.queue.add(p);
      }
    }
    return true;
  }

  /**
   * Posting lists loaded from disk are decoded on first use; the rest here, in slices, once the
   * vault is open: until then its notes' metadata (which every other tool waits for) comes first.
   */
  private async decodeListsStep(): Promise<boolean> {
    if (!this.vaultOpen || !this.index.hasEncodedLists) return false;
    this.index.decodeSomeLists(this.clock.used);
    // The last list decoded: the saved index's encoded postings and read buffers are all garbage.
    if (!this.index.hasEncodedLists) releaseGarbage();
    await this.maybeYield();
    return true;
  }

  private async indexNextNote(): Promise<boolean> {
    if (this.queue.size === 0) return false;
    if (!this.metadataReady) {
      // Chunking a note needs its metadata (headings, frontmatter).
      this.firstPassDone.resolve();
      await this.deps.port.ready();
      this.metadataReady = true;
      this.clock.restart();
    }
    const next = this.queue.values().next();
    if (next.done) return false;
    this.prefetch(); // the next notes (this one included) are read while this one is indexed
    this.queue.delete(next.value);
    this.indexing = next.value;
    try {
      await this.processPath(next.value);
      this.noteCovered(next.value);
    } catch (e) {
      // One note that cannot be indexed is skipped (until it changes), with its path and why;
      // the run goes on.
      this.lastError = `"${next.value}": ${errText(e)}`;
      this.log("warn", `Could not index "${next.value}": ${errText(e)}`);
      this.logStack(e);
      const st = this.deps.port.stat(next.value);
      if (st) this.skip(next.value, st.mtime, st.size, `could not be indexed: ${errText(e)}`);
      this.noteCovered(next.value);
    } finally {
      this.indexing = null;
    }
    // The last pending note: a client waiting for fresh answers need not wait for background work.
    if (this.queue.size === 0) this.idle.notify();
    await this.maybeYield();
    return true;
  }

  private async compactStep(): Promise<boolean> {
    if (!this.index.needsCompaction() && this.indexedSinceCompaction < COMPACT_AFTER_NOTES) return false;
    await this.compact();
    return true;
  }

  /**
   * A loaded index's lists, all decoded (into one buffer: 118 MB at 100k notes), are packed once the
   * index is ready (~53 MB; see compaction.ts).
   */
  private async packStep(): Promise<boolean> {
    if (!this.index.packable) return false;
    await this.compact();
    return true;
  }

  /**
   * What is left in the postings log merged in steps before the worker settles: merged at once when
   * it settled, a few notes' postings that touched common words' packed lists were a 60–100 ms step
   * at 100k notes (each such list unpacked whole).
   */
  private async mergeStep(): Promise<boolean> {
    if (!this.index.logPending) return false;
    await this.mergeAll();
    return true;
  }

  /**
   * A loaded index's warm-up, once the first reconciliation is over (every note searchable from then
   * on, unless notes changed since the save): before it, in `start()`, its ~0.25 s at 100k notes
   * were part of every warm start's wait until every note was searchable. A search that comes
   * meanwhile runs in turn with its searches (slices), compiling what they have not yet.
   */
  private async warmUpLoadedStep(): Promise<boolean> {
    if (!this.warmLoaded) return false;
    this.warmLoaded = false;
    try {
      return await this.warmUpStep();
    } catch (e) {
      this.log("warn", `Search warm-up failed: ${errText(e)}`);
      return true;
    }
  }

  private async warmUpStep(): Promise<boolean> {
    if (this.searchWarm || this.index.docs.size === 0) return false;
    await this.warmUp();
    return true;
  }

  /** Not a step of work: the first time nothing comes before it, the index is built (or a failed state is over). */
  private markBuilt(): boolean {
    this.runSucceeded();
    if (this.state === "building" || this.state === "failed") {
      this.state = "queryable";
      this.log("info", `Search index built: ${this.index.docs.size} notes.`);
    }
    return false;
  }

  private async persistStep(): Promise<boolean> {
    if (!this.persistRequested) return false;
    this.persistRequested = false;
    if (this.dirty) await this.saveReporting();
    return true;
  }

  /**
   * Saves; a failure is reported, not thrown (the run goes on: indexing and searches are not held up
   * by a store that cannot be written). It is logged once while it recurs, shown as `last_error`, and
   * tried again after the save's debounce doubled per failure in a row (at most MAX_RETRY_MS).
   */
  private async saveReporting(): Promise<void> {
    let failed: string | null;
    let stack: unknown = null;
    try {
      failed = await this.persist();
    } catch (e) {
      failed = errText(e);
      stack = e;
    }
    if (failed === null) {
      if (this.saveError !== null) {
        this.log("info", `Search index saved (after ${this.saveFailures} failed ${this.saveFailures === 1 ? "try" : "tries"}).`);
        if (this.lastError === saveErrorText(this.saveError)) this.lastError = null;
      }
      this.saveError = null;
      this.saveFailures = 0;
      return;
    }
    this.saveFailures++;
    this.lastError = saveErrorText(failed);
    if (failed !== this.saveError) {
      this.log("error", this.lastError);
      if (stack) this.logStack(stack);
    } else this.log("debug", `Search index save failed again (${this.saveFailures} times in a row): ${failed}`);
    this.saveError = failed;
  }

  /** Yields when the slice is used up, reporting progress; a due merge of the postings log goes first, in slices of its own. */
  private async maybeYield(): Promise<void> {
    if (!this.clock.used()) return;
    this.emitProgress(false);
    await this.nextSlice();
    while (this.index.mergeDue && !this.index.mergeSome(this.clock.used)) await this.nextSlice();
  }

  /** The next slice of the background work, once no search in slices is part-way. */
  private async nextSlice(): Promise<void> {
    await this.clock.next();
    await this.noSearchPartWay();
  }

  /**
   * Waits while a search in slices is part-way (see InvertedIndex.searchesDone): called after every
   * yield and await of the background work, before it changes the index.
   */
  private async noSearchPartWay(): Promise<void> {
    if (!this.index.searching) return;
    await this.index.searchesDone();
    this.clock.restart();
  }

  /**
   * Merges all of the postings log in slices, due or not: a save and a compaction read every list,
   * and their own merge (`flushPostings`) would do it in one step. After a few edits on an index laid
   * out exactly (just compacted), that step grew every list the edited notes touch (10k notes:
   * 20–110 ms once per save).
   */
  private async mergeAll(): Promise<void> {
    await this.noSearchPartWay();
    while (!this.index.mergeSome(this.clock.used)) await this.nextSlice();
  }

  private async reconcile(): Promise<void> {
    if (!this.listedAwaited) {
      // The listing (paths, sizes, times) is all the comparison needs: notes' metadata may still be
      // being read (indexing a note waits for it, see indexNextNote).
      await whenListed(this.deps.port);
      this.listedAwaited = true;
      this.clock.restart();
      // Notes loaded while the vault was being listed: the vault's strings for their paths.
      while (!this.index.sharePaths(this.clock.used)) await this.nextSlice();
    }
    const t0 = this.clock.sched.now();
    const port = this.deps.port;
    const policy = this.deps.policy;
    const files = port.listFiles();
    /** A note the index should hold: listed, a note, visible. */
    const wanted = (p: string): boolean => port.stat(p) !== null && isNotePath(p) && !policy.isHidden(p);
    let notes = 0;
    let i = 0;
    // The indexed and skipped notes the listing holds as wanted notes (each path is listed once).
    let listedDocs = 0;
    let listedSkipped = 0;
    const docsBefore = this.index.docs.size;
    const skippedBefore = this.skipped.size;
    for (const f of files) {
      if (++i % 64 === 0) await this.maybeYield(); // it yields only when the slice is used up
      if (!isNotePath(f.path) || policy.isHidden(f.path)) continue;
      notes++;
      const doc = this.index.docs.get(f.path);
      if (doc) listedDocs++;
      if (doc && doc.mtime === f.mtime && doc.size === f.size) continue;
      const sk = this.skipped.get(f.path);
      if (sk) listedSkipped++;
      if (!doc && sk && sk.mtime === f.mtime && sk.size === f.size) continue;
      this.queue.add(f.path);
    }
    // Indexed or skipped notes that are gone (or hidden now): removed. A map lookup each, rather
    // than a set of every note seen (100k strings at 100k notes); none to look for when the listing
    // held every one of them and neither map changed meanwhile (a warm start with nothing deleted:
    // at 100k notes, the reconciliation took 142–146 ms with these lookups, 62–76 without).
    const held: [ReadonlyMap<string, unknown>, number, number][] = [
      [this.index.docs, listedDocs, docsBefore],
      [this.skipped, listedSkipped, skippedBefore],
    ];
    for (const [map, listed, before] of held) {
      if (listed === before && map.size === before) continue;
      for (const p of map.keys()) {
        if (++i % 64 === 0) await this.maybeYield();
        if (!wanted(p)) this.queue.add(p);
      }
    }
    this.buildTotal = notes;
    this.visibleCount = { n: notes, at: this.clock.sched.now() };
    this.growLayout(notes);
    this.log("debug", `Search reconcile: ${notes} notes, ${this.queue.size} to (re)index.`);
    this.log("debug", `Search reconcile took ${Math.round(this.clock.sched.now() - t0)} ms.`);
    if (!this.reconciled) {
      this.reconciled = true;
      // What the index lacks: until these are indexed an answer may miss notes (a note only changed
      // since the save is still found by its older text: that is ordinary pending work).
      const missing = new Set<string>();
      // In slices too: on a first build every note is queued (100k notes at once: ~65 ms).
      for (const p of [...this.queue]) {
        if (++i % 64 === 0) await this.maybeYield();
        if (!this.index.docs.has(p) && !this.skipped.has(p) && wanted(p)) missing.add(p);
      }
      this.uncovered = missing;
      if (missing.size === 0) this.markCovered();
      else this.log("debug", `Search index: ${missing.size} of ${notes} notes to index before it covers the vault.`);
      // Covered, or notes to index, which needs their metadata: either way the vault may read it now.
      this.firstPassDone.resolve();
    }
  }

  /**
   * Grows the saved index's layout for a vault of `notes` notes (see `segmentCountFor`): before a
   * first build it only sets the count; later every note moves to its new segment and all are saved
   * again, once each time the vault doubles past the layout (it never shrinks).
   */
  private growLayout(notes: number): void {
    const want = segmentCountFor(notes, this.opts.notesPerSegment);
    if (want <= this.index.segCount) return;
    if (this.index.docs.size) this.log("info", `Search index: ${notes} notes, saved in ${want} segments from now on (was ${this.index.segCount}).`);
    this.index.relayout(want, segmentOf);
    this.mainDirty = true;
  }

  /** A queued note was indexed, skipped or removed: one fewer the index lacks. */
  private noteCovered(path: string): void {
    if (this.uncovered?.delete(path) && this.uncovered.size === 0) this.markCovered();
  }

  private markCovered(): void {
    this.firstPassDone.resolve();
    this.covered = true;
    this.uncovered = null;
    this.log("debug", `Search index covers the vault (${this.index.docs.size} notes).`);
    this.readyWaiters.notify();
    this.emitProgress(true);
  }

  /** Compiles the search path before the first real query (see keyword/warm-up.ts). */
  private async warmUp(): Promise<void> {
    this.searchWarm = true;
    const t0 = this.clock.sched.now();
    // No note is read (the vault may still be opening, and its reads are not what needs compiling):
    // its hits' sections stay empty.
    await warmUpSearch(this.index, this.opts.language, this.clock, this.opts.searchSliceMs, () => this.stopping, (a, req) => this.fill(a, req, noRead));
    this.log("debug", `Search warm-up: ${Math.round(this.clock.sched.now() - t0)} ms.`);
  }

  /** A restored segment's postings are unusable (called from whatever first needed them). */
  private segmentLost(seg: number, what: string): void {
    this.log("warn", `${what}; the segment's notes are indexed again.`);
    this.lostSegments.push(seg);
    // Not now: this runs inside a search (or a save), which must not see the index change under it.
    void Promise.resolve().then(() => {
      if (!this.stopping) this.kick();
    });
  }

  private async processPath(path: string): Promise<void> {
    await this.noSearchPartWay();
    const port = this.deps.port;
    const force = this.forceIndex.delete(path);
    const st = port.stat(path);
    if (!st || !isNotePath(path) || this.deps.policy.isHidden(path)) {
      this.removePath(path);
      return;
    }
    const doc = this.index.docs.get(path);
    const pre = st.size > this.opts.maxNoteBytes ? undefined : this.prefetched.get(path);
    this.prefetched.delete(path);
    const read = await readNoteForIndex(port, path, st.size, this.opts.maxNoteBytes, pre);
    await this.noSearchPartWay();
    if ("skip" in read) {
      this.skip(path, st.mtime, st.size, read.skip);
      return;
    }
    const text = read.text;
    const hash = hash53(text);
    if (doc && doc.hash === hash && !force) {
      if (doc.mtime !== st.mtime || doc.size !== st.size) {
        doc.mtime = st.mtime;
        doc.size = st.size;
        this.index.touchDoc(doc);
      }
      return;
    }
    const meta = port.getMetadata(path);
    // Cut in steps: a note near the size limit took 40–120 ms in one go.
    const chunks = await chunkNoteSliced(path, text, meta, { maxWords: this.opts.chunkWords }, () => this.maybeYield());
    await this.maybeYield();
    // A long note is tokenized across several slices (one chunk at a time).
    const seg = segmentOf(path, this.index.segCount);
    const builder = this.index.docBuilder();
    for (const c of chunks) {
      builder.addChunk(c, this.opts.language);
      await this.maybeYield();
    }
    await this.noSearchPartWay();
    if (this.stopping) {
      this.queue.add(path);
      return;
    }
    // The note may have changed while we yielded: the next event re-queues it; apply what we read.
    const fm = meta?.frontmatter ?? {};
    this.index.addDoc({ seg, path, mtime: st.mtime, size: st.size, hash, frontmatter: fm, tags: filterTags(meta) }, chunks, builder);
    this.indexedSinceCompaction++;
    // A big dictionary's new short lists packed every few hundred notes, in what is left of the slice.
    if (++this.indexedSinceFlatten >= FLATTEN_EVERY_NOTES) {
      this.indexedSinceFlatten = 0;
      this.flattening = true;
    }
    if (this.flattening) this.flattening = this.index.flattenNewLists(this.clock.used);
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
    await this.mergeAll();
    const it = { seg: 0, k: 0 };
    for (;;) {
      await this.noSearchPartWay();
      const more = this.index.compactSome(it, this.clock.used);
      if (!more) break;
      await this.maybeYield();
    }
    // The lists' old buffers are garbage now (at 100k notes, ~180 MB after a cold build).
    releaseGarbage();
  }

  private schedulePersist(): void {
    clearTimer(this.persistTimer);
    const wait = this.opts.persistDebounceMs * 2 ** Math.min(this.saveFailures, 20);
    this.persistTimer = setTimer(
      () => {
        this.persistTimer = null;
        this.persistRequested = true;
        this.kick();
      },
      this.saveFailures > 0 ? Math.min(MAX_RETRY_MS, wait) : this.opts.persistDebounceMs,
    );
  }

  /** Saves what changed (see KeywordIndexFiles.save), laying out the posting lists again first when due. Null, or why a file could not be written. */
  private async persist(): Promise<string | null> {
    if (!this.loaded) return null;
    if (this.index.deadPostings > 0 && this.index.needsCompaction()) await this.compact();
    await this.mergeAll();
    await this.maybeYield();
    const r = await this.files.save(this.mainDirty, this.skipped, () => this.maybeYield());
    this.mainDirty = r.mainDirty;
    // A save of much of the index leaves its files' bytes behind (~180 MB at 100k notes).
    if ((this.files.timings.lastPersistBytes ?? 0) >= SAVE_GARBAGE_HINT_BYTES) releaseGarbage();
    return r.failed;
  }

  // ---- queries and status ----

  get ready(): boolean {
    return this.covered;
  }

  firstPass(): Promise<void> {
    return this.firstPassDone.promise;
  }

  whenReady(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    // Nothing will make it ready once stopping or failed: answer at once.
    return this.readyWaiters.wait(timeoutMs, () => !this.covered && !this.stopping && this.state !== "failed", signal).then(() => this.covered);
  }

  async search(req: SearchRequest): Promise<SearchResponse> {
    const pq = this.parse(req.query);
    if (!this.loaded) return { hits: [], total_files: 0, relaxed: false };
    // Ranked from the index alone; the hits' sections are then cut from their notes (the index holds no texts).
    return this.fill(await this.index.searchSliced(pq, req, this.opts.language, this.clock.sched, this.opts.searchSliceMs), req);
  }

  private fill(answer: KeywordAnswer, req: SearchRequest, read: NoteTextReader = this.noteText): Promise<SearchResponse> {
    return fillSections(this.index.reader, answer, read, { words: req.snippetWords, language: this.opts.language, chunkWords: this.opts.chunkWords });
  }

  /** A hit's note as it is now, for its sections (null: gone, hidden, grown past the size limit, unreadable). */
  private readonly noteText = async (path: string): Promise<string | null> => {
    // A note not listed yet (an index loaded while the vault is being listed, see start()) is not
    // waited for: its hit comes without its section's text. (An MCP session starts once the vault is
    // listed: no client's search meets this.)
    const st = this.deps.port.stat(path);
    if (!st || st.size > this.opts.maxNoteBytes || this.deps.policy.isHidden(path)) return null;
    try {
      return await this.deps.port.read(path);
    } catch {
      return null;
    }
  };

  matchPaths(req: SearchRequest): { paths: string[]; total: number } {
    const pq = this.parse(req.query);
    if (!this.loaded) return { paths: [], total: 0 };
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
    const total = this.state === "building" ? Math.max(this.buildTotal, indexed + this.skipped.size) : this.documentsTotal(indexed);
    let readiness: IndexStatus["readiness"];
    let notesTotal: number;
    let notesCovered: number;
    if (this.covered) {
      readiness = "ready";
      notesTotal = total;
      notesCovered = Math.min(indexed + this.skipped.size, total);
    } else if (this.uncovered) {
      readiness = "indexing";
      notesTotal = this.buildTotal;
      notesCovered = this.buildTotal - this.uncovered.size;
    } else {
      // Loading the saved index, or about to compare it with the notes on disk.
      readiness = this.loaded ? "checking" : "loading";
      notesTotal = this.visibleNotes();
      notesCovered = Math.min(indexed + this.skipped.size, notesTotal);
    }
    return {
      state: this.state,
      readiness,
      notes_covered: notesCovered,
      notes_total: notesTotal,
      documents_indexed: indexed,
      documents_total: total,
      queue_depth: this.queue.size,
      skipped: [...this.skipped].map(([path, s]) => ({ path, reason: s.reason })).sort((a, b) => (a.path < b.path ? -1 : 1)),
      last_error: this.lastError,
    };
  }

  /**
   * The vault's notes a client may see (before the first reconciliation has counted them), counted
   * again at most every 2 s: a search while the index loads reports it. Counting walks every file:
   * a listing of up to SYNC_COUNT_FILES at once; a bigger one in slices (at 100k notes one count was
   * a 25 ms task, in the first second of a cold start), meanwhile the last count or, before the first,
   * the notes the index holds.
   */
  private visibleNotes(): number {
    const now = this.clock.sched.now();
    const last = this.visibleCount;
    if (last && now - last.at < 2000) return last.n;
    const meanwhile = last ? last.n : this.index.docs.size;
    if (this.counting) return meanwhile;
    const files = this.deps.port.listFiles();
    if (files.length > SYNC_COUNT_FILES) {
      void this.countVisibleNotes(files);
      return meanwhile;
    }
    let n = 0;
    for (const f of files) if (this.isVisibleNote(f.path)) n++;
    this.visibleCount = { n, at: now };
    return n;
  }

  private isVisibleNote(path: string): boolean {
    return isNotePath(path) && !this.deps.policy.isHidden(path);
  }

  private async countVisibleNotes(files: readonly { path: string }[]): Promise<void> {
    this.counting = true;
    try {
      const slice = new TimeSlice(4, 512);
      let n = 0;
      for (const f of files) {
        if (slice.due()) {
          await slice.next();
          if (this.stopping) return;
        }
        if (this.isVisibleNote(f.path)) n++;
      }
      this.visibleCount = { n, at: this.clock.sched.now() };
    } finally {
      this.counting = false;
    }
  }

  /**
   * The notes indexed or skipped, and those queued that are neither: counted at once for a short
   * queue. A long one (a warm start that found many notes changed on disk) is counted at most every
   * second, the total kept meanwhile: every search asks for the status, and at 100k queued notes one
   * count took ~11 ms (a minute's reindex spent 11 s counting). Indexing a queued note moves it from
   * the queue to the index, which leaves the total as it is; only notes added or deleted meanwhile
   * show a second late.
   */
  private documentsTotal(indexed: number): number {
    const known = indexed + this.skipped.size;
    if (this.queue.size <= SYNC_COUNT_QUEUE) return known + this.queueNew();
    const now = this.clock.sched.now();
    const last = this.totalCount;
    if (last && now - last.at < QUEUE_RECOUNT_MS) return Math.max(last.n, known);
    const n = known + this.queueNew();
    this.totalCount = { n, at: now };
    return n;
  }

  private queueNew(): number {
    let n = 0;
    for (const p of this.queue) if (!this.index.docs.has(p) && !this.skipped.has(p)) n++;
    return n;
  }

  hasPendingWork(): boolean {
    // Loading the saved index is pending work too: the worker starts after it. The worker's other
    // background work (decoding posting lists, loading texts, warming up, compacting, saving)
    // changes no answer: it is not pending work.
    return (
      (!this.loaded && !this.stopping) ||
      this.queue.size > 0 ||
      this.indexing !== null ||
      this.reconcilePending ||
      this.reconciling ||
      this.lostSegments.length > 0 ||
      this.debounceTimer !== null
    );
  }

  waitForIdle(timeoutMs: number): Promise<boolean> {
    return this.idle.wait(timeoutMs, () => this.hasPendingWork() || this.worker.busy);
  }

  waitForPending(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return this.idle.wait(timeoutMs, () => this.hasPendingWork(), signal);
  }

  reindex(): void {
    this.reconcilePending = true;
    // Asked for: now, even while a failed run waits for its retry.
    clearTimer(this.retryTimer);
    this.retryTimer = null;
    this.kick();
  }

  onProgress(cb: (s: IndexStatus) => void): () => void {
    return this.progress.add(cb);
  }

  private emitProgress(force: boolean): void {
    this.progress.emit(force, () => this.status());
  }

  async close(): Promise<void> {
    this.stopping = true;
    this.firstPassDone.resolve();
    this.prefetched.clear();
    this.unsubscribe?.();
    this.unsubscribe = null;
    clearTimer(this.debounceTimer);
    clearTimer(this.persistTimer);
    clearTimer(this.retryTimer);
    this.debounceTimer = null;
    this.persistTimer = null;
    this.retryTimer = null;
    await this.worker.stop();
    if (this.loaded) {
      if (this.dirty) {
        let failed: string | null;
        try {
          failed = await this.persist();
        } catch (e) {
          failed = errText(e);
        }
        if (failed !== null) this.log("warn", `Could not save the search index (${failed}); the next start indexes the notes that changed since it was last saved again.`);
      }
      this.loaded = false;
    }
    this.idle.notify();
    this.readyWaiters.notify();
    this.progress.clear();
  }

  /** For tests and the bench: the number of entries in the in-memory index (`packed`: the postings in packed lists). */
  get stats(): KeywordSearchServiceStats {
    return { docs: this.index.docs.size, chunks: this.index.liveChunks, terms: this.index.termCount, postings: this.index.totalPostings, packed: this.index.packedPostings() };
  }
}

/** `last_error` for a save that failed: what happened, and what it means. */
function saveErrorText(why: string): string {
  return `Could not save the search index: ${why}. Searches still work; it is tried again later, and until it is saved a restart indexes the changed notes again.`;
}

export type KeywordSearchServiceStats = { docs: number; chunks: number; terms: number; postings: number; packed: number };

export type { DocEntry };
