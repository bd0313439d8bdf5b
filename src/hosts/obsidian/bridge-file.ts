import { FileSystemAdapter, normalizePath, type App } from "obsidian";
import bridgeSource from "virtual:bridge-source";
import { mcpbArchive, mcpbFileName } from "../common/mcpb";

/**
 * Writes the stdio bridge (`bridge.js`, bundled into main.js at build time) into the plugin's folder,
 * so Claude Desktop and other stdio-only clients can run `node <path>/bridge.js --url … --token …`
 * without internet or npx. Rewritten only when its content changed. Returns the file's absolute path,
 * or null when there is no bundled bridge or the vault is not on a local file system.
 */
export async function installBridge(app: App, dataDir: string): Promise<string | null> {
  if (!bridgeSource) return null;
  const adapter = app.vault.adapter;
  if (!(adapter instanceof FileSystemAdapter)) return null;
  const path = normalizePath(`${dataDir}/bridge.js`);
  const current = (await adapter.exists(path)) ? await adapter.read(path) : null;
  if (current !== bridgeSource) {
    if (!(await adapter.exists(dataDir))) await adapter.mkdir(dataDir);
    await adapter.write(path, bridgeSource);
  }
  return adapter.getFullPath(path);
}

/**
 * Writes the stdio bridge as an MCP Bundle (`vault-mcp.mcpb`, see hosts/common/mcpb.ts) into the
 * plugin's folder, for Claude Desktop: opening the file installs it, and Claude Desktop asks for the
 * server URL (prefilled with `url`) and the access token. Returns the file's absolute path, or null
 * when there is no bundled bridge or the vault is not on a local file system.
 */
export async function writeBundle(app: App, dataDir: string, version: string, url: string): Promise<string | null> {
  if (!bridgeSource) return null;
  const adapter = app.vault.adapter;
  if (!(adapter instanceof FileSystemAdapter)) return null;
  const path = normalizePath(`${dataDir}/${mcpbFileName()}`);
  if (!(await adapter.exists(dataDir))) await adapter.mkdir(dataDir);
  const bytes = mcpbArchive(version, url, bridgeSource);
  await adapter.writeBinary(path, bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
  return adapter.getFullPath(path);
}
