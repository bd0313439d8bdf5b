import { afterEach, describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { PLUGIN_ID, resolveStateDir, userCacheDir } from "../../src/hosts/node/state-dir";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
});
function vault(name = "My Vault"): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), "statedir-"));
  dirs.push(parent);
  const root = path.join(parent, name);
  fs.mkdirSync(root);
  return root;
}

describe("resolveStateDir", () => {
  test("inside the Obsidian config folder when there is one (the plugin's data folder)", () => {
    const root = vault();
    fs.mkdirSync(path.join(root, ".obsidian"));
    expect(resolveStateDir(root, { configDir: ".obsidian" })).toBe(path.join(root, ".obsidian", "plugins", PLUGIN_ID));
    expect(PLUGIN_ID).toBe(JSON.parse(fs.readFileSync(path.join(__dirname, "../../manifest.json"), "utf8")).id);
  });

  test("a custom config folder name", () => {
    const root = vault();
    fs.mkdirSync(path.join(root, ".config-x"));
    expect(resolveStateDir(root, { configDir: ".config-x" })).toBe(path.join(root, ".config-x", "plugins", PLUGIN_ID));
  });

  test("otherwise a per-vault folder in the user's cache, outside the vault", () => {
    const root = vault();
    const env = { XDG_CACHE_HOME: "/xdg/cache" };
    const dir = resolveStateDir(root, { configDir: ".obsidian", env, platform: "linux", homedir: "/home/u" });
    expect(path.dirname(dir)).toBe(path.join("/xdg/cache", PLUGIN_ID));
    expect(path.basename(dir)).toMatch(/^My Vault-[0-9a-f]{10}$/);
    expect(dir.startsWith(root)).toBe(false);
    // Same name elsewhere → another folder; same vault → same folder.
    const other = vault();
    expect(resolveStateDir(other, { configDir: ".obsidian", env, platform: "linux", homedir: "/home/u" })).not.toBe(dir);
    expect(resolveStateDir(root, { configDir: ".obsidian", env, platform: "linux", homedir: "/home/u" })).toBe(dir);
  });

  test("the override wins", () => {
    const root = vault();
    fs.mkdirSync(path.join(root, ".obsidian"));
    expect(resolveStateDir(root, { configDir: ".obsidian", override: "/tmp/state-here" })).toBe(path.resolve("/tmp/state-here"));
  });

  test("odd characters in the vault name are replaced", () => {
    const root = vault("a:b*c");
    const dir = resolveStateDir(root, { configDir: ".obsidian", env: {}, platform: "linux", homedir: "/home/u" });
    expect(path.basename(dir)).toMatch(/^a_b_c-[0-9a-f]{10}$/);
  });
});

describe("userCacheDir", () => {
  test("per platform", () => {
    expect(userCacheDir({ env: {}, platform: "linux", homedir: "/home/u" })).toBe(path.join("/home/u", ".cache"));
    expect(userCacheDir({ env: { XDG_CACHE_HOME: "relative" }, platform: "linux", homedir: "/home/u" })).toBe(path.join("/home/u", ".cache"));
    expect(userCacheDir({ env: {}, platform: "darwin", homedir: "/Users/u" })).toBe(path.join("/Users/u", "Library", "Caches"));
    expect(userCacheDir({ env: { LOCALAPPDATA: "C:\\Users\\u\\AppData\\Local" }, platform: "win32", homedir: "C:\\Users\\u" })).toBe("C:\\Users\\u\\AppData\\Local");
  });
});
