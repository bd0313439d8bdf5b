/**
 * Packed posting lists (compaction.ts, postings.ts) against lists never laid out again: the same
 * notes added, replaced and removed in the same order, one index compacted (packed) at random
 * points, saved and loaded again at others, with a decoded-id cache too small to keep more than a
 * few lists; every search answers the same.
 */
import { afterAll, describe, expect, jest, test } from "@jest/globals";
import { hash53 } from "../../src/core/hash";
import { parseQuery } from "../../src/core/search";
import { chunkNote } from "../../src/core/search/chunk";
import { segmentOf as segmentOfIn } from "../../src/core/search/keyword/doc";
import { InvertedIndex } from "../../src/core/search/keyword/inverted-index";
import type { RestoredBlobs } from "../../src/core/search/keyword/persist";
import { PACKED_CACHE, clearPackedCache } from "../../src/core/search/keyword/postings";
import { mulberry32 as rng } from "../../src/core/random";
import { searchReq as req } from "../support/search-service";

const SEGMENTS = 32;
const budget = PACKED_CACHE.bytes;
afterAll(() => {
  PACKED_CACHE.bytes = budget;
  clearPackedCache();
});

// Words a vault holds, "constructor", "__proto__" and "toString" among them; a few very common.
const VOCAB = ["garden", "bread", "constructor", "__proto__", "toString", "river", "stone", "light", ...Array.from({ length: 60 }, (_, i) => `w${i}`)];
const word = (r: () => number) => VOCAB[Math.floor(r() ** 2 * VOCAB.length)];
function noteText(r: () => number): string {
  const parts: string[] = [];
  const sections = 1 + Math.floor(r() * 3);
  for (let s = 0; s < sections; s++) {
    parts.push(`## ${word(r)} ${word(r)}`);
    parts.push(Array.from({ length: 5 + Math.floor(r() * 60) }, () => word(r)).join(" "));
  }
  return parts.join("\n\n");
}

function add(index: InvertedIndex, path: string, text: string): void {
  const chunks = chunkNote(path, text, null, { maxWords: 40 });
  const b = index.docBuilder();
  for (const c of chunks) b.addChunk(c, "en");
  index.addDoc({ seg: segmentOfIn(path, SEGMENTS), path, mtime: 0, size: text.length, hash: hash53(text), frontmatter: {}, tags: [] }, chunks, b);
}

async function saveAndLoad(index: InvertedIndex, decode: boolean): Promise<InvertedIndex> {
  const job = index.segmentWriter(Array.from({ length: SEGMENTS }, (_, k) => k));
  while (!job.step(() => false));
  const blobs = Array.from({ length: SEGMENTS }, (_, k) => Object.fromEntries(Object.entries(job.blobs(k)).map(([n, v]) => [n, v.slice()])) as unknown as RestoredBlobs);
  const dict = index.dictBytes().slice();
  const loaded = new InvertedIndex();
  await loaded.restoreDict(dict, async () => {});
  loaded.segCount = SEGMENTS;
  blobs.forEach((b, k) => loaded.restoreSegment(k, b));
  await loaded.finishRestore(async () => {});
  if (decode) while (loaded.decodeSomeLists(() => true));
  return loaded;
}

const QUERIES = ["garden", "constructor", "__proto__ toString", "toString", "w1 w2", '"garden bread"', "river -stone", "w1*", "light OR stone", "w5 w9 w13", "garden bread river"];
const answers = (index: InvertedIndex) => QUERIES.map((q) => index.search(parseQuery(q), req(q, { limit: 1000, snippetWords: 8 }), "en").res);

describe("packed posting lists", () => {
  test.each([1, 2, 3])("answer as lists never laid out again, through replacements, removals, compactions, saves and loads (seed %i)", async (seed) => {
    // Room for ~2 long lists of decoded ids: most reads decode, and readers see lists come and go.
    PACKED_CACHE.bytes = 4096;
    const r = rng(seed);
    const plain = new InvertedIndex();
    plain.segCount = SEGMENTS;
    let packed = new InvertedIndex();
    packed.segCount = SEGMENTS;
    let compactions = 0;
    let loads = 0;
    for (let step = 0; step < 400; step++) {
      const k = r();
      const path = `n${Math.floor(r() * 120)}.md`;
      if (k < 0.75) {
        const text = noteText(r);
        add(plain, path, text);
        add(packed, path, text);
      } else {
        plain.removeDoc(path);
        packed.removeDoc(path);
      }
      if (r() < 0.05) {
        const state = { seg: 0, k: 0 };
        // Sometimes in one go, sometimes a list or so a step with searches between the steps.
        const stepwise = r() < 0.5;
        while (packed.compactSome(state, () => stepwise)) if (stepwise && r() < 0.1) expect(answers(packed)).toEqual(answers(plain));
        compactions++;
      }
      if (r() < 0.02) {
        packed = await saveAndLoad(packed, r() < 0.5);
        loads++;
      }
      if (step % 40 === 39) expect(answers(packed)).toEqual(answers(plain));
    }
    const state = { seg: 0, k: 0 };
    while (packed.compactSome(state, () => false));
    expect(packed.packedPostings()).toBe(packed.totalPostings);
    expect(answers(packed)).toEqual(answers(plain));
    expect(compactions).toBeGreaterThan(5);
    expect(loads).toBeGreaterThan(0);
  });

  test("packing a loaded index reads its decoded lists where they lie: no list object made for them, answers unchanged", async () => {
    const r = rng(7);
    const index = new InvertedIndex();
    index.segCount = SEGMENTS;
    for (let i = 0; i < 150; i++) add(index, `n${i}.md`, noteText(r));
    for (let i = 0; i < 150; i += 7) index.removeDoc(`n${i}.md`);
    const before = answers(index);
    const loaded = await saveAndLoad(index, true);
    expect(loaded.packable).toBe(true);
    const made = jest.spyOn(loaded, "listAt");
    const state = { seg: 0, k: 0 };
    while (loaded.compactSome(state, () => true));
    // A warm start's packing made (and dropped) an object for each of 4.65M terms before.
    expect(made).not.toHaveBeenCalled();
    made.mockRestore();
    expect(loaded.lists.count).toBe(0);
    expect(loaded.packedPostings()).toBe(loaded.totalPostings);
    expect(answers(loaded)).toEqual(before);
  });
});
