/**
 * Keyword search: an in-memory inverted index (BM25 with field weights, one hit per note) persisted in
 * a sql.js database through the StateStore, kept current from vault events, built in background slices.
 */
export type {
  Chunk,
  ChunkOptions,
  IndexStatus,
  ParsedQuery,
  QueryItem,
  Scheduler,
  SearchHit,
  SearchLanguage,
  SearchOptions,
  SearchRequest,
  SearchResponse,
  SearchSection,
  SearchService,
  SearchServiceDeps,
  TokenizeOptions,
} from "./types";
export { DEFAULT_SEARCH_OPTIONS } from "./types";
export { createSearchService, defaultScheduler, hashText } from "./service";
export { chunkNote, countWords } from "./chunk";
export { tokenize, forEachToken, foldWord, TOKENIZER_VERSION } from "./tokenize";
export { stemEnglish } from "./stemmer";
export { parseQuery, positiveTerms } from "./query";
export { FIELD_WEIGHTS } from "./keyword/builder";
export { matchesFilters } from "./keyword/score";
export { snippet } from "./keyword/snippet";
export { SCHEMA_VERSION } from "./db";
