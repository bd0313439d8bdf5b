import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, rawRequest, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

/**
 * One-time transfer links over real HTTP: a file's bytes in and out without the conversation.
 * Single use, expiry, bound to one path, only for paths a client may read or write, the upload
 * cap (nothing written when refused), overwrite rules, one winner among concurrent uses, and the
 * Host/Origin checks of the MCP endpoint on /transfer too.
 */

const PNG = new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 1, 2, 3]);

function tokenPath(url: string): string {
  return new URL(url).pathname;
}

describe("transfer links", () => {
  let root: string;
  let s: TestServer;
  let client: Client;
  const big = new Uint8Array(24 * 1024 * 1024).map((_, i) => i % 251);

  beforeAll(async () => {
    root = makeTempVault({
      "Notes/A.md": "# A\n\nalpha\n",
      "img.png": PNG,
      "Big/video.mp4": big,
      "Private/Secret.md": "secret\n",
      "Locked/Rules.md": "rules\n",
      ".obsidian/app.json": "{}",
    });
    s = await startTestServer(root, { write: true, hidden: ["Private"], protected: ["Locked"], transfer: { maxUploadBytes: 4096 } });
    client = await s.connect();
  });
  afterAll(async () => {
    await s.close();
    removeTree(root);
  });

  test("a download link serves the file's bytes once, with its type and length; then 404", async () => {
    const r = await ok(client, "create_download_link", { path: "img.png" });
    expect(r).toMatchObject({ path: "img.png", size: PNG.length, content_type: "image/png" });
    expect(r.url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${s.port}/transfer/[A-Za-z0-9_-]{43}$`));
    expect(Date.parse(r.expires_at) - Date.now()).toBeGreaterThan(9 * 60_000);
    const first = await fetch(r.url);
    expect(first.status).toBe(200);
    expect(first.headers.get("content-type")).toBe("image/png");
    expect(first.headers.get("content-length")).toBe(String(PNG.length));
    expect(new Uint8Array(await first.arrayBuffer())).toEqual(PNG);
    const again = await fetch(r.url);
    expect(again.status).toBe(404);
    expect(await again.text()).toMatch(/unknown, used or expired/);
    // No bearer token needed, and an unknown token looks exactly like a used one.
    const unknown = await fetch(`http://127.0.0.1:${s.port}/transfer/${"x".repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe(await (await fetch(r.url)).text());
  });

  test("the file's current bytes are served; a cut-off download does not use the link up; HEAD neither", async () => {
    const r = await ok(client, "create_download_link", { path: "Big/video.mp4" });
    expect((await fetch(r.url, { method: "HEAD" })).status).toBe(405);
    // Read a little, then hang up.
    await new Promise<void>((resolve, reject) => {
      const req = http.get(r.url, (res) => {
        expect(res.statusCode).toBe(200);
        res.once("data", () => {
          req.destroy();
          setTimeout(resolve, 100);
        });
      });
      req.on("error", (e) => (e.message.includes("socket hang up") || e.message.includes("aborted") ? resolve() : reject(e)));
    });
    const whole = await fetch(r.url);
    expect(whole.status).toBe(200);
    const got = new Uint8Array(await whole.arrayBuffer());
    expect(got.length).toBe(big.length);
    expect(got[12345]).toBe(big[12345]);
    expect((await fetch(r.url)).status).toBe(404);
  });

  test("links are only for files a client may see, and a link dies with its file", async () => {
    expect(await fails(client, "create_download_link", { path: "Private/Secret.md" })).toMatch(/No file at "Private\/Secret.md"/);
    expect(await fails(client, "create_download_link", { path: ".obsidian/app.json" })).toMatch(/No file at/);
    expect(await fails(client, "create_download_link", { path: "Notes" })).toMatch(/No file at "Notes"/);
    expect(await fails(client, "create_download_link", { path: "../etc/passwd" })).toMatch(/leaves the vault/);
    const r = await ok(client, "create_download_link", { path: "Notes/A.md" });
    await ok(client, "rename", { path: "Notes/A.md", new_path: "Notes/A2.md" });
    expect((await fetch(r.url)).status).toBe(404);
    await ok(client, "rename", { path: "Notes/A2.md", new_path: "Notes/A.md" });
  });

  test("an expired link is gone", async () => {
    const s2 = await startTestServer(root, { transfer: { ttlMs: 150 } });
    try {
      const c2 = await s2.connect();
      const r = await ok(c2, "create_download_link", { path: "img.png" });
      await new Promise((res) => setTimeout(res, 250));
      expect((await fetch(r.url)).status).toBe(404);
    } finally {
      await s2.close();
    }
  });

  test("the endpoint's Host and Origin checks hold on /transfer, and a refused request does not use the link", async () => {
    const r = await ok(client, "create_download_link", { path: "img.png" });
    const p = tokenPath(r.url);
    const badHost = await rawRequest(s.port, { path: p, headers: { Host: `evil.example:${s.port}` } });
    expect(badHost.status).toBe(403);
    const badOrigin = await rawRequest(s.port, { path: p, headers: { Origin: "https://evil.example" } });
    expect(badOrigin.status).toBe(403);
    expect(badOrigin.headers["access-control-allow-origin"]).toBeUndefined();
    expect((await fetch(r.url)).status).toBe(200);
  });

  test("concurrent downloads with one token: exactly one gets the file", async () => {
    const r = await ok(client, "create_download_link", { path: "Big/video.mp4" });
    const results = await Promise.all([fetch(r.url), fetch(r.url), fetch(r.url)]);
    const statuses = results.map((x) => x.status).sort();
    await Promise.all(results.map((x) => x.arrayBuffer()));
    expect(statuses).toEqual([200, 404, 404]);
  });

  test("an upload link takes the raw bytes once, through the normal write path (etag, activity log)", async () => {
    const r = await ok(client, "create_upload_link", { path: "Attachments/new.png" });
    expect(r).toMatchObject({ path: "Attachments/new.png", overwrite: false, max_bytes: 4096 });
    const put = await fetch(r.url, { method: "PUT", body: PNG });
    expect(put.status).toBe(201);
    const body = (await put.json()) as { path: string; etag: string; size: number; created: boolean };
    expect(body).toMatchObject({ path: "Attachments/new.png", size: PNG.length, created: true });
    expect(new Uint8Array(readFileSync(path.join(root, "Attachments", "new.png")))).toEqual(PNG);
    expect((await ok(client, "read", { path: "Attachments/new.png" })).etag).toBe(body.etag);
    expect((await fetch(r.url, { method: "PUT", body: PNG })).status).toBe(404);
    const log = await ok(client, "get_activity_log", { limit: 1 });
    expect(log.entries[0]).toMatchObject({ tool: "upload", path: "Attachments/new.png", client: "vault-mcp-tests" });
  });

  test("POST works too; overwrite only when asked; a file that appeared since is not replaced", async () => {
    expect(await fails(client, "create_upload_link", { path: "img.png" })).toMatch(/already exists; .*overwrite: true and if_match/);
    const { etag } = await ok(client, "read", { path: "img.png" });
    const r = await ok(client, "create_upload_link", { path: "img.png", overwrite: true, if_match: etag });
    const replaced = new Uint8Array([...PNG, 1, 2, 3]);
    const post = await fetch(r.url, { method: "POST", body: replaced, headers: { "Content-Type": "application/octet-stream" } });
    expect(post.status).toBe(200);
    expect(new Uint8Array(readFileSync(path.join(root, "img.png")))).toEqual(replaced);

    const late = await ok(client, "create_upload_link", { path: "Attachments/late.pdf" });
    await ok(client, "write", { path: "Attachments/late.pdf", content_base64: Buffer.from("%PDF-mine").toString("base64") });
    const conflict = await fetch(late.url, { method: "PUT", body: "%PDF-theirs" });
    expect(conflict.status).toBe(409);
    expect(readFileSync(path.join(root, "Attachments", "late.pdf"), "utf8")).toBe("%PDF-mine");
  });

  test("replacing a file needs its etag; the owner's edit made after the link and before the upload survives", async () => {
    const file = path.join(root, "Notes", "Draft.md");
    await s.vault.create("Notes/Draft.md", "# Draft\n\nfirst\n");
    // Without the etag: refused when the link is made, saying how to get it.
    expect(await fails(client, "create_upload_link", { path: "Notes/Draft.md", overwrite: true })).toMatch(
      /"Notes\/Draft\.md" already exists; replacing it needs the etag .*read it .*make a new upload link with if_match/,
    );
    // if_match alone does not replace: overwrite says so.
    expect(await fails(client, "create_upload_link", { path: "Notes/Draft.md", if_match: "abc" })).toMatch(/pass overwrite: true with it/);
    // A stale etag: refused when the link is made.
    expect(await fails(client, "create_upload_link", { path: "Notes/Draft.md", overwrite: true, if_match: "0123456789abcdef0123" })).toMatch(/changed since you read it/);

    const { etag } = await ok(client, "read", { path: "Notes/Draft.md" });
    const link = await ok(client, "create_upload_link", { path: "Notes/Draft.md", overwrite: true, if_match: etag });
    // The owner edits the note (in Obsidian: through the vault, not through this server) before the bytes arrive.
    await s.vault.process("Notes/Draft.md", (t) => t + "the owner's line\n");
    const late = await fetch(link.url, { method: "PUT", body: "# Draft\n\nreplaced\n" });
    expect(late.status).toBe(409);
    expect(await late.text()).toMatch(/changed since you read it.*nothing was written.*make a new upload link/);
    expect(readFileSync(file, "utf8")).toBe("# Draft\n\nfirst\nthe owner's line\n");
    // That link can never replace the note now: it is used up.
    expect((await fetch(link.url, { method: "PUT", body: "x" })).status).toBe(404);

    // With the current etag, the upload replaces the note.
    const now = await ok(client, "read", { path: "Notes/Draft.md" });
    const again = await ok(client, "create_upload_link", { path: "Notes/Draft.md", overwrite: true, if_match: now.etag });
    const put = await fetch(again.url, { method: "PUT", body: "# Draft\n\nreplaced\n" });
    expect(put.status).toBe(200);
    expect(readFileSync(file, "utf8")).toBe("# Draft\n\nreplaced\n");
    const log = await ok(client, "get_activity_log", { limit: 1 });
    expect(log.entries[0]).toMatchObject({ tool: "upload", path: "Notes/Draft.md", etag_before: now.etag });

    // overwrite without if_match, for a file absent when the link was made: refused if one is there when the bytes arrive.
    const absent = await ok(client, "create_upload_link", { path: "Notes/Later.md", overwrite: true });
    await s.vault.create("Notes/Later.md", "the owner's note\n");
    const refused = await fetch(absent.url, { method: "PUT", body: "theirs\n" });
    expect(refused.status).toBe(409);
    expect(await refused.text()).toMatch(/replacing it needs the etag/);
    expect(readFileSync(path.join(root, "Notes", "Later.md"), "utf8")).toBe("the owner's note\n");
  });

  test("the upload cap: a larger body is refused, nothing is written, and the link still takes a smaller one", async () => {
    const r = await ok(client, "create_upload_link", { path: "Attachments/capped.png" });
    const tooBig = await fetch(r.url, { method: "PUT", body: new Uint8Array(5000) });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.text()).toMatch(/upload limit of 4096 bytes; nothing was written/);
    expect(existsSync(path.join(root, "Attachments", "capped.png"))).toBe(false);
    // Without a Content-Length (chunked), the cap holds while reading.
    const chunked = await rawChunkedPut(s.port, tokenPath(r.url), 3, 2000);
    expect(chunked).toBe(413);
    expect(existsSync(path.join(root, "Attachments", "capped.png"))).toBe(false);
    expect((await fetch(r.url, { method: "PUT", body: PNG })).status).toBe(201);
  });

  test("upload destinations are checked when the link is made: hidden, protected, config folder, file types", async () => {
    expect(await fails(client, "create_upload_link", { path: "Private/x.png" })).toMatch(/"Private\/x.png" is not a place this server can write to/);
    expect(await fails(client, "create_upload_link", { path: "Locked/x.png" })).toMatch(/protected folder/);
    expect(await fails(client, "create_upload_link", { path: ".obsidian/plugins/evil/main.js" })).toMatch(/is not a place this server can write to/);
    expect(await fails(client, "create_upload_link", { path: "Tools/run.exe" })).toMatch(/"\.exe" files cannot be uploaded/);
    expect(await fails(client, "create_upload_link", { path: "Notes" })).toMatch(/is a folder/);
  });

  test("concurrent uploads with one token: exactly one is written", async () => {
    const r = await ok(client, "create_upload_link", { path: "Attachments/race.png" });
    const results = await Promise.all([1, 2, 3].map((n) => fetch(r.url, { method: "PUT", body: new Uint8Array([...PNG, n]) })));
    expect(results.map((x) => x.status).sort()).toEqual([201, 404, 404]);
    const written = readFileSync(path.join(root, "Attachments", "race.png"));
    expect(written.length).toBe(PNG.length + 1);
  });

  test("a multipart form is refused with a hint, and the link stays usable", async () => {
    const r = await ok(client, "create_upload_link", { path: "Attachments/form.png" });
    const form = await fetch(r.url, { method: "POST", body: "--x\r\n\r\n", headers: { "Content-Type": "multipart/form-data; boundary=x" } });
    expect(form.status).toBe(415);
    expect(await form.text()).toMatch(/raw bytes/);
    expect((await fetch(r.url, { method: "PUT", body: PNG })).status).toBe(201);
  });

  test("read-only servers have no upload tool; the text answers say how to use the link", async () => {
    const s2 = await startTestServer(root);
    try {
      const c2 = await s2.connect();
      const names = (await c2.listTools()).tools.map((t) => t.name);
      expect(names).toContain("create_download_link");
      expect(names).not.toContain("create_upload_link");
      const text = textOf(await call(c2, "create_download_link", { path: "img.png" }));
      expect(text).toMatch(/curl -o "img.png" "http:\/\/127\.0\.0\.1:\d+\/transfer\//);
    } finally {
      await s2.close();
    }
    writeFileSync(path.join(root, "unused.txt"), "");
  });
});

/** A PUT with a chunked body (no Content-Length): `chunks` pieces of `size` bytes. Returns the status. */
function rawChunkedPut(port: number, p: string, chunks: number, size: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method: "PUT", path: p, headers: { "Transfer-Encoding": "chunked" } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", (e) => (/ECONNRESET|socket hang up|EPIPE/.test(e.message) ? resolve(413) : reject(e)));
    for (let i = 0; i < chunks; i++) req.write(Buffer.alloc(size));
    req.end();
  });
}
