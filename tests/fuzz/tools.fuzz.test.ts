/**
 * Property-based fuzzing of every tool over the real MCP client and HTTP, in write mode, on a vault
 * this file generates, against the headless server in a child process (a call that blocked its event
 * loop fails here as a timeout instead of hanging the test runner). For each generated call: an answer (a result, or an `isError` with text) comes
 * within the time limit; the server still answers afterwards; no absolute machine path and never the
 * token appears in an answer unless the call itself sent it; and when a call fails, no file of the
 * vault changed.
 *
 * Seeded and small in `npm test`; more with FUZZ_RUNS (calls per property) and FUZZ_SEED:
 *   FUZZ_RUNS=2000 npx jest tests/fuzz        (or: npm run test:fuzz)
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import fc from "fast-check";
import { startChildServer, type ChildServer } from "../support/child-server";
import { eventually, makeTempVault, removeTree, textOf, type FileTree } from "../support/harness";

const RUNS = Number(process.env.FUZZ_RUNS ?? 0) || 0;
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
/** The server's time limit of one read call, and how long past it an answer may take to arrive. */
const TOOL_TIMEOUT_MS = 3000;
const ANSWER_MARGIN_MS = 15_000;

/** Our own fixture: every YAML value type in frontmatter, links of each kind, attachments, CJK, CRLF, a regex trap. */
function fixture(): FileTree {
  const files: FileTree = {
    "Home.md": "---\ntags: [start, 2024]\naliases: [Start, 42]\nstatus: active\n---\n# Home\n\nSee [[Projects/Plan]], [[Plan#Steps|steps]] and ![[diagram.png]].\n#inbox\n",
    "Projects/Plan.md": "---\ntitle: 7\ndue: 2024-05-01\ndone: false\nrating: 3.5\nempty:\nlist: [1, two, null]\nnested: {a: {b: [c]}}\n---\n# Plan\n\n## Steps\nThe “quick” plan — step one. ^step1\nStep two.\n",
    "Projects/Deep/Inner note.md": "# Inner\n\nLinks to [[Home]] and [missing](Nowhere.md).\n",
    "Journal/2024-05-01.md": "Bought oak today. TODO glue-up\r\nSecond line\r\n",
    "日本語/ノート.md": "---\ntags: 日記\n---\n# 日本語のノート\n\n東京で会議。[[Home]]\n",
    "Trap.md": `${"a".repeat(40)}!\n${"x".repeat(3000)}\n`,
    "Weird/yaml.md": "---\n- just\n- a list\n---\nbody\n",
    "Weird/broken.md": "---\ntags: [unclosed\n---\nbody\n",
    "diagram.png": new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]),
    "Locked/Rules.md": "# Rules\n",
    "Private/Secret.md": "hidden\n",
    ".obsidian/app.json": "{}",
  };
  for (let i = 0; i < 20; i++) files[`Notes/Note ${i}.md`] = `# Note ${i}\n\nAbout topic${i % 4}. [[Note ${(i + 1) % 20}]]\n`;
  return files;
}

/** Every file under `root` (dot-folders too): relative path → sha256. */
function snapshot(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const abs = path.join(dir, name);
      if (statSync(abs).isDirectory()) walk(abs);
      else out.set(path.relative(root, abs), createHash("sha256").update(readFileSync(abs)).digest("hex"));
    }
  };
  walk(root);
  return out;
}

const HOSTILE_STRINGS = [
  "", " ", "\u0000", "\u0007\u001b[31m", "\r\n", "../../etc/passwd", "/etc/passwd", "C:\\Windows\\win.ini", "~/secret", "\\\\server\\share",
  ".obsidian/app.json", ".trash", "Private/Secret.md", "Home.md\u0000.png", "%2e%2e%2f", "con", "a/../../b", "./Home.md", "Home", "Home.md",
  "Projects/Plan.md", "日本語/ノート.md", "Notes/Note 3.md", "Locked/Rules.md", "diagram.png", "Trap.md", "Weird/yaml.md",
  "(a+)+$", "(.*a){20}!", "(a|aa)+$", "\\1(a)", "(?<=a)b", "x(?=y)", "[", "*", "**", "**/**/**/**/**/**/*a*a*a*a*a*a*a*b", "{a,{b,{c,{d,{e}}}}}", "[[[[",
  "\u202e\u0645\u0631\u062d\u0628\u0627", "e\u0301\u0301\u0301", "\ud83d\ude00", "\ud800", "\udfff", "\ufeff", "null", "undefined", "NaN", "-1", "1e308",
  '"quoted" -exclude prefix* OR', "a".repeat(5000), "word ".repeat(400), "#tag", "[[Home]]", "---\nx: 1\n---\n",
];

const str = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme-composite", maxLength: 20 }) },
);
const num = fc.oneof(
  fc.constantFrom(0, 1, 2, 5, 10, 50, 100, 1000, -1, -1e9, 1e308, 2 ** 53, 2 ** 31, 0.5, 3.7),
  fc.integer({ min: -10, max: 5000 }),
  fc.double({ noNaN: true }),
);
/** Deep nesting: arrays and objects 20–80 levels down. */
const deep = fc.integer({ min: 20, max: 80 }).map((d) => {
  let v: unknown = "bottom";
  for (let i = 0; i < d; i++) v = i % 2 ? [v] : { k: v };
  return v;
});
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  str,
  num,
  fc.boolean(),
  fc.constant(null),
  deep,
  fc.array(str, { maxLength: 5 }),
  fc.dictionary(str, fc.oneof(str, num, fc.boolean()), { maxKeys: 4 }),
  fc.constant(Array.from({ length: 3000 }, (_, i) => `p${i}`)),
);

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; required?: string[]; items?: JsonSchema; enum?: unknown[]; anyOf?: JsonSchema[] };

/** A plausible value for a schema (so handlers run past validation), or anything at all. */
function valueFor(schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  if (!schema) return anyValue;
  if (schema.enum) return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...schema.enum) }, { weight: 1, arbitrary: anyValue });
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const plausible: fc.Arbitrary<unknown> =
    type === "string" ? str
    : type === "integer" || type === "number" ? num
    : type === "boolean" ? fc.boolean()
    : type === "array" ? fc.array(valueFor(schema.items), { maxLength: 4 })
    : type === "object" ? fc.dictionary(str, fc.oneof(str, num, fc.boolean(), fc.array(str, { maxLength: 3 })), { maxKeys: 3 })
    : anyValue;
  return fc.oneof({ weight: 5, arbitrary: plausible }, { weight: 1, arbitrary: anyValue });
}

/** Arguments for a tool: each property present or not, sometimes an unknown one, sometimes not an object at all. */
function argsFor(tool: Tool): fc.Arbitrary<unknown> {
  const schema = tool.inputSchema as JsonSchema;
  const props = Object.entries(schema.properties ?? {});
  const record = fc.record(Object.fromEntries(props.map(([k, s]) => [k, valueFor(s)])), { requiredKeys: [] });
  return fc.oneof(
    { weight: 8, arbitrary: record },
    { weight: 1, arbitrary: fc.tuple(record, str, anyValue).map(([r, k, v]) => ({ ...(r as object), [k || "extra"]: v })) },
    { weight: 1, arbitrary: anyValue },
  );
}

describe("fuzzing every tool over MCP (write mode)", () => {
  let server: ChildServer;
  let root: string;
  let stateDir: string;
  let client: Client;
  let tools: Tool[];
  let before: Map<string, string>;
  let forbidden: string[];
  const outcomes = { ok: 0, error: 0 };

  beforeAll(async () => {
    root = makeTempVault(fixture(), "vault-mcp-fuzz-");
    stateDir = mkdtempSync(path.join(tmpdir(), "vault-mcp-fuzz-state-"));
    server = await startChildServer(root, { stateDir, write: true, toolTimeoutS: TOOL_TIMEOUT_MS / 1000, args: ["--protected", "Locked", "--hidden", "Private"] });
    client = await server.connect();
    tools = (await client.listTools()).tools;
    forbidden = [root, path.resolve(root), stateDir, homedir() + path.sep, process.cwd(), server.token].filter((s) => s.length > 3);
    await eventually(async () => {
      const s = (await client.callTool({ name: "get_index_status", arguments: {} })) as CallToolResult;
      expect(s.structuredContent).toMatchObject({ state: "queryable", queue_depth: 0 });
    }, 30_000);
    before = snapshot(root);
  }, 90_000);

  afterAll(async () => {
    await server.stop();
    removeTree(root);
    removeTree(stateDir);
  });

  /** One generated call and every property it must hold. */
  async function check(tool: Tool, args: unknown): Promise<void> {
    const sent = JSON.stringify(args) ?? "";
    let r: CallToolResult;
    try {
      r = (await client.callTool({ name: tool.name, arguments: args as Record<string, unknown> }, undefined, { timeout: TOOL_TIMEOUT_MS + ANSWER_MARGIN_MS })) as CallToolResult;
    } catch (e) {
      // A JSON-RPC error (e.g. arguments that are not an object) is an answer too; a timeout is not.
      const message = e instanceof Error ? e.message : String(e);
      expect(message).not.toMatch(/timed out|Request timeout/i);
      expect(message.length).toBeGreaterThan(0);
      r = { content: [{ type: "text", text: message }], isError: true };
    }
    outcomes[r.isError ? "error" : "ok"]++;
    const text = textOf(r);
    const everything = text + JSON.stringify(r.structuredContent ?? null) + JSON.stringify(r._meta ?? null);
    for (const secret of forbidden) {
      if (!sent.includes(secret)) expect({ tool: tool.name, leaked: everything.includes(secret) }).toEqual({ tool: tool.name, leaked: false });
    }
    const now = snapshot(root);
    if (r.isError) {
      expect(text.trim().length).toBeGreaterThan(0);
      // A failed call changed nothing on disk.
      expect({ tool: tool.name, args: sent.slice(0, 300), changed: diffSnapshots(before, now) }).toEqual({ tool: tool.name, args: sent.slice(0, 300), changed: [] });
    }
    before = now;
  }

  async function alive(): Promise<void> {
    const r = (await client.callTool({ name: "stats", arguments: {} }, undefined, { timeout: TOOL_TIMEOUT_MS + ANSWER_MARGIN_MS })) as CallToolResult;
    expect(r.isError).toBeFalsy();
  }

  test("every tool, generated arguments: an answer in time, no leaks, nothing changed by a failed call", async () => {
    expect(tools.length).toBeGreaterThanOrEqual(30);
    const perTool = Math.max(1, Math.ceil((RUNS || 12 * tools.length) / tools.length));
    for (const [i, tool] of tools.entries()) {
      // A session per tool: the SDK's HTTP client adds an abort listener per request to its session's signal.
      client = await server.connect();
      let calls = 0;
      await fc.assert(
        fc.asyncProperty(argsFor(tool), async (args) => {
          await check(tool, args);
          if (++calls % 10 === 0) await alive();
        }),
        { seed: SEED + i, numRuns: perTool, endOnFailure: true },
      );
    }
    await alive();
    // The generated arguments get past validation often enough for the handlers themselves to run.
    expect(outcomes.ok).toBeGreaterThan((outcomes.ok + outcomes.error) / 10);
  }, RUNS ? 3_600_000 : 120_000);

  test("known-hostile calls answer promptly and correctly", async () => {
    const grep = (await client.callTool({ name: "grep", arguments: { query: "(a+)+$", regex: true } })) as CallToolResult;
    expect(grep.isError).toBeFalsy();
    expect((grep.structuredContent as { matches: unknown[] }).matches).toEqual([]);
    for (const [name, args] of [
      ["list_documents", { pattern: "**/**/**/**/**/**/**/*a*a*a*a*a*a*a*a*b" }],
      ["grep", { query: "zz", pattern: "**/**/**/**/*a*a*a*a*a*a*a*b*" }],
      ["search", { query: "word ".repeat(400) }],
      ["find_notes", { query: "word ".repeat(100) }],
      ["edit", { path: "Trap.md", old_text: "b".repeat(100_000), new_text: "x" }],
      ["read_multiple", { paths: Array.from({ length: 3000 }, (_, i) => `p${i}`) }],
      ["list_directory", { depth: 20 }],
    ] as const) {
      await check(tools.find((t) => t.name === name)!, args);
    }
    await alive();
  }, 60_000);
});

function diffSnapshots(a: Map<string, string>, b: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [p, h] of a) if (b.get(p) !== h) out.push(b.has(p) ? `changed ${p}` : `removed ${p}`);
  for (const p of b.keys()) if (!a.has(p)) out.push(`added ${p}`);
  return out;
}
