import { createGraphService, MemoryVault } from "../../src/core/graph";
import { mentionPattern } from "../../src/core/graph/mentions";
import { fragmentExists, linkHeadingKey } from "../../src/core/graph/fragments";
import { parseNote } from "../../src/core/parser";
import { AccessPolicy } from "../../src/core/policy";

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
