/**
 * Many clients at once, each its own MCP session over HTTP: every request gets its own answer, and
 * concurrent writers with etags never lose or duplicate a change.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { call, makeTempVault, ok, removeTree, startTestServer, textOf, type FileTree, type TestServer } from "../support/harness";

const CLIENTS = 20;
const CALLS = 50;

function vaultFiles(): FileTree {
  const files: FileTree = {};
  for (let i = 0; i < 200; i++) {
    files[`Topics/Topic ${i}.md`] = `---\ntags: [t${i % 7}]\n---\n# Topic ${i}\n\nUnique marker word${i}x. Links to [[Topic ${(i * 7) % 200}]].\n`;
  }
  for (let c = 0; c < CLIENTS; c++) files[`Clients/Client ${c}.md`] = `# Client ${c}\n`;
  files["Shared.md"] = "# Shared\n\nEND\n";
  return files;
}

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer(makeTempVault(vaultFiles()), { write: true });
  await server.runtime.services.search.waitForIdle(30_000);
});

afterAll(async () => {
  const root = server.root;
  await server.close();
  removeTree(root);
});

const disk = (p: string) => readFileSync(path.join(server.root, ...p.split("/")), "utf8");

describe("load", () => {
  test(`${CLIENTS} clients x ${CALLS} mixed calls at once: no errors, every answer is its own request's`, async () => {
    const clients: Client[] = await Promise.all(Array.from({ length: CLIENTS }, () => server.connect()));
    const problems: string[] = [];
    const expectThat = (cond: boolean, what: string) => {
      if (!cond) problems.push(what);
    };
    const run = async (c: number) => {
      const client = clients[c];
      const own = `Clients/Client ${c}.md`;
      for (let k = 0; k < CALLS; k++) {
        const t = (c * 7 + k * 13) % 200; // a different topic per call and client
        const where = `client ${c} call ${k}`;
        const check = <T = unknown>(r: CallToolResult, what: string): T | undefined => {
          expectThat(!r.isError, `${where} ${what}: ${textOf(r).slice(0, 200)}`);
          return r.structuredContent as T | undefined;
        };
        type Paths = { path: string }[];
        switch (k % 10) {
          case 0: {
            const s = check<{ hits: Paths }>(await call(client, "search", { query: `word${t}x` }), "search");
            expectThat(s?.hits[0]?.path === `Topics/Topic ${t}.md`, `${where} search answered ${JSON.stringify(s?.hits.map((h) => h.path))}`);
            break;
          }
          case 1: {
            const g = check<{ matches: Paths }>(await call(client, "grep", { query: `word${t}x`, case_sensitive: true }), "grep");
            expectThat(g?.matches.length === 1 && g.matches[0].path === `Topics/Topic ${t}.md`, `${where} grep answered ${JSON.stringify(g?.matches)}`);
            break;
          }
          case 2: {
            const r = check<{ body?: string }>(await call(client, "read", { path: `Topics/Topic ${t}.md` }), "read");
            expectThat(typeof r?.body === "string" && r.body.includes(`word${t}x`), `${where} read answered another note`);
            break;
          }
          case 3: {
            const f = check<{ notes: Paths }>(await call(client, "find_notes", { query: `Topic ${t}` }), "find_notes");
            expectThat(f?.notes[0]?.path === `Topics/Topic ${t}.md`, `${where} find_notes answered ${JSON.stringify(f?.notes?.[0])}`);
            break;
          }
          case 4: {
            const l = check<{ total: number }>(await call(client, "list_documents", { folder: "Topics", limit: 5 }), "list_documents");
            expectThat(l?.total === 200, `${where} list_documents total ${l?.total}`);
            break;
          }
          case 5: {
            const b = check<{ backlinks: unknown }>(await call(client, "get_backlinks", { path: `Topics/Topic ${t}.md` }), "get_backlinks");
            expectThat(Array.isArray(b?.backlinks), `${where} get_backlinks`);
            break;
          }
          case 6:
            check(await call(client, "stats"), "stats");
            break;
          case 7:
            check(await call(client, "list_tags"), "list_tags");
            break;
          case 8: {
            const w = check<{ path: string }>(await call(client, "write", { path: own, content: `line ${k} of client ${c}\n`, mode: "append" }), "write");
            expectThat(w?.path === own, `${where} write answered for ${w?.path}`);
            break;
          }
          case 9: {
            const r = check<{ body?: string }>(await call(client, "read", { path: own }), "read own");
            expectThat(typeof r?.body === "string" && r.body.includes(`line ${k - 1} of client ${c}\n`), `${where} does not read its own last write`);
            break;
          }
        }
      }
    };
    await Promise.all(clients.map((_, c) => run(c)));
    expect(problems).toEqual([]);
    // On disk, each client's note holds exactly its own appends, in order.
    for (let c = 0; c < CLIENTS; c++) {
      const lines = Array.from({ length: CALLS / 10 }, (_, j) => `line ${j * 10 + 8} of client ${c}\n`).join("");
      expect(disk(`Clients/Client ${c}.md`)).toBe(`# Client ${c}\n${lines}`);
    }
  }, 120_000);

  test("10 clients edit one note with etags at once: one write wins per etag, the others get a conflict, nothing is lost or doubled", async () => {
    const clients: Client[] = await Promise.all(Array.from({ length: 10 }, () => server.connect()));
    const pending = new Set(clients.map((_, i) => i));
    let rounds = 0;
    while (pending.size > 0 && rounds < 30) {
      rounds++;
      const attempts = await Promise.all(
        [...pending].map(async (i) => {
          const { etag } = await ok(clients[i], "read", { path: "Shared.md" });
          return { i, etag: etag as string };
        }),
      );
      const results = await Promise.all(
        attempts.map(async ({ i, etag }) => ({ i, etag, r: await call(clients[i], "edit", { path: "Shared.md", old_text: "END", new_text: `from client ${i}\nEND`, if_match: etag }) })),
      );
      const winsPerEtag = new Map<string, number>();
      for (const { i, etag, r } of results) {
        if (r.isError) {
          expect(textOf(r)).toMatch(/changed since|etag|conflict/i);
          continue;
        }
        winsPerEtag.set(etag, (winsPerEtag.get(etag) ?? 0) + 1);
        pending.delete(i);
      }
      for (const n of winsPerEtag.values()) expect(n).toBe(1);
      expect(winsPerEtag.size).toBeGreaterThanOrEqual(1);
    }
    expect(pending.size).toBe(0);
    // Every round all read the same etag before any wrote: one winner a round.
    expect(rounds).toBe(10);
    const text = disk("Shared.md");
    for (let i = 0; i < 10; i++) expect(text.split(`from client ${i}\n`)).toHaveLength(2);
    expect(text.endsWith("END\n")).toBe(true);
  }, 120_000);
});
