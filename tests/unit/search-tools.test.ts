import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { z } from "zod";
import { isVaultError } from "../../src/core/errors";
import { createLookupService } from "../../src/core/lookup";
import { AccessPolicy } from "../../src/core/policy";
import type { IndexStatus, SearchRequest, SearchResponse, SearchService } from "../../src/core/search";
import type { CoreServices } from "../../src/core/services";
import { VaultService } from "../../src/core/services/vault-service";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { searchTools } from "../../src/mcp/tools/search-tools";
import type { ToolResult } from "../../src/mcp/tool";
import { makeTempVault, removeTree } from "../support/harness";

/** A search service double that records requests and lets a test set its state. */
class FakeSearch implements SearchService {
  requests: SearchRequest[] = [];
  pending = false;
  /** The pending work ends while a search runs (a warm start's reconciliation, say). */
  pendingEndsInSearch = false;
  waited: number[] = [];
  reindexed = 0;
  ready = true;
  state: IndexStatus = { state: "queryable", readiness: "ready", notes_covered: 3, notes_total: 3, documents_indexed: 3, documents_total: 3, queue_depth: 0, skipped: [], last_error: null };
  response: SearchResponse = {
    hits: [
      {
        path: "Projects/Plan.md",
        title: "Plan",
        folder: "Projects",
        score: 3.14159,
        frontmatter: { tags: ["craft"] },
        sections: [{ heading: "Plan > Wood", content: "Oak, maybe ash.", score: 2, line_start: 5, line_end: 7 }],
      },
    ],
    total_files: 1,
    relaxed: false,
  };
  async start(): Promise<void> {}
  async search(req: SearchRequest): Promise<SearchResponse> {
    this.requests.push(req);
    if (this.pendingEndsInSearch) this.pending = false;
    return this.response;
  }
  status(): IndexStatus {
    return this.state;
  }
  hasPendingWork(): boolean {
    return this.pending;
  }
  async whenReady(): Promise<boolean> {
    return this.ready;
  }
  async waitForIdle(timeoutMs: number): Promise<boolean> {
    this.waited.push(timeoutMs);
    this.pending = false;
    return true;
  }
  reindex(): void {
    this.reindexed++;
    this.state = { ...this.state, state: "building" };
  }
  onProgress(): () => void {
    return () => {};
  }
  async close(): Promise<void> {}
}

let root: string;
let vault: FsVault;
let services: CoreServices & { search: FakeSearch };
let search: FakeSearch;

beforeAll(async () => {
  root = makeTempVault({
    "Home.md": "---\naliases: [Start here]\ntags: [index]\n---\n# Home\nSee #craft/wood.\n",
    "Projects/Plan.md": "---\ntags: [craft]\nstatus: active\n---\n# Plan\n## Wood\nOak, maybe ash.\nTODO buy oak\n",
    "Projects/Meeting notes.md": "---\naliases: [Standup]\nstatus: done\n---\nTODO send minutes\n",
  });
  vault = await FsVault.open(root, { watch: false });
  const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
  search = new FakeSearch();
  services = {
    host: "node",
    writeMode: false,
    port: vault,
    policy,
    vault: new VaultService(vault, policy),
    lookup: createLookupService({ port: vault, policy }),
    search,
    searchModes: () => ["keyword"],
    start: async () => {},
    close: async () => {},
  } as unknown as CoreServices & { search: FakeSearch };
});

afterAll(async () => {
  await vault.close();
  removeTree(root);
});

/** Runs a tool as the MCP server would: input parsed (defaults applied) by its schema, then the handler. */
async function run(name: string, args: Record<string, unknown> = {}): Promise<ToolResult<Record<string, any>>> {
  const tool = searchTools.find((t) => t.name === name)!;
  const parsed = z.object(tool.input).parse(args);
  const result = await tool.handler(parsed, { services, clientName: "test", deadline: Infinity });
  // The structured result must satisfy the declared output schema (the SDK checks it too).
  z.object(tool.output).parse(result.structured);
  return result as ToolResult<Record<string, any>>;
}

async function error(name: string, args: Record<string, unknown> = {}): Promise<string> {
  try {
    await run(name, args);
  } catch (e) {
    if (isVaultError(e)) return e.message;
    throw e;
  }
  throw new Error(`${name} unexpectedly succeeded`);
}

describe("tool definitions", () => {
  test("the six search-family tools, all read-only", () => {
    expect(searchTools.map((t) => t.name)).toEqual(["search", "find_notes", "grep", "list_tags", "get_index_status", "reindex"]);
    for (const t of searchTools) {
      expect(t.access).toBe("read");
      expect(t.annotations.readOnlyHint).toBe(true);
      expect(t.description.length).toBeLessThan(300);
    }
  });
});

describe("search", () => {
  test("maps arguments and returns grouped hits with text and freshness", async () => {
    const r = await run("search", { query: "  oak wood ", folder: "Projects", filters: { tags: "craft" } });
    expect(search.requests.at(-1)).toEqual({ query: "oak wood", limit: 10, folder: "Projects", filters: { tags: "craft" }, chunksPerFile: 1, snippetWords: 18 });
    expect(r.structured).toMatchObject({ total_files: 1, relaxed: false, mode: "keyword" });
    expect(r.structured.hits[0].sections[0].heading).toBe("Plan > Wood");
    // Each hit: what a model needs, not the note's frontmatter and folder; scores to 2 decimals.
    expect(Object.keys(r.structured.hits[0]).sort()).toEqual(["path", "score", "sections"]);
    expect(Object.keys(r.structured.hits[0].sections[0]).sort()).toEqual(["content", "heading", "line_end", "line_start"]);
    expect(String(r.structured.hits[0].score)).toMatch(/^\d+(\.\d{1,2})?$/);
    // The text: a line per section, with its last heading.
    expect(r.text!.split("\n")[1]).toBe("Projects/Plan.md (Wood, lines 5-7): Oak, maybe ash.");
    expect(r.meta).toEqual({ index_stale: false });
  });

  test("notes with only some of the words follow, saying what they lack", async () => {
    search.response = {
      ...search.response,
      hits: [...search.response.hits, { path: "Shed.md", title: "Shed", folder: "", score: 1, frontmatter: {}, sections: [{ heading: "", content: "Oak shelves.", score: 1, line_start: 1, line_end: 1 }], missing: ["wood"] }],
      partial_files: 4,
    };
    const r = await run("search", { query: "oak wood" });
    expect(r.structured.hits[1]).toMatchObject({ path: "Shed.md", missing: ["wood"] });
    expect(r.structured.partial_files).toBe(4);
    expect(r.text!.split("\n")).toEqual([
      '1 notes match every word of "oak wood", then 4 with some of them; top 2:',
      "Projects/Plan.md (Wood, lines 5-7): Oak, maybe ash.",
      "Shed.md (lines 1-1) [lacks wood]: Oak shelves.",
    ]);
  });

  test("reports a stale index, and waits when asked", async () => {
    search.pending = true;
    const stale = await run("search", { query: "oak" });
    expect(stale.meta).toEqual({ index_stale: true });
    expect(stale.text).toContain("wait_for_pending_writes");
    expect(search.waited).toEqual([]);
    const fresh = await run("search", { query: "oak", wait_for_pending_writes: true });
    // At most 5 s (what is left of them when the call gets there).
    expect(search.waited).toHaveLength(1);
    expect(search.waited[0]).toBeLessThanOrEqual(5000);
    expect(search.waited[0]).toBeGreaterThan(0);
    expect(fresh.meta).toEqual({ index_stale: false });
  });

  test("work pending when the call came in but done by its answer is not reported stale (a warm start's reconciliation ending while its first search runs)", async () => {
    search.pending = true;
    search.pendingEndsInSearch = true;
    try {
      const r = await run("search", { query: "oak" });
      expect(r.meta).toEqual({ index_stale: false });
      expect(r.text).not.toContain("wait_for_pending_writes");
      // Still pending when the answer is made: stale.
      search.pending = true;
      search.pendingEndsInSearch = false;
      expect((await run("search", { query: "oak" })).meta).toEqual({ index_stale: true });
    } finally {
      search.pendingEndsInSearch = false;
      search.pending = false;
    }
  });

  test("while the index does not cover the vault and the call cannot wait: 'nothing found YET', with the progress, never 'No notes match'", async () => {
    const saved = { state: search.state, response: search.response };
    search.ready = false;
    search.state = { ...search.state, state: "building", readiness: "indexing", notes_covered: 10, notes_total: 40 };
    search.response = { hits: [], total_files: 0, relaxed: false };
    try {
      const tool = searchTools.find((t) => t.name === "search")!;
      const r = await tool.handler(z.object(tool.input).parse({ query: "oak" }), { services, clientName: "test", deadline: Date.now() });
      z.object(tool.output).parse(r.structured);
      expect(r.text).not.toMatch(/No notes match/);
      expect(r.text).toMatch(/Nothing found for "oak" YET — not a final answer: the search index is still loading \(indexing notes: 10 of 40 notes, 25%\)/);
      expect(r.structured).toMatchObject({ hits: [], index_loading: { readiness: "indexing", notes_covered: 10, notes_total: 40 } });
      expect(r.meta).toEqual({ index_stale: true, index_loading: { readiness: "indexing", notes_covered: 10, notes_total: 40 } });
      // With hits, they come with the warning that notes are missing.
      search.response = saved.response;
      const some = await tool.handler(z.object(tool.input).parse({ query: "oak" }), { services, clientName: "test", deadline: Date.now() });
      expect(some.text).toMatch(/still loading \(indexing notes: 10 of 40 notes, 25%\): notes it has not read yet are missing/);
      expect(some.text).not.toMatch(/catching up/);
    } finally {
      search.ready = true;
      search.state = saved.state;
      search.response = saved.response;
    }
  });

  test("refuses semantic modes when semantic search is off, zero chunks, empty queries and unknown folders", async () => {
    expect(await error("search", { query: "oak", mode: "semantic" })).toMatch(/"semantic" needs semantic search, which is off.*"keyword"/);
    expect(await error("search", { query: "oak", mode: "hybrid" })).toMatch(/which is off on this server/);
    expect(await error("search", { query: "oak", chunks_per_file: 0 })).toMatch(/chunks_per_file must be at least 1/);
    expect(await error("search", { query: "   " })).toMatch(/query is empty/);
    expect(await error("search", { query: "oak", folder: "Nope" })).toMatch(/No folder "Nope"/);
    expect(() => z.object(searchTools[0].input).parse({ query: "x", limit: 51 })).toThrow();
  });

  test("says how to recover when the index failed", async () => {
    const saved = search.state;
    search.state = { ...saved, state: "failed", last_error: "database is corrupt" };
    expect(await error("search", { query: "oak" })).toMatch(/database is corrupt.*reindex/);
    search.state = saved;
  });

  test("a text answer for no hits", async () => {
    const saved = search.response;
    search.response = { hits: [], total_files: 0, relaxed: false };
    expect((await run("search", { query: "zzz" })).text).toMatch(/No notes match "zzz"/);
    search.response = saved;
  });
});

describe("find_notes, grep, list_tags", () => {
  test("find_notes by alias and with a typo", async () => {
    const r = await run("find_notes", { query: "standup" });
    expect(r.structured.notes[0]).toMatchObject({ path: "Projects/Meeting notes.md", matched_alias: "Standup" });
    expect(r.text).toContain('Projects/Meeting notes.md (alias "Standup")');
    expect((await run("find_notes", { query: "meetng" })).structured.notes[0].path).toBe("Projects/Meeting notes.md");
    expect(await error("find_notes", { query: "" })).toMatch(/empty/);
  });

  test("grep returns path:line: text and structured matches", async () => {
    const r = await run("grep", { query: "todo", folder: "Projects" });
    expect(r.structured.matches.map((m: any) => `${m.path}:${m.line}`)).toEqual(["Projects/Meeting notes.md:5", "Projects/Plan.md:8"]);
    expect(r.text).toContain("Projects/Plan.md:8: TODO buy oak");
    expect(r.structured.truncated).toBe(false);
    expect(await error("grep", { query: "[", regex: true })).toMatch(/not valid/);
    expect((await run("grep", { query: "todo", pattern: "*meeting*" })).structured.matches).toHaveLength(1);
  });

  test("list_tags merges inline and frontmatter tags", async () => {
    const r = await run("list_tags");
    expect(r.structured.values).toEqual([
      { value: "craft", count: 1 },
      { value: "craft/wood", count: 1 },
      { value: "index", count: 1 },
    ]);
    expect(r.text).toContain("#craft/wood (1)");
    expect((await run("list_tags", { field: "status" })).structured.values.map((v: any) => v.value)).toEqual(["active", "done"]);
  });
});

describe("index status and reindex", () => {
  test("status mirrors the service; reindex queues and returns at once", async () => {
    const s = await run("get_index_status");
    expect(s.structured).toMatchObject({ state: "queryable", documents_indexed: 3, documents_total: 3, pending_work: false });
    const r = await run("reindex");
    expect(search.reindexed).toBe(1);
    expect(r.structured).toMatchObject({ queued: true, status: { state: "building" } });
  });
});
