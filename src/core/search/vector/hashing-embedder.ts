/**
 * A deterministic embedder for tests and the bench: each term (tokenized as the keyword index does,
 * then stemmed; stop words left out) stands for a fixed pseudo-random dense vector, weighted by log
 * term frequency, summed, normalized. Texts sharing words come out close; it knows no synonyms. Never offered to users.
 */
import { fnv1a } from "../../hash";
import { STOP_WORDS } from "../query";
import { forEachToken, stemWord } from "../tokenize";
import { normalize, type Embedder, type EmbedKind } from "./embedder";

export class HashingEmbedder implements Embedder {
  readonly provider = "hashing";
  readonly model: string;
  readonly batchSize: number;
  /** Texts embedded so far (tests count re-embedding with it). */
  embedded = 0;

  constructor(
    private readonly dim = 384,
    opts: { batchSize?: number; model?: string } = {},
  ) {
    this.model = opts.model ?? `hashing-${dim}`;
    this.batchSize = opts.batchSize ?? 32;
  }

  dimension(): number {
    return this.dim;
  }

  embed(texts: string[], _kind: EmbedKind): Promise<Float32Array[]> {
    this.embedded += texts.length;
    return Promise.resolve(texts.map((t) => this.embedOne(t)));
  }

  embedOne(text: string): Float32Array {
    const tf = new Map<string, number>();
    for (let start = 0; start < text.length; start += 256) {
      // Short slices (see the brief: Intl.Segmenter copies its whole input per segment).
      let end = Math.min(text.length, start + 256);
      while (end < text.length && /\S/.test(text[end])) end++;
      forEachToken(text.slice(start, end), "en", (w) => {
        const t = stemWord(w, "en");
        if (!STOP_WORDS.has(t)) tf.set(t, (tf.get(t) ?? 0) + 1);
      });
      start = end - 256;
    }
    // Each term stands for a fixed pseudo-random ±1 vector (seeded by its hash), weighted by log
    // term frequency: the sum is dense, as a real model's vectors are, and texts sharing terms come
    // out close (random indexing keeps the cosine of the bags of words, roughly).
    const v = new Float32Array(this.dim);
    for (const [t, n] of tf) {
      const w = 1 + Math.log(n);
      let x = fnv1a(t) | 1;
      for (let i = 0; i < this.dim; i++) {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        v[i] += x & 1 ? w : -w;
      }
    }
    if (tf.size === 0) v[0] = 1;
    return normalize(v);
  }
}

