import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { acquireServerLock, lockFileName, ServerLockedError } from "../../src/hosts/common/server-lock";
import { isOurStateTempName, isOurTempName, removeStateLeftovers } from "../../src/hosts/common/leftovers";

describe("the server lock", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-mcp-lock-unit-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = () => path.join(dir, lockFileName());

  test("a held lock refuses another (naming the holder); release frees it; setPort records the port", () => {
    const a = acquireServerLock(dir, { host: "node" });
    a.setPort(4321);
    expect(JSON.parse(fs.readFileSync(file(), "utf8"))).toMatchObject({ pid: process.pid, host: "node", port: 4321, hostname: os.hostname() });
    let err: unknown;
    try {
      acquireServerLock(dir, { host: "obsidian" });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ServerLockedError);
    expect((err as Error).message).toMatch(new RegExp(`^The headless Vault MCP server \\(pid ${process.pid}, port 4321, started \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d UTC\\) is already serving this vault`));
    a.release();
    expect(fs.existsSync(file())).toBe(false);
    const b = acquireServerLock(dir, { host: "obsidian" });
    b.release();
  });

  test("a garbage lock file is taken over; release leaves another holder's lock alone", () => {
    fs.writeFileSync(file(), "{half");
    const a = acquireServerLock(dir, { host: "node" });
    // Someone replaced it (a takeover after this one was judged stale): not ours to remove.
    fs.writeFileSync(file(), JSON.stringify({ pid: 1, host: "node", port: 1, started: "x", hostname: os.hostname(), instance: "other" }));
    a.release();
    expect(fs.existsSync(file())).toBe(true);
  });

  test("the holder keeps the lock's mtime fresh", async () => {
    const a = acquireServerLock(dir, { host: "node", heartbeatMs: 20 });
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(file(), old, old);
    const deadline = Date.now() + 5000;
    while (fs.statSync(file()).mtimeMs <= old.getTime() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(fs.statSync(file()).mtimeMs).toBeGreaterThan(old.getTime());
    a.release();
  });

  test("our temp names only", () => {
    expect(isOurTempName(".Note.md.0123456789ab.vault-mcp.tmp")).toBe(true);
    expect(isOurTempName(".Note.md.vault-mcp.tmp")).toBe(false);
    expect(isOurTempName("Note.md.0123456789ab.vault-mcp.tmp")).toBe(false);
    expect(isOurStateTempName("search-index-01.sqlite.tmp-lq3k2abcx1y2")).toBe(true);
    expect(isOurStateTempName(`${lockFileName()}.00112233aabb.stale`)).toBe(true);
    expect(isOurStateTempName("data.json")).toBe(false);
    expect(isOurStateTempName(lockFileName())).toBe(false);
    for (const n of [".a.sqlite.0123456789ab.vault-mcp.tmp", "data.json", "x.tmp"]) fs.writeFileSync(path.join(dir, n), "");
    expect(removeStateLeftovers(dir)).toBe(1);
    expect(fs.readdirSync(dir).sort()).toEqual(["data.json", "x.tmp"]);
  });
});
