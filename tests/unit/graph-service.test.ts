import { createGraphService, MemoryVault, type GraphService, type MentionSearch } from "../../src/core/graph";
import { AccessPolicy } from "../../src/core/policy";
import type { SearchRequest } from "../../src/core/search/types";

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);

/** A small vault with every case the graph must handle. */
function makeVault(): MemoryVault {
  return new MemoryVault({
    "A.md": [
      "---",
      "aliases: [Alpha, First Letter]",
      'related: "[[B]]"',
      "sources:",
      '  - "[[C]]"',
      "---",
      "# Top",
      "See [[B]] and [[B#Section]] and [[B#Nope]] and [[B#^blk]] and [[B#^gone]].",
      "![[img.png]]",
      "[md link](C.md)",
      "[[Missing]] and [[#Top]] and [[Secret]]",
      "[[B|the bee]]",
    ].join("\n"),
    "B.md": "# Section\nsome text ^blk\n\nBack to [[A]].\nB mentions A in text.\n",
    "C.md": "[[C]] links itself and mentions Alpha here.\nAlso alpha-ish first letter words.\n",
    "D.md": "Lonely note; mentions nobody.\n",
    "E.md": "Talks about first   letter and [[A]] on one line.\nAnd first letter here.\n",
    "X/Same.md": "In X.\n",
    "Y/Same.md": "In Y.\n",
    "X/Ref.md": "[[Same]] and [[Y/Same]]\n",
    "Ref2.md": "[[Same]]\n",
    "Chain/1.md": "[[2]]\n",
    "Chain/2.md": "[[3]]\n",
    "Chain/3.md": "[[4]]\n",
    "Chain/4.md": "end\n",
    "Private/Secret.md": "[[A]] from a hidden note; mentions Alpha.\n",
    "Private/Orphan.md": "hidden orphan\n",
    ".trash/Old.md": "[[A]]\n",
    "img.png": png,
  });
}

function setup(opts: { hidden?: string[]; search?: MentionSearch } = {}): { vault: MemoryVault; graph: GraphService } {
  const vault = makeVault();
  const policy = new AccessPolicy({ configDir: ".obsidian", hiddenFolders: opts.hidden ?? ["Private"], excludedFilters: () => vault.excludedFilters() });
  const graph = createGraphService({ port: vault, policy, search: opts.search });
  return { vault, graph };
}

describe("graph service over an in-memory vault", () => {
  let vault: MemoryVault;
  let graph: GraphService;
  beforeEach(() => {
    ({ vault, graph } = setup());
  });
  afterEach(() => graph.close());

  test("backlinks carry source, type, fragment and line; frontmatter links get their line", async () => {
    const r = await graph.backlinks("B.md");
    expect(r.path).toBe("B.md");
    expect(r.notes).toBe(1);
    expect(r.total).toBe(7);
    const fm = r.backlinks.find((b) => b.link_type === "frontmatter")!;
    expect(fm).toMatchObject({ source: "A.md", title: "A", property: "related", line: 3, fragment: null });
    expect(r.backlinks.filter((b) => b.line === 8).map((b) => b.fragment)).toEqual([null, "Section", "Nope", "^blk", "^gone"]);
    expect(r.backlinks.find((b) => b.line === 12)).toMatchObject({ display_text: "the bee", link_type: "wikilink" });
    // No display_text when the link has no text of its own.
    expect(r.backlinks.find((b) => b.line === 8 && b.fragment === null)!.display_text).toBeUndefined();
    const limited = await graph.backlinks("B", { limit: 2 });
    expect(limited.backlinks).toHaveLength(2);
    expect(limited.truncated).toBe(true);
  });

  test("frontmatter list links and embeds and markdown links are all backlinks", async () => {
    const c = await graph.backlinks("C.md");
    expect(c.backlinks.map((b) => [b.source, b.link_type, b.line, b.property ?? null])).toEqual([
      ["A.md", "frontmatter", 5, "sources.0"],
      ["A.md", "markdown", 10, null],
      ["C.md", "wikilink", 1, null],
    ]);
    const img = await graph.backlinks("img.png");
    expect(img.backlinks).toEqual([expect.objectContaining({ source: "A.md", link_type: "embed", line: 9 })]);
  });

  test("outlinks resolve, flag missing files and missing headings/blocks", async () => {
    const r = await graph.outlinks("A");
    const byOriginal = new Map(r.outlinks.map((o) => [o.original, o]));
    expect(byOriginal.get("[[B#Section]]")).toMatchObject({ path: "B.md", exists: true, fragment: "Section", fragment_exists: true });
    expect(byOriginal.get("[[B#Nope]]")).toMatchObject({ fragment_exists: false });
    expect(byOriginal.get("[[B#^blk]]")).toMatchObject({ fragment_exists: true });
    expect(byOriginal.get("[[B#^gone]]")).toMatchObject({ fragment_exists: false });
    expect(byOriginal.get("[[Missing]]")).toMatchObject({ path: null, exists: false, link_type: "wikilink" });
    expect(byOriginal.get("[[#Top]]")).toMatchObject({ path: "A.md", fragment: "Top", fragment_exists: true });
    expect(byOriginal.get("![[img.png]]")).toMatchObject({ path: "img.png", link_type: "embed" });
    expect(byOriginal.get("[md link](C.md)")).toMatchObject({ path: "C.md", link_type: "markdown", display_text: "md link" });
    // A link to a hidden note looks exactly like a link to a missing one.
    expect(byOriginal.get("[[Secret]]")).toMatchObject({ path: null, exists: false });
    expect(r.unresolved).toBe(2);
    expect(r.missing_fragments).toBe(2);
    expect(byOriginal.get("[[B]]")!.fragment_exists).toBeUndefined();
  });

  test("same-named notes resolve by folder, then by path", async () => {
    const ref = await graph.outlinks("X/Ref.md");
    expect(ref.outlinks.map((o) => o.path)).toEqual(["X/Same.md", "Y/Same.md"]);
    expect((await graph.backlinks("Y/Same.md")).backlinks.map((b) => b.source)).toEqual(["X/Ref.md"]);
    expect((await graph.backlinks("X/Same.md")).backlinks.map((b) => b.source)).toEqual(["Ref2.md", "X/Ref.md"]);
  });

  test("hidden notes appear nowhere", async () => {
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).not.toContain("Private/Secret.md");
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).not.toContain(".trash/Old.md");
    await expect(graph.backlinks("Private/Secret.md")).rejects.toMatchObject({ code: "not_found" });
    await expect(graph.outlinks("Private/Secret")).rejects.toMatchObject({ code: "not_found" });
    expect((await graph.orphans()).notes.map((n) => n.path)).not.toContain("Private/Orphan.md");
    expect((await graph.recent({ limit: 100 })).notes.map((n) => n.path)).not.toContain("Private/Secret.md");
    expect((await graph.unlinkedMentions("A.md")).mentions.map((m) => m.path)).not.toContain("Private/Secret.md");
    await expect(graph.connectionPath("A.md", "Private/Secret.md")).rejects.toMatchObject({ code: "not_found" });
    await expect(graph.orphans({ folder: "Private" })).rejects.toMatchObject({ code: "not_found" });
  });

  test("Obsidian's excluded files are hidden too, and changing them rebuilds the graph", async () => {
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).toContain("E.md");
    vault.setExcludedFilters(["E.md"]);
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).not.toContain("E.md");
    vault.setExcludedFilters([]);
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).toContain("E.md");
  });

  test("broken links, with and without fragments, by folder", async () => {
    const r = await graph.brokenLinks();
    expect(r.links.map((l) => [l.source, l.line, l.original, l.reason])).toEqual([
      ["A.md", 11, "[[Missing]]", "missing_file"],
      ["A.md", 11, "[[Secret]]", "missing_file"],
    ]);
    const withFragments = await graph.brokenLinks({ includeFragments: true });
    expect(withFragments.links.map((l) => [l.original, l.reason, l.target ?? null])).toEqual([
      ["[[B#Nope]]", "missing_heading", "B.md"],
      ["[[B#^gone]]", "missing_block", "B.md"],
      ["[[Missing]]", "missing_file", null],
      ["[[Secret]]", "missing_file", null],
    ]);
    expect((await graph.brokenLinks({ folder: "X" })).total).toBe(0);
    await expect(graph.brokenLinks({ folder: "Nowhere" })).rejects.toMatchObject({ code: "not_found" });
  });

  test("broken links with fragments over a big vault: in slices, the event loop given back between them", async () => {
    // Every note's links are made again from its metadata: 2,000 notes are many slices with a clock this fast.
    const files: Record<string, string> = {};
    for (let i = 0; i < 2000; i++) files[`N/${i}.md`] = `# H\n[[${(i + 1) % 2000}#H]] [[${(i + 7) % 2000}#Gone]] [[constructor#toString]]\n`;
    files["constructor.md"] = "# toString\n";
    const big = new MemoryVault(files);
    const bigGraph = createGraphService({ port: big, policy: new AccessPolicy({ configDir: ".obsidian", excludedFilters: () => big.excludedFilters() }) });
    await bigGraph.brokenLinks({ limit: 1 });
    let clock = Date.now();
    const now = jest.spyOn(Date, "now").mockImplementation(() => (clock += 1)); // a millisecond a look at the clock
    // Turns of the event loop while it answers: a chain of immediates, one a turn.
    let turns = 0;
    let spinning = true;
    const spin = () => {
      if (!spinning) return;
      turns++;
      setImmediate(spin);
    };
    setImmediate(spin);
    try {
      const all = await bigGraph.brokenLinks({ limit: 5000, includeFragments: true });
      expect(all.total).toBe(2000);
      expect(all.links.every((l) => l.reason === "missing_heading" && l.original.endsWith("#Gone]]"))).toBe(true);
      // By source path ("N/10.md" before "N/2.md"), though the notes are not visited in that order.
      const sources = all.links.map((l) => l.source);
      expect(sources).toEqual([...sources].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      expect(sources.slice(0, 3)).toEqual(["N/0.md", "N/1.md", "N/10.md"]);
    } finally {
      spinning = false;
      now.mockRestore();
      bigGraph.close();
    }
    expect(turns).toBeGreaterThan(5);
  });

  test("orphans ignore self links and missing targets; most linked ranks by linking notes", async () => {
    const orphans = await graph.orphans();
    expect(orphans.notes.map((n) => n.path)).toEqual(["D.md"]);
    vault.write("Self.md", "[[Self]] [[Nowhere]]");
    expect((await graph.orphans()).notes.map((n) => n.path)).toEqual(["D.md", "Self.md"]);

    const top = await graph.mostLinked({ limit: 3 });
    expect(top.notes[0]).toMatchObject({ path: "A.md", linking_notes: 2, backlinks: 2 });
    expect(top.notes.map((n) => n.path)).toEqual(["A.md", "X/Same.md", "B.md"]);
    // C links to itself: that does not count.
    const all = await graph.mostLinked({ limit: 50 });
    expect(all.notes.find((n) => n.path === "C.md")).toMatchObject({ linking_notes: 1, backlinks: 2 });
    expect(all.notes.find((n) => n.path === "img.png")).toBeUndefined();
    expect((await graph.mostLinked({ includeAttachments: true, limit: 50 })).notes.find((n) => n.path === "img.png")).toBeDefined();
    expect((await graph.mostLinked({ folder: "Chain" })).notes.map((n) => n.path)).toEqual(["Chain/2.md", "Chain/3.md", "Chain/4.md"]);
  });

  test("connection path: shortest, undirected, bounded by max_depth", async () => {
    const p = await graph.connectionPath("Chain/4.md", "Chain/1.md");
    expect(p).toMatchObject({ found: true, hops: 3, path: ["Chain/4.md", "Chain/3.md", "Chain/2.md", "Chain/1.md"] });
    expect(p.steps.map((s) => s.direction)).toEqual(["backward", "backward", "backward"]);
    expect(await graph.connectionPath("Chain/1.md", "Chain/4.md", { maxDepth: 2 })).toMatchObject({ found: false });
    // max_depth is clamped, not refused.
    expect(await graph.connectionPath("Chain/1.md", "Chain/4.md", { maxDepth: 99 })).toMatchObject({ found: true, hops: 3 });
    expect(await graph.connectionPath("Chain/1.md", "Chain/2.md", { maxDepth: 0 })).toMatchObject({ found: true, hops: 1 });
    // A ↔ B is a cycle; C → C a self loop: neither confuses the search.
    expect(await graph.connectionPath("B.md", "C.md")).toMatchObject({ found: true, hops: 2, path: ["B.md", "A.md", "C.md"] });
    expect(await graph.connectionPath("A.md", "D.md")).toMatchObject({ found: false, path: [] });
    expect(await graph.connectionPath("A.md", "A")).toMatchObject({ found: true, hops: 0 });
    expect(await graph.connectionPath("A.md", "img.png")).toMatchObject({ found: true, hops: 1 });
  });

  test("recent: newest first, by folder", async () => {
    vault.write("Chain/2.md", "[[3]] edited", 1_900_000_000_000);
    vault.write("D.md", "Lonely note, edited", 1_900_000_000_001);
    const r = await graph.recent({ limit: 2 });
    expect(r.notes.map((n) => n.path)).toEqual(["D.md", "Chain/2.md"]);
    expect(r.notes[0].modified_at).toBe(new Date(1_900_000_000_001).toISOString());
    expect((await graph.recent({ folder: "Chain", limit: 1 })).notes.map((n) => n.path)).toEqual(["Chain/2.md"]);
    expect((await graph.recent({ folder: "Chain" })).total).toBe(4);
  });

  test("recent: a note changed since the graph last read it is ranked by its new mtime", async () => {
    // One change applied per query (querySyncMs 0): the others are still pending when recent answers.
    const vault2 = makeVault();
    const policy = new AccessPolicy({ configDir: ".obsidian", hiddenFolders: ["Private"], excludedFilters: () => vault2.excludedFilters() });
    const g = createGraphService({ port: vault2, policy, options: { querySyncMs: 0, debounceMs: 60_000 } });
    try {
      await g.recent();
      vault2.write("Chain/3.md", "[[4]] edited", 1_900_000_000_000);
      vault2.write("B.md", "edited", 1_900_000_000_002);
      vault2.write("E.md", "edited too", 1_900_000_000_001);
      const r = await g.recent({ limit: 3 });
      expect(r.notes.map((n) => n.path)).toEqual(["B.md", "E.md", "Chain/3.md"]);
      expect(r.total).toBe(13);
      vault2.remove("D.md");
      expect((await g.recent({ limit: 100 })).notes.map((n) => n.path)).not.toContain("D.md");
    } finally {
      g.close();
    }
  });

  test("unlinked mentions: title and aliases, whole words, any case, not on linking lines, not in the note itself", async () => {
    const r = await graph.unlinkedMentions("A.md");
    expect(r.method).toBe("scan");
    expect(r.mentions.map((m) => [m.path, m.line, m.matched])).toEqual([
      ["B.md", 5, "A"],
      ["C.md", 1, "Alpha"],
      ["C.md", 2, "Alpha"],
      ["E.md", 2, "First Letter"],
    ]);
    // "-" is a word boundary, so "alpha-ish" mentions "Alpha" (the first name that matches a line is reported).
    expect(r.mentions.find((m) => m.path === "C.md" && m.line === 1)!.text).toBe("[[C]] links itself and mentions Alpha here.");
    expect(r.total).toBe(4);
    const limited = await graph.unlinkedMentions("A.md", { limit: 1 });
    expect(limited.mentions).toHaveLength(1);
    expect(limited.truncated).toBe(true);
  });

  test("unlinked mentions use the search index to narrow candidates, and still verify them", async () => {
    const queries: SearchRequest[] = [];
    const search: MentionSearch = {
      search: (req) => {
        queries.push(req);
        // The index returns one true candidate and one false one (a stemmed match, say).
        return { hits: ["C.md", "D.md"].map((path) => ({ path, title: path, folder: "", score: 1, frontmatter: {}, sections: [] })), total_files: 2, relaxed: false };
      },
      status: () => ({ state: "queryable", readiness: "ready", notes_covered: 1, notes_total: 1, documents_indexed: 1, documents_total: 1, queue_depth: 0, skipped: [], last_error: null }),
      hasPendingWork: () => false,
    };
    const s = setup({ search });
    const r = await s.graph.unlinkedMentions("A.md");
    expect(r.method).toBe("search");
    expect(r.mentions.map((m) => [m.path, m.line])).toEqual([
      ["C.md", 1],
      ["C.md", 2],
    ]);
    expect(queries.map((q) => q.query)).toEqual(['"A"', '"Alpha"', '"First Letter"']);
    s.graph.close();

    // An index still building cannot be trusted to find them all: scan instead.
    const building = setup({ search: { ...search, status: () => ({ ...search.status!(), state: "building" }) } });
    expect((await building.graph.unlinkedMentions("A.md")).method).toBe("scan");
    building.graph.close();
  });

  test("context: one compact dossier", async () => {
    const c = await graph.context("A", { backlinks: 1, outlinks: 3, mentions: 2, peers: 2 });
    expect(c).toMatchObject({ path: "A.md", title: "A", folder: "", aliases: ["Alpha", "First Letter"], outline_total: 1, backlinks_total: 3, backlinking_notes: 3, unresolved_outlinks: 2 });
    expect(c.frontmatter).toMatchObject({ related: "[[B]]" });
    expect(c.outline).toEqual([{ level: 1, heading: "Top", line: 7 }]);
    expect(c.backlinks).toHaveLength(1);
    expect(c.outlinks).toHaveLength(3);
    expect(c.outlinks[0]).toEqual({ link: "B", path: "B.md", exists: true, link_type: "frontmatter" });
    expect(c.unlinked_mentions).toHaveLength(2);
    expect(c.folder_peers.map((p) => p.path)).toEqual(["B.md", "C.md"]);
    expect(c.folder_peers_total).toBe(5);
    const noMentions = await graph.context("A", { mentions: 0 });
    expect(noMentions.unlinked_mentions_total).toBeNull();
  });

  test("context: tags from frontmatter and body, deduplicated", async () => {
    vault.write("T.md", "---\ntags: [project, Alpha]\n---\nBody #project #new/sub\n");
    const c = await graph.context("T.md");
    expect(c.tags).toEqual(["#project", "#Alpha", "#new/sub"]);
  });
});

describe("graph updates from vault events", () => {
  let vault: MemoryVault;
  let graph: GraphService;
  beforeEach(async () => {
    ({ vault, graph } = setup());
    await graph.sync();
  });
  afterEach(() => graph.close());

  test("creating a missing note resolves links to it; deleting it breaks them again", async () => {
    vault.write("Missing.md", "now here\n");
    expect((await graph.backlinks("Missing.md")).backlinks.map((b) => b.source)).toEqual(["A.md"]);
    expect((await graph.brokenLinks()).links.map((l) => l.original)).toEqual(["[[Secret]]"]);
    vault.remove("Missing.md");
    expect((await graph.brokenLinks()).links.map((l) => l.original)).toEqual(["[[Missing]]", "[[Secret]]"]);
  });

  test("a note with broken links that is deleted, or whose links are fixed, leaves the broken links", async () => {
    vault.write("Broken.md", "See [[Nowhere at all]] and [[B]].\n");
    expect((await graph.brokenLinks()).links.map((l) => `${l.source}: ${l.original}`)).toContain("Broken.md: [[Nowhere at all]]");
    vault.write("Broken.md", "See [[B]] only.\n");
    expect((await graph.brokenLinks()).links.map((l) => l.source)).not.toContain("Broken.md");
    vault.write("Broken.md", "See [[Nowhere at all]].\n");
    expect((await graph.brokenLinks()).links.map((l) => l.source)).toContain("Broken.md");
    vault.remove("Broken.md");
    expect((await graph.brokenLinks()).links.map((l) => l.source)).not.toContain("Broken.md");
  });

  test("modifying a note recomputes its links", async () => {
    vault.write("D.md", "Now links [[B]] and [[Chain/4]].\n");
    expect((await graph.backlinks("B.md")).backlinks.map((b) => b.source)).toContain("D.md");
    expect((await graph.orphans()).notes).toEqual([]);
    vault.write("D.md", "No links again.\n");
    expect((await graph.backlinks("B.md")).backlinks.map((b) => b.source)).not.toContain("D.md");
    expect((await graph.backlinks("Chain/4.md")).backlinks.map((b) => b.source)).toEqual(["Chain/3.md"]);
  });

  test("a new same-named note closer to the source takes over the link", async () => {
    expect((await graph.outlinks("Ref2.md")).outlinks[0].path).toBe("X/Same.md");
    vault.write("Same.md", "root\n");
    expect((await graph.outlinks("Ref2.md")).outlinks[0].path).toBe("Same.md");
    // X/Ref.md's [[Same]] follows whatever the port resolves it to now.
    const now = vault.resolveLink("Same", "X/Ref.md");
    expect((await graph.outlinks("X/Ref.md")).outlinks[0].path).toBe(now);
    expect((await graph.backlinks("X/Same.md")).backlinks.map((b) => b.source)).toEqual(now === "X/Same.md" ? ["X/Ref.md"] : []);
  });

  test("renaming a note moves its links and re-resolves links to both names", async () => {
    vault.move("B.md", "Sub/Bee.md");
    const a = await graph.outlinks("A.md");
    expect(a.outlinks.filter((o) => o.link.startsWith("B")).every((o) => o.path === null)).toBe(true);
    expect((await graph.outlinks("Sub/Bee.md")).outlinks.map((o) => o.path)).toEqual(["A.md"]);
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).toContain("Sub/Bee.md");
    vault.move("Sub/Bee.md", "B.md");
    expect((await graph.backlinks("B.md")).total).toBe(7);
  });

  test("renaming and deleting folders updates every note in them", async () => {
    vault.move("Chain", "Links");
    expect((await graph.connectionPath("Links/1.md", "Links/4.md"))).toMatchObject({ found: true, hops: 3 });
    await expect(graph.backlinks("Chain/2.md")).rejects.toMatchObject({ code: "not_found" });
    vault.remove("Y");
    expect((await graph.outlinks("X/Ref.md")).outlinks.map((o) => o.path)).toEqual(["X/Same.md", null]);
    // Moving a note into a hidden folder hides it; its links to others disappear with it.
    vault.move("E.md", "Private/E.md");
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).not.toContain("E.md");
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).not.toContain("Private/E.md");
  });

  test("pending changes are reported, and applied when waited for", async () => {
    expect(graph.hasPendingWork()).toBe(false);
    vault.write("D.md", "[[A]]\n");
    expect(graph.hasPendingWork()).toBe(true);
    expect(await graph.sync(true)).toEqual({ stale: false });
    expect(graph.hasPendingWork()).toBe(false);
    expect((await graph.backlinks("A.md")).backlinks.map((b) => b.source)).toContain("D.md");
  });

  test("background flush applies changes without a query", async () => {
    vault.write("D.md", "[[A]]\n");
    await new Promise((r) => setTimeout(r, 120));
    expect(graph.hasPendingWork()).toBe(false);
    expect(graph.status()).toMatchObject({ built: true, pending: 0 });
  });
});

describe("graph build in slices", () => {
  test("the build yields to the event loop and a query answers stale while changes exceed its budget", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`N${i}.md`] = `[[N${(i + 1) % 300}]] [[N${(i * 7) % 300}#H]]\n`;
    const vault = new MemoryVault(files);
    const policy = new AccessPolicy({ configDir: ".obsidian" });
    let t = 0;
    let yields = 0;
    // A clock that advances 1 ms per reading: a 10 ms slice covers a few notes.
    const scheduler = { now: () => t++, yield: async () => void yields++ };
    const graph = createGraphService({ port: vault, policy, scheduler, options: { sliceMs: 10, querySyncMs: 5 } });
    await graph.sync();
    expect(yields).toBeGreaterThan(10);
    expect(graph.status()).toMatchObject({ built: true, notes: 300, links: 600 });
    for (let i = 0; i < 100; i++) vault.write(`N${i}.md`, "no links\n");
    expect((await graph.sync(false)).stale).toBe(true);
    expect((await graph.sync(true)).stale).toBe(false);
    expect((await graph.backlinks("N1.md")).total).toBe(0);
    graph.close();
  });
});

describe("incremental updates agree with a fresh build", () => {
  test("after random creates, edits, renames and deletes", async () => {
    let seed = 42;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const pick = <T,>(xs: T[]): T => xs[Math.floor(rnd() * xs.length)];
    const names = ["a", "b", "c", "d", "e", "f", "g", "h"];
    const folders = ["", "F1/", "F2/", "Private/"];
    const body = () =>
      Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => {
        const n = pick(names);
        return pick([`[[${n}]]`, `![[${n}]]`, `[x](${n}.md)`, `[[${pick(folders)}${n}#H]]`, `# H\n[[${n}|alias]]`]);
      }).join("\n");
    const vault = new MemoryVault({});
    const policy = new AccessPolicy({ configDir: ".obsidian", hiddenFolders: ["Private"] });
    const graph = createGraphService({ port: vault, policy });
    await graph.sync();
    const snapshot = async (g: GraphService) => {
      const out: Record<string, unknown> = {};
      for (const f of vault.listFiles()) {
        if (policy.isHidden(f.path)) continue;
        out[f.path] = [(await g.outlinks(f.path)).outlinks.map((o) => [o.original, o.path, o.line]), (await g.backlinks(f.path)).backlinks.map((b) => [b.source, b.original, b.line])];
      }
      return out;
    };
    for (let step = 0; step < 150; step++) {
      const existing = vault.listFiles().map((f) => f.path);
      const op = existing.length < 3 ? 0 : Math.floor(rnd() * 4);
      if (op === 0 || op === 1) vault.write(`${pick(folders)}${pick(names)}.md`, body());
      else if (op === 2) vault.remove(pick(existing));
      else {
        const from = pick(existing);
        const to = `${pick(folders)}${pick(names)}.md`;
        if (!vault.stat(to)) vault.move(from, to);
      }
      if (step % 10 === 9) {
        const fresh = createGraphService({ port: vault, policy });
        expect(await snapshot(graph)).toEqual(await snapshot(fresh));
        fresh.close();
      }
    }
    graph.close();
  });
});
