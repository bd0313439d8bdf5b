import { chunkNote } from "../../src/core/search";
import { chunkNoteSteps } from "../../src/core/search/chunk";
import { parseNote } from "../../src/core/parser";

const words = (n: number, w = "lorem") => Array.from({ length: n }, (_, i) => `${w}${i}`).join(" ");

describe("chunkNote", () => {
  test("a short note is one chunk; frontmatter is excluded and line numbers count it", () => {
    const text = "---\ntitle: x\ntags: [a, b/c]\naliases: [Other]\n---\n# Heading\n\nSome text here.\n";
    const chunks = chunkNote("Folder/My Note.md", text, parseNote(text));
    expect(chunks).toHaveLength(1);
    const c = chunks[0];
    expect(c.text).toBe("# Heading\n\nSome text here.");
    expect(c.text).not.toContain("title:");
    expect(c.lineStart).toBe(6);
    expect(c.lineEnd).toBe(8);
    expect(c.title).toBe("My Note");
    expect(c.aliases).toEqual(["Other"]);
    expect(c.tags).toEqual(expect.arrayContaining(["a", "b/c"]));
    expect(c.headings).toEqual(["Heading"]);
  });

  test("an empty note still gives one (empty) chunk so its title is searchable", () => {
    const chunks = chunkNote("Empty.md", "---\na: 1\n---\n", null);
    expect(chunks).toHaveLength(1);
    expect(chunks[0].text).toBe("");
  });

  test("long notes split at H1/H2 with heading paths and line ranges", () => {
    const lines = ["# Top", "", words(50), "", "## Alpha", "", words(200, "a"), "", "## Beta", "", words(200, "b"), "", "### Beta child", "", words(20, "c")];
    const text = lines.join("\n");
    const chunks = chunkNote("n.md", text, null, { maxWords: 150 });
    const byHeading = chunks.map((c) => c.heading);
    expect(byHeading[0]).toBe("Top");
    expect(byHeading).toContain("Top > Alpha");
    expect(chunks.some((c) => c.heading.startsWith("Top > Beta"))).toBe(true);
    for (const c of chunks) {
      const fileLines = text.split("\n").slice(c.lineStart - 1, c.lineEnd).join("\n");
      expect(fileLines).toContain(c.text);
      expect(c.text.length).toBeGreaterThan(0);
    }
    const alpha = chunks.filter((c) => c.heading === "Top > Alpha");
    expect(alpha.length).toBeGreaterThanOrEqual(2); // 200 words > cap of 150: split at paragraphs/lines
  });

  test("deeper headings split a section that is still too long; headings in code fences are ignored", () => {
    const text = ["## Main", words(10), "### One", words(120, "x"), "```", "# not a heading", "```", "### Two", words(120, "y")].join("\n");
    const chunks = chunkNote("n.md", text, null, { maxWords: 150 });
    expect(chunks.map((c) => c.heading)).toEqual(["Main", "Main > One", "Main > Two"]);
    expect(chunks[1].text).toContain("# not a heading");
  });

  test("word cap splits at paragraph boundaries, then inside one huge line", () => {
    const paras = Array.from({ length: 10 }, (_, i) => words(40, `p${i}_`)).join("\n\n");
    const chunks = chunkNote("n.md", paras, null, { maxWords: 100 });
    expect(chunks.length).toBeGreaterThanOrEqual(4);
    for (const c of chunks) expect(c.text.split(/\s+/).length).toBeLessThanOrEqual(100);
    const huge = chunkNote("h.md", words(1000), null, { maxWords: 100 });
    expect(huge.length).toBeGreaterThanOrEqual(10);
    expect(huge.every((c) => c.lineStart === 1 && c.lineEnd === 1)).toBe(true);
    const cjk = chunkNote("j.md", "日本語の文章です。".repeat(200), null, { maxWords: 100 });
    expect(cjk.length).toBeGreaterThan(1);
  });

  test("CRLF line endings", () => {
    const chunks = chunkNote("n.md", "---\r\na: 1\r\n---\r\nHello\r\nWorld\r\n", null);
    expect(chunks[0].text).toBe("Hello\nWorld");
    expect(chunks[0].lineStart).toBe(4);
  });

  test("in steps (the indexer's): a big note's cut over many steps, the same chunks; headings inside a chunk found by line", () => {
    const notes = [
      ["line of text\n".repeat(40_000), 4], // one paragraph of 40k lines
      [Array.from({ length: 3000 }, (_, i) => `# T${i}\n## S${i}\n${words(80)}\n\n${"line of text\n".repeat(20)}`).join(""), 4],
      [Array.from({ length: 2000 }, (_, i) => `### constructor ${i}\n${words(8, "toString")}\n`).join(""), 1], // 4,000 lines: one step after the split
    ] as const;
    for (const [text, least] of notes) {
      const steps = chunkNoteSteps("big.md", text, null, { maxWords: 300 });
      let n = 0;
      let r = steps.next();
      while (!r.done) {
        n++;
        r = steps.next();
      }
      expect(n).toBeGreaterThanOrEqual(least);
      expect(r.value).toEqual(chunkNote("big.md", text, null, { maxWords: 300 }));
    }
    // Headings inside a chunk, in order, once each (found by binary search over the note's headings).
    const small = chunkNote("h.md", Array.from({ length: 40 }, (_, i) => `### H${i}\nword word\n`).join(""), null, { maxWords: 20 });
    expect(small.length).toBeGreaterThan(4);
    for (const c of small) {
      const inside = c.text.split("\n").filter((l) => l.startsWith("### ")).map((l) => l.slice(4));
      expect(c.headings).toEqual([...c.headingPath, ...inside.filter((h) => !c.headingPath.includes(h))]);
    }
    expect(small.flatMap((c) => c.headings)).toEqual(expect.arrayContaining(["H0", "H39"]));
  });
});
