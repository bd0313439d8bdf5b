/**
 * Reading a chunk back from what the index stored: its body's term sequence, whether that sequence
 * holds a phrase, how close the query's words are, and its snippet (cut from a text the caller read
 * from the note: the index holds no texts). Owns scratch buffers only; it never changes the index.
 */
import { forEachToken } from "../tokenize";
import type { SearchLanguage } from "../types";
import { SEQ_A, SEQ_B, span, type DocEntry } from "./doc";
import { showable } from "./showable";
import { cutSnippet, snippet, snippetWindow, type WantedIds } from "./snippet";

export class ChunkReader {
  private seqScratch = new Int32Array(1024);
  private hitScratch = new Uint8Array(1024);
  /** closestRun's matches (token positions and clauses) and its per-clause counts. */
  private posScratch = new Int32Array(256);
  private clScratch = new Int8Array(256);
  private readonly clauseCount = new Int32Array(31);

  /** Decodes chunk `o` of `doc`'s body term ids into `seqScratch`; returns how many. */
  private decodeSeq(doc: DocEntry, o: number): number {
    const b = doc.seq;
    let p = span(doc, o, SEQ_A);
    const end = span(doc, o, SEQ_B);
    if (this.seqScratch.length < end - p) this.seqScratch = new Int32Array(end - p);
    const hay = this.seqScratch;
    let n = 0;
    while (p < end) {
      let v = 0;
      let shift = 0;
      for (;;) {
        const x = b[p++];
        v |= (x & 0x7f) << shift;
        if (x < 0x80) break;
        shift += 7;
      }
      hay[n++] = v;
    }
    return n;
  }

  /** True when chunk `o` of `doc`'s body holds the term ids of `needle` in a row. */
  hasSequence(doc: DocEntry, o: number, needle: Int32Array): boolean {
    const n = this.decodeSeq(doc, o);
    const hay = this.seqScratch;
    const m = needle.length;
    outer: for (let i = 0; i + m <= n; i++) {
      for (let j = 0; j < m; j++) if (hay[i + j] !== needle[j]) continue outer;
      return true;
    }
    return false;
  }

  /**
   * How close together the query's clauses are in chunk `o` of `doc`'s body: the most clauses it
   * holds (`clauseOf[id]`: 1 + the clause index of term id, below 31; 0 for other terms) and the
   * fewest tokens a run holding them all spans. `{ covered: 0 or 1, span: 0 }` when it holds fewer than two.
   * `enough`: once a run holding `clauses` clauses within `enough` tokens is found, the rest of the
   * chunk is not read, and that run's span is the answer (a caller for whom any span up to `enough`
   * counts the same loses nothing).
   */
  closestRun(doc: DocEntry, o: number, clauseOf: Int8Array, clauses = 31, enough = 0): { covered: number; span: number } {
    // The query's terms' positions and clauses, read straight from the varints (most tokens are not
    // the query's: no sequence is decoded into an array first).
    const b = doc.seq;
    let p = span(doc, o, SEQ_A);
    const end = span(doc, o, SEQ_B);
    if (this.posScratch.length < end - p) {
      this.posScratch = new Int32Array(Math.max(end - p, 2 * this.posScratch.length));
      this.clScratch = new Int8Array(this.posScratch.length);
    }
    const pos = this.posScratch;
    const cl = this.clScratch;
    const marks = clauseOf.length;
    const count = this.clauseCount;
    let m = 0;
    let all = 0;
    // The shortest window holding all `clauses` clauses so far (two pointers, moved as matches come).
    let have = 0;
    let first = 0;
    let best = Infinity;
    for (let i = 0; p < end; i++) {
      let id = b[p++];
      if (id >= 0x80) {
        id &= 0x7f;
        let shift = 7;
        for (;;) {
          const x = b[p++];
          id |= (x & 0x7f) << shift;
          if (x < 0x80) break;
          shift += 7;
        }
      }
      const c = id < marks ? clauseOf[id] - 1 : -1;
      if (c < 0) continue;
      pos[m] = i;
      cl[m++] = c;
      all |= 1 << c;
      if (count[c]++ === 0) have++;
      while (have === clauses) {
        best = Math.min(best, i - pos[first] + 1);
        if (--count[cl[first++]] === 0) have--;
      }
      if (best <= enough) {
        count.fill(0);
        return { covered: clauses, span: best };
      }
    }
    count.fill(0);
    let covered = 0;
    for (let x = all; x; x &= x - 1) covered++;
    if (covered < 2) return { covered, span: 0 };
    if (covered === clauses) return { covered, span: best };
    // The shortest window of matches holding every clause present (two pointers over the matches).
    have = 0;
    best = Infinity;
    for (let a = 0, z = 0; z < m; z++) {
      if (count[cl[z]]++ === 0) have++;
      while (have === covered) {
        best = Math.min(best, pos[z] - pos[a] + 1);
        if (--count[cl[a++]] === 0) have--;
      }
    }
    count.fill(0);
    return { covered, span: best };
  }

  /**
   * `snippet` of chunk `o`'s `text` (read from its note), found in its stored term sequence (the
   * body's tokens, in order): a chunk of at most `words` tokens is not tokenized again, a longer one
   * only to locate the window — up to the window's end when `asIndexed` (the note is unchanged since
   * it was indexed, so the sequence is this text's), otherwise all of it, to check that the text
   * still gives as many tokens. A text that is no longer the one indexed is tokenized the old way.
   */
  sectionSnippet(doc: DocEntry, o: number, text: string, want: WantedIds, words: number, language: SearchLanguage, asIndexed = false): string {
    if (words <= 0) return showable(text);
    const n = this.decodeSeq(doc, o);
    if (n <= words) return showable(text.trim());
    if (this.hitScratch.length < n) this.hitScratch = new Uint8Array(Math.max(n, 2 * this.hitScratch.length));
    const hit = this.hitScratch;
    const ids = this.seqScratch;
    for (let i = 0; i < n; i++) hit[i] = want.has(ids[i]) ? 1 : 0;
    const { first, last } = snippetWindow(hit, n, words);
    let k = 0;
    let start = 0;
    let end = 0;
    forEachToken(
      text,
      language,
      (_t, s, e) => {
        if (k === first) start = s;
        if (k === last) end = e;
        k++;
      },
      undefined,
      asIndexed ? last + 1 : Infinity,
    );
    // The sequence was made from this very text; should they ever disagree, tokenize it the old way.
    if (asIndexed ? k <= last : k !== n) return snippet(text, want.terms, words, language);
    return cutSnippet(text, n, first, last, start, end);
  }
}
