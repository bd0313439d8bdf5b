/**
 * Tokenizing a note for the index: field weights (title, aliases, headings, tags over the body) and
 * `DocBuilder`, which turns a note's chunks into term ids, weighted frequencies and term sequences
 * in reused buffers (no texts: the index keeps none). Owns no index state: `InvertedIndex.addDoc`
 * takes what it built.
 */
import { STOP_WORDS } from "../query";
import { forEachToken, type TermDict } from "../tokenize";
import type { Chunk, SearchLanguage } from "../types";
import { grownArray } from "../../memory";
import { ByteWriter } from "./codec";
import { DenseIds } from "./dense-ids";

/** Field weights (BM25F-style: weighted term frequency). */
export const FIELD_WEIGHTS = { title: 4, aliases: 3, headings: 2, tags: 2, body: 1 } as const;

/** Calls `cb(term, weight, id)` for every token of the chunk's fields; body tokens come last with weight 0 meaning "body". */
function forEachField(chunk: Chunk, language: SearchLanguage, dict: TermDict | undefined, cb: (t: string, w: number, id: number) => void): void {
  forEachToken(chunk.title, language, (t, _s, _e, id) => cb(t, FIELD_WEIGHTS.title, id), dict);
  for (const a of chunk.aliases) forEachToken(a, language, (t, _s, _e, id) => cb(t, FIELD_WEIGHTS.aliases, id), dict);
  for (const h of chunk.headings) forEachToken(h, language, (t, _s, _e, id) => cb(t, FIELD_WEIGHTS.headings, id), dict);
  for (const t of chunk.tags) forEachToken(t.replace(/[/_-]/g, " "), language, (x, _s, _e, id) => cb(x, FIELD_WEIGHTS.tags, id), dict);
  forEachToken(chunk.text, language, (t, _s, _e, id) => cb(t, 0, id), dict);
}

/**
 * One note's index data, built chunk by chunk (a long note is tokenized over several slices) before
 * `InvertedIndex.addDoc` takes it. Its buffers are reused from note to note: one builder per worker,
 * `reset()` before each note, so indexing allocates little besides the note's own arrays.
 */
export class DocBuilder {
  /** Per chunk: its terms (ids) and weighted tfs at [postOff[i], postOff[i + 1]). */
  terms = new Int32Array(4096);
  tfs = new Int32Array(4096);
  postOff: number[] = [0];
  lens: number[] = [];
  seq = new ByteWriter(64 * 1024);
  seqOff: number[] = [0];
  /** The note's title term ids (see DocEntry.titles), from its first chunk. */
  titleIds: number[] = [];
  /** The chunk's terms numbered as they first come, and their weighted tfs by number. */
  private chunkTerms = new DenseIds();
  private tf = new Float64Array(512);

  constructor(readonly dict: TermDict) {}

  get chunkCount(): number {
    return this.lens.length;
  }

  /** Bytes of its chunk table (for tests). */
  get tableBytes(): number {
    return this.chunkTerms.bytes + this.tf.byteLength;
  }

  reset(): void {
    this.postOff = [0];
    this.lens = [];
    this.seq.reset();
    this.seqOff = [0];
    this.titleIds = [];
  }

  /** Tokenizes a chunk: weighted term frequencies (title, aliases, headings and tags above the body), its body as term ids. */
  addChunk(chunk: Chunk, language: SearchLanguage): void {
    const terms = this.chunkTerms;
    let len = 0;
    const seq = this.seq;
    // Every chunk carries the note's title and aliases; the first one gives the title terms.
    const titleIds = this.lens.length === 0 ? this.titleIds : null;
    forEachField(chunk, language, this.dict, (t, w, k) => {
      if (titleIds && (w === FIELD_WEIGHTS.title || w === FIELD_WEIGHTS.aliases) && !STOP_WORDS.has(t)) titleIds.push(k);
      const d = terms.numberOf(k);
      if (d === this.tf.length) this.tf = grownArray(Float64Array, this.tf, 2 * d);
      this.tf[d] += w === 0 ? FIELD_WEIGHTS.body : w;
      len++;
      if (w === 0) seq.varint(k);
    });
    const nt = terms.n;
    let at = this.postOff[this.postOff.length - 1];
    if (at + nt > this.terms.length) {
      const cap = Math.max(at + nt, this.terms.length * 2);
      const t2 = new Int32Array(cap);
      t2.set(this.terms.subarray(0, at));
      this.terms = t2;
      const f2 = new Int32Array(cap);
      f2.set(this.tfs.subarray(0, at));
      this.tfs = f2;
    }
    const tf = this.tf;
    for (let d = 0; d < nt; d++) {
      this.terms[at] = terms.ids[d];
      this.tfs[at++] = Math.min(0xffff, Math.round(tf[d]));
      tf[d] = 0;
    }
    terms.clear();
    this.postOff.push(at);
    this.lens.push(Math.max(1, len));
    this.seqOff.push(seq.n);
  }
}
