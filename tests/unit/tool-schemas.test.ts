import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { createCoreServices, type CoreServices } from "../../src/core/services";
import { MemoryStateStore } from "../../src/core/state";
import type { WorkspacePort } from "../../src/core/workspace";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { createMcpServer, CORE_TOOLS, type ToolProfile } from "../../src/mcp/server";
import { allTools } from "../../src/mcp/tools";
import { makeTempVault, removeTree } from "../support/harness";
import budgets from "../budgets.json";

const workspace: WorkspacePort = { activeNote: () => null, openNotes: () => [], openNote: async () => {} };

/**
 * Every tool's wire schema is held to a committed snapshot: a schema change fails here until the
 * snapshot is updated on purpose (`npx jest tests/unit/tool-schemas.test.ts -u`), so clients are never
 * surprised. The size of tools/list is measured too: it is paid in every conversation's context.
 */
describe("tool schemas", () => {
  let root: string;
  let vault: FsVault;
  const services: CoreServices[] = [];

  beforeAll(async () => {
    root = makeTempVault({ "Note.md": "# Note\n" });
    vault = await FsVault.open(root, { watch: false });
  });
  afterAll(async () => {
    for (const s of services) await s.close();
    await vault.close();
    removeTree(root);
  });

  async function listTools(opts: { write: boolean; host: "obsidian" | "node"; profile?: ToolProfile }): Promise<Tool[]> {
    const core = createCoreServices(vault, {
      host: opts.host,
      writeMode: opts.write,
      stateStore: new MemoryStateStore(),
      sqlWasm,
      workspace: opts.host === "obsidian" ? workspace : undefined,
    });
    services.push(core);
    const server = createMcpServer(core, allTools, { name: "vault-mcp (test)", version: "0", instructions: "", tools: opts.profile });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "schema-test", version: "1" });
    await Promise.all([server.connect(a), client.connect(b)]);
    const { tools } = await client.listTools();
    await client.close();
    return tools;
  }

  test("each tool's schema matches its snapshot", async () => {
    const tools = await listTools({ write: true, host: "obsidian" });
    for (const t of tools) expect(t).toMatchSnapshot(t.name);
  });

  test("write tools exist only in write mode; workspace tools only in Obsidian", async () => {
    const full = (await listTools({ write: true, host: "obsidian" })).map((t) => t.name);
    const readOnly = (await listTools({ write: false, host: "obsidian" })).map((t) => t.name);
    const headless = (await listTools({ write: true, host: "node" })).map((t) => t.name);
    // Tools that need semantic search or a git repository are tested where those exist (semantic-tools, git-tools).
    const writeNames = allTools.filter((t) => t.access === "write" && !t.needs).map((t) => t.name);
    expect(writeNames.length).toBeGreaterThan(0);
    for (const w of writeNames) {
      expect(full).toContain(w);
      expect(readOnly).not.toContain(w);
    }
    const obsidianOnly = allTools.filter((t) => t.hosts && !t.hosts.includes("node")).map((t) => t.name);
    for (const o of obsidianOnly) {
      expect(full).toContain(o);
      expect(headless).not.toContain(o);
    }
  });

  test("every tool has annotations, an output schema and a concise description", async () => {
    for (const t of await listTools({ write: true, host: "obsidian" })) {
      // The idempotent hint is meaningful only for tools that change something (spec).
      const hints = t.annotations!.readOnlyHint
        ? { readOnlyHint: true, destructiveHint: false, openWorldHint: false }
        : // Only tools that reach beyond the vault (fetch: the web) say openWorld.
          { readOnlyHint: false, destructiveHint: expect.any(Boolean), idempotentHint: expect.any(Boolean), openWorldHint: t.name === "fetch" };
      expect(t.annotations).toEqual(hints);
      expect(t.outputSchema?.type).toBe("object");
      expect(t.description!.length).toBeLessThanOrEqual(320);
    }
  });

  test("profiles: core is a small subset; custom is exactly the chosen tools", async () => {
    const core = (await listTools({ write: true, host: "obsidian", profile: { profile: "core" } })).map((t) => t.name);
    expect(core.every((n) => CORE_TOOLS.includes(n))).toBe(true);
    expect(core).toEqual(expect.arrayContaining(["search", "read", "find_notes"]));
    const custom = (await listTools({ write: false, host: "node", profile: { profile: "custom", enabled: ["read", "search", "write"] } })).map((t) => t.name);
    expect(custom.sort()).toEqual(["read", "search"]); // write needs write mode even when enabled
  });

  test("tools/list stays within its committed budget (bytes are paid in every conversation)", async () => {
    const sizes: Record<string, number> = {};
    for (const [name, opts] of [
      ["full, write, obsidian", { write: true, host: "obsidian" as const }],
      ["full, read-only, node", { write: false, host: "node" as const }],
      ["core, write, obsidian", { write: true, host: "obsidian" as const, profile: { profile: "core" as const } }],
    ] as const) {
      sizes[name] = Buffer.byteLength(JSON.stringify({ tools: await listTools(opts) }));
    }
    for (const [name, budget] of Object.entries(budgets.tools_list_bytes)) expect([name, sizes[name], sizes[name] <= budget]).toEqual([name, sizes[name], true]);
  });
});
