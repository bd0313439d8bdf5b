import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

/**
 * The MCP Apps surface without a browser (tests/browser/ renders it): the ui:// resource (one
 * self-contained page, a strict CSP, no network), the tools that point to it, and the same content
 * as text for clients without Apps.
 */
describe("MCP Apps: the vault explorer", () => {
  let root: string;
  let s: TestServer;
  let client: Client;

  beforeAll(async () => {
    root = makeTempVault({
      "Projects/Garden.md": "# Garden\n\nGrow [[Tomatoes]] and herbs.\n",
      "Notes/Tomatoes.md": "---\ntags: [plants]\n---\n# Tomatoes\n\nWater deeply.\n",
      "Private/Diary.md": "secret\n",
    });
    s = await startTestServer(root, { hidden: ["Private"] });
    client = await s.connect();
  });
  afterAll(async () => {
    await s.close();
    removeTree(root);
  });

  test("browse_vault and show_context point to the ui:// resource", async () => {
    const { tools } = await client.listTools();
    for (const name of ["browse_vault", "show_context"]) {
      const t = tools.find((x) => x.name === name)!;
      expect(t._meta).toMatchObject({ ui: { resourceUri: "ui://vault-mcp/explorer.html" } });
      expect(t.annotations).toMatchObject({ readOnlyHint: true });
    }
  });

  test("the resource is one self-contained page: the Apps MIME type, a strict CSP, no network, no external script", async () => {
    const { resources } = await client.listResources();
    const listed = resources.find((r) => r.uri === "ui://vault-mcp/explorer.html");
    expect(listed).toMatchObject({ mimeType: "text/html;profile=mcp-app" });
    const r = await client.readResource({ uri: "ui://vault-mcp/explorer.html" });
    const c = r.contents[0] as unknown as { mimeType: string; text: string; _meta: { ui: { csp: Record<string, string[]> } } };
    expect(c.mimeType).toBe("text/html;profile=mcp-app");
    expect(c._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
    expect(c.text).toMatch(/<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'/);
    expect(c.text).not.toMatch(/<script[^>]+src=|<link[^>]+href=|https?:\/\/(?!www\.w3)/);
    expect(c.text).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    expect(Buffer.byteLength(c.text)).toBeLessThan(32 * 1024);
  });

  test("clients without Apps get the tree (and a search) as text", async () => {
    const r = await call(client, "browse_vault", { query: "water" });
    expect(r.isError).toBeFalsy();
    const text = textOf(r);
    expect(text).toContain("Projects");
    expect(text).toContain("Tomatoes");
    expect(text).not.toContain("Private");
    const sc = r.structuredContent as { vault: string; search_modes: string[]; query: string; hits: { path: string }[] };
    expect(sc.search_modes).toEqual(["keyword"]);
    expect(sc.hits.map((h) => h.path)).toContain("Notes/Tomatoes.md");
    expect(await fails(client, "browse_vault", { folder: "Private" })).toMatch(/No folder "Private"/);
    const ctx = await call(client, "show_context", { path: "Notes/Tomatoes.md" });
    expect(textOf(ctx)).toMatch(/backlinks: 1 from 1 notes/);
    expect((ctx.structuredContent as { context: { backlinks: { source: string }[] } }).context.backlinks[0].source).toBe("Projects/Garden.md");
    expect(await ok(client, "browse_vault", {})).toMatchObject({ folder: "" });
  });
});
