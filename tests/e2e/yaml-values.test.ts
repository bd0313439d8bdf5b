import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, removeTree, startTestServer, textOf, type FileTree, type TestServer } from "../support/harness";

/**
 * Frontmatter as real vaults have it: every YAML value type in every field we read (title, aliases,
 * tags, dates, filters…). Generated: each field with each value, one note each, plus notes whose
 * YAML is not a mapping. Every note must be indexed, searchable by its body, and every tool that
 * reads frontmatter must answer.
 */
const FIELDS = ["title", "aliases", "alias", "tags", "tag", "cssclasses", "cssclass", "date", "created", "updated", "status", "publish", "description", "author", "category", "type"];
const VALUES: Record<string, string> = {
  int: "42",
  float: "3.5",
  negative: "-7",
  bool: "true",
  null: "null",
  tilde: "~",
  empty: "",
  date: "2024-01-15",
  datetime: "2024-01-15T10:20:30Z",
  quoted: '"quoted text"',
  hash: "'#hashtag'",
  flowList: "[1, two, true, null, 2024-01-15]",
  nestedList: "[[a, b], [3]]",
  emptyList: "[]",
  map: "{a: 1, b: [x]}",
  emptyMap: "{}",
  blockList: "\n  - 1\n  - two\n  - null\n  - {k: v}",
  blockMap: "\n  nested: 1\n  deep:\n    deeper: true",
  inf: ".inf",
  hex: "0x1F",
  multiline: "|\n  line one\n  line two",
};

function vault(): { files: FileTree; words: Map<string, string> } {
  const files: FileTree = {};
  const words = new Map<string, string>();
  let n = 0;
  const add = (path: string, text: string) => {
    // A word of its own in each note's body, to find it by (no ending a stemmer would take off).
    const word = `zorblat${n++}q`;
    files[path] = text + `\n# Heading\n\nBody of the note with ${word} in it.\n`;
    words.set(path, word);
  };
  for (const f of FIELDS) for (const [name, v] of Object.entries(VALUES)) add(`Fields/${f}/${name}.md`, `---\n${f}: ${v}\n---`);
  for (const [name, v] of Object.entries(VALUES)) add(`All/${name}.md`, `---\n${FIELDS.map((f) => `${f}: ${v}`).join("\n")}\n---`);
  add("Odd/list.md", "---\n- a\n- b\n---");
  add("Odd/scalar.md", "---\njust text\n---");
  add("Odd/number.md", "---\n12\n---");
  add("Odd/null.md", "---\n---");
  add("Odd/broken.md", "---\ntags: [unclosed\ntitle: : :\n---");
  add("Odd/duplicate keys.md", "---\ntags: a\ntags: [b, 2]\n---");
  add("Odd/numeric keys.md", "---\n1: one\ntrue: yes\nnull: x\n---");
  return { files, words };
}

describe("frontmatter of every YAML type in every field", () => {
  let server: TestServer;
  let client: Client;
  const { files, words } = vault();

  beforeAll(async () => {
    server = await startTestServer(makeTempVault(files));
    client = await server.connect();
    await server.runtime.services.search.waitForIdle(60_000);
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  test("every note is indexed, none skipped, no error", async () => {
    const s = await ok(client, "get_index_status");
    expect(s).toMatchObject({ state: "queryable", last_error: null, skipped_total: 0, documents_indexed: words.size, documents_total: words.size });
  });

  test("every note is found by its body", async () => {
    for (const [path, word] of words) {
      const r = await ok(client, "search", { query: word });
      expect([word, r.hits.map((h: { path: string }) => h.path)]).toEqual([word, [path]]);
    }
  });

  test("tools that read frontmatter answer for every note", async () => {
    const paths = [...words.keys()];
    for (let i = 0; i < paths.length; i += 50) {
      const info = await ok(client, "get_notes_info", { paths: paths.slice(i, i + 50) });
      expect(info.err).toEqual([]);
    }
    for (const p of paths) {
      const r = await call(client, "read", { path: p });
      expect([p, r.isError ?? false]).toEqual([p, false]);
    }
    const tags = await ok(client, "list_tags", { limit: 1000 });
    const values = tags.values.map((t: { value: string }) => t.value);
    expect(values).toEqual(expect.arrayContaining(["two", "hashtag", "2024-01-15", "quoted", "text"]));
    // Digits only are not a tag, in frontmatter as inline.
    expect(values.filter((v: string) => /^\d+$/.test(v))).toEqual([]);
    for (const field of FIELDS) {
      const r = await call(client, "list_tags", { field });
      expect([field, r.isError ?? false]).toEqual([field, false]);
    }
    for (const filters of [{ status: 42 }, { status: true }, { status: "quoted text" }, { tags: "two" }, { date: "2024-01-15" }]) {
      const r = await call(client, "search", { query: "note", filters });
      expect([filters, r.isError ?? false]).toEqual([filters, false]);
    }
    for (const q of ["42", "two", "quoted text", "hashtag"]) {
      const r = await call(client, "find_notes", { query: q });
      expect([q, r.isError ?? false]).toEqual([q, false]);
    }
    for (const tool of ["list_documents", "get_broken_links", "get_orphan_notes", "stats"]) {
      const r = await call(client, tool, {});
      expect([tool, r.isError ?? false, textOf(r)]).toEqual([tool, false, expect.any(String)]);
    }
    expect(await fails(client, "read", { path: "Odd/missing.md" })).toMatch(/No note/);
  });
});
