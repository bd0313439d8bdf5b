/**
 * Text into terms, exactly as notes and queries are both tokenized: Unicode words, folding, CJK
 * bigrams, and the term dictionary (`TermDict`). Words are indexed as written (folded, not stemmed);
 * a query word reaches its accented and unaccented forms and the other forms of its English stem
 * through the dictionary (`TermDict.forms`), its own form weighing more. Bump TOKENIZER_VERSION on
 * any change.
 */
import { addOne, valuesOf, type OneOrMany } from "../one-or-many";
import { fnv1a } from "../hash";
import { grownArray } from "../memory";
import { rampedSteps } from "../time-slice";
import { detach } from "../strings";
import { stemEnglish } from "./stemmer";
import type { SearchLanguage, TokenizeOptions } from "./types";

/**
 * Bump when tokens change (folding, stemming, segmentation): a persisted index made with another
 * version is rebuilt once.
 */
export const TOKENIZER_VERSION = 3;

/** Longest token kept; longer runs (hashes, base64) are cut. */
const MAX_TOKEN = 48;

// Scripts written without spaces (segmented into overlapping bigrams) and Hangul (bigrams too:
// Korean attaches particles to words, so bigrams find a word whatever follows it).
const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
// eslint-disable-next-line no-control-regex -- ASCII test
const NON_ASCII = /[^\u0000-\u007f]/;
const ASCII_ALPHA = /^[a-z']+$/;

const SPECIAL_FOLD = new Map<string, string>([["ß", "ss"], ["æ", "ae"], ["œ", "oe"], ["ø", "o"], ["đ", "d"], ["ð", "d"], ["þ", "th"], ["ł", "l"], ["ı", "i"]]);
const FOLDED_MARKS = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Arabic}\p{Script=Hebrew}])\p{M}+/gu;
const SPECIAL_RE = /[\u00df\u00e6\u0153\u00f8\u0111\u00f0\u00fe\u0142\u0131]/g;
/**
 * A code unit `accentKey` may change: a mark, or a letter neither ASCII nor Han, kana or Hangul (a
 * term of those only carries no mark to take off, and is NFC already).
 */
// eslint-disable-next-line no-control-regex -- ASCII range
const MAY_FOLD = /[^\u0000-\u007f\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]|\p{M}/u;

/**
 * A word as a term: lower-cased, width and compatibility forms folded (NFKC), ’ as '. Accents stay:
 * a query word reaches its accented and unaccented forms through the dictionary (`accentKey`,
 * `TermDict.forms`), its own form weighing more. Folded into the terms, accents made distinct words
 * one (Vietnamese writes its tones as accents: "quá", "quả", "qua" all "qua"; on Obsidian's
 * Vietnamese help vault known-item MRR@10 was 0.942 against 0.967 for FTS5).
 */
export function foldWord(word: string): string {
  const w = word.toLowerCase();
  if (!NON_ASCII.test(w)) return w;
  return w.normalize("NFKC").toLowerCase().replace(/\u2019/g, "'");
}

/**
 * A term without its accents: diacritics off Latin, Greek, Cyrillic, Arabic and Hebrew letters, and
 * ß, æ, œ, ø, đ, ð, þ, ł, ı spelled in ASCII. The terms sharing a key are one another's other forms
 * ("café", "cafe"). A mark of another script is part of its letter (Thai, Devanagari, Bengali vowel
 * signs) and stays.
 */
export function accentKey(term: string): string {
  // CJK terms skip the normalizing (a dictionary's catch-up took 45 ms for 16k of them).
  if (!MAY_FOLD.test(term)) return term;
  const w = term.normalize("NFD").replace(FOLDED_MARKS, "$1").normalize("NFC");
  return w.replace(SPECIAL_RE, (c) => SPECIAL_FOLD.get(c) ?? c);
}

export function stemWord(w: string, language: SearchLanguage): string {
  if (language === "en" && w.length > 2 && ASCII_ALPHA.test(w)) return stemEnglish(w);
  if (w.includes("'")) return w.replace(/'/g, "");
  return w;
}

/** True when `stemWord(term, "en")` may give another term than `term` (ASCII letters, 3 or more). */
function stemmable(term: string): boolean {
  return term.length > 2 && ASCII_ALPHA.test(term);
}

const stemOf = stemEnglish;

/** Endings a word's forms take (see `TermDict.forms`). */
const FORM_ENDINGS = (
  " s es ed d ing er ers est ly ies ied ier iest ily iness ness ment ments ation ations ational ion ions al ally ity ities " +
  "ive ively able ably ible ize izes ized izing ization ise ised ising ful fully less ism ist ists ic ical ically ence ences " +
  "ance ances ent ents ant ants ently antly or ors y ings"
).split(" ");
/** Per ending: 31 to the power of its length, and its `polyHash` (so a base's hash gives base + ending's). */
const ENDING_POW = Int32Array.from(FORM_ENDINGS, (e) => {
  let p = 1;
  for (let i = 0; i < e.length; i++) p = Math.imul(p, 31);
  return p;
});
const ENDING_HASH = Int32Array.from(FORM_ENDINGS, (e) => polyHash(e));

/** A string's polynomial hash (31), over UTF-16 code units: polyHash(a + b) = polyHash(a) * 31^|b| + polyHash(b). */
function polyHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * A string's 32-bit hash for the accent buckets: FNV-1a, then a finalizer. Not `polyHash`, whose
 * collisions are easy to write ("Aa" and "BB"): a note full of words sharing one bucket would make
 * every search for a word of that key filter them all.
 */
function keyHash(s: string): number {
  return mixHash(fnv1a(s));
}

/** A 32-bit finalizer (MurmurHash3's): every bit of `h` moves the low bits used as a table slot. */
function mixHash(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

/** A bit of the dictionary's term bitset for a `polyHash` (mixed: the low bits of a polynomial hash of short words clump). */
function hashBit(h: number, mask: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  h = Math.imul(h ^ (h >>> 16), 0x45d9f3b);
  return (h ^ (h >>> 16)) & mask;
}

// Character classes, computed once per UTF-16 code (lazily) from the Unicode regexes above, so the
// scanner below runs a char-code loop with no regex per character.
const C_UNKNOWN = 0;
const C_OTHER = 1;
const C_WORD = 2; // \p{L}\p{N}, not CJK
const C_CJK = 3; // \p{L}\p{N} in a CJK script (bigrams)
const C_MARK = 4; // \p{M}
const C_CJKX = 5; // ー: joins CJK runs but alone does not make a word CJK
const C_SEG = 6; // \p{L}\p{N} in a script written without spaces between words, not CJK (Thai, Lao, Khmer, Myanmar): Intl.Segmenter's words
const CLASS = new Uint8Array(0x10000);
const ASTRAL_CLASS = new Map<number, number>();
const LN_RE = /^[\p{L}\p{N}]$/u;
const M_RE = /^\p{M}$/u;
const CJK_CHAR_RE = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]$/u;
/** One character (letter or mark) of a script written without spaces between words: Thai, Lao, Khmer, Myanmar (chunk.ts counts their words by it). */
export const UNSPACED_CHAR = /^[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]$/u;

function classify(ch: string): number {
  if (LN_RE.test(ch)) return CJK_CHAR_RE.test(ch) ? (HAS_CJK.test(ch) ? C_CJK : C_CJKX) : UNSPACED_CHAR.test(ch) ? C_SEG : C_WORD;
  return M_RE.test(ch) ? C_MARK : C_OTHER;
}

for (let c = 0; c < 128; c++) CLASS[c] = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) ? C_WORD : C_OTHER;

/** The class of the code point at `i` (its length in `len.n`). */
function classAt(text: string, i: number, len: { n: number }): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) {
      len.n = 2;
      const cp = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
      let k = ASTRAL_CLASS.get(cp);
      if (k === undefined) {
        k = classify(String.fromCodePoint(cp));
        if (ASTRAL_CLASS.size < 10_000) ASTRAL_CLASS.set(cp, k);
      }
      return k;
    }
  }
  len.n = 1;
  let k = CLASS[c];
  if (k === C_UNKNOWN) k = CLASS[c] = classify(String.fromCharCode(c));
  return k;
}

const LEN = { n: 1 };

/**
 * Calls `cb` for each token of `text` in order: its term (folded, stemmed) and its [start, end)
 * offsets. CJK runs give overlapping bigrams (a single character alone). A char-code scanner:
 * words are letters/digits/marks with inner apostrophes (' or ’); terms come from a bounded
 * word → term cache.
 */
export function forEachToken(
  text: string,
  language: SearchLanguage,
  cb: (term: string, start: number, end: number, id: number) => void,
  /** When given, `id` is the term's id in it (ASCII words: cached with the word, no map lookup). */
  dict?: TermDict,
  /**
   * Stops once this many tokens were given, at the end of the word that gave the last of them (a
   * CJK or Thai run may give a few more): a snippet needs the text only up to its window's end.
   */
  maxTokens = Infinity,
): void {
  let given = 0;
  // Terms no longer depend on the language (words are not stemmed): one cache serves both.
  void language;
  const cache = WORD_CACHE;
  const ascii = WORD_ASCII;
  const emit = dict
    ? (t: string, s: number, e: number) => {
        given++;
        cb(t, s, e, dict.id(t));
      }
    : (t: string, s: number, e: number) => {
        given++;
        cb(t, s, e, -1);
      };
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    // ASCII fast path: a run of [A-Za-z0-9] (with inner ') not touching non-ASCII characters. The
    // word's hash is computed while scanning; a direct-mapped cache answers without slicing.
    if (c < 128) {
      if (CLASS[c] !== C_WORD) {
        i++;
        continue;
      }
      let h = c;
      let j = i + 1;
      for (;;) {
        while (j < n) {
          const d = text.charCodeAt(j);
          if (d < 128 && CLASS[d] === C_WORD) {
            h = (Math.imul(h, 31) + d) | 0;
            j++;
          } else break;
        }
        if (j + 1 < n && text.charCodeAt(j) === 39) {
          const d = text.charCodeAt(j + 1);
          if (d < 128 && CLASS[d] === C_WORD) {
            h = (Math.imul(h, 31) + 39 * 31 + d) | 0;
            j += 2;
            continue;
          }
        }
        break;
      }
      const after = j < n ? text.charCodeAt(j) : 0;
      if (after < 128 && !(after === 39 && j + 1 < n && text.charCodeAt(j + 1) >= 128)) {
        const slot = (h ^ (h >>> 15)) & ASCII_MASK;
        const key = ascii.keys[slot];
        let term: string;
        if (key !== undefined && key.length === j - i && text.startsWith(key, i)) term = ascii.terms[slot];
        else {
          ascii.dicts[slot] = undefined;
          let word = text.slice(i, j);
          const known = cache.get(word);
          if (known !== undefined) term = known;
          else {
            // Long slices keep their whole source text alive: cache a flat copy.
            word = detach(word);
            term = termOf(word, language) ?? "";
            if (cache.size >= CACHE_MAX) cache.clear();
            cache.set(word, term);
          }
          ascii.keys[slot] = word;
          ascii.terms[slot] = term;
        }
        if (term) {
          if (dict) {
            let id: number;
            if (ascii.dicts[slot] === dict) id = ascii.ids[slot];
            else {
              id = dict.id(term);
              ascii.dicts[slot] = dict;
              ascii.ids[slot] = id;
            }
            cb(term, i, j, id);
          } else cb(term, i, j, -1);
          if (++given >= maxTokens) return;
        }
        i = j;
        continue;
      }
      // The word goes on with non-ASCII characters: the general scanner below.
    }
    const k = classAt(text, i, LEN);
    if (k !== C_WORD && k !== C_CJK && k !== C_CJKX && k !== C_SEG) {
      i += LEN.n;
      continue;
    }
    // General word: [L N][L N M]* (['’][L N M]+)*
    let hasCjk = k === C_CJK;
    let hasSeg = k === C_SEG;
    let j = i + LEN.n;
    for (;;) {
      while (j < n) {
        const kk = classAt(text, j, LEN);
        if (kk >= C_WORD) {
          if (kk === C_CJK) hasCjk = true;
          else if (kk === C_SEG) hasSeg = true;
          j += LEN.n;
        } else break;
      }
      if (j + 1 < n) {
        const a = text.charCodeAt(j);
        if (a === 39 || a === 0x2019) {
          const kk = classAt(text, j + 1, LEN);
          if (kk >= C_WORD) {
            if (kk === C_CJK) hasCjk = true;
            else if (kk === C_SEG) hasSeg = true;
            j += 1 + LEN.n;
            continue;
          }
        }
      }
      break;
    }
    if (hasCjk) splitCjkWord(text, i, j, language, emit);
    else if (hasSeg) splitSegWord(text, i, j, language, emit);
    else {
      const term = cachedTerm(text.slice(i, j), language);
      if (term) emit(term, i, j);
    }
    if (given >= maxTokens) return;
    i = j;
  }
}

/** Word → term cache (words repeat a lot). */
const WORD_CACHE = new Map<string, string>();
const CACHE_MAX = 200_000;
/** Direct-mapped caches for ASCII words (a collision replaces the entry): bounded, no allocation on a hit. */
const ASCII_MASK = (1 << 16) - 1;
interface AsciiCache {
  keys: (string | undefined)[];
  terms: string[];
  /** The dictionary `ids[slot]` belongs to. */
  dicts: (TermDict | undefined)[];
  ids: Int32Array;
}
const newAsciiCache = (): AsciiCache => ({
  keys: new Array<string | undefined>(ASCII_MASK + 1).fill(undefined),
  terms: new Array<string>(ASCII_MASK + 1).fill(""),
  dicts: new Array<TermDict | undefined>(ASCII_MASK + 1).fill(undefined),
  ids: new Int32Array(ASCII_MASK + 1),
});

/** A table this large (slots) grows in steps (see `TermDict.grow`); a smaller one doubles at once (≤ ~15 ms). */
const STEPPED_GROWTH_FROM = 1 << 18;
/** Terms moved to the grown table per term added. */
const MOVE_STEP = 8;
/** The dictionary's code units move to a larger array in steps from this many (2 MB); fewer are copied at once. */
const STEPPED_CHARS_FROM = 1 << 20;
/** Code units copied to the larger array per term added (a term is ~8: the move ends long before it fills). */
const CHARS_MOVE_STEP = 4096;

/** `TermDict.restoreLines` takes a step about every this many bytes, and every RESTORE_TERMS terms (steps of ≤ 6 ms measured at 4.65M terms). */
const RESTORE_STEP = 1 << 18;
const RESTORE_TERMS = 1 << 16;

/** `TermDict.restoreDecoded`'s bytes decoded at once. */
const DECODED_SLICE = 1 << 20;
const utf8 = new TextDecoder();
/** Decodes a slice of the dictionary after its first: a U+FEFF there is a term's, not a byte order mark. */
const utf8KeepBom = new TextDecoder("utf-8", { ignoreBOM: true });

/**
 * Adds to `into` the newlines of `bytes[a, b)` (`lines`) and the UTF-16 code units valid UTF-8 makes
 * of them (`units`: one a sequence's first byte, two for a 4-byte sequence). One loop: `indexOf` a
 * newline cost ~50 ns a call, 0.27 s for 4.65M terms.
 */
function countLines(bytes: Uint8Array, a: number, b: number, into: { lines: number; units: number }): void {
  let lines = 0;
  let units = 0;
  for (let i = a; i < b; i++) {
    const c = bytes[i];
    lines += NEWLINE[c];
    units += UNITS_OF_BYTE[c];
  }
  into.lines += lines;
  into.units += units;
}
/** Per byte: 1 for a newline. Looked up, not compared: text mixing ASCII and CJK mispredicts branches. */
const NEWLINE = new Uint8Array(256);
NEWLINE[10] = 1;
/** Per byte: the UTF-16 code units the sequence it starts makes (0 for a continuation byte). */
const UNITS_OF_BYTE = Uint8Array.from({ length: 256 }, (_, c) => ((c & 0xc0) === 0x80 ? 0 : c >= 0xf0 ? 2 : 1));

/**
 * Decodes `bytes` from `at.i` to about `end` (a sequence begun before it is finished) into `chars`
 * from `at.u`, a newline ending term `at.k` (its end in `starts[at.k + 1]`); false at bytes that are
 * not UTF-8 as TextEncoder writes it (an overlong form, a surrogate, a sequence cut short).
 */
function decodeLines(bytes: Uint8Array, end: number, chars: Uint16Array, starts: Int32Array, at: { i: number; u: number; k: number }): boolean {
  const n = bytes.length;
  let i = at.i;
  let u = at.u;
  let k = at.k;
  while (i < end) {
    const c = bytes[i++];
    if (c < 0x80) {
      if (c === 10) starts[++k] = u;
      else chars[u++] = c;
      continue;
    }
    let cp: number;
    if (c >= 0xc2 && c <= 0xdf) {
      if (i >= n || (bytes[i] & 0xc0) !== 0x80) return false;
      cp = ((c & 0x1f) << 6) | (bytes[i] & 0x3f);
      i += 1;
    } else if (c >= 0xe0 && c <= 0xef) {
      if (i + 1 >= n || (bytes[i] & 0xc0) !== 0x80 || (bytes[i + 1] & 0xc0) !== 0x80) return false;
      cp = ((c & 0x0f) << 12) | ((bytes[i] & 0x3f) << 6) | (bytes[i + 1] & 0x3f);
      if (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff)) return false;
      i += 2;
    } else if (c >= 0xf0 && c <= 0xf4) {
      if (i + 2 >= n || (bytes[i] & 0xc0) !== 0x80 || (bytes[i + 1] & 0xc0) !== 0x80 || (bytes[i + 2] & 0xc0) !== 0x80) return false;
      cp = ((c & 0x07) << 18) | ((bytes[i] & 0x3f) << 12) | ((bytes[i + 1] & 0x3f) << 6) | (bytes[i + 2] & 0x3f);
      if (cp < 0x10000 || cp > 0x10ffff) return false;
      i += 3;
      cp -= 0x10000;
      chars[u++] = 0xd800 + (cp >> 10);
      cp = 0xdc00 + (cp & 0x3ff);
    } else return false;
    chars[u++] = cp;
  }
  at.i = i;
  at.u = u;
  at.k = k;
  return true;
}

/** Each entry of `a` made the sum of it and every entry before it. */
function sumInPlace(a: Int32Array): void {
  for (let i = 1; i < a.length; i++) a[i] += a[i - 1];
}

/** Terms `[a, b)` into `order` (their hashes into `ordered`) at their bucket's end, moving it down (`counts`: each bucket's end, + 1). */
function bucketTerms(a: number, b: number, hashes: Int32Array, counts: Int32Array, mask: number, shift: number, order: Int32Array, ordered: Int32Array): void {
  for (let t = a; t < b; t++) {
    const h = hashes[t];
    const at = --counts[((h & mask) >>> shift) + 1];
    order[at] = t;
    ordered[at] = h;
  }
}

/** Places `order[a, b)` (hashes `ordered`) in an open-addressing `table` of term id + 1 (linear probing). */
function placeInOrder(table: Int32Array, a: number, b: number, order: Int32Array, ordered: Int32Array): void {
  const mask = table.length - 1;
  for (let j = a; j < b; j++) {
    let i = ordered[j] & mask;
    while (table[i] !== 0) i = (i + 1) & mask;
    table[i] = order[j] + 1;
  }
}

/** `addTermBits` writes a new bitset's pages this many words (256 KB) between two looks at its deadline. */
const TERM_BITS_PAGES_STEP = 1 << 16;

/** A search catches the dictionary's bitset and accent map up by at most this many terms each (4,096 a step; see `catchUpForSearch`). */
const SEARCH_CATCH_UP = 1 << 14;
const searchDue = (): (() => boolean) => {
  let steps = 0;
  return () => ++steps * 4096 >= SEARCH_CATCH_UP;
};

/** How many terms `TermDict.recent` holds. */
const RECENT_TERMS = 1 << 14;

/** Term → dense id (append-only). */
export class TermDict {
  /**
   * The terms' UTF-16 code units, one after another (term k's are `[starts[k], starts[k + 1])`), with
   * an open-addressing table of their ids over them. A `Map` of the terms and an array of them took
   * ~60 bytes a term: 282 MB for the 4.65M terms of a 100k-note vault with numbers, hashes, URLs and
   * some CJK text (the bench's generated vault has 30k). This takes ~2 bytes a code unit, 4 for
   * where a term starts and 6–11 of the table (103 MB for those 4.65M terms).
   */
  private chars: Uint16Array = new Uint16Array(1 << 12);
  private used = 0;
  private starts = new Int32Array(1 << 10);
  /**
   * While the code units move to an array twice as large, in steps (see `append`): that array, where
   * terms from unit `charsFrom` on are written, the units before `charsCopied` copied over already
   * (the ones before `charsFrom` are read from `chars` until the move ends).
   * Copied at once, 64 MB of them held the event loop for 42 ms at 4M terms.
   */
  private nextChars: Uint16Array | null = null;
  private charsFrom = 0;
  private charsCopied = 0;
  /**
   * Term id + 1 (0: empty), at most 70% full (linear probing: a lookup compares ~2 terms, a miss
   * ~6 lengths). No hash is kept a term: half full with one, the table and the hashes were 134 MB
   * of the dictionary's 172 for 4.65M terms; a rehash computes them again from the code units.
   */
  private table = new Int32Array(1 << 11);
  private count = 0;
  /** Seeds the hash: collisions cannot be written into a note ahead of time. */
  private readonly seed = (Math.random() * 0x7fffffff) | 0;
  /**
   * The terms looked up lately (emptied when full): indexing asks for the same term strings over and
   * over (the tokenizer's caches hand out one string a word), whose hash V8 keeps in the string, so a
   * Map answers them faster than hashing their code units again (the bench's 10k build: CPU +14%
   * without it).
   */
  private recent = new Map<string, number>();

  /** How many terms (ids `[0, size)`). */
  get size(): number {
    return this.count;
  }

  /**
   * While the table grows in steps (see `grow`): the table before, read only, holding terms
   * `[0, oldCount)`; `table` holds `[0, moved)` and every term added since.
   */
  private old: Int32Array | null = null;
  private oldCount = 0;
  private moved = 0;

  /** Term t's id (the last one given to it), or undefined. */
  get(t: string): number | undefined {
    const e = this.table[this.slotOf(t)];
    if (e !== 0) return e - 1;
    return this.old ? this.oldGet(t) : undefined;
  }

  /** The table slot holding `t`, or the empty one where it would go. */
  private slotOf(t: string): number {
    const table = this.table;
    const mask = table.length - 1;
    for (let i = this.hashOf(t) & mask; ; i = (i + 1) & mask) {
      const e = table[i];
      if (e === 0 || this.is(e - 1, t)) return i;
    }
  }

  /** `t`'s id in the table before, while it is not yet in the new one. */
  private oldGet(t: string): number | undefined {
    const table = this.old!;
    const mask = table.length - 1;
    for (let i = this.hashOf(t) & mask; ; i = (i + 1) & mask) {
      const e = table[i];
      if (e === 0) return undefined;
      if (this.is(e - 1, t)) return e - 1;
    }
  }

  id(t: string): number {
    const r = this.recent.get(t);
    if (r !== undefined) return r;
    const k = this.idOf(t);
    if (this.recent.size >= RECENT_TERMS) this.recent = new Map();
    this.recent.set(t, k);
    return k;
  }

  private idOf(t: string): number {
    const i = this.slotOf(t);
    if (this.table[i] !== 0) return this.table[i] - 1;
    if (this.old) {
      const o = this.oldGet(t);
      if (o !== undefined) return o;
    }
    const k = this.append(t);
    this.table[i] = k + 1;
    this.grow();
    return k;
  }

  /** Appends a persisted term as the next id (restoring a dictionary; a repeated term keeps its last id). */
  push(t: string): void {
    this.pushRange(t, 0, t.length);
  }

  /**
   * `push(text.slice(from, to))` without making that string: a restored dictionary's terms are read
   * from the slice of text they were decoded in (4.65M terms: a string, its hash and a lookup of
   * `recent` a term were ~1 s of a warm start).
   */
  private pushRange(text: string, from: number, to: number): void {
    if (this.recent.size) this.recent.delete(text.slice(from, to));
    const k = this.append(text, from, to);
    this.place(this.table, k);
    this.grow();
  }

  /**
   * Fills an empty dictionary from a saved one: its terms one a line in UTF-8 (the last one ends the
   * bytes), ids in line order, a term repeated keeping its last id (as `push` would), a step about
   * every RESTORE_STEP bytes or RESTORE_TERMS terms. The code units are decoded straight into the
   * dictionary, with no string a term, and the table is filled slot by slot: terms sorted by the top
   * bits of their slot, then placed in that order (their probes stay in the part of the table just
   * written), a term seen twice placed later id first so lookups find that one. Pushed one by one,
   * the 4.65M terms of a vault of numbers, ids and CJK text took ~2.5 s of a warm start, most of it
   * the table's and the terms' cache misses. Returns false, leaving the dictionary empty, when the
   * bytes are not UTF-8 as `TextEncoder` writes it (the caller then reads them with
   * `restoreDecoded`).
   */
  *restoreLines(bytes: Uint8Array): Generator<void, boolean, void> {
    if (this.count !== 0) throw new Error("restoreLines: the dictionary is not empty");
    if (bytes.length === 0) return true;
    // A byte-order mark at the start is dropped, as TextDecoder drops it.
    const from = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
    // Each pass in steps that start small (`rampedSteps`): interpreted at first, the bench vault's
    // 30k terms were hashed in one step of 14–24 ms and placed in one of 22–30 at 100k notes.
    yield* this.reserveLines(bytes, from);
    // Each step's work is a plain function (a loop in a generator ran several times slower).
    const at = { i: from, u: 0, k: 0 };
    // (A sequence begun before a step's end is finished in it: the next step starts where it ended.)
    for (const [, b] of rampedSteps(from, bytes.length, RESTORE_STEP)) {
      if (!decodeLines(bytes, b, this.chars, this.starts, at)) return this.restoreFailed();
      yield;
    }
    const k = at.k + 1;
    this.starts[k] = at.u;
    this.used = at.u;
    this.count = k;
    // Each term's hash, then the terms by the top 16 bits of their slot (in descending ids within
    // each: a term seen twice is placed later id first), their hashes beside them, then the table.
    const mask = this.table.length - 1;
    const shift = Math.max(0, 31 - Math.clz32(this.table.length) - 16);
    // The three scratch arrays in one block that is a mapping of its own where that matters
    // (`grownArray`): three of 18.6 MB freed through glibc's heap left ~45 MB more of free room there
    // (the varied vault's warm RSS 745–747 MB; 698 in one block; 703–708 pushing term by term).
    const scratch = grownArray(Int32Array, null, 3 * k);
    const hashes = scratch.subarray(0, k);
    const order = scratch.subarray(k, 2 * k);
    const ordered = scratch.subarray(2 * k, 3 * k);
    const counts = new Int32Array((mask >>> shift) + 2);
    for (const [a, b] of rampedSteps(0, k, RESTORE_TERMS)) {
      this.hashTerms(a, b, hashes, counts, mask, shift);
      yield;
    }
    sumInPlace(counts);
    yield;
    for (const [a, b] of rampedSteps(0, k, RESTORE_TERMS)) {
      bucketTerms(a, b, hashes, counts, mask, shift, order, ordered);
      yield;
    }
    for (const [a, b] of rampedSteps(0, k, RESTORE_TERMS)) {
      placeInOrder(this.table, a, b, order, ordered);
      yield;
    }
    return true;
  }

  /**
   * Fills an empty dictionary from saved bytes `restoreLines` declined: decoded as `TextDecoder`
   * reads them (a byte it cannot read becomes U+FFFD), a slice of ~1 MB at a time, each ending after
   * a newline, and pushed term by term; a step every 1,024 terms and after each slice.
   */
  *restoreDecoded(bytes: Uint8Array): Generator<void, void, void> {
    if (this.count !== 0) throw new Error("restoreDecoded: the dictionary is not empty");
    if (bytes.length === 0) return;
    yield* this.reserveLines(bytes, 0);
    let n = 0;
    for (let a = 0; a < bytes.length; ) {
      let b = Math.min(bytes.length, a + DECODED_SLICE);
      if (b < bytes.length) {
        const nl = bytes.indexOf(10, b);
        b = nl < 0 ? bytes.length : nl + 1;
      }
      const text = (a === 0 ? utf8 : utf8KeepBom).decode(bytes.subarray(a, b));
      for (let i = 0; ; ) {
        const j = text.indexOf("\n", i);
        if (j < 0) {
          if (b === bytes.length) this.pushRange(text, i, text.length); // the last term ends the bytes, not a line
          break;
        }
        this.pushRange(text, i, j);
        i = j + 1;
        if ((++n & 1023) === 0) yield;
      }
      a = b;
      yield;
    }
  }

  /** Room for the terms of `bytes` from `from`, a term a line (the last one ending the bytes), their lines and code units counted in steps. */
  private *reserveLines(bytes: Uint8Array, from: number): Generator<void, void, void> {
    const count = { lines: 0, units: 0 };
    for (const [a, b] of rampedSteps(from, bytes.length, RESTORE_STEP)) {
      countLines(bytes, a, b, count);
      yield;
    }
    // The newlines make no code unit.
    this.reserve(count.lines + 1, count.units - count.lines);
  }

  /** Terms `[a, b)`'s hashes into `hashes`, each counted in `counts` at its slot's bucket + 1. */
  private hashTerms(a: number, b: number, hashes: Int32Array, counts: Int32Array, mask: number, shift: number): void {
    for (let t = a; t < b; t++) {
      const h = this.hashAt(t);
      hashes[t] = h;
      counts[((h & mask) >>> shift) + 1]++;
    }
  }

  /** `restoreLines` met bytes that are not UTF-8: the dictionary is left empty. */
  private restoreFailed(): false {
    this.used = 0;
    this.count = 0;
    this.starts.fill(0);
    return false;
  }

  /**
   * After a term is added: moves the next MOVE_STEP terms over while the table grows in steps, or
   * starts growing it once too full. Doubling a table of millions of terms at once held the event
   * loop: 501 ms at ~3M terms (a vault of numbers, ids and hashes, 4.65M terms in all). So a large
   * table moves over MOVE_STEP terms per term added, the old one kept for lookups meanwhile; the
   * move ends long before the new table is full (a table 70% full doubles to 35%, and takes at most
   * one new term per MOVE_STEP moved: ≤ 40% when it ends).
   */
  private grow(): void {
    if (this.old) this.moveSome(MOVE_STEP);
    else if (this.full(this.count, this.table.length)) {
      if (this.table.length < STEPPED_GROWTH_FROM) this.rehash();
      else {
        this.old = this.table;
        this.oldCount = this.count;
        this.moved = 0;
        this.table = new Int32Array(this.old.length * 2);
      }
    }
  }

  /** Moves up to `n` more of the old table's terms into the new one; drops the old table when all are. */
  private moveSome(n: number): void {
    const end = Math.min(this.oldCount, this.moved + n);
    for (let k = this.moved; k < end; k++) this.place(this.table, k);
    this.moved = end;
    if (end === this.oldCount) this.old = null;
  }

  /**
   * Puts term k in `table`. A term pushed again (`push`) has more than one id: the largest stays,
   * whatever order they are placed in.
   */
  private place(table: Int32Array, k: number): void {
    const mask = table.length - 1;
    let i = this.hashAt(k) & mask;
    for (; ; i = (i + 1) & mask) {
      const e = table[i];
      if (e === 0) break;
      if (this.sameTerms(e - 1, k)) {
        if (e - 1 > k) return;
        break;
      }
    }
    table[i] = k + 1;
  }

  /**
   * Room for `terms` terms of `chars` code units in all, made at once (a restored dictionary): growing
   * the table by doubling copies it, one step each time (~0.1 s at 4M terms).
   */
  reserve(terms: number, chars: number): void {
    this.room(terms + 2, chars);
    let size = this.table.length;
    while (this.full(terms, size)) size *= 2;
    if (size > this.table.length) this.rehash(size);
  }

  /** Term k as a string (made on every call). */
  name(k: number): string {
    const a = this.starts[k];
    const b = this.starts[k + 1];
    const c = this.charsAt(a);
    if (b - a === 1) return String.fromCharCode(c[a]);
    let out = "";
    for (let i = a; i < b; i += 4096) out += String.fromCharCode.apply(null, c.subarray(i, Math.min(b, i + 4096)) as unknown as number[]);
    return out;
  }

  /** Term k's first code unit. */
  firstCode(k: number): number {
    const a = this.starts[k];
    return this.starts[k + 1] > a ? this.charsAt(a)[a] : NaN;
  }

  /** Whether term k starts with `prefix` (without making its string). */
  startsWith(k: number, prefix: string): boolean {
    const a = this.starts[k];
    if (this.starts[k + 1] - a < prefix.length) return false;
    const c = this.charsAt(a);
    for (let i = 0; i < prefix.length; i++) if (c[a + i] !== prefix.charCodeAt(i)) return false;
    return true;
  }

  /**
   * The array holding the code units of the term starting at `a`: while they move, a term before
   * `charsFrom` is read where it was (the copying may have stopped inside it), one after it in the
   * larger array.
   */
  private charsAt(a: number): Uint16Array {
    const next = this.nextChars;
    return next !== null && a >= this.charsFrom ? next : this.chars;
  }

  /** Whether term k has a code unit outside ASCII. */
  private nonAscii(k: number): boolean {
    const a = this.starts[k];
    const c = this.charsAt(a);
    for (let i = a, b = this.starts[k + 1]; i < b; i++) if (c[i] > 0x7f) return true;
    return false;
  }

  /** `polyHash` of term k, from its code units. */
  private polyHashOf(k: number): number {
    let h = 0;
    const a = this.starts[k];
    const c = this.charsAt(a);
    for (let i = a, b = this.starts[k + 1]; i < b; i++) h = (Math.imul(h, 31) + c[i]) | 0;
    return h;
  }

  /** A table of `size` slots is too full for `terms` terms. */
  private full(terms: number, size: number): boolean {
    return terms * 10 > size * 7;
  }

  /** Seeded FNV-1a over the code units, then a finalizer. */
  private hashOf(t: string): number {
    let h = (0x811c9dc5 ^ this.seed) | 0;
    for (let i = 0; i < t.length; i++) h = Math.imul(h ^ t.charCodeAt(i), 0x01000193);
    return mixHash(h);
  }

  /** `hashOf` term k, from its code units. */
  private hashAt(k: number): number {
    let h = (0x811c9dc5 ^ this.seed) | 0;
    const a = this.starts[k];
    const c = this.charsAt(a);
    for (let i = a, b = this.starts[k + 1]; i < b; i++) h = Math.imul(h ^ c[i], 0x01000193);
    return mixHash(h);
  }

  /** Whether term k is `t`. */
  private is(k: number, t: string): boolean {
    const a = this.starts[k];
    if (this.starts[k + 1] - a !== t.length) return false;
    const c = this.charsAt(a);
    for (let i = 0; i < t.length; i++) if (c[a + i] !== t.charCodeAt(i)) return false;
    return true;
  }

  /** Stores `t` (or its code units `[from, to)`) as the next id. */
  private append(t: string, from = 0, to = t.length): number {
    const k = this.count;
    const len = to - from;
    if (k + 2 > this.starts.length) this.room(this.starts.length * 2, 0);
    let c = this.nextChars ?? this.chars;
    if (this.used + len > c.length) {
      // Full: a small array doubles at once; a large one moves to one twice as large in steps (a
      // term too long for that one as well, rare, ends the move and grows at once).
      if (this.nextChars) this.copyChars(Infinity);
      const need = this.used + len;
      if (need > this.chars.length) {
        if (this.chars.length < STEPPED_CHARS_FROM || need > 2 * this.chars.length) this.room(0, Math.max(need, this.chars.length * 2));
        else {
          this.nextChars = new Uint16Array(this.chars.length * 2);
          this.charsFrom = this.used;
          this.charsCopied = 0;
        }
      }
      c = this.nextChars ?? this.chars;
    }
    const at = this.used - from;
    for (let i = from; i < to; i++) c[at + i] = t.charCodeAt(i);
    this.used += len;
    this.starts[k + 1] = this.used;
    this.count = k + 1;
    if (this.nextChars) this.copyChars(CHARS_MOVE_STEP);
    return k;
  }

  /** Copies up to `n` more code units into `nextChars`; once all are, it is `chars`. */
  private copyChars(n: number): void {
    const next = this.nextChars!;
    const end = Math.min(this.charsFrom, this.charsCopied + n);
    next.set(this.chars.subarray(this.charsCopied, end), this.charsCopied);
    this.charsCopied = end;
    if (end === this.charsFrom) {
      this.chars = next;
      this.nextChars = null;
    }
  }

  /** Room for at least `terms` ids (+ 1) and `chars` code units in all. */
  private room(terms: number, chars: number): void {
    if (terms > this.starts.length) {
      const s2 = new Int32Array(terms);
      s2.set(this.starts.subarray(0, this.count + 1));
      this.starts = s2;
    }
    if (this.nextChars) this.copyChars(Infinity);
    if (chars > this.chars.length) {
      const c2 = new Uint16Array(chars);
      c2.set(this.chars.subarray(0, this.used));
      this.chars = c2;
    }
  }

  /** The table at `size` slots (twice as large by default); a term repeated (`push`) keeps its last id. */
  private rehash(size = this.table.length * 2): void {
    this.old = null;
    const table = new Int32Array(size);
    for (let k = 0; k < this.count; k++) this.place(table, k);
    this.table = table;
  }

  private sameTerms(a: number, b: number): boolean {
    const a0 = this.starts[a];
    const b0 = this.starts[b];
    const n = this.starts[a + 1] - a0;
    if (this.starts[b + 1] - b0 !== n) return false;
    const ca = this.charsAt(a0);
    const cb = this.charsAt(b0);
    for (let i = 0; i < n; i++) if (ca[a0 + i] !== cb[b0 + i]) return false;
    return true;
  }

  /**
   * The ids of the terms a query word `t` matches: `t` itself first (when the dictionary has it),
   * then its spellings with accents when typed without ("cafe" → "café") or the one without when
   * typed with them ("café" → "cafe"), then, in English, the other terms with the same stem ("sync"
   * → "syncs", "synced", "syncing").
   */
  forms(t: string, language: SearchLanguage): number[] {
    // One search asks for a word's forms up to three times (scoring, title boost, snippets).
    const key = language + " " + t;
    const memo = this.formsMemo.get(key);
    if (memo && memo.n === this.count) return memo.ids.slice();
    // A few terms behind (an edit since the last search): caught up here, at once. Further behind,
    // each search catches up a step (`catchUpForSearch`), not each of its words' calls.
    if (this.count - Math.min(this.termBitsN, this.accentedN) <= SEARCH_CATCH_UP) this.catchUpForSearch();
    const ids = this.formsOf(t, language);
    if (!this.caughtUp()) return ids;
    if (this.formsMemo.size >= 256) this.formsMemo.clear();
    this.formsMemo.set(key, { n: this.count, ids });
    return ids.slice();
  }

  /** A few query words' forms, valid while the dictionary holds `n` terms. */
  private formsMemo = new Map<string, { n: number; ids: number[] }>();

  /**
   * A bitset of the terms' hashes (`hashBit`), 16+ bits a term, made at the first `forms` and caught up
   * with the terms added since at each: most of a word's ~300 likely forms are not terms, and a clear
   * bit says so without making the string and looking it up (those lookups were ~80 µs a word).
   */
  private termBits: Int32Array | null = null;
  /** How many of `names` are in `termBits`. */
  private termBitsN = 0;
  /** How many of `termBits`' words were written (zeros) since it was made (see `addTermBits`). */
  private termBitsWritten = 0;
  /**
   * The hash of an accent key → the terms with that key that are not the key itself (only terms
   * with a character outside ASCII: none in an all-ASCII vault), caught up with the terms added
   * since like `termBits`. Numbers, not the keys: a key string a term would cost ~80 bytes where a
   * vault's terms are mostly accented; a bucket may hold another key's terms (checked by `accentedOf`).
   */
  private readonly accented = new Map<number, OneOrMany<number>>();
  /** How many of `names` are in `accented`. */
  private accentedN = 0;

  /**
   * A search's step of the catch-up (`Scorer.steps` starts with it): the bitset and the accent map
   * caught up by at most SEARCH_CATCH_UP terms each. A search during a large vault's first build caught
   * up with every term added since the one before in one go (terms with accents, CJK: 118–270 ms
   * tasks on a vault of 4.65M terms). The rest waits for the next searches, or the warm-up after the
   * build, which catches up in steps (`catchUpTermBits`). `forms` catches up only a backlog this small.
   * True when it caught up some terms (the search then yields: a warm start's first search, its code
   * not optimised yet, took ~8 ms for it).
   */
  catchUpForSearch(): boolean {
    if (this.caughtUp()) return false;
    this.addTermBits(searchDue());
    this.catchUpAccents(searchDue());
    return true;
  }

  /** The bitset when it holds every term; null while its catch-up is under way. */
  private wholeTermBits(): Int32Array | null {
    return this.termBits && this.termBitsN >= this.count ? this.termBits : null;
  }

  /** The accented terms of `key` (see `accented`) among the terms caught up (terms beyond are found once caught up). */
  private accentedOf(key: string): number[] {
    return valuesOf(this.accented.get(keyHash(key))).filter((g) => accentKey(this.name(g)) === key);
  }

  /** Every term is in the bitset and the accent map (a word's forms are then final until the next term). */
  private caughtUp(): boolean {
    return this.termBitsN >= this.count && this.accentedN >= this.count;
  }

  /** Adds the terms not in `accented` yet, asking `due()` every 4,096 terms; true once every term is in. */
  private catchUpAccents(due: () => boolean): boolean {
    const n = this.count;
    for (let g = this.accentedN; g < n; g++) {
      if (this.nonAscii(g)) {
        const t = this.name(g);
        const k = accentKey(t);
        if (k !== t) addOne(this.accented, keyHash(k), g, false);
      }
      if ((g & 4095) === 4095 && g + 1 < n && due()) {
        this.accentedN = g + 1;
        return false;
      }
    }
    this.accentedN = n;
    return true;
  }

  /**
   * Adds the terms not in the bitset yet (made anew when the dictionary outgrew it), then those not
   * in `accented`, asking `due()` every 4,096 terms; true once every term is in both. The search
   * warm-up calls it in short steps: the first search after a build at 100k notes hashed every term
   * in one go (a 61 ms task with it). First it ends the table's growth in steps (see `grow`), when one
   * is under way: a search never moves terms, and a dictionary that stopped growing keeps no old table.
   */
  catchUpTermBits(due: () => boolean): boolean {
    while (this.old) {
      this.moveSome(4096);
      if (this.old && due()) return false;
    }
    return this.addTermBits(due);
  }

  private addTermBits(due: () => boolean): boolean {
    const n = this.count;
    let bits = this.termBits;
    if (!bits || n * 8 > bits.length * 32) {
      let size = 1 << 16;
      while (size < n * 16) size *= 2;
      this.termBits = bits = new Int32Array(size >>> 5);
      this.termBitsN = 0;
      this.termBitsWritten = 0;
    }
    // Its pages written first, in order, asking `due()` every TERM_BITS_PAGES_STEP words: each term's bit
    // lands on a random page, and a fresh bitset's first touches were page faults (16 MB for 4.65M
    // terms: a search's catch-up of 16k terms took 23–45 ms).
    while (this.termBitsWritten < bits.length) {
      const to = Math.min(bits.length, this.termBitsWritten + TERM_BITS_PAGES_STEP);
      bits.fill(0, this.termBitsWritten, to);
      this.termBitsWritten = to;
      if (to < bits.length && due()) return false;
    }
    const mask = bits.length * 32 - 1;
    for (let g = this.termBitsN; g < n; g++) {
      const b = hashBit(this.polyHashOf(g), mask);
      bits[b >>> 5] |= 1 << (b & 31);
      if ((g & 4095) === 4095 && g + 1 < n && due()) {
        this.termBitsN = g + 1;
        return false;
      }
    }
    this.termBitsN = n;
    return this.catchUpAccents(due);
  }

  private formsOf(t: string, language: SearchLanguage): number[] {
    const own = this.get(t);
    const out = own === undefined ? [] : [own];
    const seen = new Set<number>(out);
    const take = (g: number | undefined): void => {
      if (g === undefined || seen.has(g)) return;
      seen.add(g);
      out.push(g);
    };
    // A word typed without accents reaches every accented spelling ("cafe" → "café", "cafè"); one
    // typed with them, only the spelling without ("café" → "cafe"): its accents were meant.
    const key = accentKey(t);
    if (key !== t) take(this.get(key));
    else for (const g of this.accentedOf(key)) take(g);
    if (language !== "en" || !stemmable(t)) return out;
    // The word's likely forms (its stem, with a final i as y, a doubled last letter or an e, and
    // common endings), kept when the dictionary has them and they have the word's stem. No stem map
    // of the whole dictionary: stemming its terms at a query's first use blocked the event loop
    // ~200 ms at 10k notes, stemming them while loading doubled a fresh process's warm start, a
    // pass over the terms cost ~0.3 ms a word; this costs ~300 hashes (and a lookup per hash the
    // dictionary's bitset holds).
    const s = stemOf(t);
    const bases = new Set([s, t]);
    if (s.endsWith("i")) bases.add(s.slice(0, -1) + "y");
    if (s.endsWith("e")) bases.add(s.slice(0, -1));
    else bases.add(s + "e");
    if (/[bdfgklmnprstvz]$/.test(s) && s[s.length - 2] !== s[s.length - 1]) bases.add(s + s[s.length - 1]);
    // Without the whole bitset (a catch-up under way), every likely form is looked up.
    const bits = this.wholeTermBits();
    const mask = bits ? bits.length * 32 - 1 : 0;
    for (const b of bases) {
      const hb = polyHash(b);
      for (let k = 0; k < FORM_ENDINGS.length; k++) {
        const bit = hashBit((Math.imul(hb, ENDING_POW[k]) + ENDING_HASH[k]) | 0, mask);
        if (bits && (bits[bit >>> 5] & (1 << (bit & 31))) === 0) continue; // not a term
        const x = b + FORM_ENDINGS[k];
        const g = this.get(x);
        if (g === undefined || seen.has(g) || !stemmable(x) || stemOf(x) !== s) continue;
        take(g);
      }
    }
    return out;
  }
}
const WORD_ASCII = newAsciiCache();

/** A word holding CJK characters: CJK runs become bigrams, the other pieces words. */
function splitCjkWord(text: string, start: number, end: number, language: SearchLanguage, cb: (term: string, start: number, end: number) => void): void {
  let i = start;
  while (i < end) {
    const k0 = classAt(text, i, LEN);
    const cjk = k0 === C_CJK || k0 === C_CJKX;
    let j = i + LEN.n;
    for (; j < end; j += LEN.n) {
      const k = classAt(text, j, LEN);
      if ((k === C_CJK || k === C_CJKX) !== cjk) break;
    }
    if (cjk) emitCjk(text, i, j, cb);
    else splitSegWord(text, i, j, language, cb);
    i = j;
  }
}

/**
 * A word of text[start, end) with letters of a script written without spaces (Thai, Lao, Khmer,
 * Myanmar): its pieces in those scripts as Intl.Segmenter's words (dictionary-based, as the
 * baselines and most engines cut them), the rest as words. As one word, a Thai phrase was a single
 * term a query's words never matched: on Obsidian's Thai help vault, known-item MRR@10 0.454 against
 * 0.971 for MiniSearch. A piece is segmented in slices of at most SEG_SLICE code units (see
 * `segmentSlices`): Node 20's segmenter copies its whole input into every segment.
 */
function splitSegWord(text: string, start: number, end: number, language: SearchLanguage, cb: (term: string, start: number, end: number) => void): void {
  let i = start;
  while (i < end) {
    const seg = classAt(text, i, LEN) === C_SEG;
    let j = i + LEN.n;
    for (; j < end; j += LEN.n) {
      const k = classAt(text, j, LEN);
      // A mark belongs to the letter before it.
      if (k !== C_MARK && (k === C_SEG) !== seg) break;
    }
    if (seg) segmentSlices(text, i, j, language, cb);
    else emitWord(text.slice(i, j), i, language, cb);
    i = j;
  }
}

const isLowSurrogate = (c: number): boolean => c >= 0xdc00 && c <= 0xdfff;

/** Longest slice given to Intl.Segmenter at once. */
const SEG_SLICE = 128;
let segmenter: Intl.Segmenter | null = null;

/** Intl.Segmenter's words of text[start, end), in slices cut before a letter (not inside a letter and its marks). */
function segmentSlices(text: string, start: number, end: number, language: SearchLanguage, cb: (term: string, start: number, end: number) => void): void {
  segmenter ??= new Intl.Segmenter("th", { granularity: "word" });
  let a = start;
  while (a < end) {
    const far = Math.min(end, a + SEG_SLICE);
    let b = far;
    while (b < end && b > a + 1 && classAt(text, b, LEN) === C_MARK) b--;
    if (b < end && isLowSurrogate(text.charCodeAt(b))) b--;
    // A letter with more marks than a slice holds: cut among them (never inside a surrogate pair),
    // so that every slice moves on (an empty one looped forever).
    if (b <= a) b = far < end && isLowSurrogate(text.charCodeAt(far)) ? far + 1 : far;
    // Walked with `containing` (~1.3 µs a segment) rather than iterated (~2.4 µs: the iterator's
    // result objects); terms from the word cache (`cachedTerm`: NFKC per word was a tenth of the time).
    const slice = text.slice(a, b);
    const segs = segmenter.segment(slice);
    for (let i = 0; i < slice.length; ) {
      const s = segs.containing(i);
      if (!s) break;
      const word = s.segment;
      i = s.index + word.length;
      if (!s.isWordLike) continue;
      const term = cachedTerm(word, language);
      if (term) cb(term, a + s.index, i + a);
    }
    a = b;
  }
}

function termOf(raw: string, language: SearchLanguage): string | null {
  let w = foldWord(raw);
  if (!w) return null;
  if (w.length > MAX_TOKEN) w = w.slice(0, MAX_TOKEN);
  void language;
  return stemWord(w, "none") || null;
}

/** `termOf(word)` ("" for none) through the word → term cache; a word kept in it is a flat copy (a slice keeps its whole text alive). */
function cachedTerm(word: string, language: SearchLanguage): string {
  let term = WORD_CACHE.get(word);
  if (term === undefined) {
    term = termOf(word, language) ?? "";
    if (WORD_CACHE.size >= CACHE_MAX) WORD_CACHE.clear();
    WORD_CACHE.set(detach(word), term);
  }
  return term;
}

function emitWord(raw: string, start: number, language: SearchLanguage, cb: (term: string, start: number, end: number) => void): void {
  if (!/[\p{L}\p{N}]/u.test(raw)) return;
  const term = cachedTerm(raw, language);
  if (term) cb(term, start, start + raw.length);
}

const HALF_WIDTH = /[\uff61-\uff9f]/;

/** Overlapping bigrams of the CJK run text[start, end) (one character alone: itself). */
function emitCjk(text: string, start: number, end: number, cb: (term: string, start: number, end: number) => void): void {
  const run = text.slice(start, end);
  if (HALF_WIDTH.test(run)) {
    // Half-width katakana folds to full width; offsets stay those of the original characters.
    const chars = Array.from(run);
    const norm = chars.map((c) => c.normalize("NFKC"));
    if (chars.length === 1) {
      cb(norm[0], start, end);
      return;
    }
    let off = start;
    for (let i = 0; i + 1 < chars.length; i++) {
      cb(norm[i] + norm[i + 1], off, off + chars[i].length + chars[i + 1].length);
      off += chars[i].length;
    }
    return;
  }
  let a = start;
  const la = cpLen(text, a);
  let b = a + la;
  if (b >= end) {
    cb(run, start, end);
    return;
  }
  while (b < end) {
    const e = b + cpLen(text, b);
    cb(text.slice(a, e), a, e);
    a = b;
    b = e;
  }
}

function cpLen(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
    const d = text.charCodeAt(i + 1);
    if (d >= 0xdc00 && d <= 0xdfff) return 2;
  }
  return 1;
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
