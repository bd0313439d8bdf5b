/**
 * The built-in model's worker (dist/embed-worker.mjs, a child process): transformers.js's web build on
 * onnxruntime-web (WASM), offline, reading the model's files from a folder. It only embeds texts the
 * main thread sends; it never reads notes or touches the network.
 */
import { readFile } from "node:fs/promises";
import * as nodePath from "node:path";
import { pathToFileURL } from "node:url";

export interface EmbedWorkerData {
  /** The folder holding `config.json`, `tokenizer.json`, `onnx/model*.onnx`. */
  modelDir: string;
  /** Where onnxruntime-web's `ort-wasm-*.{mjs,wasm}` are. */
  wasmDir: string;
  /** transformers.js's web build (`dist/transformers.web.js` of the installed package). */
  libraryFile: string;
  /** "fp32" (onnx/model.onnx) or "q8" (onnx/model_quantized.onnx). */
  dtype: "fp32" | "q8";
}

export type EmbedRequest = { id: number; texts: string[] } | { close: true };
export type EmbedReply = { id: number; vectors?: Float32Array[]; error?: string } | { ready: true; dimension: number } | { failed: string };

type FeatureExtractor = (texts: string[], opts: { pooling: "mean"; normalize: boolean }) => Promise<{ dims: number[]; data: Float32Array }>;

async function load(data: EmbedWorkerData): Promise<FeatureExtractor> {
  // The web build decides it is in Node by `process.release` and would then want onnxruntime-node.
  const release = process.release;
  Object.defineProperty(process, "release", { value: undefined, configurable: true });
  let t: typeof import("@huggingface/transformers");
  try {
    // The installed package's web build itself (what the plugin runs), not its Node build. The path
    // is the one the parent resolved from node_modules, never input from a client.
    // eslint-disable-next-line no-unsanitized/method -- a file URL of our own dependency, resolved by the host
    t = (await import(pathToFileURL(data.libraryFile).href)) as typeof import("@huggingface/transformers");
  } finally {
    Object.defineProperty(process, "release", { value: release, configurable: true });
  }
  const { env, pipeline } = t;
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.useBrowserCache = false;
  // Bundled for Node, the library would read `localModelPath` from the disk itself: every file goes
  // through `env.fetch` below instead, which only answers from the model folder.
  env.useFS = false;
  env.useFSCache = false;
  env.localModelPath = "/model/";
  // Every file comes from the model folder, never from the network.
  env.fetch = async (url: string | URL | Request) => {
    const p = String(url instanceof Request ? url.url : url);
    if (!p.startsWith("/model/")) return new Response(null, { status: 404 });
    const rel = p.slice("/model/local/".length);
    const file = nodePath.resolve(data.modelDir, rel);
    if (!file.startsWith(nodePath.resolve(data.modelDir) + nodePath.sep)) return new Response(null, { status: 404 });
    try {
      return new Response(await readFile(file));
    } catch {
      return new Response(null, { status: 404 });
    }
  };
  const wasm = env.backends.onnx.wasm;
  if (wasm) {
    wasm.wasmPaths = data.wasmDir.endsWith("/") ? data.wasmDir : `${data.wasmDir}/`;
    wasm.numThreads = 1;
  }
  const extractor: unknown = await pipeline("feature-extraction", "local", { dtype: data.dtype, device: "wasm" });
  return extractor as FeatureExtractor;
}

/**
 * Runs in a process of its own (forked with `--liftoff-only`: V8 optimising onnxruntime's 14 MB of
 * WebAssembly held the event loop for ~28 s after the first inference, in a thread or a process
 * alike). The first message is the setup; then requests, one at a time, in order.
 */
function main(): void {
  const send = (m: EmbedReply) => process.send?.(m);
  let extract: FeatureExtractor | null = null;
  let chain = Promise.resolve();
  process.on("message", (msg: EmbedRequest | { init: EmbedWorkerData }) => {
    if ("init" in msg) {
      chain = chain.then(async () => {
        try {
          extract = await load(msg.init);
          const probe = await extract(["probe"], { pooling: "mean", normalize: true });
          send({ ready: true, dimension: probe.dims[probe.dims.length - 1] });
        } catch (e) {
          send({ failed: e instanceof Error ? e.message : String(e) });
        }
      });
      return;
    }
    if ("close" in msg) process.exit(0);
    const req = msg;
    chain = chain.then(async () => {
      try {
        if (!extract) throw new Error("the model is not loaded");
        const out = await extract(req.texts, { pooling: "mean", normalize: true });
        const dim = out.dims[out.dims.length - 1];
        send({ id: req.id, vectors: req.texts.map((_, i) => out.data.slice(i * dim, (i + 1) * dim)) });
      } catch (e) {
        send({ id: req.id, error: e instanceof Error ? e.message : String(e) });
      }
    });
  });
  // The parent went away: so does this process.
  process.on("disconnect", () => process.exit(0));
}

main();
