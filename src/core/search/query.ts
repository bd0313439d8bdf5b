import { isCjkTerm, tokenize } from "./tokenize";
import type { ParsedQuery, QueryItem, SearchLanguage } from "./types";

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
  const parts = scan(typeof q === "string" ? q : String(q ?? ""));
  const clauses: QueryItem[][] = [];
  const exclude: QueryItem[] = [];
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
    if (pendingOr && clauses.length) clauses[clauses.length - 1].push(item);
    else clauses.push([item]);
    pendingOr = false;
  }
  return { clauses, exclude };
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
