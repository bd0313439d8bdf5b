import * as nodePath from "node:path";
import { knownPrefixes } from "../../core/search/vector/embedder";
import { ensureModelFiles, rangeFetchOver, type DownloadProgress, type ModelFile } from "../../core/search/vector/model-files";
import { BuiltinEmbedder } from "./builtin-embedder";
import { nodeBinaryHttp } from "./http-client";
import { FsModelFolder } from "./model-folder";
import type { ModelDownloader } from "./model-download";

/**
 * The built-in model's runtime as the plugin fetches it when the owner turns the model on: the
 * self-contained browser build of transformers.js (onnxruntime-web's JavaScript inside it) and the
 * onnxruntime-web WebAssembly it loads, from the npm registry's files as jsDelivr serves them (or a
 * mirror of the same paths), each checked against the SHA-256 of the file in the npm package we
 * build and test with (tests/unit/builtin-runtime.test.ts holds these pins to node_modules).
 */
export const TRANSFORMERS_VERSION = "4.3.1";
/** The onnxruntime-web that transformers.js 4.3.1 bundles (its `env.versions.web`). */
export const ONNXRUNTIME_WEB_VERSION = "1.31.0-dev.20260914-8d85527a0";

export const DEFAULT_RUNTIME_URL = "https://cdn.jsdelivr.net/npm/";

/** The library file inside the runtime folder (what the worker imports). */
export const RUNTIME_LIBRARY = "transformers.min.js";

export const RUNTIME_FILES: readonly { name: string; path: string; bytes: number; sha256: string }[] = [
  {
    name: RUNTIME_LIBRARY,
    path: `@huggingface/transformers@${TRANSFORMERS_VERSION}/dist/transformers.min.js`,
    bytes: 586_230,
    sha256: "8d6716d9086f57c30a4bf367dba61b887593573c770c454465e8019b2703e743",
  },
  {
    name: "ort-wasm-simd-threaded.asyncify.mjs",
    path: `onnxruntime-web@${ONNXRUNTIME_WEB_VERSION}/dist/ort-wasm-simd-threaded.asyncify.mjs`,
    bytes: 53_057,
    sha256: "0966b6105cd936744498aa60df7a22cbd47af3374dbc64a9ab561c08a71e3611",
  },
  {
    name: "ort-wasm-simd-threaded.asyncify.wasm",
    path: `onnxruntime-web@${ONNXRUNTIME_WEB_VERSION}/dist/ort-wasm-simd-threaded.asyncify.wasm`,
    bytes: 26_861_777,
    sha256: "49871f5a4409519797e127440868a6d1923339d9185907f301a5b2a1d90af082",
  },
];

/** Total download, for the settings tab and the README. */
export const RUNTIME_BYTES = RUNTIME_FILES.reduce((n, f) => n + f.bytes, 0);

/** The files to fetch, from `baseUrl` (jsDelivr's npm root, or a mirror of its paths). */
export function runtimeFiles(baseUrl = DEFAULT_RUNTIME_URL): ModelFile[] {
  const base = baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`;
  return RUNTIME_FILES.map((f) => ({ name: f.name, url: base + f.path, bytes: f.bytes, sha256: f.sha256 }));
}

/** What the plugin needs to run the built-in model (all paths absolute). */
export interface PluginModelOptions {
  /** The plugin's folder: the worker file and `runtime/` go there. */
  pluginDir: string;
  /** The model's folder (config.json, tokenizer.json, onnx/model.onnx). */
  modelDir: string;
  /** A model of the list: its name, dtype, and its download into `modelDir` (absent: the owner's own folder). */
  model?: string;
  dtype?: "fp32" | "q8";
  download?: ModelDownloader;
  /** jsDelivr's npm root or a mirror of its paths. */
  runtimeUrl?: string;
  /** Writes the worker's source to `workerFile` when it differs (the plugin's vault adapter). */
  writeWorker: (workerFile: string) => Promise<void>;
  onProgress?: (p: DownloadProgress) => void;
  /** The runtime is there, or fetching it failed (it is tried again when embedding next starts). */
  onSettled?: () => void;
}

/**
 * The built-in model inside Obsidian: the same worker process as headless (Electron run as Node),
 * its runtime fetched into the plugin's folder the first time it is needed (resumable, checked
 * against the pins above), the model read from the owner's model folder.
 */
export function pluginBuiltinEmbedder(o: PluginModelOptions): BuiltinEmbedder {
  const runtimeDir = nodePath.join(o.pluginDir, "runtime");
  const workerFile = nodePath.join(o.pluginDir, "embed-worker.mjs");
  const model = o.model ?? nodePath.basename(nodePath.resolve(o.modelDir));
  return new BuiltinEmbedder({
    modelDir: o.modelDir,
    model,
    ...(o.dtype ? { dtype: o.dtype } : {}),
    ...(o.download ? { download: o.download } : {}),
    prefixes: knownPrefixes(model),
    workerFile,
    libraryFile: nodePath.join(runtimeDir, RUNTIME_LIBRARY),
    wasmDir: runtimeDir,
    prepare: async () => {
      try {
        await o.writeWorker(workerFile);
        await ensureModelFiles(runtimeFiles(o.runtimeUrl || DEFAULT_RUNTIME_URL), new FsModelFolder(runtimeDir), rangeFetchOver(nodeBinaryHttp), o.onProgress);
      } finally {
        o.onSettled?.();
      }
    },
  });
}
