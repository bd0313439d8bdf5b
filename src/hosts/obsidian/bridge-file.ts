import { FileSystemAdapter, normalizePath, type App } from "obsidian";
import bridgeSource from "virtual:bridge-source";

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
