/**
 * Finishing an interrupted rename (src/core/write/rename-journal.ts) on a real folder: links are
 * rewritten from the vault as it was before the move, idempotently (a second pass changes nothing,
 * also for a moved note's relative links), a link that a same-named file shadows after the move is
 * still taken to the renamed note, and a rename whose old path was taken again is dropped untouched.
 */
import { afterEach, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { MemoryStateStore } from "../../src/core/state";
import { finishInterruptedRename, RenameJournal, RENAME_JOURNAL_FILE, type RenameJournalEntry } from "../../src/core/write/rename-journal";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { makeTempRoot } from "../contract/vault-port.contract";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

function vaultDir(files: Record<string, string>): string {
  const root = makeTempRoot("rename-journal-");
  cleanup.push(() => fs.rmSync(root, { recursive: true, force: true }));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

async function open(root: string): Promise<FsVault> {
  const v = await FsVault.open(root, { watch: false });
  cleanup.push(() => v.close());
  return v;
}

function entry(path: string, newPath: string, files: [string, string][], notes: string[]): RenameJournalEntry {
  return { id: "x", started: "2026-01-01T00:00:00.000Z", client: "c", tool: "rename", path, new_path: newPath, kind: "file", files, notes };
}

const read = (root: string, rel: string) => fs.readFileSync(path.join(root, rel), "utf8");

describe("finishing an interrupted rename", () => {
  test("a moved note's relative links and the links to it are rewritten once; a second pass changes nothing", async () => {
    // The state after the move of A/n.md to D/E/n.md, before any link was rewritten.
    const root = vaultDir({
      "D/E/n.md": "# n\n\n[x](../C/x.md) and [[../C/x.md|x too]]\n",
      "C/x.md": "# x\n",
      "Linker.md": "[[A/n]] and [n](A/n.md) and [[n#Top]]\n",
    });
    const v = await open(root);
    const e = entry("A/n.md", "D/E/n.md", [["A/n.md", "D/E/n.md"]], ["Linker.md", "A/n.md"]);
    const first = await finishInterruptedRename(v, e, () => {});
    expect(first).toMatchObject({ outcome: "finished", moved_at_start: false, notes_updated: 2 });
    expect(read(root, "D/E/n.md")).toBe("# n\n\n[x](../../C/x.md) and [[../../C/x.md|x too]]\n");
    expect(read(root, "Linker.md")).toBe("[[D/E/n]] and [n](D/E/n.md) and [[n#Top]]\n");
    const second = await finishInterruptedRename(v, e, () => {});
    expect(second).toMatchObject({ outcome: "finished", links_updated: 0, notes_updated: 0 });
    expect(read(root, "D/E/n.md")).toBe("# n\n\n[x](../../C/x.md) and [[../../C/x.md|x too]]\n");
  });

  test("a bare-name link that another file of the same name catches after the move still goes to the renamed note", async () => {
    const root = vaultDir({ "Config.md": "# renamed from Settings\n", "Other/Settings.md": "# another\n", "Linker.md": "[[Settings]]\n" });
    const v = await open(root);
    expect(v.resolveLink("Settings", "Linker.md")).toBe("Other/Settings.md"); // not broken, but not the note it meant
    const r = await finishInterruptedRename(v, entry("Settings.md", "Config.md", [["Settings.md", "Config.md"]], ["Linker.md"]), () => {});
    expect(r).toMatchObject({ outcome: "finished", links_updated: 1 });
    expect(read(root, "Linker.md")).toBe("[[Config]]\n");
  });

  test("an old path taken again while the server was down: dropped, nothing changed", async () => {
    const root = vaultDir({ "New.md": "# moved\n", "Old.md": "# the owner made a new one\n", "Linker.md": "[[Old]]\n" });
    const v = await open(root);
    const r = await finishInterruptedRename(v, entry("Old.md", "New.md", [["Old.md", "New.md"]], ["Linker.md"]), () => {});
    expect(r.outcome).toBe("dropped");
    expect(r.reason).toMatch(/"Old.md" exists again/);
    expect(read(root, "Linker.md")).toBe("[[Old]]\n");
  });

  test("the journal: entries of renames running in this process are not interrupted ones; a damaged file reads as none", async () => {
    const store = new MemoryStateStore();
    const journal = new RenameJournal(store);
    const e = { ...entry("a.md", "b.md", [["a.md", "b.md"]], []), id: journal.newId() };
    await journal.begin(e);
    expect(await journal.interrupted()).toEqual([]);
    expect(await new RenameJournal(store).interrupted()).toEqual([]); // same process: still running
    journal.leave(e.id);
    expect(await journal.interrupted()).toEqual([e]);
    await journal.end(e.id);
    expect(store.files.has(RENAME_JOURNAL_FILE)).toBe(false);
    await store.write(RENAME_JOURNAL_FILE, "{ not json");
    expect(await journal.interrupted()).toEqual([]);
  });
});
