import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { mkdirSync } from "node:fs";
import path from "node:path";
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser, type Frame, type Page } from "puppeteer-core";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { makeTempVault, removeTree, startTestServer, type TestServer } from "../support/harness";

/**
 * The vault explorer (MCP Apps view) in a real headless Chromium (npm's @sparticuz/chromium): a
 * small host page loads it in a sandboxed iframe and implements the Apps bridge over postMessage,
 * forwarding its tools/call requests to a real headless server through the SDK client. The test
 * checks what a person sees and saves screenshots to ci-results/screenshots/ (CI keeps them).
 */

// In ci-results/, which CI keeps: look at them after a change to the view.
const ARTIFACTS = path.resolve(__dirname, "../../ci-results/screenshots");

const HOST_PAGE = `<!doctype html><html><head><meta charset="utf-8"><style>
body { margin: 0; background: #888; } iframe { border: 0; width: 100vw; height: 100vh; display: block; }
</style></head><body><iframe id="app" sandbox="allow-scripts" title="vault explorer"></iframe><script>
  const frame = document.getElementById("app");
  window.__opened = [];
  window.__calls = [];
  window.__sizes = [];
  window.__args = [];
  window.__initialized = false;
  window.__theme = "light";
  const reply = (id, result) => frame.contentWindow.postMessage({ jsonrpc: "2.0", id, result }, "*");
  window.addEventListener("message", async (e) => {
    if (e.source !== frame.contentWindow) return;
    const m = e.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === "ui/initialize") reply(m.id, { protocolVersion: "2026-01-26", hostInfo: { name: "test-host", version: "1" }, hostCapabilities: { openLinks: {} }, hostContext: { theme: window.__theme } });
    else if (m.method === "ui/notifications/initialized") window.__initialized = true;
    else if (m.method === "tools/call") {
      window.__calls.push(m.params.name);
      window.__args.push(m.params.arguments || {});
      const result = await window.callTool(m.params.name, m.params.arguments || {});
      window.__sizes.push(JSON.stringify(result).length);
      reply(m.id, result);
    }
    else if (m.method === "ui/open-link") { window.__opened.push(m.params.url); reply(m.id, {}); }
    else if (m.id !== undefined) reply(m.id, {});
  });
  window.sendToolResult = (result) => frame.contentWindow.postMessage({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result }, "*");
</script></body></html>`;

describe("the vault explorer in a real browser", () => {
  let root: string;
  let s: TestServer;
  let client: Client;
  let browser: Browser;
  let html: string;
  // A second vault for the cases below: a big folder, headings, snippets and Markdown that broke the view.
  let root2: string;
  let s2: TestServer;
  let client2: Client;

  beforeAll(async () => {
    root = makeTempVault({
      "Projects/Garden.md": "---\ntags: [home]\n---\n# Garden plan\n\nGrow [[Tomatoes]] and *herbs* this spring.\n\n> [!tip] Water early\n> Mornings are best.\n\n- [ ] buy seeds\n- [x] dig beds\n\n```\nrow 1: basil\n```\n",
      "Projects/Kitchen.md": "# Kitchen\n\nSee [[Garden]] for what grows.\n",
      "Notes/Tomatoes.md": "# Tomatoes\n\nWater deeply, not often. Part of the [[Garden]].\n",
      "Notes/Herbs.md": "# Herbs\n\nBasil, thyme, <script>alert('x')</script> <img src=x onerror=alert(1)>.\n",
      "Private/Diary.md": "secret\n",
      "Inbox.md": "# Inbox\n\nNothing yet.\n",
    });
    s = await startTestServer(root, { hidden: ["Private"] });
    client = await s.connect();
    const big: Record<string, string> = { "Big/Sub/Inside.md": "# Inside\n" };
    for (let i = 0; i < 260; i++) big[`Big/Note ${String(i).padStart(3, "0")}.md`] = `# Note ${i}\n\nA note of a big folder, with a long enough name and text.\n`;
    const filler = Array.from({ length: 60 }, (_, i) => `Paragraph ${i} of a long note, so that its last heading is far below the first screen.`).join("\n\n");
    root2 = makeTempVault({
      ...big,
      "Notes/Long.md": `# Long\n\nSee [[#Property]] below, or [the key](#the%20key).\n\n${filler}\n\n## Property\n\nThe property itself.\n\n${filler}\n\n## The key\n\nAt the end.\n`,
      "Notes/Pointer.md": "# Pointer\n\nGo to [[Long#Property]].\n",
      "Notes/Rendered.md":
        "# Rendered\n\n> [!example] A fenced example\n> ```md\n> # inside the fence\n> ```\n\n```\nfirst line\nsecond line\n```\n\nA [broken link](%E0%A4%A) here.\n",
      "Snips/Alias.md": "# Alias\n\nThe zebra note links [[Other note|the zebra alias]] and [[Third\\|escaped alias]] here.\n",
      "Snips/Html.md": "# Html\n\n<button>zebra press</button> and <span class=\"x\">a zebra span</span>.\n",
      "Snips/Table.md": "# Table\n\n| zebra col | two |\n|---|:---:|\n| zebra cell | b |\n",
      "Snips/Comment.md": "# Comment\n\nZebra facts. %% zebra secret remark %% visible zebra end.\n",
      "Snips/Badge.md": "# Badge\n\n[![zebra build](https://img.shields.io/x.svg)](https://example.com) ![zebra picture](pic.png) ![[zebra.png]] zebra words.\n",
      "Snips/Fence.md": "# Fence\n\n> [!note] zebra\n> ```md\n> zebra code\n> ```\n",
    });
    s2 = await startTestServer(root2, {});
    client2 = await s2.connect();
    html = ((await client.readResource({ uri: "ui://vault-mcp/explorer.html" })).contents[0] as { text: string }).text;
    browser = await puppeteer.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true, defaultViewport: { width: 1000, height: 640 } });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    await s2?.close();
    removeTree(root);
    if (root2) removeTree(root2);
  });

  /** A host page with the app loaded and initialised, then given a tool's result. */
  async function openApp(theme: "light" | "dark", tool: string, args: Record<string, unknown>, c: Client = client): Promise<{ page: Page; app: Frame; errors: string[] }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.exposeFunction("callTool", async (name: string, a: Record<string, unknown>) => c.callTool({ name, arguments: a }));
    await page.setContent(HOST_PAGE);
    await page.evaluate((t, h) => {
      (window as unknown as { __theme: string }).__theme = t;
      (document.getElementById("app") as HTMLIFrameElement).srcdoc = h;
    }, theme, html);
    await page.waitForFunction(() => (window as unknown as { __initialized: boolean }).__initialized, { timeout: 10_000 });
    const result = await c.callTool({ name: tool, arguments: args });
    await page.evaluate((r) => (window as unknown as { sendToolResult: (x: unknown) => void }).sendToolResult(r), result);
    const app = page.frames().find((f) => f !== page.mainFrame())!;
    expect(errors).toEqual([]);
    return { page, app, errors };
  }
  const calls = (page: Page) => page.evaluate(() => (window as unknown as { __calls: string[] }).__calls);

  const texts = (app: Frame, selector: string) => app.$$eval(selector, (els) => els.map((e) => (e.textContent ?? "").trim()));

  test("the tree, a note's preview with its links, a search, and Open in Obsidian", async () => {
    const { page, app } = await openApp("light", "browse_vault", {});
    await app.waitForSelector(".item.folder");
    expect(await texts(app, "#tree > .folder-wrap > .item.folder")).toEqual(["Notes", "Projects"]);
    expect(await texts(app, "#tree > .item.file")).toEqual(["Inbox"]);
    expect((await texts(app, "#tree .item")).join(" ")).not.toContain("Private");

    // Open a folder (its notes were in the tool's answer) and a note.
    await app.click('.item.folder[data-path="Projects"]');
    await app.click('.item.file[data-path="Projects/Garden.md"]');
    await app.waitForSelector(".links");
    expect(await texts(app, ".note-head h1")).toEqual(["Garden"]);
    expect(await texts(app, ".md h1")).toEqual(["Garden plan"]);
    expect(await texts(app, ".md em")).toEqual(["herbs"]);
    expect(await texts(app, ".md .callout-title")).toEqual(["Water early"]);
    expect(await texts(app, ".md li")).toEqual(["☐ buy seeds", "☑ dig beds"]);
    expect(await texts(app, ".md pre")).toEqual(["row 1: basil"]);
    expect(await texts(app, ".links-box h3")).toEqual(["Backlinks (2)", "Outlinks (1)"]);
    expect((await texts(app, ".links-box:first-child li")).sort()).toEqual(["Kitchen", "Tomatoes"]);
    expect(await texts(app, ".links-box:last-child li")).toEqual(["Notes/Tomatoes"]);
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-note-light.png") });

    // Follow a link in the text.
    await app.click(".md a.wikilink");
    await app.waitForFunction(() => document.querySelector(".note-head h1")?.textContent === "Tomatoes");

    // Open in Obsidian goes through the host as an obsidian:// link.
    await app.click("button.open");
    await page.waitForFunction(() => (window as unknown as { __opened: string[] }).__opened.length > 0);
    const opened = await page.evaluate(() => (window as unknown as { __opened: string[] }).__opened[0]);
    expect(opened).toMatch(/^obsidian:\/\/open\?vault=.+&file=Notes%2FTomatoes$/);

    // Search.
    await app.type("#q", "water deeply");
    await app.click("#go");
    await app.waitForSelector(".result");
    expect((await texts(app, ".result-title"))[0]).toBe("Notes/Tomatoes");
    expect((await texts(app, ".snippet"))[0]).toBe("Tomatoes Water deeply, not often. Part of the Garden.");
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-search-light.png") });
    // Enter in the search box searches too.
    await app.click("#q", { count: 3 });
    await app.type("#q", "basil\n");
    await app.waitForFunction(() => document.querySelector("#view h2")?.textContent?.includes("basil"));
    const calls = await page.evaluate(() => (window as unknown as { __calls: string[] }).__calls);
    expect(new Set(calls)).toEqual(new Set(["read", "get_backlinks", "get_outlinks", "find_notes", "search"]));
    await page.close();
  }, 60_000);

  test("note text is never run as HTML; the dark theme applies", async () => {
    const { page, app } = await openApp("dark", "browse_vault", { folder: "Notes" });
    await app.waitForSelector('.item.file[data-path="Notes/Herbs.md"]');
    await app.click('.item.file[data-path="Notes/Herbs.md"]');
    await app.waitForSelector(".links");
    expect(await app.$$eval(".md img, .md script", (els) => els.length)).toBe(0);
    expect((await texts(app, ".md p")).join(" ")).toContain("<script>alert('x')</script>");
    const bg = await app.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(bg).toBe("rgb(30, 30, 30)");
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-note-dark.png") });
    await page.close();
  }, 60_000);

  test("show_context renders the context card", async () => {
    const { page, app } = await openApp("light", "show_context", { path: "Projects/Garden.md" });
    await app.waitForSelector(".card-section");
    expect(await texts(app, ".note-head h1")).toEqual(["Garden"]);
    expect(await texts(app, ".tags .tag")).toEqual(["#home"]);
    const sections = await texts(app, ".card-section h3");
    expect(sections).toEqual(expect.arrayContaining(["Outline (1)", "Backlinks (2 from 2 notes)", "Outlinks (1)", "In the same folder (1)"]));
    expect(await app.$eval("#tree", (e) => getComputedStyle(e).display)).toBe("none");
    expect(await app.$eval("#view", (e) => e.textContent)).not.toMatch(/null|undefined/);
    await page.screenshot({ path: path.join(ARTIFACTS, "context-card-light.png") });
    // A link on the card opens the note in the explorer, with its folder's tree (not "Loading…").
    await app.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>(".card-section a.wikilink")).find((a) => a.textContent === "Notes/Tomatoes")!.click());
    await app.waitForSelector('#tree .item.file.sel[data-path="Notes/Tomatoes.md"]');
    expect(await app.$eval("main", (m) => m.textContent)).not.toContain("Loading…");
    expect(await texts(app, "#tree .item.up")).toEqual(["↑Vault root"]);
    await page.close();
  }, 60_000);

  test("a big folder comes a page at a time, each answer small; a subfolder has a way up", async () => {
    const first = await client2.callTool({ name: "browse_vault", arguments: { folder: "Big" } });
    expect(JSON.stringify(first).length).toBeLessThan(40_000);
    const { page, app } = await openApp("light", "browse_vault", { folder: "Big" }, client2);
    await app.waitForSelector("#tree .item.more");
    const shown = () => app.$$eval("#tree > .item.file", (els) => els.length);
    expect(await shown()).toBeLessThan(260);
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-big-folder-light.png") });
    for (let pages = 0; (await app.$("#tree > .item.more")) && pages < 10; pages++) {
      const before = await shown();
      await app.click("#tree > .item.more");
      await app.waitForFunction((n) => document.querySelectorAll("#tree > .item.file").length > n, {}, before);
    }
    expect(await app.$("#tree > .item.more")).toBeNull();
    const names = await texts(app, "#tree > .item.file");
    expect(names.length).toBe(260);
    expect(new Set(names).size).toBe(260);
    expect(names[0]).toBe("Note 000");
    expect(names[259]).toBe("Note 259");
    expect(await texts(app, "#tree > .folder-wrap > .item.folder")).toEqual(["Sub"]);
    const sizes = await page.evaluate(() => (window as unknown as { __sizes: number[] }).__sizes);
    expect(sizes.length).toBeGreaterThanOrEqual(2);
    for (const n of sizes) expect(n).toBeLessThan(40_000);
    // Down into Sub's own listing is the tree; up from Big goes to the vault's root.
    expect(await texts(app, "#tree .item.up")).toEqual(["↑Vault root"]);
    await app.click("#tree .item.up");
    await app.waitForFunction(() => !document.querySelector("#tree .item.up") && document.querySelectorAll("#tree > .folder-wrap > .item.folder").length > 0);
    expect(await texts(app, "#tree > .folder-wrap > .item.folder")).toEqual(["Big", "Notes", "Snips"]);
    await page.close();

    // At the root, Big's 261 entries do not hide the folders after it.
    const top = await openApp("light", "browse_vault", {}, client2);
    await top.app.waitForSelector("#tree .item.folder");
    expect(await texts(top.app, "#tree > .folder-wrap > .item.folder")).toEqual(["Big", "Notes", "Snips"]);
    expect(await top.app.$("#tree > .item.more")).toBeNull();
    await top.page.close();

    // From a folder two levels down, up goes to its parent, not to the root.
    const sub = await openApp("light", "browse_vault", { folder: "Big/Sub" }, client2);
    await sub.app.waitForSelector("#tree .item.up");
    expect(await texts(sub.app, "#tree .item.up")).toEqual(["↑Big"]);
    expect(await texts(sub.app, "#tree .folder-title")).toEqual(["Sub"]);
    await sub.page.screenshot({ path: path.join(ARTIFACTS, "explorer-subfolder-light.png") });
    await sub.app.click("#tree .item.up");
    await sub.app.waitForSelector('#tree .item.file[data-path="Big/Note 000.md"]');
    expect(await texts(sub.app, "#tree .item.up")).toEqual(["↑Vault root"]);
    await sub.page.close();
  }, 60_000);

  test("a heading link scrolls to the heading: in the same note, and in another", async () => {
    const { page, app, errors } = await openApp("light", "browse_vault", { folder: "Notes" }, client2);
    await app.click('.item.file[data-path="Notes/Long.md"]');
    await app.waitForSelector(".links");
    const headingTop = (text: string) =>
      app.evaluate((t) => {
        const view = document.getElementById("view")!;
        const h = Array.from(view.querySelectorAll(".md h2")).find((e) => e.textContent === t)!;
        return { top: h.getBoundingClientRect().top - view.getBoundingClientRect().top, scrolled: view.scrollTop };
      }, text);
    expect((await headingTop("Property")).scrolled).toBe(0);
    const before = (await calls(page)).length;
    await app.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>(".md a.wikilink")).find((a) => a.textContent === "#Property")!.click());
    await app.waitForFunction(() => document.getElementById("view")!.scrollTop > 0);
    const at = await headingTop("Property");
    expect(at.top).toBeGreaterThanOrEqual(-2);
    expect(at.top).toBeLessThan(40);
    expect(await app.$(".error")).toBeNull();
    expect((await calls(page)).slice(before)).toEqual([]);
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-heading-light.png") });
    // A Markdown link to a heading, percent-encoded.
    await app.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>(".md a.wikilink")).find((a) => a.textContent === "the key")!.click());
    await app.waitForFunction(() => {
      const view = document.getElementById("view")!;
      const h = Array.from(view.querySelectorAll(".md h2")).find((e) => e.textContent === "The key")!;
      return Math.abs(h.getBoundingClientRect().top - view.getBoundingClientRect().top) < 40 || view.scrollTop + view.clientHeight >= view.scrollHeight - 1;
    });
    // Another note's heading: the note opens there.
    await app.click('.item.file[data-path="Notes/Pointer.md"]');
    await app.waitForFunction(() => document.querySelector(".note-head h1")?.textContent === "Pointer");
    await app.click(".md a.wikilink");
    await app.waitForFunction(() => document.querySelector(".note-head h1")?.textContent === "Long" && document.getElementById("view")!.scrollTop > 0);
    const there = await headingTop("Property");
    expect(there.top).toBeLessThan(40);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test("a tool's error is shown with a way back, not Loading… forever", async () => {
    for (const [tool, args, said] of [
      ["show_context", { path: "Nowhere.md" }, /Nowhere/],
      ["browse_vault", { folder: "Nowhere" }, /No folder "Nowhere"/],
    ] as const) {
      const { page, app } = await openApp("light", tool, args, client2);
      await app.waitForSelector("#view .error");
      expect((await texts(app, "#view .error"))[0]).toMatch(said);
      expect(await app.$eval("main", (b) => b.textContent)).not.toContain("Loading…");
      await page.screenshot({ path: path.join(ARTIFACTS, `explorer-error-${tool}-light.png`) });
      await app.click("#view button.back");
      await app.waitForSelector('#tree > .folder-wrap > .item.folder[data-path="Notes"]');
      expect(await app.$("#view .error")).toBeNull();
      await page.close();
    }
  }, 60_000);

  test("search snippets are the words a reader sees", async () => {
    const { page, app } = await openApp("light", "browse_vault", {}, client2);
    await app.type("#q", "zebra\n");
    await app.waitForSelector(".result");
    const rows = await app.$$eval(".result", (els) => els.map((e) => [e.querySelector(".result-title")!.textContent, e.querySelector(".snippet")?.textContent ?? ""]));
    const snip = Object.fromEntries(rows);
    expect(Object.keys(snip).sort()).toEqual(["Snips/Alias", "Snips/Badge", "Snips/Comment", "Snips/Fence", "Snips/Html", "Snips/Table"]);
    for (const [title, text] of rows) expect([title, text]).toEqual([title, expect.not.stringMatching(/\[\[|\]\]|[<>|!]|%%|```|\\/)]);
    expect(snip["Snips/Alias"]).toContain("links the zebra alias and escaped alias here");
    expect(snip["Snips/Html"]).toContain("zebra press and a zebra span.");
    expect(snip["Snips/Table"]).toContain("zebra col two zebra cell b");
    expect(snip["Snips/Table"]).not.toContain("---");
    expect(snip["Snips/Comment"]).toContain("Zebra facts. visible zebra end");
    expect(snip["Snips/Comment"]).not.toContain("secret");
    expect(snip["Snips/Badge"]).not.toMatch(/build|picture|png/);
    expect(snip["Snips/Badge"]).toContain("zebra words");
    expect(snip["Snips/Fence"]).not.toMatch(/\bmd\b/);
    expect(snip["Snips/Fence"]).toContain("zebra code");
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-snippets-light.png") });
    await page.close();
  }, 60_000);

  test("a note's Markdown: a fence inside a callout, code not indented, a malformed link", async () => {
    const { page, app, errors } = await openApp("light", "browse_vault", { folder: "Notes" }, client2);
    await app.click('.item.file[data-path="Notes/Rendered.md"]');
    await app.waitForSelector(".links");
    expect(await texts(app, ".md blockquote .callout-title")).toEqual(["A fenced example"]);
    expect(await texts(app, ".md blockquote pre")).toEqual(["# inside the fence"]);
    expect((await texts(app, ".md blockquote")).join(" ")).not.toContain("```");
    // The code block's first line starts where its second does.
    const lefts = await app.evaluate(() => {
      const code = Array.from(document.querySelectorAll(".md > pre code")).find((c) => c.textContent.startsWith("first line"))!;
      const text = code.firstChild!;
      const at = (i: number) => {
        const r = document.createRange();
        r.setStart(text, i);
        r.setEnd(text, i + 1);
        return r.getBoundingClientRect().left;
      };
      return [at(0), at(text.textContent!.indexOf("second"))];
    });
    expect(lefts[0]).toBe(lefts[1]);
    await page.screenshot({ path: path.join(ARTIFACTS, "explorer-rendered-light.png") });
    // A link whose percent-encoding is malformed: no uncaught URIError, a message instead.
    await app.evaluate(() => Array.from(document.querySelectorAll<HTMLElement>(".md a")).find((a) => a.textContent === "broken link")!.click());
    await app.waitForSelector("#view .error");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
