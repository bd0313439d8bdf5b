import { symlinkSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, eventually, fails, makeTempVault, ok, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);

function fixture(): Record<string, string | Uint8Array> {
  return {
    "Home.md": "---\ntags: [start]\naliases: [Index]\n---\n# Home\n\nSee [[Projects/Plan]] and [[People/Ada|Ada]].\n",
    "Projects/Plan.md": "# Plan\n\nQuarterly planning with #work/planning. Links to [[Home]] and [[Missing note]].\n",
    "Projects/Archive/Old plan.md": "Old text.\n",
    "People/Ada.md": "---\nrole: engineer\n---\nAda Lovelace. ![[diagram.png]]\n",
    "Attachments/diagram.png": PNG,
    "CRLF note.md": "---\r\ntitle: x\r\n---\r\nline one\r\nline two\r\n",
    ".obsidian/app.json": JSON.stringify({ userIgnoreFilters: ["Excluded/"] }),
    ".obsidian/secret.md": "config secret",
    ".git/config": "[core]",
    ".trash/Deleted.md": "deleted note",
    "Excluded/Hidden by Obsidian.md": "excluded",
    "Private/Diary.md": "private diary",
    "Big.md": "# Big\n\n" + "lorem ipsum dolor sit amet\n".repeat(12_000) + "## Tail\n\nthe end\n",
    "Guide.md": "---\ntags: [guide]\n---\n# Guide\n\nIntro.\n\n## Setup\n\n### Install\n\nRun it.\n\n## Usage\n\nUse it.\n",
  };
}

describe("headless server end to end (real client, real HTTP, temp vault)", () => {
  let server: TestServer;
  let client: Client;
  let outside: string;

  beforeAll(async () => {
    outside = makeTempVault({ "secret.md": "outside the vault", "dir/leak.md": "leak" }, "vault-mcp-outside-");
    const root = makeTempVault(fixture());
    symlinkSync(path.join(outside, "secret.md"), path.join(root, "Link out.md"));
    symlinkSync(path.join(outside, "dir"), path.join(root, "Linked dir"));
    server = await startTestServer(root, { hidden: ["Private"], watch: true });
    client = await server.connect();
  });

  afterAll(async () => {
    await server.close();
    removeTree(server.root);
    removeTree(outside);
  });

  test("initialize reports the vault in the server name and gives instructions", () => {
    const info = client.getServerVersion();
    expect(info?.name).toMatch(/^vault-mcp \(vault-mcp-test-/);
    expect(client.getInstructions()).toMatch(/read-only/);
  });

  test("lists the read-only tools with schemas and annotations, and no write tools", async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(["stats", "list_documents", "list_folders", "read"]));
    for (const t of tools) {
      expect(t.outputSchema).toBeDefined();
      expect(t.annotations?.readOnlyHint).toBe(true);
      expect(t.description!.length).toBeGreaterThan(10);
    }
    expect(names).not.toContain("write");
  });

  test("stats counts what is visible and states capabilities", async () => {
    const s = await ok(client, "stats");
    expect(s.notes).toBe(7); // Home, Plan, Old plan, Ada, CRLF note, Big, Guide — not hidden, excluded, dot, or outside
    expect(s.attachments).toBe(1);
    expect(s.folders).toBe(4); // Projects, Projects/Archive, People, Attachments
    expect(s.links).toBeGreaterThanOrEqual(4);
    expect(s.unresolved_links).toBe(1);
    expect(s.tags).toBe(3); // #start, #work/planning, #guide
    expect(s.capabilities).toMatchObject({ write_mode: false, host: "node" });
  });

  test("list_documents filters by folder and glob, pages with a cursor, and never shows hidden files", async () => {
    const all = await ok(client, "list_documents", { include_attachments: true, limit: 1000 });
    const paths = all.items.map((i: { path: string }) => i.path);
    expect(paths).toEqual(["Attachments/diagram.png", "Big.md", "CRLF note.md", "Guide.md", "Home.md", "People/Ada.md", "Projects/Archive/Old plan.md", "Projects/Plan.md"]);
    expect(all.items[0]).toMatchObject({ kind: "attachment", title: "diagram.png", size: PNG.length });
    const notes = await ok(client, "list_documents", { folder: "Projects" });
    expect(notes.items.map((i: { path: string }) => i.path)).toEqual(["Projects/Archive/Old plan.md", "Projects/Plan.md"]);
    const glob = await ok(client, "list_documents", { pattern: "**/P*.md" });
    expect(glob.items.map((i: { path: string }) => i.path)).toEqual(["Projects/Plan.md"]);
    const pages: string[] = [];
    let cursor: string | undefined;
    let calls = 0;
    do {
      const page = await ok(client, "list_documents", { limit: 3, ...(cursor ? { cursor } : {}) });
      expect(page.items.length).toBeLessThanOrEqual(3);
      expect(page.total).toBe(7);
      pages.push(...page.items.map((i: { path: string }) => i.path));
      cursor = page.next_cursor;
      calls++;
    } while (cursor);
    expect(calls).toBe(3);
    expect(pages).toEqual(["Big.md", "CRLF note.md", "Guide.md", "Home.md", "People/Ada.md", "Projects/Archive/Old plan.md", "Projects/Plan.md"]);
    expect(await fails(client, "list_documents", { cursor: "garbage" })).toMatch(/cursor/);
    expect(await fails(client, "list_documents", { folder: "Private" })).toMatch(/No folder "Private"/);
    expect(await fails(client, "list_documents", { folder: "../.." })).toMatch(/leaves the vault/);
  });

  test("list_folders lists the root and visible folders only", async () => {
    const r = await ok(client, "list_folders");
    expect(r.folders).toEqual(["", "Attachments", "People", "Projects", "Projects/Archive"]);
  });

  test("read returns frontmatter, body, etag; .md may be omitted", async () => {
    const r = await ok(client, "read", { path: "Home.md" });
    expect(r).toMatchObject({ path: "Home.md", title: "Home", folder: "", frontmatter: { tags: ["start"], aliases: ["Index"] } });
    expect(r.body).toBe("# Home\n\nSee [[Projects/Plan]] and [[People/Ada|Ada]].\n");
    expect(r.etag).toMatch(/^[0-9a-f]{20}$/);
    const again = await ok(client, "read", { path: "Home" });
    expect(again.etag).toBe(r.etag);
    const crlf = await ok(client, "read", { path: "CRLF note.md" });
    expect(crlf.body).toBe("line one\r\nline two\r\n");
    expect(crlf.frontmatter).toEqual({ title: "x" });
  });

  test("read fails clearly on missing notes, folders and attachments", async () => {
    expect(await fails(client, "read", { path: "Nope.md" })).toMatch(/No note or file at "Nope.md".*find_notes/);
    expect(await fails(client, "read", { path: "Projects" })).toMatch(/is a folder/);
  });

  test("read returns an attachment's mime type, size and bytes", async () => {
    const r = await ok(client, "read", { path: "Attachments/diagram.png" });
    expect(r).toMatchObject({ kind: "attachment", mime_type: "image/png", size: PNG.length, title: "diagram.png", folder: "Attachments" });
    expect(Buffer.from(r.base64, "base64")).toEqual(Buffer.from(PNG));
  });

  test("read with section returns one section with its line range; a miss lists the headings", async () => {
    const r = await ok(client, "read", { path: "Guide.md", section: "setup" });
    expect(r.section).toEqual({ heading: "Setup", line_start: 8, line_end: 12 });
    expect(r.body).toBe("## Setup\n\n### Install\n\nRun it.");
    const nested = await ok(client, "read", { path: "Guide.md", section: "Setup > Install", with_line_numbers: true });
    expect(nested.body).toBe("10| ### Install\n11| \n12| Run it.");
    expect(await fails(client, "read", { path: "Guide.md", section: "Nope" })).toMatch(/Setup/);
  });

  test("read with_line_numbers numbers the body with file line numbers", async () => {
    const r = await ok(client, "read", { path: "Guide.md", with_line_numbers: true });
    expect(r.body.split("\n")[0]).toBe("4| # Guide");
  });

  test("a note over the size cap is refused with a hint to read a section, which works", async () => {
    expect(await fails(client, "read", { path: "Big.md" })).toMatch(/over the 256 KB cap; read a part with section/);
    const tail = await ok(client, "read", { path: "Big.md", section: "Tail" });
    expect(tail.body).toBe("## Tail\n\nthe end");
  });

  const tricks: Array<[string, RegExp]> = [
    ["../outside.md", /leaves the vault/],
    ["Projects/../../outside.md", /leaves the vault/],
    ["..\\..\\outside.md", /leaves the vault/],
    ["/etc/passwd", /absolute path/],
    ["C:\\Windows\\win.ini", /absolute path/],
    ["\\\\server\\share\\x.md", /absolute path/],
    ["~/notes.md", /absolute path/],
    ["file:///etc/passwd", /absolute path/],
    ["Home.md\u0000.png", /NUL/],
    [".obsidian/secret.md", /No note or file/],
    [".git/config", /No note or file/],
    [".trash/Deleted.md", /No note or file/],
    ["Excluded/Hidden by Obsidian.md", /No note or file/],
    ["Private/Diary.md", /No note or file/],
    ["Link out.md", /No note or file|outside the vault/],
    ["Linked dir/leak.md", /No note or file|outside the vault/],
  ];
  test.each(tricks)("read refuses %j", async (p, re) => {
    const text = await fails(client, "read", { path: p });
    expect(text).toMatch(re);
    expect(text).not.toContain(server.root);
    expect(text).not.toContain(outside);
  });

  test("symlinks leading out of the vault are not listed", async () => {
    const all = await ok(client, "list_documents", { include_attachments: true, limit: 1000 });
    expect(all.items.map((i: { path: string }) => i.path).join("\n")).not.toMatch(/Link out|Linked dir/);
  });

  test("bad input types get a clear validation error", async () => {
    const r = await call(client, "list_documents", { limit: 0 });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/limit/);
    const r2 = await call(client, "read", {});
    expect(r2.isError).toBe(true);
    expect(textOf(r2)).toMatch(/path/);
  });

  test("a note created on disk by another program is visible after reconciliation", async () => {
    mkdirSync(path.join(server.root, "New"), { recursive: true });
    writeFileSync(path.join(server.root, "New", "Fresh.md"), "fresh");
    const r = await eventually(() => ok(client, "read", { path: "New/Fresh.md" }));
    expect(r.body).toBe("fresh");
  });
});
