/**
 * An index saved by this format's earlier code loads in this one: `tests/fixtures/saved-index.bin.gz`
 * holds the files saved for a generated vault (written anew by `npm run fixture:saved-index` only when
 * the format changes on purpose: last at tokenizer version 3, unspaced scripts cut into words,
 * issue #31; the format itself last changed at v10, frontmatter saved as JSON text and each note's
 * headings as one string, issue #32). Loaded, it answers as a fresh build does without reading
 * a note while loading, and this version saves the same rows for the same vault (each note's hash
 * as hash53's number since, where the fixture has hashText's string: read as the same number). An index of the
 * previous tokenizer (stemmed words) and ones of earlier formats (v8, chunk texts in files of their
 * own; v9) are built again once.
 */
import { describe, expect, jest, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { hash53OfHashText } from "../../src/core/hash";
import { readBlobs } from "../../src/core/search/db";
import { MemoryVault } from "../../src/core/memory-vault";
import { MemoryStateStore } from "../../src/core/state";
import { Carver, ScratchChunks } from "../../src/core/search/keyword/carve";
import { SAVED_INDEX_FIXTURE, SAVED_INDEX_QUERIES, savedIndexVault, unpackFiles } from "../support/saved-index-fixture";
import { searchReq, startedSearch } from "../support/search-service";
import type { SearchService } from "../../src/core/search";

function fixtureStore(file = SAVED_INDEX_FIXTURE): MemoryStateStore {
  const store = new MemoryStateStore();
  for (const [name, bytes] of unpackFiles(new Uint8Array(gunzipSync(readFileSync(file))))) store.files.set(name, bytes);
  return store;
}

/** A store that reads into the room it is given, like the headless one; counts the files read so. */
class ReadIntoStore extends MemoryStateStore {
  intoRoom = 0;
  async readInto(name: string, room: (size: number) => Uint8Array | undefined): Promise<Uint8Array | null> {
    const bytes = await this.read(name);
    if (!bytes) return null;
    const into = room(bytes.length);
    if (!into) return bytes;
    into.set(bytes);
    this.intoRoom++;
    return into;
  }
}

/** The files the code before tokenizer version 2 (words stemmed in the index, issue #31) saved for the same vault. */
const STEMMED_FIXTURE = SAVED_INDEX_FIXTURE.replace(/saved-index\.bin\.gz$/, "saved-index-tokenizer-v1.bin.gz");
/** The files the code before tokenizer version 3 (Thai, Lao, Khmer and Myanmar phrases one term each, marks off every letter) saved for the same vault. */
const TOKENIZER_V2_FIXTURE = SAVED_INDEX_FIXTURE.replace(/saved-index\.bin\.gz$/, "saved-index-tokenizer-v2.bin.gz");
/** The files index format v8 saved for the same vault: each segment's chunk texts in a `-NN-text.sqlite` file beside it. */
const TEXTS_FIXTURE = SAVED_INDEX_FIXTURE.replace(/saved-index\.bin\.gz$/, "saved-index-v8-texts.bin.gz");
/** The files index format v9 saved for the same vault (frontmatter as objects, headings as arrays). */
const V9_FIXTURE = SAVED_INDEX_FIXTURE.replace(/saved-index\.bin\.gz$/, "saved-index-v9.bin.gz");

/** The generated vault, counting the notes read from it. */
function countingVault(): { vault: MemoryVault; reads: () => number } {
  const vault = new MemoryVault(savedIndexVault());
  let n = 0;
  const read = vault.read.bind(vault);
  vault.read = (p: string) => {
    n++;
    return read(p);
  };
  return { vault, reads: () => n };
}

const answers = (svc: SearchService) => Promise.all(SAVED_INDEX_QUERIES.map((q) => svc.search(searchReq(q, { limit: 20, snippetWords: 12 }))));

/**
 * Starts on `store` holding an earlier format's files: the index is built again (every note read),
 * `afterRebuild` checks the store, it answers as a fresh build, and the next start loads what it saved.
 */
async function rebuiltOnce(store: MemoryStateStore, afterRebuild: () => void = () => {}): Promise<void> {
  const { vault, reads } = countingVault();
  const loaded = await startedSearch(vault, store);
  expect(loaded.logs.some((l) => /format changed/.test(l))).toBe(true);
  expect(reads()).toBeGreaterThanOrEqual(vault.listFiles().filter((f) => f.path.endsWith(".md")).length);
  afterRebuild();
  const fresh = await startedSearch(new MemoryVault(savedIndexVault()));
  expect(await answers(loaded.svc)).toEqual(await answers(fresh.svc));
  await loaded.svc.close();
  await fresh.svc.close();
  const again = await startedSearch(new MemoryVault(savedIndexVault()), store);
  expect(again.logs.filter((l) => /rebuild|format changed/i.test(l))).toEqual([]);
  await again.svc.close();
}

describe("an index saved by an earlier version", () => {
  test("loads without reading a note and answers as a fresh build", async () => {
    const store = fixtureStore();
    expect(store.files.size).toBe(33);
    const { vault, reads } = countingVault();
    const loaded = await startedSearch(vault, store);
    expect(loaded.logs.filter((l) => /rebuild|unusable|indexed again|format changed/i.test(l))).toEqual([]);
    expect(reads()).toBe(0);
    const fresh = await startedSearch(new MemoryVault(savedIndexVault()));
    const expected = await answers(fresh.svc);
    expect(expected.map((r) => r.total_files).every((n) => n > 0)).toBe(true);
    expect(await answers(loaded.svc)).toEqual(expected);
    await loaded.svc.close();
    await fresh.svc.close();
  });

  // Chunks of 64 KB: a few segments' files fill one, so chunks are reused many times
  // during the load. A blob the index keeps, left in scratch space, would be overwritten by a later
  // segment's file and the answers (or the load) would differ. 32 segments: the encoded postings go
  // to carved room of their own, the term sequences and the notes' numbers to other carved room; 16: nothing is carved.
  // Once loaded and every list decoded, the load's scratch chunks and the chunks that kept the encoded
  // postings are given back at once (detached: freeBuffers), not left to V8's next full collection; a
  // piece the index still used would then read as empty, and the answers would differ.
  test.each([32, 16])("loaded into reused scratch space (a store that reads into given room), %i segments, it answers as a fresh build", async (segments) => {
    const before = ScratchChunks.chunkBytes;
    ScratchChunks.chunkBytes = 64 << 10;
    // Spies call through: their results are the pieces handed out.
    const scratchTake = jest.spyOn(ScratchChunks.prototype, "take");
    const carverTake = jest.spyOn(Carver.prototype, "take");
    const buffers = (spy: typeof scratchTake | typeof carverTake) => new Set(spy.mock.results.map((r) => (r.value as Uint8Array | undefined)?.buffer).filter((b) => b !== undefined));
    try {
      const store = new ReadIntoStore();
      if (segments === 32) {
        for (const [name, bytes] of fixtureStore().files) store.files.set(name, bytes);
      } else {
        const files = savedIndexVault();
        const notes = Object.keys(files).filter((p) => p.endsWith(".md")).length;
        const saved = await startedSearch(new MemoryVault(files), store, { options: { notesPerSegment: Math.ceil(notes / segments) } });
        await saved.svc.close();
        store.intoRoom = 0;
      }
      expect([...store.files.keys()].length).toBe(segments + 1);
      const { vault, reads } = countingVault();
      const loaded = await startedSearch(vault, store);
      expect(loaded.logs.filter((l) => /rebuild|unusable|indexed again|format changed/i.test(l))).toEqual([]);
      expect(reads()).toBe(0);
      // Fewer than 32 segment files make too little garbage to carve (index-files.ts, SCRATCH_SEGMENTS).
      expect(store.intoRoom).toBe(segments >= 32 ? segments : 0);
      if (segments >= 32) {
        const scratch = buffers(scratchTake);
        expect(scratch.size).toBeGreaterThan(1);
        for (const b of scratch) expect(b.byteLength).toBe(0);
        // Two carvers: the loading's own (encoded postings, term headers), given back, and the one
        // for what the notes keep (term sequences, numbers), kept.
        const byCarver = new Map<unknown, Set<ArrayBufferLike>>();
        carverTake.mock.results.forEach((r, i) => {
          const b = (r.value as Uint8Array | undefined)?.buffer;
          const c = carverTake.mock.contexts[i];
          if (b) byCarver.set(c, (byCarver.get(c) ?? new Set()).add(b));
        });
        expect(byCarver.size).toBe(2);
        const [given, kept] = [...byCarver.values()].sort((a, b) => [...a].filter((x) => x.byteLength > 0).length - [...b].filter((x) => x.byteLength > 0).length);
        for (const b of given) expect(b.byteLength).toBe(0);
        for (const b of kept) expect(b.byteLength).toBeGreaterThan(0);
      }
      const fresh = await startedSearch(new MemoryVault(savedIndexVault()));
      expect(await answers(loaded.svc)).toEqual(await answers(fresh.svc));
      await loaded.svc.close();
      await fresh.svc.close();
    } finally {
      scratchTake.mockRestore();
      carverTake.mockRestore();
      ScratchChunks.chunkBytes = before;
    }
  });

  // With 64 KB scratch chunks (see carve.ts) a save reuses them many times over for its writers and
  // files: a file written from reused space must hold what one of its own would.
  test.each([
    ["33 MB", 0],
    ["64 KB", 64 << 10],
  ])("this version saves the same rows for the same vault (the stamp of the save aside; scratch chunks of %s)", async (_label, chunk) => {
    const before = ScratchChunks.chunkBytes;
    if (chunk) ScratchChunks.chunkBytes = chunk;
    try {
      await savesSameRows();
    } finally {
      ScratchChunks.chunkBytes = before;
    }
  });

  async function savesSameRows(): Promise<void> {
    const saved = fixtureStore();
    // The fixture was saved in 32 segments (before the layout grew with the vault): the same layout here.
    const files = savedIndexVault();
    const notes = Object.keys(files).filter((p) => p.endsWith(".md")).length;
    const fresh = await startedSearch(new MemoryVault(files), undefined, { options: { notesPerSegment: Math.ceil(notes / 32) } });
    await fresh.svc.close();
    expect([...fresh.store.files.keys()].sort()).toEqual([...saved.files.keys()].sort());
    for (const [name, bytes] of saved.files) {
      const was = readBlobs(bytes);
      const now = readBlobs(fresh.store.files.get(name)!);
      was.delete("gen");
      now.delete("gen");
      // The one change since the fixture was saved: each note's hash is saved as hash53's number,
      // where the fixture has hashText's string (loading reads it as the same number).
      const docs = was.get("docs");
      if (docs) {
        const rows = JSON.parse(new TextDecoder().decode(docs)) as { h: unknown }[];
        for (const r of rows) if (typeof r.h === "string") r.h = hash53OfHashText(r.h);
        was.set("docs", new TextEncoder().encode(JSON.stringify(rows)));
      }
      expect([name, now]).toEqual([name, was]);
    }
  }

  test("an index of stemmed words (tokenizer version 1) is built again once, then answers as a fresh build", async () => {
    const store = fixtureStore(STEMMED_FIXTURE);
    const { vault, reads } = countingVault();
    const loaded = await startedSearch(vault, store);
    expect(reads()).toBeGreaterThanOrEqual(vault.listFiles().filter((f) => f.path.endsWith(".md")).length);
    const fresh = await startedSearch(new MemoryVault(savedIndexVault()));
    expect(await answers(loaded.svc)).toEqual(await answers(fresh.svc));
    await loaded.svc.close();
    await fresh.svc.close();
  });

  test("an index of tokenizer version 2 is built again once, then answers as a fresh build and loads at the next start", async () => {
    await rebuiltOnce(fixtureStore(TOKENIZER_V2_FIXTURE));
  });

  test("an index with chunk texts (format v8) is built again once, its text files removed, then answers as a fresh build", async () => {
    const store = fixtureStore(TEXTS_FIXTURE);
    expect([...store.files.keys()].filter((n) => /-text\.sqlite$/.test(n)).length).toBe(32);
    await rebuiltOnce(store, () => expect([...store.files.keys()].filter((n) => /-text\.sqlite$/.test(n))).toEqual([]));
  });

  test("an index of format v9 is built again once, then answers as a fresh build and loads at the next start", async () => {
    await rebuiltOnce(fixtureStore(V9_FIXTURE));
  });
});
