/**
 * Obsidian's developer policies ask the README to disclose every network use. This test holds the
 * list of the modules of src/ that may reach the network (or start a program that does) and fails
 * when a module not on it gains a way to make a request: a new outbound request needs a line here
 * AND in the README's "Network use and privacy" section. It also fails when a listed module no
 * longer does what its line says, so the list stays true.
 */
import * as fs from "node:fs";
import * as path from "node:path";

const SRC = path.resolve(__dirname, "../../src");

/** Ways to reach the network from our code, each found by a pattern over a module's source. */
const KINDS: Record<string, RegExp> = {
  // Node's clients (a value import: `import type` is only a type).
  "node:http/https": /^import\s+(?!type\b)[^;]*from\s+"node:(http|https|http2)"|require\("(node:)?(http|https|http2)"\)/m,
  "node:net/tls/dgram": /^import\s+(?!type\b)[^;]*from\s+"node:(net|tls|dgram)"|require\("(node:)?(net|tls|dgram)"\)/m,
  // Obsidian's and the browser's clients.
  requestUrl: /\brequestUrl\s*\(/,
  fetch: /(^|[^\w.])fetch\(|\b(window|globalThis|activeWindow|self)\.fetch\b/m,
  "XMLHttpRequest/WebSocket/EventSource/sendBeacon": /\b(XMLHttpRequest|WebSocket|EventSource|sendBeacon)\b/,
  // The MCP SDK's client transports.
  "MCP client transport": /\b(StreamableHTTPClientTransport|SSEClientTransport|WebSocketClientTransport)\b/,
  // Programs we start (git fetches and pushes), or libraries that would fetch on their own.
  child_process: /^import\s+(?!type\b)[^;]*from\s+"node:child_process"|require\("(node:)?child_process"\)/m,
  "electron net": /\bfrom\s+"electron"|require\("electron"\)/,
  undici: /from\s+"undici"|require\("undici"\)/,
};

/** The modules allowed to reach the network, what with, and why (the README says the same). */
const ALLOWED: Record<string, { kinds: string[]; why: string }> = {
  "transport/http.ts": { kinds: ["node:http/https"], why: "the server itself (createServer): it listens on 127.0.0.1 and answers; it sends no request" },
  "hosts/common/net.ts": { kinds: ["node:http/https"], why: "the fetch tool: only when a client calls it; private addresses refused unless on the owner's allow-list" },
  "hosts/common/http-client.ts": {
    kinds: ["node:http/https"],
    why: "headless HTTP port: the embedding provider the owner configured (Ollama, an OpenAI-compatible endpoint) and the built-in model's runtime download, only when semantic search is turned on",
  },
  "hosts/obsidian/http.ts": { kinds: ["requestUrl"], why: "the plugin's HTTP port (requestUrl): the same two uses as http-client.ts, in Obsidian" },
  "hosts/node/bridge.ts": { kinds: ["MCP client transport"], why: "the stdio bridge: to the Vault MCP server URL it is given (127.0.0.1)" },
  "hosts/common/git-process.ts": { kinds: ["child_process"], why: "git: fetch/pull/push only when the owner turned on pushing or a client calls git_sync, with the owner's remotes and credentials" },
  "hosts/common/builtin-embedder.ts": { kinds: ["child_process"], why: "the built-in model's worker process: local files only (remote models off, its fetch answers from the model folder)" },
};

function sources(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.(ts|js|mjs|html)$/.test(e.name) ? [p] : [];
  });
}

function scan(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const file of sources(SRC)) {
    const text = fs.readFileSync(file, "utf8");
    const kinds = Object.entries(KINDS)
      .filter(([, re]) => re.test(text))
      .map(([k]) => k);
    if (kinds.length) found.set(path.relative(SRC, file).split(path.sep).join("/"), kinds);
  }
  return found;
}

test("only the listed modules of src/ can reach the network, each the way its line says", () => {
  const found = scan();
  const unlisted: string[] = [];
  for (const [file, kinds] of found) {
    const allowed = Object.hasOwn(ALLOWED, file) ? ALLOWED[file].kinds : [];
    const extra = kinds.filter((k) => !allowed.includes(k));
    if (extra.length) unlisted.push(`src/${file}: ${extra.join(", ")}`);
  }
  expect({
    unlisted,
    hint: unlisted.length ? "A new way to reach the network: add the module to ALLOWED in this test with why, and disclose it in the README's Network use and privacy section." : "",
  }).toEqual({ unlisted: [], hint: "" });

  const stale = Object.entries(ALLOWED)
    .filter(([file, { kinds }]) => kinds.some((k) => !(found.get(file) ?? []).includes(k)))
    .map(([file]) => file);
  expect(stale).toEqual([]);
});

test("the scan sees each kind of request (so a new one cannot slip past a broken pattern)", () => {
  const samples: Record<string, string> = {
    "node:http/https": 'import * as http from "node:http";',
    "node:net/tls/dgram": 'import { connect } from "node:tls";',
    requestUrl: "await requestUrl({ url });",
    fetch: "const r = await fetch(url);",
    "XMLHttpRequest/WebSocket/EventSource/sendBeacon": "navigator.sendBeacon(url, body);",
    "MCP client transport": "new SSEClientTransport(new URL(u));",
    child_process: 'import { spawn } from "node:child_process";',
    "electron net": 'const { net } = require("electron");',
    undici: 'import { request } from "undici";',
  };
  for (const [kind, code] of Object.entries(samples)) expect([kind, KINDS[kind].test(code)]).toEqual([kind, true]);
  // Not requests: a type-only import, a method named like one, the word in a string.
  expect(KINDS["node:http/https"].test('import type { Server } from "node:http";')).toBe(false);
  expect(KINDS.fetch.test("await this.git.fetch(remote);")).toBe(false);
});
