import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { loadSqlJs, readBlobs } from "../../src/core/search/db";
import { MemoryVault } from "../../src/core/memory-vault";
import { MemoryStateStore } from "../../src/core/state";
import { InvertedIndex } from "../../src/core/search/keyword/inverted-index";
import type { KeywordSearchServiceStats } from "../../src/core/search/service";
import { INDEX_FILE as FILE, makeSearch as make, searchPaths as paths, searchReq as req, startedSearch as started } from "../support/search-service";

/** Counts the vault's reads from now on: the count so far. */
function countReads(vault: MemoryVault): () => number {
  let reads = 0;
  const read = vault.read.bind(vault);
  vault.read = (p: string) => {
    reads++;
    return read(p);
  };
  return () => reads;
}




const notes = {
  "Garden/Roses.md": "---\ntags: [plants, craft/wood]\naliases: [Rosa]\nstatus: Done\n---\n# Roses\n\nPruning roses in early spring keeps them healthy.\n",
  "Garden/Tools.md": "# Tools\n\nA sharp pruning saw and gloves. Send an e-mail to the well-known shop.\n\nSee #craft for more.",
  "Kitchen/Bread.md": "# Bread\n\nKneading dough by hand; the oven must be hot. Sourdough starter needs feeding.",
  "Private/Secret.md": "pruning secrets nobody may see",
  "日本語/ノート.md": "# 検索\n\n東京都で庭の手入れをする方法について書きます。",
  "Korean.md": "한국어 문서입니다. 정원 가꾸기에 대하여.",
};

describe("keyword search service", () => {
  test("ranks, groups per file, filters, and hides hidden folders", async () => {
    const { svc } = await started(new MemoryVault(notes));
    expect(svc.status()).toMatchObject({ state: "queryable", documents_indexed: 5, queue_depth: 0 });
    expect((await paths(svc, "pruning")).sort()).toEqual(["Garden/Roses.md", "Garden/Tools.md"]);
    expect((await paths(svc, "secrets"))).toEqual([]);
    // Title/alias weight: "roses" in the title ranks first; alias is searchable.
    expect((await paths(svc, "roses"))[0]).toBe("Garden/Roses.md");
    expect((await paths(svc, "rosa"))).toEqual(["Garden/Roses.md"]);
    // Stemming: "prune" finds "pruning".
    expect((await paths(svc, "prune")).length).toBe(2);
    // Filters and folder.
    expect((await paths(svc, "pruning", { filters: { tags: "craft" } })).sort()).toEqual(["Garden/Roses.md", "Garden/Tools.md"]);
    expect((await paths(svc, "pruning", { filters: { tags: "plants" } }))).toEqual(["Garden/Roses.md"]);
    expect((await paths(svc, "pruning", { filters: { status: "done" } }))).toEqual(["Garden/Roses.md"]);
    expect((await paths(svc, "pruning", { filters: { status: "open" } }))).toEqual([]);
    expect((await paths(svc, "dough", { folder: "Garden" }))).toEqual([]);
    expect((await paths(svc, "dough", { folder: "Kitchen/" }))).toEqual(["Kitchen/Bread.md"]);
    // Hit shape.
    const hit = (await svc.search(req("pruning roses"))).hits[0];
    expect(hit).toMatchObject({ path: "Garden/Roses.md", title: "Roses", folder: "Garden", frontmatter: { status: "Done" } });
    expect(hit.sections[0]).toMatchObject({ line_start: 6, line_end: 8 });
    await svc.close();
  });

  test("query semantics: AND, OR, phrase, prefix, exclude, relaxed fallback, odd input", async () => {
    const { svc } = await started(new MemoryVault(notes));
    // Every word first; fewer such notes than the limit, so notes with some of the words follow, saying what they lack.
    const both = (await svc.search(req("pruning gloves")));
    expect(both.hits.map((h) => [h.path, h.missing])).toEqual([
      ["Garden/Tools.md", undefined],
      // The missing word as the user typed it, not its stem ("glove").
      ["Garden/Roses.md", ["gloves"]],
    ]);
    expect(both).toMatchObject({ total_files: 1, partial_files: 1, relaxed: false });
    expect((await paths(svc, "pruning gloves", { limit: 1 }))).toEqual(["Garden/Tools.md"]);
    expect((await paths(svc, "dough OR gloves")).sort()).toEqual(["Garden/Tools.md", "Kitchen/Bread.md"]);
    expect((await paths(svc, '"pruning saw"'))).toEqual(["Garden/Tools.md"]);
    expect((await paths(svc, '"saw pruning"'))).toEqual([]);
    expect((await paths(svc, "sourd*"))).toEqual(["Kitchen/Bread.md"]);
    expect((await paths(svc, "pruning -gloves"))).toEqual(["Garden/Roses.md"]);
    expect((await svc.search(req("-pruning"))).hits).toEqual([]);
    expect((await paths(svc, "e-mail"))).toEqual(["Garden/Tools.md"]);
    expect((await paths(svc, "well-known"))).toEqual(["Garden/Tools.md"]);
    expect((await paths(svc, "tag:plants"))).toEqual(["Garden/Roses.md"]);
    const relaxed = (await svc.search(req("dough zebra")));
    expect(relaxed.relaxed).toBe(true);
    expect(relaxed.hits.map((h) => h.path)).toEqual(["Kitchen/Bread.md"]);
    expect((await svc.search(req("dough"))).relaxed).toBe(false);
    for (const q of ["", "OR", "-", "*", '"', "(", "C++", "a:b", '"unbalanced', "[x]", "NOT", "- -", "**"]) {
      await expect(svc.search(req(q))).resolves.toBeDefined();
    }
    // Snippets centre on the matches.
    const snip = (await svc.search(req("feeding", { snippetWords: 3 }))).hits[0].sections[0].content;
    expect(snip).toContain("feeding");
    expect(snip.startsWith("…")).toBe(true);
    await svc.close();
  });

  test("a word finds its other forms, the form as typed ranking first; partial matches name the missing words as typed", async () => {
    const { svc } = await started(
      new MemoryVault({
        "Sync/Remote.md": "# Remote\n\nThe remote vault keeps a copy of every note.",
        "Sync/Remotely.md": "# Elsewhere\n\nNotes edited remotely reach the vault later.",
        "Sync/Local.md": "# Local\n\nThe local vault syncs on its own schedule.",
        "Sync/Syncing.md": "# Schedules\n\nSyncing runs every minute; a sync can be paused.",
      }),
    );
    // "remote" matches "remotely" too, but the note with the word as typed ranks first.
    expect((await paths(svc, "remote"))).toEqual(["Sync/Remote.md", "Sync/Remotely.md"]);
    // "syncing" finds "syncs" (same stem), the exact form first.
    expect((await paths(svc, "syncing"))).toEqual(["Sync/Syncing.md", "Sync/Local.md"]);
    // A partial match names the words it lacks as typed: "remote", not "remot"; "schedules", not "schedul" ("schedule" matches it).
    const res = (await svc.search(req("local remote schedules")));
    expect(res.hits.find((h) => h.path === "Sync/Local.md")?.missing).toEqual(["remote"]);
    expect(res.hits.find((h) => h.path === "Sync/Remote.md")?.missing).toEqual(["local", "schedules"]);
    // Snippets mark the other forms too: the section holding "remotely" is the one shown.
    const hit = (await svc.search(req("remote", { chunksPerFile: 1, snippetWords: 3 }))).hits.find((h) => h.path === "Sync/Remotely.md");
    expect(hit?.sections[0].content).toContain("remotely");
    await svc.close();
  });

  test("of two notes holding the same words as often, the one holding them close together ranks first", async () => {
    const filler = Array.from({ length: 40 }, (_, i) => `filler${i}`).join(" ");
    const { svc } = await started(
      new MemoryVault({
        "A far.md": `Glacier ${filler} turbine.`,
        "Z close.md": `Glacier turbine ${filler}.`,
      }),
    );
    expect((await paths(svc, "glacier turbine"))).toEqual(["Z close.md", "A far.md"]);
    await svc.close();
  });

  test("Japanese, Chinese-style and Korean queries find their notes", async () => {
    const { svc } = await started(new MemoryVault(notes));
    expect((await paths(svc, "東京都"))).toEqual(["日本語/ノート.md"]);
    expect((await paths(svc, "手入れ"))).toEqual(["日本語/ノート.md"]);
    expect((await paths(svc, "検索"))).toEqual(["日本語/ノート.md"]);
    expect((await paths(svc, "정원"))).toEqual(["Korean.md"]);
    expect((await paths(svc, "大阪"))).toEqual([]);
    await svc.close();
  });

  test("incremental: create, modify, rename, delete (and hidden moves)", async () => {
    const vault = new MemoryVault(notes);
    const { svc } = await started(vault);
    vault.write("New.md", "A fresh note about zeppelins.");
    expect(await svc.waitForIdle(5000)).toBe(true);
    expect((await paths(svc, "zeppelin"))).toEqual(["New.md"]);
    vault.write("New.md", "Now it is about submarines.");
    await svc.waitForIdle(5000);
    expect((await paths(svc, "zeppelin"))).toEqual([]);
    expect((await paths(svc, "submarine"))).toEqual(["New.md"]);
    vault.move("New.md", "Archive/Old.md");
    await svc.waitForIdle(5000);
    expect((await paths(svc, "submarine"))).toEqual(["Archive/Old.md"]);
    vault.move("Archive/Old.md", "Private/Old.md");
    await svc.waitForIdle(5000);
    expect((await paths(svc, "submarine"))).toEqual([]);
    vault.remove("Kitchen/Bread.md");
    await svc.waitForIdle(5000);
    expect((await paths(svc, "dough"))).toEqual([]);
    expect(svc.status().documents_indexed).toBe(4);
    await svc.close();
  });

  test("the postings log is merged in the worker's steps before it settles, not at once when it does", async () => {
    const vault = new MemoryVault(notes);
    const { svc } = await started(vault);
    const index = (svc as unknown as { index: InvertedIndex }).index;
    const atRelease: boolean[] = [];
    const release = index.releaseScratch.bind(index);
    index.releaseScratch = () => {
      atRelease.push(index.logPending);
      release();
    };
    vault.write("New.md", "constructor toString zeppelins and bread dough");
    expect(await svc.waitForIdle(5000)).toBe(true);
    expect(await paths(svc, "zeppelins")).toEqual(["New.md"]);
    expect(atRelease.length).toBeGreaterThan(0);
    expect(atRelease).not.toContain(true);
    await svc.close();
  });

  test("reconciles changes made while closed, without a full rebuild", async () => {
    const vault = new MemoryVault(notes);
    const store = new MemoryStateStore();
    const first = await started(vault, store);
    await first.svc.close();
    expect(store.files.get(FILE)?.length).toBeGreaterThan(0);

    vault.emitEvents = false;
    vault.write("Kitchen/Bread.md", "Now about pancakes.");
    vault.remove("Garden/Tools.md");
    vault.write("Added.md", "Brand new zucchini note.");
    vault.emitEvents = true;

    const reads = countReads(vault);
    const second = make(vault, store);
    await second.svc.start();
    // Queryable at once from the persisted index.
    expect(second.svc.status().state).toBe("queryable");
    expect(await second.svc.waitForIdle(5000)).toBe(true);
    expect(reads()).toBe(2); // only the modified and the added note were read
    // Once ready, the lists loaded from disk (and those the changes added to) are packed.
    const stats = (second.svc as unknown as { stats: KeywordSearchServiceStats }).stats;
    expect(stats.postings).toBeGreaterThan(0);
    expect(stats.packed).toBe(stats.postings);
    expect((await paths(second.svc, "pancake"))).toEqual(["Kitchen/Bread.md"]);
    expect((await paths(second.svc, "dough"))).toEqual([]);
    expect((await paths(second.svc, "gloves"))).toEqual([]);
    expect((await paths(second.svc, "zucchini"))).toEqual(["Added.md"]);
    expect((await paths(second.svc, "roses"))[0]).toBe("Garden/Roses.md");
    await second.svc.close();
  });

  test("a warm start that finds thousands of notes changed on disk counts its total while it indexes them, exactly once done", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 2600; i++) files[`F${i % 10}/n${i}.md`] = `# Note ${i}\n\nword${i % 50} constructor toString unique${i}\n`;
    const vault = new MemoryVault(files);
    const store = new MemoryStateStore();
    const first = await started(vault, store);
    await first.svc.close();
    // While closed: every note changed (a queue longer than one counted at every status), 40 deleted, 100 added.
    vault.emitEvents = false;
    for (let i = 0; i < 2600; i++) vault.write(`F${i % 10}/n${i}.md`, `# Note ${i}\n\nchanged${i % 50} unique${i}\n`);
    for (let i = 0; i < 40; i++) vault.remove(`F${i % 10}/n${i}.md`);
    for (let i = 0; i < 100; i++) vault.write(`New/m${i}.md`, `fresh note ${i} __proto__`);
    vault.emitEvents = true;
    let t = 0;
    const scheduler = { now: () => t++, yield: () => new Promise<void>((r) => setTimeout(r, 0)) };
    const second = make(vault, store, { scheduler });
    const seen: { total: number; indexed: number }[] = [];
    second.svc.onProgress((s) => seen.push({ total: s.documents_total, indexed: s.documents_indexed }));
    await second.svc.start();
    while (second.svc.hasPendingWork()) {
      const s = second.svc.status();
      seen.push({ total: s.documents_total, indexed: s.documents_indexed });
      await new Promise((r) => setTimeout(r, 1));
    }
    expect(await second.svc.waitForIdle(60_000)).toBe(true);
    expect(second.svc.status()).toMatchObject({ state: "queryable", documents_indexed: 2660, documents_total: 2660, queue_depth: 0 });
    // Meanwhile: never fewer notes in all than indexed, and never more than the saved index's and the added ones.
    expect(seen.length).toBeGreaterThan(3);
    for (const s of seen) {
      expect(s.total).toBeGreaterThanOrEqual(s.indexed);
      expect(s.total).toBeLessThanOrEqual(2700);
    }
    expect((await paths(second.svc, "unique2599"))).toEqual(["F9/n2599.md"]);
    expect((await paths(second.svc, "constructor"))).toEqual([]);
    expect((await paths(second.svc, "fresh proto"))).toHaveLength(10);
    await second.svc.close();
  });

  test("unchanged content (same hash) is not re-indexed", async () => {
    const vault = new MemoryVault(notes);
    const { svc } = await started(vault);
    const before = (await svc.search(req("dough"))).hits[0];
    vault.write("Kitchen/Bread.md", notes["Kitchen/Bread.md"]);
    await svc.waitForIdle(5000);
    expect((await svc.search(req("dough"))).hits[0]).toEqual(before);
    await svc.close();
  });

  test("corrupt database bytes and a schema change rebuild from the notes", async () => {
    const vault = new MemoryVault(notes);
    const store = new MemoryStateStore();
    await store.write(FILE, new TextEncoder().encode("this is not a database at all".repeat(100)));
    const a = await started(vault, store);
    expect((await paths(a.svc, "dough"))).toEqual(["Kitchen/Bread.md"]);
    expect(a.logs.some((l) => /rebuilding/i.test(l))).toBe(true);
    await a.svc.close();

    // Truncated file.
    store.files.set(FILE, store.files.get(FILE)!.slice(0, 3000));
    const b = await started(vault, store);
    expect((await paths(b.svc, "dough"))).toEqual(["Kitchen/Bread.md"]);
    await b.svc.close();

    // Another index version (e.g. a tokenizer change): rebuilt once.
    const c = await started(vault, store, { options: { debounceMs: 5, persistDebounceMs: 20, chunkWords: 123 } });
    expect(c.logs.some((l) => /format changed/.test(l))).toBe(true);
    expect((await paths(c.svc, "dough"))).toEqual(["Kitchen/Bread.md"]);
    await c.svc.close();
    const d = await started(vault, store, { options: { debounceMs: 5, persistDebounceMs: 20, chunkWords: 123 } });
    expect(d.logs.some((l) => /format changed|rebuilding/.test(l))).toBe(false);
    await d.svc.close();
  });

  test("a valid database our own reader does not expect is read through sql.js, not rebuilt", async () => {
    const vault = new MemoryVault(notes);
    const store = new MemoryStateStore();
    await (await started(vault, store)).svc.close();
    // A valid database our reader does not expect (the main file with a third column): sql.js reads it.
    const SQL = await loadSqlJs(sqlWasm);
    const main = readBlobs(store.files.get(FILE)!);
    const db = new SQL.Database();
    db.exec("CREATE TABLE blobs(name TEXT PRIMARY KEY, data BLOB, extra);");
    for (const [k, v] of main) db.run("INSERT INTO blobs VALUES (?, ?, 1)", [k, v]);
    store.files.set(FILE, db.export());
    db.close();
    expect(() => readBlobs(store.files.get(FILE)!)).toThrow(/key and a value/);
    const b = await started(vault, store);
    expect(b.svc.status().state).toBe("queryable");
    expect(b.logs.filter((l) => /rebuild|unreadable/i.test(l))).toEqual([]);
    expect((await paths(b.svc, "dough"))).toEqual(["Kitchen/Bread.md"]);
    await b.svc.close();
  });

  test("building, saving and loading do not use sql.js; only a file our reader declines is read with it", async () => {
    const vault = new MemoryVault(notes);
    const store = new MemoryStateStore();
    const withSqlJs = (logs: string[]) => logs.filter((l) => /with sql\.js/.test(l));
    const a = await started(vault, store);
    vault.write("Kitchen/Bread.md", notes["Kitchen/Bread.md"] + "\nRye flour.");
    await a.svc.waitForIdle(5000);
    await a.svc.close();
    expect(store.files.size).toBe(2); // the main file and the one segment of a small vault
    const b = await started(vault, store);
    expect(b.logs.filter((l) => /rebuild|unreadable|unusable/i.test(l))).toEqual([]);
    expect((await paths(b.svc, "rye"))).toEqual(["Kitchen/Bread.md"]);
    await b.svc.close();
    expect(withSqlJs([...a.logs, ...b.logs])).toEqual([]);
    // The main file with a third column: our reader declines it, sql.js (started now) reads it.
    const SQL = await loadSqlJs(sqlWasm);
    const other = new SQL.Database();
    other.exec("CREATE TABLE blobs(name TEXT PRIMARY KEY, data BLOB, extra);");
    for (const [k, v] of readBlobs(store.files.get(FILE)!)) other.run("INSERT INTO blobs VALUES (?, ?, 1)", [k, v]);
    store.files.set(FILE, other.export());
    other.close();
    const c = await started(vault, store);
    expect(c.logs.filter((l) => /rebuild|unreadable/i.test(l))).toEqual([]);
    expect((await paths(c.svc, "rye"))).toEqual(["Kitchen/Bread.md"]);
    await c.svc.close();
    expect(withSqlJs(c.logs)).toEqual([expect.stringMatching(/search-index\.sqlite is not laid out as this version writes it/)]);
  });

  test("oversize, binary and invalid UTF-8 notes are skipped with reasons", async () => {
    const vault = new MemoryVault({
      ...notes,
      "Big.md": "big ".repeat(400),
      "Binary.md": "abc\u0000def",
      "Bad.md": new Uint8Array([0x68, 0x69, 0xff, 0xfe, 0x20, 0x6f, 0x6b]),
    });
    const { svc } = await started(vault, undefined, { options: { maxNoteBytes: 1000, debounceMs: 5, persistDebounceMs: 20 } });
    const reasons = Object.fromEntries(svc.status().skipped.map((s) => [s.path, s.reason]));
    expect(reasons["Big.md"]).toMatch(/larger than/);
    expect(reasons["Binary.md"]).toMatch(/binary/);
    expect(reasons["Bad.md"]).toMatch(/UTF-8/);
    expect(svc.status().state).toBe("queryable");
    expect((await paths(svc, "dough"))).toEqual(["Kitchen/Bread.md"]);
    // Fixing a skipped note indexes it.
    vault.write("Binary.md", "now clean text about walruses");
    await svc.waitForIdle(5000);
    expect((await paths(svc, "walrus"))).toEqual(["Binary.md"]);
    expect(svc.status().skipped.map((s) => s.path)).not.toContain("Binary.md");
    await svc.close();
  });

  test("a skipped note deleted while closed leaves the skipped list at the next start; the others stay skipped, not read again", async () => {
    const vault = new MemoryVault({ ...notes, "Big.md": "big ".repeat(400), "Binary.md": "abc\u0000def", "constructor.md": "__proto__ ".repeat(300) });
    const store = new MemoryStateStore();
    const options = { maxNoteBytes: 1000, debounceMs: 5, persistDebounceMs: 20 };
    const first = await started(vault, store, { options });
    expect(first.svc.status().skipped.map((s) => s.path).sort()).toEqual(["Big.md", "Binary.md", "constructor.md"]);
    await first.svc.close();
    vault.emitEvents = false;
    vault.remove("Big.md");
    vault.emitEvents = true;
    const reads = countReads(vault);
    const second = make(vault, store, { options });
    await second.svc.start();
    expect(await second.svc.waitForIdle(5000)).toBe(true);
    expect(second.svc.status().skipped.map((s) => s.path).sort()).toEqual(["Binary.md", "constructor.md"]);
    expect(reads()).toBe(0);
    await second.svc.close();
  });

  test("a note that fails to index is skipped with its path and reason; the others are indexed", async () => {
    const vault = new MemoryVault({ ...notes, "Odd.md": "odd walrus note" });
    // What a host's metadata could do that we did not foresee (a value of the wrong type, say).
    const real = vault.getMetadata.bind(vault);
    jest.spyOn(vault, "getMetadata").mockImplementation((p) => {
      if (p === "Odd.md") throw new TypeError("e.charCodeAt is not a function");
      return real(p);
    });
    const { svc, logs } = await started(vault);
    const st = svc.status();
    expect(st.state).toBe("queryable");
    expect(st.skipped).toEqual([{ path: "Odd.md", reason: "could not be indexed: e.charCodeAt is not a function" }]);
    expect(st.last_error).toBe('"Odd.md": e.charCodeAt is not a function');
    expect(st.documents_indexed).toBe(Object.keys(notes).length - 1); // the hidden note is not indexed
    expect((await paths(svc, "dough"))).toEqual(["Kitchen/Bread.md"]);
    expect(logs).toEqual(expect.arrayContaining([expect.stringMatching(/^warn: Could not index "Odd.md"/), expect.stringMatching(/^debug: TypeError: e.charCodeAt[^\n]*\n\s+at /)]));
    await svc.close();
  });

  test("a loaded index is warmed up after its first reconciliation, not in start(), one search a task", async () => {
    const store = new MemoryStateStore();
    const vault = new MemoryVault(notes);
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the index as `this` (the spy's implementation below)
    const original = InvertedIndex.prototype.searchSliced;
    // The warm-up searches as the service does: in slices.
    const searches = jest.spyOn(InvertedIndex.prototype, "searchSliced");
    const sampled = jest.spyOn(InvertedIndex.prototype, "sampleTerms");
    try {
      // A first build: start() returns at once; the warm-up runs in the background, after the build.
      const first = make(vault, store);
      await first.svc.start();
      expect(searches).not.toHaveBeenCalled();
      expect(await first.svc.waitForIdle(10_000)).toBe(true);
      expect(searches.mock.calls.length).toBeGreaterThanOrEqual(4);
      await first.svc.close();

      searches.mockClear();
      let listed = 0;
      const list = vault.listFiles.bind(vault);
      // The order of the reconciliation's listing, the warm-up's searches and the tasks the service's yields start.
      const events: string[] = [];
      vault.listFiles = () => {
        listed++;
        events.push("listed");
        return list();
      };
      searches.mockImplementation(function (this: InvertedIndex, ...args) {
        events.push(`search ${args[1].query}`);
        return original.apply(this, args);
      });
      const scheduler = {
        now: () => performance.now(),
        yield: () =>
          new Promise<void>((r) =>
            setImmediate(() => {
              events.push("new task");
              r();
            }),
          ),
      };
      const second = make(vault, store, { scheduler });
      await second.svc.start();
      events.push("started");
      // start() returns before any search: every note is searchable once the reconciliation is over,
      // and the warm-up waits for it.
      expect(searches).not.toHaveBeenCalled();
      expect(second.svc.ready).toBe(false);
      expect(await second.svc.waitForIdle(10_000)).toBe(true);
      expect(second.svc.status().state).toBe("queryable");
      expect(listed).toBeGreaterThan(0);
      const firstSearch = events.findIndex((e) => e.startsWith("search "));
      expect(firstSearch).toBeGreaterThan(events.indexOf("listed"));
      // The worker (the reconciliation first) starts in a task of its own: a caller that searches
      // right after start() shares a task with neither.
      expect(events.slice(events.indexOf("started") + 1, events.indexOf("listed"))).toContain("new task");
      const terms = sampled.mock.results.at(-1)!.value as string[];
      expect(terms.length).toBeGreaterThan(1);
      const queries = events.filter((e) => e.startsWith("search ")).map((e) => e.slice(7));
      // Rounds of every term and a pair of them.
      expect(queries.length).toBeGreaterThanOrEqual(4);
      expect(queries.slice(0, terms.length + 1)).toEqual([...terms, terms.slice(-2).join(" ")]);
      expect(queries.length % (terms.length + 1)).toBe(0);
      // One search a task: a new task between any two of them.
      const searchAt = events.flatMap((e, i) => (e.startsWith("search ") ? [i] : []));
      for (let i = 1; i < searchAt.length; i++) expect(events.slice(searchAt[i - 1] + 1, searchAt[i])).toContain("new task");
      await second.svc.close();
    } finally {
      searches.mockRestore();
      sampled.mockRestore();
    }
  });

  test("listed off this thread, a saved index loads while the vault is being listed; a search meanwhile answers from it, notes then take its path strings", async () => {
    const store = new MemoryStateStore();
    const first = await started(new MemoryVault(notes), store);
    await first.svc.close();
    // The vault as headless lists it: in a worker thread, no file known until the listing is done.
    const vault = new MemoryVault(notes);
    let open!: () => void;
    const listedGate = new Promise<void>((r) => (open = r));
    let listed = false;
    void listedGate.then(() => (listed = true));
    const stat = vault.stat.bind(vault);
    const listFiles = vault.listFiles.bind(vault);
    Object.assign(vault, {
      listingOffThread: true,
      listed: () => listedGate,
      stat: (p: string) => (listed ? stat(p) : null),
      listFiles: () => (listed ? listFiles() : []),
    });
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the index as `this` below
    const share = InvertedIndex.prototype.sharePaths;
    const unlistedBefore: number[] = [];
    const unlistedAfter: number[] = [];
    const spy = jest.spyOn(InvertedIndex.prototype, "sharePaths").mockImplementation(function (this: InvertedIndex, deadline) {
      unlistedBefore.push(this.unlisted);
      const done = share.call(this, deadline);
      unlistedAfter.push(this.unlisted);
      return done;
    });
    try {
      const second = make(vault, store);
      // start() (the index loaded) returns while the vault is still being listed.
      const startedOrNot = await Promise.race([second.svc.start().then(() => "started"), new Promise((r) => setTimeout(() => r("waiting"), 3000))]);
      expect(startedOrNot).toBe("started");
      expect(listed).toBe(false);
      expect(second.svc.hasPendingWork()).toBe(true);
      // A search meanwhile answers at once from the index, its hits' notes not read yet (and the
      // service not ready: the search tool says it is still loading).
      const early = await second.svc.search(req("pruning", { snippetWords: 5 }));
      expect(early.hits.map((h) => h.path).sort()).toEqual(["Garden/Roses.md", "Garden/Tools.md"]);
      for (const h of early.hits) expect(h.sections[0].content).toBe("");
      expect(second.svc.ready).toBe(false);
      open();
      expect(await second.svc.whenReady(10_000)).toBe(true);
      const res = await second.svc.search(req("pruning", { snippetWords: 5 }));
      expect(res.hits.map((h) => h.path).sort()).toEqual(["Garden/Roses.md", "Garden/Tools.md"]);
      for (const h of res.hits) expect(h.sections[0].content).toContain("runing");
      expect(await second.svc.waitForIdle(10_000)).toBe(true);
      // Every restored note was loaded unlisted, and each was given the vault's string once listed.
      expect(unlistedBefore[0]).toBe(5);
      expect(unlistedAfter.at(-1)).toBe(0);
      expect(await paths(second.svc, "sourdough")).toEqual(["Kitchen/Bread.md"]);
      expect(second.svc.status()).toMatchObject({ state: "queryable", documents_indexed: 5, queue_depth: 0 });
      await second.svc.close();
    } finally {
      spy.mockRestore();
    }
  });

  test("the first build runs in many slices and reports progress", async () => {
    const files: Record<string, string> = {};
    const words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "lambda"];
    for (let i = 0; i < 3000; i++) {
      const body: string[] = [];
      for (let j = 0; j < 120; j++) body.push(words[(i * 7 + j * 3) % words.length] + (j % 13));
      files[`F${i % 10}/n${i}.md`] = `# Note ${i}\n\n${body.join(" ")} unique${i}\n`;
    }
    let yields = 0;
    let t = 0;
    // A fake clock: every call advances 1 ms, so a 12 ms slice ends after a dozen steps.
    const scheduler = { now: () => t++, yield: () => { yields++; return new Promise<void>((r) => setTimeout(r, 0)); } };
    const progress: number[] = [];
    const r = make(new MemoryVault(files), new MemoryStateStore(), { scheduler });
    r.svc.onProgress((s) => progress.push(s.documents_indexed));
    await r.svc.start();
    expect(r.svc.status().state).toBe("building");
    expect(r.svc.hasPendingWork()).toBe(true);
    expect(await r.svc.waitForIdle(60_000)).toBe(true);
    expect(r.svc.status()).toMatchObject({ state: "queryable", documents_indexed: 3000 });
    expect(yields).toBeGreaterThan(100);
    expect(progress.length).toBeGreaterThan(2);
    expect((await paths(r.svc, "unique2999"))).toEqual(["F9/n2999.md"]);
    await r.svc.close();
  });

  test("reindex re-reconciles; close persists", async () => {
    const vault = new MemoryVault(notes);
    const store = new MemoryStateStore();
    const { svc } = await started(vault, store);
    vault.emitEvents = false;
    vault.write("Silent.md", "quietly added platypus");
    vault.emitEvents = true;
    expect((await paths(svc, "platypus"))).toEqual([]);
    svc.reindex();
    expect(await svc.waitForIdle(5000)).toBe(true);
    expect((await paths(svc, "platypus"))).toEqual(["Silent.md"]);
    await svc.close();
    const again = await started(vault, store);
    expect((await paths(again.svc, "platypus"))).toEqual(["Silent.md"]);
    await again.svc.close();
  });
});
