import { writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ResourceListChangedNotificationSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { eventually, makeTempVault, ok, removeTree, startTestServer, type TestServer } from "../support/harness";

const files = {
  "AGENTS.md": "# Rules\n\nAlways link people with [[wikilinks]].\n",
  "Projects/AGENTS.md": "Project notes need a status property.\n",
  "Projects/Alpha/Spec.md": "---\nstatus: active\ntags: [project]\n---\n# Spec\n## Goals\n## Risks\n",
  "Projects/Beta.md": "---\nstatus: active\ntags: [project, beta]\n---\nSee [[Spec]].\n",
  "People/Ada Lovelace.md": "---\ntags: [person]\n---\n# Ada\nWorks on [[Beta]]. [web](https://example.com)\n",
  "Templates/Meeting.md": "# {{title}}\n\n## Attendees\n",
  "Private/Secret.md": "hidden",
};

describe("MCP surface: instructions, resources, prompts", () => {
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer(makeTempVault(files), { hidden: ["Private"], protected: ["Templates"], watch: true });
    client = await server.connect();
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  test("instructions come from the root AGENTS.md, after a short generated guide", () => {
    const ins = client.getInstructions()!;
    expect(ins).toMatch(/connected to the Obsidian vault/);
    expect(ins).toContain("Always link people with [[wikilinks]].");
    expect(ins).not.toContain("status property"); // folder files are not sent at initialize
  });

  test("get_folder_instructions returns the files from the root down to a folder or a note's folder", async () => {
    const r = await ok(client, "get_folder_instructions", { path: "Projects/Alpha" });
    expect(r.files.map((f: { path: string }) => f.path)).toEqual(["AGENTS.md", "Projects/AGENTS.md"]);
    const forNote = await ok(client, "get_folder_instructions", { path: "Projects/Beta.md" });
    expect(forNote.files).toHaveLength(2);
    const root = await ok(client, "get_folder_instructions", { path: "" });
    expect(root.files.map((f: { path: string }) => f.path)).toEqual(["AGENTS.md"]);
  });

  test("static resources describe the vault", async () => {
    const { resources } = await client.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(expect.arrayContaining(["config://vault", "stats://vault", "folders://vault", "tags://vault", "recent://vault"]));
    expect(uris).toContain("note://vault/People/Ada%20Lovelace.md");
    expect(uris.join(" ")).not.toMatch(/Private/);
    const read = async (uri: string) => JSON.parse(((await client.readResource({ uri })).contents[0] as { text: string }).text);
    expect(await read("config://vault")).toMatchObject({ host: "node", write_mode: false, protected_folders: ["Templates"] });
    expect((await read("stats://vault")).notes).toBe(6);
    expect((await read("folders://vault")).folders).toEqual(["", "People", "Projects", "Projects/Alpha", "Templates"]);
    const tags = await read("tags://vault");
    expect(tags.values[0]).toEqual({ value: "project", count: 2 });
    expect((await read("recent://vault")).notes).toHaveLength(6);
  });

  test("templates: a note and its outline", async () => {
    const note = await client.readResource({ uri: "note://vault/People/Ada%20Lovelace.md" });
    expect(note.contents[0]).toMatchObject({ mimeType: "text/markdown" });
    expect((note.contents[0] as { text: string }).text).toContain("Works on [[Beta]]");
    const toc = JSON.parse(((await client.readResource({ uri: "toc://vault/Projects/Alpha/Spec.md" })).contents[0] as { text: string }).text);
    expect(toc.headings).toEqual([
      { heading: "Spec", level: 1, line: 5 },
      { heading: "Goals", level: 2, line: 6 },
      { heading: "Risks", level: 2, line: 7 },
    ]);
    await expect(client.readResource({ uri: "note://vault/Private/Secret.md" })).rejects.toThrow(/No note or file/);
    await expect(client.readResource({ uri: "note://vault/..%2F..%2Fetc%2Fpasswd" })).rejects.toThrow(/leaves the vault/);
  });

  test("prompts are listed and built from the vault", async () => {
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual(["conventions", "create-note", "propose-links", "research", "search-strategy", "summarize-note"]);
    const conv = await client.getPrompt({ name: "conventions" });
    const text = (conv.messages[0].content as { text: string }).text;
    expect(text).toMatch(/wikilinks \[\[Note\]\] are the house style/);
    expect(text).toMatch(/status \(2 notes; e\.g\. active\)/);
    expect(text).toMatch(/#project \(2\)/);
    expect(text).toMatch(/Templates live in "Templates"/);
    const create = await client.getPrompt({ name: "create-note", arguments: { title: "Kickoff", template: "Meeting" } });
    expect((create.messages[0].content as { text: string }).text).toContain("## Attendees");
    const sum = await client.getPrompt({ name: "summarize-note", arguments: { path: "Projects/Beta.md" } });
    expect((sum.messages[0].content as { text: string }).text).toContain("See [[Spec]].");
    await expect(client.getPrompt({ name: "summarize-note", arguments: { path: "Private/Secret.md" } })).rejects.toThrow(/No note or file/);
  });

  test("notes appearing and changing send list_changed and updated notifications", async () => {
    let listChanged = 0;
    const updated: string[] = [];
    client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
      listChanged++;
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updated.push(n.params.uri);
    });
    await client.subscribeResource({ uri: "note://vault/Projects/Beta.md" });
    writeFileSync(path.join(server.root, "New note.md"), "new");
    writeFileSync(path.join(server.root, "Projects", "Beta.md"), "---\nstatus: done\n---\nchanged");
    await eventually(async () => {
      expect(listChanged).toBeGreaterThan(0);
      expect(updated).toContain("note://vault/Projects/Beta.md");
    });
    expect(updated).not.toContain("note://vault/New%20note.md"); // not subscribed
  });
});
