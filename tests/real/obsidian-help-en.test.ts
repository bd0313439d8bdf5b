/**
 * The Obsidian adapter (over the stand-in) and the Node filesystem adapter agree on the English help
 * vault: files, folders, resolved and unresolved link maps, and every note's metadata.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { App } from "obsidian";
import type { NoteMetadata } from "../../src/core/metadata";
import { isNotePath } from "../../src/core/vault";
import { ObsidianVault } from "../../src/hosts/obsidian/adapter";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { createTestApp } from "../stand-in/obsidian";

const source = path.resolve(__dirname, "../../../shared/vaults/help-en");
const maybe = fs.existsSync(source) ? describe : describe.skip;
/** The suite reports the vault's numbers (console.* is linted out of the project). */
const report = (line: string): void => void process.stdout.write(line + "\n");

/** The fields both adapters must agree on, in a stable shape (absent and empty are the same). */
function comparable(m: NoteMetadata | null): Record<string, unknown> | null {
  if (!m) return null;
  return {
    links: m.links ?? [],
    embeds: m.embeds ?? [],
    headings: m.headings ?? [],
    tags: m.tags ?? [],
    blocks: m.blocks ?? {},
    frontmatter: m.frontmatter ?? null,
    frontmatterLinks: m.frontmatterLinks ?? [],
  };
}

/** JSON with sorted keys and without undefined values, so key order does not matter. */
function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) =>
    x !== null && typeof x === "object" && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).filter(([, y]) => y !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : x,
  );
}

maybe("ObsidianVault (stand-in) and FsVault agree on the English help vault", () => {
  let root: string;
  let obsidian: ObsidianVault;
  let node: FsVault;

  beforeAll(async () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "help-en-obsidian-")));
    fs.cpSync(source, root, { recursive: true });
    const { app } = createTestApp(root);
    obsidian = new ObsidianVault(app as unknown as App);
    node = await FsVault.open(root, { watch: false });
    await Promise.all([obsidian.ready(), node.ready()]);
  });

  afterAll(async () => {
    await obsidian?.close();
    await node?.close();
    if (root) fs.rmSync(root, { recursive: true, force: true });
  });

  test("files and folders", () => {
    const a = obsidian.listFiles().map((f) => `${f.path} ${f.size}`).sort();
    const b = node.listFiles().map((f) => `${f.path} ${f.size}`).sort();
    expect(a).toEqual(b);
    expect([...obsidian.listFolders()].sort()).toEqual([...node.listFolders()].sort());
    report(`help-en: ${a.length} files (${node.listFiles().filter((f) => isNotePath(f.path)).length} notes), ${node.listFolders().length} folders — identical in both adapters`);
  });

  test("resolved and unresolved link maps", () => {
    expect(obsidian.resolvedLinks()).toEqual(node.resolvedLinks());
    expect(obsidian.unresolvedLinks()).toEqual(node.unresolvedLinks());
    const count = (m: Record<string, Record<string, number>>): number => Object.values(m).reduce((n, t) => n + Object.values(t).reduce((x, y) => x + y, 0), 0);
    report(`help-en: ${count(node.resolvedLinks())} resolved and ${count(node.unresolvedLinks())} unresolved links from ${Object.keys(node.resolvedLinks()).length} notes — identical`);
  });

  test("every note's links, embeds, headings, tags, blocks and frontmatter", () => {
    const notes = node.listFiles().filter((f) => isNotePath(f.path)).map((f) => f.path).sort();
    const totals = { links: 0, embeds: 0, headings: 0, tags: 0, blocks: 0, frontmatter: 0 };
    const differing: string[] = [];
    for (const p of notes) {
      const a = comparable(obsidian.getMetadata(p));
      const b = comparable(node.getMetadata(p));
      if (canonical(a) !== canonical(b)) differing.push(p);
      const m = node.getMetadata(p);
      if (!m) continue;
      totals.links += m.links.length;
      totals.embeds += m.embeds.length;
      totals.headings += m.headings.length;
      totals.tags += m.tags.length;
      totals.blocks += Object.keys(m.blocks).length;
      if (m.frontmatter) totals.frontmatter++;
    }
    // Show the first difference in full, if any.
    if (differing.length) expect(comparable(obsidian.getMetadata(differing[0]))).toEqual(comparable(node.getMetadata(differing[0])));
    expect(differing).toEqual([]);
    report(
      `help-en metadata, ${notes.length} notes: ${totals.links} links, ${totals.embeds} embeds, ${totals.headings} headings, ${totals.tags} tags, ${totals.blocks} blocks, ${totals.frontmatter} with frontmatter — identical`,
    );
  });

  test("link resolution agrees for every link target", () => {
    let checked = 0;
    for (const f of node.listFiles()) {
      if (!isNotePath(f.path)) continue;
      const m = node.getMetadata(f.path);
      for (const l of [...(m?.links ?? []), ...(m?.embeds ?? [])]) {
        const target = l.link.split("#")[0];
        if (!target) continue;
        expect([f.path, target, obsidian.resolveLink(target, f.path)]).toEqual([f.path, target, node.resolveLink(target, f.path)]);
        checked++;
      }
    }
    report(`help-en: ${checked} link targets resolved the same way`);
  });
});
