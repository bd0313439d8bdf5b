/**
 * The semantic engine's service: keeps chunk vectors in step with the vault (the same chunks as the
 * keyword index, keyed by content so only changed chunks are embedded again), in batches on the
 * background worker, saved as it goes; answers nearest-chunk queries. Owns what to embed and when;
 * the vectors are vector-index.ts's, the files vector-files.ts's, the model the Embedder's.
 */
import { hashText } from "../../hash";
import { isUnder } from "../../paths";
import type { AccessPolicy } from "../../policy";
import type { StateStore } from "../../state";
import { errText } from "../../strings";
import { clearTimer, setTimer, type TimerHandle } from "../../timers";
import { basenameOf, isNotePath, type VaultEvent, type VaultPort } from "../../vault";
import { chunkNoteSliced } from "../chunk";
import { filterTags } from "../keyword/score";
import { readNoteForIndex } from "../note-reader";
import { BackgroundWorker, defaultScheduler, IdleWaiters, ProgressListeners, SliceClock } from "../slices";
import type { Scheduler } from "../types";
import { EmbedderError, normalize, type Embedder, type EmbedderDownload } from "./embedder";
import { keyPart, VectorFiles } from "./vector-files";
import { VectorIndex, type ChunkScore, type ScanFilter } from "./vector-index";

export interface SemanticOptions {
  /** Must match the keyword index's chunk size: both engines cut notes the same way. */
  chunkWords: number;
  maxNoteBytes: number;
  debounceMs: number;
  sliceMs: number;
  /** While embedding, what is embedded is saved at least this often (ms). */
  persistEveryMs: number;
  /** Characters of a chunk sent to the model (models read ~512 tokens at most). */
  maxChunkChars: number;
  /** After a provider failure, the first wait before trying again (doubling up to 5 minutes). */
  retryAfterMs: number;
}

export const DEFAULT_SEMANTIC_OPTIONS: SemanticOptions = {
  chunkWords: 300,
  maxNoteBytes: 2 * 1024 * 1024,
  debounceMs: 200,
  sliceMs: 8,
  persistEveryMs: 10_000,
  maxChunkChars: 2000,
  retryAfterMs: 5000,
};

const MAX_RETRY_MS = 5 * 60_000;

export interface SemanticServiceDeps {
  port: VaultPort;
  policy: AccessPolicy;
  store: StateStore;
  embedder: Embedder;
  log?: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
  options?: Partial<SemanticOptions>;
  scheduler?: Scheduler;
}

/**
 * The one state machine of embeddings, the same words everywhere (tools, `_meta`, status bar, console):
 * loading (reading saved vectors) → downloading (the built-in model's files, first use) → building
 * (sections being embedded) → ready (every section has a vector); unavailable whenever the provider
 * fails (`last_error` says why; tried again by itself unless the owner stopped it).
 */
export type EmbeddingsState = "loading" | "downloading" | "building" | "ready" | "unavailable";
export const EMBEDDINGS_STATES: readonly EmbeddingsState[] = ["loading", "downloading", "building", "ready", "unavailable"];

export interface EmbeddingsStatus {
  provider: string;
  model: string;
  dimension: number | null;
  state: EmbeddingsState;
  chunks_embedded: number;
  /** Sections found so far; while `counting`, notes still wait to be cut into sections and the total grows. */
  chunks_total: number;
  /** The total is still being counted (no percentage until it is known). */
  counting: boolean;
  /** Notes waiting to be chunked, and chunks waiting for the model. */
  notes_queued: number;
  chunks_queued: number;
  /** Sections the model answered badly for (left out until they change), and why (the last such answer). */
  chunks_refused: number;
  refused_reason: string | null;
  /** Why the state is unavailable (null in every other state). */
  last_error: string | null;
  /** Why the vectors could not be saved (searches still work; a restart embeds the changed notes again); null once saved. */
  save_error: string | null;
  /** The model's files being downloaded (state downloading), else null. */
  download: EmbedderDownload | null;
}

interface Pending {
  path: string;
  ordinal: number;
  hash: string;
  text: string;
}

export class SemanticService {
  private readonly opts: SemanticOptions;
  private readonly clock: SliceClock;
  private readonly worker: BackgroundWorker;
  private readonly files: VectorFiles;
  private index: VectorIndex;
  private ready = false;
  private stopping = false;
  private loading = true;
  private readonly queue = new Set<string>();
  /**
   * Queued notes that are gone: removed only once no existing note waits, so that a renamed note
   * (its old path queued first) finds its vectors still there to take by content.
   */
  private readonly gone = new Set<string>();
  private reconcilePending = false;
  /** Chunks waiting for the model, by note (a note indexed again replaces its own). */
  private readonly pending = new Map<string, Pending[]>();
  private pendingCount = 0;
  /** Chunks sent to the model, not answered yet. */
  private inFlight = 0;
  /** Chunk keys the model refused (bad answer): not tried again until they change. */
  private readonly refused = new Set<string>();
  private persistRequested = false;
  private lastPersist = 0;
  private debounceTimer: TimerHandle | null = null;
  private retryTimer: TimerHandle | null = null;
  /** The next save after a failed one (a second, doubled per failure in a row, at most 5 minutes). */
  private saveTimer: TimerHandle | null = null;
  /** Saves that failed in a row, and the last one's message (a recurring one is logged once). */
  private saveFailures = 0;
  private saveError: string | null = null;
  private retryMs: number;
  private unavailable = false;
  private lastError: string | null = null;
  private refusedReason: string | null = null;
  private unsubscribe: (() => void) | null = null;
  private readonly idle = new IdleWaiters();
  /** Callers waiting for the saved vectors to be loaded (bounded each). */
  private readonly loadWaiters = new IdleWaiters();
  private readonly progress: ProgressListeners<EmbeddingsStatus>;

  constructor(private readonly deps: SemanticServiceDeps) {
    this.opts = { ...DEFAULT_SEMANTIC_OPTIONS, ...(deps.options ?? {}) };
    this.retryMs = this.opts.retryAfterMs;
    this.clock = new SliceClock(deps.scheduler ?? defaultScheduler, this.opts.sliceMs);
    this.progress = new ProgressListeners(this.clock, (e) => this.log("warn", `Embedding progress listener failed: ${errText(e)}`));
    this.index = new VectorIndex(deps.embedder.dimension() ?? 0);
    this.files = new VectorFiles({ store: deps.store, key: () => this.key(), log: (l, m) => this.log(l, m), clock: this.clock });
    this.worker = new BackgroundWorker(this.clock, {
      steps: [() => this.reconcileStep(), () => this.embedStep(false), () => this.indexNextNote(), () => this.embedStep(true), () => this.persistStep()],
      onError: (e) => {
        this.lastError = errText(e);
        this.log("error", `Embedding failed: ${this.lastError}`);
      },
      onSettled: () => {
        if (!this.stopping && !this.unavailable && (this.queue.size > 0 || this.gone.size > 0 || this.reconcilePending || this.pendingCount > 0) && !this.debounceTimer) this.kick();
        else {
          // Nothing can be saved before the vectors' length is known (no answer yet).
          if (!this.stopping && this.files.dirty.size > 0 && this.index.dim > 0 && !this.persistRequested) {
            if (this.saveFailures > 0) this.persistLater();
            else {
              this.persistRequested = true;
              if (!this.unavailable) this.kick();
            }
          }
          this.emitProgress(true);
          this.idle.notify();
        }
      },
    });
  }

  private log(level: "debug" | "info" | "warn" | "error", msg: string): void {
    this.deps.log?.(level, msg);
  }

  /** What saved vectors must match: the provider, the model, the dimension and the chunking. */
  private key(): string {
    const e = this.deps.embedder;
    return `v1/${e.provider}/${keyPart(e.model)}/${this.index.dim}/${this.opts.chunkWords}`;
  }

  async start(): Promise<void> {
    try {
      const dim = this.deps.embedder.dimension();
      const loaded = await this.files.load(dim, this.deps.embedder.provider, this.deps.embedder.model, this.opts.chunkWords);
      if (loaded) this.index = loaded;
    } catch (e) {
      this.log("warn", `Saved embeddings are unreadable (${errText(e)}); notes are embedded again.`);
    }
    this.loading = false;
    this.ready = true;
    this.loadWaiters.notify();
    this.lastPersist = this.clock.sched.now();
    const off = this.deps.port.onChange((ev) => this.onEvent(ev));
    // A download starting or ending changes the state: listeners hear it at once (a short download
    // would otherwise fall between two throttled reports); its bytes are throttled like the rest.
    let downloading = false;
    const unwatch = this.deps.embedder.watch?.(() => {
      const now = this.deps.embedder.download?.() != null;
      const changed = now !== downloading;
      downloading = now;
      this.emitProgress(changed);
    });
    this.unsubscribe = () => {
      off();
      unwatch?.();
    };
    this.reconcilePending = true;
    this.kick();
    this.emitProgress(true);
  }

  private onEvent(ev: VaultEvent): void {
    if (this.stopping) return;
    const paths = ev.type === "rename" ? [ev.oldPath, ev.path] : [ev.path];
    for (const p of paths) {
      if (isNotePath(p)) this.queue.add(p);
      else if (ev.type !== "create" && ev.type !== "modify") {
        for (const d of this.index.docs.keys()) if (isUnder(d, p)) this.queue.add(d);
        for (const f of this.deps.port.listFiles()) if (isNotePath(f.path) && isUnder(f.path, p)) this.queue.add(f.path);
      }
    }
    clearTimer(this.debounceTimer);
    this.debounceTimer = setTimer(() => {
      this.debounceTimer = null;
      this.kick();
    }, this.opts.debounceMs);
  }

  private kick(): void {
    if (this.stopping || !this.ready) return;
    this.worker.kick();
  }

  // ---- the worker's steps ----

  private async reconcileStep(): Promise<boolean> {
    if (!this.reconcilePending) return false;
    this.reconcilePending = false;
    await this.deps.port.ready();
    this.clock.restart();
    const seen = new Set<string>();
    let i = 0;
    for (const f of this.deps.port.listFiles()) {
      if (++i % 256 === 0 && this.clock.used()) await this.clock.next();
      if (!isNotePath(f.path) || this.deps.policy.isHidden(f.path)) continue;
      seen.add(f.path);
      const doc = this.index.docs.get(f.path);
      if (doc && doc.mtime === f.mtime && doc.size === f.size && doc.chunks.every((c) => c.slot >= 0 || this.refused.has(c.hash))) continue;
      this.queue.add(f.path);
    }
    for (const p of this.index.docs.keys()) if (!seen.has(p)) this.queue.add(p);
    return true;
  }

  /** Embeds a batch: a full one first (`anySize` false), whatever is left once no note waits (`anySize` true). */
  private async embedStep(anySize: boolean): Promise<boolean> {
    if (this.unavailable || this.pendingCount === 0) return false;
    const e = this.deps.embedder;
    if (!anySize && this.pendingCount < e.batchSize) return false;
    const batch: Pending[] = [];
    for (const [path, items] of this.pending) {
      while (items.length && batch.length < e.batchSize) batch.push(items.shift()!);
      if (!items.length) this.pending.delete(path);
      if (batch.length >= e.batchSize) break;
    }
    this.pendingCount -= batch.length;
    let vectors: Float32Array[];
    // Sections with the model count as work: "ready" only once their vectors are in.
    this.inFlight += batch.length;
    try {
      vectors = await e.embed(
        batch.map((b) => b.text),
        "passage",
      );
    } catch (err) {
      this.inFlight -= batch.length;
      if (err instanceof EmbedderError && !err.retryable) {
        // The provider answered, badly (a wrong dimension, NaN): these chunks are left out until they change.
        for (const b of batch) this.refused.add(b.hash);
        this.refusedReason = err.message;
        this.log("warn", `Embedding ${batch.length} chunks failed: ${err.message}`);
        return true;
      }
      // Down or busy: the batch goes back, and the worker waits before trying again.
      for (const b of batch) this.requeue(b);
      this.providerDown(errText(err), err instanceof EmbedderError && err.held);
      return false;
    }
    this.inFlight -= batch.length;
    this.providerUp();
    for (const [i, b] of batch.entries()) {
      const v = normalize(vectors[i]);
      if (this.index.dim !== v.length) {
        if (!this.changeDimension(v.length)) return true;
      }
      if (this.index.setVector(b.path, b.ordinal, b.hash, v)) this.files.markDirty(b.path);
    }
    this.emitProgress(false);
    if (this.clock.sched.now() - this.lastPersist >= this.opts.persistEveryMs) {
      // Saved as it goes: an app closed halfway resumes where it stopped.
      await this.persist();
    }
    return true;
  }

  /** The model's vectors have another length than the index's: start over with it (a changed model behind the same name). */
  private changeDimension(dim: number): boolean {
    if (this.index.setDimension(dim)) return true;
    this.log("info", `The embedding model now gives vectors of ${dim} numbers (was ${this.index.dim}); every note is embedded again.`);
    this.index = new VectorIndex(dim);
    this.pending.clear();
    this.pendingCount = 0;
    this.files.markAllDirty();
    this.reconcilePending = true;
    return false;
  }

  private requeue(b: Pending): void {
    const items = this.pending.get(b.path) ?? [];
    items.unshift(b);
    this.pending.set(b.path, items);
    this.pendingCount++;
  }

  private providerDown(why: string, held = false): void {
    this.lastError = why;
    const was = this.unavailable;
    this.unavailable = true;
    clearTimer(this.retryTimer);
    this.retryTimer = null;
    if (held) {
      // The owner stopped it: nothing is tried until asked (build_embeddings, the settings).
      this.log("info", `Embeddings unavailable: ${why}`);
      this.emitProgress(true);
      return;
    }
    if (!was) this.log("warn", `Embeddings unavailable: the embedding provider (${this.deps.embedder.provider}) failed: ${why}; trying again in ${Math.round(this.retryMs / 1000)} s.`);
    this.emitProgress(true);
    this.retryTimer = setTimer(() => {
      this.retryTimer = null;
      this.unavailable = false;
      this.kick();
    }, this.retryMs);
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
  }

  /** The provider answered: the next failure waits the shortest time again, and the last one is over. */
  private providerUp(): void {
    this.retryMs = this.opts.retryAfterMs;
    this.lastError = null;
    if (this.unavailable) {
      // A query got an answer while the worker waited: the provider is back, the build goes on now.
      clearTimer(this.retryTimer);
      this.retryTimer = null;
      this.unavailable = false;
      this.kick();
    }
  }

  /** Chunks the next queued note and queues its chunks that have no vector. */
  private async indexNextNote(): Promise<boolean> {
    const port = this.deps.port;
    const next = this.queue.values().next();
    if (next.done) {
      const g = this.gone.values().next();
      if (g.done) return false;
      this.gone.delete(g.value);
      // Still gone (it may have come back meanwhile, then it is queued again).
      if (!port.stat(g.value) || !isNotePath(g.value) || this.deps.policy.isHidden(g.value)) {
        this.dropPending(g.value);
        if (this.index.removeDoc(g.value)) this.files.markDirty(g.value);
      }
      return true;
    }
    const path = next.value;
    this.queue.delete(path);
    const st = port.stat(path);
    if (!st || !isNotePath(path) || this.deps.policy.isHidden(path)) {
      this.gone.add(path);
      return true;
    }
    this.dropPending(path);
    const read = await readNoteForIndex(port, path, st.size, this.opts.maxNoteBytes);
    if ("skip" in read) {
      if (this.index.removeDoc(path)) this.files.markDirty(path);
      return true;
    }
    const meta = port.getMetadata(path);
    const title = basenameOf(path);
    // Cut in steps, as the keyword indexer does (a note near the size limit took 40–120 ms in one go).
    const cut = await chunkNoteSliced(path, read.text, meta, { maxWords: this.opts.chunkWords }, async () => {
      if (this.clock.used()) await this.clock.next();
    });
    const chunks = cut.map((c) => {
      const text = embedText(title, c.headingPath, c.text, this.opts.maxChunkChars);
      return { hash: hashText(text), heading: c.heading, lineStart: c.lineStart, lineEnd: c.lineEnd, text };
    });
    const todo = this.index.setDoc(path, st.mtime, st.size, chunks, filterTags(meta), meta?.frontmatter ?? {});
    this.files.markDirty(path);
    const items: Pending[] = [];
    for (const ord of todo) {
      const c = chunks[ord];
      if (!this.refused.has(c.hash)) items.push({ path, ordinal: ord, hash: c.hash, text: c.text });
    }
    if (items.length) {
      this.pending.set(path, items);
      this.pendingCount += items.length;
    }
    if (this.clock.used()) {
      this.emitProgress(false);
      await this.clock.next();
    }
    return true;
  }

  private dropPending(path: string): void {
    const items = this.pending.get(path);
    if (items) {
      this.pendingCount -= items.length;
      this.pending.delete(path);
    }
  }

  private async persistStep(): Promise<boolean> {
    if (!this.persistRequested) return false;
    this.persistRequested = false;
    await this.persist();
    return true;
  }

  /** Saves the changed segments; a failure is reported (once while it recurs, and as `save_error`), not thrown. */
  private async persist(): Promise<void> {
    this.lastPersist = this.clock.sched.now();
    if (this.index.dim === 0) return;
    let failed: string | null;
    try {
      failed = await this.files.save(this.index);
    } catch (e) {
      failed = errText(e);
    }
    if (failed === null) {
      if (this.saveError !== null) {
        this.log("info", `Embeddings saved (after ${this.saveFailures} failed ${this.saveFailures === 1 ? "try" : "tries"}).`);
      }
      this.saveError = null;
      this.saveFailures = 0;
      return;
    }
    this.saveFailures++;
    const msg = `Could not save the embeddings: ${failed}`;
    if (msg !== this.saveError) this.log("error", `${msg}. Semantic search still works; it is tried again later, and until it is saved a restart embeds the changed notes again.`);
    else this.log("debug", `${msg} (${this.saveFailures} times in a row)`);
    this.saveError = msg;
  }

  /** A save after a failed one: not at once (it would fail again, in a loop) but after a second, doubled per failure. */
  private persistLater(): void {
    if (this.saveTimer || this.stopping) return;
    this.saveTimer = setTimer(
      () => {
        this.saveTimer = null;
        this.persistRequested = true;
        if (!this.unavailable) this.kick();
      },
      Math.min(5 * 60_000, 1000 * 2 ** Math.min(this.saveFailures - 1, 20)),
    );
  }

  // ---- queries ----

  /** A query's vector (throws EmbedderError when the provider fails). */
  async embedQuery(text: string): Promise<Float32Array> {
    let v: Float32Array;
    try {
      [v] = await this.deps.embedder.embed([text], "query");
    } catch (err) {
      // The same story as the build's: a provider down for a query is down (state unavailable, why, retried).
      if (!(err instanceof EmbedderError) || err.retryable) this.providerDown(errText(err), err instanceof EmbedderError && err.held);
      throw err;
    }
    this.providerUp();
    return normalize(v);
  }

  /** The `k` chunks nearest to `vector`, best first. */
  nearest(vector: Float32Array, k: number, filter: ScanFilter = {}): ChunkScore[] {
    if (!this.ready || vector.length !== this.index.dim) return [];
    return this.index.search(vector, k, filter);
  }

  /** A note's vector (the mean of its chunks', or one chunk's), null when it has none yet. */
  noteVector(path: string, ordinal?: number): Float32Array | null {
    return this.index.noteVector(path, ordinal);
  }

  chunksOf(path: string): readonly { heading: string; lineStart: number; lineEnd: number; embedded: boolean }[] | null {
    const doc = this.index.docs.get(path);
    return doc ? doc.chunks.map((c) => ({ heading: c.heading, lineStart: c.lineStart, lineEnd: c.lineEnd, embedded: c.slot >= 0 })) : null;
  }

  status(): EmbeddingsStatus {
    const e = this.deps.embedder;
    const busy = this.queue.size > 0 || this.gone.size > 0 || this.pendingCount > 0 || this.inFlight > 0 || this.reconcilePending;
    const download = e.download?.() ?? null;
    const state: EmbeddingsState = this.loading ? "loading" : this.unavailable ? "unavailable" : download ? "downloading" : busy ? "building" : "ready";
    return {
      provider: e.provider,
      model: e.model,
      dimension: this.index.dim || e.dimension(),
      state,
      chunks_embedded: this.index.embedded,
      chunks_total: this.index.chunkCount,
      counting: this.reconcilePending || this.queue.size > 0,
      notes_queued: this.queue.size,
      chunks_queued: this.pendingCount,
      chunks_refused: this.refused.size,
      refused_reason: this.refused.size ? this.refusedReason : null,
      last_error: state === "unavailable" ? (this.lastError ?? "no answer from the provider") : null,
      save_error: this.saveError,
      download: state === "downloading" ? download : null,
    };
  }

  /** The saved vectors are loaded (until then a semantic answer has none of them). A field: checked on every call. */
  get loaded(): boolean {
    return !this.loading;
  }

  /** Resolves when the saved vectors are loaded (true), or false when `timeoutMs` passed or `signal` aborted first. */
  whenLoaded(timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    return this.loadWaiters.wait(timeoutMs, () => this.loading && !this.stopping, signal).then(() => !this.loading);
  }

  hasPendingWork(): boolean {
    return (this.loading && !this.stopping) || this.queue.size > 0 || this.gone.size > 0 || this.pendingCount > 0 || this.reconcilePending || this.worker.busy || this.debounceTimer !== null;
  }

  waitForIdle(timeoutMs: number): Promise<boolean> {
    return this.idle.wait(timeoutMs, () => this.hasPendingWork());
  }

  /**
   * Converges to the current notes; `force` discards every vector and embeds everything again, the
   * vectors' length detected anew from the model's first answer (a model changed behind the same name).
   */
  rebuild(force: boolean): void {
    if (force) {
      this.deps.embedder.resetDimension?.();
      this.index = new VectorIndex(0);
      this.pending.clear();
      this.pendingCount = 0;
      this.refused.clear();
      this.files.markAllDirty();
    }
    if (this.unavailable) {
      // The user asked: try the provider now rather than at the end of the wait.
      clearTimer(this.retryTimer);
      this.retryTimer = null;
      this.unavailable = false;
    }
    this.reconcilePending = true;
    this.kick();
  }

  /** Stops the model's download under way (true when there was one); state unavailable until asked again (rebuild). */
  cancelDownload(): boolean {
    return this.deps.embedder.cancelDownload?.() ?? false;
  }

  onProgress(cb: (s: EmbeddingsStatus) => void): () => void {
    return this.progress.add(cb);
  }

  private emitProgress(force: boolean): void {
    this.progress.emit(force, () => this.status());
  }

  async close(): Promise<void> {
    this.stopping = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    clearTimer(this.debounceTimer);
    clearTimer(this.retryTimer);
    clearTimer(this.saveTimer);
    this.debounceTimer = null;
    this.retryTimer = null;
    this.saveTimer = null;
    await this.worker.stop();
    if (this.ready && this.files.dirty.size > 0) await this.persist();
    this.ready = false;
    try {
      await this.deps.embedder.close?.();
    } catch (e) {
      this.log("warn", `Closing the embedding provider failed: ${errText(e)}`);
    }
    this.idle.notify();
    this.loadWaiters.notify();
    this.progress.clear();
  }
}

/** What the model reads for a chunk: the note's title and heading path, then the text (cut at `max` characters). */
export function embedText(title: string, headingPath: string[], text: string, max: number): string {
  const head = [title, ...headingPath].join(" > ");
  const body = text.length > max ? text.slice(0, max) : text;
  return `${head}\n${body}`;
}

const megabytes = (n: number) => (n / 1e6).toFixed(n < 10e6 ? 1 : 0);

/** How far embedding has come, in one sentence: the words of the tools, the status bar's tooltip and the console. */
export function describeEmbeddings(s: EmbeddingsStatus): string {
  const of = s.counting ? `${s.chunks_embedded} sections embedded of ${s.chunks_total} found so far (notes still being counted)` : `${s.chunks_embedded} of ${s.chunks_total} sections embedded`;
  const what = `${s.provider} model ${s.model}${s.dimension ? `, ${s.dimension} dimensions` : ""}`;
  const refused =
    (s.chunks_refused ? `; ${s.chunks_refused} sections left out until they change (${trimStop(s.refused_reason ?? "a bad answer from the model")})` : "") +
    (s.save_error ? `; ${trimStop(s.save_error)} (searches still work; tried again later)` : "");
  switch (s.state) {
    case "loading":
      return `Embeddings loading: reading the saved vectors (${what}).`;
    case "downloading": {
      const d = s.download;
      const how = d ? `${megabytes(d.bytes_done)} of ${megabytes(d.bytes_total)} MB, file ${d.files_done + 1} of ${d.files_total} (${d.file})` : "starting";
      return `Embeddings downloading: the model ${s.model}, once (${how}); embedding starts when it is there and checked.`;
    }
    case "building":
      return `Embeddings building: ${of} (${what})${refused}.`;
    case "ready":
      return `Embeddings ready: ${s.chunks_embedded} sections embedded (${what})${refused}.`;
    case "unavailable":
      return `Embeddings unavailable: ${trimStop(s.last_error ?? "no answer from the provider")}; ${of} (${what}).`;
  }
}

/** The same, a few words (the status bar). */
export function shortEmbeddings(s: EmbeddingsStatus): string {
  switch (s.state) {
    case "loading":
      return "embeddings loading";
    case "downloading":
      return s.download ? `downloading the model ${megabytes(s.download.bytes_done)}/${megabytes(s.download.bytes_total)} MB` : "downloading the model";
    case "building":
      return s.counting ? `embedding ${s.chunks_embedded} (counting)` : `embedding ${s.chunks_embedded}/${s.chunks_total}`;
    case "ready":
      return "embeddings ready";
    case "unavailable":
      return "embeddings unavailable";
  }
}

/** A message without its final full stop, to go on inside a sentence ("… setting; these are …"). */
export function trimStop(msg: string): string {
  return msg.trim().replace(/[.\u3002]+$/, "");
}

/** `_meta.embeddings` of every answer that uses embeddings: the same state and numbers as embeddings_status. */
export function embeddingsMeta(s: EmbeddingsStatus, error?: string | null): Record<string, unknown> {
  return {
    state: s.state,
    chunks_embedded: s.chunks_embedded,
    chunks_total: s.chunks_total,
    counting: s.counting,
    last_error: s.last_error,
    ...(s.download ? { download: s.download } : {}),
    ...(error ? { error } : {}),
  };
}
