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
  window.__initialized = false;
  window.__theme = "light";
  const reply = (id, result) => frame.contentWindow.postMessage({ jsonrpc: "2.0", id, result }, "*");
  window.addEventListener("message", async (e) => {
    if (e.source !== frame.contentWindow) return;
    const m = e.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.method === "ui/initialize") reply(m.id, { protocolVersion: "2026-01-26", hostInfo: { name: "test-host", version: "1" }, hostCapabilities: { openLinks: {} }, hostContext: { theme: window.__theme } });
    else if (m.method === "ui/notifications/initialized") window.__initialized = true;
    else if (m.method === "tools/call") { window.__calls.push(m.params.name); reply(m.id, await window.callTool(m.params.name, m.params.arguments || {})); }
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
    html = ((await client.readResource({ uri: "ui://vault-mcp/explorer.html" })).contents[0] as { text: string }).text;
    browser = await puppeteer.launch({ executablePath: await chromium.executablePath(), args: chromium.args, headless: true, defaultViewport: { width: 1000, height: 640 } });
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
    removeTree(root);
  });

  /** A host page with the app loaded and initialised, then given a tool's result. */
  async function openApp(theme: "light" | "dark", tool: string, args: Record<string, unknown>): Promise<{ page: Page; app: Frame }> {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.exposeFunction("callTool", async (name: string, a: Record<string, unknown>) => client.callTool({ name, arguments: a }));
    await page.setContent(HOST_PAGE);
    await page.evaluate((t, h) => {
      (window as unknown as { __theme: string }).__theme = t;
      (document.getElementById("app") as HTMLIFrameElement).srcdoc = h;
    }, theme, html);
    await page.waitForFunction(() => (window as unknown as { __initialized: boolean }).__initialized, { timeout: 10_000 });
    const result = await client.callTool({ name: tool, arguments: args });
    await page.evaluate((r) => (window as unknown as { sendToolResult: (x: unknown) => void }).sendToolResult(r), result);
    const app = page.frames().find((f) => f !== page.mainFrame())!;
    expect(errors).toEqual([]);
    return { page, app };
  }

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
    await page.close();
  }, 60_000);
});
