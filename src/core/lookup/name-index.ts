/**
 * The name index behind find_notes: every note's title (with its folder) and aliases, looked up
 * by word, by word prefix and with typos. It scores like the MiniSearch index it replaces (BM25+
 * over two fields, the name ×3 and the folder ×1; prefix and fuzzy expansions weighted down by
 * their distance; the score times the number of query words matched) and reranks the best names
 * the same way (exact and whole-prefix names first, AND over OR, short names over long), but it
 * keeps its words in typed arrays instead of a tree of Maps: at 100k notes 77 MB → 8.3 MB.
 *
 * Layout:
 * - names: one id per title or alias, in parallel typed arrays (field lengths, alive flag) and one
 *   array of note paths (the vault's own strings, not copies); a note's names have consecutive ids.
 * - base: the distinct words sorted (code-unit order) in one string with their offsets, each
 *   word's postings (`name id × 2 + field`, field 0 = name, 1 = folder) in one Int32Array (CSR)
 *   with their term frequencies in a Uint8Array. Prefix lookup is a binary search; the typo walk
 *   treats the sorted words as a trie (a run of words sharing a prefix is a node) and carries a
 *   Levenshtein matrix down it, pruned as soon as a row exceeds the allowed distance.
 * - overlay: names added since the last merge, as a Map from word to postings, scanned word by word;
 *   merged into the base (dead names dropped, ids renumbered) when it grows.
 * Removal only clears a name's alive flag; its postings go at the next merge.
 */
import { heapDown, heapUp } from "../sorted";
import { basenameOf, parentOf } from "../vault";

export const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]/;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]+/g;

/**
 * Words of a title or query: split on anything that is not a letter or digit; runs of CJK script
 * (which has no spaces) also give their bigrams so that part of a Japanese title finds it.
 */
export function nameTokens(text: string): string[] {
  const norm = text.normalize("NFKC").toLowerCase();
  const out: string[] = [];
  for (const word of norm.split(/[^\p{L}\p{N}\p{M}]+/u)) {
    if (!word) continue;
    if (!CJK.test(word)) {
      out.push(word);
      continue;
    }
    // Mixed words: keep the non-CJK parts whole, split CJK runs into bigrams plus the run.
    const rest = word.replace(CJK_RUN, " ").trim();
    if (rest) out.push(...rest.split(/\s+/));
    for (const run of word.match(CJK_RUN) ?? []) {
      out.push(run);
      if (run.length > 2) for (let i = 0; i + 2 <= run.length; i++) out.push(run.slice(i, i + 2));
      else if (run.length === 2) out.push(run[0], run[1]);
      else out.push(run);
    }
  }
  return out;
}

/** A name or path for whole-name comparison: NFKC, lower case, no `.md`, spaces/underscores/dashes as one space. */
export function compactName(s: string): string {
  return s.normalize("NFKC").toLowerCase().replace(/\.md$/, "").replace(/[\s_-]+/g, " ").trim();
}

export interface NameHit {
  path: string;
  title: string;
  /** The alias that matched, when the note was found by one of its aliases rather than its title. */
  matched_alias?: string;
  score: number;
}

// Scoring, as MiniSearch 7 did it with the options find_notes gave it.
const BOOST = [3, 1]; // name, folder
const PREFIX_WEIGHT = 0.6;
const FUZZY_WEIGHT = 0.35;
const BM25_K = 1.2;
const BM25_B = 0.7;
const BM25_D = 0.5;
const MAX_FUZZY = 6;

/** Typo tolerance of a query word: none up to 3 letters and for CJK, 1 edit up to 7, a quarter of the length beyond. */
function maxEdits(term: string, cjk: boolean): number {
  if (cjk || term.length <= 3) return 0;
  if (term.length <= 7) return 1;
  return Math.min(MAX_FUZZY, Math.round(term.length * 0.25));
}

/** Levenshtein distance of `a` and `b` when at most `max`, else `max + 1`. */
function boundedDistance(a: string, b: string, max: number): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  let prev = new Uint16Array(m + 1);
  let cur = new Uint16Array(m + 1);
  for (let j = 0; j <= m; j++) prev[j] = j;
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    let rowMin = i;
    const c = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const v = Math.min(prev[j - 1] + (c === b.charCodeAt(j - 1) ? 0 : 1), prev[j] + 1, cur[j - 1] + 1);
      cur[j] = v;
      if (v < rowMin) rowMin = v;
    }
    if (rowMin > max) return max + 1;
    [prev, cur] = [cur, prev];
  }
  return Math.min(prev[m], max + 1);
}

const ALIAS = 1;
const ROOT = 2;

/** The first two characters of `s` as `c0 << 16 | c1` (0 for a missing one). */
function leadOf(s: string): number {
  return ((s.length > 0 ? s.charCodeAt(0) : 0) << 16) | (s.length > 1 ? s.charCodeAt(1) : 0);
}

/** False when a string with lead `lead` cannot start with a string of length `len` and lead `wanted`. */
function leadMatches(lead: number, wanted: number, len: number): boolean {
  return len >= 2 ? lead === wanted : len === 1 ? lead >>> 16 === wanted >>> 16 : true;
}

/** Token counts of one field of one name. */
function termCounts(text: string): Map<string, number> {
  const counts = new Map<string, number>();
  if (text) for (const t of nameTokens(text)) counts.set(t, (counts.get(t) ?? 0) + 1);
  return counts;
}

export class NameIndex {
  // Names (one per title or alias).
  private count = 0;
  private live = 0;
  private dead = 0;
  private paths: (string | undefined)[] = [];
  private readonly aliases = new Map<number, string>();
  private fieldLen = [new Uint8Array(0), new Uint8Array(0)];
  private alive = new Uint8Array(0);
  /** Words in the name, repeats included (for the rerank's length penalty). */
  private nameWords = new Uint8Array(0);
  /** The first two characters of the compacted name (`compactName`), as `c0 << 16 | c1`: names that cannot start with the query need no string work in the rerank. */
  private lead = new Int32Array(0);
  /** Bit 1: an alias; bit 2: the note is at the vault's root. */
  private flags = new Uint8Array(0);
  private readonly lenSum = [0, 0];
  /** Indexed notes (live title names). */
  private notes = 0;
  /**
   * Title name ids of the notes whose title has no word (e.g. `!!!.md`); every other note is found
   * by its path through the postings of its title's rarest word (no Map of 100k paths: 3.5 MB).
   */
  private readonly wordless = new Map<string, number>();

  // Base: sorted words and their postings.
  private words = "";
  private wordStart = new Int32Array(1);
  private postStart = new Int32Array(1);
  private post = new Int32Array(0);
  private tf = new Uint8Array(0);

  // Overlay: names added since the last merge; a word's postings as [posting, tf, posting, tf, …].
  private readonly overlay = new Map<string, number[]>();
  private overlayPostings = 0;

  // Query scratch, one slot per name id.
  private acc = new Float64Array(0);
  private stamp = new Int32Array(0);
  private hits = new Uint16Array(0);
  /** Query words the name has exactly (in its name or folder). */
  private exact = new Uint16Array(0);
  private touched = new Int32Array(0);
  private touchedCount = 0;
  private clock = 0;

  /** One-entry cache of the last folder's token counts (a build lists notes folder by folder). */
  private lastFolder: { folder: string; counts: Map<string, number> } | null = null;

  /** Notes indexed. */
  get size(): number {
    return this.notes;
  }

  has(path: string): boolean {
    return this.titleId(path) >= 0;
  }

  /** The indexed note paths. */
  *notePaths(): IterableIterator<string> {
    for (let id = 0; id < this.count; id++) if (this.alive[id] && !(this.flags[id] & ALIAS)) yield this.paths[id]!;
  }

  /** Words in the base and in the overlay, postings in both (for tests and measurements). */
  stats(): { baseWords: number; basePostings: number; overlayWords: number; overlayPostings: number; names: number; liveNames: number } {
    return {
      baseWords: this.wordStart.length - 1,
      basePostings: this.post.length,
      overlayWords: this.overlay.size,
      overlayPostings: this.overlayPostings,
      names: this.count,
      liveNames: this.live,
    };
  }

  /**
   * Indexes a note: its title (with its folder) and each alias. Replaces what was indexed for
   * `path`, unless `isNew` (the caller knows it is not indexed: the first build).
   */
  add(path: string, aliases: readonly string[], isNew = false): void {
    if (!isNew) this.remove(path);
    const first = this.count;
    if (this.addName(path, basenameOf(path), parentOf(path), undefined) === 0) this.wordless.set(path, first);
    for (const alias of aliases) this.addName(path, alias, "", alias);
    this.notes++;
  }

  remove(path: string): void {
    const first = this.titleId(path);
    if (first < 0) return;
    this.wordless.delete(path);
    this.notes--;
    // The note's aliases follow its title.
    for (let id = first; id < this.count && this.alive[id] && this.paths[id] === path; id++) {
      this.alive[id] = 0;
      this.live--;
      this.dead++;
      this.lenSum[0] -= this.fieldLen[0][id];
      this.lenSum[1] -= this.fieldLen[1][id];
      this.aliases.delete(id);
    }
  }

  /**
   * Merges the overlay into the base when it has grown past its share (`building`: while the first
   * build runs, the overlay may grow to half the base, so that the merges cost O(n log n) in all;
   * afterwards it stays small, since every query scans it word by word).
   */
  maybeMerge(building: boolean): void {
    const overlayTooBig = building
      ? this.overlayPostings > Math.max(8192, this.post.length / 2)
      : this.overlay.size > 1024 || this.overlayPostings > 8192;
    if (overlayTooBig || this.dead > Math.max(1024, this.live / 8)) this.merge();
  }

  /** Folds the overlay into the base and drops the removed names (renumbering the rest). */
  merge(): void {
    if (this.overlay.size === 0 && this.dead === 0) return;
    const remap = this.dead > 0 ? this.renumber() : null;
    const keys = [...this.overlay.keys()].sort();
    const baseN = this.wordStart.length - 1;
    const maxPostings = this.post.length + this.overlayPostings;
    const post = new Int32Array(maxPostings);
    const tf = new Uint8Array(maxPostings);
    const parts: string[] = [];
    const wordStart: number[] = [0];
    const postStart: number[] = [0];
    let chars = 0;
    let np = 0;
    let bi = 0;
    let oi = 0;
    while (bi < baseN || oi < keys.length) {
      const baseWord = bi < baseN ? this.wordAt(bi) : null;
      const key = oi < keys.length ? keys[oi] : null;
      let word: string;
      let fromBase = -1;
      let fromOverlay: number[] | undefined;
      if (key === null || (baseWord !== null && baseWord < key)) {
        word = baseWord!;
        fromBase = bi++;
      } else if (baseWord === null || key < baseWord) {
        word = key;
        fromOverlay = this.overlay.get(key);
        oi++;
      } else {
        word = key;
        fromBase = bi++;
        fromOverlay = this.overlay.get(key);
        oi++;
      }
      const startNp = np;
      if (fromBase >= 0) {
        for (let k = this.postStart[fromBase]; k < this.postStart[fromBase + 1]; k++) {
          const p = this.post[k];
          const id = remap ? remap[p >> 1] : p >> 1;
          if (id < 0) continue;
          post[np] = id * 2 + (p & 1);
          tf[np++] = this.tf[k];
        }
      }
      if (fromOverlay) {
        for (let k = 0; k < fromOverlay.length; k += 2) {
          const p = fromOverlay[k];
          const id = remap ? remap[p >> 1] : p >> 1;
          if (id < 0) continue;
          post[np] = id * 2 + (p & 1);
          tf[np++] = fromOverlay[k + 1];
        }
      }
      if (np === startNp) continue; // every name with this word is gone
      parts.push(word);
      chars += word.length;
      wordStart.push(chars);
      postStart.push(np);
    }
    this.words = parts.join("");
    this.wordStart = Int32Array.from(wordStart);
    this.postStart = Int32Array.from(postStart);
    this.post = post.slice(0, np);
    this.tf = tf.slice(0, np);
    this.overlay.clear();
    this.overlayPostings = 0;
    // The name arrays grew by half at a time while the names came in: give back the slack.
    if (this.alive.length > this.count + (this.count >> 3) + 64) this.resize(this.count + (this.count >> 4) + 64);
  }

  /** Drops removed names from the name arrays; returns old id → new id (-1: removed). */
  private renumber(): Int32Array {
    const remap = new Int32Array(this.count).fill(-1);
    let n = 0;
    for (let id = 0; id < this.count; id++) {
      if (!this.alive[id]) continue;
      remap[id] = n;
      this.paths[n] = this.paths[id];
      this.fieldLen[0][n] = this.fieldLen[0][id];
      this.fieldLen[1][n] = this.fieldLen[1][id];
      this.nameWords[n] = this.nameWords[id];
      this.lead[n] = this.lead[id];
      this.flags[n] = this.flags[id];
      this.alive[n] = 1;
      n++;
    }
    this.paths.length = n;
    this.alive.fill(0, n, this.count);
    const aliases = [...this.aliases];
    this.aliases.clear();
    for (const [id, alias] of aliases) if (remap[id] >= 0) this.aliases.set(remap[id], alias);
    for (const [path, first] of this.wordless) this.wordless.set(path, remap[first]);
    this.count = n;
    this.dead = 0;
    this.stamp.fill(0);
    return remap;
  }

  /** The id of the live title name of note `path`, or -1. */
  private titleId(path: string): number {
    const words = termCounts(basenameOf(path));
    if (words.size === 0) return this.wordless.get(path) ?? -1;
    // The title's rarest word has the fewest postings to look through.
    let bestBase = -1;
    let bestOverlay: number[] | undefined;
    let fewest = Infinity;
    for (const w of words.keys()) {
      const bi = this.wordStart.length > 1 ? this.findWord(w) : -1;
      const ov = this.overlay.get(w);
      const n = (bi >= 0 ? this.postStart[bi + 1] - this.postStart[bi] : 0) + (ov ? ov.length / 2 : 0);
      if (n < fewest) [fewest, bestBase, bestOverlay] = [n, bi, ov];
    }
    const isTitle = (p: number): boolean => {
      const id = p >> 1;
      return (p & 1) === 0 && this.alive[id] === 1 && !(this.flags[id] & ALIAS) && this.paths[id] === path;
    };
    if (bestBase >= 0) for (let k = this.postStart[bestBase]; k < this.postStart[bestBase + 1]; k++) if (isTitle(this.post[k])) return this.post[k] >> 1;
    if (bestOverlay) for (let k = 0; k < bestOverlay.length; k += 2) if (isTitle(bestOverlay[k])) return bestOverlay[k] >> 1;
    return -1;
  }

  /** Adds one name; returns the number of distinct words in it. */
  private addName(path: string, name: string, folder: string, alias: string | undefined): number {
    const id = this.count++;
    this.grow(this.count);
    this.paths[id] = path;
    if (alias !== undefined) this.aliases.set(id, alias);
    const nameCounts = termCounts(name);
    let folderCounts: Map<string, number>;
    if (this.lastFolder?.folder === folder) folderCounts = this.lastFolder.counts;
    else {
      folderCounts = termCounts(folder);
      this.lastFolder = { folder, counts: folderCounts };
    }
    let words = 0;
    for (const n of nameCounts.values()) words += n;
    this.nameWords[id] = Math.min(255, words);
    this.lead[id] = leadOf(compactName(name));
    this.flags[id] = (alias !== undefined ? ALIAS : 0) | (folder === "" && !path.includes("/") ? ROOT : 0);
    this.fieldLen[0][id] = Math.min(255, nameCounts.size);
    this.fieldLen[1][id] = Math.min(255, folderCounts.size);
    this.lenSum[0] += this.fieldLen[0][id];
    this.lenSum[1] += this.fieldLen[1][id];
    this.alive[id] = 1;
    this.live++;
    for (const [t, n] of nameCounts) this.addPosting(t, id * 2, n);
    for (const [t, n] of folderCounts) this.addPosting(t, id * 2 + 1, n);
    return nameCounts.size;
  }

  private addPosting(word: string, posting: number, tf: number): void {
    let list = this.overlay.get(word);
    if (!list) this.overlay.set(word, (list = []));
    list.push(posting, Math.min(255, tf));
    this.overlayPostings++;
  }

  private grow(n: number): void {
    if (n > this.alive.length) this.resize(Math.max(64, n, Math.ceil(this.alive.length * 1.5)));
  }

  /** Gives the per-name arrays room for `cap` names (at least `count`). */
  private resize(cap: number): void {
    const grown = <T extends Uint8Array | Uint16Array | Int32Array | Float64Array>(a: T, make: (n: number) => T): T => {
      const b = make(cap);
      b.set(a.subarray(0, Math.min(a.length, cap)));
      return b;
    };
    this.fieldLen = [grown(this.fieldLen[0], (c) => new Uint8Array(c)), grown(this.fieldLen[1], (c) => new Uint8Array(c))];
    this.alive = grown(this.alive, (c) => new Uint8Array(c));
    this.nameWords = grown(this.nameWords, (c) => new Uint8Array(c));
    this.lead = grown(this.lead, (c) => new Int32Array(c));
    this.flags = grown(this.flags, (c) => new Uint8Array(c));
    this.exact = new Uint16Array(cap);
    this.acc = new Float64Array(cap);
    this.stamp = new Int32Array(cap);
    this.hits = new Uint16Array(cap);
    this.touched = new Int32Array(cap);
  }

  private wordAt(i: number): string {
    return this.words.slice(this.wordStart[i], this.wordStart[i + 1]);
  }

  /** The base index of `word`, or -1. */
  private findWord(word: string): number {
    const i = this.lowerBound(word);
    return i < this.wordStart.length - 1 && this.wordLen(i) === word.length && this.startsWith(i, word) ? i : -1;
  }

  private wordLen(i: number): number {
    return this.wordStart[i + 1] - this.wordStart[i];
  }

  /** True when base word `i` starts with `s`. */
  private startsWith(i: number, s: string): boolean {
    if (this.wordLen(i) < s.length) return false;
    const o = this.wordStart[i];
    for (let k = 0; k < s.length; k++) if (this.words.charCodeAt(o + k) !== s.charCodeAt(k)) return false;
    return true;
  }

  /** The first base word ≥ `s` (code-unit order). */
  private lowerBound(s: string): number {
    let lo = 0;
    let hi = this.wordStart.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(mid, s) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private compare(i: number, s: string): number {
    const o = this.wordStart[i];
    const len = this.wordLen(i);
    const n = Math.min(len, s.length);
    for (let k = 0; k < n; k++) {
      const d = this.words.charCodeAt(o + k) - s.charCodeAt(k);
      if (d !== 0) return d;
    }
    return len - s.length;
  }

  /**
   * Base words within `max` edits of `q` (Levenshtein, as MiniSearch's fuzzy search), except `q`
   * itself and words starting with it (prefix matches score as such).
   */
  private fuzzyBase(q: string, max: number, emit: (i: number, distance: number) => void): void {
    const words = this.words;
    const wordStart = this.wordStart;
    const L = q.length;
    const n = L + 1;
    const m = n + max; // rows: words longer than L + max cannot match
    const matrix = new Uint8Array(m * n).fill(max + 1);
    for (let j = 0; j < n; j++) matrix[j] = j;
    for (let i = 1; i < m; i++) matrix[i * n] = Math.min(255, i);
    const qc = new Uint16Array(L);
    for (let j = 0; j < L; j++) qc[j] = q.charCodeAt(j);
    // [lo, hi): the base words sharing the first `depth` characters; row `depth` is computed; onPath: those characters are q's.
    const walk = (lo: number, hi: number, depth: number, onPath: boolean): void => {
      let i = lo;
      if (wordStart[i + 1] - wordStart[i] === depth) {
        const d = matrix[depth * n + L];
        if (d <= max && d > 0) emit(i, d);
        i++;
      }
      const row = depth + 1;
      if (row >= m) return;
      const thisRow = row * n;
      const prevRow = thisRow - n;
      const jmin = Math.max(0, row - max - 1);
      const jmax = Math.min(n - 1, row + max);
      while (i < hi) {
        const c = words.charCodeAt(wordStart[i] + depth);
        // The end of the run of words with `c` at `depth`.
        let a = i + 1;
        let b = hi;
        while (a < b) {
          const mid = (a + b) >>> 1;
          if (words.charCodeAt(wordStart[mid] + depth) > c) b = mid;
          else a = mid + 1;
        }
        const next = a;
        const childOnPath = onPath && depth < L && c === qc[depth];
        if (childOnPath && row === L) {
          i = next; // q itself and the words it is a prefix of
          continue;
        }
        let minD = matrix[thisRow];
        for (let j = jmin; j < jmax; j++) {
          const rpl = matrix[prevRow + j] + (c === qc[j] ? 0 : 1);
          const del = matrix[prevRow + j + 1] + 1;
          const ins = matrix[thisRow + j] + 1;
          const d = rpl < del ? (rpl < ins ? rpl : ins) : del < ins ? del : ins;
          matrix[thisRow + j + 1] = d;
          if (d < minD) minD = d;
        }
        if (minD <= max) walk(i, next, row, childOnPath);
        i = next;
      }
    };
    const total = wordStart.length - 1;
    if (total > 0) walk(0, total, 0, true);
  }

  /**
   * The best `limit` notes for `query`, best first; `isHidden` drops notes the caller may not show.
   * A note found by several names (title, aliases) counts once, by its best.
   */
  search(query: string, limit: number, isHidden: (path: string) => boolean): NameHit[] {
    const terms = nameTokens(query);
    if (terms.length === 0 || this.live === 0) return [];
    // Repeated query words score once per occurrence (as MiniSearch did) but count as one word matched.
    const occurrences = new Map<string, number>();
    for (const t of terms) occurrences.set(t, (occurrences.get(t) ?? 0) + 1);
    if (this.clock > 0x3fffffff) {
      this.clock = 0;
      this.stamp.fill(0);
    }
    const queryStart = this.clock + 1;
    this.touchedCount = 0;
    for (const [term, times] of occurrences) this.scoreTerm(term, times, ++this.clock, queryStart);
    return this.topNames(query, occurrences.size, limit, isHidden);
  }

  /** Adds to every name's score what query word `term` (`times` times in the query) gives it: its exact, prefix and fuzzy matches. */
  private scoreTerm(term: string, times: number, termStamp: number, queryStart: number): void {
    const cjk = CJK.test(term);
    const prefix = term.length >= 2 || cjk;
    const edits = maxEdits(term, cjk);
    const baseN = this.wordStart.length - 1;
    const overlay = this.overlay.size > 0 ? this.overlay : null;
    const scoreBase = (i: number, weight: number): void => {
      this.scoreWord(i, overlay ? overlay.get(this.wordAt(i)) : undefined, weight * times, termStamp, queryStart, false);
    };
    // Exact.
    const exact = baseN > 0 ? this.findWord(term) : -1;
    if (exact >= 0) this.scoreWord(exact, overlay?.get(term), times, termStamp, queryStart, true);
    else if (overlay?.has(term)) this.scoreWord(-1, overlay.get(term), times, termStamp, queryStart, true);
    // Prefix: longer words starting with the term.
    if (prefix) {
      for (let i = this.lowerBound(term); i < baseN && this.startsWith(i, term); i++) {
        const len = this.wordLen(i);
        if (len === term.length) continue;
        scoreBase(i, (PREFIX_WEIGHT * len) / (len + 0.3 * (len - term.length)));
      }
    }
    if (edits > 0) this.fuzzyBase(term, edits, (i, d) => scoreBase(i, (FUZZY_WEIGHT * this.wordLen(i)) / (this.wordLen(i) + d)));
    // Overlay words not in the base (those in it were scored with it).
    if (overlay) {
      for (const [word, list] of overlay) {
        if (word === term) continue;
        let weight = 0;
        if (word.startsWith(term)) {
          if (prefix) weight = (PREFIX_WEIGHT * word.length) / (word.length + 0.3 * (word.length - term.length));
        } else if (edits > 0) {
          const d = boundedDistance(term, word, edits);
          if (d <= edits) weight = (FUZZY_WEIGHT * word.length) / (word.length + d);
        }
        if (weight > 0 && (baseN === 0 || this.findWord(word) < 0)) this.scoreWord(-1, list, weight * times, termStamp, queryStart, false);
      }
    }
  }

  /**
   * BM25+ of one word (base word `bi` and/or overlay postings `extra`) for every live name that has
   * it, times `weight`. `isExact`: the word is the query word itself (scored first for each query word).
   */
  private scoreWord(bi: number, extra: number[] | undefined, weight: number, termStamp: number, queryStart: number, isExact: boolean): void {
    const alive = this.alive;
    const from = bi >= 0 ? this.postStart[bi] : 0;
    const to = bi >= 0 ? this.postStart[bi + 1] : 0;
    const post = this.post;
    let df0 = 0;
    let df1 = 0;
    for (let k = from; k < to; k++) {
      const p = post[k];
      if (alive[p >> 1]) {
        if (p & 1) df1++;
        else df0++;
      }
    }
    if (extra) {
      for (let k = 0; k < extra.length; k += 2) {
        const p = extra[k];
        if (alive[p >> 1]) {
          if (p & 1) df1++;
          else df0++;
        }
      }
    }
    if (df0 + df1 === 0) return;
    const n = this.live;
    const idf0 = Math.log(1 + (n - df0 + 0.5) / (df0 + 0.5));
    const idf1 = Math.log(1 + (n - df1 + 0.5) / (df1 + 0.5));
    const avg0 = this.lenSum[0] / n;
    const avg1 = this.lenSum[1] / n;
    const one = (p: number, tf: number): void => {
      const id = p >> 1;
      if (!alive[id]) return;
      const field = p & 1;
      const len = this.fieldLen[field][id];
      const idf = field ? idf1 : idf0;
      const avg = field ? avg1 : avg0;
      const s = weight * BOOST[field] * idf * (BM25_D + (tf * (BM25_K + 1)) / (tf + BM25_K * (1 - BM25_B + (BM25_B * len) / avg)));
      if (this.stamp[id] < queryStart) {
        this.stamp[id] = termStamp;
        this.acc[id] = s;
        this.hits[id] = 1;
        this.exact[id] = isExact ? 1 : 0;
        this.touched[this.touchedCount++] = id;
      } else {
        this.acc[id] += s;
        if (this.stamp[id] !== termStamp) {
          this.stamp[id] = termStamp;
          this.hits[id]++;
          if (isExact) this.exact[id]++;
        }
      }
    };
    for (let k = from; k < to; k++) one(post[k], this.tf[k]);
    if (extra) for (let k = 0; k < extra.length; k += 2) one(extra[k], extra[k + 1]);
  }

  /**
   * The scored names reranked (exact name ×4, name starting with the query ×2, every query word
   * matched ×1.5, longer names slightly down), one hit per note, best `limit`. A heap yields them
   * best first by an upper bound of their final score, exact but for the ×4/×2 of names that may
   * start with the query (their first two characters say); those are worked out when they come up
   * and go back in with their exact score. It stops when the bound falls below the `limit`-th note.
   */
  private topNames(query: string, nTerms: number, limit: number, isHidden: (path: string) => boolean): NameHit[] {
    const wanted = compactName(query.replace(/^.*\//, ""));
    const wantedPath = compactName(query);
    const slash = wantedPath.includes("/");
    const wantedLead = leadOf(wanted);
    const wantedPathLead = leadOf(wantedPath);
    const acc = this.acc;
    const heap = this.touched;
    let size = this.touchedCount;
    /** Names that need the string check (their key is an upper bound until it is done). */
    const pending = new Set<number>();
    for (let k = 0; k < size; k++) {
      const id = heap[k];
      let key = acc[id] * this.hits[id];
      if (nTerms > 1 && this.exact[id] === nTerms) key *= 1.5;
      key /= 1 + Math.max(0, this.nameWords[id] - nTerms) * 0.05;
      const f = this.flags[id];
      const maybeLead = wanted === "" || leadMatches(this.lead[id], wantedLead, wanted.length);
      const maybePath = slash ? !(f & ROOT) : (f & ROOT) !== 0 && ((f & ALIAS) !== 0 || leadMatches(this.lead[id], wantedPathLead, wantedPath.length));
      if (maybeLead || maybePath) {
        pending.add(id);
        key *= 4;
      }
      acc[id] = key;
    }
    for (let k = (size >> 1) - 1; k >= 0; k--) heapDown(heap, size, acc, k);

    const best = new Map<string, { id: number; rank: number }>();
    let kth = -Infinity;
    while (size > 0) {
      const id = heap[0];
      heap[0] = heap[--size];
      if (size > 0) heapDown(heap, size, acc, 0);
      let score = acc[id];
      if (best.size >= limit && score < kth) break;
      const path = this.paths[id]!;
      if (isHidden(path)) continue;
      if (pending.delete(id)) {
        // The key assumed ×4; the name decides: ×4 for the exact name (or path), ×2 for its start, else ×1.
        const cname = compactName(this.aliases.get(id) ?? basenameOf(path));
        if (!(cname === wanted || compactName(path) === wantedPath)) score /= cname.startsWith(wanted) ? 2 : 4;
        if (score < acc[id]) {
          acc[id] = score;
          heap[size++] = id;
          heapUp(heap, acc, size - 1);
          continue;
        }
      }
      const prev = best.get(path);
      if (prev && score <= prev.rank) continue;
      best.set(path, { id, rank: score });
      if (best.size >= limit) {
        const ranks = [...best.values()].map((h) => h.rank).sort((a, b) => b - a);
        kth = ranks[limit - 1];
      }
    }
    return [...best]
      .sort(([pa, a], [pb, b]) => b.rank - a.rank || (pa < pb ? -1 : 1))
      .slice(0, limit)
      .map(([path, { id, rank }]) => {
        const alias = this.aliases.get(id);
        return { path, title: basenameOf(path), ...(alias !== undefined ? { matched_alias: alias } : {}), score: Math.round(rank * 1000) / 1000 };
      });
  }
}
