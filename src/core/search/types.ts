/**
 * The search's types: the `SearchService` the tools call, its requests, hits and status, and its
 * options. Types and defaults only.
 */
import type { AccessPolicy } from "../policy";
import type { StateStore } from "../state";
import type { VaultPort } from "../vault";

export type SearchLanguage = "en" | "none";

export interface SearchOptions {
  /** Notes larger than this (bytes) are skipped with a recorded reason. Default 2 MB. */
  maxNoteBytes: number;
  /** Stemmer: "en" (Porter2) or "none". Changing it rebuilds the index once. */
  language: SearchLanguage;
  /** Vault events are batched for this long before indexing (ms). */
  debounceMs: number;
  /** Background work runs in slices of about this many ms, then yields to the event loop. */
  sliceMs: number;
  /**
   * A search that has run this long (ms) gives the event loop back between its steps (a common
   * word at 100k notes scores for 40–70 ms; one step is a few ms): no search blocks the host for long.
   * 10 rather than 20: a warm server's slowest `/health` answers while it searched fell from 24–29 to
   * 19–24 ms at 100k notes, search p50 the same (two pairs side by side).
   */
  searchSliceMs: number;
  /** The database is exported and written this long after the last change (ms). */
  persistDebounceMs: number;
  /** Soft cap of words per chunk (sections longer than this are split further). */
  chunkWords: number;
  /**
   * The saved index is split in a power of two of segments, about this many notes each (at most
   * 256 segments): a 2-note vault saves 1, 10k notes 32, 100k notes 256.
   */
  notesPerSegment: number;
}

export const DEFAULT_SEARCH_OPTIONS: SearchOptions = {
  maxNoteBytes: 2 * 1024 * 1024,
  language: "en",
  debounceMs: 40,
  sliceMs: 8,
  searchSliceMs: 10,
  persistDebounceMs: 5000,
  chunkWords: 300,
  notesPerSegment: 400,
};

/** How background work gives the event loop back. Injectable so tests can count yields. */
export interface Scheduler {
  now(): number;
  yield(): Promise<void>;
}

export interface SearchServiceDeps {
  port: VaultPort;
  policy: AccessPolicy;
  store: StateStore;
  /** sql.js WASM bytes, started only to read a file our own reader declines (see readBlobs). */
  sqlWasm: Uint8Array;
  log?: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
  options?: Partial<SearchOptions>;
  /** Defaults to the host's `setImmediate` (see timers.ts `soon`) and `performance.now()`. */
  scheduler?: Scheduler;
  /** State file name (default `search-index.sqlite`). */
  fileName?: string;
}

export interface SearchRequest {
  query: string;
  limit: number;
  /** Folder prefix ("" or absent: whole vault). */
  folder?: string;
  /** Frontmatter field → value; lists match when they contain the value (case-insensitive); `tags` also counts inline tags and nested tags. */
  filters?: Record<string, string | number | boolean>;
  chunksPerFile: number;
  /** Words per snippet, centred on the matches; 0 = the whole chunk. */
  snippetWords: number;
}

export interface SearchSection {
  heading: string;
  content: string;
  score: number;
  line_start: number;
  line_end: number;
}

export interface SearchHit {
  path: string;
  title: string;
  folder: string;
  score: number;
  frontmatter: Record<string, unknown>;
  sections: SearchSection[];
  /** A note with only some of the query's words: the ones it lacks (as the index holds them: stemmed, lower case). */
  missing?: string[];
}

export interface SearchResponse {
  hits: SearchHit[];
  /** Notes that matched every word, or (relaxed) some of them. */
  total_files: number;
  /** True when no note matched every term and the results match only some of them. */
  relaxed: boolean;
  /** Notes with only some of the words, returned after those with all of them because these were fewer than the limit. */
  partial_files?: number;
}

export interface IndexStatus {
  state: "queryable" | "building" | "failed";
  /**
   * Whether the index covers the vault yet (see `SearchService.ready`): `loading` while the saved
   * index is read, `checking` while it is compared with the notes on disk, `indexing` while notes it
   * does not hold yet (all of them on a first build) are indexed, then `ready` for good; later
   * changes are ordinary pending work (`queue_depth`), not a loading index.
   */
  readiness: "loading" | "checking" | "indexing" | "ready";
  /** Notes the index holds (or skipped on purpose) of the vault's notes: the loading progress. */
  notes_covered: number;
  notes_total: number;
  documents_indexed: number;
  documents_total: number;
  queue_depth: number;
  skipped: { path: string; reason: string }[];
  last_error: string | null;
}

export interface SearchService {
  /** Opens/reloads the database, then reconciles and builds in the background. Resolves once queryable or building. */
  start(): Promise<void>;
  /**
   * The index covers the vault: the saved index is loaded and compared with the notes on disk, and
   * every note it did not hold (all of them on a first build) is indexed or skipped. Until then an
   * answer may lack notes the vault has (a search finds nothing in notes not read yet); after, it
   * stays true (later changes are pending work, not loading). A field: checked on every search.
   */
  readonly ready: boolean;
  /** Resolves when `ready` (true), or false when `timeoutMs` passed or `signal` aborted first. */
  whenReady(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /**
   * Resolves once the start no longer needs the event loop more than other work does: the first
   * reconciliation is done (the index covers the vault, or it has notes to index, which needs
   * their metadata), or it failed or stopped. A host reads the vault's metadata after it (see
   * `VaultPort.deferMetadata`), so that a saved index answers first.
   */
  firstPass?(): Promise<void>;
  /**
   * The answer: ranked from the index, then each hit's sections cut from its note as read now (the
   * index holds no texts), the hits' notes read at once. Throws (rejects) `invalid_argument` for a query too large.
   */
  search(req: SearchRequest): Promise<SearchResponse>;
  /**
   * The paths `search` returns for the same request, in the same order, without building sections or
   * snippets (cheaper, and synchronous: no note is read); `total` is its `total_files`. Optional:
   * callers fall back to `search`.
   */
  matchPaths?(req: SearchRequest): { paths: string[]; total: number };
  status(): IndexStatus;
  /** Queued events, a reconciliation or a build in progress. */
  hasPendingWork(): boolean;
  /** True when idle (no pending work, and no background work either) before the timeout. */
  waitForIdle(timeoutMs: number): Promise<boolean>;
  /**
   * True when no work is pending (`hasPendingWork` false) before the timeout: background work that
   * changes no answer (decoding, warming up, saving) is not waited for. Absent: `waitForIdle`.
   */
  waitForPending?(timeoutMs: number, signal?: AbortSignal): Promise<boolean>;
  /** Queues a full reconciliation and returns at once. */
  reindex(): void;
  onProgress(cb: (s: IndexStatus) => void): () => void;
  /** Stops background work and persists. */
  close(): Promise<void>;
}

export interface Chunk {
  path: string;
  /** 0-based position of the chunk in its note. */
  ordinal: number;
  /** The heading path joined with " > " ("" before the first heading). */
  heading: string;
  headingPath: string[];
  /** 1-based, inclusive, lines in the file (frontmatter counted). */
  lineStart: number;
  lineEnd: number;
  text: string;
  title: string;
  aliases: string[];
  /** Tags without `#` (frontmatter and inline), as written. */
  tags: string[];
  /** The chunk's heading path plus headings inside its text. */
  headings: string[];
}

export interface ChunkOptions {
  /** Soft cap of words per chunk (default 300). */
  maxWords?: number;
}

export interface TokenizeOptions {
  language?: SearchLanguage;
}

export type QueryItem =
  | { kind: "term"; term: string; prefix: boolean }
  | {
      kind: "phrase";
      terms: string[];
      /** When no chunk holds the phrase: chunks holding at least `min` of these terms match (CJK sentences). */
      loose?: { terms: string[]; min: number };
    };

export interface ParsedQuery {
  /** AND of clauses; each clause is an OR of items. */
  clauses: QueryItem[][];
  /** Notes matching any of these are removed. */
  exclude: QueryItem[];
}
