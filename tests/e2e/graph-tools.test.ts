/**
 * The graph tools over MCP: a real client talks to a server built from `graphTools` over an FsVault in
 * a temp folder, with the real search service feeding unlinked mentions. (Once the registry lists
 * graphTools and CoreServices has `graph`, `startTestServer` serves the same tools.)
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { createGraphService, type GraphService } from "../../src/core/graph";
import { createCoreServices, type CoreServices } from "../../src/core/services";
import { MemoryStateStore } from "../../src/core/state";
import type { WorkspacePort } from "../../src/core/workspace";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { createMcpServer } from "../../src/mcp/server";
import { graphTools } from "../../src/mcp/tools/graph-tools";
import { call, fails, makeTempVault, ok, removeTree, textOf } from "../support/harness";

const files = {
  "Hub.md": "---\naliases: [Center]\nsee: \"[[Leaf 1]]\"\n---\n# Hub\n## Part\nLinks: [[Leaf 1]], [[Leaf 2#Missing heading]], [[Leaf 2#^b1]], [[Nowhere]].\n",
  "Leaf 1.md": "# Leaf 1\nBack to [[Hub]] and [[Hub#Part]].\n",
  "Leaf 2.md": "Some text ^b1\n\nThe hub is the center of it all.\n",
  "Notes/Far.md": "Mentions hub without linking. [[Leaf 2]]\n",
  "Notes/Alone.md": "nothing here\n",
  "Private/Secret.md": "[[Hub]] mentions Hub\n",
};

interface Served {
  client: Client;
  close(): Promise<void>;
}

async function serve(services: CoreServices): Promise<Served> {
  const server = createMcpServer(services, graphTools, { name: "graph-test", version: "0", instructions: "" });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "graph-e2e", version: "1" });
  await client.connect(clientSide);
  return { client, close: async () => void (await client.close(), await server.close()) };
}

describe("graph tools over MCP", () => {
  let root: string;
  let vault: FsVault;
  let core: CoreServices;
  let graph: GraphService;
  let node: Served;
  let obsidian: Served;
  const opened: { path: string; line?: number; newTab?: boolean }[] = [];
  const workspace: WorkspacePort = {
    activeNote: () => ({ path: "Leaf 1.md", selection: "Back to", cursorLine: 2 }),
    openNotes: () => ["Leaf 1.md", "Private/Secret.md", "Hub.md"],
    openNote: async (path, opts) => void opened.push({ path, ...opts }),
  };

  beforeAll(async () => {
    root = makeTempVault(files);
    vault = await FsVault.open(root, { watch: false });
    core = createCoreServices(vault, { host: "node", writeMode: false, hiddenFolders: ["Private"], stateStore: new MemoryStateStore(), sqlWasm });
    await core.start();
    await core.search.waitForIdle(20_000);
    graph = createGraphService({ port: vault, policy: core.policy, search: core.search });
    graph.start();
    node = await serve({ ...core, graph });
    obsidian = await serve({ ...core, host: "obsidian", graph, workspace });
  });

  afterAll(async () => {
    await node?.close();
    await obsidian?.close();
    graph?.close();
    await core?.close();
    await vault?.close();
    removeTree(root);
  });

  test("tools are listed with output schemas and read-only annotations; workspace tools only in Obsidian", async () => {
    const nodeTools = (await node.client.listTools()).tools;
    const names = nodeTools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["get_backlinks", "get_outlinks", "get_unlinked_mentions", "get_broken_links", "get_orphan_notes", "get_most_linked", "get_connection_path", "get_recent", "get_context"]),
    );
    expect(names).not.toContain("get_active_note");
    for (const t of nodeTools) {
      expect(t.outputSchema).toBeDefined();
      expect(t.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(t.description!.length).toBeLessThan(260);
    }
    const obsidianNames = (await obsidian.client.listTools()).tools.map((t) => t.name);
    expect(obsidianNames).toEqual(expect.arrayContaining(["get_active_note", "list_open_notes", "open_note"]));
  });

  test("get_backlinks and get_outlinks, with _meta.index_stale", async () => {
    const r = await call(node.client, "get_backlinks", { path: "Hub" });
    expect(r.isError).toBeFalsy();
    expect(r._meta).toEqual({ index_stale: false });
    expect((r.structuredContent as any).backlinks.map((b: any) => [b.source, b.line, b.fragment])).toEqual([
      ["Leaf 1.md", 2, null],
      ["Leaf 1.md", 2, "Part"],
    ]);
    expect(textOf(r)).toContain("2 links from 1 notes to Hub.md");

    const out = await ok(node.client, "get_outlinks", { path: "Hub.md" });
    expect(out.outlinks.map((o: any) => [o.original, o.path, o.link_type, o.fragment_exists ?? null])).toEqual([
      ["[[Leaf 1]]", "Leaf 1.md", "frontmatter", null],
      ["[[Leaf 1]]", "Leaf 1.md", "wikilink", null],
      ["[[Leaf 2#Missing heading]]", "Leaf 2.md", "wikilink", false],
      ["[[Leaf 2#^b1]]", "Leaf 2.md", "wikilink", true],
      ["[[Nowhere]]", null, "wikilink", null],
    ]);
    expect(out.outlinks[0].line).toBe(3);
    expect(out).toMatchObject({ total: 5, unresolved: 1, missing_fragments: 1 });
  });

  test("get_unlinked_mentions finds candidates through the search index", async () => {
    const r = await ok(node.client, "get_unlinked_mentions", { path: "Hub.md" });
    expect(r.method).toBe("search");
    expect(r.mentions.map((m: any) => [m.path, m.line, m.matched])).toEqual([
      ["Leaf 2.md", 3, "Hub"],
      ["Notes/Far.md", 1, "Hub"],
    ]);
  });

  test("get_broken_links, get_orphan_notes, get_most_linked, get_recent", async () => {
    const broken = await ok(node.client, "get_broken_links", {});
    expect(broken.links.map((l: any) => [l.source, l.line, l.original])).toEqual([["Hub.md", 7, "[[Nowhere]]"]]);
    const withFragments = await ok(node.client, "get_broken_links", { include_fragments: true });
    expect(withFragments.total).toBe(2);
    expect(await fails(node.client, "get_broken_links", { folder: "Private" })).toContain('No folder "Private"');

    expect((await ok(node.client, "get_orphan_notes", {})).notes.map((n: any) => n.path)).toEqual(["Notes/Alone.md"]);
    const top = await ok(node.client, "get_most_linked", { limit: 2 });
    expect(top.notes.map((n: any) => n.path)).toEqual(["Leaf 2.md", "Hub.md"]);
    const recent = await ok(node.client, "get_recent", { limit: 3, folder: "Notes" });
    expect(recent.notes).toHaveLength(2);
  });

  test("get_connection_path clamps max_depth and explains misses", async () => {
    const r = await ok(node.client, "get_connection_path", { from: "Notes/Far.md", to: "Leaf 1.md", max_depth: 50 });
    expect(r).toMatchObject({ found: true, hops: 3, path: ["Notes/Far.md", "Leaf 2.md", "Hub.md", "Leaf 1.md"] });
    expect(r.steps.map((s: any) => s.direction)).toEqual(["forward", "backward", "forward"]);
    const miss = await call(node.client, "get_connection_path", { from: "Notes/Far.md", to: "Leaf 1.md", max_depth: 1 });
    expect(textOf(miss)).toContain("No connection within 1 hops");
  });

  test("get_context returns a capped dossier", async () => {
    const c = await ok(node.client, "get_context", { path: "Hub", backlinks_limit: 1, mentions_limit: 1 });
    expect(c).toMatchObject({ path: "Hub.md", aliases: ["Center"], backlinks_total: 2, outlinks_total: 5, unresolved_outlinks: 1 });
    expect(c.backlinks).toHaveLength(1);
    expect(c.unlinked_mentions).toHaveLength(1);
    expect(c.outline.map((h: any) => h.heading)).toEqual(["Hub", "Part"]);
    expect(c.folder_peers.map((p: any) => p.path)).toEqual(["Leaf 1.md", "Leaf 2.md"]);
  });

  test("hidden notes look missing", async () => {
    expect(await fails(node.client, "get_backlinks", { path: "Private/Secret.md" })).toContain("No note or file");
    expect((await ok(node.client, "get_backlinks", { path: "Hub.md" })).backlinks.map((b: any) => b.source)).not.toContain("Private/Secret.md");
    expect(await fails(node.client, "get_connection_path", { from: "Hub.md", to: "Private/Secret.md" })).toContain("No note or file");
  });

  test("changes reach the graph; wait_for_pending_writes waits for them", async () => {
    await vault.create("Notes/New.md", "Now [[Nowhere]] exists? No: [[Notes/Alone]].\n");
    await vault.create("Nowhere.md", "here now\n");
    const r = await call(node.client, "get_backlinks", { path: "Nowhere.md", wait_for_pending_writes: true });
    expect(r._meta).toEqual({ index_stale: false });
    expect((r.structuredContent as any).backlinks.map((b: any) => b.source)).toEqual(["Hub.md", "Notes/New.md"]);
    expect((await ok(node.client, "get_orphan_notes", { wait_for_pending_writes: true })).notes).toEqual([]);
    await vault.rename("Notes/Alone.md", "Notes/Together.md");
    const out = await ok(node.client, "get_outlinks", { path: "Notes/New.md", wait_for_pending_writes: true });
    expect(out.outlinks.map((o: any) => o.path)).toEqual(["Nowhere.md", "Notes/Together.md"]);
  });

  test("workspace tools in Obsidian: active note, open notes (hidden ones left out), open a note", async () => {
    expect(await ok(obsidian.client, "get_active_note")).toEqual({ active: true, path: "Leaf 1.md", selection: "Back to", selection_truncated: false, cursor_line: 2 });
    expect(await ok(obsidian.client, "list_open_notes")).toEqual({ notes: ["Leaf 1.md", "Hub.md"] });
    expect(await ok(obsidian.client, "open_note", { path: "Hub", line: 6, new_tab: true })).toEqual({ path: "Hub.md", opened: true });
    expect(opened).toEqual([{ path: "Hub.md", line: 6, newTab: true }]);
    expect(await fails(obsidian.client, "open_note", { path: "Private/Secret.md" })).toContain("No note or file");
    expect(opened).toHaveLength(1);
  });
});
