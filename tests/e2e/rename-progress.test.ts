import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Progress } from "@modelcontextprotocol/sdk/types.js";
import { makeTempVault, removeTree, startTestServer, type FileTree, type TestServer } from "../support/harness";

/** A long rename shows signs of life: progress notifications while links are rewritten, and how long it took. */
describe("rename progress (headless)", () => {
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    const files: FileTree = { "Hub.md": "# Hub\n" };
    for (let i = 0; i < 60; i++) files[`Notes/N${i}.md`] = `Note ${i} links to [[Hub]] and [[Hub#Top|the top]].\n`;
    server = await startTestServer(makeTempVault(files), { write: true });
    client = await server.connect();
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  test("a client that asks for progress hears it; the answer says how long it took", async () => {
    const events: Progress[] = [];
    const r = await client.callTool({ name: "rename", arguments: { path: "Hub.md", new_path: "Center.md" } }, undefined, { onprogress: (p) => void events.push(p) });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ new_path: "Center.md", links_updated: 120, notes_updated: 60, duration_ms: expect.any(Number) });
    expect((r.content as { text: string }[])[0].text).toMatch(/updated 120 links in 60 notes in \d+\.\d s\./);
    // The first comes before any note is rewritten; the last may arrive after the answer and be dropped.
    expect(events.length).toBeGreaterThan(0);
    // The notes to go through: the 60 that link to it and the note itself (its own relative links).
    expect(events[0]).toMatchObject({ progress: 0, total: 61, message: "updating links: 0 of 61 notes" });
    for (const e of events) expect(e.total).toBe(61);
    expect(events.map((e) => e.progress)).toEqual([...events.map((e) => e.progress)].sort((a, b) => a - b));
  });

  test("without a progress token, no notification is sent", async () => {
    const seen: unknown[] = [];
    client.fallbackNotificationHandler = async (n) => void seen.push(n);
    const r = await client.callTool({ name: "rename", arguments: { path: "Center.md", new_path: "Hub.md" } });
    expect(r.structuredContent).toMatchObject({ links_updated: 120, notes_updated: 60 });
    expect(seen.filter((n) => (n as { method?: string }).method === "notifications/progress")).toEqual([]);
  });
});
