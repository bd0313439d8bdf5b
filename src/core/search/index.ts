/**
 * Search, as the rest of the core sees it: the service the tools call and the pieces other modules
 * reuse (tokenizer, chunker, query parser). Today one engine, keyword (keyword/: BM25 over an
 * in-memory inverted index saved through the StateStore), kept current from vault events in
 * background slices (slices.ts); an engine's internals are not exported.
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
export { createSearchService, defaultScheduler } from "./service";
export { hashText } from "../hash";
export { chunkNote, countWords } from "./chunk";
export { tokenize, forEachToken, foldWord, TOKENIZER_VERSION } from "./tokenize";
export { stemEnglish } from "./stemmer";
export { parseQuery, positiveTerms } from "./query";
export { FIELD_WEIGHTS } from "./keyword/builder";
export { matchesFilters } from "./keyword/score";
export { snippet } from "./keyword/snippet";
export { SCHEMA_VERSION } from "./db";
