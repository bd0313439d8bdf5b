/**
 * The headless server with a built-in model of the list (`--embeddings builtin --embeddings-model
 * NAME`), as a user starts it: nothing is downloaded before, the model's files come from a hub-like
 * local server (its URL given as --embeddings-url, a mirror) into the state folder's models/, checked,
 * then loaded; the console (stderr) tells the download, the build and ready in embeddings_status's words.
 * The tiny test model is served under multilingual-e5-small's file names; its pins are lifted for the
 * test through the CLI's test-only catalog variable.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { catalogModel, DEFAULT_BUILTIN_MODEL, type CatalogModel } from "../../src/core/search/vector/model-catalog";
import { startChildServer, type ChildServer } from "../support/child-server";
import { makeTempVault, ok } from "../support/harness";
import { startHub, type HubFile, type HubServer } from "../support/hub-server";
import { writeTinyBert } from "../support/tiny-bert";

describe("headless: a built-in model downloaded on first use", () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "vault-mcp-semantic-download-"));
  const E5 = catalogModel(DEFAULT_BUILTIN_MODEL)!;
  const testModel: CatalogModel = { ...E5, files: E5.files.map((f) => ({ name: f.name, maxBytes: 1024 * 1024 })) };
  let hub: HubServer;
  let root: string;
  let server: ChildServer | undefined;
  let client: Client | undefined;
  const stateDir = path.join(tmp, "state");

  beforeAll(async () => {
    const tiny = writeTinyBert(path.join(tmp, "tiny"));
    const files = new Map<string, HubFile>(
      E5.files.map((f) => [`${E5.id}/${f.name}`, { bytes: new Uint8Array(readFileSync(path.join(tiny, f.name.endsWith(".onnx") ? "onnx/model.onnx" : f.name))), lfs: f.name === "tokenizer.json" || f.name.endsWith(".onnx") }]),
    );
    hub = await startHub(files);
    root = makeTempVault({ "Deploy.md": "# Deploy\n\nthe deploy pipeline and the release script\n", "Garden.md": "# Garden\n\nbasil pesto and tomato\n" });
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
    await hub.close();
    rmSync(root, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  const start = async (args: string[]) => {
    server = await startChildServer(root, { stateDir, args, env: { VAULT_MCP_TEST_MODEL_CATALOG: JSON.stringify([testModel]) } });
    client = await server.connect();
    return { server, client };
  };

  test("without --embeddings nothing is downloaded", async () => {
    const s = await start([]);
    await ok(s.client, "search", { query: "deploy" });
    expect(hub.seen).toEqual([]);
    await s.client.close();
    await s.server.stop();
    client = undefined;
    server = undefined;
  }, 60_000);

  test("--embeddings builtin --embeddings-model NAME: downloaded into the state folder, checked, embedded; the console tells it", async () => {
    const s = await start(["--embeddings", "builtin", "--embeddings-model", "multilingual-e5-small", "--embeddings-url", hub.url]);
    let st = await ok(s.client, "embeddings_status");
    for (let i = 0; i < 300 && !(st.state === "ready" && st.chunks_embedded === 2); i++) {
      await new Promise((r) => setTimeout(r, 50));
      st = await ok(s.client, "embeddings_status");
    }
    expect(st).toMatchObject({ provider: "builtin", model: "Xenova/multilingual-e5-small", dimension: 8, state: "ready", chunks_embedded: 2, last_error: null, download: null });
    const dir = path.join(stateDir, "models", "Xenova--multilingual-e5-small");
    for (const f of E5.files) expect(existsSync(path.join(dir, f.name))).toBe(true);
    expect(hub.seen.some((l) => l.startsWith("cdn GET /Xenova/multilingual-e5-small/onnx/model_quantized.onnx"))).toBe(true);
    const res = await ok(s.client, "search", { query: "deploy pipeline", mode: "semantic", limit: 1 });
    expect(res).toMatchObject({ mode: "semantic", hits: [{ path: "Deploy.md" }] });
    const log = s.server.stderr();
    expect(log).toMatch(/\[vault-mcp\] Embeddings downloading: the model Xenova\/multilingual-e5-small/);
    expect(log).toMatch(/\[vault-mcp\] Embeddings ready: 2 sections embedded \(builtin model Xenova\/multilingual-e5-small, 8 dimensions\)/);
    // The console listens from before embedding starts: loading, the download, then ready, in order,
    // however quick the download (a tiny model from a local hub ended before a later listener came).
    const states = [...log.matchAll(/\[vault-mcp\] Embeddings (\w+):/g)].map((m) => m[1]);
    expect(states[0]).toBe("loading");
    expect(states.indexOf("downloading")).toBeGreaterThan(0);
    expect(states.lastIndexOf("ready")).toBeGreaterThan(states.indexOf("downloading"));
    // A second start finds the checked files and asks the hub nothing.
    await s.client.close();
    await s.server.stop();
    hub.seen.length = 0;
    const again = await start(["--embeddings", "builtin", "--embeddings-model", "Xenova/multilingual-e5-small", "--embeddings-url", hub.url]);
    await ok(again.client, "build_embeddings", { force: true });
    let st2 = await ok(again.client, "embeddings_status");
    for (let i = 0; i < 300 && !(st2.state === "ready" && st2.chunks_embedded === 2); i++) {
      await new Promise((r) => setTimeout(r, 50));
      st2 = await ok(again.client, "embeddings_status");
    }
    expect(st2.state).toBe("ready");
    expect(hub.seen).toEqual([]);
  }, 90_000);

  test("a name not on the list: the server says which names are", async () => {
    const r = spawnSync(process.execPath, [path.resolve(__dirname, "../../dist/cli.js"), root, "--state-dir", path.join(tmp, "state2"), "--embeddings", "builtin", "--embeddings-model", "no-such-model"], { encoding: "utf8", timeout: 30_000 });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/"no-such-model" is not a built-in model; choose one of Xenova\/multilingual-e5-small, Xenova\/all-MiniLM-L6-v2/);
  }, 40_000);
});
