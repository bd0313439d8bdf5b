/**
 * Finding the text an edit replaces: exact first, then once more over a normalised view (Unicode NFC,
 * smart quotes and dashes folded to ASCII, runs of spaces/tabs collapsed, trailing spaces ignored)
 * whose matches are mapped back to exact offsets in the original. On a miss, a diagnosis says which
 * line came closest and where it first differs.
 */

export interface TextMatch {
  /** Offsets into the searched text (UTF-16 units), end exclusive. */
  start: number;
  end: number;
}

export interface MatchResult {
  matches: TextMatch[];
  type: "exact" | "normalized";
  /** No exact match, and the range was too long for the loose match to be tried. */
  tooLong?: boolean;
}

const CHAR_FOLD = new Map<string, string>(Object.entries({
  "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
  "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"', "\u00ab": '"', "\u00bb": '"',
  "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
  "\u2026": "...",
}));

const HSPACE = /[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/;

export interface NormalizedText {
  text: string;
  /** For each unit of `text`: the original offset where the unit's source starts. */
  starts: number[];
  /** For each unit of `text`: the original offset where the unit's source ends (exclusive). */
  ends: number[];
}

/** Combining marks start at U+0300; below it no code unit can extend a cluster. */
const FIRST_MARK = 0x300;
const MARK = /\p{M}/u;

/**
 * The normalised view of `s` with a map back to original offsets. ASCII characters not followed by a
 * combining mark (most of any note) take a fast path; the rest go cluster by cluster through NFC and
 * the folds (all of a 256 KB note that way took ~250 ms).
 */
export function normalizeForMatch(s: string): NormalizedText {
  const out: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  const push = (t: string, from: number, to: number) => {
    for (const ch of t) {
      for (let u = 0; u < ch.length; u++) {
        out.push(ch[u]);
        starts.push(from);
        ends.push(to);
      }
    }
  };
  // Cluster = a base character with its combining marks, normalised together.
  const cluster = /\r\n|[^\p{M}][\p{M}]*|[\p{M}]+/suy;
  let spaceFrom = -1;
  let spaceTo = -1;
  const flushSpace = (nextIsNewline: boolean) => {
    if (spaceFrom < 0) return;
    if (!nextIsNewline) push(" ", spaceFrom, spaceTo);
    spaceFrom = -1;
  };
  const n = s.length;
  for (let i = 0; i < n; ) {
    const code = s.charCodeAt(i);
    const next = i + 1 < n ? s.charCodeAt(i + 1) : 0;
    if (code < 0x80 && code !== 13 && (next < FIRST_MARK || !MARK.test(s[i + 1]))) {
      if (code === 10) {
        flushSpace(true);
        out.push("\n");
      } else if (code === 32 || code === 9) {
        if (spaceFrom < 0) spaceFrom = i;
        spaceTo = i + 1;
        i++;
        continue;
      } else {
        flushSpace(false);
        out.push(s[i]);
      }
      starts.push(i);
      ends.push(i + 1);
      i++;
      continue;
    }
    cluster.lastIndex = i;
    const c = (cluster.exec(s) as RegExpExecArray)[0];
    const from = i;
    const to = (i += c.length);
    if (c === "\r\n" || c === "\n" || c === "\r") {
      flushSpace(true);
      push("\n", from, to);
      continue;
    }
    if (c.length === 1 && HSPACE.test(c)) {
      if (spaceFrom < 0) spaceFrom = from;
      spaceTo = to;
      continue;
    }
    flushSpace(false);
    const nfc = c.normalize("NFC");
    let folded = "";
    for (const ch of nfc) folded += CHAR_FOLD.get(ch) ?? ch;
    push(folded, from, to);
  }
  flushSpace(true);
  return { text: out.join(""), starts, ends };
}

/** Every non-overlapping occurrence of `needle` in `hay` starting within [from, to). */
function findAll(hay: string, needle: string, from: number, to: number): number[] {
  const out: number[] = [];
  if (needle === "") return out;
  let i = hay.indexOf(needle, from);
  while (i >= 0 && i + needle.length <= to) {
    out.push(i);
    i = hay.indexOf(needle, i + needle.length);
  }
  return out;
}

/**
 * The loose (normalised) match is tried on at most this many characters of a note (the range an edit
 * names with line_start/line_end, or the whole note): normalising costs ~0.1 µs a character of ASCII
 * and ~1 µs of other text, all in one step.
 */
export const MAX_LOOSE_MATCH_CHARS = 256 * 1024;

/**
 * Occurrences of `needle` in `text[from, to)`: exact ones, or — when there are none — normalised ones
 * mapped back to the original text (`tooLong` instead when the range is over `MAX_LOOSE_MATCH_CHARS`).
 */
export function findMatches(text: string, needle: string, from = 0, to = text.length): MatchResult {
  const exact = findAll(text, needle, from, to).map((i) => ({ start: i, end: i + needle.length }));
  if (exact.length > 0) return { matches: exact, type: "exact" };
  if (to - from > MAX_LOOSE_MATCH_CHARS) return { matches: [], type: "normalized", tooLong: true };
  const hay = normalizeForMatch(text.slice(from, to));
  const nNeedle = normalizeForMatch(needle).text;
  if (nNeedle.trim() === "") return { matches: [], type: "normalized" };
  const matches = findAll(hay.text, nNeedle, 0, hay.text.length).map((i) => ({ start: from + hay.starts[i], end: from + hay.ends[i + nNeedle.length - 1] }));
  return { matches, type: "normalized" };
}

/** 1-based line number of an offset, given `lineStarts` of the text (a binary search: edits can have thousands of matches). */
export function lineOfOffset(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

/** Offsets of the starts of every line (index 0 = line 1). */
export function lineStarts(text: string): number[] {
  const out = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) out.push(i + 1);
  return out;
}

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}

function dice(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const A = bigrams(a);
  const B = bigrams(b);
  let common = 0;
  for (const [g, n] of A) common += Math.min(n, B.get(g) ?? 0);
  return (2 * common) / (a.length - 1 + (b.length - 1));
}

function shorten(s: string, max = 60): string {
  return s.length > max ? s.slice(0, max) + "…" : s;
}

/** Characters of the note a miss diagnosis compares (lines cut at `MAX_COMPARED_LINE`), and of old_text's first line. */
const MISS_SCAN_CHARS = 256 * 1024;
const MAX_COMPARED_LINE = 400;
const MAX_PROBE = 200;

/**
 * Explains a miss: the line of `text` (within lines [firstLine, lastLine], 1-based) most like the
 * first non-blank line of `needle`, and where the needle first differs from the text there. Compares
 * lines (cut at 400 characters) until `MISS_SCAN_CHARS` have been compared, and says so when it
 * stopped early.
 */
export function describeMiss(text: string, needle: string, firstLine = 1, lastLine = Number.MAX_SAFE_INTEGER): string {
  const lines = text.split("\n").map((l) => l.replace(/\r$/, ""));
  const nLines = needle.split("\n", 1000).map((l) => l.replace(/\r$/, ""));
  let skip = 0;
  while (skip < nLines.length - 1 && nLines[skip].trim() === "") skip++;
  const probe = normalizeForMatch(nLines[skip].slice(0, MAX_PROBE)).text.trim();
  let best = -1;
  let bestScore = 0;
  const last = Math.min(lastLine, lines.length);
  let compared = 0;
  let stoppedAt = 0;
  for (let i = Math.max(1, firstLine); i <= last; i++) {
    if (compared > MISS_SCAN_CHARS) {
      stoppedAt = i - 1;
      break;
    }
    const line = lines[i - 1].slice(0, MAX_COMPARED_LINE);
    compared += line.length + 1;
    const score = dice(normalizeForMatch(line).text.trim(), probe);
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  }
  const partly = stoppedAt ? ` (Only lines ${Math.max(1, firstLine)}–${stoppedAt} were compared; narrow the search with line_start/line_end.)` : "";
  if (best < 0 || bestScore < 0.3) return `No line resembles the start of old_text; read the note again (with_line_numbers) and copy the text exactly.${partly}`;
  // Walk the needle against the text from the matching line. old_text's first line may start
  // anywhere in its line: align it where it fits best; the lines after it start at column 1.
  const startLine = best - skip;
  const at = alignment(lines[best - 1].slice(0, MAX_COMPARED_LINE), nLines[skip]);
  const where = `The closest text starts at line ${best}${at > 0 ? `, column ${at + 1}` : ""}`;
  for (let j = 0; j < nLines.length; j++) {
    const ln = startLine + j;
    const full = ln >= 1 && ln <= lines.length ? lines[ln - 1] : undefined;
    if (full === undefined) return `${where}; old_text continues past the end of the note at its line ${j + 1}.${partly}`;
    const from = j === skip ? at : 0;
    const have = full.slice(from);
    const want = nLines[j];
    // The last line of old_text may end before its line does.
    if (have === want || (j === nLines.length - 1 && have.startsWith(want))) continue;
    let col = 0;
    while (col < have.length && col < want.length && have[col] === want[col]) col++;
    return (
      `${where}; it first differs at line ${ln}, column ${from + col + 1}: ` +
      `the note has ${JSON.stringify(shorten(have.slice(col)))}, old_text has ${JSON.stringify(shorten(want.slice(col)))}.${partly}`
    );
  }
  return `${where}.${partly}`;
}

/**
 * Where in `line` the text `want` fits best: the offset whose window (as long as `want`, its first
 * 64 characters) shares the most bigrams with it, first one on a tie. Only offsets where the
 * first or second character agree (a typo in either is allowed) are tried.
 */
function alignment(line: string, want: string): number {
  const w = want.slice(0, 64);
  if (w.length < 2 || line.startsWith(w)) return 0;
  let best = 0;
  let bestScore = dice(line.slice(0, w.length), w);
  for (let o = 1; o + 1 < line.length; o++) {
    if (line[o] !== w[0] && line[o + 1] !== w[1]) continue;
    const score = dice(line.slice(o, o + w.length), w);
    if (score > bestScore) {
      bestScore = score;
      best = o;
    }
  }
  return best;
}
