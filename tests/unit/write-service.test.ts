import { afterEach, describe, expect, it } from "@jest/globals";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { etagOf } from "../../src/core/hash";
import { AccessPolicy } from "../../src/core/policy";
import { MemoryStateStore } from "../../src/core/state";
import { createWriteService, type WriteService } from "../../src/core/write";
import type { Confirmer, ConfirmRequest } from "../../src/core/write/confirm";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { makeTempVault, removeTree, type FileTree } from "../support/harness";

const A = { client: "test-client" };

class RecordingConfirmer implements Confirmer {
  answer = true;
  asked: ConfirmRequest[] = [];
  confirm(req: ConfirmRequest, _signal?: AbortSignal): Promise<boolean> {
    this.asked.push(req);
    return Promise.resolve(this.answer);
  }
}

interface Ctx {
  root: string;
  vault: FsVault;
  svc: WriteService;
  store: MemoryStateStore;
  confirmer: RecordingConfirmer;
  disk(p: string): string;
  bytes(p: string): Buffer;
  etag(p: string): Promise<string>;
}

const opened: Ctx[] = [];

async function setup(files: FileTree, opts: { hidden?: string[]; protected?: string[] } = {}): Promise<Ctx> {
  const root = makeTempVault(files);
  const vault = await FsVault.open(root, { watch: false });
  const policy = new AccessPolicy({ configDir: vault.configDir, hiddenFolders: opts.hidden, protectedFolders: opts.protected, excludedFilters: () => vault.excludedFilters() });
  const store = new MemoryStateStore();
  const confirmer = new RecordingConfirmer();
  const svc = createWriteService({ port: vault, policy, stateStore: store, confirmer });
  const ctx: Ctx = {
    root,
    vault,
    svc,
    store,
    confirmer,
    disk: (p) => readFileSync(path.join(root, ...p.split("/")), "utf8"),
    bytes: (p) => readFileSync(path.join(root, ...p.split("/"))),
    etag: async (p) => etagOf(readFileSync(path.join(root, ...p.split("/")), "utf8")),
  };
  opened.push(ctx);
  return ctx;
}

afterEach(async () => {
  for (const c of opened.splice(0)) {
    await c.vault.close();
    removeTree(c.root);
  }
});

async function rejects(p: Promise<unknown>, code: string, re?: RegExp): Promise<string> {
  try {
    await p;
  } catch (e: unknown) {
    const err = e as { name: string; code: string; message: string };
    expect(err.name).toBe("VaultError");
    expect(err.code).toBe(code);
    if (re) expect(err.message).toMatch(re);
    return err.message;
  }
  throw new Error("expected a rejection");
}

describe("write", () => {
  it("creates a note with frontmatter and parent folders; .md added when missing", async () => {
    const c = await setup({});
    const r = await c.svc.write({ path: "New/Deep/Plan", content: "Body\n", frontmatter: { status: "draft", tags: ["a"] } }, A);
    expect(r).toMatchObject({ path: "New/Deep/Plan.md", created: true });
    expect(c.disk("New/Deep/Plan.md")).toBe("---\nstatus: draft\ntags:\n  - a\n---\nBody\n");
    expect(r.etag).toBe(await c.etag("New/Deep/Plan.md"));
  });

  it("refuses to overwrite an existing note without if_match, and with a stale one (file unchanged)", async () => {
    const c = await setup({ "a.md": "old\n" });
    await rejects(c.svc.write({ path: "a.md", content: "new" }, A), "conflict", /replacing it needs the etag of what you replace: read it .* and write again with if_match set to that etag/);
    await rejects(c.svc.write({ path: "a.md", content: "new", if_match: '"0000"' }, A), "conflict", /Read it again/);
    expect(c.disk("a.md")).toBe("old\n");
    expect(c.confirmer.asked).toHaveLength(0);
  });

  it("etags are plain tokens; if_match takes them quoted (HTTP style, as earlier versions gave them) too", async () => {
    const c = await setup({ "a.md": "one\n" });
    const etag = await c.etag("a.md");
    expect(etag).toMatch(/^[0-9a-f]{20}$/);
    const r = await c.svc.write({ path: "a.md", content: "two\n", if_match: `"${etag}"` }, A);
    expect(r.etag).toMatch(/^[0-9a-f]{20}$/);
    await c.svc.write({ path: "a.md", content: "three\n", if_match: `W/"${r.etag}"` }, A);
    expect(c.disk("a.md")).toBe("three\n");
  });

  it("overwrites with the right etag, asks the confirmer with a diff, keeps frontmatter, BOM and CRLF", async () => {
    const c = await setup({ "a.md": "\uFEFF---\r\ntitle: X\r\n---\r\nold line\r\nsecond\r\n" });
    const etag = await c.etag("a.md");
    const r = await c.svc.write({ path: "a.md", content: "new line\nsecond\n", if_match: etag }, A);
    expect(c.disk("a.md")).toBe("\uFEFF---\r\ntitle: X\r\n---\r\nnew line\r\nsecond\r\n");
    expect(r.diff).toContain("-old line\n+new line");
    expect(c.confirmer.asked[0]).toMatchObject({ action: "overwrite", path: "a.md" });
    expect(c.confirmer.asked[0].diff).toContain("+new line");
  });

  it("overwrite with frontmatter replaces the block; {} removes it", async () => {
    const c = await setup({ "a.md": "---\nold: 1\n---\nbody\n" });
    await c.svc.write({ path: "a.md", content: "b2\n", frontmatter: { new: 2 }, if_match: await c.etag("a.md") }, A);
    expect(c.disk("a.md")).toBe("---\nnew: 2\n---\nb2\n");
    await c.svc.write({ path: "a.md", content: "b3\n", frontmatter: {}, if_match: await c.etag("a.md") }, A);
    expect(c.disk("a.md")).toBe("b3\n");
  });

  it("declined overwrite leaves the file unchanged", async () => {
    const c = await setup({ "a.md": "old\n" });
    c.confirmer.answer = false;
    await rejects(c.svc.write({ path: "a.md", content: "new", if_match: await c.etag("a.md") }, A), "declined", /The vault owner declined/);
    expect(c.disk("a.md")).toBe("old\n");
  });

  it("appends and prepends (after the frontmatter), merging frontmatter and keeping CRLF", async () => {
    const c = await setup({ "a.md": "---\r\ntitle: X # keep\r\n---\r\nmiddle" });
    await c.svc.write({ path: "a.md", content: "end\n", mode: "append" }, A);
    expect(c.disk("a.md")).toBe("---\r\ntitle: X # keep\r\n---\r\nmiddle\r\nend\r\n");
    await c.svc.write({ path: "a.md", content: "start", mode: "prepend", frontmatter: { status: "ok" } }, A);
    expect(c.disk("a.md")).toBe("---\r\ntitle: X # keep\r\nstatus: ok\r\n---\r\nstart\r\nmiddle\r\nend\r\n");
    expect(c.confirmer.asked).toHaveLength(0);
  });

  it("prepend to a note without frontmatter; append to a missing note creates it", async () => {
    const c = await setup({ "a.md": "x\n" });
    await c.svc.write({ path: "a.md", content: "top", mode: "prepend" }, A);
    expect(c.disk("a.md")).toBe("top\nx\n");
    const r = await c.svc.write({ path: "b.md", content: "hello", mode: "append" }, A);
    expect(r.created).toBe(true);
    expect(c.disk("b.md")).toBe("hello");
  });

  it("append with frontmatter on invalid YAML fails and leaves the note unchanged", async () => {
    const bad = "---\nkey: [unclosed\n---\nbody\n";
    const c = await setup({ "a.md": bad });
    await rejects(c.svc.write({ path: "a.md", content: "x", mode: "append", frontmatter: { a: 1 } }, A), "invalid_argument", /not valid YAML/);
    expect(c.disk("a.md")).toBe(bad);
  });

  it("writes and replaces attachments from base64", async () => {
    const c = await setup({});
    const bytes = Buffer.from([0, 1, 2, 250, 255, 10]);
    const r = await c.svc.write({ path: "img/x.bin", content_base64: bytes.toString("base64") }, A);
    expect(r.created).toBe(true);
    expect(c.bytes("img/x.bin").equals(bytes)).toBe(true);
    await rejects(c.svc.write({ path: "img/x.bin", content_base64: "AAAA" }, A), "conflict");
    await c.svc.write({ path: "img/x.bin", content_base64: "AAAA", if_match: r.etag }, A);
    expect([...c.bytes("img/x.bin")]).toEqual([0, 0, 0]);
    await rejects(c.svc.write({ path: "img/y.bin", content_base64: "***" }, A), "invalid_argument", /not valid base64/);
  });

  it("a file replaced by bytes (content_base64, putBytes) is compared again when written: the owner's edit while asked survives", async () => {
    const c = await setup({ "a.png": new Uint8Array([1, 2, 3]), "b.md": "mine\n" });
    // The owner changes the file while the confirmation is open.
    c.confirmer.confirm = async (req) => {
      c.confirmer.asked.push(req);
      await c.vault.writeBinary(req.path, new Uint8Array([9, 9]));
      return true;
    };
    const pngEtag = await etagOf(new Uint8Array([1, 2, 3]));
    await rejects(c.svc.write({ path: "a.png", content_base64: "BAUG", if_match: pngEtag }, A), "conflict", /changed by someone else.*nothing was written/);
    expect([...c.bytes("a.png")]).toEqual([9, 9]);
    const mdEtag = await c.etag("b.md");
    await rejects(
      c.svc.putBytes({ path: "b.md", bytes: new TextEncoder().encode("theirs\n"), overwrite: true, if_match: mdEtag, detail: "test", retry: "fetch again" }, A),
      "conflict",
      /changed by someone else.*fetch again/,
    );
    expect([...c.bytes("b.md")]).toEqual([9, 9]);
    expect(c.confirmer.asked).toHaveLength(2);
  });

  it("putBytes: replacing needs overwrite and the current etag; creating needs neither", async () => {
    const c = await setup({ "b.md": "mine\n" });
    const bytes = new TextEncoder().encode("theirs\n");
    await rejects(c.svc.putBytes({ path: "b.md", bytes, overwrite: false, detail: "t" }, A), "exists", /already exists/);
    await rejects(c.svc.putBytes({ path: "b.md", bytes, overwrite: true, detail: "t", retry: "fetch again" }, A), "conflict", /needs the etag .*fetch again with if_match/);
    await rejects(c.svc.putBytes({ path: "b.md", bytes, overwrite: true, if_match: "0123456789abcdef0123", detail: "t" }, A), "conflict", /changed since you read it/);
    expect(c.disk("b.md")).toBe("mine\n");
    const r = await c.svc.putBytes({ path: "b.md", bytes, overwrite: true, if_match: await c.etag("b.md"), detail: "t" }, A);
    expect(r).toMatchObject({ created: false, etag: await etagOf(bytes) });
    expect(c.disk("b.md")).toBe("theirs\n");
    expect((await c.svc.putBytes({ path: "c.md", bytes, overwrite: false, detail: "t" }, A)).created).toBe(true);
  });

  it("rejects traversal, absolute paths, hidden and protected targets", async () => {
    const c = await setup({ "Locked/a.md": "x", "Secret/s.md": "s" }, { hidden: ["Secret"], protected: ["Locked"] });
    for (const p of ["../x.md", "a/../../x.md", "/etc/x.md", "C:\\x.md", "~/x.md", "a\0.md"]) {
      await rejects(c.svc.write({ path: p, content: "x" }, A), "invalid_path");
    }
    await rejects(c.svc.write({ path: "Locked/b.md", content: "x" }, A), "read_only");
    await rejects(c.svc.write({ path: "Secret/new.md", content: "x" }, A), "forbidden");
    await rejects(c.svc.write({ path: ".obsidian/app.json", content: "{}" }, A), "forbidden");
    await rejects(c.svc.write({ path: "Locked/sub/c.md", content: "x" }, A), "read_only");
    await rejects(c.svc.write({ path: "Locked/a.md", content: "y", if_match: await c.etag("Locked/a.md") }, A), "read_only");
    expect(existsSync(path.join(c.root, "Secret", "new.md"))).toBe(false);
  });

  it("serialises concurrent appends to the same note", async () => {
    const c = await setup({ "log.md": "" });
    await Promise.all(Array.from({ length: 20 }, (_, i) => c.svc.write({ path: "log.md", content: `line ${i}\n`, mode: "append" }, A)));
    const lines = c.disk("log.md").trim().split("\n").sort();
    expect(lines).toHaveLength(20);
  });

  it("keeps NFC paths for NFD input", async () => {
    const c = await setup({});
    const r = await c.svc.write({ path: "Cafe\u0301.md", content: "x" }, A);
    expect(r.path).toBe("Café.md");
    expect(c.vault.stat("Café.md")).not.toBeNull();
  });
});

describe("edit", () => {
  const note = "---\ntitle: T\n---\n# Heading\n\nThe quick brown fox.\nSecond line.\nfox again\n";

  it("replaces a unique exact match, returns diff, lines and the new etag", async () => {
    const c = await setup({ "n.md": note });
    const r = await c.svc.edit({ path: "n", old_text: "quick brown", new_text: "slow red", if_match: await c.etag("n.md") }, A);
    expect(r).toMatchObject({ path: "n.md", replacements: 1, match_type: "exact", lines: [6], dry_run: false });
    expect(c.disk("n.md")).toBe(note.replace("quick brown", "slow red"));
    expect(r.etag).toBe(await c.etag("n.md"));
    expect(r.diff).toBe("@@ -4,5 +4,5 @@\n # Heading\n \n-The quick brown fox.\n+The slow red fox.\n Second line.\n fox again");
  });

  it("several matches: error with their line numbers; replace_all replaces all", async () => {
    const c = await setup({ "n.md": note });
    await rejects(c.svc.edit({ path: "n.md", old_text: "fox", new_text: "cat" }, A), "invalid_argument", /2 times.*lines 6, 8/);
    const r = await c.svc.edit({ path: "n.md", old_text: "fox", new_text: "cat", replace_all: true }, A);
    expect(r.replacements).toBe(2);
    expect(c.disk("n.md")).toBe(note.replace(/fox/g, "cat"));
  });

  it("old_text within a line range", async () => {
    const c = await setup({ "n.md": note });
    const r = await c.svc.edit({ path: "n.md", old_text: "fox", new_text: "dog", line_start: 8, line_end: 8 }, A);
    expect(r.lines).toEqual([8]);
    expect(c.disk("n.md")).toBe(note.replace("fox again", "dog again"));
  });

  it("replaces and deletes whole lines by number", async () => {
    const c = await setup({ "n.md": note });
    await c.svc.edit({ path: "n.md", line_start: 6, line_end: 7, new_text: "Replaced.\n" }, A);
    expect(c.disk("n.md")).toBe("---\ntitle: T\n---\n# Heading\n\nReplaced.\nfox again\n");
    const r = await c.svc.edit({ path: "n.md", line_start: 6, new_text: "" }, A);
    expect(r.match_type).toBe("lines");
    expect(c.disk("n.md")).toBe("---\ntitle: T\n---\n# Heading\n\nfox again\n");
    await rejects(c.svc.edit({ path: "n.md", line_start: 50, new_text: "x" }, A), "invalid_argument", /has 6 lines/);
  });

  it("normalised match: smart quotes and dashes, mapped back to the original", async () => {
    const c = await setup({ "q.md": "She said “yes” — maybe.\n" });
    const r = await c.svc.edit({ path: "q.md", old_text: 'said "yes" - maybe', new_text: "said no" }, A);
    expect(r.match_type).toBe("normalized");
    expect(c.disk("q.md")).toBe("She said no.\n");
  });

  it("normalised match on NFD text", async () => {
    const c = await setup({ "q.md": "Cafe\u0301 menu\n" });
    const r = await c.svc.edit({ path: "q.md", old_text: "Café menu", new_text: "Bar menu" }, A);
    expect(r.match_type).toBe("normalized");
    expect(c.disk("q.md")).toBe("Bar menu\n");
  });

  it("a miss says where the closest line is and where it differs; file unchanged", async () => {
    const c = await setup({ "n.md": note });
    const msg = await rejects(c.svc.edit({ path: "n.md", old_text: "The quick brown cat.", new_text: "x" }, A), "not_found");
    expect(msg).toMatch(/closest text starts at line 6/);
    expect(msg).toMatch(/column 17/);
    expect(c.disk("n.md")).toBe(note);
  });

  it("dry_run returns the diff and writes nothing", async () => {
    const c = await setup({ "n.md": note });
    const before = await c.etag("n.md");
    const r = await c.svc.edit({ path: "n.md", old_text: "Second", new_text: "2nd", dry_run: true }, A);
    expect(r.dry_run).toBe(true);
    expect(r.diff).toContain("+2nd line.");
    expect(r.etag).toBe(before);
    expect(c.disk("n.md")).toBe(note);
    expect(await c.svc.activity(10)).toHaveLength(0);
  });

  it("keeps CRLF and BOM; multi-line old_text with LF matches CRLF text", async () => {
    const text = "\uFEFFline one\r\nline two\r\nline three\r\n";
    const c = await setup({ "w.md": text });
    await c.svc.edit({ path: "w.md", old_text: "line one\nline two", new_text: "first\nsecond" }, A);
    expect(c.disk("w.md")).toBe("\uFEFFfirst\r\nsecond\r\nline three\r\n");
    await c.svc.edit({ path: "w.md", line_start: 3, new_text: "third" }, A);
    expect(c.disk("w.md")).toBe("\uFEFFfirst\r\nsecond\r\nthird\r\n");
  });

  it("stale etag: conflict, nothing changed", async () => {
    const c = await setup({ "n.md": note });
    await rejects(c.svc.edit({ path: "n.md", old_text: "Second", new_text: "x", if_match: '"deadbeef"' }, A), "conflict", /changed since you read it/);
    expect(c.disk("n.md")).toBe(note);
  });

  it("edits in protected or hidden folders are refused; missing notes are not found", async () => {
    const c = await setup({ "P/a.md": "x", "H/a.md": "x" }, { hidden: ["H"], protected: ["P"] });
    await rejects(c.svc.edit({ path: "P/a.md", old_text: "x", new_text: "y" }, A), "read_only");
    await rejects(c.svc.edit({ path: "H/a.md", old_text: "x", new_text: "y" }, A), "not_found");
    await rejects(c.svc.edit({ path: "nope.md", old_text: "x", new_text: "y" }, A), "not_found");
    await rejects(c.svc.edit({ path: "../P/a.md", old_text: "x", new_text: "y" }, A), "invalid_path");
    expect(c.disk("P/a.md")).toBe("x");
  });
});

describe("bounded changes", () => {
  const MB = 1024 * 1024;
  it("refuses texts and notes over 2 MB with a clear error, changing nothing", async () => {
    const big = "x".repeat(2 * MB + 1);
    const c = await setup({ "Big.md": `${"line\n".repeat(450_000)}`, "Small.md": "small\n" });
    await expect(c.svc.write({ path: "New.md", content: big }, A)).rejects.toMatchObject({ code: "too_large", message: expect.stringMatching(/content is 2\.0 MB .*limited to 2\.0 MB a note \("New\.md"\)\. Split/) });
    expect(existsSync(path.join(c.root, "New.md"))).toBe(false);
    await expect(c.svc.edit({ path: "Big.md", old_text: "line", new_text: "row" }, A)).rejects.toMatchObject({ code: "too_large", message: expect.stringMatching(/The note is 2\.1 MB/) });
    await expect(c.svc.edit({ path: "Small.md", old_text: "small", new_text: big }, A)).rejects.toMatchObject({ code: "too_large", message: expect.stringMatching(/new_text is 2\.0 MB/) });
    await expect(c.svc.write({ path: "Big.md", content: "more\n", mode: "append" }, A)).rejects.toMatchObject({ code: "too_large" });
    // A change that would grow a note past the limit is refused too.
    await expect(c.svc.edit({ path: "Small.md", old_text: "small", new_text: "x".repeat(MB), replace_all: true }, A)).resolves.toMatchObject({ replacements: 1 });
    const etag = await c.etag("Small.md");
    await expect(c.svc.write({ path: "Small.md", content: "y".repeat(1.5 * MB), mode: "append" }, A)).rejects.toMatchObject({ message: expect.stringMatching(/The note after the change is 2\.5 MB/) });
    expect(await c.etag("Small.md")).toBe(etag);
    expect(c.disk("Big.md")).toBe("line\n".repeat(450_000));
  });

  it("many matches: the message names ten lines and how many more; replace_all replaces them all in one pass", async () => {
    const c = await setup({ "Many.md": "cat\n".repeat(5000) });
    await expect(c.svc.edit({ path: "Many.md", old_text: "cat", new_text: "dog" }, A)).rejects.toThrow(/occurs 5000 times in "Many\.md" \(lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 4990 more\)/);
    const r = await c.svc.edit({ path: "Many.md", old_text: "cat", new_text: "dog", replace_all: true }, A);
    expect(r.replacements).toBe(5000);
    expect(r.lines).toHaveLength(1000);
    expect(r.lines.slice(0, 3)).toEqual([1, 2, 3]);
    expect(c.disk("Many.md")).toBe("dog\n".repeat(5000));
  });
});

describe("frontmatter and tags", () => {
  it("sets and removes keys (merge), body byte for byte", async () => {
    const body = "# T\r\n\r\nbody  with  spaces\r\n";
    const c = await setup({ "n.md": `---\r\na: 1\r\nb: 2\r\n---\r\n${body}` });
    const r = await c.svc.updateFrontmatter({ path: "n.md", set: { c: "three", a: 10 }, remove: ["b"] }, A);
    expect(r.frontmatter).toEqual({ a: 10, c: "three" });
    expect(r.changed.sort()).toEqual(["a", "b", "c"]);
    expect(c.disk("n.md").endsWith(body)).toBe(true);
    expect(r.etag).toBe(await c.etag("n.md"));
  });

  it("replace mode drops other keys; adds a block to notes without one", async () => {
    const c = await setup({ "n.md": "---\na: 1\nb: 2\n---\nbody\n", "m.md": "plain\n" });
    const r = await c.svc.updateFrontmatter({ path: "n.md", set: { z: true }, mode: "replace" }, A);
    expect(r.frontmatter).toEqual({ z: true });
    await c.svc.updateFrontmatter({ path: "m.md", set: { k: "v" } }, A);
    expect(c.disk("m.md")).toBe("---\nk: v\n---\nplain\n");
  });

  it("invalid YAML is reported and the note is unchanged", async () => {
    const bad = "---\ntitle: [oops\n---\nbody\n";
    const c = await setup({ "n.md": bad });
    await rejects(c.svc.updateFrontmatter({ path: "n.md", set: { a: 1 } }, A), "invalid_argument", /not valid YAML/);
    await rejects(c.svc.manageTags({ path: "n.md", action: "add", tags: ["x"] }, A), "invalid_argument", /not valid YAML/);
    expect(c.disk("n.md")).toBe(bad);
  });

  it("stale etag on update_frontmatter: conflict", async () => {
    const c = await setup({ "n.md": "---\na: 1\n---\n" });
    await rejects(c.svc.updateFrontmatter({ path: "n.md", set: { a: 2 }, if_match: '"x"' }, A), "conflict");
    expect(c.disk("n.md")).toBe("---\na: 1\n---\n");
  });

  it("adds tags without # and without duplicates, removes, lists inline tags", async () => {
    const c = await setup({ "n.md": "---\ntags: [Alpha]\n---\nText #inline/tag here\n" });
    const added = await c.svc.manageTags({ path: "n.md", action: "add", tags: ["#beta", "alpha", "beta", "Gamma/x"] }, A);
    expect(added.added).toEqual(["beta", "Gamma/x"]);
    expect(added.tags).toEqual(["Alpha", "beta", "Gamma/x"]);
    const listed = await c.svc.manageTags({ path: "n.md", action: "list" }, A);
    expect(listed.tags).toEqual(["Alpha", "beta", "Gamma/x"]);
    expect(listed.inline_tags).toEqual(["inline/tag"]);
    const removed = await c.svc.manageTags({ path: "n.md", action: "remove", tags: ["ALPHA", "inline/tag"] }, A);
    expect(removed.removed).toEqual(["Alpha"]);
    expect(removed.inline_only).toEqual(["inline/tag"]);
    expect(c.disk("n.md")).toContain("Text #inline/tag here\n");
    await c.svc.manageTags({ path: "n.md", action: "remove", tags: ["beta", "gamma/x"] }, A);
    expect(c.disk("n.md")).toBe("---\n---\nText #inline/tag here\n");
    await rejects(c.svc.manageTags({ path: "n.md", action: "add", tags: ["two words"] }, A), "invalid_argument");
  });
});

describe("delete and rename", () => {
  it("delete needs an identical confirm_path, asks, trashes and says where", async () => {
    const c = await setup({ "a.md": "x" });
    await rejects(c.svc.delete({ path: "a.md", confirm_path: "b.md" }, A), "invalid_argument", /not the same/);
    c.confirmer.answer = false;
    await rejects(c.svc.delete({ path: "a.md", confirm_path: "a.md" }, A), "declined");
    expect(existsSync(path.join(c.root, "a.md"))).toBe(true);
    c.confirmer.answer = true;
    const r = await c.svc.delete({ path: "a.md", confirm_path: "a.md" }, A);
    expect(r.trashed_to).toMatch(/\.trash/);
    expect(existsSync(path.join(c.root, "a.md"))).toBe(false);
    expect(readdirSync(path.join(c.root, ".trash"))).toContain("a.md");
    expect(c.confirmer.asked.map((q) => q.action)).toEqual(["delete", "delete"]);
  });

  it("deletes folders unless they hold protected or hidden content", async () => {
    const c = await setup({ "F/a.md": "x", "F/sub/b.md": "y", "G/a.md": "x", "G/P/p.md": "p", "K/H/h.md": "h" }, { protected: ["G/P"], hidden: ["K/H"] });
    const r = await c.svc.delete({ path: "F", confirm_path: "F/" }, A);
    expect(r).toMatchObject({ kind: "folder", files: 2 });
    await rejects(c.svc.delete({ path: "G", confirm_path: "G" }, A), "read_only");
    await rejects(c.svc.delete({ path: "K", confirm_path: "K" }, A), "read_only");
    await rejects(c.svc.delete({ path: "K/H/h.md", confirm_path: "K/H/h.md" }, A), "not_found");
    await rejects(c.svc.delete({ path: "", confirm_path: "" }, A), "invalid_path");
    await rejects(c.svc.delete({ path: "../x", confirm_path: "../x" }, A), "invalid_path");
  });

  it("renames a note (adds .md), updates counts, refuses existing targets unless overwrite", async () => {
    const c = await setup({ "a.md": "see [[b]]", "b.md": "B", "c.md": "C" });
    const r = await c.svc.rename({ path: "b.md", new_path: "Moved/bee" }, A);
    expect(r).toMatchObject({ path: "b.md", new_path: "Moved/bee.md", kind: "file" });
    expect(existsSync(path.join(c.root, "Moved", "bee.md"))).toBe(true);
    await rejects(c.svc.rename({ path: "c.md", new_path: "Moved/bee.md" }, A), "exists", /set overwrite \(with its etag as if_match\)/);
    // Replacing the target needs its etag, like any replace.
    await rejects(c.svc.rename({ path: "c.md", new_path: "Moved/bee.md", overwrite: true }, A), "conflict", /"Moved\/bee\.md" already exists; replacing it needs the etag .* rename again with if_match/);
    await rejects(c.svc.rename({ path: "c.md", new_path: "Moved/bee.md", overwrite: true, if_match: "0123456789abcdef0123" }, A), "conflict", /changed since you read it/);
    expect(c.disk("Moved/bee.md")).toBe("B");
    const o = await c.svc.rename({ path: "c.md", new_path: "Moved/bee.md", overwrite: true, if_match: await c.etag("Moved/bee.md") }, A);
    expect(o.replaced_target_trashed_to).toMatch(/\.trash/);
    expect(c.disk("Moved/bee.md")).toBe("C");
    expect(c.confirmer.asked.filter((q) => q.action === "rename")).toHaveLength(3 - 1);
  });

  it("rename onto a target the owner edits while asked: nothing is changed", async () => {
    const c = await setup({ "a.md": "A", "t.md": "mine" });
    const etag = await c.etag("t.md");
    c.confirmer.confirm = async (req) => {
      c.confirmer.asked.push(req);
      await c.vault.process("t.md", (t) => t + " and the owner's line");
      return true;
    };
    await rejects(c.svc.rename({ path: "a.md", new_path: "t.md", overwrite: true, if_match: etag }, A), "conflict", /changed by someone else while this rename/);
    expect(c.disk("t.md")).toBe("mine and the owner's line");
    expect(c.disk("a.md")).toBe("A");
  });

  it("rename: protected source/target, hidden, traversal, into itself", async () => {
    const c = await setup({ "P/a.md": "x", "a.md": "y", "F/b.md": "z", "H/h.md": "h" }, { protected: ["P"], hidden: ["H"] });
    await rejects(c.svc.rename({ path: "P/a.md", new_path: "x.md" }, A), "read_only");
    await rejects(c.svc.rename({ path: "a.md", new_path: "P/a2.md" }, A), "read_only");
    await rejects(c.svc.rename({ path: "a.md", new_path: "H/a.md" }, A), "forbidden");
    await rejects(c.svc.rename({ path: "H/h.md", new_path: "h.md" }, A), "not_found");
    await rejects(c.svc.rename({ path: "a.md", new_path: "../a.md" }, A), "invalid_path");
    await rejects(c.svc.rename({ path: "F", new_path: "F/inner" }, A), "invalid_argument", /into itself/);
    const r = await c.svc.rename({ path: "F", new_path: "G/F2" }, A);
    expect(r.kind).toBe("folder");
    expect(c.disk("G/F2/b.md")).toBe("z");
  });

  it("declined rename changes nothing", async () => {
    const c = await setup({ "a.md": "y" });
    c.confirmer.answer = false;
    await rejects(c.svc.rename({ path: "a.md", new_path: "b.md" }, A), "declined");
    expect(c.disk("a.md")).toBe("y");
  });
});

describe("a cancelled call", () => {
  it("cancelled while the owner is asked: overwrite, bytes, delete and rename change nothing, even when the owner then allows", async () => {
    const c = await setup({ "a.md": "mine\n", "b.png": new Uint8Array([1, 2]), "d.md": "keep\n" });
    const stop = new AbortController();
    const cancelling = { client: "test-client", signal: stop.signal };
    // The client stops waiting while the question is open; the owner then says yes.
    c.confirmer.confirm = async (req, signal) => {
      c.confirmer.asked.push(req);
      expect(signal).toBe(stop.signal);
      stop.abort();
      return true;
    };
    const cancelled = /cancelled .* nothing was changed/;
    await rejects(c.svc.write({ path: "a.md", content: "theirs\n", if_match: await c.etag("a.md") }, cancelling), "cancelled", cancelled);
    expect(c.disk("a.md")).toBe("mine\n");
    const next = () => {
      const s = new AbortController();
      c.confirmer.confirm = async (req) => {
        c.confirmer.asked.push(req);
        s.abort();
        return true;
      };
      return { client: "test-client", signal: s.signal };
    };
    const pngEtag = await etagOf(new Uint8Array([1, 2]));
    await rejects(c.svc.write({ path: "b.png", content_base64: "CQk=", if_match: pngEtag }, next()), "cancelled", cancelled);
    expect([...c.bytes("b.png")]).toEqual([1, 2]);
    await rejects(c.svc.delete({ path: "d.md", confirm_path: "d.md" }, next()), "cancelled", cancelled);
    expect(c.disk("d.md")).toBe("keep\n");
    await rejects(c.svc.rename({ path: "d.md", new_path: "e.md" }, next()), "cancelled", cancelled);
    expect(c.disk("d.md")).toBe("keep\n");
    expect(existsSync(path.join(c.root, "e.md"))).toBe(false);
    expect(c.confirmer.asked.map((q) => q.action)).toEqual(["overwrite", "overwrite", "delete", "rename"]);
    expect(await c.svc.activity(10)).toHaveLength(0);
  });

  it("cancelled before its turn (waiting for the note's lock): an append, an edit and a new note are not made", async () => {
    const c = await setup({ "a.md": "one\n" });
    const stop = new AbortController();
    stop.abort();
    const gone = { client: "test-client", signal: stop.signal };
    await rejects(c.svc.write({ path: "a.md", content: "two\n", mode: "append" }, gone), "cancelled");
    await rejects(c.svc.edit({ path: "a.md", old_text: "one", new_text: "uno" }, gone), "cancelled");
    await rejects(c.svc.write({ path: "new.md", content: "x" }, gone), "cancelled");
    await rejects(c.svc.manageTags({ path: "a.md", action: "add", tags: ["t"] }, gone), "cancelled");
    await rejects(c.svc.updateFrontmatter({ path: "a.md", set: { k: 1 } }, gone), "cancelled");
    expect(c.disk("a.md")).toBe("one\n");
    expect(existsSync(path.join(c.root, "new.md"))).toBe(false);
    expect(c.confirmer.asked).toHaveLength(0);
    // The same calls with a live signal go through.
    const live = { client: "test-client", signal: new AbortController().signal };
    await c.svc.write({ path: "a.md", content: "two\n", mode: "append" }, live);
    expect(c.disk("a.md")).toBe("one\ntwo\n");
  });
});

describe("activity log", () => {
  it("records every change as JSON lines, newest first", async () => {
    const c = await setup({ "a.md": "x\n" });
    const e0 = await c.etag("a.md");
    const w = await c.svc.edit({ path: "a.md", old_text: "x", new_text: "y" }, A);
    await c.svc.write({ path: "b.md", content: "b" }, { client: "other" });
    await c.svc.rename({ path: "b.md", new_path: "c.md" }, A);
    await c.svc.delete({ path: "c.md", confirm_path: "c.md" }, A);
    const log = await c.svc.activity(10);
    expect(log.map((e) => e.tool)).toEqual(["delete", "rename", "write", "edit"]);
    expect(log[3]).toMatchObject({ client: "test-client", path: "a.md", etag_before: e0, etag_after: w.etag });
    expect(log[2]).toMatchObject({ client: "other", etag_before: null });
    expect(log[1]).toMatchObject({ path: "b.md", new_path: "c.md" });
    expect(log[0]).toMatchObject({ etag_after: null });
    expect(await c.svc.activity(2)).toHaveLength(2);
    const raw = new TextDecoder().decode(c.store.files.get("activity.jsonl"));
    expect(raw.trim().split("\n")).toHaveLength(4);
    expect(typeof new Date(log[0].time).getTime()).toBe("number");
  });
});
