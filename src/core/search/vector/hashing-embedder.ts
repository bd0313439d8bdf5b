/**
 * A deterministic embedder for tests and the bench: each term (tokenized and stemmed as the keyword
 * index does) hashed into one signed dimension, weighted by log term frequency, normalized. Texts
 * sharing words come out close; it knows no synonyms. Never offered to users as a model.
 */
import { forEachToken } from "../tokenize";
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
      forEachToken(text.slice(start, end), "en", (t) => tf.set(t, (tf.get(t) ?? 0) + 1));
      start = end - 256;
    }
    const v = new Float32Array(this.dim);
    for (const [t, n] of tf) {
      const h = fnv1a(t);
      v[h % this.dim] += (h & 0x80000000 ? -1 : 1) * (1 + Math.log(n));
    }
    if (tf.size === 0) v[0] = 1;
    return normalize(v);
  }
}

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
