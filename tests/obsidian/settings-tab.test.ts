/**
 * The settings tab of the built plugin on both Obsidian paths: 1.13+ draws it from
 * getSettingDefinitions() (and indexes it for the settings search); older versions call display().
 * Both show the same settings and redraw after a change. And Connect a client's MCP Bundle: the file
 * it saves is a bundle Claude Desktop accepts, whose bridge, run as Claude Desktop runs it, reaches
 * the vault.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { apiVersion, clipboard, Notice, openSettingTab, searchSettings, setApiVersion, settingsIn, type ButtonComponent, type DropdownComponent, type SettingTab } from "../stand-in/obsidian";
import { freePort, installHooks, loadPlugin, makeVault, textOf, until } from "./harness";

installHooks();

const TOKEN = "settings-tab-token-0123456789abcdefghijklmnopq";
const REPO = path.resolve(__dirname, "../..");
const initialApiVersion = apiVersion;
afterEach(() => setApiVersion(initialApiVersion));

const names = (tab: SettingTab) => settingsIn(tab.containerEl as never).map((s) => s.nameEl.getText());

async function chooseToolSet(tab: SettingTab, value: string): Promise<void> {
  const dropdown = settingsIn(tab.containerEl as never).find((s) => s.nameEl.getText() === "Tool set")!.components[0] as DropdownComponent;
  await dropdown.simulateChange(value);
}

test("Obsidian 1.13+: the tab is drawn from getSettingDefinitions(), its settings are in the settings search, and a change redraws it", async () => {
  setApiVersion("1.13.1");
  const root = makeVault({ "A.md": "a\n" }, { port: await freePort(), token: TOKEN });
  const { plugin } = await loadPlugin(root);
  const tab = plugin.settingTabs[0];
  // Added → indexed for the search, before the tab is ever opened.
  expect(tab.settingItems.length).toBeGreaterThan(0);
  expect(searchSettings(tab, "port")).toContain("Port");
  expect(searchSettings(tab, "hidden folders")).toEqual(["Hidden folders"]);
  expect(searchSettings(tab, "embedding provider")).toContain("Embedding provider");
  expect(searchSettings(tab, "mcpb")).toEqual(["MCP Bundle for Claude Desktop (.mcpb)"]);
  // Rows hidden by the current state are not found either.
  expect(searchSettings(tab, "API key")).toEqual([]);

  const display = jest.spyOn(tab, "display");
  expect(openSettingTab(tab)).toBe("definitions");
  expect(display).not.toHaveBeenCalled();
  const drawn = names(tab);
  expect(drawn).toEqual(expect.arrayContaining(["Server", "Run the server", "Port", "Access token", "Write mode", "Tool set", "Semantic search", "Git tools", "Connect a client", "MCP Bundle for Claude Desktop (.mcpb)"]));
  expect(drawn).not.toContain("Read a note");

  await chooseToolSet(tab, "custom");
  expect(plugin.settings.toolProfile).toBe("custom");
  // Redrawn through update(): the per-tool toggles appear, still without display().
  expect(names(tab).length).toBeGreaterThan(drawn.length);
  expect(display).not.toHaveBeenCalled();
});

test("Obsidian before 1.13: display() draws the same settings, and a change redraws them the same way", async () => {
  const port = await freePort();
  setApiVersion("1.13.1");
  const modern = await loadPlugin(makeVault({ "A.md": "a\n" }, { port, token: TOKEN }));
  await until(() => modern.status() === `MCP: listening on :${port}`, "the server to listen");
  openSettingTab(modern.plugin.settingTabs[0]);
  const declarative = names(modern.plugin.settingTabs[0]);
  await modern.plugin.shutdown();

  setApiVersion("1.12.7");
  const { plugin, status } = await loadPlugin(makeVault({ "A.md": "a\n" }, { port, token: TOKEN }));
  await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
  const tab = plugin.settingTabs[0];
  // Nothing indexed: addSettingTab of an older Obsidian knows no definitions (the stand-in's update() throws there).
  expect(tab.settingItems).toEqual([]);
  expect(openSettingTab(tab)).toBe("display");
  expect(names(tab)).toEqual(declarative);

  await chooseToolSet(tab, "custom");
  expect(names(tab).length).toBeGreaterThan(declarative.length);
  await chooseToolSet(tab, "core");
  expect(names(tab)).toEqual(declarative);
});

test("Connect a client saves an MCP Bundle that passes @anthropic-ai/mcpb's validation, and its bridge, run as Claude Desktop runs it, reaches the vault", async () => {
  const port = await freePort();
  const root = makeVault({ "Desk.md": "notes for the bundle\n" }, { port, token: TOKEN });
  const { plugin, status } = await loadPlugin(root);
  await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
  const tab = plugin.settingTabs[0];
  openSettingTab(tab);
  const row = settingsIn(tab.containerEl as never).find((s) => s.nameEl.getText() === "MCP Bundle for Claude Desktop (.mcpb)")!;
  expect(row.descEl.getText()).toMatch(/release/);
  await (row.components[0] as ButtonComponent).click();

  const file = path.join(root, ".obsidian", "plugins", "vault-mcp", "vault-mcp.mcpb");
  expect(fs.existsSync(file)).toBe(true);
  expect(clipboard.text).toBe(file);
  expect(Notice.messages.join("\n")).toContain("Open it with Claude Desktop");

  // Unpacked and validated by the bundle tool itself (@anthropic-ai/mcpb: its unzip, its manifest schema).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-mcp-mcpb-"));
  try {
    const validation = execFileSync(
      process.execPath,
      ["--input-type=module", "-e", "import { unpackExtension, validateManifest } from '@anthropic-ai/mcpb'; const [file, dir] = process.argv.slice(1); await unpackExtension({ mcpbPath: file, outputDir: dir, silent: true }); process.exitCode = validateManifest(dir + '/manifest.json') ? 0 : 1;", file, dir],
      { cwd: REPO, encoding: "utf8" },
    );
    expect(validation).toContain("Manifest schema validation passes");
    expect(fs.readdirSync(dir, { recursive: true }).map(String).sort()).toEqual(["manifest.json", "server", path.join("server", "bridge.js")]);

    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "manifest.json"), "utf8"));
    expect(manifest.version).toBe("0.1.0");
    expect(manifest.user_config.server_url).toMatchObject({ type: "string", required: true, default: `http://127.0.0.1:${port}/mcp` });
    expect(manifest.user_config.access_token).toMatchObject({ type: "string", required: true, sensitive: true });

    // Claude Desktop substitutes ${__dirname} and ${user_config.*} into mcp_config and starts it.
    const fill = (s: string) => s.replaceAll("${__dirname}", dir).replaceAll("${user_config.server_url}", `http://127.0.0.1:${port}/mcp`).replaceAll("${user_config.access_token}", TOKEN);
    const cfg = manifest.server.mcp_config as { command: string; args: string[]; env: Record<string, string> };
    expect(cfg.args.join(" ")).not.toContain(TOKEN.slice(0, 8));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
    for (const [k, v] of Object.entries(cfg.env)) env[k] = fill(v);
    const client = new Client({ name: "claude-desktop-bundle-stand-in", version: "1" });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: cfg.args.map(fill), env, stderr: "ignore" }));
    try {
      const r = await client.callTool({ name: "read", arguments: { path: "Desk.md" } });
      expect(textOf(r)).toContain("notes for the bundle");
    } finally {
      await client.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
