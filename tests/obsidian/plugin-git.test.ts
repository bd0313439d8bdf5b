/**
 * The built plugin in a git-backed vault: the git tools appear, "Commit changes made through the
 * server" commits an assistant's change (only its file), and the settings tab says when Obsidian Git
 * already commits by itself.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { settingsIn, type ToggleComponent } from "../stand-in/obsidian";
import { commitAll, git, initRepo } from "../support/git-repo";
import { connect, freePort, installHooks, loadPlugin, makeVault, until } from "./harness";

installHooks();

const TOKEN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";

test("in a git-backed vault the plugin offers the git tools and commits a change made through it", async () => {
  const port = await freePort();
  const root = makeVault({ "Notes/A.md": "# A\n", "Other.md": "other\n" }, { version: 5, enabled: true, port, token: TOKEN, writeMode: true, gitCommit: true, confirmDestructive: false });
  fs.writeFileSync(path.join(root, ".gitignore"), ".obsidian/\n");
  initRepo(root);
  commitAll(root, "first", "2026-01-01T10:00:00Z");
  fs.writeFileSync(path.join(root, "Other.md"), "the owner's uncommitted edit\n");
  const { app, plugin, status } = await loadPlugin(root);
  await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
  const client = await connect(port, TOKEN);
  try {
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["get_history", "get_diff", "get_recent_changes", "git_sync"]));
    const stats = (await client.callTool({ name: "stats", arguments: {} })).structuredContent as { git: { git_backed: boolean; branch: string; commit_changes: boolean } };
    expect(stats.git).toMatchObject({ git_backed: true, branch: "main", commit_changes: true });
    const w = (await client.callTool({ name: "write", arguments: { path: "Notes/B.md", content: "b\n" } })).structuredContent as { commit: { committed: boolean; sha: string } };
    expect(w.commit.committed).toBe(true);
    expect(git(root, ["rev-parse", "HEAD"]).trim()).toBe(w.commit.sha);
    expect(git(root, ["show", "--name-only", "--format=%s", "HEAD"]).trim().split("\n")).toEqual(["vault-mcp: write Notes/B.md (plugin-test)", "", "Notes/B.md"]);
    expect(git(root, ["status", "--porcelain"])).toContain(" M Other.md");
    const h = (await client.callTool({ name: "get_history", arguments: {} })).structuredContent as { commits: { message: string }[] };
    expect(h.commits.map((c) => c.message)).toEqual(["vault-mcp: write Notes/B.md (plugin-test)", "first"]);

    // A delete is committed; the vault's trash goes into the repository's info/exclude, said once.
    const d = (await client.callTool({ name: "delete", arguments: { path: "Notes/B.md", confirm_path: "Notes/B.md" } })).structuredContent as { trash_note?: string; commit: { committed: boolean } };
    expect(d.commit.committed).toBe(true);
    expect(d.trash_note).toMatch(/info\/exclude/);
    expect(fs.readFileSync(path.join(root, ".git", "info", "exclude"), "utf8")).toMatch(/^\/\.trash\/$/m);

    // The plugin folder's caches never show up as changes in the owner's repository.
    fs.rmSync(path.join(root, ".gitignore"));
    const untracked = git(root, ["status", "--porcelain", "--untracked-files=all", "--", ".obsidian/plugins/vault-mcp"]).trim().split("\n").map((l) => l.slice(3)).sort();
    expect(untracked).toEqual([".obsidian/plugins/vault-mcp/.gitignore", ".obsidian/plugins/vault-mcp/data.json"]);
    expect(fs.readdirSync(path.join(root, ".obsidian/plugins/vault-mcp")).length).toBeGreaterThan(3);

    // Obsidian Git committing every 10 minutes: the tab says so beside our commit setting.
    (app as unknown as { plugins: { enabledPlugins: Set<string> } }).plugins = { enabledPlugins: new Set(["obsidian-git"]) };
    fs.mkdirSync(path.join(root, ".obsidian/plugins/obsidian-git"), { recursive: true });
    fs.writeFileSync(path.join(root, ".obsidian/plugins/obsidian-git/data.json"), JSON.stringify({ autoSaveInterval: 10 }));
    const tab = plugin.settingTabs[0];
    tab.display();
    const setting = settingsIn(tab.containerEl).find((s) => s.nameEl.getText() === "Commit changes made through the server");
    expect(setting).toBeDefined();
    expect((setting!.components[0] as ToggleComponent).getValue()).toBe(true);
    await until(() => setting!.descEl.getText().includes("Obsidian Git is enabled and commits every 10 minutes"), "the Obsidian Git note");
    expect(settingsIn(tab.containerEl).map((s) => s.nameEl.getText())).toEqual(expect.arrayContaining(["Git tools", "Push after committing", "Run the repository's hooks", "Git program"]));
  } finally {
    await client.close();
  }
});
