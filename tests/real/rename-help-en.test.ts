import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { cpSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { isUnder } from "../../src/core/paths";
import { parseNote } from "../../src/core/parser";
import { AccessPolicy } from "../../src/core/policy";
import { MemoryStateStore } from "../../src/core/state";
import { isNotePath } from "../../src/core/vault";
import { createWriteService, type WriteService } from "../../src/core/write";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { removeTree } from "../support/harness";

/**
 * Renames through the write service on a copy of Obsidian's English help vault: a heavily linked note
 * and a folder. Every link that resolved before resolves to the new place afterwards, and nothing but
 * link texts changed in any note.
 */
const SOURCE = path.resolve(__dirname, "../../../shared/vaults/help-en");
const present = existsSync(SOURCE);
const d = present ? describe : describe.skip;

type LinkMap = Record<string, Record<string, number>>;

function snapshot(root: string, vault: FsVault): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of vault.listFiles()) if (isNotePath(f.path)) out.set(f.path, readFileSync(path.join(root, ...f.path.split("/")), "utf8"));
  return out;
}

/** The text with every link, embed and frontmatter link replaced by a placeholder. */
function maskLinks(text: string): string {
  const meta = parseNote(text);
  const spans = [...meta.links, ...meta.embeds].map((l) => [l.position.start.offset, l.position.end.offset] as const).sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [s, e] of spans) out = out.slice(0, s) + "\u0000LINK\u0000" + out.slice(e);
  for (const fl of meta.frontmatterLinks) out = out.split(fl.original).join("\u0000FMLINK\u0000");
  return out;
}

function mapLinks(links: LinkMap, map: (p: string) => string): LinkMap {
  const out: LinkMap = {};
  for (const [src, targets] of Object.entries(links)) {
    const row: Record<string, number> = {};
    for (const [t, n] of Object.entries(targets)) row[map(t)] = (row[map(t)] ?? 0) + n;
    out[map(src)] = row;
  }
  return out;
}

d("rename on the help-en vault (links follow, nothing else changes)", () => {
  let root: string;
  let vault: FsVault;
  let svc: WriteService;

  beforeAll(async () => {
    root = mkdtempSync(path.join(tmpdir(), "vault-mcp-rename-"));
    cpSync(SOURCE, root, { recursive: true });
    vault = await FsVault.open(root, { watch: false });
    const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
    svc = createWriteService({ port: vault, policy, stateStore: new MemoryStateStore() });
  });
  afterAll(async () => {
    await vault?.close();
    if (root) removeTree(root);
  });

  async function renameAndCheck(from: string, to: string): Promise<{ links_updated: number; notes_updated: number }> {
    const beforeText = snapshot(root, vault);
    // Copies (the headless maps are read-only views, which structuredClone cannot copy).
    const beforeResolved = copyLinks(vault.resolvedLinks());
    const beforeUnresolved = copyLinks(vault.unresolvedLinks());
    const map = (p: string) => (isUnder(p, from) ? to + p.slice(from.length) : p);

    const r = await svc.rename({ path: from, new_path: to }, { client: "real-test" });
    expect(r.new_path).toBe(to);

    // Every link that resolved before resolves to the mapped place now.
    expect(vault.resolvedLinks()).toEqual(mapLinks(beforeResolved, map));
    // Unresolved links stay unresolved (same sources, same texts).
    expect(mapLinks(vault.unresolvedLinks(), (p) => p)).toEqual(mapLinks(beforeUnresolved, (p) => map(p)));

    // Only link texts changed, and the counts reported are the notes that did change.
    const afterText = snapshot(root, vault);
    expect(afterText.size).toBe(beforeText.size);
    let changedNotes = 0;
    for (const [p, before] of beforeText) {
      const after = afterText.get(map(p));
      expect(after).toBeDefined();
      if (after === before) continue;
      changedNotes++;
      expect({ note: p, masked: maskLinks(after!) }).toEqual({ note: p, masked: maskLinks(before) });
    }
    expect(r.notes_updated).toBe(changedNotes);
    expect(r.links_updated).toBeGreaterThanOrEqual(changedNotes);
    return r;
  }

  test("a heavily linked note moves to another folder under a new name", async () => {
    const counts = new Map<string, number>();
    for (const targets of Object.values(vault.resolvedLinks())) {
      for (const [t, n] of Object.entries(targets)) if (isNotePath(t)) counts.set(t, (counts.get(t) ?? 0) + n);
    }
    const [target, n] = [...counts].sort((a, b) => b[1] - a[1])[0];
    expect(n).toBeGreaterThan(10);
    const r = await renameAndCheck(target, `Moved here/${path.posix.basename(target, ".md")} renamed.md`);
    expect(r.notes_updated).toBeGreaterThan(10);
  });

  test("a folder with linked notes is renamed and moved", async () => {
    const folders = vault.listFolders().filter((f) => !f.includes("/") && f !== "Moved here");
    const linkedIn = (folder: string) => {
      let n = 0;
      for (const [src, targets] of Object.entries(vault.resolvedLinks())) {
        if (isUnder(src, folder)) continue;
        for (const [t, c] of Object.entries(targets)) if (isUnder(t, folder) && isNotePath(t)) n += c;
      }
      return n;
    };
    const folder = folders.sort((a, b) => linkedIn(b) - linkedIn(a))[0];
    expect(linkedIn(folder)).toBeGreaterThan(10);
    const r = await renameAndCheck(folder, `Renamed top/${folder} (new)`);
    expect(r.links_updated).toBeGreaterThan(0);
  });
});

function copyLinks(m: Record<string, Record<string, number>>): Record<string, Record<string, number>> {
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, { ...v }]));
}
