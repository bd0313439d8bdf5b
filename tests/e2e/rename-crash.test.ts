/**
 * A rename killed in the middle (SIGKILL at the headless server's test-only crash points,
 * `VAULT_MCP_CRASH_AT`): before the move, after the move, after some linking notes were rewritten,
 * and again while the next start was finishing it. The next start finishes the rename from its
 * journal: no broken links, every link points at the new name, edits the owner made while the
 * server was down stay, and the recovery shows in the log, `stats` and the activity log.
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import { appendFileSync, existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { startChildServer, type ChildServer } from "../support/child-server";
import { makeTempVault, removeTree, type FileTree } from "../support/harness";

const cleanup: string[] = [];
const running: ChildServer[] = [];
afterAll(async () => {
  for (const s of running) await s.kill().catch(() => {});
  for (const d of cleanup) removeTree(d);
});

const N = 30;
const FORMS = ["[[Target]]", "[[Target|the target]]", "[[Target#Part]]", "![[Target]]", "[the target](../Topics/Target.md)", "[[Topics/Target]]"];
const linker = (i: number) => `Notes/Linker ${String(i).padStart(2, "0")}.md`;
const OWNER_EDIT = "\nThe owner wrote this line while the server was down.\n";

/** A note linked from 30 notes in every form (two links each), an attachment embedded by path from some. */
function linkingVault(): FileTree {
  const files: FileTree = {
    "Topics/Target.md": "# Target\n\n## Part\n\nThe target note.\n",
    "Topics/diagram.png": "not really a png",
    "Other.md": "# Other\n\nNothing to do with it.\n",
  };
  for (let i = 0; i < N; i++) {
    const embed = i % 5 === 0 ? "\n![[Topics/diagram.png]]\n" : "";
    files[linker(i)] = `# Linker ${i}\n\nSee ${FORMS[i % FORMS.length]} and ${FORMS[(i + 1) % FORMS.length]}.\n${embed}\nEnd of note ${i}.\n`;
  }
  return files;
}

function tempDir(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  cleanup.push(d);
  return d;
}

const callTool = async (client: Client, name: string, args: Record<string, unknown>) => (await client.callTool({ name, arguments: args })) as CallToolResult;

async function start(root: string, stateDir: string, crashAt?: string): Promise<ChildServer> {
  const s = await startChildServer(root, { stateDir, write: true, ...(crashAt ? { env: { VAULT_MCP_CRASH_AT: crashAt } } : {}) });
  running.push(s);
  return s;
}

/** Starts the server with a crash point, asks for the rename, and waits until the server killed itself. */
async function renameAndCrash(root: string, stateDir: string, crashAt: string, from: string, to: string): Promise<void> {
  const s = await start(root, stateDir, crashAt);
  const exited = new Promise<void>((resolve) => (s.child.exitCode !== null || s.child.signalCode !== null ? resolve() : s.child.once("exit", () => resolve())));
  const client = await s.connect();
  const call = callTool(client, "rename", { path: from, new_path: to }).then(
    (r) => r,
    () => null,
  );
  await exited;
  expect(s.child.signalCode).toBe("SIGKILL");
  expect(s.stderr()).toContain(`crash point ${crashAt} reached`);
  expect(await call).toBeNull(); // the client never got an answer
  await s.kill();
}

const read = (root: string, rel: string) => readFileSync(path.join(root, ...rel.split("/")), "utf8");
const linkers = (root: string) => Array.from({ length: N }, (_, i) => read(root, linker(i)));

interface Recovered {
  path: string;
  new_path: string;
  outcome: string;
  moved_at_start: boolean;
  links_updated: number;
  notes_updated: number;
}

/** After the restart: no broken links, the recovery in stats and in the activity log. */
async function expectRecovered(s: ChildServer, from: string, to: string): Promise<Recovered> {
  const client = await s.connect();
  const broken = await callTool(client, "get_broken_links", {});
  expect(broken.isError).toBeFalsy();
  expect(broken.structuredContent).toMatchObject({ total: 0, links: [] });
  const stats = (await callTool(client, "stats", {})).structuredContent as { unresolved_links: number; last_recovery?: { at: string; renames: Recovered[] } };
  expect(stats.unresolved_links).toBe(0);
  expect(stats.last_recovery?.renames).toHaveLength(1);
  const r = stats.last_recovery!.renames[0];
  expect(r).toMatchObject({ path: from, new_path: to, outcome: "finished" });
  const log = (await callTool(client, "get_activity_log", { limit: 5 })).structuredContent as { entries: { tool: string; path: string; new_path?: string; detail?: string }[] };
  expect(log.entries[0]).toMatchObject({ tool: "rename", path: from, new_path: to });
  expect(log.entries[0].detail).toMatch(/^interrupted, finished at start-up/);
  expect(s.stderr()).toContain(`the rename of "${from}" to "${to}"`);
  expect(s.stderr()).toContain("finished it at start-up");
  return r;
}

/** Every link of every linking note points at the renamed note (two links a note). */
function expectAllLinksRenamed(root: string): void {
  for (const text of linkers(root)) {
    expect(text.match(/Target/g)?.length).toBe(2);
    expect(text.match(/Archive\/Renamed(%20| )Target|Renamed Target/g)?.length).toBe(2);
  }
}

describe("a rename killed in the middle is finished at the next start", () => {
  test("killed after the move, before any linking note was rewritten", async () => {
    const root = makeTempVault(linkingVault(), "vault-mcp-rename-crash-");
    cleanup.push(root);
    const stateDir = tempDir("vault-mcp-rename-crash-state-");
    await renameAndCrash(root, stateDir, "rename:after-move", "Topics/Target.md", "Archive/Renamed Target.md");
    // What the crash left: the note moved, every link still to the old name, the journal.
    expect(existsSync(path.join(root, "Topics", "Target.md"))).toBe(false);
    expect(existsSync(path.join(root, "Archive", "Renamed Target.md"))).toBe(true);
    expect(linkers(root).filter((t) => t.includes("Renamed"))).toHaveLength(0);
    expect(existsSync(path.join(stateDir, "rename-journal.json"))).toBe(true);
    // The owner edits two linking notes while the server is down.
    appendFileSync(path.join(root, ...linker(0).split("/")), OWNER_EDIT);
    appendFileSync(path.join(root, ...linker(N - 1).split("/")), OWNER_EDIT);

    const s = await start(root, stateDir);
    const r = await expectRecovered(s, "Topics/Target.md", "Archive/Renamed Target.md");
    expect(r).toMatchObject({ moved_at_start: false, notes_updated: N, links_updated: 2 * N });
    expectAllLinksRenamed(root);
    expect(read(root, linker(0)).endsWith(OWNER_EDIT)).toBe(true);
    expect(read(root, linker(N - 1)).endsWith(OWNER_EDIT)).toBe(true);
    expect(read(root, linker(7))).toContain("End of note 7.");
    expect(existsSync(path.join(stateDir, "rename-journal.json"))).toBe(false);

    // A rename that is not interrupted leaves no journal behind, and the next start recovers nothing.
    const client = await s.connect();
    const again = await callTool(client, "rename", { path: "Other.md", new_path: "Other 2.md" });
    expect(again.isError).toBeFalsy();
    expect(existsSync(path.join(stateDir, "rename-journal.json"))).toBe(false);
    await s.stop();
    const third = await start(root, stateDir);
    const stats = (await callTool(await third.connect(), "stats", {})).structuredContent as Record<string, unknown>;
    expect(stats.last_recovery).toBeUndefined();
    await third.stop();
  });

  test("killed after the journal, before the move: the start makes the move the client asked for", async () => {
    const root = makeTempVault(linkingVault(), "vault-mcp-rename-crash-");
    cleanup.push(root);
    const stateDir = tempDir("vault-mcp-rename-crash-state-");
    await renameAndCrash(root, stateDir, "rename:after-journal", "Topics/Target.md", "Archive/Renamed Target.md");
    expect(existsSync(path.join(root, "Topics", "Target.md"))).toBe(true);
    expect(existsSync(path.join(root, "Archive", "Renamed Target.md"))).toBe(false);
    appendFileSync(path.join(root, ...linker(3).split("/")), OWNER_EDIT);

    const s = await start(root, stateDir);
    const r = await expectRecovered(s, "Topics/Target.md", "Archive/Renamed Target.md");
    expect(r).toMatchObject({ moved_at_start: true, notes_updated: N, links_updated: 2 * N });
    expect(existsSync(path.join(root, "Topics", "Target.md"))).toBe(false);
    expect(existsSync(path.join(root, "Archive", "Renamed Target.md"))).toBe(true);
    expectAllLinksRenamed(root);
    expect(read(root, linker(3)).endsWith(OWNER_EDIT)).toBe(true);
    await s.stop();
  });

  test("killed after 7 notes were rewritten, then again while the start was finishing it", async () => {
    const root = makeTempVault(linkingVault(), "vault-mcp-rename-crash-");
    cleanup.push(root);
    const stateDir = tempDir("vault-mcp-rename-crash-state-");
    await renameAndCrash(root, stateDir, "rename:after-rewrite:7", "Topics/Target.md", "Archive/Renamed Target.md");
    expect(linkers(root).filter((t) => t.includes("Renamed"))).toHaveLength(7);
    for (let i = 0; i < N; i++) appendFileSync(path.join(root, ...linker(i).split("/")), i % 10 === 4 ? OWNER_EDIT : "");

    // The next start dies too, after rewriting 5 more notes.
    await expect(start(root, stateDir, "write:5")).rejects.toThrow(/exited/);
    expect(linkers(root).filter((t) => t.includes("Renamed"))).toHaveLength(12);
    expect(existsSync(path.join(stateDir, "rename-journal.json"))).toBe(true);

    const s = await start(root, stateDir);
    const r = await expectRecovered(s, "Topics/Target.md", "Archive/Renamed Target.md");
    // Only what was left: notes rewritten before either crash are not rewritten twice.
    expect(r).toMatchObject({ moved_at_start: false, notes_updated: N - 12, links_updated: 2 * (N - 12) });
    expectAllLinksRenamed(root);
    for (let i = 4; i < N; i += 10) expect(read(root, linker(i)).endsWith(OWNER_EDIT)).toBe(true);
    await s.stop();
  });

  test("a folder rename (notes and an attachment) killed after 3 notes were rewritten", async () => {
    const root = makeTempVault(linkingVault(), "vault-mcp-rename-crash-");
    cleanup.push(root);
    const stateDir = tempDir("vault-mcp-rename-crash-state-");
    await renameAndCrash(root, stateDir, "rename:after-rewrite:3", "Topics", "Subjects/Moved");
    expect(existsSync(path.join(root, "Subjects", "Moved", "diagram.png"))).toBe(true);
    appendFileSync(path.join(root, ...linker(5).split("/")), OWNER_EDIT);

    const s = await start(root, stateDir);
    const r = await expectRecovered(s, "Topics", "Subjects/Moved");
    expect(r.moved_at_start).toBe(false);
    for (const text of linkers(root)) expect(text).not.toContain("Topics/");
    expect(read(root, linker(0))).toContain("![[Subjects/Moved/diagram.png]]");
    expect(read(root, linker(4))).toContain("[the target](../Subjects/Moved/Target.md)");
    expect(read(root, linker(5))).toContain("[[Subjects/Moved/Target]]");
    expect(read(root, linker(5)).endsWith(OWNER_EDIT)).toBe(true);
    await s.stop();
  });
});
