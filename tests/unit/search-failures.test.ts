/**
 * A failure of the search service's background work that recurs (a store that cannot be written, a
 * save that throws, a step that throws) is reported once — logged, and shown as `last_error` — and
 * not retried every few seconds for as long as the server runs; searches and indexing go on; when it
 * stops failing, that is said and `last_error` is cleared.
 */
import { afterEach, describe, expect, jest, test } from "@jest/globals";
import { MemoryVault } from "../../src/core/memory-vault";
import { MemoryStateStore } from "../../src/core/state";
import { AccessPolicy } from "../../src/core/policy";
import { InvertedIndex } from "../../src/core/search/keyword/inverted-index";
import { HashingEmbedder } from "../../src/core/search/vector/hashing-embedder";
import { SemanticService } from "../../src/core/search/vector/semantic-service";
import { INDEX_FILE, makeSearch, searchPaths } from "../support/search-service";

const notes = { "A.md": "Apples and pears.", "B.md": "Bread and butter.", "C.md": "Cheese on toast." };

/** A store whose writes fail while `failing` is set. */
class FlakyStore extends MemoryStateStore {
  failing = true;
  writes = 0;
  override write(name: string, data: Uint8Array): Promise<void> {
    this.writes++;
    if (this.failing) return Promise.reject(new Error("EACCES: permission denied"));
    return super.write(name, data);
  }
}

async function until(cond: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}

afterEach(() => {
  jest.restoreAllMocks();
});

describe("failures of the search service's background work", () => {
  test("a store that cannot be written: reported once, retried less and less often, searches and indexing go on, recovery said", async () => {
    const store = new FlakyStore();
    const vault = new MemoryVault(notes);
    const { svc, logs } = makeSearch(vault, store);
    await svc.start();
    // Three saves fail (the debounce of 20 ms doubled each time).
    await until(() => logs.filter((l) => /save failed again/.test(l)).length >= 2);
    expect(logs.filter((l) => /^(error|warn):/.test(l))).toEqual([expect.stringMatching(/^error: Could not save the search index: could not write it to \(memory\): EACCES: permission denied\. Searches still work/)]);
    const st = svc.status();
    expect(st.state).toBe("queryable");
    expect(st.last_error).toMatch(/^Could not save the search index: could not write it to \(memory\): EACCES/);
    expect(await searchPaths(svc, "cheese")).toEqual(["C.md"]);
    // New notes are indexed meanwhile.
    vault.write("D.md", "Dumplings with dill.");
    await until(async () => (await searchPaths(svc, "dumplings")).length > 0);
    expect(await searchPaths(svc, "dumplings")).toEqual(["D.md"]);
    // The store works again: the next try saves, and says so.
    store.failing = false;
    await until(() => store.files.has(INDEX_FILE), 30_000);
    await until(() => logs.some((l) => /^info: Search index saved \(after \d+ failed tries\)/.test(l)));
    expect(svc.status().last_error).toBeNull();
    await svc.close();
    expect(logs.filter((l) => /^(error|warn):/.test(l))).toHaveLength(1);
  });

  test("a save that throws while serializing: reported once, leaves the index dirty, saved once it works", async () => {
    const store = new MemoryStateStore();
    const vault = new MemoryVault(notes);
    const dictBytes = jest.spyOn(InvertedIndex.prototype, "dictWriter").mockImplementation(() => {
      throw new TypeError("e.charCodeAt is not a function");
    });
    const { svc, logs } = makeSearch(vault, store);
    await svc.start();
    await until(() => logs.filter((l) => /save failed again/.test(l)).length >= 2);
    expect(logs.filter((l) => /^(error|warn):/.test(l))).toEqual([expect.stringMatching(/^error: Could not save the search index: e\.charCodeAt is not a function\./)]);
    expect(svc.status()).toMatchObject({ state: "queryable", last_error: expect.stringMatching(/e\.charCodeAt is not a function/) });
    expect(await searchPaths(svc, "butter")).toEqual(["B.md"]);
    expect(store.files.has(INDEX_FILE)).toBe(false);
    dictBytes.mockRestore();
    await until(() => store.files.has(INDEX_FILE), 30_000);
    await svc.close();
    // Saved whole: a restart restores every note without indexing any again.
    const again = makeSearch(vault, store);
    await again.svc.start();
    expect(await again.svc.waitForIdle(10_000)).toBe(true);
    expect(again.logs).toContain(`debug: Search reconcile: 3 notes, 0 to (re)index.`);
    expect(await searchPaths(again.svc, "butter")).toEqual(["B.md"]);
    await again.svc.close();
  });

  test("a step that keeps throwing is logged once and tried again later, not in a loop", async () => {
    const vault = new MemoryVault(notes);
    let calls = 0;
    jest.spyOn(InvertedIndex.prototype, "needsCompaction").mockImplementation(() => {
      calls++;
      throw new Error("compaction broke");
    });
    const { svc, logs } = makeSearch(vault);
    await svc.start();
    await until(() => calls >= 2);
    const at2 = calls;
    // The second try comes a second after the first; the third two seconds after that.
    await new Promise((r) => setTimeout(r, 300));
    expect(calls).toBe(at2);
    expect(logs.filter((l) => /^(error|warn):/.test(l))).toEqual(["error: Search indexing failed: compaction broke"]);
    expect(logs.filter((l) => /failed again \(2 times in a row\): compaction broke/.test(l))).toHaveLength(1);
    expect(svc.status().last_error).toBe("compaction broke");
    expect(await searchPaths(svc, "apples")).toEqual(["A.md"]);
    jest.restoreAllMocks();
    await until(() => logs.some((l) => /^info: Search indexing works again/.test(l)), 10_000);
    expect(svc.status()).toMatchObject({ state: "queryable", last_error: null });
    await svc.close();
  });

  test("embeddings that cannot be saved: reported once, tried again later (not in a loop), saved once the store works", async () => {
    const store = new FlakyStore();
    const logs: string[] = [];
    const svc = new SemanticService({
      port: new MemoryVault(notes),
      policy: new AccessPolicy({ configDir: ".obsidian" }),
      store,
      embedder: new HashingEmbedder(32),
      log: (l, m) => logs.push(`${l}: ${m}`),
      options: { debounceMs: 5, persistEveryMs: 0, retryAfterMs: 20 },
    });
    await svc.start();
    await until(() => logs.some((l) => /^error: Could not save the embeddings/.test(l)));
    // The first retry comes a second after the failure: meanwhile nothing writes again.
    const afterFirst = store.writes;
    await new Promise((r) => setTimeout(r, 300));
    expect(store.writes).toBe(afterFirst);
    await until(() => logs.some((l) => /times in a row/.test(l)));
    expect(logs.filter((l) => /^(error|warn):/.test(l))).toEqual([expect.stringMatching(/^error: Could not save the embeddings: could not write them to \(memory\): EACCES: permission denied\. Semantic search still works/)]);
    // Not an unavailable provider: the state stays what it is, and save_error says why nothing is saved.
    expect(svc.status().save_error).toMatch(/^Could not save the embeddings/);
    expect(svc.status().last_error).toBeNull();
    store.failing = false;
    await until(() => store.files.size > 0, 20_000);
    await until(() => logs.some((l) => /^info: Embeddings saved \(after \d+ failed tr/.test(l)));
    expect(svc.status().save_error).toBeNull();
    await svc.close();
  });
});
