import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import budgets from "../budgets.json";
import { makeTempVault, removeTree, startTestServer, type FileTree, type TestServer } from "../support/harness";

/** What a model pays for a default answer: held to the committed budget (tests/budgets.json). */
describe("answer sizes", () => {
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    // Forty long notes that all match, with long paths, frontmatter, comments and badges: a default
    // search returns ten of them.
    const files: FileTree = {};
    const prose = (i: number) =>
      Array.from({ length: 12 }, (_, k) => `Paragraph ${k} of note ${i} talks about the garden layout, the raised beds along the south fence, and how the irrigation plan changed after the spring survey of soil and light.`).join("\n\n");
    for (let i = 0; i < 40; i++) {
      files[`Projects/Garden renovation ${i % 4}/Meeting notes about the garden layout and planting plan ${i}.md`] =
        `---\ntags: [garden, planning, meeting]\nstatus: draft\nattendees: [Ada, Grace, Linus]\n---\n%% template: meeting v2, do not edit %%\n[![build](https://example.com/badge.svg)](https://example.com)\n\n# Meeting ${i}: the garden layout and planting plan\n\n## Decisions about the garden layout\n\n${prose(i)}\n\n## Open questions\n\n${prose(i + 100)}\n`;
    }
    server = await startTestServer(makeTempVault(files));
    client = await server.connect();
    await server.runtime.services.search.waitForIdle(30_000);
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  test("a default 10-hit search fits its budget and shows prose, not comments or badges", async () => {
    const result = await client.callTool({ name: "search", arguments: { query: "garden layout irrigation" } });
    const s = result.structuredContent as { hits: { sections: { content: string }[] }[] };
    expect(s.hits).toHaveLength(10);
    const bytes = Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 1, result }));
    expect(bytes).toBeLessThanOrEqual(budgets.search_default_answer_bytes);
    for (const h of s.hits) expect(h.sections[0].content).not.toMatch(/%%|badge\.svg/);
    // More when asked for.
    const more = await client.callTool({ name: "search", arguments: { query: "garden layout irrigation", chunks_per_file: 2, snippet_words: 100 } });
    expect(Buffer.byteLength(JSON.stringify(more))).toBeGreaterThan(2 * bytes);
  });
});
