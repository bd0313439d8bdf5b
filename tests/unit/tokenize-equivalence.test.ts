/**
 * The char-code tokenizer gives exactly the terms and offsets of the former regex tokenizer (kept
 * here as the reference) on random text mixing ASCII, accents, apostrophes, marks, CJK, Hangul,
 * half-width katakana, emoji and astral characters.
 */
import { describe, expect, test } from "@jest/globals";
import { forEachToken, foldWord, stemWord } from "../../src/core/search/tokenize";
import type { SearchLanguage } from "../../src/core/search/types";

const MAX_TOKEN = 48;
const WORD_RE = /[\p{L}\p{N}][\p{L}\p{N}\p{M}]*(?:['’][\p{L}\p{N}\p{M}]+)*/gu;
const CJK_RE = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005]+/gu;
const HAS_CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

function termOf(raw: string, language: SearchLanguage): string | null {
  let w = foldWord(raw);
  if (!w) return null;
  if (w.length > MAX_TOKEN) w = w.slice(0, MAX_TOKEN);
  // Words are indexed as written (tokenizer version 2): the language no longer changes a term.
  void language;
  return stemWord(w, "none") || null;
}

function reference(text: string, language: SearchLanguage): [string, number, number][] {
  const out: [string, number, number][] = [];
  const emitWord = (raw: string, start: number) => {
    if (!/[\p{L}\p{N}]/u.test(raw)) return;
    const t = termOf(raw, language);
    if (t) out.push([t, start, start + raw.length]);
  };
  const emitCjk = (run: string, start: number) => {
    const chars = Array.from(run);
    const norm = /[\uff61-\uff9f]/.test(run) ? chars.map((c) => c.normalize("NFKC")) : chars;
    if (chars.length === 1) {
      out.push([norm[0], start, start + chars[0].length]);
      return;
    }
    let off = start;
    for (let i = 0; i + 1 < chars.length; i++) {
      out.push([norm[i] + norm[i + 1], off, off + chars[i].length + chars[i + 1].length]);
      off += chars[i].length;
    }
  };
  const re = new RegExp(WORD_RE.source, "gu");
  let m: RegExpExecArray | null;
  while ((m = re.exec(text)) !== null) {
    const word = m[0];
    const start = m.index;
    if (!HAS_CJK.test(word)) {
      const t = termOf(word, language);
      if (t) out.push([t, start, start + word.length]);
      continue;
    }
    const cjk = new RegExp(CJK_RE.source, "gu");
    let last = 0;
    let c: RegExpExecArray | null;
    while ((c = cjk.exec(word)) !== null) {
      if (c.index > last) emitWord(word.slice(last, c.index), start + last);
      emitCjk(c[0], start + c.index);
      last = c.index + c[0].length;
    }
    if (last < word.length) emitWord(word.slice(last), start + last);
  }
  return out;
}

function actual(text: string, language: SearchLanguage): [string, number, number][] {
  const out: [string, number, number][] = [];
  forEachToken(text, language, (t, s, e) => out.push([t, s, e]));
  return out;
}

const PIECES = [
  "note", "Notes", "running", "don't", "l'été", "rock’n’roll", "café", "NAÏVE", "e\u0301t\u0301e", "Straße", "x".repeat(60),
  "C++", "e-mail", "a:b", "#tag/nested", "[[Link]]", "42", "3.14", "_under_", "'quoted'", "it's'", "'", "’", "—", "…",
  "東京都に住む", "我喜欢学习中文", "한국어", "ﾃｽﾄ", "ノート", "PDFを埋め込む方法", "Obsidianのノート", "々", "ー", "〇", "⺀",
  "😀", "𠮷野家", "a𠮷b", "Ω", "ǅ", "١٢٣", "\u0301", "\u3099", " ", "\n", "\t", ",", ".", "  ",
];

describe("char-code tokenizer", () => {
  test("matches the regex tokenizer on random mixed text", () => {
    let seed = 12345;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let k = 0; k < 400; k++) {
      let s = "";
      const n = 1 + Math.floor(rnd() * 30);
      for (let i = 0; i < n; i++) s += PIECES[Math.floor(rnd() * PIECES.length)] + (rnd() < 0.5 ? " " : "");
      for (const lang of ["en", "none"] as const) expect([s, actual(s, lang)]).toEqual([s, reference(s, lang)]);
    }
  });
});
