import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { MemoryStateStore } from "../../src/core/state";
import { call, makeTempVault, ok, removeTree, startTestServer, TEST_ADAPTER, textOf, type FileTree, type TestServer } from "../support/harness";

/**
 * Words that are also names of `Object.prototype`'s properties, everywhere a vault can hold text: as
 * words, note names, folder names, link targets (resolved and not), headings, block ids, tags,
 * aliases, frontmatter keys and values, an attachment's extension. A lookup keyed by such text in a
 * plain `{}` finds a function (`o["constructor"]` is `Object`) or, for `__proto__`, changes the
 * object's prototype instead of adding a key. The vault must be indexed, saved and restored without
 * indexing it again, found by search, and counted right by the link tools, on both adapters.
 */
const WORDS = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "prototype"];
/** Link targets no file answers to: unresolved links, keyed by these names. */
const MISSING = ["isPrototypeOf", "propertyIsEnumerable", "toLocaleString", "__defineGetter__", "__lookupSetter__"];
/** Block ids are letters, digits and `-`: `__proto__` cannot be one. */
const blockOf = (w: string): string | null => (/^[A-Za-z0-9-]+$/.test(w) ? w : null);
/** A word of its own per note, to find it by. */
const marker = (i: number) => `qzmark${i}x`;

function vault(): FileTree {
  const files: FileTree = {};
  WORDS.forEach((w, i) => {
    const block = blockOf(w);
    // A note named after the word, with the word as a frontmatter key and value, a tag, an alias, a heading and a block id.
    files[`${w}.md`] = [
      "---",
      `${w}: ${w}`,
      `aliases: [${w} alias]`,
      `tags: [${w}]`,
      "status: draft",
      "---",
      `# ${w}`,
      "",
      `The ${w} of the class, in note ${marker(i)}. #${w}`,
      "",
      `A paragraph to point at.${block ? ` ^${block}` : ""}`,
      "",
    ].join("\n");
    // A folder named after the word, with a note and an attachment whose extension is the word.
    files[`${w}/inside ${w}.md`] = `# Inside\n\nA note in the folder ${w}, ${marker(i + 100)}.\n`;
    files[`${w}/file.${w}`] = new Uint8Array([1, 2, 3, 4]);
  });
  // One note linking to all of them: by name, to the heading, to the block, an embed of the
  // attachment, a frontmatter link; and to names no file has.
  const lines: string[] = ["---", "related:", ...WORDS.map((w) => `  - "[[${w}]]"`), "---", "# Hub", ""];
  for (const w of WORDS) {
    const block = blockOf(w);
    lines.push(`- [[${w}]] and [[${w}#${w}]]${block ? ` and [[${w}#^${block}]]` : ""} and ![[file.${w}]]`);
  }
  for (const m of MISSING) lines.push(`- [[${m}]]`);
  files["Hub.md"] = lines.join("\n") + "\n";
  return files;
}

/** Resolved links from Hub to the note named `w`: the name, the heading, the block, the frontmatter link. */
const linksTo = (w: string) => 3 + (blockOf(w) ? 1 : 0);
const NOTES = WORDS.length * 2 + 1;

describe(`words that are Object.prototype's property names (${TEST_ADAPTER} adapter)`, () => {
  const root = makeTempVault(vault());
  const store = new MemoryStateStore();
  const logs: string[] = [];
  const log = (level: string, message: string) => logs.push(`${level}: ${message}`);
  const opts = { stateStore: store, write: true, log, search: { persistDebounceMs: 20, debounceMs: 5 } };
  let server: TestServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTestServer(root, opts);
    client = await server.connect();
    await server.runtime.services.search.waitForIdle(30_000);
  });
  afterAll(async () => {
    await server.close();
    removeTree(root);
  });

  test("every note is indexed and the index is saved, with no error", async () => {
    const s = await ok(client, "get_index_status");
    expect(s).toMatchObject({ state: "queryable", last_error: null, skipped: [], documents_indexed: NOTES, documents_total: NOTES });
    // Saved in the background (debounced): the main file appears.
    const deadline = Date.now() + 20_000;
    while (!store.files.has("search-index.sqlite") && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(store.files.has("search-index.sqlite")).toBe(true);
    expect(logs.filter((l) => /^(error|warn):/.test(l))).toEqual([]);
  });

  test("search finds each note by its words", async () => {
    for (const [i, w] of WORDS.entries()) {
      const byMarker = await ok(client, "search", { query: marker(i) });
      expect([w, byMarker.hits.map((h: { path: string }) => h.path)]).toEqual([w, [`${w}.md`]]);
      const byWord = await ok(client, "search", { query: w, limit: 50 });
      expect([w, byWord.hits.map((h: { path: string }) => h.path)]).toEqual([w, expect.arrayContaining([`${w}.md`, `${w}/inside ${w}.md`])]);
    }
    const filtered = await ok(client, "search", { query: "class", filters: { constructor: "constructor" }, limit: 50 });
    expect(filtered.hits.map((h: { path: string }) => h.path)).toEqual(["constructor.md"]);
    // A filter on a key no note has matches nothing (not Object.prototype's function of that name).
    for (const key of ["isPrototypeOf", "toLocaleString"]) {
      const none = await ok(client, "search", { query: "class", filters: { [key]: "x" } });
      expect([key, none.hits]).toEqual([key, []]);
    }
  });

  test("the link tools count each target right", async () => {
    const info = await ok(client, "get_notes_info", { paths: ["Hub.md", ...WORDS.map((w) => `${w}.md`), ...WORDS.map((w) => `${w}/file.${w}`)] });
    expect(info.err).toEqual([]);
    const byPath = new Map<string, Record<string, unknown>>(info.ok.map((n: { path: string }) => [n.path, n]));
    const resolvedOut = WORDS.reduce((n, w) => n + linksTo(w) + 1, 0);
    // links_out counts unresolved links too.
    expect(byPath.get("Hub.md")).toMatchObject({ links_out: resolvedOut + MISSING.length, unresolved_out: MISSING.length, links_in: 0 });
    for (const w of WORDS) {
      expect([w, byPath.get(`${w}.md`)]).toEqual([w, expect.objectContaining({ links_in: linksTo(w), backlinking_notes: 1, tags: [w], aliases: [`${w} alias`] })]);
      expect([w, byPath.get(`${w}/file.${w}`)]).toEqual([w, expect.objectContaining({ kind: "attachment", links_in: 1, backlinking_notes: 1 })]);
      const back = await ok(client, "get_backlinks", { path: `${w}.md` });
      expect([w, back.total, back.notes]).toEqual([w, linksTo(w), 1]);
    }
    const out = await ok(client, "get_outlinks", { path: "Hub.md" });
    expect(out).toMatchObject({ unresolved: MISSING.length, missing_fragments: 0 });
    const broken = await ok(client, "get_broken_links", { include_fragments: true, limit: 100 });
    expect(broken.links.map((l: { link: string; reason: string }) => `${l.link} ${l.reason}`).sort()).toEqual(MISSING.map((m) => `${m} missing_file`).sort());
    const stats = await ok(client, "stats");
    expect(textOf(await call(client, "stats"))).not.toMatch(/function|\[object/);
    expect(stats).toMatchObject({ notes: NOTES, attachments: WORDS.length, links: resolvedOut, unresolved_links: MISSING.length });
  });

  test("tags, aliases, attachments and frontmatter come back as written", async () => {
    const tags = await ok(client, "list_tags", { limit: 1000 });
    const counts = new Map<string, number>(tags.values.map((t: { value: string; count: number }) => [t.value, t.count]));
    for (const w of WORDS) expect([w, counts.get(w)]).toEqual([w, 1]);
    const field = await ok(client, "list_tags", { field: "constructor" });
    expect(field.values.map((v: { value: string }) => v.value)).toEqual(["constructor"]);
    for (const key of ["isPrototypeOf", "valueOf"]) {
      const other = await ok(client, "list_tags", { field: key });
      expect([key, other.values.map((v: { value: string }) => v.value)]).toEqual([key, key === "valueOf" ? ["valueOf"] : []]);
    }
    for (const w of WORDS) {
      const found = await ok(client, "find_notes", { query: `${w} alias` });
      expect([w, found.notes[0]?.path]).toEqual([w, `${w}.md`]);
      const att = await ok(client, "read", { path: `${w}/file.${w}` });
      expect([w, att.mime_type, att.size]).toEqual([w, "application/octet-stream", 4]);
      const note = await ok(client, "read", { path: `${w}.md` });
      // JSON.parse keeps `__proto__` as an own key; an object literal would not.
      expect([w, Object.entries(note.frontmatter as object)]).toEqual([w, [[w, w], ["aliases", [`${w} alias`]], ["tags", [w]], ["status", "draft"]]]);
    }
  });

  test("a frontmatter update keeps every key, __proto__ included, and sets one of that name", async () => {
    for (const w of WORDS) {
      const r = await ok(client, "update_frontmatter", { path: `${w}.md`, set: { status: "done" } });
      expect([w, r.changed]).toEqual([w, ["status"]]);
      const note = await ok(client, "read", { path: `${w}.md` });
      expect([w, Object.entries(note.frontmatter as object)]).toEqual([w, [[w, w], ["aliases", [`${w} alias`]], ["tags", [w]], ["status", "done"]]]);
    }
    const r = await ok(client, "update_frontmatter", { path: "Hub.md", set: { constructor: "set", toString: 1 } });
    expect(r.changed.sort()).toEqual(["constructor", "toString"]);
    const hub = await ok(client, "read", { path: "Hub.md" });
    expect(hub.frontmatter).toMatchObject({ constructor: "set", toString: 1 });
    const removed = await ok(client, "update_frontmatter", { path: "__proto__.md", remove: ["__proto__", "valueOf"] });
    expect(removed.changed).toEqual(["__proto__"]);
    const proto = await ok(client, "read", { path: "__proto__.md" });
    expect(Object.keys(proto.frontmatter as object)).toEqual(["aliases", "tags", "status"]);
    expect(({} as Record<string, unknown>).status).toBeUndefined();
  });

  test("restarted, the saved index is restored: nothing is indexed again, and it answers at once", async () => {
    await server.runtime.services.search.waitForIdle(30_000);
    await server.close();
    logs.length = 0;
    server = await startTestServer(root, opts);
    client = await server.connect();
    const s = await ok(client, "get_index_status");
    expect(s).toMatchObject({ state: "queryable", last_error: null, documents_indexed: NOTES });
    expect((await ok(client, "search", { query: marker(0) })).hits.map((h: { path: string }) => h.path)).toEqual(["constructor.md"]);
    await server.runtime.services.search.waitForIdle(30_000);
    expect(logs.filter((l) => /^debug: Search reconcile:/.test(l))).toEqual([`debug: Search reconcile: ${NOTES} notes, 0 to (re)index.`]);
    expect(logs.filter((l) => /^(error|warn):|No saved search index|rebuild/.test(l))).toEqual([]);
  });
});
