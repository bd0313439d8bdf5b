import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { computeLinkMaps, LinkResolver } from "../../src/core/links/resolver";
import { linkSyntax, splitLinkpath, type NoteMetadata } from "../../src/core/metadata";
import { parseNote } from "../../src/core/parser";
import { describeFastFrontmatter, vaultFiles } from "../support/vault-files";

const VAULT = path.resolve(__dirname, "../../../shared/vaults/help-en");
const present = fs.existsSync(VAULT);
/** The suite reports the vault's numbers (console.* is linted out of the project). */
const report = (line: string): void => void process.stdout.write(line + "\n");


(present ? describe : describe.skip)("help-en vault: parse and resolve every note", () => {
  const files = present ? vaultFiles(VAULT) : [];
  const notes: [string, NoteMetadata][] = [];
  for (const f of files.filter((x) => x.endsWith(".md"))) notes.push([f, parseNote(fs.readFileSync(path.join(VAULT, f), "utf8"))]);
  const resolver = new LinkResolver(files);
  const maps = computeLinkMaps(notes, resolver);
  const meta = new Map(notes);

  test("numbers", () => {
    let links = 0, embeds = 0, fmLinks = 0, headings = 0, tags = 0, blocks = 0, resolved = 0, unresolved = 0, fmErrors = 0;
    let wiki = 0, wikiResolved = 0, md = 0, mdResolved = 0;
    for (const [p, m] of notes) {
      links += m.links.length;
      embeds += m.embeds.length;
      fmLinks += m.frontmatterLinks.length;
      headings += m.headings.length;
      tags += m.tags.length;
      blocks += Object.keys(m.blocks).length;
      if (m.frontmatterError) fmErrors++;
      for (const l of [...m.links, ...m.embeds]) {
        const ok = resolver.resolve(splitLinkpath(l.link).path, p) !== null;
        if (linkSyntax(l.original) === "wikilink") {
          wiki++;
          if (ok) wikiResolved++;
        } else {
          md++;
          if (ok) mdResolved++;
        }
      }
    }
    for (const r of Object.values(maps.resolved)) for (const n of Object.values(r)) resolved += n;
    for (const u of Object.values(maps.unresolved)) for (const n of Object.values(u)) unresolved += n;
    report(
      `help-en: notes=${notes.length} files=${files.length} links=${links} embeds=${embeds} frontmatterLinks=${fmLinks} ` +
        `resolved=${resolved} unresolved=${unresolved} wikilinks=${wikiResolved}/${wiki} markdown=${mdResolved}/${md} ` +
        `headings=${headings} tags=${tags} blockIds=${blocks} frontmatterErrors=${fmErrors}`,
    );
    expect(notes.length).toBeGreaterThan(150);
    expect(resolved + unresolved).toBe(links + embeds + fmLinks);
    expect(wikiResolved / wiki).toBeGreaterThan(0.95);
    expect(links).toBeGreaterThan(1000);
    expect(headings).toBeGreaterThan(500);
    expect(fmErrors).toBe(0);
  });

  test("a heavily linked note has many backlinks", () => {
    const backlinks = Object.values(maps.resolved).filter((r) => (r["User interface/Settings.md"] ?? 0) > 0).length;
    report(`help-en: notes linking to Settings = ${backlinks}`);
    expect(backlinks).toBeGreaterThan(40);
  });

  test("Internal links: embeds, block ids, code and inline code ignored", () => {
    const m = meta.get("Linking notes and files/Internal links.md")!;
    expect(m.frontmatter?.permalink).toBe("links");
    expect(m.blocks["b15695"]).toBeDefined();
    expect(m.embeds.map((e) => e.link)).toContain("Quick switcher#^search-autocomplete-large");
    // `[[2023-01-01#^37066d]]` is only ever shown in inline code, `^37066d` only inside a code block.
    const all = [...m.links, ...m.embeds].map((l) => l.link);
    expect(all.some((l) => l.startsWith("2023-01-01"))).toBe(false);
    expect(m.blocks["37066d"]).toBeUndefined();
    expect(resolver.resolve("Quick switcher", "Linking notes and files/Internal links.md")).toBe("Plugins/Quick switcher.md");
  });

  test("Tags: #1984 is not a tag, #y1984 is; tags in inline code are not", () => {
    const m = meta.get("Editing and formatting/Tags.md")!;
    const tags = m.tags.map((t) => t.tag);
    expect(tags).toContain("#y1984");
    expect(tags).not.toContain("#1984");
    expect(tags).not.toContain("#meeting");
    expect(tags).toContain("#camelCase");
  });

  test("the only unresolved link targets are known-missing ones", () => {
    const missing = new Set<string>();
    for (const u of Object.values(maps.unresolved)) for (const k of Object.keys(u)) missing.add(k);
    report(`help-en: unresolved targets = ${[...missing].join(", ")}`);
    expect(missing.size).toBeLessThan(10);
  });
  test("every #^block link finds its block id, and heading links find their heading", () => {
    const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();
    let blockRefs = 0, headingRefs = 0;
    const badBlocks: string[] = [];
    const badHeadings: string[] = [];
    for (const [p, m] of notes) {
      for (const l of [...m.links, ...m.embeds]) {
        const { path: lp, fragment } = splitLinkpath(l.link);
        if (!fragment) continue;
        const dest = resolver.resolve(lp, p);
        const target = dest ? meta.get(dest) : undefined;
        if (!target) continue;
        if (fragment.startsWith("^")) {
          blockRefs++;
          if (!target.blocks[fragment.slice(1).toLowerCase()]) badBlocks.push(`${p} -> ${l.link}`);
        } else {
          headingRefs++;
          const last = norm(fragment.split("#").pop()!);
          if (!target.headings.some((h) => norm(h.heading) === last)) badHeadings.push(`${p} -> ${l.link}`);
        }
      }
    }
    report(`help-en: block refs=${blockRefs} heading refs=${headingRefs} broken=${[...badBlocks, ...badHeadings].join("; ")}`);
    expect(blockRefs).toBeGreaterThan(10);
    expect(badBlocks).toEqual([]);
    expect(headingRefs).toBeGreaterThan(300);
    expect(badHeadings.length).toBeLessThanOrEqual(headingRefs * 0.01);
  });
});

describeFastFrontmatter("help-en", VAULT, report);
