/**
 * Embedding providers over HTTP: Ollama (`/api/embed`) and any OpenAI-compatible `/v1/embeddings`
 * endpoint (LM Studio, llama.cpp's server, OpenAI). Batches, timeouts, retries with backoff, answers
 * checked; the API key goes in a header only, never into a message. I/O only through the HTTP port.
 */
import type { HttpClient } from "../../http";
import { errText } from "../../strings";
import { setTimer } from "../../timers";
import { checkVectors, EmbedderError, type Embedder, type EmbedKind } from "./embedder";

export type RemoteKind = "ollama" | "openai";

/** Each provider's URL and model when the owner names none. */
export const REMOTE_DEFAULTS: Readonly<Record<RemoteKind, { url: string; model: string }>> = {
  ollama: { url: "http://localhost:11434", model: "nomic-embed-text" },
  openai: { url: "https://api.openai.com/v1", model: "text-embedding-3-small" },
};

export interface RemoteEmbedderOptions {
  kind: RemoteKind;
  /** The server: `http://localhost:11434` (Ollama), `http://localhost:1234/v1` or `https://api.openai.com/v1`. */
  url: string;
  model: string;
  apiKey?: string;
  http: HttpClient;
  /** Texts per request (default 32). */
  batchSize?: number;
  /** Per request (default 60 s: a first request may wait for the model to load). */
  timeoutMs?: number;
  /** Tries after the first, on no answer, 429 or 5xx (default 2), waiting 0.5 s, 1 s, … between. */
  retries?: number;
  /** Prefixes for e5-style models (`query: `, `passage: `); none by default. */
  prefixes?: { query: string; passage: string };
  sleep?: (ms: number) => Promise<void>;
}

export class RemoteEmbedder implements Embedder {
  readonly provider: RemoteKind;
  readonly model: string;
  readonly batchSize: number;
  private dim: number | null = null;
  private readonly endpoint: string;

  constructor(private readonly opts: RemoteEmbedderOptions) {
    this.provider = opts.kind;
    this.model = opts.model;
    this.batchSize = opts.batchSize ?? 32;
    this.endpoint = endpointOf(opts.kind, opts.url);
  }

  dimension(): number | null {
    return this.dim;
  }

  resetDimension(): void {
    this.dim = null;
  }

  async embed(texts: string[], kind: EmbedKind): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize);
      const prefix = this.opts.prefixes?.[kind] ?? "";
      out.push(...(await this.request(prefix ? batch.map((t) => prefix + t) : batch)));
    }
    return out;
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    const { http, model, apiKey } = this.opts;
    const retries = this.opts.retries ?? 2;
    const sleep = this.opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimer(r, ms)));
    // eslint-disable-next-line no-restricted-syntax -- our own header names
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (apiKey) headers.Authorization = `Bearer ${apiKey}`;
    const body = JSON.stringify({ model, input });
    let last = "";
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await sleep(500 * 2 ** (attempt - 1));
      let status: number;
      let text: string;
      try {
        ({ status, text } = await http({ url: this.endpoint, method: "POST", headers, body, timeoutMs: this.opts.timeoutMs ?? 60_000 }));
      } catch (e) {
        last = `no answer from ${this.where(false)} (${this.redact(errText(e))})`;
        continue;
      }
      if (status === 429 || status >= 500) {
        last = `${this.where()} answered HTTP ${status}${detail(text, (s) => this.redact(s))}`;
        continue;
      }
      if (status !== 200) {
        // Misconfigured (a wrong model, URL or key): retried later, when the owner may have fixed it.
        throw new EmbedderError(`${this.where()} answered HTTP ${status}${detail(text, (s) => this.redact(s))}${hint(this.provider, status, this.model)}`, true);
      }
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new EmbedderError(`${this.where()} answered with something that is not JSON.`, false);
      }
      const vectors = checkVectors(this.vectorsOf(json), input.length, this.dim, this.provider);
      this.dim ??= vectors[0].length;
      return vectors;
    }
    throw new EmbedderError(last, true);
  }

  private vectorsOf(json: unknown): unknown {
    if (this.provider === "ollama") return (json as { embeddings?: unknown }).embeddings;
    const data = (json as { data?: unknown }).data;
    if (!Array.isArray(data)) return undefined;
    // The index field orders them; most servers already do.
    return [...(data as { index?: number; embedding?: unknown }[])].sort((a, b) => (a.index ?? 0) - (b.index ?? 0)).map((d) => d.embedding);
  }

  /** "Ollama at …" / "the embeddings endpoint at …" (`start`: at the start of a sentence). */
  private where(start = true): string {
    const name = this.provider === "ollama" ? "Ollama" : start ? "The embeddings endpoint" : "the embeddings endpoint";
    return `${name} at ${originOf(this.endpoint)}`;
  }

  /** Never lets the key into a message (some servers echo it in errors). */
  private redact(s: string): string {
    const key = this.opts.apiKey;
    return key && key.length >= 4 ? s.split(key).join("[key]") : s;
  }
}

/** The request URL: Ollama's `/api/embed`, or `/embeddings` under the OpenAI-style base (`/v1` added when missing). */
export function endpointOf(kind: RemoteKind, url: string): string {
  const base = url.trim().replace(/\/+$/, "");
  if (kind === "ollama") return base.endsWith("/api/embed") ? base : `${base.replace(/\/api$/, "")}/api/embed`;
  if (base.endsWith("/embeddings")) return base;
  return /\/v\d+$/.test(base) ? `${base}/embeddings` : `${base}/v1/embeddings`;
}

function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.origin;
  } catch {
    return "the configured URL";
  }
}

function detail(text: string, redact: (s: string) => string): string {
  let msg = text;
  try {
    const j = JSON.parse(text) as { error?: unknown };
    if (typeof j.error === "string") msg = j.error;
    else if (j.error && typeof (j.error as { message?: unknown }).message === "string") msg = (j.error as { message: string }).message;
  } catch {
    // Plain text.
  }
  msg = redact(msg.replace(/\s+/g, " ").trim()).slice(0, 200);
  return msg ? `: ${msg}` : "";
}

function hint(kind: RemoteKind, status: number, model: string): string {
  if (status === 401 || status === 403) return " (check the API key)";
  if (status === 404) return kind === "ollama" ? ` (is the model pulled? run: ollama pull ${model})` : " (check the URL and the model name)";
  return "";
}
