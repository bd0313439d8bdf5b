import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { computeLinkMaps, LinkResolver } from "../../src/core/links/resolver";
import { frontmatterTags, splitLinkpath, type NoteMetadata } from "../../src/core/metadata";
import { parseNote } from "../../src/core/parser";
import { vaultFiles } from "../support/vault-files";

const VAULT = path.resolve(__dirname, "../../examples/vault");


describe("the bundled example vault", () => {
  const files = vaultFiles(VAULT);
  const notes: [string, NoteMetadata][] = files.filter((f) => f.endsWith(".md")).map((f) => [f, parseNote(fs.readFileSync(path.join(VAULT, f), "utf8"))]);
  const meta = new Map(notes);
  const resolver = new LinkResolver(files);
  const maps = computeLinkMaps(notes, resolver);

  test("shape: folders, AGENTS.md, attachments, no .obsidian", () => {
    expect(notes.length).toBeGreaterThanOrEqual(12);
    expect(files).toContain("AGENTS.md");
    expect(files).toContain("Attachments/workbench-sketch.png");
    expect(files).toContain("Attachments/cut-list.csv");
    expect(files.some((f) => f.startsWith(".obsidian"))).toBe(false);
    for (const folder of ["Projects/", "People/", "Journal/", "Reference/"]) expect(files.some((f) => f.startsWith(folder))).toBe(true);
    const png = fs.readFileSync(path.join(VAULT, "Attachments/workbench-sketch.png"));
    expect([...png.subarray(0, 8)]).toEqual([137, 80, 78, 71, 13, 10, 26, 10]);
  });

  test("every link resolves except the one deliberately unwritten note", () => {
    const unresolved = new Set<string>();
    for (const u of Object.values(maps.unresolved)) for (const k of Object.keys(u)) unresolved.add(k);
    expect([...unresolved]).toEqual(["Sharpening Jig"]);
  });

  test("every heading and block fragment points at something that exists", () => {
    for (const [p, m] of notes) {
      for (const l of [...m.links, ...m.embeds, ...m.frontmatterLinks]) {
        const { path: lp, fragment } = splitLinkpath(l.link);
        const dest = resolver.resolve(lp, p);
        if (!fragment || !dest || !dest.endsWith(".md")) continue;
        const target = meta.get(dest)!;
        if (fragment.startsWith("^")) expect([p, l.link, target.blocks[fragment.slice(1)] !== undefined]).toEqual([p, l.link, true]);
        else expect([p, l.link, target.headings.some((h) => h.heading === fragment)]).toEqual([p, l.link, true]);
      }
    }
  });

  test("uses every link form", () => {
    const all = notes.flatMap(([, m]) => [...m.links, ...m.embeds]);
    const originals = all.map((l) => l.original);
    expect(originals).toContain("[[Dovetail Joint]]");
    expect(originals).toContain("[[Ada Okafor|Ada]]");
    expect(originals).toContain("[[Glue Guide#Open time]]");
    expect(originals).toContain("[[Quarterly Planning Q3#^capacity-rule|capacity rule]]");
    expect(originals).toContain("[[#Workshop]]");
    expect(originals).toContain("[[Roadmap/OKRs]]");
    expect(originals).toContain("![[Dovetail Joint#Cutting the tails]]");
    expect(originals).toContain("![[workbench-sketch.png]]");
    expect(originals).toContain("![bench sketch](../Attachments/workbench-sketch.png)");
    expect(originals).toContain("[Wood species](Reference/Wood%20Species.md)");
    expect(originals).toContain("[Workbench Build](<../Projects/Workbench Build.md>)");
    expect(all.some((l) => l.link === "Dovetail Joint.md#Marking out")).toBe(true);
    const fmLinks = notes.flatMap(([, m]) => m.frontmatterLinks.map((l) => l.key));
    expect(fmLinks).toEqual(expect.arrayContaining(["related.0", "owner", "cover"]));
  });

  test("code blocks, inline code and comments hide link-like text", () => {
    const glue = meta.get("Reference/Glue Guide.md")!;
    const links = glue.links.map((l) => l.link);
    expect(links).not.toContain("Not A Link");
    expect(links).not.toContain("Also Not A Link");
    expect(links).not.toContain("Hidden Link");
    expect(glue.tags.map((t) => t.tag)).not.toContain("#not-a-tag");
    expect(glue.links.map((l) => l.link)).toEqual(["Workbench Build"]);
  });

  test("tags: inline and frontmatter, nested", () => {
    const inline = new Set(notes.flatMap(([, m]) => m.tags.map((t) => t.tag)));
    const fm = new Set(notes.flatMap(([, m]) => frontmatterTags(m.frontmatter)));
    expect(inline).toEqual(new Set(["#index", "#woodworking", "#woodworking/finishing", "#work/risk", "#woodworking/mentor", "#woodworking/joinery", "#work/planning"]));
    expect(fm.has("#woodworking/project")).toBe(true);
    expect(fm.has("#journal")).toBe(true);
  });

  test("backlinks: Dovetail Joint is well linked", () => {
    const back = Object.entries(maps.resolved).filter(([, r]) => (r["Reference/Dovetail Joint.md"] ?? 0) > 0).map(([p]) => p);
    expect(back.length).toBeGreaterThanOrEqual(5);
  });

  test("content is searchable for the documented topics", () => {
    const text = notes.map(([p]) => fs.readFileSync(path.join(VAULT, p), "utf8").toLowerCase()).join("\n");
    expect(text).toContain("dovetail joint");
    expect(text).toContain("quarterly planning");
  });
});
