/**
 * The built-in embedding model headless: transformers.js in a process of its own (embed-worker.ts),
 * so inference never holds the event loop; this side only sends batches and takes vectors back. The
 * model's files come from a folder (installed by hand, or fetched by model-files.ts).
 */
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import * as nodePath from "node:path";
import { fork, type ChildProcess } from "node:child_process";
import { EmbedderError, type Embedder, type EmbedderDownload, type EmbedKind } from "../../core/search/vector/embedder";
import { ModelDownloadError } from "../../core/search/vector/model-files";
import type { ModelDownloader } from "./model-download";
import type { EmbedReply, EmbedWorkerData } from "./embed-worker";

export interface BuiltinEmbedderOptions {
  modelDir: string;
  /** A name for status and for the saved vectors' key (default: the folder's name). */
  model?: string;
  /** dist/embed-worker.mjs, run as a child process (default: beside this file, as in dist/cli.js). */
  workerFile?: string;
  /** onnxruntime-web's dist folder (default: the installed package's). */
  wasmDir?: string;
  /** transformers.js's browser build (default: the installed package's web build). */
  libraryFile?: string;
  /** Runs before the worker starts, once per start (the plugin fetches the runtime and writes the worker file). */
  prepare?: () => Promise<void>;
  dtype?: "fp32" | "q8";
  batchSize?: number;
  /** Prefixes for e5-style models; none by default. */
  prefixes?: { query: string; passage: string };
  /** The model's files, fetched into `modelDir` before the worker starts (a catalog model); absent: the folder is the owner's. */
  download?: ModelDownloader;
}

/** The folder of an installed package (walking up from its entry point), resolved at run time from `from`. */
function packageDir(name: string, from: string): string {
  let dir = nodePath.dirname(createRequire(from).resolve(name));
  while (!existsSync(nodePath.join(dir, "package.json"))) dir = nodePath.dirname(dir);
  return dir;
}

/** The installed transformers.js's web build (the one the plugin runs). */
export function defaultLibraryFile(): string {
  return nodePath.join(packageDir("@huggingface/transformers", __filename), "dist", "transformers.web.js");
}

/** The onnxruntime-web that transformers.js uses (its version's WASM): its dist folder. */
export function defaultWasmDir(): string {
  const lib = packageDir("@huggingface/transformers", __filename);
  return nodePath.join(packageDir("onnxruntime-web", nodePath.join(lib, "package.json")), "dist");
}

export class BuiltinEmbedder implements Embedder {
  readonly provider = "builtin";
  readonly model: string;
  readonly batchSize: number;
  private dim: number | null = null;
  private worker: ChildProcess | null = null;
  private ready: Promise<void> | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();

  constructor(private readonly opts: BuiltinEmbedderOptions) {
    this.model = opts.model ?? nodePath.basename(nodePath.resolve(opts.modelDir));
    this.batchSize = opts.batchSize ?? 16;
  }

  dimension(): number | null {
    return this.dim;
  }

  download(): EmbedderDownload | null {
    return this.opts.download?.progress() ?? null;
  }

  cancelDownload(): boolean {
    return this.opts.download?.cancel() ?? false;
  }

  watch(cb: () => void): () => void {
    return this.opts.download?.watch(cb) ?? (() => undefined);
  }

  /** Starts the worker and loads the model, once. */
  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const file = this.opts.workerFile ?? nodePath.join(__dirname, "embed-worker.mjs");
    const prepared = (this.opts.prepare
      ? this.opts.prepare().catch((e: unknown) => {
          throw new EmbedderError(`The built-in model's runtime is not ready: ${e instanceof Error ? e.message : String(e)}`, true);
        })
      : Promise.resolve()
    ).then(() =>
      this.opts.download?.run().catch((e: unknown) => {
        const cancelled = e instanceof ModelDownloadError && e.cancelled;
        throw new EmbedderError(`The built-in model could not be downloaded: ${e instanceof Error ? e.message : String(e)}`, true, cancelled);
      }),
    );
    this.ready = prepared.then(() => new Promise<void>((resolve, reject) => {
      if (!existsSync(nodePath.join(this.opts.modelDir, "config.json"))) {
        reject(new EmbedderError(`The model folder has no config.json; put the model's files (config.json, tokenizer.json, onnx/model.onnx) there.`, true));
        return;
      }
      const data: EmbedWorkerData = { modelDir: this.opts.modelDir, wasmDir: this.opts.wasmDir ?? defaultWasmDir(), libraryFile: this.opts.libraryFile ?? defaultLibraryFile(), dtype: this.opts.dtype ?? "fp32" };
      // Structured clone for the vectors; Liftoff only (see embed-worker.ts). Inside Obsidian
      // `process.execPath` is Electron: ELECTRON_RUN_AS_NODE makes it a plain Node (ignored by Node).
      const w = fork(file, [], { serialization: "advanced", execArgv: ["--liftoff-only"], stdio: ["ignore", "ignore", "pipe", "ipc"], env: { ...process.env, ELECTRON_RUN_AS_NODE: "1" } });
      this.worker = w;
      w.send({ init: data });
      w.on("message", (m: EmbedReply) => {
        if ("ready" in m) {
          this.dim = m.dimension;
          this.idle();
          resolve();
        } else if ("failed" in m) {
          reject(new EmbedderError(`The built-in model could not be loaded: ${m.failed}`, true));
        } else {
          const p = this.waiting.get(m.id);
          this.waiting.delete(m.id);
          this.idle();
          if (!p) return;
          if (m.vectors) p.resolve(m.vectors);
          else p.reject(new EmbedderError(`The built-in model failed: ${m.error ?? "no answer"}`, false));
        }
      });
      let stderr = "";
      w.stderr?.on("data", (c: Buffer) => (stderr = (stderr + c.toString("utf8")).slice(-2000)));
      const stopped = (why: string) => {
        const err = new EmbedderError(`The built-in model's worker stopped: ${why}`, true);
        reject(err);
        for (const p of this.waiting.values()) p.reject(err);
        this.waiting.clear();
        this.worker = null;
        this.ready = null;
      };
      w.on("error", (e) => stopped(e.message));
      w.on("exit", (code) => {
        if (this.worker === w) stopped(`exit code ${code}${stderr ? `: ${stderr.trim().split("\n").pop()}` : ""}`);
      });
    }));
    // A failed start is tried again on the next call.
    this.ready.catch(() => {
      this.worker?.kill();
      this.worker = null;
      this.ready = null;
    });
    return this.ready;
  }

  async embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    await this.start();
    const prefix = this.opts.prefixes?.[kind] ?? "";
    const w = this.worker;
    if (!w) throw new EmbedderError("The built-in model's worker is not running.", true);
    const id = this.nextId++;
    // Waited for: the thread keeps the process alive until it answers (an idle one does not).
    w.ref();
    w.channel?.ref();
    return new Promise<Float32Array[]>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      w.send({ id, texts: prefix ? texts.map((t) => prefix + t) : texts });
    });
  }

  /** Nothing asked of the worker: it does not keep the process alive. */
  private idle(): void {
    if (this.waiting.size > 0) return;
    this.worker?.unref();
    this.worker?.channel?.unref();
  }

  /**
   * Asks the worker to leave and returns without waiting for the thread to end.
   */
  close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    this.ready = null;
    for (const p of this.waiting.values()) p.reject(new EmbedderError("The built-in model was closed.", true));
    this.waiting.clear();
    if (w?.connected) w.send({ close: true });
    w?.unref();
    return Promise.resolve();
  }
}
