import { describe, expect, test } from "@jest/globals";
import { LinkResolver } from "../../src/core/links/resolver";
import { relativePath, renameContext, rewriteLinks, shortestLinkpath } from "../../src/core/links/rewrite";
import { parseNote } from "../../src/core/parser";

const files = [
  "Home.md",
  "Projects/Plan.md",
  "Projects/Budget.md",
  "Archive/Plan.md",
  "People/Ada Lovelace.md",
  "Attachments/photo one.png",
  "Journal/2024-01-05.md",
];

function rename(text: string, source: string, renames: Record<string, string>, vault = files) {
  const map = new Map(Object.entries(renames));
  const before = new LinkResolver(vault);
  const ctx = renameContext(before, map);
  const newSource = map.get(source) ?? source;
  return rewriteLinks(text, parseNote(text), source, newSource, map, ctx.resolveOld, ctx.resolveNewShortest);
}

describe("rewriteLinks", () => {
  test("wikilinks keep alias, fragment and embed; bare names stay bare", () => {
    const text = "A [[Budget]] b [[Budget|the money]] c [[Budget#Q1]] d [[Budget#^blk|x]] e ![[Budget#Q2]] f [[Budget.md]]\n";
    const r = rename(text, "Home.md", { "Projects/Budget.md": "Projects/Costs.md" });
    expect(r.text).toBe("A [[Costs]] b [[Costs|the money]] c [[Costs#Q1]] d [[Costs#^blk|x]] e ![[Costs#Q2]] f [[Costs.md]]\n");
    expect(r.count).toBe(6);
  });

  test("a bare name becomes a path when the new name is ambiguous", () => {
    const r = rename("[[Budget]]", "Home.md", { "Projects/Budget.md": "Projects/Plan.md" }, files.filter((f) => f !== "Projects/Plan.md"));
    expect(r.text).toBe("[[Projects/Plan]]");
  });

  test("path-form wikilinks get the new full path", () => {
    const r = rename("[[Projects/Budget]] and [[Projects/Budget.md|b]]", "Home.md", { "Projects/Budget.md": "Finance/Budget.md" });
    expect(r.text).toBe("[[Finance/Budget]] and [[Finance/Budget.md|b]]");
  });

  test("links to other files and unresolved links are untouched", () => {
    const text = "[[Plan]] [[Nowhere]] [[Home]] [Web](https://x.com/Budget.md)";
    const r = rename(text, "Home.md", { "Projects/Budget.md": "Projects/Costs.md" });
    expect(r).toEqual({ text, count: 0 });
  });

  test("markdown links: encoding, angle brackets, .md kept as written, text kept", () => {
    const text = "[Ada](People/Ada%20Lovelace.md) [Ada](<People/Ada Lovelace.md>) [Ada](People/Ada%20Lovelace#Life) ![p](Attachments/photo%20one.png)";
    const r = rename(text, "Home.md", { "People/Ada Lovelace.md": "People/Countess Ada.md", "Attachments/photo one.png": "Attachments/photo two.png" });
    expect(r.text).toBe(
      "[Ada](People/Countess%20Ada.md) [Ada](<People/Countess Ada.md>) [Ada](People/Countess%20Ada#Life) ![p](Attachments/photo%20two.png)",
    );
    expect(r.count).toBe(4);
  });

  test("relative markdown links from a moved note still reach their targets", () => {
    const text = "[b](./Budget.md) [h](../Home.md) [[Budget]] [[Plan]]";
    const r = rename(text, "Projects/Plan.md", { "Projects/Plan.md": "Archive/Old/Plan.md" });
    // [[Plan]] was the note itself; after the move "Plan" is ambiguous (Archive/Plan.md), so it gets the full path.
    expect(r.text).toBe("[b](../../Projects/Budget.md) [h](../../Home.md) [[Budget]] [[Archive/Old/Plan]]");
    expect(r.count).toBe(3);
  });

  test("relative link to a renamed target", () => {
    const r = rename("[b](./Budget.md)", "Projects/Plan.md", { "Projects/Budget.md": "Finance/Budget.md" });
    expect(r.text).toBe("[b](../Finance/Budget.md)");
  });

  test("folder rename rewrites every link into the folder", () => {
    const text = "[[Projects/Plan]] [[Budget]] [p](Projects/Budget.md) [[Archive/Plan]]";
    const r = rename(text, "Home.md", { "Projects/Plan.md": "Work/Plan.md", "Projects/Budget.md": "Work/Budget.md" });
    expect(r.text).toBe("[[Work/Plan]] [[Budget]] [p](Work/Budget.md) [[Archive/Plan]]");
    expect(r.count).toBe(2);
  });

  test("frontmatter links are rewritten; CRLF and BOM kept byte for byte", () => {
    const text = '\ufeff---\r\nrelated: "[[Budget]]"\r\nup:\r\n  - "[[Projects/Budget|B]]"\r\n---\r\n# Title\r\n\r\nSee [[Budget#Q1]].\r\n';
    const r = rename(text, "Home.md", { "Projects/Budget.md": "Finance/Costs.md" });
    expect(r.text).toBe('\ufeff---\r\nrelated: "[[Costs]]"\r\nup:\r\n  - "[[Finance/Costs|B]]"\r\n---\r\n# Title\r\n\r\nSee [[Costs#Q1]].\r\n');
    expect(r.count).toBe(3);
  });

  test("links in code, comments and table-escaped pipes", () => {
    const text = "```\n[[Budget]]\n```\n%%[[Budget]]%%\n| [[Budget\\|b]] |\n";
    const r = rename(text, "Home.md", { "Projects/Budget.md": "Projects/Costs.md" });
    expect(r.text).toBe("```\n[[Budget]]\n```\n%%[[Budget]]%%\n| [[Costs\\|b]] |\n");
    expect(r.count).toBe(1);
  });

  test("a self link [[#Heading]] never changes when the note is renamed", () => {
    const r = rename("[[#Top]] [[Home#Top]]", "Home.md", { "Home.md": "Start.md" });
    expect(r.text).toBe("[[#Top]] [[Start#Top]]");
  });

  test("stale metadata is never applied", () => {
    const text = "[[Budget]]";
    const meta = parseNote("xx[[Budget]]");
    const map = new Map([["Projects/Budget.md", "Projects/Costs.md"]]);
    const ctx = renameContext(new LinkResolver(files), map);
    expect(rewriteLinks(text, meta, "Home.md", "Home.md", map, ctx.resolveOld, ctx.resolveNewShortest)).toEqual({ text, count: 0 });
  });
});

describe("shortestLinkpath / relativePath", () => {
  const r = new LinkResolver(files);
  test("bare when unique, full path otherwise; .md dropped for notes only", () => {
    expect(shortestLinkpath("Projects/Budget.md", "Home.md", r)).toBe("Budget");
    expect(shortestLinkpath("Projects/Plan.md", "Home.md", r)).toBe("Projects/Plan");
    expect(shortestLinkpath("Attachments/photo one.png", "Home.md", r)).toBe("photo one.png");
  });
  test("relativePath", () => {
    expect(relativePath("A/B", "A/C/x.md")).toBe("../C/x.md");
    expect(relativePath("", "A/x.md")).toBe("A/x.md");
    expect(relativePath("A", "A/x.md")).toBe("x.md");
    expect(relativePath("A/B", "x.md")).toBe("../../x.md");
  });
});
