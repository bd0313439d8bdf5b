/**
 * Notes cut into chunks (at H1/H2, then deeper headings, paragraphs and lines while longer than
 * `maxWords`), with what every engine indexes: title, aliases, headings, tags, body. Pure: it reads the text and metadata it is given.
 */
import { splitFrontmatter } from "../frontmatter";
import { frontmatterAliases, frontmatterTags, type NoteMetadata } from "../metadata";
import { basenameOf } from "../vault";
import { lowerBound } from "../sorted";
import { UNSPACED_CHAR } from "./tokenize";
import type { Chunk, ChunkOptions } from "./types";

const HEADING_RE = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$/;
const FENCE_RE = /^ {0,3}(`{3,}|~{3,})/;

interface HeadingLine {
  /** Index into the body's lines. */
  line: number;
  level: number;
  text: string;
}

interface Segment {
  start: number;
  /** Exclusive. */
  end: number;
  level: number;
  path: string[];
}

// Per UTF-16 code: 1 space (\s), 2 CJK character, 3 other, 4 a character of a script written
// without spaces between words (Thai, Lao, Khmer, Myanmar); 0 not computed yet.
const WC_CLASS = new Uint8Array(0x10000);
const SPACE_RE = /^\s$/u;
const CJK_ONE = /^[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]$/u;
/** Characters (letters and their marks) of an unspaced script counted as one word: Thai words are ~4 letters and ~1 mark. */
const UNSPACED_PER_WORD = 5;

function wordClass(ch: string): number {
  return SPACE_RE.test(ch) ? 1 : CJK_ONE.test(ch) ? 2 : UNSPACED_CHAR.test(ch) ? 4 : 3;
}
for (let c = 0; c < 128; c++) WC_CLASS[c] = c === 32 || (c >= 9 && c <= 13) ? 1 : 3;

/**
 * Words in a line, CJK characters counting half a word each, those of unspaced scripts a fifth (a
 * char-code loop; no regex per line). Counted as one word, a Thai phrase between two spaces made
 * chunks of thousands of words.
 */
export function countWords(s: string): number {
  let n = 0;
  let c = 0;
  let u = 0;
  let inWord = false;
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    let k = WC_CLASS[code];
    if (k === 0) {
      if (code >= 0xd800 && code <= 0xdbff && i + 1 < s.length) {
        // An astral character: classify it whole (not cached).
        const ch = String.fromCodePoint(s.codePointAt(i)!);
        i++;
        k = wordClass(ch);
      } else {
        k = WC_CLASS[code] = wordClass(String.fromCharCode(code));
      }
    }
    if (k === 3) {
      if (!inWord) n++;
      inWord = true;
    } else {
      inWord = false;
      if (k === 2) c++;
      else if (k === 4) u++;
    }
  }
  return n + Math.ceil(c / 2) + Math.ceil(u / UNSPACED_PER_WORD);
}

function headingText(raw: string | undefined): string {
  return (raw ?? "").replace(/[ \t]+#+$/, "").trim();
}

/**
 * Splits a note into search chunks. A short note is one chunk; a longer one is split at H1/H2, then at
 * deeper headings where a section is still longer than `maxWords`, then at paragraphs (then lines).
 * The frontmatter block is not part of any chunk's text; line numbers are 1-based in the file.
 */
export function chunkNote(path: string, text: string, meta: NoteMetadata | null, opts?: ChunkOptions): Chunk[] {
  const steps = chunkNoteSteps(path, text, meta, opts);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** `chunkNote` for the indexers: `pause()` between its steps (it yields only when its slice is used up). */
export async function chunkNoteSliced(path: string, text: string, meta: NoteMetadata | null, opts: ChunkOptions | undefined, pause: () => Promise<void>): Promise<Chunk[]> {
  const steps = chunkNoteSteps(path, text, meta, opts);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    await pause();
  }
}

/** Lines, units or sections gone through between two steps of `chunkNoteSteps`. */
const LINES_PER_STEP = 8192;

/**
 * `chunkNote` in steps (it yields between them), for the indexer: a note near the 2 MB limit took
 * 40–120 ms in one go (80k lines of one paragraph; 5,000 headings).
 */
export function* chunkNoteSteps(path: string, text: string, meta: NoteMetadata | null, opts?: ChunkOptions): Generator<void, Chunk[], void> {
  const maxWords = Math.max(20, opts?.maxWords ?? 300);
  const split = splitFrontmatter(text);
  const firstLine = split.lineCount + 1;
  let body = text.slice(split.bodyOffset);
  if (split.bodyOffset === 0 && body.charCodeAt(0) === 0xfeff) body = body.slice(1);
  const lines = body.split("\n");
  for (let i = 0; i < lines.length; i++) if (lines[i].endsWith("\r")) lines[i] = lines[i].slice(0, -1);
  yield;
  if (lines.length > 1 && lines[lines.length - 1] === "" && body.endsWith("\n")) lines.pop();

  const words = new Float64Array(lines.length + 1); // prefix sums
  const headings: HeadingLine[] = [];
  /** `headings`' lines, for `lowerBound`. */
  const headingLines: number[] = [];
  let fence: string | null = null;
  for (let i = 0; i < lines.length; i++) {
    if (i % LINES_PER_STEP === LINES_PER_STEP - 1) yield;
    const line = lines[i];
    words[i + 1] = words[i] + (line.length ? countWords(line) : 0);
    const f = FENCE_RE.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    const hash = line.indexOf("#");
    if (fence !== null || hash < 0 || hash > 3) continue;
    const h = HEADING_RE.exec(line);
    if (h) {
      headings.push({ line: i, level: h[1].length, text: headingText(h[2]) });
      headingLines.push(i);
    }
  }

  const fm = meta?.frontmatter;
  const title = basenameOf(path);
  const aliases = frontmatterAliases(fm);
  const tagSet = new Set<string>();
  for (const t of frontmatterTags(fm)) tagSet.add(t.slice(1));
  for (const t of meta?.tags ?? []) tagSet.add(t.tag.replace(/^#/, ""));
  const tags = [...tagSet];

  const out: Chunk[] = [];
  const wordsIn = (a: number, b: number) => words[b] - words[a];

  const emit = (start: number, end: number, path_: string[]) => {
    // Trim blank lines at both ends.
    while (start < end && lines[start].trim() === "") start++;
    while (end > start && lines[end - 1].trim() === "") end--;
    if (start >= end) return;
    // The headings inside [start, end), found by line (they are in line order): a loop over every
    // heading for every chunk was 59 ms for a note of 5,000 headings.
    const inner: string[] = [];
    for (let k = lowerBound(headingLines, start); k < headings.length && headings[k].line < end; k++) if (headings[k].text) inner.push(headings[k].text);
    const hs = [...path_];
    for (const h of inner) if (!hs.includes(h)) hs.push(h);
    out.push({
      path,
      ordinal: out.length,
      heading: path_.join(" > "),
      headingPath: path_,
      lineStart: firstLine + start,
      lineEnd: firstLine + end - 1,
      text: lines.slice(start, end).join("\n"),
      title,
      aliases,
      tags,
      headings: hs,
    });
  };

  const emitLongLine = (i: number, path_: string[]) => {
    // One line longer than the cap: cut it at spaces (or characters for unspaced scripts).
    const line = lines[i];
    const total = Math.max(1, wordsIn(i, i + 1));
    const pieces = Math.ceil(total / maxWords);
    const step = Math.ceil(line.length / pieces);
    let pos = 0;
    while (pos < line.length) {
      let end = Math.min(line.length, pos + step);
      if (end < line.length) {
        const sp = line.lastIndexOf(" ", end);
        if (sp > pos + step / 2) end = sp + 1;
      }
      const piece = line.slice(pos, end).trim();
      if (piece) {
        out.push({
          path,
          ordinal: out.length,
          heading: path_.join(" > "),
          headingPath: path_,
          lineStart: firstLine + i,
          lineEnd: firstLine + i,
          text: piece,
          title,
          aliases,
          tags,
          headings: [...path_],
        });
      }
      pos = end;
    }
  };

  let work = 0;
  const paragraphSplit = function* (seg: Segment): Generator<void, void, void> {
    // Units: paragraphs (blank-line separated); a unit longer than the cap is split into lines.
    const units: [number, number][] = [];
    let s = seg.start;
    for (let i = seg.start; i <= seg.end; i++) {
      if (++work % LINES_PER_STEP === 0) yield;
      if (i === seg.end || lines[i].trim() === "") {
        if (i > s) {
          if (wordsIn(s, i) > maxWords) for (let j = s; j < i; j++) units.push([j, j + 1]);
          else units.push([s, i]);
        }
        s = i + 1;
      }
    }
    let a = -1;
    let b = -1;
    for (const [us, ue] of units) {
      if (++work % LINES_PER_STEP === 0) yield;
      if (ue - us === 1 && wordsIn(us, ue) > maxWords) {
        if (a >= 0) emit(a, b, seg.path);
        a = -1;
        emitLongLine(us, seg.path);
        continue;
      }
      if (a < 0) {
        a = us;
        b = ue;
      } else if (wordsIn(a, ue) > maxWords) {
        emit(a, b, seg.path);
        a = us;
        b = ue;
      } else b = ue;
    }
    if (a >= 0) emit(a, seg.end, seg.path);
  };

  const splitSegment = function* (seg: Segment): Generator<void, void, void> {
    if (wordsIn(seg.start, seg.end) <= maxWords) {
      emit(seg.start, seg.end, seg.path);
      return;
    }
    work += headings.length;
    if (work >= LINES_PER_STEP) {
      work = 0;
      yield;
    }
    const inner = headings.filter((h) => (h.line > seg.start || (seg.level === 0 && h.line === seg.start)) && h.line < seg.end && h.level > seg.level);
    if (inner.length === 0) {
      yield* paragraphSplit(seg);
      return;
    }
    let minLevel = 7;
    for (const h of inner) minLevel = Math.min(minLevel, h.level);
    const threshold = seg.level === 0 ? Math.max(2, minLevel) : minLevel;
    const cuts = inner.filter((h) => h.level <= threshold);
    if (cuts[0].line > seg.start) {
      const intro: Segment = { start: seg.start, end: cuts[0].line, level: seg.level, path: seg.path };
      if (wordsIn(intro.start, intro.end) <= maxWords) emit(intro.start, intro.end, intro.path);
      else yield* paragraphSplit(intro);
    }
    const stack: HeadingLine[] = [];
    for (let k = 0; k < cuts.length; k++) {
      const h = cuts[k];
      while (stack.length && stack[stack.length - 1].level >= h.level) stack.pop();
      stack.push(h);
      const end = k + 1 < cuts.length ? cuts[k + 1].line : seg.end;
      yield* splitSegment({ start: h.line, end, level: h.level, path: [...seg.path, ...stack.map((x) => x.text).filter(Boolean)] });
    }
  };

  if (wordsIn(0, lines.length) <= maxWords) {
    emit(0, lines.length, []);
  } else {
    yield* splitSegment({ start: 0, end: lines.length, level: 0, path: [] });
  }
  if (out.length === 0) {
    out.push({ path, ordinal: 0, heading: "", headingPath: [], lineStart: firstLine, lineEnd: firstLine, text: "", title, aliases, tags, headings: [] });
  }
  return out;
}
