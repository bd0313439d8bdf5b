import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import budgets from "../budgets.json";
import { git } from "../support/git-repo";
import { makeTempVault, removeTree, startTestServer, textOf, type FileTree, type TestServer } from "../support/harness";

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

/**
 * A vault kept in git by an auto-commit plugin: a commit every 20 minutes for the last 5 days, each
 * touching the daily journal and 40 of 300 other notes ("vault backup: …"). A note's history and
 * the recent changes answer per commit with a summary, not every file (they were 113,800 and 66,000 bytes).
 */
describe("answer sizes of the git tools", () => {
  let server: TestServer;
  let client: Client;
  const bytes = (result: unknown) => Buffer.byteLength(JSON.stringify({ jsonrpc: "2.0", id: 1, result }));

  beforeAll(async () => {
    const root = makeTempVault({});
    git(root, ["init", "-q", "-b", "main"]);
    const notes = Array.from({ length: 300 }, (_, i) => `Projects/Garden renovation ${i % 7}/Meeting notes ${i}.md`);
    const now = Math.floor(Date.now() / 1000);
    const commits = 360;
    let stream = "";
    const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`;
    for (let c = 0; c < commits; c++) {
      const when = now - (commits - c) * 1200;
      const stamp = new Date(when * 1000).toISOString().slice(0, 19).replace("T", " ");
      stream += `commit refs/heads/main\nauthor Ada Lovelace <ada@example.com> ${when} +0000\ncommitter Ada Lovelace <ada@example.com> ${when} +0000\n${data(`vault backup: ${stamp}`)}`;
      stream += `M 100644 inline Daily/Journal.md\n${data(Array.from({ length: c + 1 }, (_, k) => `entry ${k}`).join("\n") + "\n")}`;
      for (let k = 0; k < 40; k++) stream += `M 100644 inline ${notes[(c * 40 + k) % notes.length]}\n${data(`# Note\n\nrevision ${c}\n`)}`;
    }
    git(root, ["fast-import", "--quiet"], { input: stream });
    git(root, ["reset", "-q", "--hard", "main"]);
    server = await startTestServer(root, { git: {} });
    client = await server.connect();
  }, 60_000);
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  test("a note's history: 20 commits, each with the note's own change and a count of the others", async () => {
    const result = await client.callTool({ name: "get_history", arguments: { path: "Daily/Journal.md" } });
    const s = result.structuredContent as { commits: { change: { status: string; added?: number }; other_files: number }[]; has_more: boolean };
    expect(s.commits).toHaveLength(20);
    expect(s.has_more).toBe(true);
    expect(s.commits[0]).toMatchObject({ change: { status: "modified", added: 1, removed: 0 }, other_files: 40 });
    expect(textOf(result as Parameters<typeof textOf>[0])).toMatch(/vault backup: [-0-9: ]+ \(\+1 -0, 40 other files\)\n/);
    expect(bytes(result)).toBeLessThanOrEqual(budgets.git_history_note_20_commits_bytes);
  });

  test("recent changes by default: the last 7 days, 10 commits, 4 files each and a count", async () => {
    const result = await client.callTool({ name: "get_recent_changes", arguments: {} });
    const s = result.structuredContent as { commits: { changes: unknown[]; changes_total: number }[]; has_more: boolean; since: string };
    expect(s.commits).toHaveLength(10);
    expect(s.has_more).toBe(true);
    expect(s.commits[0].changes).toHaveLength(4);
    expect(s.commits[0].changes_total).toBe(41);
    expect(bytes(result)).toBeLessThanOrEqual(budgets.git_recent_changes_default_bytes);
  });
});
