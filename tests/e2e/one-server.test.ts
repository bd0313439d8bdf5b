/**
 * One server per vault, headless (child processes, as `npm start` runs them): a second server on the
 * same vault is refused with an error naming the first; a lock whose holder is gone is taken over;
 * the temp files a killed write left are removed at start; an explicit --port never moves.
 */
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { CLI, startChildServer, type ChildServer } from "../support/child-server";
import { makeTempVault, ok, removeTree } from "../support/harness";
import { lockFileName } from "../../src/hosts/common/server-lock";

const children: ChildServer[] = [];
const trees: string[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) await c.stop();
  for (const t of trees.splice(0)) removeTree(t);
});

function tempDir(): string {
  const d = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "vault-mcp-lock-")));
  trees.push(d);
  return d;
}

function vaultWithConfig(files: Record<string, string> = { "A.md": "alpha" }): { root: string; pluginDir: string } {
  const root = makeTempVault(files);
  trees.push(root);
  const pluginDir = path.join(root, ".obsidian", "plugins", "vault-mcp");
  fs.mkdirSync(pluginDir, { recursive: true });
  return { root, pluginDir };
}

/** Runs the CLI to its exit (it is expected not to start); its exit code and stderr. */
function runToExit(args: string[]): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args, `--token=${randomBytes(24).toString("base64url")}`], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    let stdout = "";
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
      // Started after all: stop it so the test fails on the assertion, not on a hang.
      if (stdout.includes("Endpoint:")) child.kill("SIGTERM");
    });
    child.once("exit", (code) => resolve({ code, stderr, stdout }));
  });
}

const LOCK = lockFileName();
const lockOf = (dir: string) => JSON.parse(fs.readFileSync(path.join(dir, LOCK), "utf8")) as { pid: number; host: string; port: number | null };

describe("one server per vault (headless)", () => {
  test("a second headless server on the same vault exits non-zero naming the first (pid, port); the first keeps serving; a clean stop releases the lock", async () => {
    const { root, pluginDir } = vaultWithConfig();
    const first = await startChildServer(root, { stateDir: pluginDir });
    children.push(first);
    const port = Number(new URL(first.url).port);
    expect(lockOf(pluginDir)).toMatchObject({ pid: first.child.pid, host: "node", port });

    const second = await runToExit([root, "--port", "0", "--state-dir", pluginDir]);
    expect(second.code).not.toBe(0);
    expect(second.stdout).not.toContain("Endpoint:");
    expect(second.stderr).toContain(`The headless Vault MCP server (pid ${first.child.pid}, port ${port}`);
    expect(second.stderr).toContain("is already serving this vault");

    // Its state elsewhere (--state-dir) changes nothing: the vault's plugin folder holds a lock too.
    const elsewhere = await runToExit([root, "--port", "0", "--state-dir", tempDir()]);
    expect(elsewhere.code).not.toBe(0);
    expect(elsewhere.stderr).toContain(`pid ${first.child.pid}`);

    const c = await first.connect();
    expect((await ok(c, "read", { path: "A.md" })).body).toBe("alpha");
    await first.stop();
    expect(fs.existsSync(path.join(pluginDir, LOCK))).toBe(false);
  }, 60_000);

  test("a lock whose holder is gone is taken over: a dead pid, or a live pid whose heartbeat stopped (the pid was reused)", async () => {
    const { root, pluginDir } = vaultWithConfig();
    // A pid that was alive a moment ago and is not any more.
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
    const deadPid = Number(gone.stdout);
    const lock = path.join(pluginDir, LOCK);
    fs.writeFileSync(lock, JSON.stringify({ pid: deadPid, host: "node", port: 1, started: new Date().toISOString(), hostname: os.hostname(), instance: "0123456789abcdef" }));
    const a = await startChildServer(root, { stateDir: pluginDir });
    children.push(a);
    expect(lockOf(pluginDir).pid).toBe(a.child.pid);
    await a.stop();

    // A live pid (this test's own process), but the lock was last touched ten minutes ago.
    fs.writeFileSync(lock, JSON.stringify({ pid: process.pid, host: "obsidian", port: 1, started: new Date().toISOString(), hostname: os.hostname(), instance: "0123456789abcdef" }));
    const old = new Date(Date.now() - 10 * 60_000);
    fs.utimesSync(lock, old, old);
    const b = await startChildServer(root, { stateDir: pluginDir });
    children.push(b);
    expect(lockOf(pluginDir).pid).toBe(b.child.pid);
  }, 60_000);

  test("the temp files a killed write left are removed at start (ours only, in note folders and the state folder)", async () => {
    const { root, pluginDir } = vaultWithConfig({ "A.md": "alpha", "notes/B.md": "beta" });
    const ours = [
      path.join(root, ".A.md.0123456789ab.vault-mcp.tmp"),
      path.join(root, "notes", ".B.md.abcdef012345.vault-mcp.tmp"),
      path.join(pluginDir, ".search-index-03.sqlite.00ff00ff00ff.vault-mcp.tmp"),
      path.join(pluginDir, "activity.jsonl.tmp-lq3k2abcx1y2"),
      path.join(pluginDir, `${LOCK}.0123456789ab.tmp`),
    ];
    const notOurs = [path.join(root, ".keep.tmp"), path.join(root, "notes", "draft.vault-mcp.tmp"), path.join(root, ".A.md.xyz.vault-mcp.tmp"), path.join(pluginDir, "data.json")];
    for (const f of [...ours, ...notOurs]) fs.writeFileSync(f, "half a write");
    const s = await startChildServer(root, { stateDir: pluginDir, write: true });
    children.push(s);
    for (const f of ours) expect([path.relative(root, f), fs.existsSync(f)]).toEqual([path.relative(root, f), false]);
    for (const f of notOurs) expect([path.relative(root, f), fs.existsSync(f)]).toEqual([path.relative(root, f), true]);
    // The notes themselves are untouched and served.
    const c = await s.connect();
    expect((await ok(c, "read", { path: "notes/B.md" })).body).toBe("beta");
  }, 60_000);
});

describe("an explicit --port never moves", () => {
  test("a taken --port: exit non-zero, naming the port and what to do; nothing listens elsewhere", async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    try {
      const root = makeTempVault({ "A.md": "alpha" });
      trees.push(root);
      const r = await runToExit([root, "--port", String(port), "--state-dir", tempDir()]);
      expect(r.code).toBe(1);
      expect(r.stdout).not.toContain("Endpoint:");
      expect(r.stderr).toContain(`Port ${port} is already in use`);
      expect(r.stderr).toContain("start with another --port");
    } finally {
      await new Promise((resolve) => blocker.close(resolve));
    }
  }, 60_000);
});
