/**
 * Snippets: the window of a section's text around its densest cluster of matched terms, cut at whole
 * words, with what Obsidian does not show taken out (`showable`). Owns no index data: the index hands
 * it texts, term sequences and the query's wanted terms.
 */
import { accentKey, forEachToken, stemWord, type TermDict } from "../tokenize";
import type { ParsedQuery, SearchLanguage } from "../types";
import { commentsOpenAt, showable } from "./showable";

export interface TermSet {
  exact: Set<string>;
  prefixes: string[];
  /** English: the stems of `exact` (a query word matches the other forms of its stem). */
  stems?: Set<string>;
  /** The query words typed without accents: each matches its accented spellings (see `accentKey`). */
  keys?: Set<string>;
}

/** The terms a query looks for (not its exclusions): what snippets centre on. */
export function positiveTermSet(pq: ParsedQuery, language: SearchLanguage = "en"): TermSet {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  for (const clause of pq.clauses)
    for (const it of clause) {
      if (it.kind === "phrase") for (const t of it.terms) exact.add(t);
      else if (it.prefix) prefixes.push(it.term);
      else exact.add(it.term);
    }
  // As the dictionary's forms: a word typed without accents matches every accented spelling, one
  // typed with them only the spelling without.
  const keys = new Set<string>();
  for (const t of [...exact]) {
    const k = accentKey(t);
    if (k === t) keys.add(k);
    else exact.add(k);
  }
  if (language !== "en") return { exact, prefixes, keys };
  return { exact, prefixes, keys, stems: new Set([...exact].map((t) => stemWord(t, "en"))) };
}

/** True when text term `t` is one the query looks for. */
function wanted(want: TermSet, t: string): boolean {
  return (
    want.exact.has(t) ||
    (want.keys !== undefined && want.keys.has(accentKey(t))) ||
    (want.stems !== undefined && want.stems.has(stemWord(t, "en"))) ||
    want.prefixes.some((p) => t.startsWith(p))
  );
}

const WORD_STOP = /[\s\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u3000-\u303f\uff01-\uff0f]/u;

/** A window of `words` tokens around the densest cluster of matched terms; the whole text when 0. */
export function snippet(text: string, want: TermSet, words: number, language: SearchLanguage): string {
  if (words <= 0) return showable(text);
  const starts: number[] = [];
  const ends: number[] = [];
  const hit: number[] = [];
  forEachToken(text, language, (t, s, e) => {
    starts.push(s);
    ends.push(e);
    hit.push(wanted(want, t) ? 1 : 0);
  });
  const n = starts.length;
  if (n <= words) return showable(text.trim());
  const w = snippetWindow(hit, n, words);
  return cutSnippet(text, n, w.first, w.last, starts[w.first], ends[w.last]);
}

/** The `words` tokens (first..last, of `n` > `words`) around the densest cluster of hits, centred on them. */
export function snippetWindow(hit: ArrayLike<number>, n: number, words: number): { first: number; last: number } {
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
  return { first: bestAt, last: Math.min(n, bestAt + words) - 1 };
}

/** The text of tokens first..last of `n` (`start`: where token `first` starts, `end`: where `last` ends), with "…" where cut. */
export function cutSnippet(text: string, n: number, first: number, last: number, start: number, end: number): string {
  // Whole words: keep leading punctuation (`#tag`, `[[link`), never cut inside unspaced scripts.
  let a = first === 0 ? 0 : start;
  while (a > 0 && !WORD_STOP.test(text[a - 1])) a--;
  let b = last === n - 1 ? text.length : end;
  while (b < text.length && !WORD_STOP.test(text[b])) b++;
  return showable((first > 0 ? "… " : "") + text.slice(a, b).trim() + (last < n - 1 ? " …" : ""), commentsOpenAt(text, a));
}

/** A query's wanted terms as term ids, to mark matches in a chunk's stored term sequence. */
export class WantedIds {
  private readonly exact = new Set<number>();
  private readonly byPrefix = new Map<number, boolean>();
  constructor(
    readonly terms: TermSet,
    private readonly dict: TermDict,
    language: SearchLanguage = "en",
  ) {
    for (const t of terms.exact) for (const id of dict.forms(t, language)) this.exact.add(id);
  }
  has(id: number): boolean {
    if (this.exact.has(id)) return true;
    if (this.terms.prefixes.length === 0) return false;
    let v = this.byPrefix.get(id);
    if (v === undefined) {
      const t = id >= 0 && id < this.dict.size ? this.dict.name(id) : "";
      v = this.terms.prefixes.some((p) => t.startsWith(p));
      this.byPrefix.set(id, v);
    }
    return v;
  }
}
