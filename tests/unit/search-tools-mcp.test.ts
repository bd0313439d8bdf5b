/** The search-family tools over MCP HTTP with the real index, as a client sees them. */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

let server: TestServer;
let client: Client;

beforeAll(async () => {
  const root = makeTempVault({
    "Home.md": "---\naliases: [Start here]\ntags: [index]\n---\n# Home\n\nWelcome. See [[Projects/Workbench]].\n",
    "Projects/Workbench.md":
      "---\ntags: [craft, craft/wood]\nstatus: active\n---\n# Workbench\n\n## Lumber\nBuy kiln-dried oak and ash boards.\n\n## Joinery\nMortise and tenon joints, drawbored with oak pegs.\nTODO sharpen the chisels\n",
    "Projects/Quarterly plan.md": "---\ntags: [work/planning]\nstatus: draft\n---\n# Quarterly plan\n\nGoals for the quarter: ship the catalogue. #work/planning\n",
    "Journal/2024-05-01.md": "Bought oak today. TODO glue-up\n",
    ".obsidian/app.json": "{}",
  });
  server = await startTestServer(root, { write: false });
  client = await server.connect();
  await server.runtime.services.search.waitForIdle(30_000);
});

afterAll(async () => {
  const root = server.root;
  await server.close();
  removeTree(root);
});

describe("search-family tools over MCP", () => {
  test("tools/list offers them", async () => {
    const names = (await client.listTools()).tools.map((t) => t.name);
    for (const n of ["search", "find_notes", "grep", "list_tags", "get_index_status", "reindex"]) expect(names).toContain(n);
  });

  test("search returns one hit per note with its best section and freshness meta", async () => {
    const r = await call(client, "search", { query: "oak joinery" });
    expect(r.isError).toBeFalsy();
    const s = r.structuredContent as any;
    expect(s.hits[0].path).toBe("Projects/Workbench.md");
    expect(s.hits[0].sections).toHaveLength(1);
    expect(s.hits[0].sections[0].content).toMatch(/oak/i);
    expect(s.hits[0].sections[0].line_start).toBeGreaterThan(0);
    expect(r._meta).toEqual({ index_stale: false });
    expect(textOf(r)).toMatch(/\nProjects\/Workbench\.md \(.*lines \d+-\d+\): /);
  });

  test("search filters by frontmatter and folder; refuses semantic mode when it is off", async () => {
    const craft = await ok(client, "search", { query: "oak", filters: { tags: "craft" } });
    expect(craft.hits.map((h: any) => h.path)).toEqual(["Projects/Workbench.md"]);
    const journal = await ok(client, "search", { query: "oak", folder: "Journal" });
    expect(journal.hits.map((h: any) => h.path)).toEqual(["Journal/2024-05-01.md"]);
    expect(await fails(client, "search", { query: "oak", mode: "semantic" })).toMatch(/needs semantic search, which is off/);
    expect(await fails(client, "search", { query: "oak", chunks_per_file: 0 })).toMatch(/chunks_per_file/);
  });

  test("a change is searchable when the client waits for pending writes", async () => {
    await server.vault.process("Journal/2024-05-01.md", (t) => t + "\nPlaned a walnut slab.\n");
    const r = await call(client, "search", { query: "walnut", wait_for_pending_writes: true });
    expect((r.structuredContent as any).hits.map((h: any) => h.path)).toEqual(["Journal/2024-05-01.md"]);
    expect(r._meta).toEqual({ index_stale: false });
  });

  test("find_notes, grep and list_tags", async () => {
    expect((await ok(client, "find_notes", { query: "quartrly" })).notes[0].path).toBe("Projects/Quarterly plan.md");
    expect((await ok(client, "find_notes", { query: "start here" })).notes[0]).toMatchObject({ path: "Home.md", matched_alias: "Start here" });
    const g = await call(client, "grep", { query: "todo" });
    expect(textOf(g)).toContain("Journal/2024-05-01.md:1: Bought oak today. TODO glue-up");
    expect((g.structuredContent as any).matches).toHaveLength(2);
    const tags = await ok(client, "list_tags");
    expect(tags.values).toEqual([
      { value: "craft", count: 1 },
      { value: "craft/wood", count: 1 },
      { value: "index", count: 1 },
      { value: "work/planning", count: 1 },
    ]);
  });

  test("index status and reindex", async () => {
    const s = await ok(client, "get_index_status");
    expect(s).toMatchObject({ state: "queryable", documents_total: 4 });
    const r = await ok(client, "reindex");
    expect(r.queued).toBe(true);
    expect(await server.runtime.services.search.waitForIdle(30_000)).toBe(true);
    expect((await ok(client, "get_index_status")).documents_indexed).toBe(4);
  });

  test("grep's regular expressions cannot hang the server (issue #23's report), and say what they lack", async () => {
    await server.vault.create("Evil.md", `${"a".repeat(40)}!\n`);
    const r = await ok(client, "grep", { query: "(a+)+$", regex: true });
    expect(r).toEqual({ matches: [], truncated: false, files_scanned: 5 });
    expect((await ok(client, "grep", { query: "^(a+)+!$", regex: true })).matches.map((m: any) => m.path)).toEqual(["Evil.md"]);
    expect(await fails(client, "grep", { query: "oak(?= pegs)", regex: true })).toMatch(/uses a lookahead \(\?=…\), which this server does not support.*linear-time/);
    expect(await fails(client, "grep", { query: "oak", pattern: "{".repeat(600) })).toMatch(/path pattern is 600 characters long/);
    // Queries too large to answer in one bounded step are refused, saying how to ask instead.
    expect(await fails(client, "search", { query: "oak ".repeat(300) })).toMatch(/1199 characters long; keep it under 1000/);
    expect(await fails(client, "search", { query: "o*" })).toMatch(/one letter/);
    expect(await fails(client, "find_notes", { query: "one two three four five six seven eight nine ten eleven twelve thirteen" })).toMatch(
      /at most 12 words .*this query has 13 words.*use search/,
    );
    // The server is still answering.
    expect((await ok(client, "stats")).notes).toBeGreaterThan(0);
  });
});
