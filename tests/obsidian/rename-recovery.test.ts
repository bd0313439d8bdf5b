/**
 * The built plugin finishes a rename that Obsidian was cut short in (quit or crashed after moving the
 * file, before rewriting every linking note): from the journal the rename left in the plugin's data
 * folder, at the next start of the server, after the metadata cache is resolved. Notes the owner
 * edited meanwhile keep their edits; the recovery shows in `stats` and the activity log.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { jest } from "@jest/globals";
import { connect, freePort, installHooks, loadPlugin, makeVault, until } from "./harness";

installHooks();

/** The plugin's log (the developer console), kept out of the test output and checked. */
let warnings: string[] = [];
beforeEach(() => {
  warnings = [];
  jest.spyOn(console, "warn").mockImplementation((...args: unknown[]) => void warnings.push(args.map(String).join(" ")));
  jest.spyOn(console, "error").mockImplementation(() => {});
});
afterEach(() => jest.restoreAllMocks());

const TOKEN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";
const N = 12;
const FORMS = ["[[Target]]", "[[Target|the target]]", "[[Target#Part]]", "![[Target]]", "[the target](../Topics/Target.md)", "[[Topics/Target]]"];
const linker = (i: number) => `Notes/Linker ${String(i).padStart(2, "0")}.md`;
const body = (i: number) => `# Linker ${i}\n\nSee ${FORMS[i % FORMS.length]} and ${FORMS[(i + 1) % FORMS.length]}.\n`;
const journalPath = (root: string) => path.join(root, ".obsidian/plugins/vault-mcp/rename-journal.json");

interface Stats {
  unresolved_links: number;
  last_recovery?: { renames: { path: string; new_path: string; outcome: string; moved_at_start: boolean; links_updated: number; notes_updated: number }[] };
}

async function expectRecovered(port: number, root: string, expectNotes: number): Promise<void> {
  const client = await connect(port, TOKEN);
  try {
    const broken = await client.callTool({ name: "get_broken_links", arguments: {} });
    expect(broken.structuredContent).toMatchObject({ total: 0 });
    const stats = (await client.callTool({ name: "stats", arguments: {} })).structuredContent as Stats;
    expect(stats.unresolved_links).toBe(0);
    expect(stats.last_recovery?.renames).toEqual([
      expect.objectContaining({ path: "Topics/Target.md", new_path: "Archive/Renamed.md", outcome: "finished", moved_at_start: false, notes_updated: expectNotes, links_updated: 2 * expectNotes }),
    ]);
    const log = (await client.callTool({ name: "get_activity_log", arguments: { limit: 3 } })).structuredContent as { entries: { tool: string; path: string; new_path?: string; detail?: string }[] };
    expect(log.entries[0]).toMatchObject({ tool: "rename", path: "Topics/Target.md", new_path: "Archive/Renamed.md" });
    expect(log.entries[0].detail).toMatch(/^interrupted, finished at start-up/);
  } finally {
    await client.close();
  }
  for (let i = 0; i < N; i++) {
    const text = fs.readFileSync(path.join(root, linker(i)), "utf8");
    expect(text).not.toMatch(/Target/);
    expect(text.match(/Renamed/g)).toHaveLength(2);
  }
  expect(fs.existsSync(journalPath(root))).toBe(false);
  expect(warnings.some((w) => w.includes('the rename of "Topics/Target.md" to "Archive/Renamed.md"') && w.includes("finished it at start-up"))).toBe(true);
}

describe("the built plugin finishes an interrupted rename at start-up", () => {
  test("a journal and a half-done rename left behind: the linking notes still to rewrite are rewritten, an edit made since stays", async () => {
    const port = await freePort();
    // The state Obsidian left: the note moved, the first 4 linking notes rewritten, the rest not.
    const files: Record<string, string> = { "Archive/Renamed.md": "# Target\n\n## Part\n" };
    for (let i = 0; i < N; i++) {
      files[linker(i)] =
        i < 4
          ? body(i).replace(/\[\[Target/g, "[[Renamed").replace("../Topics/Target.md", "../Archive/Renamed.md").replace("[[Topics/Target", "[[Archive/Renamed")
          : body(i);
    }
    files[linker(9)] += "\nAn edit the owner made after the crash.\n";
    const root = makeVault(files, { port, token: TOKEN, writeMode: true });
    const notes = [...Array.from({ length: N }, (_, i) => linker(i)), "Topics/Target.md"];
    const journal = {
      version: 1,
      renames: [
        {
          id: "left-by-a-crash",
          started: "2026-01-02T03:04:05.000Z",
          client: "some-client",
          tool: "rename",
          path: "Topics/Target.md",
          new_path: "Archive/Renamed.md",
          kind: "file",
          files: [["Topics/Target.md", "Archive/Renamed.md"]],
          notes,
        },
      ],
    };
    fs.writeFileSync(journalPath(root), JSON.stringify(journal));

    const { status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    await expectRecovered(port, root, N - 4);
    expect(fs.readFileSync(path.join(root, linker(9)), "utf8")).toContain("An edit the owner made after the crash.");
  });

  test("a rename Obsidian stopped in the middle of keeps its journal and is finished when the server starts again", async () => {
    const port = await freePort();
    const files: Record<string, string> = { "Topics/Target.md": "# Target\n\n## Part\n" };
    for (let i = 0; i < N; i++) files[linker(i)] = body(i);
    const root = makeVault(files, { port, token: TOKEN, writeMode: true, confirmDestructive: false });
    const { app, plugin, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    // Obsidian moves the file, then fails before it updates any link (as if it quit right there).
    const fileManager = app.fileManager as unknown as { renameFile: (f: unknown, p: string) => Promise<void> };
    const original = fileManager.renameFile.bind(fileManager);
    fileManager.renameFile = async (f, p) => {
      await app.vault.rename(f as never, p);
      throw new Error("Obsidian stopped");
    };
    const client = await connect(port, TOKEN);
    try {
      const r = await client.callTool({ name: "rename", arguments: { path: "Topics/Target.md", new_path: "Archive/Renamed.md" } });
      expect(r.isError).toBe(true);
    } finally {
      await client.close();
      fileManager.renameFile = original;
    }
    expect(fs.existsSync(path.join(root, "Archive/Renamed.md"))).toBe(true);
    expect(fs.existsSync(journalPath(root))).toBe(true);
    await plugin.applyAndRestart();
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen again");
    await expectRecovered(port, root, N);
  });
});
