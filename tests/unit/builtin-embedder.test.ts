/**
 * The built-in model's real path, offline: transformers.js (web build) on onnxruntime-web's WASM in a
 * worker thread, loading a tiny BERT-shaped ONNX model the test writes, then the semantic service
 * building on it. (The plugin's download of a real model is model-files.test.ts.)
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { MemoryVault } from "../../src/core/memory-vault";
import { AccessPolicy } from "../../src/core/policy";
import { MemoryStateStore } from "../../src/core/state";
import { EmbedderError } from "../../src/core/search/vector/embedder";
import { SemanticService } from "../../src/core/search/vector/semantic-service";
import { BuiltinEmbedder } from "../../src/hosts/common/builtin-embedder";
import { writeTinyBert } from "../support/tiny-bert";

const tmp = mkdtempSync(path.join(os.tmpdir(), "vault-mcp-tiny-bert-"));
const modelDir = writeTinyBert(path.join(tmp, "tiny-bert"));
// Built by `npm test` (node esbuild.config.mjs production) before the suites run.
const workerFile = path.resolve(__dirname, "../../dist/embed-worker.mjs");

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("built-in model (transformers.js in a worker)", () => {
  test("loads the model from its folder and embeds: normalized vectors of its dimension, the same for the same text", async () => {
    const e = new BuiltinEmbedder({ modelDir, workerFile });
    try {
      expect(e.dimension()).toBeNull();
      const [a, b, a2] = await e.embed(["the deploy pipeline", "basil pesto", "the deploy pipeline"], "passage");
      expect(e.dimension()).toBe(8);
      expect(a).toHaveLength(8);
      expect(Math.hypot(...a)).toBeCloseTo(1, 4);
      expect(Array.from(a2)).toEqual(Array.from(a));
      expect(Array.from(b)).not.toEqual(Array.from(a));
      expect(e.model).toBe("tiny-bert");
    } finally {
      await e.close();
    }
  }, 60_000);

  test("the semantic service builds on it", async () => {
    const vault = new MemoryVault({ "Deploy.md": "# Deploy\n\nthe deploy pipeline and the release script\n", "Garden.md": "# Garden\n\nbasil and tomatoes\n" });
    const svc = new SemanticService({ port: vault, policy: new AccessPolicy({ configDir: ".obsidian" }), store: new MemoryStateStore(), embedder: new BuiltinEmbedder({ modelDir, workerFile }) });
    await svc.start();
    expect(await svc.waitForIdle(60_000)).toBe(true);
    expect(svc.status()).toMatchObject({ provider: "builtin", model: "tiny-bert", dimension: 8, state: "ready", chunks_embedded: 2, last_error: null });
    const v = await svc.embedQuery("deploy pipeline");
    expect(svc.nearest(v, 1)[0].doc.path).toBe("Deploy.md");
    await svc.close();
  }, 60_000);

  test("a folder without a model is a clear, retryable error", async () => {
    const e = new BuiltinEmbedder({ modelDir: path.join(tmp, "nothing"), workerFile });
    const err = await e.embed(["x"], "query").catch((x: unknown) => x);
    expect(err).toBeInstanceOf(EmbedderError);
    expect(err).toMatchObject({ retryable: true, message: expect.stringMatching(/no config.json/) });
    await e.close();
  });
});
