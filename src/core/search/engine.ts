import { isUnder } from "../paths";
import { forEachToken } from "./tokenize";
import type { Chunk, ParsedQuery, QueryItem, SearchLanguage, SearchRequest, SearchResponse, SearchSection } from "./types";

/** Field weights (BM25F-style: weighted term frequency). */
export const FIELD_WEIGHTS = { title: 4, aliases: 3, headings: 2, tags: 2, body: 1 } as const;
const K1 = 1.2;
const B = 0.75;
/** At most this many chunks have their text checked for a phrase; beyond, candidates count as matches. */
const PHRASE_VERIFY_CAP = 3000;
/** A prefix expands to at most this many terms (the most frequent). */
const PREFIX_EXPANSION_CAP = 64;

export interface DocEntry {
  slot: number;
  path: string;
  title: string;
  folder: string;
  mtime: number;
  size: number;
  hash: string;
  frontmatter: Record<string, unknown>;
  /** Lower-case tags without `#` (frontmatter and inline). */
  tags: string[];
  chunkIds: number[];
  chunkLens: number[];
}

export interface ChunkVector {
  terms: string[];
  tfs: number[];
  len: number;
  /** The body's terms in order (for phrase checks). */
  seq: string[];
}

export interface StoredChunk {
  heading: string;
  text: string;
  lineStart: number;
  lineEnd: number;
}

/** What the index needs from the store at query time. */
export interface ChunkSource {
  chunk(id: number): StoredChunk | null;
  /** The chunk's body as term ids (varint-encoded), for phrase checks. */
  sequence(id: number): Uint8Array | null;
}

class PostingList {
  constructor(
    readonly termId: number,
    public ids: Int32Array,
    public tfs: Float32Array,
    public n: number,
  ) {}
  push(id: number, tf: number): void {
    if (this.n === this.ids.length) {
      const cap = Math.max(4, Math.ceil(this.n * 1.5));
      const ids = new Int32Array(cap);
      ids.set(this.ids.subarray(0, this.n));
      const tfs = new Float32Array(cap);
      tfs.set(this.tfs.subarray(0, this.n));
      this.ids = ids;
      this.tfs = tfs;
    }
    this.ids[this.n] = id;
    this.tfs[this.n] = tf;
    this.n++;
  }
}

/** Weighted term frequencies of a chunk (title, aliases, headings and tags above the body). */
export function chunkVector(chunk: Chunk, language: SearchLanguage): ChunkVector {
  const tf = new Map<string, number>();
  let len = 0;
  const add = (text: string, w: number) => {
    forEachToken(text, language, (t) => {
      tf.set(t, (tf.get(t) ?? 0) + w);
      len++;
    });
  };
  add(chunk.title, FIELD_WEIGHTS.title);
  for (const a of chunk.aliases) add(a, FIELD_WEIGHTS.aliases);
  for (const h of chunk.headings) add(h, FIELD_WEIGHTS.headings);
  for (const t of chunk.tags) add(t.replace(/[/_-]/g, " "), FIELD_WEIGHTS.tags);
  const seq: string[] = [];
  forEachToken(chunk.text, language, (t) => {
    tf.set(t, (tf.get(t) ?? 0) + FIELD_WEIGHTS.body);
    seq.push(t);
    len++;
  });
  return { terms: [...tf.keys()], tfs: [...tf.values()], len: Math.max(1, len), seq };
}

export interface SerializedPostings {
  terms: string;
  termIds: Int32Array;
  counts: Uint32Array;
  ids: Int32Array;
  tfs: Float32Array;
}

/** The in-memory inverted index: posting lists in typed arrays, tombstoned deletes, top-k scoring. */
export class InvertedIndex {
  terms = new Map<string, PostingList>();
  nextTermId = 1;
  /** First two characters → terms, for prefix expansion. */
  private buckets = new Map<string, Set<string>>();
  chunkDoc = new Int32Array(1024);
  chunkLen = new Float32Array(1024);
  alive = new Uint8Array(1024);
  nextId = 1;
  liveChunks = 0;
  totalLen = 0;
  totalPostings = 0;
  deadPostings = 0;

  docs = new Map<string, DocEntry>();
  slots: (DocEntry | null)[] = [];
  private freeSlots: number[] = [];

  // Query scratch space.
  private acc = new Float64Array(1024);
  private cnt = new Int32Array(1024);
  private docMask = new Uint32Array(64);
  private docBest = new Float64Array(64);
  private docExcluded = new Uint8Array(64);

  clear(): void {
    this.terms.clear();
    this.buckets.clear();
    this.chunkDoc = new Int32Array(1024);
    this.chunkLen = new Float32Array(1024);
    this.alive = new Uint8Array(1024);
    this.nextId = 1;
    this.nextTermId = 1;
    this.liveChunks = 0;
    this.totalLen = 0;
    this.totalPostings = 0;
    this.deadPostings = 0;
    this.docs.clear();
    this.slots = [];
    this.freeSlots = [];
  }

  private ensureChunkCap(id: number): void {
    if (id < this.alive.length) return;
    let cap = this.alive.length;
    while (cap <= id) cap *= 2;
    const d = new Int32Array(cap);
    d.set(this.chunkDoc);
    this.chunkDoc = d;
    const l = new Float32Array(cap);
    l.set(this.chunkLen);
    this.chunkLen = l;
    const a = new Uint8Array(cap);
    a.set(this.alive);
    this.alive = a;
  }

  private ensureScratch(): void {
    if (this.acc.length < this.alive.length) {
      this.acc = new Float64Array(this.alive.length);
      this.cnt = new Int32Array(this.alive.length);
    }
    if (this.docMask.length < this.slots.length) {
      const cap = Math.max(64, this.slots.length * 2);
      this.docMask = new Uint32Array(cap);
      this.docBest = new Float64Array(cap);
      this.docExcluded = new Uint8Array(cap);
    }
  }

  private listFor(term: string): PostingList {
    let l = this.terms.get(term);
    if (!l) {
      l = new PostingList(this.nextTermId++, new Int32Array(2), new Float32Array(2), 0);
      this.terms.set(term, l);
      this.addToBucket(term);
    }
    return l;
  }

  private addToBucket(term: string): void {
    const key = term.slice(0, 2);
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = new Set()));
    b.add(term);
  }

  /** Adds a document with its chunks' vectors; returns the entry (chunk ids assigned). */
  addDoc(entry: Omit<DocEntry, "slot" | "chunkIds" | "chunkLens">, vectors: ChunkVector[]): { doc: DocEntry; sequences: Uint8Array[] } {
    this.removeDoc(entry.path);
    const slot = this.freeSlots.pop() ?? this.slots.length;
    const doc: DocEntry = { ...entry, slot, chunkIds: [], chunkLens: [] };
    const sequences: Uint8Array[] = [];
    this.slots[slot] = doc;
    this.docs.set(doc.path, doc);
    for (const v of vectors) {
      const id = this.nextId++;
      this.ensureChunkCap(id);
      this.chunkDoc[id] = slot;
      this.chunkLen[id] = v.len;
      this.alive[id] = 1;
      this.liveChunks++;
      this.totalLen += v.len;
      for (let i = 0; i < v.terms.length; i++) this.listFor(v.terms[i]).push(id, v.tfs[i]);
      this.totalPostings += v.terms.length;
      doc.chunkIds.push(id);
      doc.chunkLens.push(v.len);
      sequences.push(encodeVarints(v.seq.map((t) => this.terms.get(t)!.termId)));
    }
    return { doc, sequences };
  }

  /** Registers a document loaded from the store (its postings come from `loadPostings`). */
  restoreDoc(entry: Omit<DocEntry, "slot">): DocEntry {
    const slot = this.slots.length;
    const doc: DocEntry = { ...entry, slot };
    this.slots[slot] = doc;
    this.docs.set(doc.path, doc);
    for (let i = 0; i < doc.chunkIds.length; i++) {
      const id = doc.chunkIds[i];
      this.ensureChunkCap(id);
      this.chunkDoc[id] = slot;
      this.chunkLen[id] = doc.chunkLens[i];
      this.alive[id] = 1;
      this.liveChunks++;
      this.totalLen += doc.chunkLens[i];
      if (id >= this.nextId) this.nextId = id + 1;
    }
    return doc;
  }

  removeDoc(path: string): DocEntry | null {
    const doc = this.docs.get(path);
    if (!doc) return null;
    this.docs.delete(path);
    this.slots[doc.slot] = null;
    this.freeSlots.push(doc.slot);
    for (let i = 0; i < doc.chunkIds.length; i++) {
      const id = doc.chunkIds[i];
      if (!this.alive[id]) continue;
      this.alive[id] = 0;
      this.liveChunks--;
      this.totalLen -= doc.chunkLens[i];
    }
    // Posting entries stay until compaction; estimate how many died.
    this.deadPostings += doc.chunkIds.length * 60;
    return doc;
  }

  needsCompaction(): boolean {
    return this.deadPostings > 50_000 && this.deadPostings > this.totalPostings * 0.25;
  }

  /**
   * Removes dead postings of the terms yielded by the iterator, until `deadline()` says stop.
   * Returns false when all terms are done.
   */
  compactSome(it: Iterator<[string, PostingList]>, deadline: () => boolean): boolean {
    for (;;) {
      const r = it.next();
      if (r.done) {
        this.deadPostings = 0;
        return false;
      }
      const [term, l] = r.value;
      let w = 0;
      for (let i = 0; i < l.n; i++) {
        const id = l.ids[i];
        if (this.alive[id]) {
          l.ids[w] = id;
          l.tfs[w] = l.tfs[i];
          w++;
        }
      }
      this.totalPostings -= l.n - w;
      l.n = w;
      if (w === 0) {
        this.terms.delete(term);
        this.buckets.get(term.slice(0, 2))?.delete(term);
      }
      if (deadline()) return true;
    }
  }

  termIterator(): Iterator<[string, PostingList]> {
    return this.terms.entries();
  }

  /** Serializes live postings in one go. */
  serialize(): SerializedPostings {
    const job = this.serializer();
    while (!job.step(() => false));
    return job.result();
  }

  /**
   * Serializes live postings in steps: `step(deadline)` returns true when done. The index must not
   * change between steps (the service runs it inside its exclusive worker).
   */
  serializer(): { step(deadline: () => boolean): boolean; result(): SerializedPostings } {
    const names: string[] = [];
    const lists: PostingList[] = [];
    const termIds: number[] = [];
    let total = 0;
    const it = this.terms.entries();
    let phase = 0;
    let k = 0;
    let off = 0;
    let ids = new Int32Array(0);
    let tfs = new Float32Array(0);
    let counts = new Uint32Array(0);
    return {
      step: (deadline) => {
        let n = 0;
        while (phase === 0) {
          const r = it.next();
          if (r.done) {
            phase = 1;
            counts = new Uint32Array(lists.length);
            ids = new Int32Array(total);
            tfs = new Float32Array(total);
            break;
          }
          const [t, l] = r.value;
          if (l.n > 0) {
            names.push(t);
            lists.push(l);
            termIds.push(l.termId);
            total += l.n;
          }
          if (++n % 256 === 0 && deadline()) return false;
        }
        while (k < lists.length) {
          const l = lists[k];
          let w = 0;
          for (let i = 0; i < l.n; i++) {
            const id = l.ids[i];
            if (!this.alive[id]) continue;
            ids[off + w] = id;
            tfs[off + w] = l.tfs[i];
            w++;
          }
          counts[k] = w;
          off += w;
          k++;
          if (++n % 256 === 0 && deadline()) return false;
        }
        return true;
      },
      result: () => ({ terms: names.join("\n"), termIds: Int32Array.from(termIds), counts, ids: ids.subarray(0, off), tfs: tfs.subarray(0, off) }),
    };
  }

  /** Loads postings (after `restoreDoc` of every document). Throws when the data is inconsistent. */
  loadPostings(s: SerializedPostings): void {
    const names = s.terms.length ? s.terms.split("\n") : [];
    if (names.length !== s.counts.length || names.length !== s.termIds.length) throw new Error("term count mismatch");
    let off = 0;
    for (let k = 0; k < names.length; k++) {
      const n = s.counts[k];
      if (off + n > s.ids.length) throw new Error("postings truncated");
      const l = new PostingList(s.termIds[k], s.ids.subarray(off, off + n), s.tfs.subarray(off, off + n), n);
      if (l.termId >= this.nextTermId) this.nextTermId = l.termId + 1;
      this.terms.set(names[k], l);
      this.addToBucket(names[k]);
      off += n;
    }
    if (off !== s.ids.length || s.ids.length !== s.tfs.length) throw new Error("postings length mismatch");
    this.totalPostings = off;
    this.deadPostings = 0;
  }

  /** Terms starting with `prefix`, most frequent first (capped). */
  expandPrefix(prefix: string): string[] {
    const out: string[] = [];
    if (prefix.length >= 2) {
      for (const t of this.buckets.get(prefix.slice(0, 2)) ?? []) if (t.startsWith(prefix)) out.push(t);
    } else {
      for (const [k, set] of this.buckets) if (k.startsWith(prefix)) for (const t of set) out.push(t);
    }
    if (out.length > PREFIX_EXPANSION_CAP) {
      out.sort((a, b) => (this.terms.get(b)?.n ?? 0) - (this.terms.get(a)?.n ?? 0));
      out.length = PREFIX_EXPANSION_CAP;
    }
    return out;
  }

  search(pq: ParsedQuery, req: SearchRequest, src: ChunkSource, language: SearchLanguage): SearchResponse {
    const clauses = pq.clauses.slice(0, 31);
    if (clauses.length === 0 || this.liveChunks === 0) return { hits: [], total_files: 0, relaxed: false };
    this.ensureScratch();
    const N = this.liveChunks;
    const avg = this.totalLen / N;
    const acc = this.acc;
    const docMask = this.docMask;
    const touched: number[] = [];
    const docsTouched: number[] = [];
    const excludedDocs: number[] = [];
    const hasPhrase = (id: number, needle: number[]): boolean => {
      const seq = src.sequence(id);
      return seq ? containsSequence(decodeVarints(seq), needle) : false;
    };
    let verified = 0;

    const idfOf = (l: PostingList): number => {
      let df = 0;
      for (let i = 0; i < l.n; i++) if (this.alive[l.ids[i]]) df++;
      return df === 0 ? 0 : Math.log(1 + (N - df + 0.5) / (df + 0.5));
    };
    const addList = (l: PostingList, bit: number, only: Set<number> | null) => {
      const idf = idfOf(l);
      if (idf === 0) return;
      for (let i = 0; i < l.n; i++) {
        const id = l.ids[i];
        if (!this.alive[id] || (only && !only.has(id))) continue;
        const tf = l.tfs[i];
        const s = (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * this.chunkLen[id]) / avg));
        if (acc[id] === 0) touched.push(id);
        acc[id] += s;
        const slot = this.chunkDoc[id];
        if (docMask[slot] === 0) docsTouched.push(slot);
        docMask[slot] |= bit;
      }
    };
    /** Chunks holding the phrase (text checked, up to a cap). */
    const phraseChunks = (terms: string[]): Set<number> => {
      const uniq = [...new Set(terms)];
      const lists = uniq.map((t) => this.terms.get(t));
      const out = new Set<number>();
      if (lists.some((l) => !l)) return out;
      const needle = terms.map((t) => this.terms.get(t)!.termId);
      const cnt = this.cnt;
      const seen: number[] = [];
      for (const l of lists as PostingList[]) {
        for (let i = 0; i < l.n; i++) {
          const id = l.ids[i];
          if (!this.alive[id]) continue;
          if (cnt[id] === 0) seen.push(id);
          cnt[id]++;
        }
      }
      for (const id of seen) {
        if (cnt[id] === uniq.length) {
          if (verified >= PHRASE_VERIFY_CAP) out.add(id);
          else {
            verified++;
            if (hasPhrase(id, needle)) out.add(id);
          }
        }
        cnt[id] = 0;
      }
      return out;
    };
    const itemLists = (it: QueryItem): PostingList[] => {
      if (it.kind === "phrase") return [];
      const names = it.prefix ? this.expandPrefix(it.term) : [it.term];
      const out: PostingList[] = [];
      for (const n of names) {
        const l = this.terms.get(n);
        if (l) out.push(l);
      }
      return out;
    };

    clauses.forEach((clause, ci) => {
      const bit = 1 << ci;
      for (const it of clause) {
        if (it.kind === "term") {
          for (const l of itemLists(it)) addList(l, bit, null);
        } else {
          const only = phraseChunks(it.terms);
          if (only.size === 0) continue;
          for (const t of new Set(it.terms)) {
            const l = this.terms.get(t);
            if (l) addList(l, bit, only);
          }
        }
      }
    });

    // Exclusions remove whole notes.
    for (const it of pq.exclude) {
      const mark = (id: number) => {
        const slot = this.chunkDoc[id];
        if (!this.docExcluded[slot]) {
          this.docExcluded[slot] = 1;
          excludedDocs.push(slot);
        }
      };
      if (it.kind === "term") {
        for (const l of itemLists(it)) for (let i = 0; i < l.n; i++) if (this.alive[l.ids[i]]) mark(l.ids[i]);
      } else for (const id of phraseChunks(it.terms)) mark(id);
    }

    const full = clauses.length === 31 ? 0x7fffffff : (1 << clauses.length) - 1;
    const docBest = this.docBest;
    for (const id of touched) {
      const slot = this.chunkDoc[id];
      if (acc[id] > docBest[slot]) docBest[slot] = acc[id];
    }
    const folder = (req.folder ?? "").replace(/^\/+|\/+$/g, "");
    const passes = (slot: number): boolean => {
      const doc = this.slots[slot];
      if (!doc || this.docExcluded[slot]) return false;
      if (folder && !isUnder(doc.path, folder)) return false;
      return !req.filters || matchesFilters(doc, req.filters);
    };
    let cands = docsTouched.filter((s) => docMask[s] === full && passes(s));
    let relaxed = false;
    if (cands.length === 0 && clauses.length > 1) {
      relaxed = true;
      cands = docsTouched.filter((s) => docMask[s] !== 0 && passes(s));
      for (const s of cands) docBest[s] = (docBest[s] * popcount(docMask[s])) / clauses.length;
    }
    if (cands.length === 0) relaxed = false;
    const limit = Math.max(0, Math.floor(req.limit));
    const better = (a: number, b: number) => docBest[a] > docBest[b] || (docBest[a] === docBest[b] && this.slots[a]!.path < this.slots[b]!.path);
    // Top-k by insertion: most candidates fall below the current k-th score and cost one comparison.
    const top: number[] = [];
    for (const s of cands) {
      if (top.length === limit && (limit === 0 || !better(s, top[limit - 1]))) continue;
      let i = top.length < limit ? top.length : limit - 1;
      if (top.length < limit) top.push(s);
      while (i > 0 && better(s, top[i - 1])) {
        top[i] = top[i - 1];
        i--;
      }
      top[i] = s;
    }

    const hits = top.map((slot) => {
      const doc = this.slots[slot]!;
      const chunkIds = doc.chunkIds.filter((id) => acc[id] > 0).sort((a, b) => acc[b] - acc[a]);
      const sections: SearchSection[] = [];
      const wanted = positiveTermSet(pq);
      for (const id of chunkIds.slice(0, Math.max(0, req.chunksPerFile))) {
        const c = src.chunk(id);
        if (!c) continue;
        sections.push({
          heading: c.heading,
          content: snippet(c.text, wanted, req.snippetWords, language),
          score: round(acc[id]),
          line_start: c.lineStart,
          line_end: c.lineEnd,
        });
      }
      return { path: doc.path, title: doc.title, folder: doc.folder, score: round(docBest[slot]), frontmatter: doc.frontmatter, sections };
    });

    // Reset scratch space.
    for (const id of touched) acc[id] = 0;
    for (const s of docsTouched) {
      docMask[s] = 0;
      docBest[s] = 0;
    }
    for (const s of excludedDocs) this.docExcluded[s] = 0;
    return { hits, total_files: cands.length, relaxed };
  }
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

function popcount(x: number): number {
  let n = 0;
  while (x) {
    n += x & 1;
    x >>>= 1;
  }
  return n;
}

export function containsSequence<T>(hay: ArrayLike<T>, needle: ArrayLike<T>): boolean {
  if (needle.length === 0) return true;
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

interface TermSet {
  exact: Set<string>;
  prefixes: string[];
}

function positiveTermSet(pq: ParsedQuery): TermSet {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const clause of pq.clauses)
    for (const it of clause) {
      if (it.kind === "phrase") for (const t of it.terms) exact.add(t);
      else if (it.prefix) prefixes.push(it.term);
      else exact.add(it.term);
    }
  return { exact, prefixes };
}

const WORD_STOP = /[\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff01-\uff0f]/u;

/** A window of `words` tokens around the densest cluster of matched terms; the whole text when 0. */
export function snippet(text: string, want: TermSet, words: number, language: SearchLanguage): string {
  if (words <= 0) return text;
  const starts: number[] = [];
  const ends: number[] = [];
  const hit: number[] = [];
  forEachToken(text, language, (t, s, e) => {
    starts.push(s);
    ends.push(e);
    hit.push(want.exact.has(t) || want.prefixes.some((p) => t.startsWith(p)) ? 1 : 0);
  });
  const n = starts.length;
  if (n <= words) return text.trim();
  let best = 0;
  let bestAt = 0;
  let cur = 0;
  for (let i = 0; i < n; i++) {
    cur += hit[i];
    if (i >= words) cur -= hit[i - words];
    if (i >= words - 1 && cur > best) {
      best = cur;
      bestAt = i - words + 1;
    }
  }
  // Centre the window on its matches when they cluster at one end.
  if (best > 0) {
    let first = bestAt;
    while (first < bestAt + words && !hit[first]) first++;
    let last = bestAt + words - 1;
    while (last > first && !hit[last]) last--;
    const mid = Math.floor((first + last) / 2);
    bestAt = Math.max(0, Math.min(n - words, mid - Math.floor(words / 2)));
  }
  const endTok = Math.min(n, bestAt + words) - 1;
  // Whole words: keep leading punctuation (`#tag`, `[[link`), never cut inside unspaced scripts.
  let a = bestAt === 0 ? 0 : starts[bestAt];
  while (a > 0 && !WORD_STOP.test(text[a - 1])) a--;
  let b = endTok === n - 1 ? text.length : ends[endTok];
  while (b < text.length && !WORD_STOP.test(text[b])) b++;
  return (bestAt > 0 ? "… " : "") + text.slice(a, b).trim() + (endTok < n - 1 ? " …" : "");
}

/** Frontmatter filters: lists contain the value, strings equal it (case-insensitive); `tags` include inline and nested tags. */
export function matchesFilters(doc: DocEntry, filters: Record<string, string | number | boolean>): boolean {
  for (const [key, raw] of Object.entries(filters)) {
    const want = String(raw).trim().toLowerCase();
    if (key === "tags" || key === "tag") {
      const w = want.replace(/^#/, "");
      if (!doc.tags.some((t) => t === w || t.startsWith(w + "/"))) return false;
      continue;
    }
    let v = doc.frontmatter[key];
    if (v === undefined) {
      const k = Object.keys(doc.frontmatter).find((x) => x.toLowerCase() === key.toLowerCase());
      if (k !== undefined) v = doc.frontmatter[k];
    }
    if (v === undefined || v === null) return false;
    const vals = Array.isArray(v) ? v : [v];
    if (!vals.some((x) => (typeof x === "string" || typeof x === "number" || typeof x === "boolean") && String(x).trim().toLowerCase() === want)) return false;
  }
  return true;
}

export function encodeVarints(values: number[]): Uint8Array {
  const out = new Uint8Array(values.length * 5);
  let o = 0;
  for (let v of values) {
    while (v >= 0x80) {
      out[o++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[o++] = v;
  }
  return out.slice(0, o);
}

export function decodeVarints(bytes: Uint8Array): Int32Array {
  const out = new Int32Array(bytes.length);
  let n = 0;
  let v = 0;
  let shift = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    v |= (b & 0x7f) << shift;
    if (b & 0x80) shift += 7;
    else {
      out[n++] = v;
      v = 0;
      shift = 0;
    }
  }
  return out.subarray(0, n);
}
