/**
 * The embedding port: whatever turns texts into vectors (a model run in-process, Ollama, an
 * OpenAI-compatible endpoint, the tests' deterministic embedder) behind one interface, and the checks
 * every answer passes before a vector is kept. Knows no index and does no I/O itself.
 */

/** e5-style models embed a query and a passage differently (a prefix); others ignore it. */
export type EmbedKind = "query" | "passage";

export interface Embedder {
  /** Which provider: "builtin", "ollama", "openai", "hashing". */
  readonly provider: string;
  readonly model: string;
  /** The vectors' length; null until known (a remote model tells on its first answer). */
  dimension(): number | null;
  /** Texts per call. */
  readonly batchSize: number;
  /** One vector per text, in order. Throws EmbedderError when the provider fails. */
  embed(texts: string[], kind: EmbedKind, signal?: AbortSignal): Promise<Float32Array[]>;
  /** Releases a worker or a model, when there is one. */
  close?(): Promise<void>;
  /** The model's files being downloaded before it can run (the built-in model), else null. */
  download?(): EmbedderDownload | null;
  /** Stops a download under way; what is fetched stays and is resumed when embedding is asked for again. */
  cancelDownload?(): boolean;
  /** Forgets the vectors' length, so the next answer sets it (a forced rebuild). */
  resetDimension?(): void;
  /** Calls `cb` when `download()` changes; returns the unsubscribe. */
  watch?(cb: () => void): () => void;
}

/** A model download under way: the file being fetched, and the bytes of all files. */
export interface EmbedderDownload {
  file: string;
  files_done: number;
  files_total: number;
  bytes_done: number;
  bytes_total: number;
}

/**
 * The prefixes some models were trained with, by model name: e5 models read "query: " and
 * "passage: ", nomic-embed models "search_query: " and "search_document: ". Others: none.
 */
export function knownPrefixes(model: string): { query: string; passage: string } | undefined {
  const m = model.toLowerCase();
  if (/(^|[^a-z0-9])e5([^a-z0-9]|$)|multilingual-e5|e5-(small|base|large)/.test(m)) return { query: "query: ", passage: "passage: " };
  if (m.includes("nomic-embed")) return { query: "search_query: ", passage: "search_document: " };
  return undefined;
}

/** A provider's failure; `retryable` when trying again later may work (down, busy, timed out). */
export class EmbedderError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** Not tried again by itself: the owner stopped it (a cancelled download); asking again resumes. */
    readonly held = false,
  ) {
    super(message);
    this.name = "EmbedderError";
  }
}

/**
 * Checks a provider's answer: as many vectors as texts, each a list of finite numbers of one length
 * (the known dimension, when there is one), not all zero. Returns them as Float32Arrays.
 */
export function checkVectors(raw: unknown, count: number, dimension: number | null, provider: string): Float32Array[] {
  if (!Array.isArray(raw) || raw.length !== count) {
    throw new EmbedderError(`${provider} returned ${Array.isArray(raw) ? raw.length : "no"} vectors for ${count} texts.`, false);
  }
  const out: Float32Array[] = [];
  let dim = dimension;
  for (const v of raw as unknown[]) {
    if (!Array.isArray(v) && !(v instanceof Float32Array)) throw new EmbedderError(`${provider} returned a vector that is not a list of numbers.`, false);
    const arr = v as ArrayLike<unknown>;
    if (dim === null) dim = arr.length;
    if (arr.length !== dim || dim === 0) throw new EmbedderError(`${provider} returned a vector of ${arr.length} numbers where ${dim} were expected; check the model setting.`, false);
    const f = new Float32Array(dim);
    let norm = 0;
    for (let i = 0; i < dim; i++) {
      const x = arr[i];
      if (typeof x !== "number" || !Number.isFinite(x)) throw new EmbedderError(`${provider} returned a vector with a value that is not a finite number.`, false);
      f[i] = x;
      norm += x * x;
    }
    if (norm === 0) throw new EmbedderError(`${provider} returned an all-zero vector.`, false);
    out.push(f);
  }
  return out;
}

/** Scales `v` to length 1 in place (cosine similarity becomes a dot product). */
export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i] * v[i];
  const s = n > 0 ? 1 / Math.sqrt(n) : 0;
  for (let i = 0; i < v.length; i++) v[i] *= s;
  return v;
}
