/**
 * The query language (words, "phrases", prefix*, -exclude, OR) parsed into clauses of terms, and the
 * bounds a query must stay within. Knows no index: engines score what it parses.
 */
import { isCjkTerm, tokenize } from "./tokenize";

/**
 * Question and function words: never required terms when the query has other words ("what are
 * callouts" looks for callouts). They still count inside "quoted phrases".
 */
export const STOP_WORDS = new Set(
  (
    "a an the and or of to in on at by for from with into onto about as is are was were be been being am do does did doing " +
    "have has had i me my we our you your it its this that these those there here what which who whom whose when where why how " +
    "can could should would will shall may might must not no so if then than too very just also any some all each " +
    "please want need get make use using way ways work works"
  ).split(" "),
);
// "use", "make", "get", "work" are dropped only when other words remain, like every stop word
// ("how does sync work" looks for sync).

/** A CJK run of at least this many bigrams matches loosely when no chunk holds it whole. */
const LOOSE_MIN_BIGRAMS = 3;
/** …then a chunk must hold at least this share of its bigrams. */
const LOOSE_SHARE = 0.4;
const CJK_PIECES = /([\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}\u30fc\u3005\uff66-\uff9f]+)/u;
import { VaultError } from "../errors";
import type { ParsedQuery, QueryItem, SearchLanguage } from "./types";

/** Queries longer than this are refused: a search is one synchronous step, and a pasted page is not a query. */
export const MAX_QUERY_CHARS = 1000;
/** Terms (words, phrase words, exclusions) a query may have. */
export const MAX_QUERY_TERMS = 64;
/** `prefix*` terms a query may have: each expands to up to 64 dictionary terms and their lists. */
export const MAX_QUERY_PREFIXES = 4;

/**
 * Throws `invalid_argument` for a query too large to answer in bounded time (measured at 10k notes:
 * a 16 KB query took 20–210 ms, eight one-letter prefixes 120–140 ms, in one step of the event loop).
 * A one-letter prefix (`s*`) is refused too, except in CJK text: it matches most of the vocabulary.
 */
export function checkQueryBounds(raw: string, pq: ParsedQuery): void {
  const howTo = "Search with a few distinctive words; use grep to find an exact long text.";
  if (raw.length > MAX_QUERY_CHARS) {
    throw new VaultError("invalid_argument", `The query is ${raw.length} characters long; keep it under ${MAX_QUERY_CHARS}. ${howTo}`);
  }
  let terms = 0;
  let prefixes = 0;
  for (const it of [...pq.clauses.flat(), ...pq.exclude]) {
    if (it.kind === "phrase") {
      terms += it.terms.length;
      continue;
    }
    terms++;
    if (!it.prefix) continue;
    prefixes++;
    if (it.term.length < 2 && !isCjkTerm(it.term)) {
      throw new VaultError("invalid_argument", `The prefix "${it.term}*" is one letter: it would match most of the vault. Give at least two letters before *, e.g. "${it.term}e*".`);
    }
  }
  if (terms > MAX_QUERY_TERMS) throw new VaultError("invalid_argument", `The query has ${terms} terms; keep it to ${MAX_QUERY_TERMS}. ${howTo}`);
  if (prefixes > MAX_QUERY_PREFIXES) {
    throw new VaultError("invalid_argument", `The query has ${prefixes} prefix* terms; keep it to ${MAX_QUERY_PREFIXES} (each one expands to many words).`);
  }
}

interface RawPart {
  text: string;
  quoted: boolean;
  negated: boolean;
  prefix: boolean;
  or: boolean;
}

/**
 * Parses a query leniently — never throws. Words are ANDed; `"a phrase"`; `prefix*`; `-exclude`;
 * `a OR b` (OR binds tighter than the implicit AND: `x a OR b` = x AND (a OR b)). Anything else
 * (hyphens, colons, brackets, `C++`, unbalanced quotes, lone operators) is searched as text: a word
 * that tokenizes to several terms (`e-mail`, `a:b`) becomes a phrase.
 */
export function parseQuery(q: string, language: SearchLanguage = "en"): ParsedQuery {
  const parts = splitCjkWords(scan(typeof q === "string" ? q : String(q ?? "")));
  const clauses: QueryItem[][] = [];
  const exclude: QueryItem[] = [];
  const stop: boolean[] = [];
  let pendingOr = false;
  for (const p of parts) {
    if (p.or) {
      pendingOr = clauses.length > 0;
      continue;
    }
    const item = toItem(p, language);
    if (!item) continue;
    if (p.negated) {
      exclude.push(item);
      pendingOr = false;
      continue;
    }
    const isStop = !p.quoted && !p.prefix && STOP_WORDS.has(p.text.toLowerCase().replace(/[\u2019]/g, "'"));
    if (pendingOr && clauses.length) {
      clauses[clauses.length - 1].push(item);
      stop[clauses.length - 1] = stop[clauses.length - 1] && isStop;
    } else {
      clauses.push([item]);
      stop.push(isStop);
    }
    pendingOr = false;
  }
  // Stop words are not required when other words remain.
  if (stop.some((s) => !s)) return { clauses: clauses.filter((_, i) => !stop[i]), exclude };
  return { clauses, exclude };
}

/** An unquoted word mixing scripts ("PDFを埋め込む方法") is searched as its pieces ("PDF", "を埋め込む方法"). */
function splitCjkWords(parts: RawPart[]): RawPart[] {
  const out: RawPart[] = [];
  for (const p of parts) {
    if (p.quoted || p.or || p.negated || !CJK_PIECES.test(p.text)) {
      out.push(p);
      continue;
    }
    const pieces = p.text.split(CJK_PIECES).filter((x) => x.trim() !== "");
    if (pieces.length <= 1) {
      out.push(p);
      continue;
    }
    pieces.forEach((text, i) => out.push({ ...p, text, prefix: p.prefix && i === pieces.length - 1 }));
  }
  return out;
}

function toItem(p: RawPart, language: SearchLanguage): QueryItem | null {
  let text = p.text;
  if (!p.quoted) {
    // `tag:foo`, `tags:foo` and `#foo` search the tag's words (tags are indexed with the notes).
    text = text.replace(/^#+(?=\S)/, "").replace(/^tags?:(?=\S)/i, "");
  }
  const terms = tokenize(text, { language });
  if (terms.length === 0) return null;
  if (terms.length === 1) {
    if (p.prefix && !p.quoted && !isCjkTerm(terms[0])) {
      // Prefixes are matched against stemmed terms: use the folded, unstemmed form.
      const folded = tokenize(text, { language: "none" })[0] ?? terms[0];
      return { kind: "term", term: folded, prefix: true };
    }
    return { kind: "term", term: terms[0], prefix: false };
  }
  const cjk = terms.filter(isCjkTerm);
  if (!p.quoted && cjk.length >= LOOSE_MIN_BIGRAMS && cjk.length === terms.length) {
    return { kind: "phrase", terms, loose: { terms, min: Math.max(2, Math.ceil(terms.length * LOOSE_SHARE)) } };
  }
  return { kind: "phrase", terms };
}

function scan(q: string): RawPart[] {
  const out: RawPart[] = [];
  const n = q.length;
  let i = 0;
  const isSpace = (c: string) => /[\s()[\]{}]/.test(c);
  while (i < n) {
    const c = q[i];
    if (isSpace(c)) {
      i++;
      continue;
    }
    let negated = false;
    if (c === "-" && i + 1 < n && !isSpace(q[i + 1]) && q[i + 1] !== "-") {
      negated = true;
      i++;
    }
    if (q[i] === '"' || q[i] === "“" || q[i] === "”") {
      i++;
      let j = i;
      while (j < n && q[j] !== '"' && q[j] !== "”" && q[j] !== "“") j++;
      out.push({ text: q.slice(i, j), quoted: true, negated, prefix: false, or: false });
      i = j + 1;
      continue;
    }
    let j = i;
    while (j < n && !isSpace(q[j]) && q[j] !== '"') j++;
    let word = q.slice(i, j);
    i = j;
    if (!negated && (word === "OR" || word === "|" || word === "||")) {
      out.push({ text: "", quoted: false, negated: false, prefix: false, or: true });
      continue;
    }
    let prefix = false;
    if (word.endsWith("*")) {
      word = word.replace(/\*+$/, "");
      prefix = word.length > 0;
    }
    out.push({ text: word, quoted: false, negated, prefix, or: false });
  }
  return out;
}

/** All positive terms of a query (for snippets); prefix terms are returned with `prefix`. */
export function positiveTerms(pq: ParsedQuery): { term: string; prefix: boolean }[] {
  const out: { term: string; prefix: boolean }[] = [];
  for (const clause of pq.clauses)
    for (const it of clause) {
      if (it.kind === "term") out.push({ term: it.term, prefix: it.prefix });
      else for (const t of it.terms) out.push({ term: t, prefix: false });
    }
  return out;
}
