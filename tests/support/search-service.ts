/** A keyword search service over a MemoryVault, as the search suites start it (short debounces, logs kept). */
import { expect } from "@jest/globals";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { createSearchService, type SearchRequest, type SearchService, type SearchServiceDeps } from "../../src/core/search";
import { MemoryVault } from "../../src/core/memory-vault";
import { AccessPolicy } from "../../src/core/policy";
import { MemoryStateStore } from "../../src/core/state";

export const INDEX_FILE = "search-index.sqlite";

export function makeSearch(vault: MemoryVault, store = new MemoryStateStore(), extra: Partial<SearchServiceDeps> = {}) {
  const logs: string[] = [];
  const svc = createSearchService({
    port: vault,
    policy: new AccessPolicy({ configDir: ".obsidian", hiddenFolders: ["Private"] }),
    store,
    sqlWasm,
    log: (l, m) => logs.push(`${l}: ${m}`),
    ...extra,
    options: { debounceMs: 5, persistDebounceMs: 20, ...extra.options },
  });
  return { svc, store, logs };
}

/** Started and idle. */
export async function startedSearch(vault: MemoryVault, store?: MemoryStateStore, extra?: Partial<SearchServiceDeps>) {
  const r = makeSearch(vault, store, extra);
  await r.svc.start();
  // A bound, not a measure: a build of a few MB beside another suite on a busy 2-core machine took over 10 s.
  expect(await r.svc.waitForIdle(25_000)).toBe(true);
  return r;
}

export const searchReq = (query: string, more: Partial<SearchRequest> = {}): SearchRequest => ({ query, limit: 10, chunksPerFile: 2, snippetWords: 0, ...more });
export const searchPaths = async (svc: SearchService, q: string, more: Partial<SearchRequest> = {}) => (await svc.search(searchReq(q, more))).hits.map((h) => h.path);
