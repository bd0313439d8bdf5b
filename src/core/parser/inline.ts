/**
 * Low-level scanners shared by the note parser and the link rewriter: wikilinks, markdown link
 * destinations, tag characters. Pure char-code loops, no backtracking regexes.
 */

export interface WikilinkParts {
  /** Index just past the closing `]]`. */
  end: number;
  /** Inner text between `[[` and `]]`. */
  inner: string;
  /** Target as written (before `|`), with a table-escape backslash removed, untrimmed. */
  target: string;
  /** Alias after the first `|`, or undefined. */
  alias: string | undefined;
}

/**
 * Parses a wikilink whose `[[` starts at `i` in `s`, on one line ending at `lineEnd`.
 * Returns null when there is no closing `]]` on the line, a nested `[[` comes first, or it is empty.
 */
export function parseWikilinkAt(s: string, i: number, lineEnd: number): WikilinkParts | null {
  // Bounded scans (never past the line): the first `]]`, and no `[[` before it.
  let close = -1;
  for (let k = i + 2; k + 1 < lineEnd; k++) {
    const c = s.charCodeAt(k);
    if (c === 93 && s.charCodeAt(k + 1) === 93) {
      close = k;
      break;
    }
    if (c === 91 && s.charCodeAt(k + 1) === 91) return null;
  }
  if (close < 0) return null;
  const inner = s.slice(i + 2, close);
  if (inner.trim() === "") return null;
  const bar = inner.indexOf("|");
  let target = bar < 0 ? inner : inner.slice(0, bar);
  const alias = bar < 0 ? undefined : inner.slice(bar + 1);
  // Inside tables the pipe is written `\|`: `[[Note\|alias]]`.
  if (bar >= 0 && target.endsWith("\\")) target = target.slice(0, -1);
  return { end: close + 2, inner, target, alias };
}

export interface MarkdownLinkParts {
  /** Index just past the closing `)`. */
  end: number;
  textStart: number;
  textEnd: number;
  /** Destination span as written (inside the angle brackets when `angle`). */
  destStart: number;
  destEnd: number;
  angle: boolean;
}

/**
 * Parses `[text](dest "title")` whose `[` is at `i` (on one line ending at `lineEnd`).
 * Returns null when it is not an inline link.
 */
export function parseMarkdownLinkAt(s: string, i: number, lineEnd: number, knownTextEnd?: number): MarkdownLinkParts | null {
  // Link text: balanced brackets, backslash escapes, inline code spans skipped.
  let depth = 0;
  let p = i;
  let textEnd = knownTextEnd ?? -1;
  // Link text longer than this is not a link; the cap keeps lines full of `[` bounded.
  const textLimit = knownTextEnd !== undefined ? i : Math.min(lineEnd, i + MAX_LINK_TEXT);
  while (p < textLimit) {
    const c = s.charCodeAt(p);
    if (c === 92 /* \ */) {
      p += 2;
      continue;
    }
    if (c === 96 /* ` */) {
      const after = skipCodeSpan(s, p, lineEnd);
      if (after > 0) {
        p = after;
        continue;
      }
      while (p < lineEnd && s.charCodeAt(p) === 96) p++;
      continue;
    }
    if (c === 91 /* [ */) depth++;
    else if (c === 93 /* ] */) {
      depth--;
      if (depth === 0) {
        textEnd = p;
        break;
      }
    }
    p++;
  }
  if (textEnd < 0 || s.charCodeAt(textEnd + 1) !== 40 /* ( */) return null;
  p = textEnd + 2;
  while (p < lineEnd && isSpaceOrTab(s.charCodeAt(p))) p++;
  let destStart: number;
  let destEnd: number;
  let angle = false;
  if (s.charCodeAt(p) === 60 /* < */) {
    angle = true;
    destStart = p + 1;
    let q = destStart;
    while (q < lineEnd) {
      const c = s.charCodeAt(q);
      if (c === 92) {
        q += 2;
        continue;
      }
      if (c === 62 /* > */ || c === 60) break;
      q++;
    }
    if (q >= lineEnd || s.charCodeAt(q) !== 62) return null;
    destEnd = q;
    p = q + 1;
  } else {
    destStart = p;
    let parens = 0;
    const destLimit = Math.min(lineEnd, p + MAX_DEST);
    while (p < destLimit) {
      const c = s.charCodeAt(p);
      if (c === 92) {
        p += 2;
        continue;
      }
      if (c <= 32) break;
      if (c === 40) parens++;
      else if (c === 41) {
        if (parens === 0) break;
        parens--;
      }
      p++;
    }
    if (p >= destLimit && destLimit < lineEnd) return null; // absurdly long: not a link
    if (p > lineEnd) p = lineEnd;
    destEnd = p;
  }
  while (p < lineEnd && isSpaceOrTab(s.charCodeAt(p))) p++;
  const t = s.charCodeAt(p);
  if (p > destEnd && (t === 34 || t === 39 || t === 40)) {
    const closer = t === 40 ? 41 : t;
    let q = p + 1;
    while (q < lineEnd && s.charCodeAt(q) !== closer) q += s.charCodeAt(q) === 92 ? 2 : 1;
    if (q >= lineEnd) return null;
    p = q + 1;
    while (p < lineEnd && isSpaceOrTab(s.charCodeAt(p))) p++;
  }
  if (p >= lineEnd || s.charCodeAt(p) !== 41 /* ) */) return null;
  return { end: p + 1, textStart: i + 1, textEnd, destStart, destEnd, angle };
}

/** When a code span opens at `i` (a run of backticks), the index after its closing run; else -1. */
export function skipCodeSpan(s: string, i: number, lineEnd: number): number {
  let n = 0;
  while (i + n < lineEnd && s.charCodeAt(i + n) === 96) n++;
  let p = i + n;
  while (p < lineEnd) {
    if (s.charCodeAt(p) !== 96) {
      p++;
      continue;
    }
    let m = 0;
    while (p + m < lineEnd && s.charCodeAt(p + m) === 96) m++;
    if (m === n) return p + m;
    p += m;
  }
  return -1;
}

/** Longest link text (`[…]`) looked at, in UTF-16 units. */
export const MAX_LINK_TEXT = 2000;
/** Longest unbracketed link destination looked at (data URIs longer than this are not links anyway). */
export const MAX_DEST = 1024;

export function isSpaceOrTab(c: number): boolean {
  return c === 32 || c === 9;
}

/** Whitespace as far as tag boundaries go. */
export function isWhitespace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12 || c === 11 || c === 0xa0 || c === 0x3000 || (c >= 0x2000 && c <= 0x200b) || c === 0x202f || c === 0x205f || c === 0xfeff;
}

/**
 * Characters that end a tag: whitespace, ASCII punctuation except `-`, `_`, `/`, and the Unicode
 * general/supplemental punctuation blocks (what Obsidian's tag regex excludes).
 */
export function isTagChar(c: number): boolean {
  if (c < 128) {
    if ((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)) return true;
    return c === 45 || c === 95 || c === 47;
  }
  if (c >= 0x2000 && c <= 0x206f) return false;
  if (c >= 0x2e00 && c <= 0x2e7f) return false;
  // CJK punctuation (、。「」 …) and full-width space/punctuation end a tag too.
  if (c >= 0x3000 && c <= 0x3003) return false;
  if (c >= 0x3008 && c <= 0x3011) return false;
  if (c >= 0x3014 && c <= 0x301f) return false;
  if (c === 0xff01 || c === 0xff0c || c === 0xff0e || c === 0xff1a || c === 0xff1b || c === 0xff1f) return false;
  if (c === 0xa0 || c === 0xfeff) return false;
  return true;
}

/** True when a URL-ish destination has a scheme (`https:`, `mailto:`, `obsidian:`…): an external link. */
export function hasScheme(dest: string): boolean {
  const c0 = dest.charCodeAt(0);
  if (!((c0 >= 65 && c0 <= 90) || (c0 >= 97 && c0 <= 122))) return dest.startsWith("//");
  for (let i = 1; i < dest.length && i < 40; i++) {
    const c = dest.charCodeAt(i);
    if (c === 58 /* : */) return i >= 2; // single letters are Windows drives, not schemes
    const ok = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46;
    if (!ok) return false;
  }
  return false;
}

/** `decodeURIComponent` that leaves malformed escapes as written. */
export function safeDecode(s: string): string {
  if (s.indexOf("%") < 0) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    return s.replace(/%[0-9a-fA-F]{2}/g, (m) => {
      try {
        return decodeURIComponent(m);
      } catch {
        return m;
      }
    });
  }
}

/** Removes markdown backslash escapes (`\_` → `_`). */
export function unescapeMarkdown(s: string): string {
  if (s.indexOf("\\") < 0) return s;
  return s.replace(/\\([!-/:-@[-`{-~])/g, "$1");
}

/**
 * Matching `]` for every `[` in `[from, end)` in one pass (backslash escapes and code spans
 * skipped, as `parseMarkdownLinkAt` does). Unmatched `[` are absent from the map.
 */
export function bracketMatches(s: string, from: number, end: number): Map<number, number> {
  const m = new Map<number, number>();
  const stack: number[] = [];
  const noCloser: number[] = [];
  let k = from;
  while (k < end) {
    const c = s.charCodeAt(k);
    if (c === 92) {
      k += 2;
      continue;
    }
    if (c === 96) {
      let n = 0;
      while (k + n < end && s.charCodeAt(k + n) === 96) n++;
      const failed = noCloser[n];
      if (failed === undefined || k < failed) {
        const after = skipCodeSpan(s, k, end);
        if (after > 0) {
          k = after;
          continue;
        }
        noCloser[n] = k;
      }
      k += n;
      continue;
    }
    if (c === 91) stack.push(k);
    else if (c === 93 && stack.length > 0) m.set(stack.pop()!, k);
    k++;
  }
  return m;
}
