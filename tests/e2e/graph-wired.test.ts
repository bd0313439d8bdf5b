/** The graph tools as the headless server serves them (registry + CoreServices), changed through the write tools. */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, removeTree, startTestServer, type TestServer } from "../support/harness";

describe("graph tools on the headless server", () => {
  let root: string;
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    root = makeTempVault({
      "Index.md": "# Index\n- [[Topics/Alpha]]\n- [[Beta#Intro]]\n- [[Gone]]\n",
      "Topics/Alpha.md": "---\naliases: [First]\n---\nAlpha links [[Beta]].\n",
      "Beta.md": "# Intro\nBeta talks about alpha and first things.\n",
      "Hidden/Private.md": "[[Beta]] and Alpha\n",
    });
    server = await startTestServer(root, { write: true, hidden: ["Hidden"] });
    client = await server.connect();
  });

  afterAll(async () => {
    await server?.close();
    removeTree(root);
  });

  test("the registry serves every graph tool; the workspace tools stay in Obsidian", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ["get_backlinks", "get_outlinks", "get_unlinked_mentions", "get_broken_links", "get_orphan_notes", "get_most_linked", "get_connection_path", "get_recent", "get_context"]) {
      expect(names).toContain(n);
    }
    expect(names).not.toContain("get_active_note");
    expect(names).not.toContain("open_note");
  });

  test("answers over the vault, hidden folder left out", async () => {
    const back = await ok(client, "get_backlinks", { path: "Beta.md" });
    expect(back.backlinks.map((b: any) => [b.source, b.fragment])).toEqual([
      ["Index.md", "Intro"],
      ["Topics/Alpha.md", null],
    ]);
    const mentions = await ok(client, "get_unlinked_mentions", { path: "Topics/Alpha.md", wait_for_pending_writes: true });
    expect(mentions.mentions.map((m: any) => [m.path, m.line, m.matched])).toEqual([["Beta.md", 2, "Alpha"]]);
    expect((await ok(client, "get_broken_links", {})).links.map((l: any) => l.original)).toEqual(["[[Gone]]"]);
  });

  test("writes, renames and deletes through the write tools reach the graph", async () => {
    await ok(client, "write", { path: "Gone.md", content: "Back: [[Index]]\n" });
    const r = await call(client, "get_broken_links", { wait_for_pending_writes: true });
    expect(r._meta).toEqual({ index_stale: false });
    expect((r.structuredContent as any).total).toBe(0);

    await ok(client, "rename", { path: "Beta.md", new_path: "Topics/Beta 2.md" });
    // The rename rewrote the links, so nothing broke and the backlinks followed.
    const back = await ok(client, "get_backlinks", { path: "Topics/Beta 2.md", wait_for_pending_writes: true });
    expect(back.backlinks.map((b: any) => b.source).sort()).toEqual(["Index.md", "Topics/Alpha.md"]);
    expect((await ok(client, "get_broken_links", { wait_for_pending_writes: true })).total).toBe(0);

    await ok(client, "delete", { path: "Gone.md", confirm_path: "Gone.md" });
    const broken = await ok(client, "get_broken_links", { wait_for_pending_writes: true });
    expect(broken.links.map((l: any) => [l.source, l.original])).toEqual([["Index.md", "[[Gone]]"]]);
    expect(await fails(client, "get_context", { path: "Gone.md" })).toContain("No note or file");
  });

  test("connection path and context over the renamed vault", async () => {
    const p = await ok(client, "get_connection_path", { from: "Index.md", to: "Topics/Beta 2.md" });
    expect(p).toMatchObject({ found: true, hops: 1 });
    const c = await ok(client, "get_context", { path: "Topics/Alpha.md" });
    expect(c).toMatchObject({ aliases: ["First"], backlinks_total: 1, outlinks_total: 1 });
    expect(c.folder_peers.map((x: any) => x.path)).toEqual(["Topics/Beta 2.md"]);
  });
});
