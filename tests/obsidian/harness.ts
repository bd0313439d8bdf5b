/**
 * Shared by the tests of the built plugin (`main.js`, produced by `npm test` / `npm run build` before
 * jest) loaded under Node with the Obsidian stand-in: temp vaults, ports, loading the plugin, an MCP client.
 * Call `installHooks()` once per test file.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createTestApp, Modal, Notice, type App, type Plugin } from "../stand-in/obsidian";
import type { VaultMcpSettings } from "../../src/hosts/obsidian/settings";

const MAIN_JS = path.resolve(__dirname, "../../main.js");
if (!fs.existsSync(MAIN_JS)) throw new Error("main.js is missing: run `npm run build` (npm test does it) before these tests.");

/** The settings as the built plugin holds them: the source's type (the bundle's shape is the same). */
export type PluginSettings = VaultMcpSettings;

export interface VaultMcpPlugin extends Plugin {
  settings: PluginSettings;
  shutdown(): Promise<void>;
  /** Saves, cancels a pending restart and restarts now. */
  applyAndRestart(): Promise<void>;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports -- the built bundle is CommonJS; jest maps its `obsidian` import to the stand-in
const PluginClass = (require(MAIN_JS) as { default: new (app: App, manifest: object) => VaultMcpPlugin }).default;

const roots: string[] = [];
const plugins: VaultMcpPlugin[] = [];
export const blockers: net.Server[] = [];

export function installHooks(): void {
  beforeEach(() => {
    Notice.messages.length = 0;
    Modal.opened.length = 0;
  });

  afterEach(async () => {
    for (const p of plugins.splice(0)) {
      void p.unload();
      await p.shutdown();
    }
    for (const b of blockers.splice(0)) await closeServer(b);
    for (const r of roots.splice(0)) fs.rmSync(r, { recursive: true, force: true });
  });
}

export function makeVault(files: Record<string, string>, data?: unknown): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vault-mcp-plugin-")));
  roots.push(root);
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  fs.mkdirSync(path.join(root, ".obsidian/plugins/vault-mcp"), { recursive: true });
  if (data !== undefined) fs.writeFileSync(dataPath(root), JSON.stringify(data));
  return root;
}

export const dataPath = (root: string): string => path.join(root, ".obsidian/plugins/vault-mcp/data.json");
export const readData = (root: string): Record<string, unknown> => JSON.parse(fs.readFileSync(dataPath(root), "utf8"));

export function listen(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(port, "127.0.0.1", () => resolve(s));
  });
}

export function closeServer(s: net.Server): Promise<void> {
  return new Promise((resolve) => s.close(() => resolve()));
}

export async function freePort(): Promise<number> {
  const s = await listen(0);
  const port = (s.address() as net.AddressInfo).port;
  await closeServer(s);
  return port;
}

/** Binds `count` consecutive ports (retrying from another base when one is taken). */
export async function blockRange(count: number): Promise<{ base: number; servers: net.Server[] }> {
  for (let attempt = 0; ; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 40000);
    const servers: net.Server[] = [];
    try {
      for (let p = base; p < base + count; p++) servers.push(await listen(p));
      return { base, servers };
    } catch (e) {
      for (const s of servers) await closeServer(s);
      if (attempt > 20) throw e;
    }
  }
}

export async function portIsFree(port: number): Promise<boolean> {
  try {
    await closeServer(await listen(port));
    return true;
  } catch {
    return false;
  }
}

export async function until(check: () => boolean, what: string, ms = 10000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function loadPlugin(root: string): Promise<{ app: App; plugin: VaultMcpPlugin; status: () => string; forget: () => void }> {
  const { app, createPlugin } = createTestApp(root);
  const plugin = createPlugin(PluginClass, { id: "vault-mcp", version: "0.1.0" });
  plugins.push(plugin);
  await plugin.load();
  const status = (): string => plugin.statusBarItems[0]?.getText() ?? "";
  const forget = (): void => void plugins.splice(plugins.indexOf(plugin), 1);
  return { app, plugin, status, forget };
}

export async function connect(port: number, token: string, name = "plugin-test"): Promise<Client> {
  const client = new Client({ name, version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

export function textOf(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? "").join("\n");
}
