/**
 * The headless server listens before its vault is open (issue #32: 100k notes took 25 s to open):
 * /health, initialize (with the vault's instructions) and tools/list answer while notes' metadata is
 * still being read; a tool call that needs the open vault waits (a read past its time limit says the
 * vault is still being opened), and search says its index is loading instead of answering as if final.
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { MemoryStateStore } from "../../src/core/state";
import { startRuntime } from "../../src/hosts/common/runtime";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { call, connectClient, eventually, makeTempVault, rawRequest, removeTree, textOf } from "../support/harness";

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) removeTree(d);
});

/** A server over a vault whose notes' metadata is held back until `release()`: listed, not yet open. */
async function serveHeldBack(files: Record<string, string>, opts: { writeMode: boolean; toolTimeoutMs?: number }) {
  const root = makeTempVault(files, "vault-mcp-listen-first-");
  cleanup.push(root);
  const vault = await FsVault.begin(root, { watch: false });
  let release!: () => void;
  vault.deferMetadata(new Promise<void>((r) => (release = r)));
  const token = randomBytes(24).toString("base64url");
  const runtime = await startRuntime({
    port: vault,
    host: "node",
    listenPort: 0,
    ...(opts.toolTimeoutMs !== undefined ? { toolTimeoutMs: opts.toolTimeoutMs } : {}),
    token: () => token,
    allowedOrigins: [],
    writeMode: opts.writeMode,
    stateStore: new MemoryStateStore(),
    sqlWasm,
    version: "0.0.0-test",
  });
  const close = async () => {
    release();
    await runtime.close();
    await vault.close();
  };
  return { root, vault, runtime, token, release, close };
}

describe("listening before the vault is open", () => {
  test("health, initialize and tools/list answer at once; tools wait for the vault, search says it is loading", async () => {
    const files: Record<string, string> = { "AGENTS.md": "Write in the zebra style.\n" };
    for (let i = 0; i < 40; i++) files[`F${i % 4}/Note ${i}.md`] = `# Note ${i}\n\nquokka and [[Note ${i + 1}]]\n`;
    // The notes' metadata is held back until the test lets it go.
    const { vault, runtime, token, release, close } = await serveHeldBack(files, { writeMode: false, toolTimeoutMs: 1500 });
    let ready = false;
    void vault.ready().then(() => (ready = true));
    try {
      expect(ready).toBe(false);
      expect((await rawRequest(runtime.listenPort, { path: "/health" })).status).toBe(200);
      const client = await connectClient(runtime.url, token);
      // initialize waited for the listing only: the root AGENTS.md is in the instructions.
      expect(client.getInstructions()).toMatch(/zebra style/);
      expect((await client.listTools()).tools.map((t) => t.name)).toContain("read");
      // A read waits for the open vault, at most to its deadline, and then says why.
      const read = await call(client, "read", { path: "F0/Note 0.md" });
      expect(read.isError).toBe(true);
      expect(textOf(read)).toMatch(/still being opened \(0 of 41 notes read\); call again/);
      // Search answers from what it has and says the index is loading: never a final "no notes".
      const early = await call(client, "search", { query: "quokka" });
      expect(early.isError).toBeFalsy();
      expect(textOf(early)).toMatch(/YET/);
      expect((early.structuredContent as { index_loading?: unknown }).index_loading).toBeTruthy();
      expect(ready).toBe(false);
      release();
      await vault.ready();
      const text = textOf(await call(client, "read", { path: "F0/Note 0.md" }));
      expect(text).toMatch(/quokka/);
      await eventually(async () => {
        const r = await call(client, "search", { query: "quokka" });
        expect((r.structuredContent as { index_loading?: unknown }).index_loading).toBeUndefined();
        expect((r.structuredContent as { total_files: number }).total_files).toBe(40);
      }, 10_000);
      await client.close();
    } finally {
      await close();
    }
  }, 30_000);

  test("a write waits for the vault to open; one its client cancelled meanwhile is not made", async () => {
    const { root, runtime, token, release, close } = await serveHeldBack({ "a.md": "one\n" }, { writeMode: true });
    try {
      const client = await connectClient(runtime.url, token);
      // The client gives up on the first write (its own time limit, or its user stopped it) while the vault opens.
      const stop = new AbortController();
      const given = client.callTool({ name: "write", arguments: { path: "a.md", content: "cancelled\n", mode: "append" } }, undefined, { signal: stop.signal });
      const kept = call(client, "write", { path: "a.md", content: "kept\n", mode: "append" });
      await new Promise((r) => setTimeout(r, 200));
      stop.abort();
      await expect(given).rejects.toThrow();
      // The server has the cancellation before the vault opens.
      await new Promise((r) => setTimeout(r, 200));
      release();
      const k = await kept;
      expect(k.isError).toBeFalsy();
      await eventually(async () => expect(readFileSync(join(root, "a.md"), "utf8")).toBe("one\nkept\n"), 5_000);
      // Nothing arrives later either.
      await new Promise((r) => setTimeout(r, 300));
      expect(readFileSync(join(root, "a.md"), "utf8")).toBe("one\nkept\n");
      await client.close();
    } finally {
      await close();
    }
  }, 30_000);

  test("FsVault.begin: listed before the notes are read; open() waits for both", async () => {
    const root = makeTempVault({ "a.md": "[[b]]", "b.md": "# B", "c/d.md": "#tag" }, "vault-mcp-listen-first-");
    cleanup.push(root);
    const v = await FsVault.begin(root, { watch: false });
    let release!: () => void;
    v.deferMetadata(new Promise<void>((r) => (release = r)));
    await v.listed();
    expect(v.listFiles().map((f) => f.path).sort()).toEqual(["a.md", "b.md", "c/d.md"]);
    expect(v.isFolder("c")).toBe(true);
    expect(v.openingProgress()).toEqual({ read: 0, total: 3 });
    expect(v.getMetadata("a.md")).toBeNull();
    release();
    await v.ready();
    expect(v.openingProgress()).toEqual({ read: 3, total: 3 });
    expect(v.resolvedLinks()["a.md"]).toEqual({ "b.md": 1 });
    expect(v.getMetadata("c/d.md")?.tags.map((t) => t.tag)).toEqual(["#tag"]);
    await v.close();
    const opened = await FsVault.open(root, { watch: false });
    expect(opened.resolvedLinks()["a.md"]).toEqual({ "b.md": 1 });
    await opened.close();
  });
});
