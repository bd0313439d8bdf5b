/**
 * The headless vault keeps each note's metadata packed into one array: unpacked, it must be exactly
 * what the parser made (same keys, same order, same values, absent keys absent).
 */
import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { dict } from "../../src/core/dict";
import type { NoteMetadata } from "../../src/core/metadata";
import { parseNote } from "../../src/core/parser";
import { pack, packedLinks, unpack } from "../../src/hosts/node/packed-metadata";
import { vaultFiles } from "../support/vault-files";

const VAULT = path.resolve(__dirname, "../../examples/vault");

function roundTrip(m: NoteMetadata): void {
  const packed = pack(m);
  const back = unpack(packed);
  expect(back).toStrictEqual(m);
  expect(JSON.stringify(back)).toBe(JSON.stringify(m));
  expect(packedLinks(packed)).toEqual([...m.links, ...m.embeds, ...m.frontmatterLinks].map((l) => l.link));
}

describe("packed note metadata", () => {
  test("a note with every kind of metadata comes back as parsed", () => {
    const text = [
      "---",
      "tags: [craft, wood/oak]",
      "aliases: [Bench]",
      'related: "[[Other note|the other]]"',
      "see:",
      '  - "[[Plans]]"',
      "---",
      "# Workbench",
      "",
      "Links: [[Plans]], [[Plans#Legs|legs]], [[Folder/Deep note]] and [a site page](Notes/Page%20one.md), [](Empty.md).",
      "Embeds: ![[sketch.png]] ![[Plans#Top]] ![alt text](img/photo.jpg)",
      "Tags: #craft #nested/tag",
      "",
      "## Legs",
      "",
      "A paragraph with a block id. ^Legs-1",
      "",
      "Setext heading",
      "---------------",
      "",
      "- item ^item2",
    ].join("\n");
    const m = parseNote(text);
    expect(m.links.length).toBeGreaterThanOrEqual(4);
    expect(m.links.some((l) => l.displayText === l.link)).toBe(true);
    expect(m.links.some((l) => l.displayText !== undefined && l.displayText !== l.link)).toBe(true);
    expect(m.embeds.length).toBe(3);
    expect(m.frontmatterLinks.length).toBe(2);
    expect(m.tags.length).toBe(2);
    expect(Object.keys(m.blocks).length).toBe(2);
    expect(m.frontmatterPosition).toBeDefined();
    roundTrip(m);
  });

  test("no frontmatter, broken frontmatter, an empty note, a link without display text", () => {
    roundTrip(parseNote("Just text with [[a link]].\n"));
    const broken = parseNote("---\nkey: [unclosed\n---\nBody.\n");
    expect(broken.frontmatterError).toBeDefined();
    roundTrip(broken);
    roundTrip(parseNote("---\n---\n"));
    roundTrip(parseNote(""));
    const bare: NoteMetadata = {
      headings: [],
      links: [{ link: "X", original: "[[X]]", position: { start: { line: 0, col: 0, offset: 0 }, end: { line: 0, col: 5, offset: 5 } } }],
      embeds: [],
      frontmatterLinks: [{ key: "k", link: "Y", original: "[[Y]]" }],
      tags: [],
      blocks: dict(), // as the parser makes it: block ids are vault text (see core/dict.ts)
    };
    const back = unpack(pack(bare));
    expect("displayText" in back.links[0]).toBe(false);
    expect("displayText" in back.frontmatterLinks[0]).toBe(false);
    roundTrip(bare);
  });

  test("every note of the bundled example vault", () => {
    const notes = vaultFiles(VAULT).filter((f) => f.endsWith(".md"));
    expect(notes.length).toBeGreaterThanOrEqual(12);
    for (const f of notes) roundTrip(parseNote(fs.readFileSync(path.join(VAULT, f), "utf8")));
  });

  test("each call makes new objects, the frontmatter a copy of its own", () => {
    const packed = pack(parseNote("---\ntags: [a]\n---\n# H\n\n[[L]]\n"));
    const a = unpack(packed);
    const b = unpack(packed);
    expect(a.frontmatter).not.toBe(b.frontmatter);
    expect(a.frontmatter).toEqual(b.frontmatter);
    expect(a.links).not.toBe(b.links);
    expect(a.links).toEqual(b.links);
  });

  test("odd strings and values come back exactly", () => {
    const m = parseNote("---\ntitle: café — ünïcode 日本\n---\n# Héading — 日本 🎉\n\n[[Ñote|dísplay]] [[ spaced ]] [x](a%20b.md) #tág ^blöck\n");
    roundTrip(m);
    const pos = { start: { line: 3, col: 2, offset: 40 }, end: { line: 5, col: 1, offset: 70 } };
    const odd: NoteMetadata = {
      frontmatter: { a: -0, b: [1, "x"], c: { d: null } },
      headings: [{ heading: "lone \ud800 surrogate", level: 2, position: pos }],
      links: [{ link: "L", original: "[[L]]", displayText: undefined, position: pos }],
      embeds: [{ link: "E", original: "![[E|e]]", displayText: "e", position: { start: { line: 0, col: 0, offset: 0 }, end: { line: 0, col: 8, offset: 8 } } }],
      frontmatterLinks: [],
      tags: [{ tag: "#t", position: { start: { line: 9, col: 100000, offset: 2 ** 40 }, end: { line: 9, col: 99990, offset: 2 ** 40 + 3 } } }],
      blocks: dict(),
    };
    expect(packedLinks(pack(odd))).toEqual(["L", "E"]);
    const back = unpack(pack(odd));
    expect(back).toStrictEqual(odd);
    expect(Object.is((back.frontmatter as { a: number }).a, -0)).toBe(true);
    expect("displayText" in back.links[0]).toBe(true);
  });
});
