import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, removeTree, startTestServer, textOf, type FileTree } from "../support/harness";

interface Opened {
  root: string;
  client: Client;
  close(): Promise<void>;
}

/** The server over a temp vault, as clients see it. */
async function open(files: FileTree, opts: { write?: boolean; hidden?: string[]; protected?: string[] } = {}): Promise<Opened> {
  const root = makeTempVault(files);
  const s = await startTestServer(root, opts);
  const client = await s.connect();
  return { root, client, close: () => s.close() };
}

const WRITE_TOOLS = ["write", "edit", "update_frontmatter", "manage_tags", "delete", "rename"];

function disk(root: string, p: string): string {
  return readFileSync(path.join(root, ...p.split("/")), "utf8");
}

describe("write tools over MCP", () => {
  let s: Opened;
  const files: FileTree = {
    "Home.md": "---\ntags: [start]\n---\n# Home\n\nSee [[Projects/Plan]].\n",
    "Projects/Plan.md": "# Plan\n\nThe “quick” plan — step one.\nStep two.\n",
    "Locked/Rules.md": "# Rules\n\nDo not change.\n",
    "Private/Diary.md": "secret\n",
    "Windows.md": "\uFEFFfirst\r\nsecond\r\n",
    "Menu/Cafe\u0301.md": "Cafe\u0301 au lait\n",
  };

  beforeAll(async () => {
    s = await open(files, { write: true, protected: ["Locked"], hidden: ["Private"] });
  });
  afterAll(async () => {
    await s.close();
    removeTree(s.root);
  });

  test("write tools are listed with honest annotations", async () => {
    const { tools } = await s.client.listTools();
    const byName = new Map(tools.map((t) => [t.name, t]));
    for (const n of [...WRITE_TOOLS, "get_activity_log"]) expect(byName.has(n)).toBe(true);
    expect(byName.get("write")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false });
    expect(byName.get("edit")!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(byName.get("update_frontmatter")!.annotations).toMatchObject({ destructiveHint: false, idempotentHint: true });
    expect(byName.get("delete")!.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.get("rename")!.annotations).toMatchObject({ destructiveHint: true });
    expect(byName.get("get_activity_log")!.annotations).toMatchObject({ readOnlyHint: true });
  });

  test("read → edit with the etag → read shows it; the stale etag then conflicts and changes nothing", async () => {
    const r = await ok(s.client, "read", { path: "Projects/Plan.md" });
    const e = await ok(s.client, "edit", { path: "Projects/Plan.md", old_text: "Step two.", new_text: "Step 2.", if_match: r.etag });
    expect(e).toMatchObject({ replacements: 1, match_type: "exact", dry_run: false });
    expect(e.diff).toContain("-Step two.\n+Step 2.");
    const r2 = await ok(s.client, "read", { path: "Projects/Plan.md" });
    expect(r2.body).toContain("Step 2.");
    expect(r2.etag).toBe(e.etag);
    const before = disk(s.root, "Projects/Plan.md");
    const msg = await fails(s.client, "edit", { path: "Projects/Plan.md", old_text: "Step 2.", new_text: "x", if_match: r.etag });
    expect(msg).toMatch(/changed since you read it.*Read it again/);
    expect(disk(s.root, "Projects/Plan.md")).toBe(before);
  });

  test("normalised match is reported; a miss explains the closest line; dry_run writes nothing", async () => {
    const dry = await call(s.client, "edit", { path: "Projects/Plan.md", old_text: 'The "quick" plan - step one.', new_text: "The plan.", dry_run: true });
    expect(dry.isError).toBeFalsy();
    expect(dry.structuredContent).toMatchObject({ match_type: "normalized", dry_run: true });
    expect(textOf(dry)).toMatch(/Would make 1 replacement/);
    expect(disk(s.root, "Projects/Plan.md")).toContain("“quick”");
    const miss = await fails(s.client, "edit", { path: "Projects/Plan.md", old_text: "Step 3.", new_text: "x" });
    expect(miss).toMatch(/closest text starts at line 4/);
  });

  test("write: create, refuse blind overwrite, overwrite with etag; CRLF and BOM kept", async () => {
    const c = await ok(s.client, "write", { path: "Inbox/Idea", content: "An idea.\n", frontmatter: { status: "new" } });
    expect(c).toMatchObject({ path: "Inbox/Idea.md", created: true });
    expect(disk(s.root, "Inbox/Idea.md")).toBe("---\nstatus: new\n---\nAn idea.\n");
    expect(await fails(s.client, "write", { path: "Inbox/Idea.md", content: "x" })).toMatch(/replacing it needs the etag of what you replace: read it .* and write again with if_match set to that etag/);
    const w = await ok(s.client, "read", { path: "Windows.md" });
    await ok(s.client, "write", { path: "Windows.md", content: "one\ntwo\n", if_match: w.etag });
    expect(disk(s.root, "Windows.md")).toBe("\uFEFFone\r\ntwo\r\n");
    await ok(s.client, "write", { path: "Windows.md", content: "three", mode: "append" });
    expect(disk(s.root, "Windows.md")).toBe("\uFEFFone\r\ntwo\r\nthree");
  });

  test("update_frontmatter and manage_tags", async () => {
    const u = await ok(s.client, "update_frontmatter", { path: "Home.md", set: { status: "done" } });
    expect(u.frontmatter).toEqual({ tags: ["start"], status: "done" });
    expect(disk(s.root, "Home.md").endsWith("# Home\n\nSee [[Projects/Plan]].\n")).toBe(true);
    const t = await ok(s.client, "manage_tags", { path: "Home.md", action: "add", tags: ["#start", "new/tag"] });
    expect(t.tags).toEqual(["start", "new/tag"]);
    expect(t.added).toEqual(["new/tag"]);
  });

  test("invalid frontmatter is reported, never overwritten", async () => {
    const bad = "---\ntitle: [broken\n---\nbody\n";
    await ok(s.client, "write", { path: "Bad.md", content: bad });
    expect(await fails(s.client, "update_frontmatter", { path: "Bad.md", set: { a: 1 } })).toMatch(/not valid YAML/);
    expect(await fails(s.client, "manage_tags", { path: "Bad.md", action: "add", tags: ["x"] })).toMatch(/not valid YAML/);
    expect(disk(s.root, "Bad.md")).toBe(bad);
  });

  test("rename and delete", async () => {
    await ok(s.client, "write", { path: "Temp/A.md", content: "a" });
    const r = await ok(s.client, "rename", { path: "Temp/A.md", new_path: "Temp/B.md" });
    expect(r).toMatchObject({ new_path: "Temp/B.md", kind: "file" });
    expect(await fails(s.client, "delete", { path: "Temp/B.md", confirm_path: "Temp/A.md" })).toMatch(/not the same/);
    const d = await ok(s.client, "delete", { path: "Temp/B.md", confirm_path: "Temp/B.md" });
    expect(d.trashed_to).toMatch(/trash/);
  });

  test("rename onto an existing file replaces it only with that file's etag", async () => {
    await ok(s.client, "write", { path: "Temp/Src.md", content: "source" });
    await ok(s.client, "write", { path: "Temp/Dst.md", content: "the owner's note" });
    expect(await fails(s.client, "rename", { path: "Temp/Src.md", new_path: "Temp/Dst.md", overwrite: true })).toMatch(/"Temp\/Dst\.md" already exists; replacing it needs the etag .*rename again with if_match/);
    expect(await fails(s.client, "rename", { path: "Temp/Src.md", new_path: "Temp/Dst.md", overwrite: true, if_match: "0123456789abcdef0123" })).toMatch(/changed since you read it/);
    expect(disk(s.root, "Temp/Dst.md")).toBe("the owner's note");
    const { etag } = await ok(s.client, "read", { path: "Temp/Dst.md" });
    const r = await ok(s.client, "rename", { path: "Temp/Src.md", new_path: "Temp/Dst.md", overwrite: true, if_match: etag });
    expect(r.replaced_target_trashed_to).toMatch(/trash/);
    expect(disk(s.root, "Temp/Dst.md")).toBe("source");
  });

  test("protected folders are read-only for every write tool", async () => {
    const p = "Locked/Rules.md";
    const etag = (await ok(s.client, "read", { path: p })).etag;
    const attempts: Array<[string, Record<string, unknown>]> = [
      ["write", { path: p, content: "x", if_match: etag }],
      ["write", { path: "Locked/New.md", content: "x" }],
      ["edit", { path: p, old_text: "Do not", new_text: "Do" }],
      ["update_frontmatter", { path: p, set: { a: 1 } }],
      ["manage_tags", { path: p, action: "add", tags: ["x"] }],
      ["delete", { path: p, confirm_path: p }],
      ["rename", { path: p, new_path: "Rules.md" }],
      ["rename", { path: "Home.md", new_path: "Locked/Home.md" }],
    ];
    for (const [tool, args] of attempts) expect(await fails(s.client, tool, args)).toMatch(/protected folder|read-only|cannot be changed/);
    expect(disk(s.root, p)).toBe("# Rules\n\nDo not change.\n");
  });

  test("hidden folders look missing to every tool", async () => {
    const p = "Private/Diary.md";
    const attempts: Array<[string, Record<string, unknown>]> = [
      ["edit", { path: p, old_text: "secret", new_text: "x" }],
      ["update_frontmatter", { path: p, set: { a: 1 } }],
      ["manage_tags", { path: p, action: "list" }],
      ["delete", { path: p, confirm_path: p }],
      ["rename", { path: p, new_path: "Diary.md" }],
      ["get_outline", { path: p }],
      ["list_directory", { path: "Private" }],
    ];
    for (const [tool, args] of attempts) expect(await fails(s.client, tool, args)).toMatch(/No note|No folder|not found|No note, file or folder/i);
    for (const [tool, args] of [
      ["write", { path: "Private/New.md", content: "x" }],
      ["rename", { path: "Home.md", new_path: "Private/Home.md" }],
    ] as Array<[string, Record<string, unknown>]>) {
      expect(await fails(s.client, tool, args)).toMatch(/not a place this server can write/);
    }
    const rm = await ok(s.client, "read_multiple", { paths: [p] });
    expect(rm.ok).toHaveLength(0);
    expect(rm.err[0].error).toMatch(/No note or file/);
    const info = await ok(s.client, "get_notes_info", { paths: [p] });
    expect(info.err).toHaveLength(1);
    const tree = await call(s.client, "list_directory", {});
    expect(textOf(tree)).not.toContain("Private");
    expect(disk(s.root, p)).toBe("secret\n");
  });

  test("traversal tricks are refused on every path parameter", async () => {
    const tricks = ["../outside.md", "Projects/../../outside.md", "/etc/passwd", "C:\\Windows\\x.md", "~/x.md", "..\\x.md", "a\u0000b.md", ".obsidian/app.json"];
    for (const t of tricks) {
      const calls: Array<[string, Record<string, unknown>]> = [
        ["write", { path: t, content: "x" }],
        ["edit", { path: t, old_text: "a", new_text: "b" }],
        ["update_frontmatter", { path: t, set: { a: 1 } }],
        ["manage_tags", { path: t, action: "list" }],
        ["delete", { path: t, confirm_path: t }],
        ["rename", { path: t, new_path: "x.md" }],
        ["rename", { path: "Home.md", new_path: t }],
        ["get_outline", { path: t }],
        ["list_directory", { path: t }],
      ];
      for (const [tool, args] of calls) {
        const msg = await fails(s.client, tool, args);
        expect(msg).not.toMatch(/\/tmp\/|\/home\/|\\Users\\/);
      }
      for (const tool of ["read_multiple", "get_notes_info"]) {
        const r = await ok(s.client, tool, { paths: [t] });
        expect(r.ok).toHaveLength(0);
        expect(r.err).toHaveLength(1);
      }
    }
    expect(disk(s.root, "Home.md")).toContain("# Home");
  });

  test("NFD names and text: addressed by NFC paths, matched after normalisation, the name on disk kept", async () => {
    const e = await ok(s.client, "edit", { path: "Menu/Cafe\u0301.md", old_text: "Café au lait", new_text: "Tea" });
    expect(e).toMatchObject({ path: "Menu/Café.md", match_type: "normalized" });
    expect(readdirSync(path.join(s.root, "Menu"))).toEqual(["Cafe\u0301.md"]);
    expect(disk(s.root, "Menu/Cafe\u0301.md")).toBe("Tea\n");
    const r = await ok(s.client, "read", { path: "Menu/Café.md" });
    expect(r.body).toBe("Tea\n");
  });

  test("get_activity_log shows every change, newest first, with the client name", async () => {
    const log = await ok(s.client, "get_activity_log", { limit: 5 });
    expect(log.entries.length).toBe(5);
    expect(log.entries[0]).toMatchObject({ client: "vault-mcp-tests" });
    const times = log.entries.map((e: { time: string }) => e.time);
    expect([...times].sort().reverse()).toEqual(times);
  });

  test("an attachment of most of a megabyte goes in as base64 and comes back byte for byte", async () => {
    // Large enough that decoding, encoding and the answer's body each take several steps.
    const bytes = Buffer.from(Uint8Array.from({ length: 1000 * 1024 }, (_, i) => (i * 7919 + (i >> 12)) & 255));
    const w = await ok(s.client, "write", { path: "Attachments/blob.bin", content_base64: bytes.toString("base64") });
    expect(w).toMatchObject({ created: true, size: bytes.length });
    expect(readFileSync(path.join(s.root, "Attachments", "blob.bin")).equals(bytes)).toBe(true);
    const r = await ok(s.client, "read", { path: "Attachments/blob.bin" });
    expect(r).toMatchObject({ kind: "attachment", size: bytes.length, etag: w.etag });
    expect(Buffer.from(r.base64, "base64").equals(bytes)).toBe(true);
  });
});

describe("without write mode", () => {
  test("write tools are absent; reading tools and the activity log stay", async () => {
    const s = await open({ "a.md": "x" });
    try {
      const names = (await s.client.listTools()).tools.map((t) => t.name);
      for (const n of WRITE_TOOLS) expect(names).not.toContain(n);
      for (const n of ["read_multiple", "get_notes_info", "get_outline", "list_directory", "get_activity_log"]) expect(names).toContain(n);
      const r = await call(s.client, "edit", { path: "a.md", old_text: "x", new_text: "y" });
      expect(r.isError).toBe(true);
      expect(disk(s.root, "a.md")).toBe("x");
    } finally {
      await s.close();
      removeTree(s.root);
    }
  });
});
