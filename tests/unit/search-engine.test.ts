/**
 * The segmented index: slicing inside a long note, persistence in many small files (only changed
 * segments rewritten), a reloaded index answering exactly as the one it was saved from, a damaged
 * segment re-indexed alone, compaction, and the relevance rules (stop words, title boost, loose CJK
 * sentences).
 */
import { describe, expect, test } from "@jest/globals";
import { hash53, hashText } from "../../src/core/hash";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { parseQuery, tokenize, type SearchService } from "../../src/core/search";
import { readBlobs, segmentFileName, writeBlobs } from "../../src/core/search/db";
import { chunkNote } from "../../src/core/search/chunk";
import { FLATTEN_MIN_TERMS, InvertedIndex } from "../../src/core/search/keyword/inverted-index";
import { headingOf, segmentOf as segmentOfIn } from "../../src/core/search/keyword/doc";

/** The saved layout these tests use: ~10 notes a segment, so their 200–300 notes make 32 segments. */
const TEN = { options: { notesPerSegment: 10 } };
const SEGMENT_COUNT = 32;
const segmentOf = (p: string) => segmentOfIn(p, SEGMENT_COUNT);
/** An index made directly, laid out as the tests' services are. */
function withSegments(ix: InvertedIndex): InvertedIndex {
  ix.segCount = SEGMENT_COUNT;
  return ix;
}
/** What loading gets of `index` once saved: every segment's blobs (copies) and its dictionary. */
function savedOf(index: InvertedIndex): { segs: RestoredBlobs[]; dict: Uint8Array } {
  const job = index.segmentWriter(Array.from({ length: SEGMENT_COUNT }, (_, k) => k));
  while (!job.step(() => false));
  const segs = Array.from({ length: SEGMENT_COUNT }, (_, k) => Object.fromEntries(Object.entries(job.blobs(k)).map(([n, v]) => [n, v.slice()])) as unknown as RestoredBlobs);
  return { segs, dict: index.dictBytes().slice() };
}
/** A new index with a saved dictionary restored, laid out for its segments. */
async function withDict(dict: Uint8Array): Promise<InvertedIndex> {
  const index = new InvertedIndex();
  await index.restoreDict(dict, async () => {});
  return withSegments(index); // restoring the dictionary starts from a clear index
}
import type { RestoredBlobs } from "../../src/core/search/keyword/persist";
import { countBlock, SegmentLoader } from "../../src/core/search/keyword/restore";
import { peekStamp } from "../../src/core/search/keyword/postings";
import { compactionLimits } from "../../src/core/search/keyword/compaction";
import { Scorer, TopK } from "../../src/core/search/keyword/score";
import { linesOf } from "../../src/core/search/keyword/sections";
import { positiveTermSet, snippet } from "../../src/core/search/keyword/snippet";
import { MemoryVault } from "../../src/core/memory-vault";
import { MemoryStateStore } from "../../src/core/state";
import { INDEX_FILE as FILE, makeSearch, searchPaths as paths, searchReq as req, startedSearch as started } from "../support/search-service";





/** Waits until the debounced save has written something, then until it is quiet. */
async function saved(store: MemoryStateStore, svc: SearchService): Promise<void> {
  await svc.waitForIdle(5000);
  for (let i = 0; i < 200 && !store.files.has(FILE); i++) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 100));
  await svc.waitForIdle(5000);
}

function manyNotes(n: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i < n; i++) out[`N/n${i}.md`] = `# Note ${i}\n\nword${i} shared text about gardens and bread.\n`;
  return out;
}

/** 200 notes indexed and saved to a fresh store (closed). */
async function savedIndex() {
  const files = manyNotes(200);
  const vault = new MemoryVault(files);
  const store = new MemoryStateStore();
  const first = await started(vault, store, TEN);
  await first.svc.close();
  return { files, vault, store };
}

/** Counts the vault's note reads from now on. */
function countReads(vault: MemoryVault): { n: number } {
  const count = { n: 0 };
  const read = vault.read.bind(vault);
  vault.read = (p: string) => {
    count.n++;
    return read(p);
  };
  return count;
}

/** Indexes `text` as the note at `path` (chunks of up to 300 words, its segment by path). */
function addText(index: InvertedIndex, path: string, text: string): void {
  const chunks = chunkNote(path, text, null, { maxWords: 300 });
  const b = index.docBuilder();
  for (const c of chunks) b.addChunk(c, "en");
  index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
}

describe("segmented keyword index", () => {
  test("a long note is tokenized across several slices", async () => {
    const sections: string[] = [];
    for (let i = 0; i < 80; i++) sections.push(`## Part ${i}\n\n${"filler words here ".repeat(120)}marker${i}`);
    const vault = new MemoryVault({ "Long.md": sections.join("\n\n") });
    let yields = 0;
    let t = 0;
    // Every clock read advances 1 ms: a 12 ms slice ends after a few chunks.
    const scheduler = { now: () => t++, yield: () => { yields++; return new Promise<void>((r) => setTimeout(r, 0)); } };
    const { svc } = await started(vault, undefined, { scheduler });
    expect(yields).toBeGreaterThan(10);
    expect((await paths(svc, "marker79"))).toEqual(["Long.md"]);
    expect((await svc.search(req("marker40", { chunksPerFile: 1 }))).hits[0].sections[0].heading).toBe("Part 40");
    await svc.close();
  });

  test("persists in small files, rewrites only changed segments, and reloads them", async () => {
    const files = manyNotes(300);
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const { svc } = await started(vault, store, TEN);
    await saved(store, svc);
    const segFiles = [...store.files.keys()].filter((k) => k !== FILE);
    expect(segFiles.length).toBe(SEGMENT_COUNT);
    for (const k of store.files.keys()) expect(store.files.get(k)!.length).toBeLessThan(200_000);

    const writes: string[] = [];
    const write = store.write.bind(store);
    store.write = (name, data) => {
      writes.push(name);
      return write(name, data);
    };
    vault.write("N/n7.md", "# Note 7\n\nnow about zeppelins\n");
    await svc.waitForIdle(5000);
    for (let i = 0; i < 200 && writes.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await svc.waitForIdle(5000);
    const k7 = segmentOf("N/n7.md");
    expect(writes.sort()).toEqual([FILE, segmentFileName(FILE, k7)].sort());
    await svc.close();

    const again = await started(vault, store, TEN);
    expect(again.svc.status().documents_indexed).toBe(300);
    expect((await paths(again.svc, "zeppelin"))).toEqual(["N/n7.md"]);
    expect((await paths(again.svc, "word123"))).toEqual(["N/n123.md"]);
    expect((await paths(again.svc, '"shared text"')).length).toBe(10);
    await again.svc.close();
  });

  test("the largest layout, 256 segments, reloads whole: the last segment's postings are checked as the others'", async () => {
    const files = manyNotes(600);
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const ONE = { options: { notesPerSegment: 1 } };
    const first = await started(vault, store, ONE);
    await saved(store, first.svc);
    await first.svc.close();
    expect([...store.files.keys()].filter((k) => k !== FILE).length).toBe(256);
    expect(Object.keys(files).some((p) => segmentOfIn(p, 256) === 255)).toBe(true);
    const reads = countReads(vault);
    const again = await started(vault, store, ONE);
    // Every list decoded (segment 255's too) and nothing indexed again.
    expect(await paths(again.svc, "shared text")).toHaveLength(10);
    expect(await again.svc.waitForIdle(10_000)).toBe(true);
    expect(again.logs.filter((l) => /inconsistent|unusable|rebuild/i.test(l))).toEqual([]);
    expect(again.svc.status().documents_indexed).toBe(600);
    const last = Object.keys(files).find((p) => segmentOfIn(p, 256) === 255)!;
    const word = last.replace(/^N\/n(\d+)\.md$/, "word$1");
    reads.n = 0;
    expect(await paths(again.svc, word)).toEqual([last]);
    await again.svc.close();
  });

  test("the saved layout grows with the vault: one segment for a small vault, more once it grows, old files removed", async () => {
    const segFiles = (store: MemoryStateStore) => [...store.files.keys()].filter((k) => k !== FILE).sort();
    const vault = new MemoryVault({ "A.md": "apples", "B.md": "bananas" });
    const store = new MemoryStateStore();
    const small = await started(vault, store);
    await saved(store, small.svc);
    // Two notes: one segment's file beside the main file, not 32.
    expect(segFiles(store)).toEqual([segmentFileName(FILE, 0)]);
    await small.svc.close();

    // The vault grows to 50 notes (at 10 a segment: 8); a restart lays the index out again.
    for (let i = 0; i < 48; i++) vault.write(`G/g${i}.md`, `grown note ${i} about cherries${i}`);
    const grown = await started(vault, store, TEN);
    await saved(store, grown.svc);
    expect(grown.logs.some((l) => /saved in 8 segments from now on \(was 1\)/.test(l))).toBe(true);
    const eight = Array.from({ length: 8 }, (_, k) => segmentFileName(FILE, k)).sort();
    expect(segFiles(store)).toEqual(eight);
    const before = await Promise.all(["apples", "cherries17", "grown note"].map((q) => paths(grown.svc, q)));
    await grown.svc.close();
    // Reloaded from the 8 segments: the same answers, nothing indexed again.
    const reads = countReads(vault);
    const again = await started(vault, store, TEN);
    expect(reads.n).toBe(0); // (searches read their hits' notes; loading read none)
    expect(await Promise.all(["apples", "cherries17", "grown note"].map((q) => paths(again.svc, q)))).toEqual(before);
    await again.svc.close();

    // Rebuilt in another format with the default layout (one segment for 50 notes): the other 7 segments' files go.
    const rebuilt = await started(vault, store, { options: { chunkWords: 200 } });
    await saved(store, rebuilt.svc);
    expect(segFiles(store)).toEqual([segmentFileName(FILE, 0)]);
    expect(await paths(rebuilt.svc, "cherries17")).toEqual(["G/g17.md"]);
    await rebuilt.svc.close();
  });

  test("a damaged segment file: only its notes are indexed again", async () => {
    const { files, vault, store } = await savedIndex();
    const bad = segmentOf("N/n5.md");
    store.files.set(segmentFileName(FILE, bad), new TextEncoder().encode("garbage".repeat(50)));
    const reads = countReads(vault);
    const second = await started(vault, store, TEN);
    const inBad = Object.keys(files).filter((p) => segmentOf(p) === bad).length;
    expect(reads.n).toBe(inBad);
    expect(second.logs.some((l) => /unusable/.test(l))).toBe(true);
    expect((await paths(second.svc, "word5"))).toEqual(["N/n5.md"]);
    expect(second.svc.status().documents_indexed).toBe(200);
    await second.svc.close();
  });

  test("sections are cut from the notes as they are now: unchanged, changed since indexed, gone", async () => {
    const { vault, store } = await savedIndex();
    const { svc } = await started(vault, store);
    const reads = countReads(vault);
    const hit = async (q: string) => (await svc.search(req(q))).hits[0];
    // Unchanged: the section as indexed; only the hits' notes are read, once each.
    expect((await hit("word5")).sections[0]).toMatchObject({ content: "# Note 5\n\nword5 shared text about gardens and bread.", line_start: 1, line_end: 3 });
    expect(reads.n).toBe(1);
    reads.n = 0;
    const both = (await svc.search(req("word5 OR word6", { chunksPerFile: 3 }))).hits;
    expect(both.map((h) => h.path).sort()).toEqual(["N/n5.md", "N/n6.md"]);
    expect(reads.n).toBe(2);
    // Changed on disk, the index not caught up yet (searched before the change's debounce): the stored lines as they read now.
    vault.write("N/n5.md", "# Note 5\n\nword5 now about turnips.\nA new line.\n");
    expect((await hit("word5")).sections[0].content).toBe("# Note 5\n\nword5 now about turnips.");
    // Gone: the hit stays until the index catches up, with an empty section.
    vault.write("N/n6.md", "");
    await vault.trash("N/n6.md");
    const gone = await hit("word6");
    expect(gone.path).toBe("N/n6.md");
    expect(gone.sections[0].content).toBe("");
    // Caught up.
    expect(await svc.waitForIdle(5000)).toBe(true);
    expect((await hit("turnips")).sections[0].content).toBe("# Note 5\n\nword5 now about turnips.\nA new line.");
    expect(await paths(svc, "word6")).toEqual([]);
    await svc.close();
  });

  test("a chunk's stored lines, cut from its note, are the chunk's text (frontmatter, BOM, CRLF, fences, headings, paragraphs)", () => {
    const para = (i: number) => Array.from({ length: 40 }, (_, j) => `p${i}w${j}`).join(" ");
    const notes = [
      "plain one line",
      "\uFEFFbom first line\nsecond",
      "\uFEFF---\ntags: [a]\n---\nbody after bom frontmatter\n",
      "---\r\ntitle: x\r\n---\r\n# Head\r\n\r\ntext\r\r\nmore\r\n",
      "---\nonly: frontmatter\n---",
      "",
      "\n\n\n   \n",
      `# Top\n\n${Array.from({ length: 30 }, (_, i) => `## Part ${i}\n\n${para(i)}\n\n\`\`\`\n# not a heading ${i}\n\`\`\`\n`).join("\n")}`,
      Array.from({ length: 60 }, (_, i) => para(i)).join("\n\n"),
      Array.from({ length: 400 }, (_, i) => `line ${i} ${para(i).slice(0, 60)}`).join("\n") + "\n",
    ];
    let compared = 0;
    for (const text of notes) {
      const chunks = chunkNote("n.md", text, null, { maxWords: 300 });
      chunks.forEach((c, i) => {
        const piece = c.lineStart === c.lineEnd && [chunks[i - 1], chunks[i + 1]].some((x) => x && x.lineStart <= c.lineStart && x.lineEnd >= c.lineStart);
        if (piece) return;
        expect([text, c.ordinal, linesOf(text, c.lineStart, c.lineEnd)]).toEqual([text, c.ordinal, c.text]);
        compared++;
      });
    }
    expect(compared).toBeGreaterThan(40);
  });

  test("pieces of a line too long for one chunk are cut as the chunker cut them; a changed note gives the whole line", async () => {
    const long = Array.from({ length: 900 }, (_, i) => `w${i}`).join(" ");
    const vault = new MemoryVault({ "Long.md": `---\ntags: [x]\n---\nintro line\n\n${long}\r\nlast line\n`, "Bom.md": "\uFEFFfirst words here\r\nsecond line\r\n" });
    const { svc } = await started(vault);
    const chunks = chunkNote("Long.md", await vault.read("Long.md"), null, { maxWords: 300 });
    expect(chunks.length).toBeGreaterThan(3);
    const mid = chunks.find((c) => c.text.includes("w450 "))!;
    const sec = (await svc.search(req("w450", { chunksPerFile: 1 }))).hits[0].sections[0];
    expect(sec).toMatchObject({ content: mid.text, line_start: mid.lineStart, line_end: mid.lineEnd });
    expect((await svc.search(req("intro", { chunksPerFile: 1 }))).hits[0].sections[0].content).toBe("intro line");
    expect((await svc.search(req("first", { chunksPerFile: 1 }))).hits[0].sections[0].content).toBe("first words here\nsecond line");
    vault.write("Long.md", `---\ntags: [x]\n---\nintro line\n\n${long} w9999\nlast line\n`);
    const stale = (await svc.search(req("w450", { chunksPerFile: 1 }))).hits[0].sections[0].content;
    expect(stale).toBe(`${long} w9999`);
    await svc.close();
  });

  test("a saved index holds no texts: loaded, it answers as the build that saved it", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) {
      const body = Array.from({ length: 300 }, (_, j) => `line ${j} of note ${i}: words about kilns glaze${(i * 7 + j) % 97} and clay${j % 13} ${"x".repeat(40 + ((i * j) % 50))}`).join("\n");
      files[`F/n${i}.md`] = `# Note ${i}\n\nmarker${i} ${body}\n`;
    }
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const cold = await started(vault, store, TEN);
    const queries = ["marker7", "marker64 OR marker99", "glaze42", "clay5 kilns", '"words about kilns"', "note 77"];
    const answer = (svc: SearchService) => Promise.all(queries.map((q) => svc.search(req(q, { snippetWords: 30, chunksPerFile: 3, limit: 20 }))));
    const before = await answer(cold.svc);
    expect(before[0].hits[0].sections[0].content).toContain("marker7");
    await cold.svc.close();
    // ~3.6 MB of notes, and no file of the index holds their words (120 notes at 10 a segment: 16).
    expect([...store.files.keys()].sort()).toEqual([FILE, ...Array.from({ length: 16 }, (_, k) => segmentFileName(FILE, k))].sort());
    for (const bytes of store.files.values()) expect(Buffer.from(bytes).includes("words about kilns")).toBe(false);
    const fresh = makeSearch(vault, store);
    await fresh.svc.start();
    expect(await answer(fresh.svc)).toEqual(before);
    expect(await fresh.svc.waitForIdle(25_000)).toBe(true);
    expect(await answer(fresh.svc)).toEqual(before);
    expect(fresh.logs.filter((l) => /unusable|inconsistent|rebuild/i.test(l))).toEqual([]);
    await fresh.svc.close();
  }, 90_000);

  test("a reloaded index answers exactly as the one built from the notes", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) {
      const long = i % 10 === 0 ? `\n\n## Deep ${i}\n\n${"filler words about kilns ".repeat(200)}\n\n## Late ${i}\n\nlate marker${i} glaze` : "";
      files[`F${i % 7}/note ${i}.md`] = `---\ntags: [t${i % 4}, craft]\nstatus: s${i % 3}\naliases: [Alias ${i}]\n---\n# Note ${i}\n\nword${i} clay pottery ${i % 2 ? "glaze" : "kiln"} 日本語のテキスト${i % 5}${long}\n`;
    }
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const first = await started(vault, store, TEN);
    const queries = ["clay", "glaze kiln", '"clay pottery"', "pott*", "word17 OR word18", "kiln -glaze", "日本語", "alias 42", "late marker30", "filler"];
    const full = (svc: SearchService) => Promise.all(queries.map((q) => svc.search(req(q, { snippetWords: 12, chunksPerFile: 3, limit: 50 }))));
    const filtered = async (svc: SearchService) => (await svc.search(req("clay", { filters: { tags: "t1", status: "s2" }, folder: "F3" })));
    const before = await full(first.svc);
    const beforeFiltered = await filtered(first.svc);
    expect(before[0].total_files).toBe(120);
    expect(before[8].hits[0].sections[0]).toMatchObject({ heading: "Note 30 > Late 30" });
    await first.svc.close();

    // Searched at once (texts loaded as the answers need them) and after the background loading.
    const fresh = makeSearch(vault, store, TEN);
    await fresh.svc.start();
    expect(await full(fresh.svc)).toEqual(before);
    await fresh.svc.close();
    const again = await started(vault, store, TEN);
    expect(again.logs.filter((l) => /rebuild|unusable|inconsistent/i.test(l))).toEqual([]);
    expect(await full(again.svc)).toEqual(before);
    expect(await filtered(again.svc)).toEqual(beforeFiltered);
    await again.svc.close();
  });

  test("a reload in many small steps restores a dictionary of thousands of terms and a segment of over 64 notes, frontmatter and all", async () => {
    // 150 notes in one segment (registered in batches of 64), each with 25 words of its own (3.8k terms).
    const files: Record<string, string> = {};
    for (let i = 0, n = 0; n < 150; i++) {
      const p = `S${i % 3}/note ${i}.md`;
      if (segmentOf(p) !== 3) continue;
      const own = Array.from({ length: 25 }, (_, j) => `u${n}x${j}`).join(" ");
      files[p] = `---\ntags: [craft, t${n % 4}]\nstatus: s${n % 3}\nsummary: ${"a summary longer than sixty-four characters, for note number ".repeat(2)}${n}\nnested:\n  kind: k${n % 2}\ncount: ${n}\n---\n# Note ${n}\n\nword${n} clay ${own} #inline/t${n % 5}\n`;
      n++;
    }
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const first = await started(vault, store, TEN);
    const all = async (svc: SearchService) => (await svc.search(req("clay", { limit: 200, snippetWords: 8 })));
    const filtered = async (svc: SearchService) => [(await svc.search(req("clay", { limit: 200, filters: { tags: "inline" } }))), (await svc.search(req("clay", { limit: 200, filters: { status: "s1" }, folder: "S2" })))];
    const before = await all(first.svc);
    const beforeFiltered = await filtered(first.svc);
    expect(before.total_files).toBe(150);
    expect(before.hits[0].frontmatter).toMatchObject({ tags: ["craft", expect.stringMatching(/^t\d$/)], nested: { kind: expect.stringMatching(/^k\d$/) } });
    expect(beforeFiltered.map((r) => r.total_files)).toEqual([150, expect.any(Number)]);
    await first.svc.close();

    // Every clock read advances 1 ms: the load yields at every chance it has.
    let t = 0;
    let yields = 0;
    const scheduler = { now: () => t++, yield: () => { yields++; return new Promise<void>((r) => setImmediate(r)); } };
    const reads = countReads(vault);
    const again = await started(vault, store, { scheduler, ...TEN });
    expect(again.logs.filter((l) => /rebuild|unusable|inconsistent/i.test(l))).toEqual([]);
    expect(reads.n).toBe(0); // every note came from the saved index, none was indexed again
    expect(again.svc.status().documents_indexed).toBe(150);
    expect(yields).toBeGreaterThan(SEGMENT_COUNT + 3);
    expect(await all(again.svc)).toEqual(before);
    expect(await filtered(again.svc)).toEqual(beforeFiltered);
    for (const n of [0, 77, 149]) expect((await again.svc.search(req(`u${n}x24`))).hits.map((h) => h.title)).toEqual([`note ${Object.keys(files)[n].match(/note (\d+)/)![1]}`]);
    await again.svc.close();
  });

  test("restoring the dictionary yields between its steps and keeps every id", async () => {
    const index = withSegments(new InvertedIndex());
    const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
    for (const w of words) index.dict.id(w);
    const bytes = index.dictBytes();
    const restored = withSegments(new InvertedIndex());
    let yields = 0;
    await restored.restoreDict(bytes, async () => {
      yields++;
    });
    // Each pass starts with steps 1/32 of its full size, doubled a step: counting and decoding its
    // ~20 KB, 8 KB then 16 KB; hashing, sorting and placing its 5,000 terms, 2,048 then 4,096; the
    // sorting's bucket sums, one.
    expect(bytes.length).toBeGreaterThan(8192 * 2);
    expect(bytes.length).toBeLessThanOrEqual(8192 * 3);
    expect(yields).toBe(2 + 2 + 2 + 1 + 2 + 2);
    expect(Array.from({ length: restored.dict.size }, (_, g) => restored.dict.name(g))).toEqual(words);
    expect(words.every((w, i) => restored.dict.get(w) === i)).toBe(true);
  });

  test("a dictionary of several MB is decoded in slices and comes back term for term", async () => {
    // Every term but the first starts with U+FEFF (a slice's first term is not a byte order mark);
    // CJK, astral characters, prototype words, and an empty last term.
    const words = ["first"];
    for (let i = 1; i < 200_000; i++) words.push(`\ufeff${i % 3 ? "日本語" : i % 5 ? "😀" : "constructor"}${i.toString(36)}`);
    words.push("");
    const bytes = new TextEncoder().encode(words.join("\n"));
    expect(bytes.length).toBeGreaterThan(2.5 * (1 << 20));
    const restored = withSegments(new InvertedIndex());
    await restored.restoreDict(bytes, async () => {});
    expect(restored.dict.size).toBe(words.length);
    expect(words.every((w, i) => restored.dict.name(i) === w && restored.dict.get(w) === i)).toBe(true);
  });

  test("a saved dictionary that is not valid UTF-8 is read as TextDecoder reads it, term by term", async () => {
    const bytes = new Uint8Array([0x61, 0x0a, 0x62, 0xff, 0x63, 0x0a, 0xe6, 0x97, 0x0a, 0x64]);
    const restored = withSegments(new InvertedIndex());
    await restored.restoreDict(bytes, async () => {});
    const words = new TextDecoder().decode(bytes).split("\n");
    expect(words).toEqual(["a", "b\ufffdc", "\ufffd", "d"]);
    expect(Array.from({ length: restored.dict.size }, (_, g) => restored.dict.name(g))).toEqual(words);
    expect(words.every((w, i) => restored.dict.get(w) === i)).toBe(true);
  });

  test("snippets cut from the stored term sequence are those of tokenizing the section's text, built or reloaded", async () => {
    const files: Record<string, string> = {};
    const words = ["kiln", "glaze", "clay", "don't", "naïve", "café", "e-mail", "Kilns", "glazing", "日本語の窯", "#pottery/tools", "[[Kiln]]", "x_y", "42"];
    for (let i = 0; i < 40; i++) {
      const body: string[] = [];
      for (let k = 0; k < 30 + ((i * 37) % 400); k++) body.push(words[(i * 7 + k * k) % words.length]);
      files[`n${i}.md`] = `# Note ${i}\n\n${body.join(i % 3 ? " " : "  ")}\n\nlast line ${i}.\n`;
    }
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const queries = ["kiln", "glaze clay", "caf*", '"clay kiln"', "日本語", "naive", "pottery", "e-mail kiln", "don't"];
    const check = async (svc: SearchService) => {
      let long = 0;
      for (const q of queries)
        for (const w of [1, 5, 40, 200]) {
          const cut = (await svc.search(req(q, { snippetWords: w, chunksPerFile: 3, limit: 50 })));
          const whole = (await svc.search(req(q, { snippetWords: 0, chunksPerFile: 3, limit: 50 })));
          expect(cut.hits.map((h) => h.path)).toEqual(whole.hits.map((h) => h.path));
          const want = positiveTermSet(parseQuery(q));
          cut.hits.forEach((h, i) =>
            h.sections.forEach((sec, j) => {
              const text = whole.hits[i].sections[j].content;
              if (sec.content !== text.trim()) long++;
              expect(sec.content).toBe(snippet(text, want, w, "en"));
            }),
          );
        }
      return long;
    };
    const first = await started(vault, store);
    expect(await check(first.svc)).toBeGreaterThan(50); // most answers were cut, not whole sections
    await first.svc.close();
    const again = await started(vault, store, TEN);
    expect(again.logs.filter((l) => /rebuild|unusable|inconsistent/i.test(l))).toEqual([]);
    await check(again.svc);
    await again.svc.close();
  });

  test("a note changed since it was indexed (the index not told yet) gets snippets of its current text, its words where they are now", async () => {
    const filler = (n: number, w: string) => Array.from({ length: n }, (_, i) => `${w}${i % 7}`).join(" ");
    const before = `# Kiln log\n\n${filler(40, "ash")} kiln glaze ${filler(60, "ember")}\n`;
    const vault = new MemoryVault({ "log.md": before, "other.md": "# Other\n\nnothing here\n" });
    const { svc } = await started(vault, new MemoryStateStore());
    const ask = async () => (await svc.search(req("kiln glaze", { snippetWords: 6 }))).hits[0]?.sections[0]?.content;
    expect(await ask()).toContain("kiln glaze");
    // Thirty words more before the match, on the same line, while no event reaches the index: the stored
    // term sequence now disagrees with the text by the words' positions, not by the lines.
    vault.emitEvents = false;
    const after = `# Kiln log\n\n${filler(70, "soot")} kiln glaze ${filler(60, "ember")}\n`;
    vault.write("log.md", after);
    const want = positiveTermSet(parseQuery("kiln glaze"));
    const got = await ask();
    expect(got).toBe(snippet(linesOf(after, 3, 3), want, 6, "en"));
    expect(got).toContain("kiln glaze");
    await svc.close();
  });

  test("a segment whose notes name title terms out of the dictionary: only its notes are indexed again", async () => {
    const { files, vault, store } = await savedIndex();
    const bad = segmentOf("N/n5.md");
    const blobs = readBlobs(store.files.get(segmentFileName(FILE, bad))!);
    const docs = JSON.parse(new TextDecoder().decode(blobs.get("docs"))) as { p: string; ti: number[] }[];
    expect(docs.find((d) => d.p === "N/n5.md")!.ti.length).toBeGreaterThan(0);
    for (const d of docs) if (d.p === "N/n5.md") d.ti = [1e9];
    blobs.set("docs", new TextEncoder().encode(JSON.stringify(docs)));
    store.files.set(segmentFileName(FILE, bad), writeBlobs(Object.fromEntries(blobs)));
    const reads = countReads(vault);
    const second = await started(vault, store, TEN);
    expect(second.logs.some((l) => /unusable \(title term id out of range\)/.test(l))).toBe(true);
    expect(reads.n).toBe(Object.keys(files).filter((p) => segmentOf(p) === bad).length);
    expect((await paths(second.svc, "word5"))).toEqual(["N/n5.md"]);
    expect(second.svc.status().documents_indexed).toBe(200);
    await second.svc.close();
  });

  test("a segment whose postings disagree with its term header: only its notes are indexed again", async () => {
    const { files, vault, store } = await savedIndex();
    const bad = segmentOf("N/n5.md");
    const other = (bad + 1) % SEGMENT_COUNT;
    const blobs = readBlobs(store.files.get(segmentFileName(FILE, bad))!);
    // As many bytes as its term header says, but postings that name no chunk of the segment.
    blobs.set("postings", new Uint8Array(blobs.get("postings")!.length));
    store.files.set(segmentFileName(FILE, bad), writeBlobs(Object.fromEntries(blobs)));
    const reads = countReads(vault);
    const second = await started(vault, store, TEN);
    expect(second.logs.some((l) => /inconsistent postings/.test(l))).toBe(true);
    expect(reads.n).toBe(Object.keys(files).filter((p) => segmentOf(p) === bad).length);
    expect((await paths(second.svc, "word5"))).toEqual(["N/n5.md"]);
    const inOther = Object.keys(files).find((p) => segmentOf(p) === other)!;
    const word = inOther.replace(/^N\/n(\d+)\.md$/, "word$1");
    expect((await paths(second.svc, word))).toEqual([inOther]);
    expect((await second.svc.search(req("shared text", { limit: 1000 }))).total_files).toBe(200);
    expect(second.svc.status().documents_indexed).toBe(200);
    await second.svc.close();
  });

  test("the index does not keep a note's text alive (chunk headings are copied)", async () => {
    // A heading cut from the text (13+ characters) is a view into the whole text in V8: kept in
    // the index, it kept every note's full text in memory (~15 MB at 10k notes).
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const index = withSegments(new InvertedIndex());
    const filler = "some words ".repeat(200) + "-".repeat(1_000_000); // ~1 MB, few words (quick to tokenize)
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i++) {
      const path = `big${i}.md`;
      // A fresh 1 MB string each time, with a heading long enough to be sliced.
      const text = `# A heading long enough to be sliced ${i}\n\nunique${i} words\n\n## Another heading long enough ${i}\n\n${filler}${i}\n`;
      const chunks = chunkNote(path, text, null, { maxWords: 300 });
      const b = index.docBuilder();
      for (const c of chunks) b.addChunk(c, "en");
      index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
    }
    gc();
    await new Promise((r) => setTimeout(r, 100));
    gc();
    const retained = process.memoryUsage().heapUsed - before;
    expect(headingOf(index.docs.get("big7.md")!, 0)).toBe("A heading long enough to be sliced 7");
    // 40 notes of 1 MB: ~40 MB of heap if their texts were kept (the index's own copy of each
    // chunk's text is UTF-8 bytes, outside the heap).
    expect(retained).toBeLessThan(8 * 1024 * 1024);
  });

  test("a build with a big dictionary packs its new short lists without objects, and answers stay the same", () => {
    const index = withSegments(new InvertedIndex());
    const add = (path: string, text: string) => addText(index, path, text);
    // 1,100 notes of 250 numbers of their own: over FLATTEN_MIN_TERMS terms, most of them once.
    const notes = 1100;
    for (let i = 0; i < notes; i++) add(`n${i}.md`, `common ${i % 2 ? "odd" : "even"} ` + Array.from({ length: 250 }, (_, j) => String(1_000_000 + i * 250 + j)).join(" "));
    expect(index.dict.size).toBeGreaterThan(FLATTEN_MIN_TERMS);
    const pq = (q: string) => parseQuery(q);
    const queries = ["common", "odd", "1000000", "1137749", "n77", "1000250 common", '"common odd"'];
    const run = () => queries.map((q) => index.search(pq(q), req(q, { limit: 50 }), "en").res);
    // The log's counts (4 bytes a term) stay while the build goes on, and go once it is done.
    add("last.md", "1999999 common");
    expect(index.logBytes()).toBeGreaterThan(4 * FLATTEN_MIN_TERMS);
    index.releaseScratch();
    expect(index.logBytes()).toBeLessThan(100_000);
    expect(index.search(pq("1999999"), req("1999999"), "en").res.hits.map((h) => h.path)).toEqual(["last.md"]);
    const before = run();
    // In steps (a deadline always passed), then to the end.
    let steps = 0;
    while (index.flattenNewLists(() => true)) steps++;
    expect(steps).toBeGreaterThan(100);
    const objects = [...index.lists.values()].filter((l) => l.n > 0).length;
    expect(objects).toBeLessThan(10); // the common words' lists
    expect(index.flat.total).toBeGreaterThan(notes * 250);
    expect(run()).toEqual(before);
    // A flattened term seen again gets its object back, with both notes.
    add("late.md", "1000001 late");
    expect(index.search(pq("1000001"), req("1000001"), "en").res.hits.map((h) => h.path).sort()).toEqual(["late.md", "n0.md"]);
    // A compaction after it keeps every answer.
    expect(index.flattenNewLists(() => false)).toBe(false);
    const withLate = run();
    const state = { seg: 0, k: 0 };
    while (index.compactSome(state, () => false));
    expect(run()).toEqual(withLate);
    expect(withLate[2].hits.map((h) => h.path)).toEqual(["n0.md"]);
  });

  test("compaction lays the lists out again in many small steps, dropping deleted notes only", () => {
    const index = withSegments(new InvertedIndex());
    const add = (path: string, text: string) => addText(index, path, text);
    for (let i = 0; i < 3000; i++) add(`n${i}.md`, `common words for all ${i % 3 ? "odd" : "even"} tag${i % 50} unique${i}`);
    for (let i = 0; i < 3000; i += 2) index.removeDoc(`n${i}.md`);
    const pq = (q: string) => parseQuery(q);
    const queries = ["common", "odd", "even", "tag7", "unique1001", "unique1000", '"all odd"'];
    const run = () => queries.map((q) => index.search(pq(q), req(q, { limit: 2000 }), "en").res);
    const before = run();
    const postings = index.totalPostings;
    const state = { seg: 0, k: 0 };
    let steps = 0;
    // A deadline that has always passed: one check's worth of work per step.
    while (index.compactSome(state, () => true)) steps++;
    expect(steps).toBeGreaterThan(5);
    expect(index.totalPostings).toBeLessThan(postings);
    expect(index.deadPostings).toBe(0);
    // Every list is packed now, without an object of its own (FlatLists), under 2.5 bytes a posting (5 unpacked).
    expect([...index.lists.values()].filter((l) => l.n > 0)).toEqual([]);
    expect(index.lists.count).toBe(0); // not even an empty one
    expect(index.lists.pagesHeld).toBe(0);
    expect(index.flat.total).toBe(index.totalPostings);
    expect(index.packedPostings()).toBe(index.totalPostings);
    // Made objects again when used, still packed.
    const lists = Array.from({ length: index.lists.length }, (_, g) => index.listAt(g)).filter((l) => l && l.n > 0);
    expect(lists.length).toBeGreaterThan(3000);
    expect(lists.every((l) => l!.packed)).toBe(true);
    expect(index.flat.total).toBe(0);
    expect(index.packedPostings()).toBe(index.totalPostings);
    const bytes = new Set(lists.map((l) => l!.packed!.buffer)).size === 1 ? lists.reduce((s, l) => Math.max(s, l!.packedAt), 0) : -1;
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThan(index.totalPostings * 2.5);
    expect(run()).toEqual(before);
    expect(before[0].total_files).toBe(1500);
    expect(before[5].total_files).toBe(0);
    // Lists grow again after compaction.
    add("late.md", "common unique1000 late");
    expect(index.search(pq("unique1000"), req("unique1000"), "en").res.hits.map((h) => h.path)).toEqual(["late.md"]);
    expect(index.search(pq("common"), req("common", { limit: 2000 }), "en").res.total_files).toBe(1501);
  });


  test("compaction packs a long list in pieces across steps; searches between them see it whole, and the lists are those of one pass", () => {
    const build = () => {
      const index = withSegments(new InvertedIndex());
      // "common" 1 to 4 times a note, and 20 times in some (a tf code of its own byte, after the nibbles).
      for (let i = 0; i < 3002; i++) addText(index, `n${i}.md`, `${"common ".repeat(i % 97 === 1 ? 20 : 1 + (i % 4))}words for all ${i % 3 ? "odd" : "even"} tag${i % 50} unique${i} ${i % 2 ? "" : "constructor"}`);
      // 1,501 left: an odd count (the last byte of nibbles holds one).
      for (let i = 0; i < 3002; i += 2) index.removeDoc(`n${i}.md`);
      return index;
    };
    const queries = ["common", "odd", "even", "tag7", "unique1001", '"all odd"', "common tag7 -even", "constructor"];
    // As text: a difference between two answers of 100 hits each is too big for a readable diff.
    const run = (index: InvertedIndex) => queries.map((q) => JSON.stringify(index.search(parseQuery(q), req(q, { limit: 100 }), "en").res));
    const whole = build();
    const before = run(whole);
    const once = { seg: 0, k: 0 };
    while (whole.compactSome(once, () => false));
    const pieces = build();
    // Another index compacted in pieces too, a step of it between two of the first's: each holds its
    // long list under way in scratch of its own.
    const other = build();
    const g = pieces.dict.get("common")!;
    const was = compactionLimits.longList;
    compactionLimits.longList = 300;
    try {
      const state = { seg: 0, k: 0 };
      const otherState = { seg: 0, k: 0 };
      let onCommon = 0;
      let otherMore = true;
      // A deadline always passed, every query between two steps.
      while (pieces.compactSome(state, () => true)) {
        if (state.k === g) onCommon++;
        expect(run(pieces)).toEqual(before);
        if (otherMore && onCommon % 4 === 1) otherMore = other.compactSome(otherState, () => true);
      }
      while (other.compactSome(otherState, () => true));
      // "common": 3,002 postings read (1,501 live) in pieces of 300, then their ids and their tf codes.
      expect(onCommon).toBeGreaterThanOrEqual(10 + 5 + 5);
    } finally {
      compactionLimits.longList = was;
    }
    expect(run(other)).toEqual(before);
    expect(run(pieces)).toEqual(before);
    expect(JSON.parse(before[0]).total_files).toBe(1501);
    expect(JSON.parse(before[7]).total_files).toBe(0); // "constructor": only in the notes removed
    expect(pieces.totalPostings).toBe(whole.totalPostings);
    expect(pieces.packedPostings()).toBe(pieces.totalPostings);
    const lists = (index: InvertedIndex) =>
      Array.from({ length: index.lists.length }, (_, t) => {
        const l = index.peekList(t);
        return l && `${l[0].subarray(0, l[2]).join()}|${l[1].subarray(0, l[2]).join()}`;
      });
    expect(lists(pieces)).toEqual(lists(whole));
    expect(lists(other)).toEqual(lists(whole));
  });

  test("the postings log merges in many small steps; notes added meanwhile and a search in the middle see every posting, in order", () => {
    const build = () => {
      const index = withSegments(new InvertedIndex());
      const add = (i: number) => {
        const path = `n${i}.md`;
        const text = `common words for all ${i % 3 ? "odd" : "even"} notes tag${i % 50} unique${i} and a few more words here ${i % 7 ? "seven" : "other"}`;
        const chunks = chunkNote(path, text, null, { maxWords: 300 });
        const b = index.docBuilder();
        for (const c of chunks) b.addChunk(c, "en");
        index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
      };
      return { index, add };
    };
    const queries = ["common", "odd even", "tag7", "unique2999", "unique3100", "seven -odd", '"all odd notes"', "uniq*"];
    const vocabulary = new Set<string>();
    for (let i = 0; i < 3200; i++) for (const t of tokenize(`n${i} unique${i} tag${i % 50} common words for all odd even notes and a few more here seven other`)) vocabulary.add(t);
    const counts = (index: InvertedIndex) => [...vocabulary].map((t) => index.lookup(t)?.n ?? 0);
    // Every term's posting list (chunk ids, then tf codes) and the queries' answers.
    const run = (index: InvertedIndex) => ({
      lists: [...vocabulary].map((t) => {
        const l = index.lookup(t);
        return l ? [t, ...l.ids.subarray(0, l.n), ...l.tfs.subarray(0, l.n)] : [t];
      }),
      answers: queries.map((q) => index.search(parseQuery(q), req(q, { limit: 5000 }), "en").res),
    });
    const plain = build();
    for (let i = 0; i < 3200; i++) plain.add(i);
    const expected = run(plain.index);
    expect(expected.answers[0].total_files).toBe(3200);
    expect(expected.lists.filter((l) => l.length > 1).length).toBeGreaterThan(6000);

    // Merged a step at a time (a deadline that has always passed), with notes added while a merge is under way.
    const stepped = build();
    for (let i = 0; i < 3000; i++) stepped.add(i);
    expect(stepped.index.mergeDue).toBe(true);
    expect(stepped.index.mergeSome(() => true)).toBe(false); // sorted the log: the copying is left
    for (let i = 3000; i < 3100; i++) stepped.add(i);
    let steps = 1;
    while (!stepped.index.mergeSome(() => true)) steps++;
    expect(steps).toBeGreaterThan(20);
    expect(stepped.index.mergeDue).toBe(false); // the 100 notes' postings wait in the log
    while (!stepped.index.mergeSome(() => true)); // merged too (not due: nothing else would merge them yet)
    for (let i = 3100; i < 3200; i++) stepped.add(i);
    expect(counts(stepped.index)).toEqual(counts(plain.index));
    expect(run(stepped.index)).toEqual(expected);

    // A search while a merge is under way finishes it first.
    const midway = build();
    for (let i = 0; i < 3000; i++) midway.add(i);
    midway.index.mergeSome(() => true);
    midway.index.mergeSome(() => true);
    for (let i = 3000; i < 3200; i++) midway.add(i);
    expect(midway.index.mergeDue).toBe(true);
    expect(run(midway.index)).toEqual(expected);
    expect(midway.index.mergeDue).toBe(false);
  });

  test("a merge step that unpacks long packed lists asks for its deadline by the postings it copies, not only every 128 terms", () => {
    const words = Array.from({ length: 130 }, (_, k) => `word${k}`);
    const build = () => {
      const index = withSegments(new InvertedIndex());
      for (let i = 0; i < 3000; i++) addText(index, `n${i}.md`, `${words.join(" ")} own${i}`);
      const state = { seg: 0, k: 0 };
      while (index.compactSome(state, () => false));
      expect(index.packedPostings()).toBe(index.totalPostings); // every list packed
      // A few more notes: their postings go to the log; merging them unpacks 130 lists of 3,000 postings.
      for (let i = 3000; i < 3010; i++) addText(index, `n${i}.md`, `${words.join(" ")} own${i}`);
      return index;
    };
    const whole = build();
    whole.flushPostings();
    const stepped = build();
    let steps = 1;
    while (!stepped.mergeSome(() => true)) steps++;
    // 130 terms: at one check every 128 terms, 2 steps after the sort; by the postings copied (390k), more.
    expect(steps).toBeGreaterThan(4);
    for (const q of ["word0", "word129", "word64 own3005", "own2999"]) {
      const a = whole.search(parseQuery(q), req(q, { limit: 5000 }), "en").res;
      expect(stepped.search(parseQuery(q), req(q, { limit: 5000 }), "en").res).toEqual(a);
    }
    expect(whole.search(parseQuery("word7"), req("word7", { limit: 5000 }), "en").res.total_files).toBe(3010);
  });

  test("a long note's postings wait in the log for a merge in steps; they are not merged at once as they are added", () => {
    const index = withSegments(new InvertedIndex());
    for (let i = 0; i < 200; i++) addText(index, `n${i}.md`, `common words w${i}`);
    index.flushPostings();
    expect(index.mergeDue).toBe(false);
    // 70k postings in one note: over twice the log's merge size (at that size it was merged at once).
    addText(index, "long.md", Array.from({ length: 70_000 }, (_, j) => `t${j}`).join(" "));
    expect(index.mergeDue).toBe(true);
    let steps = 1;
    while (!index.mergeSome(() => true)) steps++;
    expect(steps).toBeGreaterThan(10);
    for (const [q, paths] of [["t0", ["long.md"]], ["t69999", ["long.md"]], ["w7", ["n7.md"]]] as const) {
      expect(index.search(parseQuery(q), req(q), "en").res.hits.map((h) => h.path)).toEqual(paths);
    }
    expect(index.search(parseQuery("common"), req("common", { limit: 500 }), "en").res.total_files).toBe(200);
  });

  test("sorting the postings log takes room for the log's terms, not the dictionary's", () => {
    const index = withSegments(new InvertedIndex());
    // 200k distinct terms, then a read (which lets the merge's buffers go).
    for (let i = 0; i < 100; i++) addText(index, `n${i}.md`, Array.from({ length: 2000 }, (_, j) => `w${i}x${j}`).join(" ") + " constructor __proto__ toString");
    index.flushPostings();
    expect(index.termCount).toBeGreaterThan(200_000);
    // A short note: its postings sorted and merged. An array of one entry a term was 800 KB here.
    addText(index, "short.md", "w5x7 w99x1999 fresh words constructor toString");
    expect(index.mergeSome(() => true)).toBe(false); // sorted: the copying is left
    expect(index.logBytes()).toBeLessThan(200_000);
    while (!index.mergeSome(() => true));
    for (const [q, paths] of [["w5x7", ["n5.md", "short.md"]], ["fresh", ["short.md"]], ["constructor", null]] as const) {
      const hits = index.search(parseQuery(q), req(q, { limit: 500 }), "en").res.hits.map((h) => h.path);
      if (paths) expect(hits.sort()).toEqual(paths);
      else expect(hits.length).toBe(101);
    }
  });

  test("a chunk's terms are counted in room for the chunk, not the dictionary; each term's weighted tf in the order it first came", () => {
    const index = withSegments(new InvertedIndex());
    for (let i = 0; i < 50; i++) addText(index, `n${i}.md`, Array.from({ length: 4000 }, (_, j) => `w${i}x${j}`).join(" "));
    expect(index.termCount).toBeGreaterThan(200_000);
    // 1,500 distinct words (the table grows past its first room), each k + 1 times, then the
    // dictionary's last terms and a word in the title (weighted 4) and the body.
    const words = Array.from({ length: 1500 }, (_, k) => `v${k}`);
    const body = words.map((w, k) => Array(1 + (k % 4)).fill(w).join(" ")).join(" ") + " w49x3999 constructor w49x3998 constructor";
    const chunk = { ...chunkNote("t.md", body, null, { maxWords: 100_000 })[0], title: "constructor toString" };
    const b = index.docBuilder();
    b.addChunk(chunk, "en");
    expect(b.tableBytes).toBeLessThan(200_000); // an array of 8 bytes a term: 1.6 MB
    const got = new Map<string, number>();
    const names: string[] = [];
    for (let i = b.postOff[0]; i < b.postOff[1]; i++) {
      const name = index.dict.name(b.terms[i]);
      names.push(name);
      got.set(name, b.tfs[i]);
    }
    expect(names.slice(0, 2)).toEqual(["constructor", "tostring"]); // the title's first
    expect(names.filter((n) => n.startsWith("v"))).toEqual(words);
    words.forEach((w, k) => expect(got.get(w)).toBe(1 + (k % 4)));
    expect(got.get("constructor")).toBe(4 + 2);
    expect(got.get("tostring")).toBe(4);
    expect(got.get("w49x3999")).toBe(1);
    expect(names.length).toBe(1500 + 4);
  });

  test("a build's flattening merges a pending log in steps first, and answers stay the same", () => {
    const index = withSegments(new InvertedIndex());
    const plain = withSegments(new InvertedIndex());
    const notes = 1100;
    const text = (i: number) => `common ${i % 2 ? "odd" : "even"} ` + Array.from({ length: 250 }, (_, j) => String(1_000_000 + i * 250 + j)).join(" ");
    for (let i = 0; i < notes; i++) {
      addText(index, `n${i}.md`, text(i));
      addText(plain, `n${i}.md`, text(i));
    }
    addText(index, "last.md", "1999999 common");
    addText(plain, "last.md", "1999999 common");
    expect(index.dict.size).toBeGreaterThan(FLATTEN_MIN_TERMS);
    // The first step sorts the log and stops there: the merge is under way, not done at once.
    expect(index.flattenNewLists(() => true)).toBe(true);
    expect(index.mergeDue).toBe(true);
    let steps = 1;
    while (index.flattenNewLists(() => true)) steps++;
    expect(steps).toBeGreaterThan(100);
    expect(index.mergeDue).toBe(false);
    for (const q of ["common", "odd", "1000000", "1137749", "1000250 common", '"common odd"', "1999999"]) {
      expect(index.search(parseQuery(q), req(q, { limit: 50 }), "en").res).toEqual(plain.search(parseQuery(q), req(q, { limit: 50 }), "en").res);
    }
  });

  test("a restored index of more terms than one block of counts holds every list whole, its postings summed over all segments", async () => {
    // 150k terms: three of finishRestore's blocks of 65,536; a common word in every segment, and
    // words shared by two notes in different segments.
    const index = withSegments(new InvertedIndex());
    for (let i = 0; i < 300; i++) {
      const path = `n${i}.md`;
      const words = ["constructor", "__proto__"];
      for (let j = 0; j < 500; j++) words.push(`t${(i * 500 + j).toString(36)}`);
      words.push(`pair${i >> 1}`);
      const text = words.join(" ");
      const chunks = chunkNote(path, text, null, { maxWords: 300 });
      const b = index.docBuilder();
      for (const c of chunks) b.addChunk(c, "en");
      index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
    }
    expect(index.dict.size).toBeGreaterThan(150_000);
    const { segs, dict } = savedOf(index);
    const restored = await withDict(dict);
    segs.forEach((b, k) => restored.restoreSegment(k, b));
    let yields = 0;
    await restored.finishRestore(async () => {
      yields++;
    });
    expect(yields).toBeGreaterThanOrEqual(3);
    const wrong: number[] = [];
    for (let g = 0; g < index.dict.size; g++) if (restored.listN(g) !== index.listN(g)) wrong.push(g);
    expect(wrong).toEqual([]);
    expect(restored.listN(restored.dict.get("constructor")!)).toBe(index.listN(index.dict.get("constructor")!));
    expect(restored.listN(restored.dict.get("constructor")!)).toBeGreaterThanOrEqual(300);
    expect(restored.search(parseQuery("pair77"), req("pair77"), "en").res.hits.map((h) => h.path).sort()).toEqual(["n154.md", "n155.md"]);
    expect(restored.search(parseQuery(`t${(299 * 500 + 499).toString(36)}`), req("x"), "en").res.hits.map((h) => h.path)).toEqual(["n299.md"]);
  });

  test("finishRestore sums the counts in blocks of at most 65,536 terms and about 262,144 segment entries", () => {
    // The bench's 100k vault: ~30k terms, most of them in most of 256 segments.
    expect(countBlock(30_000, 30_000 * 200)).toBe(1310);
    // The varied vault: 4.65M terms, most in one segment.
    expect(countBlock(4_650_000, 5_000_000)).toBe(65_536);
    expect(countBlock(150_000, 150_000 * 2)).toBe(65_536);
    expect(countBlock(10, 1 << 30)).toBe(256);
    expect(countBlock(0, 0)).toBe(256);
  });

  test("a restored index answers as the one saved whether its lists are decoded on first use, in the background, laid out again or saved again", async () => {
    const build = () => {
      const index = withSegments(new InvertedIndex());
      // Over 4,096 terms and 16k postings: the background decodes them in several blocks.
      for (let i = 0; i < 1000; i++) {
        const path = `n${i}.md`;
        const text = `common words for all ${i % 3 ? "odd" : "even"} tag${i % 50} unique${i} pottery${i % 7} y${i % 3} ${Array.from({ length: 20 }, (_, j) => `w${(i * 20 + j) % 4999} x${j}`).join(" ")}`;
        const chunks = chunkNote(path, text, null, { maxWords: 300 });
        const b = index.docBuilder();
        for (const c of chunks) b.addChunk(c, "en");
        index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
      }
      return index;
    };
    const save = (index: InvertedIndex) => {
      const job = index.segmentWriter(Array.from({ length: SEGMENT_COUNT }, (_, k) => k));
      while (!job.step(() => false));
      const segs = Array.from({ length: SEGMENT_COUNT }, (_, k) => ({ rest: Object.fromEntries(Object.entries(job.blobs(k)).map(([n, v]) => [n, v.slice()])) as unknown as RestoredBlobs }));
      return { dict: index.dictBytes().slice(), segs };
    };
    const restore = async (saved: ReturnType<typeof save>) => {
      const index = new InvertedIndex();
      await index.restoreDict(saved.dict, async () => {});
      withSegments(index); // restoring the dictionary starts from a clear index
      saved.segs.forEach(({ rest }, k) => index.restoreSegment(k, rest));
      await index.finishRestore(async () => {});
      return index;
    };
    // The last four score their common words only in the notes the rare ones found, skipping to
    // those notes' chunks in the lists: a restored list (its segments' parts one after another) is
    // sorted by chunk id first.
    const queries = ["common", "odd", "even", "tag7", "unique101", "pott*", "unique1*", '"all odd"', "common -even", "unique101 common", "tag7 odd", "pottery3 tag7 common", "tag7 common -even"];
    const run = (index: InvertedIndex) => queries.map((q) => index.search(parseQuery(q), req(q, { limit: 1000, snippetWords: 6 }), "en").res);
    const ascending = (index: InvertedIndex) => {
      for (let g = 0; g < index.lists.length; g++) {
        const l = index.listAt(g);
        for (let i = 1; l && i < l.n; i++) if (l.ids[i] <= l.ids[i - 1]) return false;
      }
      return true;
    };
    // Answers compared as JSON (a deep equal of 13 answers of up to 1,000 hits, eleven times, was most
    // of this test's time).
    const json = (x: unknown) => JSON.stringify(x);
    const bytesOf = (x: ReturnType<typeof save>) => [x.dict, ...x.segs.flatMap(({ rest }) => Object.values(rest))].map((v) => Buffer.from(v).toString("base64"));
    const original = build();
    const expected = run(original);
    const saved = save(original);
    expect(expected[0].total_files).toBe(1000);
    expect(expected[10].total_files).toBe(13); // tag7 odd: 13 of the 20 notes with tag7 (7, 57, 107, …)
    expect(ascending(original)).toBe(true);

    // Searched at once: the query's lists are decoded (and made objects) on first use.
    const a = await restore(saved);
    expect(a.hasEncodedLists).toBe(true);
    // At a limit the notes with every word reach (else every note is scored again, without skipping).
    const top5 = ["tag7 odd", "tag7 common", "pottery3 common", "tag7 common -even"];
    const skipping = new Scorer();
    const five = (index: InvertedIndex, scorer?: Scorer) => top5.map((q) => (scorer ? scorer.run(index, parseQuery(q), req(q, { limit: 5 }), "en", true).answer.res : index.search(parseQuery(q), req(q, { limit: 5 }), "en").res));
    expect(five(a, skipping)).toEqual(five(original));
    // All but "pottery3 common" (143 notes: "common"'s 1,000 postings are read through).
    expect(skipping.skipped).toBe(3);
    expect(json(run(a))).toBe(json(expected));
    // Decoded in the background, in steps, then searched.
    const b = await restore(saved);
    while (b.decodeSomeLists(() => true));
    expect(b.hasEncodedLists).toBe(false);
    expect(json(run(b))).toBe(json(expected));
    expect(b.sampleTerms([0, 1])).toEqual(original.sampleTerms([0, 1]));
    // A long list (over SegmentLoader.blockPostings) is decoded first in a step of its own: after
    // short ones in one step, it made a step of 180k postings at 100k notes. The x0..x19 lists (1,000
    // postings each) come between short w-lists in the dictionary's order.
    const limited = await restore(saved);
    const was = SegmentLoader.blockPostings;
    SegmentLoader.blockPostings = 200;
    try {
      const r = limited.restored!;
      const encoded = Uint8Array.from(r.encoded);
      let calls = 0;
      let longFirst = 0;
      for (let more = true; more; calls++) {
        more = limited.decodeSomeLists(() => false);
        const now = limited.restored ? limited.restored.encoded : new Uint8Array(encoded.length);
        const decoded: number[] = [];
        for (let g = 0; g < encoded.length; g++) if (encoded[g] && !now[g]) decoded.push(r.n[g]);
        encoded.set(now);
        // At most one long list a step, and only as its first.
        expect(decoded.filter((n) => n > 200).length).toBeLessThanOrEqual(1);
        if (decoded.some((n) => n > 200)) {
          expect(decoded[0]).toBeGreaterThan(200);
          longFirst++;
        }
      }
      expect(longFirst).toBeGreaterThan(20);
      expect(calls).toBeGreaterThan(longFirst);
    } finally {
      SegmentLoader.blockPostings = was;
    }
    expect(limited.hasEncodedLists).toBe(false);
    expect(json(run(limited))).toBe(json(expected));
    // With its deadline always passed, a long list is decoded and sorted in pieces of ~200 postings
    // (its parts, its marks by chunk id, the marks read back), one a call, and stays encoded until it
    // is done: a word in every note at 100k notes (~700k postings) was one step of 40–64 ms. Then a
    // search decodes each long list whole at its 2nd, 7th or 11th call (while its parts, its marks or
    // their reading back are under way); the lists after it are still sorted right (its marks were
    // cleared: the y-words' and "odd"'s lists hold fewer notes than those before them).
    for (const interrupt of [-1, 2, 7, 11]) {
      const pieces = await restore(saved);
      const wasSort = SegmentLoader.sortEarly;
      SegmentLoader.blockPostings = 200;
      SegmentLoader.sortEarly = 100;
      try {
        const r = pieces.restored!;
        const long: number[] = [];
        for (let g = 0; g < r.n.length; g++) if (r.encoded[g] && r.n[g] > 200) long.push(g);
        expect(long.length).toBeGreaterThan(20);
        let idle = 0;
        let interrupted = 0;
        let under = -1;
        let callsOnIt = 0;
        for (let more = true; more; ) {
          const before = r.encoded.reduce((x, v) => x + v, 0);
          more = pieces.decodeSomeLists(() => true);
          if (pieces.restored && r.encoded.reduce((x, v) => x + v, 0) === before) idle++;
          const now = long.find((g) => r.encoded[g]) ?? -1;
          callsOnIt = now === under ? callsOnIt + 1 : 1;
          under = now;
          if (interrupt >= 0 && more && under >= 0 && callsOnIt === interrupt) {
            const q = pieces.dict.name(under);
            pieces.search(parseQuery(q), req(q), "en");
            expect(r.encoded[under]).toBe(0);
            interrupted++;
          }
        }
        if (interrupt >= 0) expect(interrupted).toBeGreaterThan(5);
        // ~1,000 postings in 32 parts: 5 calls decoding, 5 marking, 2 reading back.
        else expect(idle).toBeGreaterThan(long.length * 8);
        // Every list of 100 postings or more ascends, the lists decoded in pieces included.
        for (let g = 0; g < r.n.length; g++) {
          if (r.n[g] < 100 || (interrupt >= 0 && r.unsorted[g])) continue;
          expect(r.unsorted[g]).toBe(0);
          for (let i = r.off[g] + 1; i < r.off[g] + r.n[g]; i++) if (r.ids[i] <= r.ids[i - 1]) throw new Error(`term ${pieces.dict.name(g)} does not ascend`);
        }
      } finally {
        SegmentLoader.blockPostings = was;
        SegmentLoader.sortEarly = wasSort;
      }
      expect(pieces.hasEncodedLists).toBe(false);
      expect(json(run(pieces))).toBe(json(expected));
      expect(bytesOf(save(pieces))).toEqual(bytesOf(saved));
    }
    // Searches between the background's steps decode their own lists first; the walk skips those.
    const mixed = await restore(saved);
    let turn = 0;
    let steps = 0;
    for (; mixed.decodeSomeLists(() => true); steps++) mixed.search(parseQuery(queries[turn % queries.length]), req(queries[turn++ % queries.length]), "en");
    expect(steps).toBeGreaterThan(1);
    expect(mixed.hasEncodedLists).toBe(false);
    expect(json(run(mixed))).toBe(json(expected));
    // Half the notes deleted and the lists laid out again, before any was used.
    const c = await restore(saved);
    for (let i = 0; i < 1000; i += 2) c.removeDoc(`n${i}.md`);
    for (let i = 0; i < 1000; i += 2) original.removeDoc(`n${i}.md`);
    for (const index of [c, original]) {
      const state = { seg: 0, k: 0 };
      while (index.compactSome(state, () => false));
    }
    expect(c.hasEncodedLists).toBe(false);
    // Laid out again, every list ascends, restored or not.
    expect(ascending(c)).toBe(true);
    expect(json(run(c))).toBe(json(run(original)));
    expect(run(c)[0].total_files).toBe(500);
    // Packed, both save the same bytes.
    expect(c.packedPostings()).toBe(c.totalPostings);
    expect(bytesOf(save(c))).toEqual(bytesOf(save(original)));
    // The same with long lists packed across steps, and searches between the steps that skip in
    // "common" and "odd", sorting them in place the first time (one under way is read again).
    const cPieces = await restore(saved);
    for (let i = 0; i < 1000; i += 2) cPieces.removeDoc(`n${i}.md`);
    const wasLong = compactionLimits.longList;
    compactionLimits.longList = 300;
    try {
      const state = { seg: 0, k: 0 };
      for (let i = 0; cPieces.compactSome(state, () => true); i++) if (i % 2 === 1) expect(five(cPieces, new Scorer())).toEqual(five(original));
    } finally {
      compactionLimits.longList = wasLong;
    }
    expect(ascending(cPieces)).toBe(true);
    expect(json(run(cPieces))).toBe(json(run(original)));
    expect(bytesOf(save(cPieces))).toEqual(bytesOf(save(original)));
    // Saved again before any list was used: the same bytes as saving the original.
    const d = await restore(saved);
    expect(bytesOf(save(d))).toEqual(bytesOf(saved));
    // And after searches sorted some of its lists: each segment's part of a list is in the same order.
    const e = await restore(saved);
    expect(ascending(e)).toBe(false);
    run(e);
    expect(bytesOf(save(e))).toEqual(bytesOf(saved));
  });

  test("notes restored before the vault was listed take the listing's path strings in steps, in the same order; a change between steps starts it again", async () => {
    const build = () => {
      const index = withSegments(new InvertedIndex());
      for (let i = 0; i < 700; i++) addText(index, `f${i % 7}/n${i}.md`, `shared words w${i} constructor __proto__ toString`);
      return index;
    };
    const { segs, dict } = savedOf(build());
    const restore = async (known: (p: string) => boolean) => {
      const index = await withDict(dict);
      index.listedPath = (p) => (known(p) ? p : undefined);
      segs.forEach((b, k) => index.restoreSegment(k, b));
      await index.finishRestore(async () => {});
      return index;
    };
    const q = parseQuery("shared w5");
    // Half the notes listed while loading: the other half counted, then shared in steps of 256 notes.
    const a = await restore((p) => p.startsWith("f1/") || p.startsWith("f2/") || p.startsWith("f3/"));
    expect(a.unlisted).toBe(400);
    const before = [...a.docs.keys()];
    const answer = JSON.stringify(a.search(q, req("shared w5"), "en").res);
    const asked: string[] = [];
    a.listedPath = (p) => (asked.push(p), p);
    let steps = 1;
    while (!a.sharePaths(() => true)) steps++;
    expect(steps).toBe(3); // 700 notes, a look at the deadline every 256
    expect(a.unlisted).toBe(0);
    expect([...a.docs.keys()]).toEqual(before);
    for (const [p, d] of a.docs) expect(d.path).toBe(p);
    expect(new Set(asked).size).toBe(700);
    expect(JSON.stringify(a.search(q, req("shared w5"), "en").res)).toBe(answer);
    // Nothing left to share: done at once, nothing asked.
    asked.length = 0;
    expect(a.sharePaths(() => true)).toBe(true);
    expect(asked).toEqual([]);

    // A note removed after the steps passed it: the map is made again from the start, without it.
    const b = await restore(() => false);
    expect(b.unlisted).toBe(700);
    b.listedPath = (p) => p;
    expect(b.sharePaths(() => true)).toBe(false);
    const gone = [...b.docs.keys()][3];
    expect(b.removeDoc(gone)).not.toBeNull();
    while (!b.sharePaths(() => true));
    expect(b.docs.size).toBe(699);
    expect(b.docs.has(gone)).toBe(false);
    expect([...b.docs.keys()]).toEqual(before.filter((p) => p !== gone));
  });

  test("a segment restores in pieces of notes (a yield after its JSON, then every 64 notes): nothing is registered meanwhile, and it answers as restored at once", async () => {
    const build = () => {
      const index = withSegments(new InvertedIndex());
      for (let i = 0; i < 2600; i++) addText(index, `d${i % 9}/n${i}.md`, `kiln glaze w${i % 97} u${i} constructor __proto__ toString ${i % 2 ? "odd" : "even"}`);
      return index;
    };
    const { segs, dict } = savedOf(build());
    const whole = await withDict(dict);
    segs.forEach((b, k) => whole.restoreSegment(k, b));
    await whole.finishRestore(async () => {});
    const pieces = await withDict(dict);
    let most = 0;
    for (let k = 0; k < SEGMENT_COUNT; k++) {
      const notes = (JSON.parse(new TextDecoder().decode(segs[k].docs)) as unknown[]).length;
      most = Math.max(most, notes);
      let yields = 0;
      for (const steps = pieces.restoreSegmentSteps(k, segs[k]); !steps.next().done; ) {
        yields++;
        // Between pieces no note is registered (a search meanwhile sees none of them).
        if (pieces.docs.size !== 0) throw new Error(`a note registered while segment ${k} restores`);
      }
      expect({ k, yields }).toEqual({ k, yields: 1 + Math.floor(notes / 64) });
    }
    expect(most).toBeGreaterThan(64);
    await pieces.finishRestore(async () => {});
    expect(pieces.docs.size).toBe(2600);
    expect([...pieces.docs.keys()]).toEqual([...whole.docs.keys()]);
    const queries = ["kiln", "w13 odd", "u2011", "constructor __proto__", '"kiln glaze" even', "toString -odd"];
    const run = (index: InvertedIndex) => JSON.stringify(queries.map((q) => index.search(parseQuery(q), req(q, { limit: 50 }), "en").res));
    expect(run(pieces)).toBe(run(whole));
    expect(JSON.parse(run(pieces))[0].total_files).toBe(2600);
  });

  test("an index saved with each note's hash as hashText's string loads it as the number hash53 gives the same text", async () => {
    const index = withSegments(new InvertedIndex());
    const texts = new Map<string, string>();
    for (let i = 0; i < 200; i++) {
      const path = i === 7 ? "constructor.md" : `n${i}.md`;
      const text = `note ${i} about __proto__ and toString ${i % 5 ? "glaze" : "kiln"}`;
      texts.set(path, text);
      const chunks = chunkNote(path, text, null, { maxWords: 300 });
      const b = index.docBuilder();
      for (const c of chunks) b.addChunk(c, "en");
      index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(text), frontmatter: {}, tags: [] }, chunks, b);
    }
    const job = index.segmentWriter(Array.from({ length: SEGMENT_COUNT }, (_, k) => k));
    while (!job.step(() => false));
    const restored = withSegments(new InvertedIndex());
    await restored.restoreDict(index.dictBytes().slice(), async () => {});
    withSegments(restored);
    let rewritten = 0;
    for (let k = 0; k < SEGMENT_COUNT; k++) {
      const blobs = Object.fromEntries(Object.entries(job.blobs(k)).map(([n, v]) => [n, v.slice()])) as unknown as RestoredBlobs;
      // As an earlier version saved it: "h" the note's hashText.
      const docs = JSON.parse(new TextDecoder().decode(blobs.docs)) as { p: string; h: unknown }[];
      for (const d of docs) {
        expect(d.h).toBe(hash53(texts.get(d.p)!));
        d.h = hashText(texts.get(d.p)!);
        rewritten++;
      }
      blobs.docs = new TextEncoder().encode(JSON.stringify(docs));
      restored.restoreSegment(k, blobs);
    }
    await restored.finishRestore(async () => {});
    expect(rewritten).toBe(200);
    for (const [path, text] of texts) expect(restored.docs.get(path)?.hash).toBe(hash53(text));
    expect(restored.search(parseQuery("kiln"), req("kiln", { limit: 100 }), "en").res.total_files).toBe(40);
  });

  test("warm-up terms: words of letters only, at growing list sizes, sampled from a large dictionary", () => {
    const index = withSegments(new InvertedIndex());
    const letters = (n: number) => n.toString(26).replace(/[0-9]/g, (d) => "qrstuvwxyz"[Number(d)]);
    for (let i = 0; i < 4000; i++) {
      const path = `n${i}.md`;
      // A word of its own, a word shared by 1 in 10 notes, one shared by half of them, and a number.
      const text = `own${letters(i)} tenth${letters(i % 10)} half${i % 2 ? "odd" : "even"} 42x${i}`;
      const chunks = chunkNote(path, text, null, { maxWords: 300 });
      const b = index.docBuilder();
      for (const c of chunks) b.addChunk(c, "en");
      index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
    }
    expect(index.termCount).toBeGreaterThan(8000);
    const picked = index.sampleTerms([0, 0.5, 0.999, 1]);
    const size = (t: string) => index.lookup(t)!.n;
    expect(picked.every((t) => /^\p{L}+$/u.test(t))).toBe(true);
    expect(picked.map(size)).toEqual([...picked.map(size)].sort((a, b) => a - b));
    expect(size(picked[0])).toBe(1);
    expect(size(picked[3])).toBeGreaterThanOrEqual(400); // a shared word (the sample may skip the two commonest)
    // With a cap on list sizes (the warm-up's), the top quantile is the largest list under it.
    const capped = index.sampleTerms([0, 1], 100);
    expect(capped.map(size).every((n) => n <= 100)).toBe(true);
    expect(size(capped[1])).toBeLessThan(size(picked[3])); // the shared words are over the cap
    expect(index.sampleTerms([1], 0)).toEqual([]);
  });

  test("the warm-up's sample counts a word's other forms: a small list whose forms are long is passed over", () => {
    const index = withSegments(new InvertedIndex());
    const add = (path: string, text: string) => addText(index, path, text);
    // "sync" in 50 notes, its form "syncs" in 300; every other word in at most 40.
    for (let i = 0; i < 300; i++) add(`n${i}.md`, `${i < 50 ? "sync" : ""} syncs word${"qrstuvwx"[i % 8]}`);
    const size = (t: string) => index.lookup(t)!.n;
    expect(size("sync")).toBe(50);
    expect(index.sampleTerms([1], 100)).toEqual(["sync"]);
    const [picked] = index.sampleTerms([1], 100, "en");
    expect(picked).not.toBe("sync");
    expect(index.dict.forms(picked, "en").reduce((n, g) => n + index.listN(g), 0)).toBeLessThanOrEqual(100);
  });

  test("saving splits the long posting lists of common terms across steps, not only every 256 lists", () => {
    const index = withSegments(new InvertedIndex());
    // Paths made of 24 words, so that the whole index has few terms (few lists, some very long).
    const w = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey yankee".split(" ");
    for (let i = 0; i < 12_000; i++) {
      const path = `${w[i % 24]} ${w[Math.floor(i / 24) % 24]} ${w[Math.floor(i / 576)]}.md`;
      const text = `common words everywhere tag${i % 40}`;
      const chunks = chunkNote(path, text, null, { maxWords: 300 });
      const b = index.docBuilder();
      for (const c of chunks) b.addChunk(c, "en");
      index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
    }
    expect(index.termCount).toBeLessThan(256);
    const job = index.segmentWriter(Array.from({ length: SEGMENT_COUNT }, (_, k) => k));
    let steps = 1;
    // A deadline that has always passed: one check's worth of work per step.
    while (!job.step(() => true)) steps++;
    expect(steps).toBeGreaterThan(1);
    let postings = 0;
    for (let k = 0; k < SEGMENT_COUNT; k++) postings += job.blobs(k).postings.length;
    expect(postings).toBeGreaterThan(2 * 48_000);
  });

  test("saving writes a list longer than a step's share over several steps, and the files are those of a save in one go", () => {
    const build = () => {
      const index = withSegments(new InvertedIndex());
      // 40k notes holding "constructor" and "toString": two lists of 40k postings, longer than a step's 32k.
      for (let i = 0; i < 40_000; i++) {
        const path = `n${i % 97}/p${i}.md`;
        const text = `constructor toString w${i % 13}`;
        const chunks = chunkNote(path, text, null, { maxWords: 300 });
        const b = index.docBuilder();
        for (const c of chunks) b.addChunk(c, "en");
        index.addDoc({ seg: segmentOf(path), path, mtime: 0, size: text.length, hash: hash53(path), frontmatter: {}, tags: [] }, chunks, b);
      }
      return index;
    };
    const files = (job: ReturnType<InvertedIndex["segmentWriter"]>) =>
      Array.from({ length: SEGMENT_COUNT }, (_, k) => Object.fromEntries(Object.entries(job.blobs(k)).map(([n, v]) => [n, Buffer.from(v).toString("base64")])));
    const index = build();
    expect(index.lookup("constructor")!.n).toBe(40_000);
    const inOneGo = index.segmentWriter(Array.from({ length: SEGMENT_COUNT }, (_, k) => k));
    while (!inOneGo.step(() => false));
    expect(inOneGo.mostInAStep).toBeGreaterThan(80_000);
    const oneGo = files(inOneGo);
    const again = build();
    const stepped = again.segmentWriter(Array.from({ length: SEGMENT_COUNT }, (_, k) => k));
    while (!stepped.step(() => true));
    // No step went through a whole list of 40k postings.
    expect(stepped.mostInAStep).toBeLessThanOrEqual(32_768 + 1024);
    expect(files(stepped)).toEqual(oneGo);
  });

  test("a save resumed inside a long packed list decodes it again only when another list was decoded in its place meanwhile; the files are those of a save in one go", () => {
    const build = () => {
      const index = withSegments(new InvertedIndex());
      for (let i = 0; i < 40_000; i++) addText(index, `n${i % 97}/p${i}.md`, `constructor toString w${i % 13}`);
      const state = { seg: 0, k: 0 };
      while (index.compactSome(state, () => false));
      expect(index.packedPostings()).toBe(index.totalPostings);
      return index;
    };
    const all = Array.from({ length: SEGMENT_COUNT }, (_, k) => k);
    const files = (job: ReturnType<InvertedIndex["segmentWriter"]>) =>
      Array.from({ length: SEGMENT_COUNT }, (_, k) => Object.fromEntries(Object.entries(job.blobs(k)).map(([n, v]) => [n, Buffer.from(v).toString("base64")])));
    const decodesOf = (index: InvertedIndex, deadline: () => boolean) => {
      const job = index.segmentWriter(all);
      const before = peekStamp();
      let steps = 0;
      while (!job.step(deadline)) steps++;
      return { decodes: peekStamp() - before, steps, files: files(job) };
    };
    const oneGo = decodesOf(build(), () => false);
    expect(oneGo.steps).toBe(0);
    // A step at a time: the two lists of 40k postings are each cut between steps, and read once.
    const stepped = decodesOf(build(), () => true);
    expect(stepped.steps).toBeGreaterThan(10);
    expect(stepped.files).toEqual(oneGo.files);
    expect(stepped.decodes).toBe(oneGo.decodes);
    // Another list decoded in peek's scratch between steps: the list is decoded again, and the files are the same.
    const other = build();
    const w3 = other.dict.get("w3")!;
    const clobbered = decodesOf(other, () => {
      other.peekList(w3);
      return true;
    });
    expect(clobbered.files).toEqual(oneGo.files);
    expect(clobbered.decodes).toBeGreaterThan(oneGo.decodes + clobbered.steps);
  });

  test("question and stop words are not required terms", async () => {
    expect(parseQuery("what are callouts").clauses).toEqual([[{ kind: "term", term: "callouts", prefix: false }]]);
    expect(parseQuery("how do aliases work").clauses).toEqual([[{ kind: "term", term: "aliases", prefix: false }]]);
    // Alone, or in quotes, they still count.
    expect(parseQuery("the").clauses.length).toBe(1);
    expect(parseQuery('"what is"').clauses[0][0]).toMatchObject({ kind: "phrase" });
    const { svc } = await started(new MemoryVault({ "Callouts.md": "Callouts highlight a block.", "Other.md": "Nothing here." }));
    expect((await paths(svc, "what are callouts"))).toEqual(["Callouts.md"]);
    expect((await paths(svc, "how do I use callouts"))).toEqual(["Callouts.md"]);
    await svc.close();
  });

  test("a note whose title holds the query ranks first", async () => {
    const { svc } = await started(
      new MemoryVault({
        "Guides/Outline.md": "The outline view lists headings.",
        "Guides/Editing.md": "Headings, headings everywhere: the outline of headings helps; headings and more headings in an outline.",
      }),
    );
    expect((await paths(svc, "outline of headings"))[0]).toBe("Guides/Outline.md");
    await svc.close();
  });

  test("among many matching notes, the one whose title holds the query still ranks first; a folder narrows them", async () => {
    // 600 notes match "kiln" and score above the titled note's body: the title boost works on a pool of the best.
    const files: Record<string, string> = {};
    for (let i = 0; i < 600; i++) files[`Logs/log${i}.md`] = `Kiln log ${i}: the kiln ${"kiln ".repeat(i % 7)}fired.`;
    files["Guides/Kiln.md"] = "How to load it: shelves first, then the kiln posts.";
    const { svc } = await started(new MemoryVault(files));
    expect((await paths(svc, "kiln"))[0]).toBe("Guides/Kiln.md");
    expect((await svc.search(req("kiln", { limit: 50 }))).total_files).toBe(601);
    expect((await paths(svc, "kiln", { folder: "Guides" }))).toEqual(["Guides/Kiln.md"]);
    expect((await paths(svc, "kiln -shelves"))).not.toContain("Guides/Kiln.md");
    await svc.close();
  });

  test("aliases and prefixes earn the title boost, in a built index and a reloaded one; stop words in a title do not dilute it", async () => {
    const files: Record<string, string> = {};
    // Each body says the query's words more often than the titled notes do.
    for (let i = 0; i < 300; i++) files[`Logs/Firing schedule log ${i}.md`] = `Firing schedule and glaze notes ${i}: ${"glaze firing schedule outline ".repeat(1 + (i % 5))}`;
    files["Guides/Bisque.md"] = "---\naliases: [Firing Schedule]\n---\nRamp slowly; hold at the top.";
    files["Guides/The Outline of the Glaze.md"] = "Dip, wait, wipe the foot.";
    files["Guides/Outline glaze tips.md"] = "Dip, wait, wipe the foot.";
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const check = async (svc: SearchService) => {
      expect((await paths(svc, "firing schedule"))[0]).toBe("Guides/Bisque.md");
      expect((await paths(svc, "outl* glaze")).slice(0, 2)).toEqual(["Guides/The Outline of the Glaze.md", "Guides/Outline glaze tips.md"]);
    };
    const first = await started(vault, store);
    await check(first.svc);
    const before = (await first.svc.search(req("outl* glaze", { limit: 40 })));
    await first.svc.close();
    const again = await started(vault, store);
    expect(again.logs.filter((l) => /rebuild|unusable|inconsistent/i.test(l))).toEqual([]);
    await check(again.svc);
    expect((await again.svc.search(req("outl* glaze", { limit: 40 })))).toEqual(before);
    await again.svc.close();
  });

  test("TopK filled in pieces holds the k-th best score a full sort gives, ties and all", () => {
    let seed = 7;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(rnd() * 700);
      const score = new Float64Array(n);
      const distinct = 1 + Math.floor(rnd() * 50);
      for (let i = 0; i < n; i++) score[i] = round % 3 === 0 ? Math.floor(rnd() * distinct) : rnd() * 100;
      const list = Int32Array.from({ length: n }, (_, i) => (i * 7919) % n); // every slot once, shuffled (7919 is prime)
      const sorted = Float64Array.from(score).sort();
      const k = 1 + Math.floor(rnd() * n);
      const top = new TopK(k);
      const piece = 1 + Math.floor(rnd() * 50);
      for (let j = 0; j < n; j += piece) top.fill(list, score, j, Math.min(n, j + piece));
      top.index();
      expect(top.min()).toBe(sorted[n - k]);
      expect(new TopK(k, list, score).min()).toBe(sorted[n - k]);
    }
    expect(new TopK(5, Int32Array.of(0, 1), Float64Array.of(1, 2)).min()).toBe(-Infinity); // fewer than k
  });

  test("Japanese sentences with particles match their key words loosely", async () => {
    const pq = parseQuery("PDFを埋め込む方法");
    expect(pq.clauses[0]).toEqual([{ kind: "term", term: "pdf", prefix: false }]);
    expect(pq.clauses[1][0]).toMatchObject({ kind: "phrase", loose: { min: 3 } });
    const { svc } = await started(
      new MemoryVault({
        "ファイルの埋め込み.md": "# ファイルの埋め込み\n\nPDFをノートに埋め込むには、リンクの前に ! を付けます。",
        "ほか.md": "PDFの書き出しについて。",
      }),
    );
    expect((await paths(svc, "PDFを埋め込む方法"))[0]).toBe("ファイルの埋め込み.md");
    // A CJK phrase in quotes stays strict.
    expect((await paths(svc, '"埋め込む方法"'))).toEqual([]);
    await svc.close();
  });

  test("phrases are checked in order", async () => {
    const { svc } = await started(new MemoryVault({ "A.md": "sourdough bread starter", "B.md": "starter bread sourdough" }));
    expect((await paths(svc, '"bread starter"'))).toEqual(["A.md"]);
    expect((await paths(svc, '"starter bread"'))).toEqual(["B.md"]);
    await svc.close();
  });
});
