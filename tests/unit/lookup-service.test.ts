import { describe, expect, test } from "@jest/globals";
import { parse as parseYaml } from "yaml";
import { VaultError } from "../../src/core/errors";
import { splitFrontmatter } from "../../src/core/frontmatter";
import { createLookupService, extractSection, formatGrep, headingsOf } from "../../src/core/lookup";
import type { NoteMetadata } from "../../src/core/metadata";
import { AccessPolicy } from "../../src/core/policy";
import { basenameOf, extensionOf, type VaultEvent, type VaultFile, type VaultPort } from "../../src/core/vault";

/** A vault in memory with just enough metadata (frontmatter, headings, inline tags) for the lookups. */
class MemoryPort implements VaultPort {
  readonly name = "mem";
  readonly configDir = ".obsidian";
  readonly files = new Map<string, string>();
  private listeners: ((e: VaultEvent) => void)[] = [];
  constructor(init: Record<string, string>) {
    for (const [p, t] of Object.entries(init)) this.files.set(p, t);
  }
  set(path: string, text: string): void {
    const type = this.files.has(path) ? "modify" : "create";
    this.files.set(path, text);
    this.emit({ type, path });
  }
  del(path: string): void {
    this.files.delete(path);
    this.emit({ type: "delete", path });
  }
  move(oldPath: string, path: string): void {
    this.files.set(path, this.files.get(oldPath)!);
    this.files.delete(oldPath);
    this.emit({ type: "rename", path, oldPath });
  }
  emit(e: VaultEvent): void {
    for (const l of this.listeners) l(e);
  }
  listFiles(): VaultFile[] {
    return [...this.files.keys()].map((p) => this.stat(p)!);
  }
  listFolders(): string[] {
    const out = new Set<string>();
    for (const p of this.files.keys()) {
      const segs = p.split("/");
      for (let i = 1; i < segs.length; i++) out.add(segs.slice(0, i).join("/"));
    }
    return [...out];
  }
  stat(path: string): VaultFile | null {
    const t = this.files.get(path);
    if (t === undefined) return null;
    return { path, basename: basenameOf(path), extension: extensionOf(path), size: t.length, mtime: 0, ctime: 0 };
  }
  isFolder(path: string): boolean {
    return this.listFolders().includes(path);
  }
  async read(path: string): Promise<string> {
    const t = this.files.get(path);
    if (t === undefined) throw new Error("missing");
    return t;
  }
  readBinary(): Promise<Uint8Array> {
    throw new Error("unused");
  }
  process(): Promise<string> {
    throw new Error("unused");
  }
  create(): Promise<void> {
    throw new Error("unused");
  }
  writeBinary(): Promise<void> {
    throw new Error("unused");
  }
  createFolder(): Promise<void> {
    throw new Error("unused");
  }
  trash(): Promise<string> {
    throw new Error("unused");
  }
  rename(): Promise<never> {
    throw new Error("unused");
  }
  processFrontMatter(): Promise<void> {
    throw new Error("unused");
  }
  getMetadata(path: string): NoteMetadata | null {
    const text = this.files.get(path);
    if (text === undefined || !path.endsWith(".md")) return null;
    const fm = splitFrontmatter(text);
    const frontmatter = fm.yaml !== null ? (parseYaml(fm.yaml) as Record<string, unknown>) : undefined;
    const headings = headingsOf(text, null).map((h) => ({
      heading: h.heading,
      level: h.level,
      position: { start: { line: h.line, col: 0, offset: 0 }, end: { line: h.line, col: 0, offset: 0 } },
    }));
    const tags: NoteMetadata["tags"] = [];
    text
      .slice(fm.bodyOffset)
      .split("\n")
      .forEach((line, i) => {
        for (const m of line.matchAll(/(?:^|\s)(#[\p{L}\p{N}_/-]+)/gu)) {
          if (!/^#+$/.test(m[1])) tags.push({ tag: m[1], position: { start: { line: i, col: 0, offset: 0 }, end: { line: i, col: 0, offset: 0 } } });
        }
      });
    return { frontmatter, headings, links: [], embeds: [], frontmatterLinks: [], tags, blocks: {} };
  }
  resolveLink(): string | null {
    return null;
  }
  resolvedLinks(): Record<string, Record<string, number>> {
    return {};
  }
  unresolvedLinks(): Record<string, Record<string, number>> {
    return {};
  }
  excludedFilters(): string[] {
    return [];
  }
  onChange(listener: (e: VaultEvent) => void): () => void {
    this.listeners.push(listener);
    return () => (this.listeners = this.listeners.filter((l) => l !== listener));
  }
  async ready(): Promise<void> {}
  async close(): Promise<void> {}
}

const NOTES: Record<string, string> = {
  "Home.md": "---\naliases: [Start here]\ntags: [index]\n---\n# Welcome\n\nSee #craft and #craft/wood.\n",
  "Projects/Woodworking plan.md": "---\ntags: [craft, craft/wood]\nstatus: active\n---\n# Plan\n\n## Tools\nA saw and a chisel.\n\n## Wood\nOak, maybe ash.\n### Sources\nThe mill.\n",
  "Projects/Garden.md": "---\ntags: craft\nstatus: done\n---\nSeeds and #Craft things.\nTODO water the garden\n",
  "Journal/2024-01-01.md": "Nothing much. todo: call mom\n```\n# not a heading\n```\n",
  "Journal/Meeting notes.md": "---\naliases:\n  - Standup\n  - Daily sync\n---\n# Meeting\n",
  ".obsidian/app.md": "hidden todo",
  "Private/secret.md": "---\ntags: [craft]\n---\nsecret todo\n",
  "Docs/Keyboard shortcuts.md": "# Shortcuts\n",
  "Docs/Command palette.md": "# Palette\n",
  "日本語/ノートの作成.md": "# 作成\n",
};

function setup(hidden: string[] = ["Private"]) {
  const port = new MemoryPort(NOTES);
  const policy = new AccessPolicy({ configDir: ".obsidian", hiddenFolders: hidden });
  return { port, policy, lookup: createLookupService({ port, policy }) };
}

describe("find_notes", () => {
  test("the first build of the name index yields to the event loop, and concurrent lookups share it", async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 20000; i++) many[`Bulk/Note number ${i}.md`] = "x";
    many["Bulk/Needle in haystack.md"] = "x";
    many["Bulk/Zebra crossing.md"] = "x";
    const port = new MemoryPort(many);
    const lookup = createLookupService({ port, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const [a, b] = await Promise.all([lookup.findNotes("needle haystack", 3), lookup.findNotes("zebra", 1)]);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(0); // timers ran while the index was being built
    expect(a[0].path).toBe("Bulk/Needle in haystack.md");
    expect(b[0].path).toBe("Bulk/Zebra crossing.md");
    lookup.close();
  });

  test("finds by exact title, by prefix and with a typo", async () => {
    const { lookup } = setup();
    expect((await lookup.findNotes("Garden", 5))[0].path).toBe("Projects/Garden.md");
    expect((await lookup.findNotes("woodwork", 5))[0].path).toBe("Projects/Woodworking plan.md");
    expect((await lookup.findNotes("keybord shortcuts", 5))[0].path).toBe("Docs/Keyboard shortcuts.md");
    expect((await lookup.findNotes("comand palete", 5))[0].path).toBe("Docs/Command palette.md");
  });

  test("reports the alias that matched", async () => {
    const { lookup } = setup();
    const hit = (await lookup.findNotes("standup", 5))[0];
    expect(hit).toMatchObject({ path: "Journal/Meeting notes.md", title: "Meeting notes", matched_alias: "Standup" });
    expect((await lookup.findNotes("start here", 5))[0]).toMatchObject({ path: "Home.md", matched_alias: "Start here" });
    expect((await lookup.findNotes("meeting", 5))[0].matched_alias).toBeUndefined();
  });

  test("matches by folder path and Japanese title parts", async () => {
    const { lookup } = setup();
    expect((await lookup.findNotes("Journal/2024-01-01.md", 5))[0].path).toBe("Journal/2024-01-01.md");
    expect((await lookup.findNotes("作成", 5))[0].path).toBe("日本語/ノートの作成.md");
  });

  test("never returns hidden notes", async () => {
    const { lookup } = setup();
    expect((await lookup.findNotes("secret", 10))).toEqual([]);
    expect((await lookup.findNotes("app", 10)).map((h) => h.path)).not.toContain(".obsidian/app.md");
  });

  test("follows creates, modifies, renames and deletes", async () => {
    const { port, lookup } = setup();
    expect((await lookup.findNotes("Garden", 5))[0].path).toBe("Projects/Garden.md");
    port.set("Ideas/Birdhouse.md", "---\naliases: [Nest box]\n---\n");
    expect(lookup.hasPendingWork()).toBe(true);
    expect((await lookup.findNotes("birdhouse", 5))[0].path).toBe("Ideas/Birdhouse.md");
    expect(lookup.hasPendingWork()).toBe(false);
    expect((await lookup.findNotes("nest box", 5))[0].matched_alias).toBe("Nest box");
    port.set("Ideas/Birdhouse.md", "---\naliases: [Bird box]\n---\n");
    expect((await lookup.findNotes("nest box", 5)).filter((h) => h.matched_alias === "Nest box")).toEqual([]);
    port.move("Projects/Garden.md", "Outdoors/Vegetable garden.md");
    const g = (await lookup.findNotes("garden", 5)).map((h) => h.path);
    expect(g).toContain("Outdoors/Vegetable garden.md");
    expect(g).not.toContain("Projects/Garden.md");
    port.del("Ideas/Birdhouse.md");
    expect((await lookup.findNotes("birdhouse", 5)).map((h) => h.path)).not.toContain("Ideas/Birdhouse.md");
  });

  test("a folder rename moves the notes under it", async () => {
    const { port, lookup } = setup();
    (await lookup.findNotes("x", 1));
    // The adapter renames the folder; every file under it moves.
    for (const p of [...port.files.keys()].filter((p) => p.startsWith("Journal/"))) {
      port.files.set(p.replace("Journal/", "Diary/"), port.files.get(p)!);
      port.files.delete(p);
    }
    port.emit({ type: "rename", path: "Diary", oldPath: "Journal" });
    expect((await lookup.findNotes("meeting notes", 5))[0].path).toBe("Diary/Meeting notes.md");
  });

  test("respects the limit and returns nothing for an empty query", async () => {
    const { lookup } = setup();
    expect((await lookup.findNotes("a", 2)).length).toBeLessThanOrEqual(2);
    expect((await lookup.findNotes("   ", 5))).toEqual([]);
  });
});

describe("grep", () => {
  test("literal, case-insensitive by default, with 1-based lines, skipping hidden notes", async () => {
    const { lookup } = setup();
    const res = await lookup.grep({ pattern: "todo", limit: 100 });
    expect(res.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["Journal/2024-01-01.md:1", "Projects/Garden.md:6"]);
    expect(res.truncated).toBe(false);
    expect(res.files_scanned).toBe(8);
  });

  test("case-sensitive, regex, folder and glob", async () => {
    const { lookup } = setup();
    expect((await lookup.grep({ pattern: "TODO", caseSensitive: true, limit: 10 })).matches.map((m) => m.path)).toEqual(["Projects/Garden.md"]);
    expect((await lookup.grep({ pattern: "^#{2,} \\w+", regex: true, limit: 10 })).matches.map((m) => m.text)).toEqual(["## Tools", "## Wood", "### Sources"]);
    expect((await lookup.grep({ pattern: "todo", folder: "Journal", limit: 10 })).matches.map((m) => m.path)).toEqual(["Journal/2024-01-01.md"]);
    expect((await lookup.grep({ pattern: "todo", glob: "Projects/**", limit: 10 })).matches.map((m) => m.path)).toEqual(["Projects/Garden.md"]);
    // Regex special characters are literal without regex: true.
    expect((await lookup.grep({ pattern: "#{2,}", limit: 10 })).matches).toEqual([]);
  });

  test("context lines and text output", async () => {
    const { lookup } = setup();
    const res = await lookup.grep({ pattern: "chisel", contextLines: 1, limit: 10 });
    expect(res.matches).toEqual([{ path: "Projects/Woodworking plan.md", line: 8, text: "A saw and a chisel.", before: ["## Tools"], after: [""] }]);
    expect(formatGrep(res)).toContain("Projects/Woodworking plan.md:8: A saw and a chisel.");
    expect(formatGrep(res)).toContain("Projects/Woodworking plan.md-7- ## Tools");
  });

  test("caps matches and bytes, with a truncated flag", async () => {
    const { lookup } = setup();
    const res = await lookup.grep({ pattern: "e", limit: 3 });
    expect(res.matches).toHaveLength(3);
    expect(res.truncated).toBe(true);
    const small = await lookup.grep({ pattern: "e", limit: 1000, maxBytes: 100 });
    expect(small.truncated).toBe(true);
    expect(small.matches.length).toBeGreaterThan(0);
    expect(formatGrep(small)).toContain("truncated");
  });

  test("rejects invalid and empty-matching regular expressions with a clear message", async () => {
    const { lookup } = setup();
    await expect(lookup.grep({ pattern: "(unclosed", regex: true, limit: 10 })).rejects.toThrow(/not valid.*regex: false/);
    await expect(lookup.grep({ pattern: "x*", regex: true, limit: 10 })).rejects.toThrow(/matches empty text/);
    await expect(lookup.grep({ pattern: "", limit: 10 })).rejects.toBeInstanceOf(VaultError);
  });

  test("runs regular expressions in linear time: a catastrophic pattern answers at once", async () => {
    // With V8's backtracking engine this pattern never finished on the line below (the issue's report).
    const port = new MemoryPort({ "evil.md": "a".repeat(40) + "!\n" + "a".repeat(1900) + "!\n", "fine.md": "aaa\n" });
    const lookup = createLookupService({ port, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    const res = await lookup.grep({ pattern: "(a+)+$", regex: true, limit: 10 });
    expect(res.matches.map((m) => `${m.path}:${m.line}`)).toEqual(["fine.md:1"]);
    expect((await lookup.grep({ pattern: "(.*a){20}!", regex: true, limit: 10 })).matches.map((m) => m.line)).toEqual([1, 2]);
    // JavaScript syntax still works: \u escapes, named groups, \d, case folding.
    expect((await lookup.grep({ pattern: "\\u0061{3}\\n?(?<end>$)", regex: true, limit: 10 })).matches.map((m) => m.path)).toEqual(["fine.md"]);
    expect((await lookup.grep({ pattern: "A{40}!", regex: true, limit: 10 })).matches.map((m) => m.line)).toEqual([1, 2]);
    expect((await lookup.grep({ pattern: "A{40}!", regex: true, caseSensitive: true, limit: 10 })).matches).toEqual([]);
  });

  test("regexes test blocks of lines first; the answers are exactly the lines that match on their own", async () => {
    const many = Array.from({ length: 3000 }, (_, i) => (i === 1234 ? "b" : i === 2000 ? "end a" : `line ${i} a`)).join("\n");
    const port = new MemoryPort({
      "many.md": many,
      "crlf.md": "first x\r\nsecond\r\nthird x\r\n",
      "span.md": "ends with a\nb starts this\n",
      "long.md": `${"y".repeat(2500)}\nshort y\n`,
    });
    const lookup = createLookupService({ port, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    const lines = async (pattern: string, caseSensitive = false) =>
      (await lookup.grep({ pattern, regex: true, caseSensitive, limit: 100 })).matches.map((m) => `${m.path}:${m.line}`);
    expect(await lines("^b$")).toEqual(["many.md:1235"]);
    expect(await lines("^end a$")).toEqual(["many.md:2001"]);
    expect(await lines("x$")).toEqual(["crlf.md:1", "crlf.md:3"]);
    // Matches across a line break are found in a block but are not lines: none is reported.
    expect(await lines("a[^z]b")).toEqual([]);
    expect(await lines("a\\sb")).toEqual([]);
    // A clipped line ends at its 2,000th character, as before.
    expect(await lines("^y+$")).toEqual(["long.md:1"]);
    expect(await lines("^short y$")).toEqual(["long.md:2"]);
    // \A and \z (RE2 syntax) anchor to the line, never to a block.
    expect(await lines("\\Ab\\z")).toEqual(["many.md:1235"]);
  });

  test("refuses what the linear engine lacks, naming the feature, and over-large patterns", async () => {
    const { lookup } = setup();
    const refused = async (pattern: string) => {
      try {
        await lookup.grep({ pattern, regex: true, limit: 10 });
      } catch (e) {
        expect(e).toBeInstanceOf(VaultError);
        expect((e as VaultError).code).toBe("invalid_argument");
        return (e as VaultError).message;
      }
      throw new Error(`${pattern} was accepted`);
    };
    expect(await refused("(a)\\1")).toMatch(/backreference \(\\1/);
    expect(await refused("(?<x>a)\\k<x>")).toMatch(/named backreference/);
    expect(await refused("foo(?=bar)")).toMatch(/uses a lookahead .*linear-time engine/);
    expect(await refused("foo(?!bar)")).toMatch(/negative lookahead/);
    expect(await refused("(?<=foo)bar")).toMatch(/uses a lookbehind/);
    expect(await refused("(?<!foo)bar")).toMatch(/negative lookbehind/);
    expect(await refused("\\p{L}{500}x")).toMatch(/too complex .*limit is 400/);
    expect(await refused("a".repeat(1001))).toMatch(/1001 characters long/);
    // Escaped or in a class, the same characters are plain text.
    expect((await lookup.grep({ pattern: "[(?=]\\\\1|\\(\\?!", regex: true, limit: 10 })).matches).toEqual([]);
  });

  test("stops at the deadline with what it found, saying so", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`n${String(i).padStart(2, "0")}.md`] = "hit\n";
    const port = new MemoryPort(files);
    const lookup = createLookupService({ port, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    const past = await lookup.grep({ pattern: "hit", limit: 100, deadline: Date.now() - 1 });
    expect(past).toEqual({ matches: [], truncated: true, truncated_reason: "time_limit", files_scanned: 0 });
    expect(formatGrep(past)).toMatch(/time limit came after 0 notes/);
    // A deadline that passes while scanning: every match returned is real, the scan is cut short.
    let reads = 0;
    const read = port.read.bind(port);
    port.read = async (p: string) => {
      if (++reads === 10) await new Promise((r) => setTimeout(r, 30));
      return read(p);
    };
    const cut = await lookup.grep({ pattern: "hit", limit: 100, deadline: Date.now() + 20 });
    expect(cut.truncated_reason).toBe("time_limit");
    expect(cut.files_scanned).toBeGreaterThanOrEqual(9);
    expect(cut.files_scanned).toBeLessThan(30);
    expect(cut.matches.map((m) => m.path)).toEqual(Object.keys(files).slice(0, cut.files_scanned));
    const whole = await lookup.grep({ pattern: "hit", limit: 100, deadline: Date.now() + 60_000 });
    expect(whole).toMatchObject({ truncated: false, files_scanned: 30 });
    expect(whole.truncated_reason).toBeUndefined();
    expect((await lookup.grep({ pattern: "hit", limit: 5 })).truncated_reason).toBe("limit");
  });

  test("yields to the event loop inside one long note", async () => {
    const port = new MemoryPort({ "big.md": "x".repeat(1500).concat("\n").repeat(20_000) });
    const lookup = createLookupService({ port, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    try {
      const res = await lookup.grep({ pattern: "x{300}y", regex: true, limit: 10 });
      expect(res).toMatchObject({ matches: [], files_scanned: 1 });
    } finally {
      clearInterval(timer);
    }
    // The scan of one note let timers run in between (it no longer holds the loop for the whole note).
    expect(ticks).toBeGreaterThan(0);
  });

  test("considers only the first 2000 characters of very long lines", async () => {
    const port = new MemoryPort({ "long.md": "a".repeat(5000) + "needle" });
    const lookup = createLookupService({ port, policy: new AccessPolicy({ configDir: ".obsidian" }) });
    expect((await lookup.grep({ pattern: "needle", limit: 10 })).matches).toEqual([]);
    const hit = await lookup.grep({ pattern: "aaa", limit: 10 });
    expect(hit.matches[0].text.length).toBe(2000);
  });
});

describe("list_tags", () => {
  test("merges frontmatter and inline tags, counts notes, keeps nested tags, folds case", async () => {
    const { lookup } = setup();
    const res = await lookup.listTags("tags", "");
    expect(res.values).toEqual([
      { value: "craft", count: 3 },
      { value: "craft/wood", count: 2 },
      { value: "index", count: 1 },
    ]);
    expect(res.notes_scanned).toBe(8);
  });

  test("other fields and folders", async () => {
    const { lookup } = setup();
    expect((await lookup.listTags("status", "")).values).toEqual([
      { value: "active", count: 1 },
      { value: "done", count: 1 },
    ]);
    expect((await lookup.listTags("tags", "Projects")).values.map((v) => v.value)).toEqual(["craft", "craft/wood"]);
    expect((await lookup.listTags("nothing", "")).values).toEqual([]);
  });
});

describe("extractSection", () => {
  const text = NOTES["Projects/Woodworking plan.md"];
  const port = new MemoryPort(NOTES);
  const meta = port.getMetadata("Projects/Woodworking plan.md");

  test("by heading, case- and whitespace-insensitive, up to the next heading of the same level", () => {
    expect(extractSection(text, meta, "  wood ")).toEqual({ heading: "Wood", content: "## Wood\nOak, maybe ash.\n### Sources\nThe mill.", line_start: 10, line_end: 13 });
    expect(extractSection(text, meta, "TOOLS")).toEqual({ heading: "Tools", content: "## Tools\nA saw and a chisel.", line_start: 7, line_end: 8 });
  });

  test("by heading path as search results give it, and with # markers", () => {
    expect(extractSection(text, meta, "Plan > Wood > Sources").content).toBe("### Sources\nThe mill.");
    expect(extractSection(text, meta, "Wood>Sources").heading).toBe("Sources");
    expect(extractSection(text, meta, "## Wood").heading).toBe("Wood");
    expect(extractSection(text, meta, "Plan#Tools").heading).toBe("Tools");
  });

  test("works without metadata, ignoring headings in code blocks", () => {
    expect(extractSection(text, null, "sources").line_start).toBe(12);
    expect(() => extractSection(NOTES["Journal/2024-01-01.md"], null, "not a heading")).toThrow(/Its headings are: \(none\)/);
  });

  test("a miss lists the headings", () => {
    try {
      extractSection(text, meta, "Budget");
      throw new Error("expected a miss");
    } catch (e) {
      expect(e).toBeInstanceOf(VaultError);
      expect((e as VaultError).code).toBe("not_found");
      expect((e as VaultError).message).toMatch(/# Plan; ## Tools; ## Wood; ### Sources/);
    }
    expect(() => extractSection(text, meta, "Tools > Sources")).toThrow(VaultError);
  });
});
