/**
 * The built plugin (`main.js`, produced by `npm test` / `npm run build` before jest) loaded under Node
 * with the Obsidian stand-in: lifecycle, settings, status bar, commands, and a real MCP client talking
 * to the server it starts.
 */
import { clipboard, Notice, settingsIn, type ButtonComponent, type TextComponent } from "../stand-in/obsidian";
import { blockers, blockRange, closeServer, connect, freePort, installHooks, listen, loadPlugin, makeVault, portIsFree, readData, textOf, until } from "./harness";

installHooks();

/** The plugin's default port: the only one that moves to the next free port when taken. */
const DEFAULT_PORT = 28765;

describe("the built plugin under the Obsidian stand-in", () => {
  test("starts on layout ready, serves a real MCP client, stops on unload and frees the port", async () => {
    const port = await freePort();
    const root = makeVault(
      { "Welcome.md": "# Welcome\n\nSee [[Other]] for more.\n", "Folder/Other.md": "Other note\n" },
      { port },
    );
    const { app, plugin, status } = await loadPlugin(root);

    // Lifecycle: the server waits for the layout; commands and the settings tab exist at once.
    expect(plugin.commands.map((c) => c.id).sort()).toEqual(
      ["vault-mcp:copy-client-configuration", "vault-mcp:copy-server-url", "vault-mcp:restart-server", "vault-mcp:show-activity-log"].sort(),
    );
    expect(plugin.commands.map((c) => c.name)).toContain("Copy server URL");
    expect(plugin.settingTabs).toHaveLength(1);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");

    const token = plugin.settings.token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readData(root).token).toBe(token);

    const client = await connect(port, token);
    try {
      const tools = (await client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain("read");
      const result = await client.callTool({ name: "read", arguments: { path: "Welcome.md" } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toContain("See [[Other]] for more.");
    } finally {
      await client.close();
    }

    // A wrong token is refused.
    await expect(connect(port, "not-the-token-not-the-token-not-the-token")).rejects.toThrow();

    // Commands copy what a user needs.
    expect(app.commands.executeCommandById("vault-mcp:copy-server-url")).toBe(true);
    await until(() => clipboard.text === `http://127.0.0.1:${port}/mcp`, "the URL on the clipboard");
    app.commands.executeCommandById("vault-mcp:copy-client-configuration");
    await until(() => clipboard.text.includes(token) && clipboard.text.includes(`127.0.0.1:${port}`), "the client configuration on the clipboard");

    expect(app.vault.listenerCount("create")).toBeGreaterThan(0);
    void plugin.unload();
    await plugin.shutdown();
    expect(status()).toBe("MCP: stopped");
    expect(await portIsFree(port)).toBe(true);
    // Every event registration went through the plugin and is gone.
    for (const name of ["create", "modify", "delete", "rename"]) expect(app.vault.listenerCount(name)).toBe(0);
    expect(app.metadataCache.listenerCount("changed")).toBe(0);
    expect(app.commands.commands["vault-mcp:restart-server"]).toBeUndefined();
  });

  test("Regenerate in the settings tab takes effect at once; invalid ports are not saved", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n" }, { port });
    const { plugin, status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    const oldToken = plugin.settings.token;

    const tab = plugin.settingTabs[0];
    tab.display();
    const settings = settingsIn(tab.containerEl);
    const names = settings.map((s) => s.nameEl.getText());
    expect(names).toEqual(expect.arrayContaining(["Server", "Port", "Access token", "Write mode", "Hidden folders", "Protected folders", "Allowed origins", "Connect a client"]));
    expect(settings.filter((s) => s.isHeading).map((s) => s.nameEl.getText())).toEqual(["Server", "Access", "Tools", "Reading and search", "Semantic search", "Git", "Files in and out", "Connect a client"]);
    // The token is masked everywhere in the tab.
    expect(tab.containerEl.getText()).not.toContain(oldToken);

    const tokenSetting = settings.find((s) => s.nameEl.getText() === "Access token")!;
    const [copy, regenerate] = tokenSetting.components as ButtonComponent[];
    await copy.click();
    expect(clipboard.text).toBe(oldToken);
    await regenerate.click();
    const newToken = plugin.settings.token;
    expect(newToken).not.toBe(oldToken);
    expect(readData(root).token).toBe(newToken);
    await expect(connect(port, oldToken)).rejects.toThrow();
    const client = await connect(port, newToken);
    await client.close();
    expect(status()).toBe(`MCP: listening on :${port}`);

    const portSetting = settingsIn(tab.containerEl).find((s) => s.nameEl.getText() === "Port")!;
    await (portSetting.components[0] as TextComponent).simulateChange("80");
    expect(plugin.settings.port).toBe(port);
    expect(readData(root).port).toBe(port);
    expect(portSetting.descEl.getText()).toContain("1024 to 65535");
  });

  test("the default port, when taken, moves to the next free one, with a notice", async () => {
    // 28765 held by this test (or already by another program: taken either way).
    const held = await listen(DEFAULT_PORT).catch(() => null);
    if (held) blockers.push(held);
    const root = makeVault({ "A.md": "alpha\n" }, { port: DEFAULT_PORT });
    // The plugin says it in the developer console too (kept out of the test output: Jest would
    // print main.js's one minified line with it).
    const warn = jest.spyOn(console, "warn").mockImplementation(() => {});
    const { plugin, status } = await loadPlugin(root);
    await until(() => /^MCP: listening on :\d+$/.test(status()), "the server to listen");
    const actual = Number(/:(\d+)$/.exec(status())![1]);
    expect(actual).toBeGreaterThan(DEFAULT_PORT);
    expect(Notice.messages.some((m) => m.includes(`port ${DEFAULT_PORT} was in use`) && m.includes(String(actual)))).toBe(true);
    expect(warn).toHaveBeenCalledWith(`[vault-mcp] port ${DEFAULT_PORT} was taken; listening on ${actual} instead (copy the client configuration again)`);
    warn.mockRestore();
    // The configurations to copy use the port actually listened on.
    const tab = plugin.settingTabs[0];
    tab.display();
    expect(tab.containerEl.getText()).toContain(`http://127.0.0.1:${actual}/mcp`);
    expect(tab.containerEl.getText()).not.toContain(`http://127.0.0.1:${DEFAULT_PORT}/mcp`);
    const client = await connect(actual, plugin.settings.token);
    await client.close();
  });

  test("a port chosen in the settings that is taken: no other port, a notice naming it and the error status, without throwing; Restart server recovers", async () => {
    const { base, servers } = await blockRange(1);
    blockers.push(...servers);
    const root = makeVault({ "A.md": "alpha\n" }, { port: base });
    const { app, status } = await loadPlugin(root);
    await until(() => status() === "MCP: error", "the error status");
    expect(Notice.messages.some((m) => m.includes(`port ${base}, chosen in Settings → Vault MCP, is already in use`))).toBe(true);

    // Once the port is free again, "Restart server" recovers.
    await closeServer(servers[0]);
    blockers.splice(blockers.indexOf(servers[0]), 1);
    app.commands.executeCommandById("vault-mcp:restart-server");
    await until(() => status() === `MCP: listening on :${base}`, "the server to listen after restart");
  });

  test("first run generates a token and saves it; the next load keeps it", async () => {
    const root = makeVault({ "A.md": "alpha\n" });
    const first = await loadPlugin(root);
    const token = first.plugin.settings.token;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(readData(root)).toMatchObject({ version: 5, token, port: 28765, enabled: true, writeMode: false, confirmDestructive: true, toolProfile: "full" });
    // Do not actually start on the default port here.
    void first.plugin.unload();
    await first.plugin.shutdown();
    first.forget();

    const second = await loadPlugin(root);
    expect(second.plugin.settings.token).toBe(token);
    void second.plugin.unload();
    await second.plugin.shutdown();
  });

  test("settings from an older, partial data.json are migrated and saved", async () => {
    const root = makeVault(
      { "A.md": "alpha\n" },
      { enabled: false, port: "31999", writeMode: "true", hiddenFolders: "Private\n  Journal/ \n\nPrivate", allowedOrigins: ["https://a.example/"], obsolete: 1 },
    );
    const { plugin, status } = await loadPlugin(root);
    expect(plugin.settings).toMatchObject({
      version: 5,
      enabled: false,
      port: 31999,
      writeMode: true,
      hiddenFolders: ["Private", "Journal"],
      protectedFolders: [],
      allowedOrigins: ["https://a.example"],
    });
    const saved = readData(root);
    expect(saved).toEqual(plugin.settings);
    expect(saved.obsolete).toBeUndefined();
    await until(() => status() === "MCP: stopped", "the stopped status (server disabled)");
  });
});
