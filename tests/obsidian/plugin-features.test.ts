/**
 * The built plugin's owner-facing features under the stand-in: settings v1 → v2, confirmations for
 * destructive changes, tool profiles, workspace tools, the activity log, and index progress.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { CORE_TOOLS } from "../../src/mcp/server";
import { allTools } from "../../src/mcp/tools";
import { Modal, settingsIn, type ButtonComponent, type DropdownComponent, type MarkdownView, type ToggleComponent } from "../stand-in/obsidian";
import { ADDED_SINCE_V1 } from "../support/settings-defaults";
import { connect, freePort, installHooks, loadPlugin, makeVault, readData, textOf, until } from "./harness";

installHooks();

const TOKEN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";

function openModal(title: string): Modal | undefined {
  return Modal.opened.find((m) => m.isOpen && m.titleEl.getText() === title);
}

async function clickIn(modal: Modal, label: string): Promise<void> {
  const buttons = settingsIn(modal.contentEl).flatMap((s) => s.components) as ButtonComponent[];
  const button = buttons.find((b) => b.buttonEl.getText() === label);
  if (!button) throw new Error(`no "${label}" button`);
  await button.click();
}

describe("the built plugin: settings, confirmations, tools, activity, progress", () => {
  test("v1 settings are migrated to v5 and saved; the tab shows the new settings", async () => {
    const port = await freePort();
    const v1 = { version: 1, enabled: true, port, token: TOKEN, writeMode: true, allowedOrigins: [], hiddenFolders: ["Private"], protectedFolders: [] };
    const root = makeVault({ "A.md": "alpha\n" }, v1);
    const { plugin, status } = await loadPlugin(root);
    const expected = { ...v1, version: 5, ...ADDED_SINCE_V1 };
    expect(plugin.settings).toEqual(expected);
    expect(readData(root)).toEqual(expected);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");

    const tab = plugin.settingTabs[0];
    tab.display();
    const names = settingsIn(tab.containerEl).map((s) => s.nameEl.getText());
    expect(names).toEqual(
      expect.arrayContaining(["Ask before destructive changes", "Tool set", "Largest note to read (KB)", "Largest attachment to read (KB)", "Tool call time limit (seconds)", "Search language"]),
    );
    // The client configurations use the real port and the real token (masked on screen).
    const shown = tab.containerEl.getText();
    expect(shown).toContain(`claude mcp add --transport http vault-`);
    expect(shown).toContain(`http://127.0.0.1:${port}/mcp`);
    expect(shown).not.toContain(TOKEN);
  });

  test("with confirmations on, a client's delete waits for the modal: Decline → an error and the file stays; Allow → deleted", async () => {
    const port = await freePort();
    const root = makeVault({ "Keep.md": "keep me\n", "Other.md": "other\n" }, { port, token: TOKEN, writeMode: true });
    const { status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    const client = await connect(port, TOKEN);
    try {
      const declined = client.callTool({ name: "delete", arguments: { path: "Keep.md", confirm_path: "Keep.md" } });
      await until(() => openModal("An assistant wants to delete a file") !== undefined, "the confirmation modal");
      const modal = openModal("An assistant wants to delete a file")!;
      expect(modal.contentEl.getText()).toContain("Keep.md");
      await clickIn(modal, "Decline");
      const no = await declined;
      expect(no.isError).toBe(true);
      expect(textOf(no)).toContain("declined");
      expect(fs.readFileSync(path.join(root, "Keep.md"), "utf8")).toBe("keep me\n");

      Modal.opened.length = 0;
      const allowed = client.callTool({ name: "delete", arguments: { path: "Keep.md", confirm_path: "Keep.md" } });
      await until(() => openModal("An assistant wants to delete a file") !== undefined, "the second confirmation modal");
      await clickIn(openModal("An assistant wants to delete a file")!, "Allow");
      const yes = await allowed;
      expect(yes.isError).toBeFalsy();
      expect(fs.existsSync(path.join(root, "Keep.md"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  test("turning confirmations off applies at once: delete goes through without a modal", async () => {
    const port = await freePort();
    const root = makeVault({ "Gone.md": "bye\n" }, { port, token: TOKEN, writeMode: true });
    const { plugin, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    const tab = plugin.settingTabs[0];
    tab.display();
    const toggle = settingsIn(tab.containerEl).find((s) => s.nameEl.getText() === "Ask before destructive changes")!.components[0] as ToggleComponent;
    await toggle.simulateChange(false);
    expect(readData(root).confirmDestructive).toBe(false);
    const client = await connect(port, TOKEN);
    try {
      const result = await client.callTool({ name: "delete", arguments: { path: "Gone.md", confirm_path: "Gone.md" } });
      expect(result.isError).toBeFalsy();
      expect(Modal.opened).toHaveLength(0);
      expect(fs.existsSync(path.join(root, "Gone.md"))).toBe(false);
    } finally {
      await client.close();
    }
  });

  test("the core profile lists only core tools; custom lists exactly the chosen ones", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n" }, { port, token: TOKEN, writeMode: true, toolProfile: "core" });
    const { plugin, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    let client = await connect(port, TOKEN);
    const core = (await client.listTools()).tools.map((t) => t.name);
    await client.close();
    expect(core.length).toBeGreaterThan(5);
    for (const name of core) expect(CORE_TOOLS).toContain(name);
    expect(core).toEqual(expect.arrayContaining(["read", "search", "write", "edit"]));
    expect(core).not.toContain("delete");
    expect(core).not.toContain("list_folders");

    // Custom, through the settings tab: starts from the core set, then one more tool.
    const tab = plugin.settingTabs[0];
    tab.display();
    const dropdown = settingsIn(tab.containerEl).find((s) => s.nameEl.getText() === "Tool set")!.components[0] as DropdownComponent;
    expect(dropdown.options).toEqual(["full", "core", "custom"]);
    await dropdown.simulateChange("custom");
    expect(plugin.settings.enabledTools.sort()).toEqual(allTools.map((t) => t.name).filter((n) => CORE_TOOLS.includes(n)).sort());
    const toolSettings = settingsIn(tab.containerEl).filter((s) => allTools.some((t) => s.descEl.getText().startsWith(t.name)));
    expect(toolSettings).toHaveLength(allTools.length);
    const listFolders = allTools.find((t) => t.name === "list_folders")!;
    const row = toolSettings.find((s) => s.nameEl.getText() === listFolders.title)!;
    await (row.components[0] as ToggleComponent).simulateChange(true);
    expect(readData(root).enabledTools).toContain("list_folders");
    await plugin.applyAndRestart();
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen after restart");
    client = await connect(port, TOKEN);
    const custom = (await client.listTools()).tools.map((t) => t.name);
    await client.close();
    expect(custom.sort()).toEqual([...core, "list_folders"].sort());
  });

  const hasWorkspaceTools = allTools.some((t) => t.name === "get_active_note");
  (hasWorkspaceTools ? test : test.skip)("get_active_note, list_open_notes and open_note work with Obsidian's workspace", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\nbeta\ngamma\n", "F/B.md": "b\n" }, { port, token: TOKEN });
    const { app, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    const client = await connect(port, TOKEN);
    try {
      const none = await client.callTool({ name: "get_active_note", arguments: {} });
      expect(none.structuredContent).toMatchObject({ active: false, path: null });

      const opened = await client.callTool({ name: "open_note", arguments: { path: "A.md", line: 3 } });
      expect(opened.isError).toBeFalsy();
      expect(app.workspace.activeLeaf?.lastOpenState).toEqual({ eState: { line: 2 }, active: true });
      await client.callTool({ name: "open_note", arguments: { path: "F/B.md", new_tab: true } });
      const list = await client.callTool({ name: "list_open_notes", arguments: {} });
      expect(list.structuredContent).toEqual({ notes: ["A.md", "F/B.md"] });

      app.workspace.setActiveLeaf(app.workspace.leaves[0]);
      const view = app.workspace.leaves[0].view as MarkdownView;
      view.editor.selection = "beta";
      view.editor.cursor = { line: 1, ch: 4 };
      const active = await client.callTool({ name: "get_active_note", arguments: {} });
      expect(active.structuredContent).toMatchObject({ active: true, path: "A.md", selection: "beta", cursor_line: 2 });

      const missing = await client.callTool({ name: "open_note", arguments: { path: "Nope.md" } });
      expect(missing.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  test("Show activity log lists a change a client made", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n" }, { port, token: TOKEN, writeMode: true });
    const { app, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    const client = await connect(port, TOKEN, "activity-test-client");
    try {
      const r = await client.callTool({ name: "write", arguments: { path: "Notes/New.md", content: "hello\n" } });
      expect(r.isError).toBeFalsy();
    } finally {
      await client.close();
    }
    expect(app.commands.executeCommandById("vault-mcp:show-activity-log")).toBe(true);
    const modal = openModal("Activity log")!;
    expect(modal).toBeDefined();
    await until(() => modal.contentEl.getText().includes("Notes/New.md"), "the entry in the modal");
    const text = modal.contentEl.getText();
    expect(text).toContain("activity-test-client");
    expect(text).toContain("write");
    const headers = modal.contentEl.descendants().filter((e) => e.tagName === "th").map((e) => e.getText());
    expect(headers).toEqual(["Time", "Client", "Tool", "Path", "Etag before", "Etag after"]);
    expect(modal.contentEl.descendants().filter((e) => e.tagName === "tr")).toHaveLength(2);
  });

  test("the search index is saved in the plugin folder on unload and loaded from it on the next start", async () => {
    const port = await freePort();
    const files: Record<string, string> = {};
    for (let i = 0; i < 300; i++) files[`N/${i}.md`] = `# Note ${i}\n\nWords about topic${i % 17} and zebrafinch${i}.\n`;
    const root = makeVault(files, { port, token: TOKEN });
    const ask = async (): Promise<{ paths: string[]; indexed: number }> => {
      const client = await connect(port, TOKEN);
      try {
        const r = await client.callTool({ name: "search", arguments: { query: "zebrafinch123", wait_for_pending_writes: true } });
        const hits = (r.structuredContent as { hits: { path: string }[] }).hits;
        const st = await client.callTool({ name: "get_index_status", arguments: {} });
        return { paths: hits.map((h) => h.path), indexed: (st.structuredContent as { documents_indexed: number }).documents_indexed };
      } finally {
        await client.close();
      }
    };
    const first = await loadPlugin(root);
    await until(() => first.status() === `MCP: listening on :${port}`, "the server to listen after indexing", 60000);
    expect(await ask()).toEqual({ paths: ["N/123.md"], indexed: 300 });
    void first.plugin.unload();
    await first.plugin.shutdown(); // the server and the index closed (a closing index saves what it has)
    first.forget();
    const dir = path.join(root, ".obsidian/plugins/vault-mcp");
    const saved = fs.readdirSync(dir).filter((f) => f.startsWith("search-index"));
    // The main file and one file per segment (300 notes: one segment).
    expect(saved.sort()).toEqual(["search-index-00.sqlite", "search-index.sqlite"]);
    const stamps = new Map(saved.map((f) => [f, fs.statSync(path.join(dir, f)).mtimeMs]));
    const second = await loadPlugin(root);
    await until(() => second.status() === `MCP: listening on :${port}`, "the server to listen on the second start", 60000);
    expect(await ask()).toEqual({ paths: ["N/123.md"], indexed: 300 });
    // Loaded, not rebuilt: a rebuild would have shown progress and rewritten the files.
    expect(second.plugin.statusBarItems[0].textHistory.some((t) => /^MCP: indexing \d+\/300$/.test(t))).toBe(false);
    void second.plugin.unload();
    await second.plugin.shutdown();
    second.forget();
    for (const [f, mtime] of stamps) expect(fs.statSync(path.join(dir, f)).mtimeMs).toBe(mtime);
  }, 90000);

  test("the status bar shows indexing progress while the index is built, then listening", async () => {
    const port = await freePort();
    const files: Record<string, string> = {};
    for (let i = 0; i < 3000; i++) files[`N/${i}.md`] = `# Note ${i}\n\nSome words about topic ${i % 37} and more words ${i}.\n`;
    const root = makeVault(files, { port, token: TOKEN });
    const { plugin, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen after indexing", 60000);
    const history = plugin.statusBarItems[0].textHistory;
    const progress = history.filter((t) => t.startsWith("MCP: indexing"));
    // Before the notes are counted: "MCP: indexing"; then "MCP: indexing N/3000".
    for (const t of progress) expect(t).toMatch(/^MCP: indexing( \d+\/3000)?$/);
    expect(progress.some((t) => t.includes("/3000"))).toBe(true);
    expect(history.indexOf(progress[0])).toBeLessThan(history.lastIndexOf(`MCP: listening on :${port}`));
    expect(history[history.length - 1]).toBe(`MCP: listening on :${port}`);
  }, 90000);
  test("semantic search: chosen in the settings tab, its tools appear; a provider that cannot answer is reported, not fatal", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n" }, { port, token: TOKEN });
    const { plugin, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    const tab = plugin.settingTabs[0];
    tab.display();
    const provider = settingsIn(tab.containerEl).find((s) => s.nameEl.getText() === "Embedding provider")!.components[0] as DropdownComponent;
    expect(provider.options).toEqual(["off", "builtin", "ollama", "openai"]);
    expect(settingsIn(tab.containerEl).some((s) => s.nameEl.getText() === "API key")).toBe(false);
    await provider.simulateChange("openai");
    expect(readData(root)).toMatchObject({ semanticProvider: "openai" });
    const names = settingsIn(tab.containerEl).map((s) => s.nameEl.getText());
    expect(names).toEqual(expect.arrayContaining(["Provider URL", "Model", "API key"]));
    await until(() => status().startsWith("MCP: listening") || status().startsWith("MCP: embedding"), "the server to restart");
    const client = await connect(port, TOKEN);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toEqual(expect.arrayContaining(["get_similar", "suggest_links", "embeddings_status", "build_embeddings"]));
      // The stand-in has no network: requestUrl fails, so the provider is unavailable and retried later.
      let r = await client.callTool({ name: "embeddings_status", arguments: {} });
      for (let i = 0; i < 200 && (r.structuredContent as { state: string }).state !== "unavailable"; i++) {
        await new Promise((res) => setTimeout(res, 25));
        r = await client.callTool({ name: "embeddings_status", arguments: {} });
      }
      expect(r.structuredContent).toMatchObject({ provider: "openai", model: "text-embedding-3-small", last_error: expect.stringMatching(/requestUrl is not available/) });
      const search = await client.callTool({ name: "search", arguments: { query: "alpha", mode: "hybrid" } });
      expect(search.isError).toBeFalsy();
      expect((search.structuredContent as { hits: { path: string }[] }).hits.map((h) => h.path)).toEqual(["A.md"]);
    } finally {
      await client.close();
    }
  });
});
