/**
 * `npm run bench` (at 10k notes, or alone with `--hostile`): calls a client may send by accident or
 * on purpose — maximum limits, catastrophic regexes and globs, huge queries, giant old_text, deep
 * objects, whole-vault graph questions — through a real SDK client over HTTP against the running
 * server in write mode, on a copy of the vault. For each: wall time and the longest event-loop block
 * (a setImmediate chain; Obsidian's UI thread must never block for more than 50 ms). And grep's
 * regular expressions on re2js side by side with V8's backtracking RegExp (the engine before).
 */
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { MemoryStateStore } from "../src/core/state";
import { isNotePath } from "../src/core/vault";
import { startRuntime } from "../src/hosts/common/runtime";
import { FsVault } from "../src/hosts/node/fs-vault";

export interface HostileCall {
  tool: string;
  what: string;
  wallMs: number;
  maxBlockMs: number;
  isError: boolean;
  answer: string;
}

export interface GrepEngineRow {
  pattern: string;
  caseSensitive: boolean;
  oursMs: number;
  v8Ms: number;
  ratio: number;
  matches: number;
}

export interface HostileResult {
  calls: HostileCall[];
  grep: GrepEngineRow[];
  /** Largest of every call's longest block. */
  maxBlockMs: number;
}

/** The longest gap between setImmediate callbacks since the last reset. */
function blockMonitor(): { reset(): void; max(): number; stop(): void } {
  let max = 0;
  let last = performance.now();
  let on = true;
  const tick = () => {
    const now = performance.now();
    max = Math.max(max, now - last);
    last = now;
    if (on) setImmediate(tick);
  };
  setImmediate(tick);
  return {
    reset: () => {
      max = 0;
      last = performance.now();
    },
    max: () => max,
    stop: () => {
      on = false;
    },
  };
}

const GREP_PATTERNS = ["^#{2} \\w+", "\\[\\[[^\\]]+\\]\\]", "TODO|FIXME", "\\bst\\w+ing\\b", "status: (draft|done)", "zq[0-9]+x"];

export async function benchHostile(vaultRoot: string, workDir: string, log: (s: string) => void): Promise<HostileResult> {
  const root = path.join(workDir, "hostile-vault");
  cpSync(vaultRoot, root, { recursive: true });
  mkdirSync(path.join(root, "Hostile"), { recursive: true });
  writeFileSync(path.join(root, "Hostile", "Trap.md"), `${"a".repeat(40)}!\n${`${"x".repeat(1999)}\n`.repeat(300)}`);
  writeFileSync(path.join(root, "Hostile", "Big.md"), `${"word ".repeat(200)}\n`.repeat(5000)); // 5 MB
  writeFileSync(path.join(root, "Hostile", "One MB.md"), "line of text\n".repeat(80_000));
  const bytes = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7919) & 255);
  writeFileSync(path.join(root, "Hostile", "One MB.bin"), bytes(1024 * 1024)); // the default read cap
  const vault = await FsVault.open(root, { watch: false });
  const token = "bench-token-".padEnd(32, "x");
  const rt = await startRuntime({ port: vault, host: "node", listenPort: 0, token: () => token, allowedOrigins: [], writeMode: true, stateStore: new MemoryStateStore(), sqlWasm, version: "bench" });
  const monitor = blockMonitor();
  try {
    await rt.services.search.waitForIdle(600_000);
    const client = new Client({ name: "bench-hostile", version: "1" });
    await client.connect(new StreamableHTTPClientTransport(new URL(rt.url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
    const notes = vault
      .listFiles()
      .filter((f) => isNotePath(f.path) && !f.path.startsWith("Hostile/"))
      .map((f) => f.path)
      .sort();
    const top = (await client.callTool({ name: "get_most_linked", arguments: { limit: 1 } })) as CallToolResult;
    const hub = (top.structuredContent as { notes?: { path: string }[] } | undefined)?.notes?.[0]?.path ?? notes[0];
    const deep = JSON.parse(`${"[".repeat(60)}1${"]".repeat(60)}`) as unknown;
    const calls: Array<[string, string, Record<string, unknown>]> = [
      ["stats", "whole vault", {}],
      ["list_documents", "limit 1000", { limit: 1000 }],
      ["list_documents", "glob **/** x7 + *a x8 + b", { pattern: "**/**/**/**/**/**/**/*a*a*a*a*a*a*a*a*b", limit: 1000 }],
      ["list_directory", "depth 20 at the root", { depth: 20 }],
      ["read_multiple", "20 notes", { paths: notes.slice(0, 20) }],
      ["get_notes_info", "50 notes", { paths: notes.slice(0, 50) }],
      ["search", "broadest query, max limits", { query: "time have", limit: 50, chunks_per_file: 10, snippet_words: 2000 }],
      ["search", "4 two-letter prefixes", { query: "ab* cd* ef* gh*", limit: 50 }],
      ["search", "64 terms", { query: Array.from({ length: 64 }, (_, i) => `w${i}`).join(" "), limit: 50 }],
      ["find_notes", "12 words", { query: "one two three four five six seven eight nine ten eleven twelve", limit: 100 }],
      ["grep", "literal 'e', limit 1000, context 5", { query: "e", limit: 1000, context_lines: 5 }],
      ["grep", "(a+)+$ (regex)", { query: "(a+)+$", regex: true, limit: 1000, context_lines: 5 }],
      ["grep", "x{300}y (regex, 300-step program)", { query: "x{300}y", regex: true, limit: 1000 }],
      ["grep", "glob **/** x4 + *a x7", { query: "zzqq", limit: 1000, pattern: "**/**/**/**/*a*a*a*a*a*a*a*b*" }],
      ["list_tags", "limit 5000", { limit: 5000 }],
      ["get_backlinks", "hub, limit 500", { path: hub, limit: 500 }],
      ["get_unlinked_mentions", "hub, limit 200", { path: hub, limit: 200 }],
      ["get_broken_links", "with fragments", { limit: 1000, include_fragments: true }],
      ["get_orphan_notes", "limit 1000", { limit: 1000 }],
      ["get_most_linked", "limit 200", { limit: 200 }],
      ["get_connection_path", "first to last note", { from: notes[0], to: notes[notes.length - 1], max_depth: 10 }],
      ["get_context", "hub, max caps", { path: hub, backlinks_limit: 100, outlinks_limit: 100, mentions_limit: 50, peers_limit: 100 }],
      ["edit", "5 MB note", { path: "Hostile/Big.md", old_text: "nomatch", new_text: "x", dry_run: true }],
      ["edit", "3.8 MB old_text", { path: hub, old_text: "nomatch ".repeat(500_000), new_text: "x", dry_run: true }],
      ["edit", "1 MB note, 80k replacements", { path: "Hostile/One MB.md", old_text: "line of text\n", new_text: "line of texts\n", replace_all: true, dry_run: true }],
      ["edit", "1 MB note, loose-match miss", { path: "Hostile/One MB.md", old_text: "line  of\u00a0tex “q”", new_text: "x", dry_run: true }],
      ["write", "1 MB note", { path: "Hostile/New.md", content: "line of text\n".repeat(80_000) }],
      ["write", "10 MB note (refused)", { path: "Hostile/Huge.md", content: "line of text\n".repeat(800_000) }],
      ["read", "1 MB attachment (base64 out)", { path: "Hostile/One MB.bin" }],
      ["write", "2 MB attachment (base64 in)", { path: "Hostile/Two MB.bin", content_base64: Buffer.from(bytes(2 * 1024 * 1024)).toString("base64") }],
      ["update_frontmatter", "60-deep value", { path: notes[1], set: { deep } }],
      ["manage_tags", "500 tags", { path: notes[2], action: "add", tags: Array.from({ length: 500 }, (_, i) => `t${i}`) }],
      ["rename", "the most linked note", { path: hub, new_path: `Renamed/${path.posix.basename(hub)}` }],
    ];
    const out: HostileCall[] = [];
    for (const [tool, what, args] of calls) {
      await new Promise((r) => setTimeout(r, 30));
      monitor.reset();
      const t = performance.now();
      const r = (await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 120_000 })) as CallToolResult;
      const wallMs = performance.now() - t;
      await new Promise((r) => setImmediate(r));
      const text = r.content.map((c) => (c.type === "text" ? c.text : "")).join(" ");
      const row = { tool, what, wallMs, maxBlockMs: monitor.max(), isError: r.isError === true, answer: text.slice(0, 80).replace(/\s+/g, " ") };
      out.push(row);
      log(`  ${tool.padEnd(22)} ${what.padEnd(36)} ${wallMs.toFixed(0).padStart(6)} ms, longest block ${row.maxBlockMs.toFixed(0).padStart(4)} ms${row.isError ? "  (isError: " + row.answer.slice(0, 60) + ")" : ""}`);
    }
    await client.close();

    // grep's regex engine side by side with V8's RegExp over the same notes: the reference is grep as
    // it was before re2js (listing, sorting, clipping, a yield every 10 ms between notes).
    const grep: GrepEngineRow[] = [];
    const listed = () =>
      vault
        .listFiles()
        .filter((f) => isNotePath(f.path) && !rt.services.policy.isHidden(f.path))
        .map((f) => f.path)
        .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const pattern of GREP_PATTERNS) {
      for (const caseSensitive of [false, true]) {
        const ours: number[] = [];
        const v8: number[] = [];
        let matches = 0;
        for (let k = 0; k < 5; k++) {
          let t = performance.now();
          const r = await rt.services.lookup.grep({ pattern, regex: true, caseSensitive, limit: 1000, maxBytes: Number.MAX_SAFE_INTEGER });
          ours.push(performance.now() - t);
          matches = r.matches.length;
          t = performance.now();
          const re = new RegExp(pattern, caseSensitive ? "u" : "iu");
          let n = 0;
          let sliceStart = Date.now();
          outer: for (const p of listed()) {
            // As grep did before re2js: a yield (a zero-delay timer) between notes every 10 ms.
            if (Date.now() - sliceStart >= 10) {
              await new Promise((r) => setTimeout(r, 0));
              sliceStart = Date.now();
            }
            for (const l of (await vault.read(p)).split("\n")) {
              if (re.test(l.length > 2000 ? l.slice(0, 2000) : l) && ++n >= 1000) break outer;
            }
          }
          v8.push(performance.now() - t);
        }
        const med = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
        const row = { pattern, caseSensitive, oursMs: med(ours), v8Ms: med(v8), ratio: med(ours) / med(v8), matches };
        grep.push(row);
        log(`  grep /${pattern}/${caseSensitive ? "" : "i"}: ours ${row.oursMs.toFixed(0)} ms, V8 RegExp ${row.v8Ms.toFixed(0)} ms (${row.ratio.toFixed(2)}x), ${matches} matches`);
      }
    }
    return { calls: out, grep, maxBlockMs: Math.max(...out.map((c) => c.maxBlockMs)) };
  } finally {
    monitor.stop();
    await rt.close();
    await vault.close();
  }
}

/** The markdown section of the bench report. */
export function hostileTable(r: HostileResult): string {
  const lines = [
    "| hostile call | wall (ms) | longest block (ms) | answer |",
    "|---|---:|---:|---|",
    ...r.calls.map((c) => `| \`${c.tool}\` ${c.what} | ${c.wallMs.toFixed(0)} | ${c.maxBlockMs.toFixed(0)}${c.maxBlockMs > 50 ? " ⚠" : ""} | ${c.isError ? "error: " : ""}${c.answer.slice(0, 50).replace(/\|/g, "\\|")} |`),
    "",
    "| grep regex (10k notes, limit 1000) | ours: re2js (ms) | V8 RegExp (ms) | ratio |",
    "|---|---:|---:|---:|",
    ...r.grep.map((g) => `| \`/${g.pattern}/${g.caseSensitive ? "" : "i"}\` | ${g.oursMs.toFixed(0)} | ${g.v8Ms.toFixed(0)} | ${g.ratio.toFixed(2)}x |`),
  ];
  return lines.join("\n");
}
