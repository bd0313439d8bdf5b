/**
 * The port's optional `linkTexts` (the link graph's light path: a note's link texts without its
 * metadata) must give exactly what the graph read from `getMetadata` before: the same texts in the
 * same order as `linkTextsOf(getMetadata(path))` and as the graph's full links (`LinkGraph.links`).
 */
import { afterEach, beforeEach, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { LinkGraph } from "../../src/core/graph";
import { linkTextsOf } from "../../src/core/metadata";
import { AccessPolicy } from "../../src/core/policy";
import type { VaultPort } from "../../src/core/vault";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { makeTempRoot } from "../contract/vault-port.contract";

const NOTES: Record<string, string> = {
  "Hub.md": [
    "---",
    'related: "[[B#Section]]"',
    "sources:",
    '  - "[[C]]"',
    '  - "[[constructor]]"',
    "up: '[[__proto__|proto]]'",
    "---",
    "# Hub",
    "![[img.png]] then [[B]] on one line, then ![[C#^blk]]",
    "[[B#Section]] and [[B#^blk|block]] and [[#Hub]] and [[Missing]]",
    "![[Missing.png]]",
    "[md](C.md) and [md2](Sub/Deep%20Note.md#Part) and ![alt](img.png)",
    "[[constructor]] [[__proto__]] [[hasOwnProperty#x]] [[toString]]",
    "[[Sub/]] and [[Sub/Deep Note]]",
    "",
  ].join("\n"),
  "B.md": "# Section\nsome text ^blk\n\n![[img.png]]\n[[Hub]] ![[Hub#Hub]] [[Hub]]\n",
  "C.md": "---\ntags: [x]\n---\nno links, a ^blk\n",
  "constructor.md": "[[__proto__]]\n",
  "__proto__.md": "![[constructor]]\n[[constructor]]\n",
  "Sub/Deep Note.md": "# Part\n![[../img.png]] [[./B]] [[../Hub]]\n",
  "Bad.md": "---\nkey: [unclosed\n---\n[[B]] ![[C]]\n",
  "Empty.md": "",
};

/** The same vault without the optional method: the graph falls back to `getMetadata`. */
function withoutLinkTexts(port: FsVault): VaultPort {
  return new Proxy(port, {
    get(target, key) {
      if (key === "linkTexts") return undefined;
      const v = Reflect.get(target, key, target) as unknown;
      return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

describe("the port's linkTexts (the link graph's light path)", () => {
  let root: string;
  let vault: FsVault;
  const graphs: LinkGraph[] = [];

  beforeEach(async () => {
    root = makeTempRoot("link-texts-");
    for (const [rel, text] of Object.entries(NOTES)) {
      fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
      fs.writeFileSync(path.join(root, rel), text);
    }
    fs.writeFileSync(path.join(root, "img.png"), new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
    vault = await FsVault.open(root, { watch: false });
    await vault.ready();
  });

  afterEach(async () => {
    for (const g of graphs.splice(0)) g.close();
    await vault.close();
    fs.rmSync(root, { recursive: true, force: true });
  });

  function graphOver(port: VaultPort): LinkGraph {
    const policy = new AccessPolicy({ configDir: ".obsidian", excludedFilters: () => port.excludedFilters() });
    const g = new LinkGraph(port, policy);
    graphs.push(g);
    return g;
  }

  test("FsVault's linkTexts agrees with linkTextsOf(getMetadata) and the graph's links, note by note", async () => {
    expect(typeof vault.linkTexts).toBe("function");
    const g = graphOver(vault);
    await g.ensureBuilt();
    for (const p of Object.keys(NOTES)) {
      const light = vault.linkTexts(p);
      expect({ p, texts: light }).toEqual({ p, texts: linkTextsOf(vault.getMetadata(p)!) });
      expect({ p, texts: light }).toEqual({ p, texts: g.links(p)!.map((l) => l.link) });
    }
    // Frontmatter first, then by line with a line's links before its embeds.
    expect(vault.linkTexts("Hub.md")!.slice(0, 6)).toEqual(["B#Section", "C", "constructor", "__proto__", "B", "img.png"]);
    expect(vault.linkTexts("B.md")).toEqual(["img.png", "Hub", "Hub", "Hub#Hub"]);
    expect(vault.linkTexts("Empty.md")).toEqual([]);
    expect(vault.linkTexts("img.png")).toBeNull();
    expect(vault.linkTexts("Nope.md")).toBeNull();
  });

  test("a graph built from linkTexts answers as one built from getMetadata", async () => {
    const light = graphOver(vault);
    const full = graphOver(withoutLinkTexts(vault));
    await light.ensureBuilt();
    await full.ensureBuilt();
    const files = vault.listFiles().map((f) => f.path).sort();
    expect(light.size).toBe(full.size);
    expect(light.totalLinks).toBe(full.totalLinks);
    expect(light.totalLinks).toBe(Object.keys(NOTES).reduce((n, p) => n + vault.linkTexts(p)!.length, 0));
    for (const p of files) {
      expect({ p, t: light.targets(p) }).toEqual({ p, t: full.targets(p) });
      expect({ p, s: light.sources(p) }).toEqual({ p, s: full.sources(p) });
      expect({ p, n: light.backlinkCount(p) }).toEqual({ p, n: full.backlinkCount(p) });
    }
    expect([...light.linkedFiles()].sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual(
      [...full.linkedFiles()].sort((a, b) => (a.path < b.path ? -1 : 1)),
    );
    expect(light.sortedWithUnresolved()).toEqual(full.sortedWithUnresolved());
    expect(light.targets("Hub.md")).toEqual(["B.md", "C.md", "constructor.md", "__proto__.md", "img.png", "Hub.md", "Sub/Deep Note.md"]);
  });
});
