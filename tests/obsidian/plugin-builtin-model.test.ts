/**
 * The built plugin with the built-in model: on first use it writes its worker beside itself, fetches
 * the pinned runtime (transformers.js's browser build and onnxruntime-web's WebAssembly) from a
 * mirror of jsDelivr's paths, here a local server serving the npm files, checks them, and embeds the
 * vault with the tiny test model in a process of its own; semantic search then answers. A mirror
 * serving altered bytes is refused and nothing half-written is kept.
 */
import * as fs from "node:fs";
import { tmpdir } from "node:os";
import http from "node:http";
import type { AddressInfo } from "node:net";
import * as path from "node:path";
import { RUNTIME_FILES } from "../../src/hosts/common/builtin-runtime";
import { catalogModel } from "../../src/core/search/vector/model-catalog";
import { startHub, type HubFile } from "../support/hub-server";
import { writeTinyBert } from "../support/tiny-bert";
import { connect, freePort, installHooks, loadPlugin, makeVault, until } from "./harness";

installHooks();

/** Calls `embeddings_status` until `done` accepts it (bounded). */
async function statusUntil(client: Awaited<ReturnType<typeof connect>>, done: (s: Record<string, unknown>) => boolean, what: string, ms: number): Promise<Record<string, unknown>> {
  const end = Date.now() + ms;
  for (;;) {
    const st = (await client.callTool({ name: "embeddings_status", arguments: {} })).structuredContent as Record<string, unknown>;
    if (done(st)) return st;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(st)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const TOKEN = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";
const NODE_MODULES = path.resolve(__dirname, "../../node_modules");

/** A mirror of jsDelivr's npm paths over the installed packages, with Range support; `tamper` flips a byte of the WebAssembly. */
async function mirror(tamper = false): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const p = decodeURIComponent((req.url ?? "").replace(/^\/npm\//, ""));
    requests.push(p);
    const f = RUNTIME_FILES.find((x) => x.path === p);
    if (!f) {
      res.writeHead(404).end();
      return;
    }
    let bytes = fs.readFileSync(path.join(NODE_MODULES, p.replace(/@(\d[^/]*)\//, "/")));
    if (tamper && p.endsWith(".wasm")) {
      bytes = Buffer.from(bytes);
      bytes[1000] ^= 0xff;
    }
    const m = /bytes=(\d+)-(\d+)?/.exec(req.headers.range ?? "");
    if (m) {
      const start = Number(m[1]);
      const end = Math.min(bytes.length - 1, m[2] ? Number(m[2]) : bytes.length - 1);
      res.writeHead(206, { "Content-Range": `bytes ${start}-${end}/${bytes.length}`, "Content-Length": String(end - start + 1) });
      res.end(bytes.subarray(start, end + 1));
    } else {
      res.writeHead(200, { "Content-Length": String(bytes.length) });
      res.end(bytes);
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/npm/`,
    requests,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

test("the plugin fetches the pinned runtime once, runs the built-in model and answers semantic searches", async () => {
  const m = await mirror();
  const port = await freePort();
  const modelDir = writeTinyBert(fs.mkdtempSync(path.join(tmpdir(), "tiny-bert-")));
  const root = makeVault(
    { "Garden.md": "# Garden\n\nTomato and basil grow in the garden.\n", "Deploy.md": "# Deploy\n\nThe release pipeline runs the deploy script on the server.\n" },
    { version: 5, enabled: true, port, token: TOKEN, semanticProvider: "builtin", embeddingsModelDir: modelDir, embeddingsRuntimeUrl: m.url },
  );
  const { status } = await loadPlugin(root);
  await until(() => /listening|indexing|embedding/.test(status()), "the server to listen");
  const client = await connect(port, TOKEN);
  try {
    const st = await statusUntil(client, (x) => x.state === "ready" && x.chunks_embedded === x.chunks_total && Number(x.chunks_total) > 0, "the vault to be embedded", 60_000);
    expect(st).toMatchObject({ provider: "builtin", dimension: 8 });
    const pluginDir = path.join(root, ".obsidian/plugins/vault-mcp");
    for (const f of RUNTIME_FILES) expect(fs.statSync(path.join(pluginDir, "runtime", f.name)).size).toBe(f.bytes);
    expect(fs.existsSync(path.join(pluginDir, "embed-worker.mjs"))).toBe(true);
    const r = (await client.callTool({ name: "search", arguments: { query: "tomato basil", mode: "semantic", limit: 2 } })).structuredContent as { hits: { path: string }[] };
    expect(r.hits.length).toBeGreaterThan(0);
    expect(r.hits.map((h) => h.path)).toContain("Garden.md");
    // Every file was fetched once (in ranges), from the mirror's pinned paths only.
    expect(new Set(m.requests)).toEqual(new Set(RUNTIME_FILES.map((f) => f.path)));
  } finally {
    await client.close();
    await m.close();
  }
}, 120_000);

test("altered runtime bytes are refused: embedding says why, and no file that failed its checksum is kept", async () => {
  const m = await mirror(true);
  const port = await freePort();
  const modelDir = writeTinyBert(fs.mkdtempSync(path.join(tmpdir(), "tiny-bert-")));
  const root = makeVault({ "A.md": "# A\n\nalpha\n" }, { version: 5, enabled: true, port, token: TOKEN, semanticProvider: "builtin", embeddingsModelDir: modelDir, embeddingsRuntimeUrl: m.url });
  const { status } = await loadPlugin(root);
  await until(() => /listening|indexing|embedding/.test(status()), "the server to listen");
  const client = await connect(port, TOKEN);
  try {
    await statusUntil(client, (x) => typeof x.last_error === "string" && /checksum|SHA-256/i.test(x.last_error), "the checksum failure to be reported", 60_000);
    const wasm = path.join(root, ".obsidian/plugins/vault-mcp/runtime/ort-wasm-simd-threaded.asyncify.wasm");
    expect(fs.existsSync(wasm)).toBe(false);
  } finally {
    await client.close();
    await m.close();
  }
}, 120_000);

test("one click: a model of the list is fetched from the hub into the plugin's folder, each file checked; a file that is not the pinned one is refused and said so everywhere", async () => {
  const m = await mirror();
  const tiny = writeTinyBert(fs.mkdtempSync(path.join(tmpdir(), "tiny-bert-")));
  const MINI = catalogModel("Xenova/all-MiniLM-L6-v2")!;
  // The tiny model under all-MiniLM-L6-v2's file names: the small files pass the hub's stated hashes;
  // the ONNX file is not the pinned one (22,868,510 bytes, its SHA-256), so it is never installed.
  const hub = await startHub(new Map<string, HubFile>(MINI.files.map((f) => [`${MINI.id}/${f.name}`, { bytes: new Uint8Array(fs.readFileSync(path.join(tiny, f.name.endsWith(".onnx") ? "onnx/model.onnx" : f.name))), lfs: f.name.endsWith(".onnx") }])));
  const port = await freePort();
  const root = makeVault(
    { "A.md": "# A\n\nalpha\n" },
    { version: 5, enabled: true, port, token: TOKEN, semanticProvider: "builtin", builtinModel: MINI.id, embeddingsHubUrl: hub.url, embeddingsRuntimeUrl: m.url },
  );
  const { status } = await loadPlugin(root);
  await until(() => /listening|indexing|embedding|downloading/.test(status()), "the server to listen");
  const client = await connect(port, TOKEN);
  try {
    const st = await statusUntil(client, (x) => x.state === "unavailable" && typeof x.last_error === "string", "the refusal to be reported", 60_000);
    expect(st).toMatchObject({ provider: "builtin", model: MINI.id, download: null });
    expect(st.last_error).toMatch(/could not be downloaded: The server now serves onnx\/model_quantized.onnx with \d+ bytes where 22868510 are pinned: not downloaded/);
    const dir = path.join(root, ".obsidian/plugins/vault-mcp/models/Xenova--all-MiniLM-L6-v2");
    for (const f of ["config.json", "tokenizer.json", "tokenizer_config.json"]) expect(fs.existsSync(path.join(dir, f))).toBe(true);
    expect(fs.existsSync(path.join(dir, "onnx/model_quantized.onnx"))).toBe(false);
    expect(fs.existsSync(path.join(dir, "onnx/model_quantized.onnx.part"))).toBe(false);
    expect(hub.seen.some((l) => l.startsWith(`hub GET /${MINI.id}/resolve/main/onnx/model_quantized.onnx`))).toBe(true);
    // The status bar says it in the same words.
    await until(() => status() === "MCP: embeddings unavailable", "the status bar to say so");
  } finally {
    await client.close();
    await m.close();
    await hub.close();
  }
}, 120_000);
