import { stemEnglish } from "./stemmer";
import type { SearchLanguage, TokenizeOptions } from "./types";

/**
 * Bump when tokens change (folding, stemming, segmentation): a persisted index made with another
 * version is rebuilt once.
 */
export const TOKENIZER_VERSION = 1;

/** Longest token kept; longer runs (hashes, base64) are cut. */
const MAX_TOKEN = 48;

// A word: letters/digits/marks, with inner apostrophes (don't, l'été).
const WORD_RE = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*(?:['’][\p{L}\p{N}\p{M}]+)*/gu;
const ASCII_WORD_RE = /[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*/g;
// Scripts written without spaces (segmented into overlapping bigrams) and Hangul (bigrams too:
// Korean attaches particles to words, so bigrams find a word whatever follows it).
const CJK_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]+/gu;
const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
// eslint-disable-next-line no-control-regex -- ASCII test
const NON_ASCII = /[^\u0000-\u007f]/;
const ASCII_ALPHA = /^[a-z']+$/;

const SPECIAL_FOLD: Record<string, string> = { ß: "ss", æ: "ae", œ: "oe", ø: "o", đ: "d", ð: "d", þ: "th", ł: "l", ı: "i" };
const SPECIAL_RE = /[ßæœøđðþłı]/g;

/** Lower-cases and strips diacritics (Latin, Greek, Cyrillic…); leaves CJK as is except width (NFKC). */
export function foldWord(word: string): string {
  let w = word.toLowerCase();
  if (!NON_ASCII.test(w)) return w;
  w = w.normalize("NFKC").toLowerCase();
  w = w.replace(/’/g, "'");
  if (!NON_ASCII.test(w)) return w;
  w = w.normalize("NFD").replace(/\p{M}+/gu, "").normalize("NFC");
  return w.replace(SPECIAL_RE, (c) => SPECIAL_FOLD[c] ?? c);
}

export function stemWord(w: string, language: SearchLanguage): string {
  if (language === "en" && w.length > 2 && ASCII_ALPHA.test(w)) return stemEnglish(w);
  if (w.includes("'")) return w.replace(/'/g, "");
  return w;
}

/**
 * Calls `cb` for each token of `text` in order: its term (folded, stemmed) and its [start, end)
 * offsets. CJK runs give overlapping bigrams (a single character alone).
 */
export function forEachToken(text: string, language: SearchLanguage, cb: (term: string, start: number, end: number) => void): void {
  const cache = language === "en" ? EN_CACHE : NONE_CACHE;
  let m: RegExpExecArray | null;
  // Pure-ASCII text (most notes in Latin script) takes a faster, non-Unicode regex.
  const re = NON_ASCII.test(text) ? new RegExp(WORD_RE.source, "gu") : new RegExp(ASCII_WORD_RE.source, "g");
  while ((m = re.exec(text)) !== null) {
    const word = m[0];
    const start = m.index;
    let term = cache.get(word);
    if (term === undefined) {
      term = HAS_CJK.test(word) ? CJK_MARK : (termOf(word, language) ?? "");
      if (cache.size >= CACHE_MAX) cache.clear();
      cache.set(word, term);
    }
    if (term === CJK_MARK) {
      splitCjkWord(word, start, language, cb);
      continue;
    }
    if (term) cb(term, start, start + word.length);
  }
}

/** Word → term caches (words repeat a lot; stemming is the costly part). */
const EN_CACHE = new Map<string, string>();
const NONE_CACHE = new Map<string, string>();
const CACHE_MAX = 200_000;
const CJK_MARK = "\u0000";

function splitCjkWord(word: string, start: number, language: SearchLanguage, cb: (term: string, start: number, end: number) => void): void {
  const cjk = new RegExp(CJK_RE.source, "gu");
  let last = 0;
  let c: RegExpExecArray | null;
  while ((c = cjk.exec(word)) !== null) {
    if (c.index > last) emitWord(word.slice(last, c.index), start + last, language, cb);
    emitCjk(c[0], start + c.index, cb);
    last = c.index + c[0].length;
  }
  if (last < word.length) emitWord(word.slice(last), start + last, language, cb);
}

function termOf(raw: string, language: SearchLanguage): string | null {
  let w = foldWord(raw);
  if (!w) return null;
  if (w.length > MAX_TOKEN) w = w.slice(0, MAX_TOKEN);
  return stemWord(w, language) || null;
}

function emitWord(raw: string, start: number, language: SearchLanguage, cb: (term: string, start: number, end: number) => void): void {
  if (!/[\p{L}\p{N}]/u.test(raw)) return;
  const term = termOf(raw, language);
  if (term) cb(term, start, start + raw.length);
}

function emitCjk(run: string, start: number, cb: (term: string, start: number, end: number) => void): void {
  const chars = Array.from(run);
  // Half-width katakana folds to full width; offsets stay those of the original characters.
  const norm = /[\uff61-\uff9f]/.test(run) ? chars.map((c) => c.normalize("NFKC")) : chars;
  if (chars.length === 1) {
    cb(norm[0], start, start + chars[0].length);
    return;
  }
  let off = start;
  for (let i = 0; i + 1 < chars.length; i++) {
    cb(norm[i] + norm[i + 1], off, off + chars[i].length + chars[i + 1].length);
    off += chars[i].length;
  }
}

/** The terms of `text`, in order (duplicates kept). */
export function tokenize(text: string, opts?: TokenizeOptions): string[] {
  const out: string[] = [];
  forEachToken(text, opts?.language ?? "en", (t) => out.push(t));
  return out;
}

/** True when a term is a CJK bigram/unigram (prefix search does not apply to those). */
export function isCjkTerm(term: string): boolean {
  return HAS_CJK.test(term);
}
