import { ADDED_SINCE_V1 } from "../support/settings-defaults";
import { DEFAULT_SETTINGS, migrateSettings, parseKB, READ_KB_RANGE, SETTINGS_VERSION, toolProfileOf } from "../../src/hosts/obsidian/settings";

const TOKEN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";

const V1 = {
  version: 1,
  enabled: true,
  port: 30001,
  token: TOKEN,
  writeMode: true,
  allowedOrigins: ["https://a.example"],
  hiddenFolders: ["Private"],
  protectedFolders: ["Templates"],
};


describe("settings", () => {
  test("defaults are frozen, version 5", () => {
    expect(SETTINGS_VERSION).toBe(5);
    expect(Object.isFrozen(DEFAULT_SETTINGS)).toBe(true);
    expect(Object.isFrozen(DEFAULT_SETTINGS.enabledTools)).toBe(true);
    expect(Object.isFrozen(DEFAULT_SETTINGS.hiddenFolders)).toBe(true);
    expect(DEFAULT_SETTINGS).toMatchObject({ version: 5, ...ADDED_SINCE_V1 });
  });

  test("v1 → v5 keeps every v1 value and adds the new defaults; the result is saved", () => {
    const { settings, changed } = migrateSettings(V1);
    expect(changed).toBe(true);
    expect(settings).toEqual({ ...V1, version: 5, ...ADDED_SINCE_V1 });
    // Migrated settings are stable: loading them again changes nothing.
    expect(migrateSettings(JSON.parse(JSON.stringify(settings)))).toEqual({ settings, changed: false });
    // The migrated object shares nothing with the frozen defaults.
    settings.enabledTools.push("read");
    expect(DEFAULT_SETTINGS.enabledTools).toEqual([]);
  });

  test("v2 values are kept; invalid ones fall back to the defaults", () => {
    const good = migrateSettings({
      ...V1,
      version: 2,
      confirmDestructive: false,
      toolProfile: "custom",
      enabledTools: ["read", "search", "read", 3, "Bad Name"],
      maxReadKB: 512,
      maxAttachmentKB: "2048",
      searchLanguage: "none",
    }).settings;
    expect(good).toMatchObject({ confirmDestructive: false, toolProfile: "custom", enabledTools: ["read", "search"], maxReadKB: 512, maxAttachmentKB: 2048, searchLanguage: "none", toolTimeoutSeconds: 10 });
    expect(migrateSettings({ ...V1, version: 3, toolTimeoutSeconds: "30" }).settings.toolTimeoutSeconds).toBe(30);

    const bad = migrateSettings({ ...V1, version: 2, confirmDestructive: "maybe", toolProfile: "most", enabledTools: "read", maxReadKB: 0, maxAttachmentKB: -5, searchLanguage: "fr" }).settings;
    expect(bad).toMatchObject({ confirmDestructive: true, toolProfile: "full", enabledTools: [], maxReadKB: 256, maxAttachmentKB: 1024, searchLanguage: "en" });
    for (const t of [0, -1, 601, 2.5, "soon"]) expect(migrateSettings({ ...V1, version: 3, toolTimeoutSeconds: t }).settings.toolTimeoutSeconds).toBe(10);
  });

  test("v3 → v4: semantic search is off; its settings are checked (provider, http(s) URL) and kept", () => {
    const v3 = { ...V1, version: 3 };
    expect(migrateSettings(v3).settings).toMatchObject({ semanticProvider: "off", embeddingsUrl: "" });
    const on = migrateSettings({ ...v3, semanticProvider: "openai", embeddingsUrl: " http://localhost:1234/v1 ", embeddingsModel: " nomic ", embeddingsApiKey: "sk-1" }).settings;
    expect(on).toMatchObject({ semanticProvider: "openai", embeddingsUrl: "http://localhost:1234/v1", embeddingsModel: "nomic", embeddingsApiKey: "sk-1" });
    const bad = migrateSettings({ ...v3, semanticProvider: "gpt", embeddingsUrl: "file:///etc/passwd", embeddingsModel: 7, embeddingsApiKey: null }).settings;
    expect(bad).toMatchObject({ semanticProvider: "off", embeddingsUrl: "", embeddingsModel: "", embeddingsApiKey: "" });
  });

  test("the built-in model: a model of the list by default; settings that chose a model folder keep it as the owner's own", () => {
    const base = { version: 5, enabled: true, port: 28765, token: "t".repeat(43), semanticProvider: "builtin" };
    expect(migrateSettings(base).settings).toMatchObject({ builtinModel: "Xenova/multilingual-e5-small", embeddingsHubUrl: "" });
    expect(migrateSettings({ ...base, embeddingsModelDir: "/models/e5" }).settings).toMatchObject({ builtinModel: "folder", embeddingsModelDir: "/models/e5" });
    expect(migrateSettings({ ...base, builtinModel: "Xenova/all-MiniLM-L6-v2", embeddingsHubUrl: "http://127.0.0.1:9/" }).settings).toMatchObject({ builtinModel: "Xenova/all-MiniLM-L6-v2", embeddingsHubUrl: "http://127.0.0.1:9/" });
    expect(migrateSettings({ ...base, builtinModel: "gpt-5" }).settings.builtinModel).toBe("Xenova/multilingual-e5-small");
  });

  test("v4 → v5: git tools on, committing off; git settings are checked and kept", () => {
    const v4 = { ...V1, version: 4 };
    expect(migrateSettings(v4).settings).toMatchObject({ gitEnabled: true, gitCommit: false, gitPush: false, gitProgram: "", gitHooks: false });
    const on = migrateSettings({ ...v4, gitEnabled: false, gitCommit: true, gitPush: "true", gitProgram: " /opt/homebrew/bin/git ", gitHooks: true }).settings;
    expect(on).toMatchObject({ gitEnabled: false, gitCommit: true, gitPush: true, gitProgram: "/opt/homebrew/bin/git", gitHooks: true });
    const bad = migrateSettings({ ...v4, gitEnabled: "maybe", gitCommit: 1, gitProgram: 7 }).settings;
    expect(bad).toMatchObject({ gitEnabled: true, gitCommit: false, gitProgram: "" });
  });

  test("v5 transfer and fetch settings are checked: numbers in range, host names and content types parsed", () => {
    const v = migrateSettings({ ...V1, version: 5, transferTtlMinutes: "30", uploadMaxMB: 0, fetchMaxMB: 100, fetchAllowHosts: "NAS.local\nhttp://wiki.lan:8080/x, b@d!, [fd00::1]:80", fetchContentTypes: ["text/*", "application/pdf", "nonsense", 3] }).settings;
    expect(v).toMatchObject({ transferTtlMinutes: 30, uploadMaxMB: 50, fetchMaxMB: 100, fetchAllowHosts: ["nas.local", "wiki.lan:8080", "[fd00::1]:80"], fetchContentTypes: ["text/*", "application/pdf"] });
    expect(migrateSettings({ ...V1, version: 5, fetchContentTypes: [] }).settings.fetchContentTypes).toEqual([]);
  });

  test("a first run (no data) gets the defaults and a new token", () => {
    const { settings, changed } = migrateSettings(null);
    expect(changed).toBe(true);
    expect(settings.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect({ ...settings, token: "" }).toEqual({ ...DEFAULT_SETTINGS });
  });

  test("sizes and tool profiles", () => {
    expect(parseKB("300", READ_KB_RANGE)).toBe(300);
    expect(parseKB("0", READ_KB_RANGE)).toBeNull();
    expect(parseKB("1.5", READ_KB_RANGE)).toBeNull();
    expect(parseKB(String(READ_KB_RANGE.max + 1), READ_KB_RANGE)).toBeNull();
    expect(toolProfileOf({ toolProfile: "core", enabledTools: ["read"] })).toEqual({ profile: "core" });
    expect(toolProfileOf({ toolProfile: "custom", enabledTools: ["read"] })).toEqual({ profile: "custom", enabled: ["read"] });
  });
});
