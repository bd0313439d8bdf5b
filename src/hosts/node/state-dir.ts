import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import * as os from "node:os";
import * as nodePath from "node:path";

/** The plugin id (manifest.json): the state folder inside Obsidian's config folder is named after it. */
export const PLUGIN_ID = "vault-mcp";

export interface StateDirOptions {
  /** Obsidian's config folder name (usually `.obsidian`). */
  configDir: string;
  /** An explicit state folder (`--state-dir`); wins over everything. */
  override?: string;
  /** For tests: the environment and platform to use (default: this process's). */
  env?: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  homedir?: string;
}

/**
 * Where the headless server keeps its state (index, activity log) — never among the notes:
 * 1. `override`, when given;
 * 2. when the vault has an Obsidian config folder: the plugin's data folder `<vault>/<configDir>/plugins/vault-mcp/`
 *    (shared with the plugin, so an index built headless is reused inside Obsidian and vice versa);
 * 3. otherwise a per-vault folder in the user's cache folder: `<cache>/vault-mcp/<vault name>-<hash>`, where
 *    `<cache>` is `$XDG_CACHE_HOME` or `~/.cache` (Linux), `~/Library/Caches` (macOS), `%LOCALAPPDATA%` (Windows),
 *    and `<hash>` is a short hash of the vault's absolute path (two vaults with the same name don't collide).
 * Returns an absolute path; does not create it.
 */
export function resolveStateDir(vaultRoot: string, opts: StateDirOptions): string {
  if (opts.override) return nodePath.resolve(opts.override);
  const root = nodePath.resolve(vaultRoot);
  const config = nodePath.join(root, opts.configDir);
  if (opts.configDir && existsSync(config) && statSync(config).isDirectory()) {
    return nodePath.join(config, "plugins", PLUGIN_ID);
  }
  const name = (nodePath.basename(root) || "vault").normalize("NFC").replace(/[^\p{L}\p{N}._ -]+/gu, "_").slice(0, 60);
  const hash = createHash("sha256").update(root).digest("hex").slice(0, 10);
  return nodePath.join(userCacheDir(opts), PLUGIN_ID, `${name}-${hash}`);
}

export function userCacheDir(opts: Pick<StateDirOptions, "env" | "platform" | "homedir"> = {}): string {
  const env = opts.env ?? process.env;
  const platform = opts.platform ?? process.platform;
  const home = opts.homedir ?? os.homedir();
  if (platform === "win32") return env.LOCALAPPDATA || nodePath.join(home, "AppData", "Local");
  if (platform === "darwin") return nodePath.join(home, "Library", "Caches");
  const xdg = env.XDG_CACHE_HOME;
  return xdg && nodePath.isAbsolute(xdg) ? xdg : nodePath.join(home, ".cache");
}
