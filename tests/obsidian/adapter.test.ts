/**
 * What the Obsidian adapter does beyond the shared VaultPort contract: the user's trash setting,
 * excluded files, event registration through the plugin, waiting for the metadata cache, rename
 * counts, and the state store over `vault.adapter`.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { App, DataAdapter, EventRef } from "obsidian";
import type { VaultEvent } from "../../src/core/vault";
import { ObsidianVault, toNoteMetadata } from "../../src/hosts/obsidian/adapter";
import { ObsidianStateStore } from "../../src/hosts/obsidian/state-store";
import { createTestApp, type App as StandInApp, type TestAppOptions } from "../stand-in/obsidian";

const roots: string[] = [];

function vaultWith(files: Record<string, string>, opts?: TestAppOptions): { root: string; app: StandInApp; vault: ObsidianVault } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "obsidian-adapter-")));
  roots.push(root);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  const { app } = createTestApp(root, opts);
  return { root, app, vault: new ObsidianVault(app as unknown as App) };
}

afterEach(() => {
  for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
});

describe("ObsidianVault", () => {
  test.each([
    ["system", "the system trash"],
    ["local", "the vault's .trash folder"],
    ["none", "permanently deleted"],
  ])("trash follows the user's setting (%s) and says where the file went", async (option, where) => {
    const { root, vault } = vaultWith({ "A.md": "a\n", "B.md": "[[A]]\n" }, { config: { trashOption: option } });
    await vault.ready();
    expect(await vault.trash("A.md")).toBe(where);
    expect(fs.existsSync(path.join(root, "A.md"))).toBe(false);
    expect(fs.existsSync(path.join(root, ".trash/A.md"))).toBe(option === "local");
    expect(vault.stat("A.md")).toBeNull();
  });

  test("without getConfig the trash description stays generic and no excluded files are reported", async () => {
    const { app, vault } = vaultWith({ "A.md": "a\n" });
    (app.vault as unknown as { getConfig?: unknown }).getConfig = undefined;
    expect(vault.trashDescription()).toBe("the trash chosen in Obsidian's settings");
    expect(vault.excludedFilters()).toEqual([]);
  });

  test("excluded files come from userIgnoreFilters", () => {
    const { vault } = vaultWith({ "A.md": "a\n" }, { config: { userIgnoreFilters: ["Archive/", "/^tmp/", 3, ""] } });
    expect(vault.excludedFilters()).toEqual(["Archive/", "/^tmp/"]);
  });

  test("events are registered through the registrar and removed on close", async () => {
    const { app, vault: other } = vaultWith({ "A.md": "a\n" });
    await other.close();
    const registered: EventRef[] = [];
    const vault = new ObsidianVault(app as unknown as App, (ref) => registered.push(ref));
    expect(registered.length).toBeGreaterThanOrEqual(5);
    const seen: VaultEvent[] = [];
    vault.onChange((e) => seen.push(e));
    await vault.create("B.md", "b\n");
    await vault.process("A.md", (t) => t + "more\n");
    expect(seen).toEqual([
      { type: "create", path: "B.md" },
      { type: "modify", path: "B.md" },
      { type: "modify", path: "A.md" },
    ]);
    await vault.close();
    for (const name of ["create", "modify", "delete", "rename"]) expect(app.vault.listenerCount(name)).toBe(0);
    expect(app.metadataCache.listenerCount("changed")).toBe(0);
  });

  test("ready waits for the metadata cache to be resolved", async () => {
    const { app, vault } = vaultWith({ "A.md": "[[B]]\n", "B.md": "b\n" });
    expect(app.metadataCache.resolved).toBe(false);
    await vault.ready();
    expect(app.metadataCache.resolved).toBe(true);
    expect(vault.resolvedLinks()["A.md"]).toEqual({ "B.md": 1 });
    await vault.ready();
  });

  test("rename reports the links Obsidian rewrote and in how many notes", async () => {
    const { root, vault } = vaultWith({
      "Target.md": "t\n",
      "One.md": "[[Target]] and [[Target|again]] and ![[Target#Part]]\n",
      "Two.md": "---\nrel: \"[[Target]]\"\n---\n[Md](Target.md)\n",
      "Three.md": "no links\n",
    });
    await vault.ready();
    const res = await vault.rename("Target.md", "Moved/Renamed.md");
    expect(res).toEqual({ path: "Moved/Renamed.md", linksUpdated: 5, notesUpdated: 2, updatedPaths: ["One.md", "Two.md"] });
    expect(fs.readFileSync(path.join(root, "One.md"), "utf8")).toBe("[[Renamed]] and [[Renamed|again]] and ![[Renamed#Part]]\n");
    expect(vault.resolvedLinks()["Two.md"]).toEqual({ "Moved/Renamed.md": 2 });
  });

  test("rename refuses to move a folder into itself", async () => {
    const { vault } = vaultWith({ "F/A.md": "a\n" });
    await expect(vault.rename("F", "F/Sub")).rejects.toMatchObject({ code: "invalid_argument" });
  });

  test("toNoteMetadata fills the lists Obsidian leaves out and keys blocks lower-case", () => {
    const pos = { start: { line: 0, col: 0, offset: 0 }, end: { line: 0, col: 5, offset: 5 } };
    const meta = toNoteMetadata({ blocks: { MyBlock: { id: "MyBlock", position: pos } }, frontmatter: { a: 1 }, frontmatterPosition: pos });
    expect(meta).toEqual({
      headings: [],
      links: [],
      embeds: [],
      frontmatterLinks: [],
      tags: [],
      blocks: { myblock: { id: "MyBlock", position: pos } },
      frontmatter: { a: 1 },
      frontmatterPosition: pos,
    });
    const bad = toNoteMetadata({ frontmatterPosition: { start: pos.start, end: { line: 2, col: 3, offset: 20 } } });
    expect(bad.frontmatterError).toBeTruthy();
    const empty = toNoteMetadata({ frontmatterPosition: { start: pos.start, end: { line: 1, col: 3, offset: 7 } } });
    expect(empty.frontmatterError).toBeUndefined();
  });
});

describe("ObsidianStateStore", () => {
  test("writes atomically into the plugin folder, reads back, appends lines, removes", async () => {
    const { root, app } = vaultWith({ "A.md": "a\n" });
    const dir = ".obsidian/plugins/vault-mcp";
    const store = new ObsidianStateStore(app.vault.adapter as unknown as DataAdapter, dir);
    expect(store.description).toBe(dir);
    expect(await store.read("index.db")).toBeNull();
    await store.write("index.db", new Uint8Array([1, 2, 3]));
    await store.write("index.db", new Uint8Array([4, 5]));
    expect(Array.from((await store.read("index.db"))!)).toEqual([4, 5]);
    await store.write("sub/meta.json", "{}");
    expect(new TextDecoder().decode((await store.read("sub/meta.json"))!)).toBe("{}");
    await store.append("activity.log", "one");
    await store.append("activity.log", "two\n");
    expect(fs.readFileSync(path.join(root, dir, "activity.log"), "utf8")).toBe("one\ntwo\n");
    // No temp or backup files are left behind; nothing appears among the notes.
    expect(fs.readdirSync(path.join(root, dir)).sort()).toEqual(["activity.log", "index.db", "sub"]);
    expect(app.vault.getFiles().map((f) => f.path)).toEqual(["A.md"]);
    await store.remove("index.db");
    expect(await store.read("index.db")).toBeNull();
    await expect(store.write("../escape", "x")).rejects.toThrow();
  });

  test("a crash between the two renames leaves the previous version readable", async () => {
    const { root, app } = vaultWith({});
    const dir = ".obsidian/plugins/vault-mcp";
    fs.mkdirSync(path.join(root, dir), { recursive: true });
    fs.writeFileSync(path.join(root, dir, "index.db.bak"), "old");
    const store = new ObsidianStateStore(app.vault.adapter as unknown as DataAdapter, dir);
    expect(new TextDecoder().decode((await store.read("index.db"))!)).toBe("old");
  });
});
