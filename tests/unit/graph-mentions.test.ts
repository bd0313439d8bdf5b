import { createGraphService, MemoryVault } from "../../src/core/graph";
import { mentionPattern } from "../../src/core/graph/mentions";
import { fragmentExists, linkHeadingKey } from "../../src/core/graph/fragments";
import { parseNote } from "../../src/core/parser";
import { AccessPolicy } from "../../src/core/policy";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { createSearchService, type SearchRequest } from "../../src/core/search";
import { MemoryStateStore } from "../../src/core/state";

describe("mention patterns", () => {
  test("whole words, any case, any spacing", () => {
    const re = mentionPattern("Project Plan")!;
    expect(re.test("the project  plan is here")).toBe(true);
    expect(re.test("PROJECT\tPLAN")).toBe(true);
    expect(re.test("projectplan")).toBe(false);
    expect(re.test("subproject plan")).toBe(false);
    expect(re.test("project plans")).toBe(false);
    expect(mentionPattern("C++")!.test("I like C++ a lot")).toBe(true);
    expect(mentionPattern("Café")!.test("au café.")).toBe(true);
    expect(mentionPattern("Café")!.test("cafés")).toBe(false);
    expect(mentionPattern("   ")).toBeNull();
  });

  test("scripts without spaces match inside text", () => {
    expect(mentionPattern("東京")!.test("今日は東京に行きました")).toBe(true);
    expect(mentionPattern("東京")!.test("京都")).toBe(false);
  });

  test("Japanese titles are found as unlinked mentions", async () => {
    const vault = new MemoryVault({ "東京.md": "# 東京\n", "日記.md": "今日は東京に行った。\n[[東京]]へのリンク東京\n" });
    const graph = createGraphService({ port: vault, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    const r = await graph.unlinkedMentions("東京.md");
    expect(r.mentions.map((m) => [m.path, m.line])).toEqual([["日記.md", 1]]);
    graph.close();
  });

  test("link text, frontmatter and code-free lines: only plain text counts", async () => {
    const vault = new MemoryVault({
      "Target.md": "x",
      "Other.md": "---\ntitle: Target\n---\nsee [[Elsewhere|Target]] here\nplain Target here\n![[Target.png]] embed\n",
    });
    const graph = createGraphService({ port: vault, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    expect((await graph.unlinkedMentions("Target.md")).mentions.map((m) => m.line)).toEqual([5]);
    graph.close();
  });
});

describe("unlinked mentions through the keyword index", () => {
  const notes: Record<string, string> = {
    "Project Plan.md": "# Project Plan\n",
    "A.md": "Project Plan\nnothing\nthe project plan, again\n",
    "B.md": "only [[Project Plan]] linked\nand [[Other|project plan]] in link text\n",
    "C.md": "---\naliases: [Project Plan]\n---\nplanning projects\n",
    "D.md": "a\nproject\nplan split over lines\n",
    "E.md": "[[Project Plan]] and project plan on one line\nlast line project plan",
  };
  for (let i = 0; i < 30; i++) notes[`Many/N${i}.md`] = `filler ${i}\nProject plan number ${i}\n`;

  test("matchPaths returns the paths search returns, in order, with its total", async () => {
    const vault = new MemoryVault(notes);
    const svc = createSearchService({ port: vault, policy: new AccessPolicy({ configDir: ".obsidian" }), store: new MemoryStateStore(), sqlWasm, options: { debounceMs: 5, persistDebounceMs: 20 } });
    await svc.start();
    expect(await svc.waitForIdle(10_000)).toBe(true);
    for (const query of ['"Project Plan"', '"project"', "plan", '"nothing here"']) {
      for (const limit of [0, 3, 100]) {
        const req: SearchRequest = { query, limit, chunksPerFile: 1, snippetWords: 1 };
        const full = await svc.search(req);
        expect(svc.matchPaths!(req)).toEqual({ paths: full.hits.map((h) => h.path), total: full.total_files });
      }
    }
    await svc.close();
  });

  test("paths-only candidates give the same mentions as search hits, and the scan", async () => {
    const vault = new MemoryVault(notes);
    const policy = new AccessPolicy({ configDir: ".obsidian" });
    const svc = createSearchService({ port: vault, policy, store: new MemoryStateStore(), sqlWasm, options: { debounceMs: 5, persistDebounceMs: 20 } });
    await svc.start();
    expect(await svc.waitForIdle(10_000)).toBe(true);
    let searched = 0;
    const viaPaths = createGraphService({ port: vault, policy, search: { search: () => { searched++; throw new Error("not used"); }, matchPaths: (r) => svc.matchPaths!(r), status: () => svc.status() } });
    const viaHits = createGraphService({ port: vault, policy, search: { search: (r) => svc.search(r), status: () => svc.status() } });
    const viaScan = createGraphService({ port: vault, policy });
    for (const limit of [50, 5, 1]) {
      const a = await viaPaths.unlinkedMentions("Project Plan.md", { limit });
      const b = await viaHits.unlinkedMentions("Project Plan.md", { limit });
      const c = await viaScan.unlinkedMentions("Project Plan.md", { limit });
      expect(a.method).toBe("search");
      expect(c.method).toBe("scan");
      expect({ ...a, method: "x" }).toEqual({ ...b, method: "x" });
      if (limit === 50) {
        expect({ ...a, method: "x" }).toEqual({ ...c, method: "x" });
        expect(a.mentions.filter((m) => !m.path.startsWith("Many/")).map((m) => [m.path, m.line])).toEqual([
          ["A.md", 1],
          ["A.md", 3],
          ["E.md", 2],
        ]);
        expect(a.total).toBe(33);
      }
    }
    expect(searched).toBe(0);
    for (const g of [viaPaths, viaHits, viaScan]) g.close();
    await svc.close();
  });
});

describe("fragment checks", () => {
  const meta = parseNote("# What is it?\n## `hasTag()`\n### A: B [x]\ntext ^Blk-1\n");
  test("headings match like Obsidian's stripHeading, case-insensitively", () => {
    expect(fragmentExists(meta, "What is it")).toBe(true);
    expect(fragmentExists(meta, "what is it?")).toBe(true);
    expect(fragmentExists(meta, "hasTag")).toBe(true);
    expect(fragmentExists(meta, "A B x")).toBe(true);
    expect(fragmentExists(meta, "What is it#A B x")).toBe(true);
    expect(fragmentExists(meta, "Nope")).toBe(false);
    expect(linkHeadingKey("  A:  b  ")).toBe("a b");
  });
  test("blocks match by id, case-insensitively", () => {
    expect(fragmentExists(meta, "^blk-1")).toBe(true);
    expect(fragmentExists(meta, "^other")).toBe(false);
    expect(fragmentExists(null, "^blk-1")).toBeNull();
    expect(fragmentExists(meta, null)).toBe(true);
  });
});
