/**
 * The vector index: every embedded chunk's vector, int8 with a per-vector scale, in one typed array,
 * and the notes they belong to; exact search by a scan over all of them. Owns the vectors and slots;
 * it must not embed, read notes or decide what to index (the semantic service does).
 */
import { isUnder } from "../../paths";
import { matchesFilters } from "../keyword/score";

/** One chunk of a note as the vector index keeps it. */
export interface VectorChunk {
  /** Content key (heading path + text): a chunk with the same key anywhere reuses its vector. */
  hash: string;
  heading: string;
  lineStart: number;
  lineEnd: number;
  /** Its vector's slot; -1 while not embedded. */
  slot: number;
}

export interface VectorDoc {
  id: number;
  path: string;
  mtime: number;
  size: number;
  chunks: VectorChunk[];
  /** For `filters` (as the keyword index keeps them: tags lower case without `#`). */
  tags: string[];
  frontmatter: Record<string, unknown>;
}

export interface ChunkScore {
  doc: VectorDoc;
  ordinal: number;
  score: number;
}

/**
 * From this many stored vectors on, a search first ranks them all by the Hamming distance of their
 * sign bits to the query's (one bit a dimension, 32 in an integer), then computes the int8 dot product
 * only for the closest of them. At 31k sections × 384 (10k notes) the full int8 scan took ~11 ms, the
 * bits ~0.9 ms (measured in isolation); below this size the exact scan is fast enough. Sign bits
 * suit dense vectors (what embedding models give); a sparse vector's zeros count as negatives.
 */
export const BINARY_FROM = 8192;
/** Candidates reranked exactly: this many, or 20 per result asked for when more. */
const RERANK = 2000;

export interface ScanFilter {
  folder?: string;
  filters?: Record<string, string | number | boolean>;
  /** Leave this note out (similar notes). */
  excludePath?: string;
}

export class VectorIndex {
  private vecs = new Int8Array(0);
  private scales = new Float32Array(0);
  /** Slot → doc id (-1: free). */
  private slotDoc = new Int32Array(0);
  private slotOrd = new Int32Array(0);
  /** Each vector's sign bits, `words` integers a slot. */
  private bits = new Int32Array(0);
  private free: number[] = [];
  private top = 0;
  private readonly byHash = new Map<string, number>();
  /** Slot → its chunk's key (to drop the key's entry when the slot is freed). */
  private slotHash: (string | undefined)[] = [];
  readonly docs = new Map<string, VectorDoc>();
  private byId: (VectorDoc | undefined)[] = [];
  private freeIds: number[] = [];
  /** Chunks with a vector. */
  embedded = 0;
  /** Chunks in all docs. */
  chunkCount = 0;

  constructor(private dimension: number) {}

  get dim(): number {
    return this.dimension;
  }

  /** Sets the vectors' length while none is stored (a remote model tells it on its first answer). */
  setDimension(dim: number): boolean {
    if (this.embedded > 0 && dim !== this.dimension) return false;
    if (dim !== this.dimension) {
      this.dimension = dim;
      this.vecs = new Int8Array(this.slotDoc.length * dim);
      this.bits = new Int32Array(this.slotDoc.length * this.words);
    }
    return true;
  }

  /** Integers of sign bits a slot. */
  private get words(): number {
    return (this.dimension + 31) >>> 5;
  }

  /** Slots in use (for memory figures). */
  get bytes(): number {
    return this.vecs.byteLength + this.scales.byteLength + this.slotDoc.byteLength + this.slotOrd.byteLength;
  }

  /** Adds or replaces a note's chunks; chunks whose key has a vector already get a copy of it. Returns the chunks left to embed. */
  setDoc(path: string, mtime: number, size: number, chunks: Omit<VectorChunk, "slot">[], tags: string[], frontmatter: Record<string, unknown>): number[] {
    const old = this.docs.get(path);
    // Keep the old vectors reachable by key until the new chunks have taken what they can.
    const reuse = new Map<string, number>();
    if (old) for (const c of old.chunks) if (c.slot >= 0) reuse.set(c.hash, c.slot);
    const id = old ? old.id : this.newId();
    const doc: VectorDoc = { id, path, mtime, size, chunks: [], tags, frontmatter };
    const todo: number[] = [];
    const kept = new Set<number>();
    for (const [ord, c] of chunks.entries()) {
      let slot = -1;
      const own = reuse.get(c.hash);
      if (own !== undefined && !kept.has(own)) {
        slot = own;
        kept.add(own);
        this.slotOrd[slot] = ord;
      } else {
        const src = this.byHash.get(c.hash) ?? own;
        if (src !== undefined) {
          slot = this.alloc(id, ord);
          this.vecs.copyWithin(slot * this.dim, src * this.dim, (src + 1) * this.dim);
          this.bits.copyWithin(slot * this.words, src * this.words, (src + 1) * this.words);
          this.scales[slot] = this.scales[src];
          this.embedded++;
        } else todo.push(ord);
      }
      doc.chunks.push({ hash: c.hash, heading: c.heading, lineStart: c.lineStart, lineEnd: c.lineEnd, slot });
    }
    if (old) {
      for (const c of old.chunks) if (c.slot >= 0 && !kept.has(c.slot)) this.release(c.slot);
      this.chunkCount -= old.chunks.length;
    }
    for (const c of doc.chunks) if (c.slot >= 0) this.keyOf(c.slot, c.hash);
    this.chunkCount += doc.chunks.length;
    this.docs.set(path, doc);
    this.byId[id] = doc;
    return todo;
  }

  /** Stores the vector of a doc's chunk (normalized float32 in; int8 kept). False when the chunk is gone or changed. */
  setVector(path: string, ordinal: number, hash: string, v: Float32Array): boolean {
    const doc = this.docs.get(path);
    const c = doc?.chunks[ordinal];
    if (!doc || !c || c.hash !== hash || v.length !== this.dim) return false;
    if (c.slot < 0) {
      c.slot = this.alloc(doc.id, ordinal);
      this.embedded++;
    }
    this.writeVector(c.slot, v);
    this.keyOf(c.slot, c.hash);
    return true;
  }

  /** Restores a saved vector as it was stored (int8 and scale). */
  restoreVector(path: string, ordinal: number, q: Int8Array, scale: number): void {
    const doc = this.docs.get(path);
    const c = doc?.chunks[ordinal];
    if (!doc || !c || q.length !== this.dim) return;
    if (c.slot < 0) {
      c.slot = this.alloc(doc.id, ordinal);
      this.embedded++;
    }
    this.vecs.set(q, c.slot * this.dim);
    this.writeBits(c.slot);
    this.scales[c.slot] = scale;
    this.keyOf(c.slot, c.hash);
  }

  /** A chunk's stored vector (int8) and scale, for saving. */
  vectorOf(slot: number): { q: Int8Array; scale: number } {
    return { q: this.vecs.subarray(slot * this.dim, (slot + 1) * this.dim), scale: this.scales[slot] };
  }

  /** A chunk's vector as float32 (dequantized). */
  floatVector(slot: number): Float32Array {
    const out = new Float32Array(this.dim);
    const s = this.scales[slot];
    const base = slot * this.dim;
    for (let i = 0; i < this.dim; i++) out[i] = this.vecs[base + i] * s;
    return out;
  }

  removeDoc(path: string): boolean {
    const doc = this.docs.get(path);
    if (!doc) return false;
    for (const c of doc.chunks) if (c.slot >= 0) this.release(c.slot);
    this.chunkCount -= doc.chunks.length;
    this.docs.delete(path);
    this.byId[doc.id] = undefined;
    this.freeIds.push(doc.id);
    return true;
  }

  clear(): void {
    this.vecs = new Int8Array(0);
    this.scales = new Float32Array(0);
    this.slotDoc = new Int32Array(0);
    this.slotOrd = new Int32Array(0);
    this.bits = new Int32Array(0);
    this.free = [];
    this.top = 0;
    this.byHash.clear();
    this.slotHash = [];
    this.docs.clear();
    this.byId = [];
    this.freeIds = [];
    this.embedded = 0;
    this.chunkCount = 0;
  }

  /**
   * The `k` chunks closest to `q` (a normalized float32 vector), best first: an exact scan over every
   * stored vector. `filter` narrows by folder, frontmatter, or leaves a note out.
   */
  search(q: Float32Array, k: number, filter: ScanFilter = {}): ChunkScore[] {
    if (q.length !== this.dim || k <= 0) return [];
    const accept = this.acceptor(filter);
    const candidates = this.top >= BINARY_FROM ? this.nearestBySigns(q, Math.max(RERANK, k * 20), accept) : null;
    const dim = this.dim;
    const vecs = this.vecs;
    const scales = this.scales;
    const slotDoc = this.slotDoc;
    // The k best so far: a min-heap by score.
    const heapS = new Float64Array(k);
    const heapI = new Int32Array(k);
    let n = 0;
    const count = candidates ? candidates.length : this.top;
    for (let c = 0; c < count; c++) {
      const s = candidates ? candidates[c] : c;
      const d = slotDoc[s];
      if (d < 0 || (accept && !accept[d])) continue;
      const base = s * dim;
      let dot = 0;
      let i = 0;
      for (; i + 3 < dim; i += 4) dot += vecs[base + i] * q[i] + vecs[base + i + 1] * q[i + 1] + vecs[base + i + 2] * q[i + 2] + vecs[base + i + 3] * q[i + 3];
      for (; i < dim; i++) dot += vecs[base + i] * q[i];
      const score = dot * scales[s];
      if (n < k) {
        heapS[n] = score;
        heapI[n] = s;
        siftUp(heapS, heapI, n++);
      } else if (score > heapS[0]) {
        heapS[0] = score;
        heapI[0] = s;
        siftDown(heapS, heapI, n);
      }
    }
    const out: ChunkScore[] = [];
    for (let j = 0; j < n; j++) {
      const doc = this.byId[slotDoc[heapI[j]]]!;
      out.push({ doc, ordinal: this.slotOrd[heapI[j]], score: heapS[j] });
    }
    return out.sort((a, b) => b.score - a.score || (a.doc.path < b.doc.path ? -1 : 1));
  }

  /**
   * The (about) `m` live, accepted slots whose sign bits differ least from the query's: every slot's
   * Hamming distance, then a counting pass over the distances (0..dim) for the cut-off.
   */
  private nearestBySigns(q: Float32Array, m: number, accept: Uint8Array | null): Int32Array {
    const w = this.words;
    const qb = new Int32Array(w);
    for (let i = 0; i < this.dim; i++) if (q[i] > 0) qb[i >>> 5] |= 1 << (i & 31);
    const dist = new Int32Array(this.top);
    const hist = new Int32Array(this.dim + 2);
    const bits = this.bits;
    const slotDoc = this.slotDoc;
    let live = 0;
    for (let s = 0; s < this.top; s++) {
      const d = slotDoc[s];
      if (d < 0 || (accept && !accept[d])) {
        dist[s] = -1;
        continue;
      }
      let h = 0;
      const base = s * w;
      for (let j = 0; j < w; j++) h += popcount(bits[base + j] ^ qb[j]);
      dist[s] = h;
      hist[h]++;
      live++;
    }
    // The cut-off distance: those closer all go in, and as many at it as there is room for.
    const want = Math.min(m, live);
    let cut = 0;
    let seen = 0;
    for (; cut <= this.dim && seen + hist[cut] < want; cut++) seen += hist[cut];
    let atCut = want - seen;
    const out = new Int32Array(want);
    let o = 0;
    for (let s = 0; s < this.top && o < want; s++) {
      const d = dist[s];
      if (d < 0 || d > cut) continue;
      if (d === cut) {
        if (atCut === 0) continue;
        atCut--;
      }
      out[o++] = s;
    }
    return out.subarray(0, o);
  }

  /** Which docs a filter lets through (by id), or null for all. */
  private acceptor(filter: ScanFilter): Uint8Array | null {
    if (!filter.folder && !filter.filters && !filter.excludePath) return null;
    const ok = new Uint8Array(this.byId.length);
    for (const doc of this.docs.values()) {
      if (filter.excludePath === doc.path) continue;
      if (filter.folder && !isUnder(doc.path, filter.folder)) continue;
      if (filter.filters && !matchesFilters(doc, filter.filters)) continue;
      ok[doc.id] = 1;
    }
    return ok;
  }

  /** The normalized mean of a note's chunk vectors (one chunk's when `ordinal` is given); null when none is embedded. */
  noteVector(path: string, ordinal?: number): Float32Array | null {
    const doc = this.docs.get(path);
    if (!doc) return null;
    const sum = new Float32Array(this.dim);
    let any = false;
    doc.chunks.forEach((c, i) => {
      if (c.slot < 0 || (ordinal !== undefined && i !== ordinal)) return;
      const v = this.floatVector(c.slot);
      for (let j = 0; j < this.dim; j++) sum[j] += v[j];
      any = true;
    });
    if (!any) return null;
    let norm = 0;
    for (let j = 0; j < this.dim; j++) norm += sum[j] * sum[j];
    const s = 1 / Math.sqrt(norm || 1);
    for (let j = 0; j < this.dim; j++) sum[j] *= s;
    return sum;
  }

  private writeVector(slot: number, v: Float32Array): void {
    let max = 0;
    for (let i = 0; i < v.length; i++) max = Math.max(max, Math.abs(v[i]));
    const scale = max > 0 ? max / 127 : 1;
    const base = slot * this.dim;
    for (let i = 0; i < v.length; i++) this.vecs[base + i] = Math.round(v[i] / scale);
    this.scales[slot] = scale;
    this.writeBits(slot);
  }

  private writeBits(slot: number): void {
    const w = this.words;
    const base = slot * this.dim;
    this.bits.fill(0, slot * w, (slot + 1) * w);
    for (let i = 0; i < this.dim; i++) if (this.vecs[base + i] > 0) this.bits[slot * w + (i >>> 5)] |= 1 << (i & 31);
  }

  private newId(): number {
    const id = this.freeIds.pop();
    if (id !== undefined) return id;
    this.byId.push(undefined);
    return this.byId.length - 1;
  }

  private alloc(docId: number, ord: number): number {
    let slot = this.free.pop();
    if (slot === undefined) {
      if (this.top === this.slotDoc.length) this.grow();
      slot = this.top++;
    }
    this.slotDoc[slot] = docId;
    this.slotOrd[slot] = ord;
    return slot;
  }

  private release(slot: number): void {
    this.slotDoc[slot] = -1;
    this.embedded--;
    this.free.push(slot);
    // Another chunk may hold the same key: the map then loses it (that chunk keeps its vector).
    const h = this.slotHash[slot];
    if (h !== undefined && this.byHash.get(h) === slot) this.byHash.delete(h);
    this.slotHash[slot] = undefined;
  }

  private keyOf(slot: number, hash: string): void {
    this.slotHash[slot] = hash;
    this.byHash.set(hash, slot);
  }

  private grow(): void {
    const cap = Math.max(1024, this.slotDoc.length * 2);
    const vecs = new Int8Array(cap * this.dim);
    vecs.set(this.vecs);
    this.vecs = vecs;
    const scales = new Float32Array(cap);
    scales.set(this.scales);
    this.scales = scales;
    const slotDoc = new Int32Array(cap).fill(-1);
    slotDoc.set(this.slotDoc);
    this.slotDoc = slotDoc;
    const slotOrd = new Int32Array(cap);
    slotOrd.set(this.slotOrd);
    this.slotOrd = slotOrd;
    const bits = new Int32Array(cap * this.words);
    bits.set(this.bits);
    this.bits = bits;
  }
}

function popcount(x: number): number {
  x = x - ((x >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}

function siftUp(s: Float64Array, ix: Int32Array, i: number): void {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (s[p] <= s[i]) break;
    swap(s, ix, p, i);
    i = p;
  }
}

function siftDown(s: Float64Array, ix: Int32Array, n: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < n && s[l] < s[m]) m = l;
    if (r < n && s[r] < s[m]) m = r;
    if (m === i) return;
    swap(s, ix, m, i);
    i = m;
  }
}

function swap(s: Float64Array, ix: Int32Array, a: number, b: number): void {
  const t = s[a];
  s[a] = s[b];
  s[b] = t;
  const u = ix[a];
  ix[a] = ix[b];
  ix[b] = u;
}
