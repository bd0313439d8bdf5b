/**
 * The headless quick start as a user runs it: `node dist/cli.js` (what `npm start` runs) serves the
 * bundled example vault and prints the endpoint, the token and client configurations; a client uses
 * exactly what was printed to list tools and read a note; SIGTERM stops it cleanly.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { connectClient, ok } from "../support/harness";

const CLI = path.resolve(__dirname, "../../dist/cli.js");

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

function waitForBanner(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no banner; output so far:\n${out}`)), 20000);
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("Press Ctrl+C to stop.")) {
        clearTimeout(timer);
        resolve(out);
      }
    });
    child.once("exit", (code) => reject(new Error(`cli exited with ${code}:\n${out}`)));
  });
}

describe("npm start (the built CLI) on the bundled example vault", () => {
  let child: ChildProcess;
  let stateDir: string;
  afterAll(() => {
    if (child && child.exitCode === null) child.kill("SIGKILL");
    rmSync(stateDir, { recursive: true, force: true });
  });

  test("prints endpoint, token and configs; a client reads a note with them; SIGTERM exits 0", async () => {
    stateDir = mkdtempSync(path.join(tmpdir(), "vault-mcp-cli-state-"));
    const port = await freePort();
    child = spawn(process.execPath, [CLI, "--port", String(port), "--state-dir", stateDir], { stdio: ["ignore", "pipe", "pipe"] });
    const banner = await waitForBanner(child);
    expect(banner).toContain('serving "vault" (the bundled example vault) read-only');
    const url = /Endpoint: (\S+)/.exec(banner)![1];
    const token = /Token: +(\S+)/.exec(banner)![1];
    expect(url).toBe(`http://127.0.0.1:${port}/mcp`);
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(banner).toContain(`claude mcp add --transport http vault-vault ${url} --header "Authorization: Bearer ${token}"`);
    expect(banner).toContain("Claude Desktop");

    const client = await connectClient(url, token);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(["search", "read", "get_context"]));
    const docs = await ok(client, "list_documents", { limit: 1000 });
    expect(docs.total).toBeGreaterThanOrEqual(10);
    const home = docs.items.find((d: { path: string }) => d.path === "Home.md") ?? docs.items[0];
    const note = await ok(client, "read", { path: home.path });
    expect(note.body.length).toBeGreaterThan(0);
    await client.close();

    // The token is kept for the next start (so configured clients keep working).
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const again = spawn(process.execPath, [CLI, "--port", String(port), "--state-dir", stateDir], { stdio: ["ignore", "pipe", "pipe"] });
    child = again;
    const banner2 = await waitForBanner(again);
    expect(/Token: +(\S+)/.exec(banner2)![1]).toBe(token);
    const exited2 = new Promise<number | null>((resolve) => again.once("exit", (code) => resolve(code)));
    again.kill("SIGTERM");
    expect(await exited2).toBe(0);

    // A signal as soon as anything is printed still stops it cleanly (the handlers exist before the banner).
    const early = spawn(process.execPath, [CLI, "--port", String(port), "--state-dir", stateDir], { stdio: ["ignore", "pipe", "pipe"] });
    child = early;
    const exited3 = new Promise<[number | null, string | null]>((resolve) => early.once("exit", (code, signal) => resolve([code, signal])));
    early.stdout.once("data", () => early.kill("SIGTERM"));
    expect(await exited3).toEqual([0, null]);
  });
});

test("state kept in the vault's plugin folder gets a .gitignore, so the index never lands in the owner's commits", async () => {
  const root = mkdtempSync(path.join(tmpdir(), "vault-mcp-cli-state-"));
  mkdirSync(path.join(root, ".obsidian"));
  writeFileSync(path.join(root, "A.md"), "# A\n");
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, root, "--port", String(port), "--no-git"], { stdio: ["ignore", "pipe", "pipe"] });
  try {
    await waitForBanner(child);
    const ignore = readFileSync(path.join(root, ".obsidian", "plugins", "vault-mcp", ".gitignore"), "utf8");
    expect(ignore.split("\n").filter((l) => l && !l.startsWith("#"))).toEqual(["*", "!.gitignore", "!main.js", "!manifest.json", "!styles.css", "!data.json"]);
  } finally {
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    await exited;
    rmSync(root, { recursive: true, force: true });
  }
});
