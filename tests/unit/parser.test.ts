import { describe, expect, test } from "@jest/globals";
import { parseNote } from "../../src/core/parser";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

const links = (t: string) => parseNote(t).links.map((l) => l.link);
const embeds = (t: string) => parseNote(t).embeds.map((l) => l.link);
const tags = (t: string) => parseNote(t).tags.map((l) => l.tag);
const headings = (t: string) => parseNote(t).headings.map((h) => `${h.level}:${h.heading}`);

describe("parseNote: frontmatter", () => {
  test("parses YAML, keeps dates as strings, records the position", () => {
    const text = "---\ntitle: Hi\ndate: 2024-01-05\ntags: [a, b]\n---\nBody\n";
    const m = parseNote(text);
    expect(m.frontmatter).toEqual({ title: "Hi", date: "2024-01-05", tags: ["a", "b"] });
    expect(m.frontmatterError).toBeUndefined();
    expect(m.frontmatterPosition).toEqual({ start: { line: 0, col: 0, offset: 0 }, end: { line: 4, col: 3, offset: 47 } });
    expect(JSON.parse(JSON.stringify(m.frontmatter))).toEqual(m.frontmatter);
  });

  test("invalid YAML sets frontmatterError and never throws; the body is still parsed", () => {
    const m = parseNote("---\ntitle: [unclosed\n---\nSee [[Other]]\n");
    expect(m.frontmatter).toBeUndefined();
    expect(typeof m.frontmatterError).toBe("string");
    expect(m.frontmatterError!.length).toBeGreaterThan(0);
    expect(m.links.map((l) => l.link)).toEqual(["Other"]);
  });

  test("duplicate keys are an error too", () => {
    expect(parseNote("---\na: 1\na: 2\n---\n").frontmatterError).toBeDefined();
  });

  test("frontmatter only when the file starts with ---", () => {
    const m = parseNote("\n---\na: 1\n---\n");
    expect(m.frontmatter).toBeUndefined();
    expect(m.frontmatterPosition).toBeUndefined();
  });

  test("empty frontmatter is an empty object", () => {
    expect(parseNote("---\n---\ntext").frontmatter).toEqual({});
  });

  test("links in property values become frontmatterLinks with key and key.index", () => {
    const m = parseNote('---\nrelated: "[[Other]]"\nup:\n  - "[[A|Alias]]"\n  - plain\n  - "[[Folder/B#Head]]"\nnested:\n  deep: "[[C]]"\n---\n');
    expect(m.frontmatterLinks).toEqual([
      { key: "related", link: "Other", original: "[[Other]]", displayText: "Other" },
      { key: "up.0", link: "A", original: "[[A|Alias]]", displayText: "Alias" },
      { key: "up.2", link: "Folder/B#Head", original: "[[Folder/B#Head]]", displayText: "Folder/B#Head" },
      { key: "nested.deep", link: "C", original: "[[C]]", displayText: "C" },
    ]);
    // Frontmatter links are not body links.
    expect(m.links).toEqual([]);
  });

  test("a BOM before the fence is allowed; CRLF works", () => {
    const m = parseNote("\ufeff---\r\na: 1\r\n---\r\n# H\r\n[[X]]\r\n");
    expect(m.frontmatter).toEqual({ a: 1 });
    expect(m.headings.map((h) => h.heading)).toEqual(["H"]);
    expect(m.links[0].original).toBe("[[X]]");
    expect(m.links[0].position.start).toEqual({ line: 4, col: 0, offset: 22 });
  });
});

describe("parseNote: headings", () => {
  test("ATX headings with levels, trailing #s stripped, positions", () => {
    const m = parseNote("# One\n\n## Two ##\n###### Six\n####### Seven\n#NoSpace\n   ### Indented\n");
    expect(m.headings.map((h) => `${h.level}:${h.heading}`)).toEqual(["1:One", "2:Two", "6:Six", "3:Indented"]);
    expect(m.headings[1].position).toEqual({ start: { line: 2, col: 0, offset: 7 }, end: { line: 2, col: 9, offset: 16 } });
  });

  test("setext headings", () => {
    expect(headings("Title\n===\n\nSub\n---\n\n---\n\nText\n")).toEqual(["1:Title", "2:Sub"]);
  });

  test("a thematic break after a blank line is not a heading", () => {
    expect(headings("Para\n\n---\n")).toEqual([]);
  });

  test("not in code, blockquotes, list items", () => {
    expect(headings("```\n# no\n```\n> # no\n- # no\n    # no\n")).toEqual([]);
  });

  test("tags and links in headings count", () => {
    const m = parseNote("## About [[Note]] #topic\n");
    expect(m.headings[0].heading).toBe("About [[Note]] #topic");
    expect(m.links.map((l) => l.link)).toEqual(["Note"]);
    expect(m.tags.map((t) => t.tag)).toEqual(["#topic"]);
  });
});

describe("parseNote: wikilinks and embeds", () => {
  test("forms, aliases, fragments, positions", () => {
    const text = "See [[a]], [[a|alias]], [[a#Heading]], [[a#^block]], [[#Heading]] and [[a.png]].";
    const m = parseNote(text);
    expect(m.links.map((l) => [l.link, l.displayText])).toEqual([
      ["a", "a"],
      ["a", "alias"],
      ["a#Heading", "a#Heading"],
      ["a#^block", "a#^block"],
      ["#Heading", "#Heading"],
      ["a.png", "a.png"],
    ]);
    expect(m.links[1]).toEqual({
      link: "a",
      original: "[[a|alias]]",
      displayText: "alias",
      position: { start: { line: 0, col: 11, offset: 11 }, end: { line: 0, col: 22, offset: 22 } },
    });
  });

  test("embeds", () => {
    const m = parseNote("![[Note#Section]]\n![[image.png|100]]\n![alt](pic%20one.png)\n");
    expect(m.embeds.map((e) => e.link)).toEqual(["Note#Section", "image.png", "pic one.png"]);
    expect(m.embeds[0].position).toEqual({ start: { line: 0, col: 0, offset: 0 }, end: { line: 0, col: 17, offset: 17 } });
    expect(m.embeds[1].displayText).toBe("100");
    expect(m.links).toEqual([]);
  });

  test("table-escaped pipe", () => {
    const m = parseNote("| [[Note\\|alias]] | x |\n|---|---|\n");
    expect(m.links.map((l) => [l.link, l.displayText])).toEqual([["Note", "alias"]]);
  });

  test("not links: empty, unclosed, escaped, across lines", () => {
    expect(links("[[]] [[ ]] [[open\nclose]] \\[\\[esc]]")).toEqual([]);
  });

  test("the innermost [[ wins", () => {
    expect(links("[[a [[b]]")).toEqual(["b"]);
  });
});

describe("parseNote: markdown links", () => {
  test("relative, encoded, angle brackets, fragments, with and without .md", () => {
    const m = parseNote("[t](Note.md) [t](Folder/My%20Note.md) [t](<My Note.md>) [t](../x.md#head) [t](Note) [t](Note.md \"title\")");
    expect(m.links.map((l) => l.link)).toEqual(["Note.md", "Folder/My Note.md", "My Note.md", "../x.md#head", "Note", "Note.md"]);
    expect(m.links[1].displayText).toBe("t");
    expect(m.links[1].original).toBe("[t](Folder/My%20Note.md)");
  });

  test("external URLs are not links", () => {
    expect(links("[a](https://x.com) [b](http://x) [c](mailto:a@b.c) [d](obsidian://open?vault=x) [e](file:///tmp) ![f](https://x/img.png)")).toEqual([]);
    expect(embeds("![f](https://x/img.png)")).toEqual([]);
  });

  test("text with brackets, not a link without (", () => {
    expect(links("[a [b] c](Note.md) [not a link] [x] (y)")).toEqual(["Note.md"]);
  });
});

describe("parseNote: tags", () => {
  test("inline tags with unicode, nested, - _ /", () => {
    expect(tags("#tag #nested/tag #kebab-case #snake_case #日本語 #café #y1984\n")).toEqual([
      "#tag", "#nested/tag", "#kebab-case", "#snake_case", "#日本語", "#café", "#y1984",
    ]);
  });

  test("tag position", () => {
    expect(parseNote("a #b/c.").tags[0]).toEqual({ tag: "#b/c", position: { start: { line: 0, col: 2, offset: 2 }, end: { line: 0, col: 6, offset: 6 } } });
  });

  test("not tags: numeric, mid-word, heading markers, URLs, code, escaped", () => {
    expect(tags("#1984 a#b # heading\n## h2\nhttps://x.com/#frag https://x.com/ab #ok `#code` \\#esc <https://x.com/#f>")).toEqual(["#ok"]);
  });

  test("a tag ends at punctuation", () => {
    expect(tags("(#a) #b, #c. #d! #e:f #g?")).toEqual(["#b", "#c", "#d", "#e", "#g"]);
  });
});

describe("parseNote: code, comments, math", () => {
  test("fenced code of any length, ~~~, indented up to 3 spaces", () => {
    const t = "```\n[[a]] #a\n```\n````md\n```\n[[b]]\n````\n~~~\n[[c]]\n~~~\n   ```\n[[d]]\n   ```\n[[yes]]";
    expect(links(t)).toEqual(["yes"]);
    expect(tags(t)).toEqual([]);
  });

  test("unclosed fence runs to the end", () => {
    expect(links("```\n[[a]]\n")).toEqual([]);
  });

  test("fence inside a callout ends with the callout", () => {
    expect(links("> [!note]\n> ```\n> [[no]]\n> ```\n> [[yes]]\n\n[[also]]")).toEqual(["yes", "also"]);
  });

  test("inline code with matching backtick runs", () => {
    expect(links("`[[a]]` ``x ` [[b]]`` `unclosed [[c]]")).toEqual(["c"]);
  });

  test("comments inline and multi-line", () => {
    const t = "a %%[[x]] #x%% [[y]]\n%%\n[[z]]\n#z\n%%\n[[w]]";
    expect(links(t)).toEqual(["y", "w"]);
    expect(tags(t)).toEqual([]);
  });

  test("math blocks and inline math", () => {
    expect(links("$$\n[[a]]\n$$\n$[[b]]$ costs $5 and [[c]] $6")).toEqual(["c"]);
  });
});

describe("parseNote: block ids", () => {
  test("end of paragraph, list item, own line after a block", () => {
    const t = "Para line one\nline two ^para-1\n\n- item ^Item2\n- other\n\n> quote\n\n^quote-id\n\nNot ^in-middle of line\n";
    const m = parseNote(t);
    expect(Object.keys(m.blocks).sort()).toEqual(["item2", "para-1", "quote-id"]);
    expect(m.blocks["item2"].id).toBe("Item2");
    expect(m.blocks["para-1"].position).toEqual({ start: { line: 0, col: 0, offset: 0 }, end: { line: 1, col: 16, offset: 30 } });
  });

  test("only Latin letters, digits and dashes; not in code", () => {
    const m = parseNote("a ^bad_id\n\nb ^ok\n\n```\nc ^code\n```\n");
    expect(Object.keys(m.blocks)).toEqual(["ok"]);
  });
});

describe("parseNote: inputs that could make a naive scanner quadratic", () => {
  const N = 200_000;
  test("one long line of unmatched openers", () => {
    for (const unit of ["[", "[[", "`", "``x", "$a ", "![", "%", "#", "[a](", "[a](b ", "[a](<b", "<", "\\"]) {
      const m = parseNote("x " + unit.repeat(N / unit.length) + " [[end]]");
      expect([unit, m.links.map((l) => l.link)]).toEqual([unit, ["end"]]);
    }
  });

  test("many lines inside a long comment, an unclosed fence, and links without closers", () => {
    expect(parseNote("%%\n" + "[[x]] line\n".repeat(N / 10) + "%%\n[[after]]").links.map((l) => l.link)).toEqual(["after"]);
    expect(parseNote("```\n" + "[[x]]\n".repeat(N / 5)).links).toEqual([]);
    expect(parseNote("[[open\n".repeat(N / 7) + "[[closed]]").links.map((l) => l.link)).toEqual(["closed"]);
  });
});

describe("parseNote: memory", () => {
  test("the metadata does not keep the note's text alive (strings cut from it are copied)", async () => {
    // V8 keeps a slice of 13+ characters as a view into its parent string: without copies, every
    // link, heading, tag and frontmatter value would keep its whole note in memory.
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const filler = "lorem ipsum dolor sit amet ".repeat(40_000); // ~1 MB
    const kept: unknown[] = [];
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 40; i++) {
      // A fresh 1 MB string each time (not a constant the engine could share).
      const text = `---\ntitle: A title long enough to be sliced ${i}\n---\n# A heading long enough ${i}\n\n[[A link target long enough ${i}]] #a-long-enough-tag-${i}\n\n${filler}${i}\n`;
      kept.push(parseNote(text));
    }
    // Twice, with a pause: large objects are swept concurrently after a collection.
    gc();
    await new Promise((r) => setTimeout(r, 100));
    gc();
    const retained = process.memoryUsage().heapUsed - before;
    expect(kept).toHaveLength(40);
    // 40 notes of 1 MB: tens of MB if the notes were kept; their metadata alone is a few KB.
    expect(retained).toBeLessThan(8 * 1024 * 1024);
  });
});
