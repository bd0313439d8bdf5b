/**
 * Claude Desktop speaks stdio only: the plugin writes bridge.js beside itself and offers a config
 * that runs it with `node`. Here the bridge is run exactly as Claude Desktop would, through the SDK's
 * stdio client, against the built plugin's server under the stand-in.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { clipboard, settingsIn, type ButtonComponent } from "../stand-in/obsidian";
import { freePort, installHooks, loadPlugin, makeVault, textOf, until } from "./harness";

installHooks();

const TOKEN = "claude-desktop-token-0123456789abcdefghijklmn";

test("the plugin writes bridge.js, offers a Claude Desktop config, and a stdio client reaches the vault through it", async () => {
  const port = await freePort();
  const root = makeVault({ "Desk.md": "notes for the desktop app\n" }, { port, token: TOKEN });
  const { plugin, status } = await loadPlugin(root);
  await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
  const bridge = path.join(root, ".obsidian", "plugins", "vault-mcp", "bridge.js");
  await until(() => fs.existsSync(bridge), "bridge.js to be written");

  const tab = plugin.settingTabs[0];
  tab.display();
  const desktop = settingsIn(tab.containerEl).find((s) => s.nameEl.getText().startsWith("Claude Desktop"));
  expect(desktop).toBeDefined();
  const copy = (desktop!.components as ButtonComponent[]).find((b) => b.buttonEl.getText() === "Copy")!;
  await copy.click();
  await until(() => clipboard.text.includes("bridge.js"), "the config to be copied");
  const copied = JSON.parse(clipboard.text);
  const entry = Object.values(copied.mcpServers as Record<string, { command: string; args: string[] }>)[0];
  expect(entry.command).toBe("node");
  expect(entry.args[0]).toBe(bridge);

  const client = new Client({ name: "claude-desktop-stand-in", version: "1" });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: entry.args, stderr: "ignore" }));
  try {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("read");
    const r = await client.callTool({ name: "read", arguments: { path: "Desk.md" } });
    expect(textOf(r)).toContain("notes for the desktop app");
  } finally {
    await client.close();
  }
});
