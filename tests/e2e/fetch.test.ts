import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { existsSync, readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import zlib from "node:zlib";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { fails, makeTempVault, ok, removeTree, startTestServer, type TestServer } from "../support/harness";
import { forbiddenAddress } from "../../src/core/fetch/address-guard";

/**
 * fetch over MCP against a loopback test server reached through the owner's allow-list (never by
 * switching the guard off), with every name resolved through the test's own table (no real DNS):
 * pages as Markdown, attachments as bytes, and refusals for each forbidden address class, a redirect
 * into a private address, an oversized body (nothing written), a time-out, and content types.
 */

let web: http.Server;
let base: string;
/** Runs while /edited is being answered: the owner's edit made during a download. */
let duringDownload: () => Promise<void> = async () => undefined;
const PAGE = `<!doctype html><html><head><title>Garden notes</title><script>alert(1)</script><style>p{}</style></head>
<body><h2>Tomatoes</h2><p>Water <strong>deeply</strong>, not often. See <a href="/more">more</a>.</p><ul><li>sun</li><li>soil</li></ul></body></html>`;

const BOMB = zlib.gzipSync(Buffer.alloc(1024 * 1024));

/** A page whose links and images are relative, a table, and links that are not http(s). */
const LINKED = `<!doctype html><html><head><title>Guide</title></head><body>
<p>See <a href="/other.html">other page</a>, <a href="next.html#part">the next one</a>, <a href="?q=1">a query</a>, <a href="#top">the top</a>
and <a href="//cdn.example.org/lib.js">a CDN</a>.</p>
<p><img src="/img.png" alt="A picture"> <img src="../up.png" alt="Up"></p>
<p><a href="javascript:alert(2)">js</a> <a href=" JaVaScRiPt:alert(3)">js2</a> <a href="data:text/html,<b>x</b>">data</a> <a href="mailto:a@b.c">mail</a>
<img src="data:image/png;base64,AAAA" alt="inline"> <a href="vbscript:x">vb</a></p>
<table><thead><tr><th>Name</th><th>Size | bytes</th></tr></thead>
<tbody><tr><td>alpha</td><td>1</td></tr><tr><td><a href="/b">beta</a></td><td></td></tr><tr><td colspan="2">wide<br>cell</td></tr><tr><td>short</td></tr></tbody></table>
<table><tr><td>no</td><td>header</td></tr><tr><td>second</td><td>row</td></tr></table>
</body></html>`;
/** A page with active content, saved as HTML. */
const ACTIVE = `<!doctype html><html><head><title>Active</title><script>alert(1)</script><meta http-equiv="refresh" content="0;url=javascript:alert(9)"></head>
<body onload="alert(2)"><p onclick='alert(3)'>text</p><img/src=x/onerror=alert(4)><a href="java&#x73;cript:alert(5)">a</a>
<a href="https://example.com/ok">ok</a><iframe srcdoc="<script>alert(6)</script>"></iframe><scr<script>x</script>ipt>alert(7)</script>
<svg><animate attributeName="href" values="javascript:alert(8)"/></svg><SCRIPT SRC=//evil.example/x.js></SCRIPT><p>end</p></body></html>`;
/** An SVG image with a script and an event handler. */
const SVG = `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload="alert(1)"><script>alert(2)</script><rect width="10" height="10" fill="red"/><a href="javascript:alert(3)"><text>t</text></a><foreignObject><iframe src="https://example.com"></iframe></foreignObject></svg>`;

beforeAll(async () => {
  web = http.createServer((req, res) => {
    const u = req.url ?? "/";
    if (u === "/page") {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(PAGE);
    } else if (u === "/gz") {
      res.writeHead(200, { "Content-Type": "text/plain", "Content-Encoding": "gzip" });
      res.end(zlib.gzipSync("compressed text\n"));
    } else if (u === "/bomb") {
      // 1 KB compressed, under the 2 KB cap; 1 MB unpacked, over it: only counting after decompression
      // stops it. Compressed once: gzipping 64 MB per request outlasted the fetch time limit under load.
      res.writeHead(200, { "Content-Type": "text/plain", "Content-Encoding": "gzip" });
      res.end(BOMB);
    } else if (u === "/doc.pdf") {
      res.writeHead(200, { "Content-Type": "application/pdf" });
      res.end(Buffer.from("%PDF-1.4 test"));
    } else if (u === "/big") {
      res.writeHead(200, { "Content-Type": "application/pdf" });
      res.end(Buffer.alloc(3000));
    } else if (u === "/big-chunked") {
      res.writeHead(200, { "Content-Type": "application/pdf" });
      for (let i = 0; i < 10; i++) res.write(Buffer.alloc(500));
      res.end();
    } else if (u === "/slow") {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.write("start…");
      // never ends
    } else if (u === "/exe") {
      res.writeHead(200, { "Content-Type": "application/x-msdownload" });
      res.end("MZ");
    } else if (u === "/to-private") {
      res.writeHead(302, { Location: "http://internal.test/secret" });
      res.end();
    } else if (u === "/to-metadata") {
      res.writeHead(301, { Location: "http://169.254.169.254/latest/meta-data/" });
      res.end();
    } else if (u === "/hop1") {
      res.writeHead(302, { Location: "/hop2" });
      res.end();
    } else if (u === "/hop2") {
      res.writeHead(307, { Location: "/doc.pdf" });
      res.end();
    } else if (u.startsWith("/loop")) {
      const n = Number(u.slice(5) || 0);
      res.writeHead(302, { Location: `/loop${n + 1}` });
      res.end();
    } else if (u === "/edited") {
      void duringDownload().then(() => {
        res.writeHead(200, { "Content-Type": "text/plain" });
        res.end("fetched\n");
      });
    } else if (u === "/docs/guide/page") {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(LINKED);
    } else if (u === "/moved") {
      res.writeHead(302, { Location: "/docs/guide/page" });
      res.end();
    } else if (u === "/based") {
      res.writeHead(200, { "Content-Type": "text/html" });
      res.end(`<html><head><base href="https://cdn.example.org/assets/"></head><body><p><a href="x.html">based</a> <img src="y.png" alt="why"></p></body></html>`);
    } else if (u === "/active") {
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
      res.end(ACTIVE);
    } else if (u === "/latin") {
      res.writeHead(200, { "Content-Type": "text/html; charset=iso-8859-1" });
      res.end(Buffer.from(`<html><head><meta charset="iso-8859-1"></head><body><p>caf\xe9</p><script>x()</script></body></html>`, "latin1"));
    } else if (u === "/pic.svg") {
      res.writeHead(200, { "Content-Type": "image/svg+xml" });
      res.end(SVG);
    } else if (u === "/404") {
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("no");
    } else {
      res.writeHead(200, { "Content-Type": "text/plain" });
      res.end("hello\n");
    }
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});
afterAll(async () => {
  web.closeAllConnections();
  await new Promise((r) => web.close(r));
});

describe("fetch", () => {
  let root: string;
  let s: TestServer;
  let client: Client;

  beforeAll(async () => {
    root = makeTempVault({ "Home.md": "# Home\n", "Private/x.md": "x\n" });
    s = await startTestServer(root, {
      write: true,
      hidden: ["Private"],
      fetch: {
        allowHosts: ["127.0.0.1"],
        maxBytes: 2048,
        timeoutMs: 1500,
        resolve: {
          "internal.test": ["10.0.0.5"],
          "metadata.test": ["169.254.169.254"],
          "loop.test": ["127.0.0.1"],
          "v6local.test": ["fd00::1"],
          "mapped.test": ["::ffff:192.168.1.1"],
          "translated.test": ["::ffff:0:169.254.169.254"],
          "mixed.test": ["93.184.216.34", "10.1.2.3"],
          "cgnat.test": ["100.64.0.1"],
          "multicast.test": ["224.0.0.1"],
          "zero.test": ["0.0.0.0"],
        },
      },
    });
    client = await s.connect();
  });
  afterAll(async () => {
    await s.close();
    removeTree(root);
  });

  test("a web page becomes a Markdown note (scripts and styles dropped, the source recorded)", async () => {
    const r = await ok(client, "fetch", { url: `${base}/page`, path: "Clippings/Garden" });
    expect(r).toMatchObject({ path: "Clippings/Garden.md", status: 200, content_type: "text/html", converted: true, created: true, redirects: 0 });
    const md = readFileSync(path.join(root, "Clippings", "Garden.md"), "utf8");
    expect(md).toContain(`source: "${base}/page"`);
    expect(md).toContain("# Garden notes");
    expect(md).toContain("## Tomatoes");
    expect(md).toContain("Water **deeply**, not often.");
    expect(md).toMatch(/-\s+sun/);
    expect(md).not.toMatch(/alert|p\{\}/);
    expect((await ok(client, "read", { path: "Clippings/Garden.md" })).etag).toBe(r.etag);
  });

  test("format html keeps the page; attachments keep their bytes; compressed bodies are unpacked", async () => {
    await ok(client, "fetch", { url: `${base}/page`, path: "Clippings/raw.html", format: "html" });
    expect(readFileSync(path.join(root, "Clippings", "raw.html"), "utf8")).toBe(PAGE.replace("<script>alert(1)</script>", ""));
    const pdf = await ok(client, "fetch", { url: `${base}/doc.pdf`, path: "Attachments/doc" });
    expect(pdf).toMatchObject({ path: "Attachments/doc.pdf", content_type: "application/pdf", converted: false });
    expect(readFileSync(path.join(root, "Attachments", "doc.pdf"), "utf8")).toBe("%PDF-1.4 test");
    await ok(client, "fetch", { url: `${base}/gz`, path: "Attachments/gz.txt" });
    expect(readFileSync(path.join(root, "Attachments", "gz.txt"), "utf8")).toBe("compressed text\n");
  });

  test("a page's relative links and images are made absolute against the final URL; links that are not http(s) keep only their text", async () => {
    const r = await ok(client, "fetch", { url: `${base}/moved`, path: "Clippings/Guide" });
    expect(r).toMatchObject({ url: `${base}/docs/guide/page`, redirects: 1, converted: true });
    const md = readFileSync(path.join(root, "Clippings", "Guide.md"), "utf8");
    expect(md).toContain(`[other page](${base}/other.html)`);
    expect(md).toContain(`[the next one](${base}/docs/guide/next.html#part)`);
    expect(md).toContain(`[a query](${base}/docs/guide/page?q=1)`);
    expect(md).toContain(`[the top](${base}/docs/guide/page#top)`);
    expect(md).toContain("[a CDN](http://cdn.example.org/lib.js)");
    expect(md).toContain(`![A picture](${base}/img.png)`);
    expect(md).toContain(`![Up](${base}/docs/up.png)`);
    expect(md).not.toMatch(/\]\((?!https?:\/\/)/);
    expect(md).not.toMatch(/javascript|vbscript|data:|mailto:|inline/i);
    expect(md).toMatch(/js js2 data mail\s+vb/);
    // The page's own <base href> is the base when it has one.
    await ok(client, "fetch", { url: `${base}/based`, path: "Clippings/Based.md" });
    const based = readFileSync(path.join(root, "Clippings", "Based.md"), "utf8");
    expect(based).toContain("[based](https://cdn.example.org/assets/x.html)");
    expect(based).toContain("![why](https://cdn.example.org/assets/y.png)");
  });

  test("tables are kept as GFM tables", async () => {
    const md = readFileSync(path.join(root, "Clippings", "Guide.md"), "utf8");
    expect(md).toContain(
      ["| Name | Size \\| bytes |", "| --- | --- |", "| alpha | 1 |", `| [beta](${base}/b) |  |`, "| wide cell |  |", "| short |  |"].join("\n"),
    );
    expect(md).toContain(["| no | header |", "| --- | --- |", "| second | row |"].join("\n"));
  });

  test('format "html" and SVG images are saved without scripts, event handlers or javascript: addresses', async () => {
    await ok(client, "fetch", { url: `${base}/active`, path: "Clippings/active.html", format: "html" });
    const saved = readFileSync(path.join(root, "Clippings", "active.html"), "utf8");
    expect(saved).not.toMatch(/<script|\son[a-z]+\s*=|javascript|java&#x73;|srcdoc|alert\([1235689]\)|http-equiv|<iframe|evil/i);
    expect(saved).toContain("&lt;script>alert(7)"); // a tag built by removing another is text, not a tag
    expect(saved).toContain('<img src="x/onerror=alert(4)">'); // one unquoted value, as a browser reads it
    expect(saved).toContain('<a href="https://example.com/ok">ok</a>');
    expect(saved).toContain("<p>text</p>");
    expect(saved).toContain("<p>end</p>");
    // Into a note with format "html" too (Obsidian renders HTML in a note).
    await ok(client, "fetch", { url: `${base}/active`, path: "Clippings/active-note.md", format: "html" });
    expect(readFileSync(path.join(root, "Clippings", "active-note.md"), "utf8")).not.toMatch(/<script|\son[a-z]+\s*=|javascript/i);
    // Another charset: saved as UTF-8, and the page says so.
    await ok(client, "fetch", { url: `${base}/latin`, path: "Clippings/latin.html", format: "html" });
    expect(readFileSync(path.join(root, "Clippings", "latin.html"), "utf8")).toBe('<html><head><meta charset="utf-8"></head><body><p>café</p></body></html>');

    const svg = await ok(client, "fetch", { url: `${base}/pic.svg`, path: "Attachments/pic" });
    expect(svg).toMatchObject({ path: "Attachments/pic.svg", content_type: "image/svg+xml", converted: false });
    const image = readFileSync(path.join(root, "Attachments", "pic.svg"), "utf8");
    expect(image).not.toMatch(/<script|onload|javascript|alert|<iframe/i);
    expect(image).toContain('<rect width="10" height="10" fill="red"/>');
    expect(image).toMatch(/^<\?xml version="1.0"\?><svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="10" height="10">/);
  });

  test("redirects are followed one hop at a time, at most 5", async () => {
    const r = await ok(client, "fetch", { url: `${base}/hop1`, path: "Attachments/hop.pdf" });
    expect(r).toMatchObject({ redirects: 2, url: `${base}/doc.pdf` });
    expect(await fails(client, "fetch", { url: `${base}/loop0`, path: "Attachments/loop.txt" })).toMatch(/More than 5 redirects/);
    expect(existsSync(path.join(root, "Attachments", "loop.txt"))).toBe(false);
  });

  test("every forbidden address class is refused before any connection", async () => {
    const cases: [string, RegExp][] = [
      ["http://internal.test/", /10\.0\.0\.5, which is a private address/],
      ["http://metadata.test/latest/meta-data/", /169\.254\.169\.254, which is a link-local \(cloud metadata\) address/],
      ["http://169.254.169.254/latest/meta-data/", /"169\.254\.169\.254" is a link-local/],
      ["http://loop.test:1/", /127\.0\.0\.1, which is a loopback address/],
      ["http://[::1]/", /loopback/],
      ["http://v6local.test/", /unique-local/],
      ["http://mapped.test/", /::ffff:192\.168\.1\.1, which is a private address/],
      ["http://translated.test/", /::ffff:0:169\.254\.169\.254, which is a link-local \(cloud metadata\) address/],
      ["http://[::ffff:0:127.0.0.1]:1/", /"::ffff:0:7f00:1" is a loopback address/],
      ["http://mixed.test/", /10\.1\.2\.3, which is a private address/],
      ["http://cgnat.test/", /shared \(carrier-grade NAT\)/],
      ["http://multicast.test/", /multicast/],
      ["http://zero.test/", /unspecified/],
      ["http://[fe80::1]/", /link-local/],
      ["http://localhost/", /could not be resolved/],
    ];
    for (const [url, why] of cases) expect(await fails(client, "fetch", { url, path: "Attachments/x.txt" })).toMatch(why);
    // The way to allow one, in both hosts; the article fits the word.
    expect(await fails(client, "fetch", { url: "http://internal.test/", path: "Attachments/x.txt" })).toMatch(/allow a host on their own network in the plugin's settings \(Fetch: allowed hosts\) or, headless, with --fetch-allow-host internal\.test\./);
    expect(await fails(client, "fetch", { url: "http://zero.test/", path: "Attachments/x.txt" })).toMatch(/which is an unspecified address/);
    expect(await fails(client, "fetch", { url: "http://v6local.test/", path: "Attachments/x.txt" })).toMatch(/which is a unique-local address/);
    expect(existsSync(path.join(root, "Attachments", "x.txt"))).toBe(false);
  });

  test("a redirect into a private or metadata address is refused (each hop is checked again)", async () => {
    expect(await fails(client, "fetch", { url: `${base}/to-private`, path: "Attachments/p.txt" })).toMatch(/10\.0\.0\.5, which is a private address/);
    expect(await fails(client, "fetch", { url: `${base}/to-metadata`, path: "Attachments/m.txt" })).toMatch(/169\.254\.169\.254" is a link-local/);
    expect(existsSync(path.join(root, "Attachments", "p.txt"))).toBe(false);
  });

  test("an oversized body (declared, chunked, or a compression bomb) writes nothing", async () => {
    expect(await fails(client, "fetch", { url: `${base}/big`, path: "Attachments/big.pdf" })).toMatch(/larger than the fetch limit.*nothing was written/);
    expect(await fails(client, "fetch", { url: `${base}/big-chunked`, path: "Attachments/big.pdf" })).toMatch(/larger than the fetch limit/);
    expect(await fails(client, "fetch", { url: `${base}/bomb`, path: "Attachments/bomb.txt" })).toMatch(/larger than the fetch limit/);
    expect(existsSync(path.join(root, "Attachments", "big.pdf"))).toBe(false);
    expect(existsSync(path.join(root, "Attachments", "bomb.txt"))).toBe(false);
  });

  test("a server that never finishes is cut off at the time limit", async () => {
    expect(await fails(client, "fetch", { url: `${base}/slow`, path: "Attachments/slow.txt" })).toMatch(/longer than 2 s and was stopped; nothing was written/);
    expect(existsSync(path.join(root, "Attachments", "slow.txt"))).toBe(false);
  });

  test("content types, URL schemes, credentials, HTTP errors and destinations are checked", async () => {
    expect(await fails(client, "fetch", { url: `${base}/exe`, path: "Attachments/a.exe" })).toMatch(
      /application\/x-msdownload, which fetch does not save .*in the plugin's settings \(Fetch: content types\) or, headless, with --fetch-content-type application\/x-msdownload/,
    );
    expect(await fails(client, "fetch", { url: "file:///etc/passwd", path: "Attachments/p.txt" })).toMatch(/Only http and https/);
    expect(await fails(client, "fetch", { url: "ftp://example.com/x", path: "Attachments/p.txt" })).toMatch(/Only http and https/);
    expect(await fails(client, "fetch", { url: `http://user:pw@127.0.0.1:1/`, path: "Attachments/p.txt" })).toMatch(/without credentials/);
    expect(await fails(client, "fetch", { url: `${base}/404`, path: "Attachments/404.txt" })).toMatch(/answered HTTP 404/);
    expect(await fails(client, "fetch", { url: `${base}/doc.pdf`, path: "Private/doc.pdf" })).toMatch(/not a place this server can write to/);
    expect(await fails(client, "fetch", { url: `${base}/doc.pdf`, path: "Home.md" })).toMatch(/already exists/);
    expect(await fails(client, "fetch", { url: "not a url", path: "x.md" })).toMatch(/is not a URL/);
  });

  test("replacing a file needs its etag, compared when the download is written: the owner's edit made meanwhile survives", async () => {
    await s.vault.create("Notes/Kept.txt", "mine\n");
    const file = path.join(root, "Notes", "Kept.txt");
    expect(await fails(client, "fetch", { url: `${base}/doc.pdf`, path: "Notes/Kept.txt" })).toMatch(/already exists; .*overwrite: true and if_match/);
    expect(await fails(client, "fetch", { url: `${base}/doc.pdf`, path: "Notes/Kept.txt", overwrite: true })).toMatch(
      /"Notes\/Kept\.txt" already exists; replacing it needs the etag .*read it .*fetch again with if_match/,
    );
    expect(await fails(client, "fetch", { url: `${base}/doc.pdf`, path: "Notes/Kept.txt", overwrite: true, if_match: "0123456789abcdef0123" })).toMatch(/changed since you read it/);
    expect(readFileSync(file, "utf8")).toBe("mine\n");

    // The etag is right when fetch starts; the owner edits the file while the page downloads.
    const { etag } = await ok(client, "read", { path: "Notes/Kept.txt" });
    duringDownload = async () => {
      await s.vault.process("Notes/Kept.txt", (t) => t + "the owner's line\n");
    };
    try {
      expect(await fails(client, "fetch", { url: `${base}/edited`, path: "Notes/Kept.txt", overwrite: true, if_match: etag })).toMatch(/changed since you read it.*nothing was written/);
    } finally {
      duringDownload = async () => undefined;
    }
    expect(readFileSync(file, "utf8")).toBe("mine\nthe owner's line\n");

    // The current etag replaces it (the path without an extension too: checked when written).
    const now = await ok(client, "read", { path: "Notes/Kept.txt" });
    const r = await ok(client, "fetch", { url: `${base}/edited`, path: "Notes/Kept.txt", overwrite: true, if_match: now.etag });
    expect(r).toMatchObject({ path: "Notes/Kept.txt", created: false });
    expect(readFileSync(file, "utf8")).toBe("fetched\n");
    expect(await fails(client, "fetch", { url: `${base}/plain`, path: "Notes/Kept", overwrite: true })).toMatch(/"Notes\/Kept\.txt" already exists; replacing it needs the etag/);
    expect(readFileSync(file, "utf8")).toBe("fetched\n");
  });

  test("the allow-list names hosts (and ports) exactly; a read-only server has no fetch", async () => {
    const s2 = await startTestServer(root, { write: true, fetch: { allowHosts: [`127.0.0.1:1`], resolve: {} } });
    try {
      const c2 = await s2.connect();
      expect(await fails(c2, "fetch", { url: `${base}/doc.pdf`, path: "Attachments/y.pdf" })).toMatch(/"127\.0\.0\.1" is a loopback address/);
    } finally {
      await s2.close();
    }
    const s3 = await startTestServer(root, {});
    try {
      const c3 = await s3.connect();
      expect((await c3.listTools()).tools.map((t) => t.name)).not.toContain("fetch");
    } finally {
      await s3.close();
    }
  });
});

test("the address guard: public addresses pass, every reserved class is named", () => {
  for (const a of ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"]) expect(forbiddenAddress(a)).toBeNull();
  const named: [string, string][] = [
    ["127.0.0.1", "loopback"], ["10.1.1.1", "private"], ["172.31.0.1", "private"], ["192.168.0.1", "private"], ["169.254.169.254", "link-local (cloud metadata)"],
    ["100.100.1.1", "shared (carrier-grade NAT)"], ["0.0.0.0", "unspecified"], ["255.255.255.255", "reserved or broadcast"], ["224.0.0.251", "multicast"],
    ["::1", "loopback"], ["::", "unspecified"], ["fc00::1", "unique-local"], ["fe80::1%eth0", "link-local"], ["ff02::1", "multicast"],
    ["::ffff:127.0.0.1", "loopback"], ["::ffff:7f00:1", "loopback"], ["64:ff9b::a00:1", "private"], ["2002:c0a8:101::1", "private"], ["2001:db8::1", "documentation"],
  ];
  for (const [a, why] of named) expect([a, forbiddenAddress(a)]).toEqual([a, why]);
  expect(forbiddenAddress("not-an-ip")).toBe("not an IP address");
});

test("the address guard: every IPv6 form that carries an IPv4 address is judged by the IPv4 inside", () => {
  const forms: [string, string | null][] = [
    // IPv4-mapped ::ffff:0:0/96, dotted and hex, expanded.
    ["::ffff:10.0.0.1", "private"], ["::ffff:a00:1", "private"], ["0:0:0:0:0:ffff:a9fe:a9fe", "link-local (cloud metadata)"], ["::ffff:93.184.216.34", null],
    // IPv4-compatible ::/96 (deprecated).
    ["::127.0.0.1", "loopback"], ["::a9fe:a9fe", "link-local (cloud metadata)"], ["::8.8.8.8", null],
    // IPv4-translated ::ffff:0:0:0/96 (RFC 2765/6145): the form that was missing.
    ["::ffff:0:127.0.0.1", "loopback"], ["::ffff:0:7f00:1", "loopback"], ["::ffff:0:10.1.2.3", "private"], ["0:0:0:0:ffff:0:a9fe:a9fe", "link-local (cloud metadata)"],
    ["::ffff:0:192.168.1.1", "private"], ["::ffff:0:0.0.0.0", "unspecified"], ["[::ffff:0:127.0.0.1]", "loopback"], ["::ffff:0:8.8.8.8", null],
    // NAT64 well-known prefix 64:ff9b::/96 (RFC 6052) and the local-use prefix 64:ff9b:1::/48 (RFC 8215).
    ["64:ff9b::127.0.0.1", "loopback"], ["64:ff9b::169.254.169.254", "link-local (cloud metadata)"], ["64:ff9b::8.8.8.8", null],
    ["64:ff9b:1::a00:1", "local-use NAT64"], ["64:ff9b:1:ffff::8.8.8.8", "local-use NAT64"],
    // 6to4 2002::/16.
    ["2002:7f00:1::1", "loopback"], ["2002:a9fe:a9fe::", "link-local (cloud metadata)"], ["2002:5db8:d822::1", null],
    // Teredo 2001::/32: refused whatever it carries.
    ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo tunnel"], ["2001::1", "Teredo tunnel"],
    // ISATAP interface ids (RFC 5214), with the u/g bits.
    ["2001:db9::5efe:10.0.0.1", "private"], ["2600:1::200:5efe:127.0.0.1", "loopback"], ["2600:1::100:5efe:a9fe:a9fe", "link-local (cloud metadata)"], ["2600:1::5efe:8.8.8.8", null],
    // Other special ranges of 2001::/23.
    ["2001:2::1", "benchmarking"], ["2001:10::1", "reserved (ORCHID)"], ["2001:20::1", "reserved (ORCHID)"],
  ];
  for (const [a, why] of forms) expect([a, forbiddenAddress(a)]).toEqual([a, why]);
});
