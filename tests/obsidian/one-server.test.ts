/**
 * The plugin and a headless server on the same vault cannot both run: whichever comes second is
 * refused, naming the first (the lock in the plugin's data folder, where both look).
 */
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { Notice } from "../stand-in/obsidian";
import { CLI, startChildServer, type ChildServer } from "../support/child-server";
import { lockFileName } from "../../src/hosts/common/server-lock";
import { freePort, installHooks, loadPlugin, makeVault, portIsFree, until } from "./harness";

installHooks();

const children: ChildServer[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.stop();
});

const pluginDir = (root: string) => path.join(root, ".obsidian/plugins/vault-mcp");

describe("one server per vault: the plugin and the headless server", () => {
  test("the plugin does not start while a headless server serves the vault: a notice naming it, the error status; it starts once the headless one stopped", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n" }, { port });
    const headless = await startChildServer(root, { stateDir: pluginDir(root) });
    children.push(headless);
    const headlessPort = Number(new URL(headless.url).port);

    const { app, status } = await loadPlugin(root);
    await until(() => status() === "MCP: error", "the error status");
    const notice = Notice.messages.find((m) => m.includes("is already serving this vault"));
    expect(notice).toContain(`The headless Vault MCP server (pid ${headless.child.pid}, port ${headlessPort}`);
    expect(await portIsFree(port)).toBe(true);

    await headless.stop();
    app.commands.executeCommandById("vault-mcp:restart-server");
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen after the headless one stopped");
  }, 60_000);

  test("a lock left by this same process (Obsidian reloaded its window: the old plugin instance never unloaded) is taken over; a second plugin instance on the vault is refused", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n" }, { port });
    const lock = path.join(pluginDir(root), lockFileName());
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, host: "obsidian", port, started: new Date().toISOString(), hostname: os.hostname(), instance: "0123456789abcdef" }));
    const first = await loadPlugin(root);
    await until(() => first.status() === `MCP: listening on :${port}`, "the server to listen");
    const held = JSON.parse(fs.readFileSync(lock, "utf8")) as { instance: string; port: number };
    expect(held.instance).not.toBe("0123456789abcdef");
    expect(held.port).toBe(port);

    const second = await loadPlugin(root);
    await until(() => second.status() === "MCP: error", "the error status");
    expect(Notice.messages.some((m) => m.includes(`The Vault MCP plugin in Obsidian (pid ${process.pid}, port ${port}`))).toBe(true);
    // The refused one leaves the holder's lock alone.
    void second.plugin.unload();
    await second.plugin.shutdown();
    second.forget();
    expect((JSON.parse(fs.readFileSync(lock, "utf8")) as { instance: string }).instance).toBe(held.instance);
  }, 60_000);

  test("a headless server is refused while the plugin serves the vault, naming the plugin; the plugin's start removes its leftover temp files", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n" }, { port });
    const leftovers = [path.join(pluginDir(root), ".search-index.sqlite.0123456789ab.vault-mcp.tmp"), path.join(pluginDir(root), "search-index-01.sqlite.tmp-lq3k2abcx1y2")];
    for (const f of leftovers) fs.writeFileSync(f, "half a save");
    const { status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    for (const f of leftovers) expect(fs.existsSync(f)).toBe(false);

    const r = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [CLI, root, "--port", "0", `--token=${randomBytes(24).toString("base64url")}`], { stdio: ["ignore", "ignore", "pipe"] });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
      child.once("exit", (code) => resolve({ code, stderr }));
    });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`The Vault MCP plugin in Obsidian (pid ${process.pid}, port ${port}`);
  }, 60_000);

  test("after a headless server was killed, the plugin takes its lock over and removes the temp files its writes left beside notes", async () => {
    const port = await freePort();
    const root = makeVault({ "A.md": "alpha\n", "notes/B.md": "beta\n" }, { port });
    const headless = await startChildServer(root, { stateDir: pluginDir(root), write: true });
    children.push(headless);
    await headless.kill();
    expect(fs.existsSync(path.join(pluginDir(root), lockFileName()))).toBe(true);
    const ours = [path.join(root, ".A.md.0123456789ab.vault-mcp.tmp"), path.join(root, "notes", ".B.md.abcdef012345.vault-mcp.tmp")];
    const notOurs = path.join(root, "notes", ".B.md.tmp");
    for (const f of [...ours, notOurs]) fs.writeFileSync(f, "half a write");

    const warn = jest.spyOn(console, "warn").mockImplementation(() => {});
    const { status } = await loadPlugin(root);
    await until(() => status() === `MCP: listening on :${port}`, "the server to listen");
    await until(() => ours.every((f) => !fs.existsSync(f)), "the leftover temp files to be removed");
    warn.mockRestore();
    expect(fs.existsSync(notOurs)).toBe(true);
    expect((JSON.parse(fs.readFileSync(path.join(pluginDir(root), lockFileName()), "utf8")) as { host: string }).host).toBe("obsidian");
  }, 60_000);
});
