/**
 * Headless note parser: produces the same facts Obsidian's `metadataCache` gives (`NoteMetadata`,
 * a subset of `CachedMetadata`) in one linear pass over the lines.
 *
 * What it follows (from Obsidian's help vault and CommonMark):
 * - Frontmatter only when the file starts with a `---` line; YAML 1.2 core schema, so dates stay strings.
 * - ATX headings (`#`..`######` + space, closing `#`s stripped) and setext headings (`===` / `---`
 *   under a paragraph); not inside block quotes / callouts or list items.
 * - Nothing is reported inside fenced code (``` / ~~~), inline code, `%%comments%%` (inline or
 *   multi-line), `$$math$$` blocks and `$inline math$`.
 * - Links: `[[wikilinks]]` (alias after `|`, `\|` in tables), `![[embeds]]`, markdown `[t](dest)` and
 *   `![alt](dest)` with a URL-decoded destination; destinations with a scheme (`https:`, `mailto:`,
 *   `obsidian:`…) are external and not links.
 * - Tags: `#` at the start of the content or after whitespace, then letters/digits/`-`/`_`/`/`/any
 *   non-punctuation Unicode; not all digits.
 * - Block ids: ` ^id` (or `]]^id` right after an embed, as help-en uses) ending the last line of a
 *   paragraph or a list item, or `^id` alone on a line
 *   right after a block (or after one blank line). Ids are Latin letters, digits and `-`.
 *   `position` covers the block, from its first line to the end of the line holding the id.
 * Positions are 0-based line/col/offset in UTF-16 units into `text` as given (a BOM counts as one unit).
 */
import { parseDocument } from "yaml";
import { dict, setOwn } from "../dict";
import { detach } from "../strings";
import { splitFrontmatter } from "../frontmatter";
import { fastYaml } from "./fast-yaml";
import type { FrontmatterLinkRef, LinkRef, Loc, NoteMetadata, Pos } from "../metadata";
import { bracketMatches, hasScheme, isSpaceOrTab, isTagChar, isWhitespace, parseMarkdownLinkAt, parseWikilinkAt, safeDecode, skipCodeSpan, unescapeMarkdown } from "./inline";

export { parseWikilinkAt, parseMarkdownLinkAt, hasScheme, safeDecode } from "./inline";

/** Parses frontmatter YAML the way `parseNote` does: `{ frontmatter }` or `{ error }`. */
export function parseFrontmatterText(yaml: string): { frontmatter?: Record<string, unknown>; error?: string } {
  const m: NoteMetadata = { headings: [], links: [], embeds: [], frontmatterLinks: [], tags: [], blocks: dict() };
  parseFrontmatterYaml(yaml, m);
  return m.frontmatterError !== undefined ? { error: m.frontmatterError } : { frontmatter: m.frontmatter };
}

/** The full `yaml`-package parse, without the fast path (exported for tests). */
export function parseFrontmatterSlow(yaml: string): { frontmatter?: Record<string, unknown>; error?: string } {
  const m: NoteMetadata = { headings: [], links: [], embeds: [], frontmatterLinks: [], tags: [], blocks: dict() };
  parseFrontmatterYaml(yaml, m, false);
  return m.frontmatterError !== undefined ? { error: m.frontmatterError } : { frontmatter: m.frontmatter };
}

/**
 * Parses a note's metadata. `detached: false` leaves its strings as slices of `text` (see
 * `detachStrings`): for a caller that copies them out at once (the headless vault packs them).
 */
export function parseNote(text: string, detached = true): NoteMetadata {
  const meta: NoteMetadata = { headings: [], links: [], embeds: [], frontmatterLinks: [], tags: [], blocks: dict() };
  const fm = splitFrontmatter(text);
  let bodyOffset = 0;
  let bodyLine = 0;
  if (fm.yaml !== null) {
    bodyOffset = Math.min(fm.bodyOffset, text.length);
    bodyLine = fm.lineCount;
    meta.frontmatterPosition = frontmatterPos(text, fm.bodyOffset, fm.lineCount);
    parseFrontmatterYaml(fm.yaml, meta);
    if (fm.bodyOffset > text.length) return meta; // the closing fence is the last line, no body
  }
  new BodyParser(text, meta).run(bodyOffset, bodyLine);
  return detached ? detachStrings(meta) : meta;
}

/**
 * Every string in the metadata (and in its frontmatter, recursively) replaced by a detached copy
 * (see `detach`): a link's or heading's text would otherwise keep its whole note in memory for as
 * long as the metadata lives (~25 MB at 10k notes).
 */
function detachStrings(meta: NoteMetadata): NoteMetadata {
  for (const h of meta.headings) h.heading = detach(h.heading);
  for (const list of [meta.links, meta.embeds, meta.frontmatterLinks] as { link: string; original: string; displayText?: string }[][]) {
    for (const l of list) {
      l.link = detach(l.link);
      l.original = detach(l.original);
      if (l.displayText !== undefined) l.displayText = detach(l.displayText);
    }
  }
  for (const t of meta.tags) t.tag = detach(t.tag);
  for (const l of meta.frontmatterLinks) l.key = detach(l.key);
  for (const b of Object.values(meta.blocks)) b.id = detach(b.id);
  if (meta.frontmatter) meta.frontmatter = detachValue(meta.frontmatter) as Record<string, unknown>;
  return meta;
}

function detachValue(v: unknown): unknown {
  if (typeof v === "string") return detach(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = detachValue(v[i]);
    return v;
  }
  if (v && typeof v === "object" && Object.getPrototypeOf(v) === Object.prototype) {
    const o = v as Record<string, unknown>;
    for (const k of Object.keys(o)) o[k] = detachValue(o[k]);
  }
  return v;
}

function frontmatterPos(text: string, bodyOffset: number, lineCount: number): Pos {
  let closeEnd = bodyOffset > text.length ? text.length : bodyOffset - 1; // the closing line's "\n" or EOF
  const closeStart = text.lastIndexOf("\n", closeEnd - 1) + 1;
  if (closeEnd > closeStart && text.charCodeAt(closeEnd - 1) === 13) closeEnd--;
  return {
    start: { line: 0, col: 0, offset: 0 },
    end: { line: lineCount - 1, col: closeEnd - closeStart, offset: closeEnd },
  };
}

function parseFrontmatterYaml(yaml: string, meta: NoteMetadata, fast = true): void {
  let value: unknown = fast ? fastYaml(yaml) : undefined;
  if (value !== undefined) {
    meta.frontmatter = value as Record<string, unknown>;
    for (const key of Object.keys(meta.frontmatter)) collectFrontmatterLinks(meta.frontmatter[key], key, meta.frontmatterLinks);
    return;
  }
  try {
    const doc = parseDocument(yaml, { schema: "core", prettyErrors: false, logLevel: "silent" });
    if (doc.errors.length > 0) {
      meta.frontmatterError = firstLine(doc.errors[0].message);
      return;
    }
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (e) {
    meta.frontmatterError = firstLine(e instanceof Error ? e.message : String(e));
    return;
  }
  if (value === null || value === undefined) {
    meta.frontmatter = {};
    return;
  }
  if (typeof value !== "object" || Array.isArray(value)) {
    meta.frontmatterError = "The frontmatter is not a list of properties (expected `key: value` lines).";
    return;
  }
  const fm = jsonSafe(value) as Record<string, unknown>;
  meta.frontmatter = fm;
  for (const key of Object.keys(fm)) collectFrontmatterLinks(fm[key], key, meta.frontmatterLinks);
}

function firstLine(s: string): string {
  const i = s.indexOf("\n");
  return i < 0 ? s : s.slice(0, i);
}

/** Keeps the frontmatter JSON-serialisable: non-finite numbers become strings, odd objects plain. */
function jsonSafe(v: unknown): unknown {
  if (typeof v === "number") return Number.isFinite(v) ? v : String(v);
  if (typeof v === "bigint") return v.toString();
  if (v === null || typeof v !== "object") return v === undefined ? null : v;
  if (Array.isArray(v)) return v.map(jsonSafe);
  if (v instanceof Date) return v.toISOString();
  // eslint-disable-next-line no-restricted-syntax -- frontmatter as a plain object (what Obsidian gives), written with setOwn
  const out: Record<string, unknown> = {};
  // setOwn: a key named `__proto__` stays a key (an assignment would replace the prototype).
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) setOwn(out, k, jsonSafe(x));
  return out;
}

function collectFrontmatterLinks(value: unknown, key: string, out: FrontmatterLinkRef[]): void {
  if (typeof value === "string") {
    let i = value.indexOf("[[");
    while (i >= 0) {
      const w = parseWikilinkAt(value, i, value.length);
      if (!w) {
        i = value.indexOf("[[", i + 1);
        continue;
      }
      const ref: FrontmatterLinkRef = { key, link: w.target.trim(), original: value.slice(i, w.end) };
      ref.displayText = w.alias !== undefined ? w.alias : w.target.trim();
      out.push(ref);
      i = value.indexOf("[[", w.end);
    }
  } else if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) collectFrontmatterLinks(value[i], `${key}.${i}`, out);
  } else if (value !== null && typeof value === "object") {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) collectFrontmatterLinks(v, `${key}.${k}`, out);
  }
}

type BlockKind = "para" | "list" | "quote" | "table" | "other";

interface Block {
  kind: BlockKind;
  start: Loc;
  quoteDepth: number;
  /** The block's lines as [contentStart, contentEnd] (for setext headings). */
  lines: number[];
  /** A ` ^id` candidate on the block's latest line. */
  pendingId: string | null;
  pendingEnd: Loc | null;
}

interface Fence {
  ch: number;
  len: number;
  quoteDepth: number;
}

class BodyParser {
  private fence: Fence | null = null;
  private inComment = false;
  private inMath = false;
  /** Where the open comment / math block closes (-1: not searched yet). */
  private closeAt = -1;
  /** Per line: code-span run lengths known to have no closer, and whether `$…$` can still close. */
  private codeFailLine = -1;
  private readonly codeFailFrom: number[] = [];
  private mathFailFrom = Infinity;
  private bracketLine = -1;
  private matchLine = -1;
  private parenLine = -1;
  private parenAt = -1;
  private matches = new Map<number, number>();
  private bracketAt = -1;
  private cur: Block | null = null;
  private last: Block | null = null;
  private blanksSinceLast = 0;
  private inList = false;
  private line = 0;
  private lineStart = 0;

  constructor(
    private readonly s: string,
    private readonly meta: NoteMetadata,
  ) {}

  run(offset: number, line: number): void {
    const s = this.s;
    const len = s.length;
    let pos = offset;
    this.line = line;
    for (;;) {
      const nl = s.indexOf("\n", pos);
      const lineEnd = nl < 0 ? len : nl;
      const contentEnd = lineEnd > pos && s.charCodeAt(lineEnd - 1) === 13 ? lineEnd - 1 : lineEnd;
      this.lineStart = pos;
      this.processLine(pos === 0 && s.charCodeAt(0) === 0xfeff ? 1 : pos, contentEnd);
      if (nl < 0) break;
      pos = nl + 1;
      this.line++;
    }
    this.endBlock();
  }

  private loc(off: number): Loc {
    return { line: this.line, col: off - this.lineStart, offset: off };
  }

  private processLine(ls: number, le: number): void {
    const s = this.s;
    // Quote prefix (`>` markers) and indentation.
    let q = ls;
    let depth = 0;
    for (;;) {
      let r = q;
      let sp = 0;
      while (sp < 3 && r < le && s.charCodeAt(r) === 32) {
        r++;
        sp++;
      }
      if (r < le && s.charCodeAt(r) === 62 /* > */) {
        depth++;
        q = r + 1;
        if (q < le && isSpaceOrTab(s.charCodeAt(q))) q++;
      } else break;
    }
    let t = q;
    let ind = 0;
    while (t < le) {
      const c = s.charCodeAt(t);
      if (c === 32) ind++;
      else if (c === 9) ind += 4 - (ind % 4);
      else break;
      t++;
    }

    if (this.fence) {
      const f = this.fence;
      if (depth < f.quoteDepth) {
        this.fence = null; // the block quote holding the fence ended
      } else {
        if (isClosingFence(s, t, le, f)) this.fence = null;
        return;
      }
    }

    if (this.inComment || this.inMath) {
      // Inside a multi-line comment or math block: the line continues whatever block holds it.
      if (!this.cur) this.startBlock("other", ls, depth);
      this.scanInline(ls, le, ls);
      this.setPendingId(ls, le);
      return;
    }

    if (t >= le) {
      this.endBlock();
      this.blanksSinceLast++;
      return;
    }
    const c = s.charCodeAt(t);

    // Fenced code.
    if ((c === 96 || c === 126) && (ind <= 3 || this.inList)) {
      let n = 0;
      while (t + n < le && s.charCodeAt(t + n) === c) n++;
      if (n >= 3 && (c === 126 || s.indexOf("`", t + n) < 0 || s.indexOf("`", t + n) >= le)) {
        this.endBlock();
        this.startBlock("other", ls, depth);
        this.fence = { ch: c, len: n, quoteDepth: depth };
        this.endBlock();
        return;
      }
    }

    if (depth === 0 && ind <= 3) {
      // ATX heading.
      if (c === 35 && !(this.cur && this.cur.kind === "list" && ind > 0)) {
        let h = 0;
        while (h < 7 && t + h < le && s.charCodeAt(t + h) === 35) h++;
        if (h <= 6 && (t + h >= le || isSpaceOrTab(s.charCodeAt(t + h)))) {
          this.endBlock();
          this.inList = false;
          this.heading(h, t + h, ls, le);
          return;
        }
      }
      // Setext underline, or a thematic break.
      if (c === 61 || c === 45 || c === 42 || c === 95) {
        let e = le;
        while (e > t && isSpaceOrTab(s.charCodeAt(e - 1))) e--;
        let same = true;
        for (let i = t; i < e; i++) {
          if (s.charCodeAt(i) !== c) {
            same = false;
            break;
          }
        }
        const cur = this.cur;
        if (same && (c === 61 || c === 45) && cur && cur.kind === "para" && cur.quoteDepth === 0) {
          this.setext(c === 61 ? 1 : 2, cur, le);
          return;
        }
        if (c !== 61 && isThematicBreak(s, t, le, c)) {
          this.endBlock();
          this.inList = false;
          this.startBlock("other", ls, depth);
          this.endBlock();
          return;
        }
      }
    }

    // A block id alone on its line: belongs to the block just above (or above one blank line).
    if (c === 94 /* ^ */) {
      const id = blockIdAt(s, t + 1, le);
      if (id !== null) {
        const target = this.cur ?? (this.blanksSinceLast <= 1 ? this.last : null);
        if (target) {
          this.addBlock(id, target.start, this.loc(le));
          if (this.cur) this.endBlock();
          this.last = null;
          return;
        }
      }
    }

    // List items start their own block.
    const markerEnd = listMarkerEnd(s, t, le);
    if (markerEnd >= 0) {
      this.endBlock();
      this.inList = true;
      this.startBlock("list", ls, depth);
      this.scanInline(markerEnd, le, markerEnd);
      this.setPendingId(ls, le);
      return;
    }

    const cur = this.cur;
    if (cur && !(cur.kind === "quote" && depth === 0 && c === 124) && !(cur.kind !== "quote" && depth > 0) && cur.kind !== "other") {
      cur.lines.push(t, le);
    } else {
      if (cur) this.endBlock();
      if (depth === 0 && ind === 0) this.inList = false;
      // A line opening with `%%` or `$$` starts a comment / math block, never a setext heading's text.
      const opensSpan = (c === 37 || c === 36) && s.charCodeAt(t + 1) === c;
      const kind: BlockKind = opensSpan ? "other" : depth > 0 ? "quote" : c === 124 ? "table" : this.inList ? "list" : "para";
      this.startBlock(kind, ls, depth);
      this.cur!.lines.push(t, le);
    }
    this.scanInline(t, le, t);
    this.setPendingId(ls, le);
  }

  private startBlock(kind: BlockKind, ls: number, depth: number): void {
    this.cur = { kind, start: this.loc(ls), quoteDepth: depth, lines: [], pendingId: null, pendingEnd: null };
    this.blanksSinceLast = 0;
  }

  private endBlock(): void {
    const b = this.cur;
    if (!b) return;
    if (b.pendingId !== null && b.pendingEnd) this.addBlock(b.pendingId, b.start, b.pendingEnd);
    this.last = b;
    this.cur = null;
    this.blanksSinceLast = 0;
  }

  private setPendingId(ls: number, le: number): void {
    const b = this.cur;
    if (!b) return;
    if (this.inComment || this.inMath) {
      b.pendingId = null;
      return;
    }
    const s = this.s;
    let e = le;
    while (e > ls && isSpaceOrTab(s.charCodeAt(e - 1))) e--;
    let i = e;
    while (i > ls && isBlockIdChar(s.charCodeAt(i - 1))) i--;
    if (i < e && i - 2 >= ls && s.charCodeAt(i - 1) === 94 && (isWhitespace(s.charCodeAt(i - 2)) || s.charCodeAt(i - 2) === 93)) {
      b.pendingId = s.slice(i, e);
      b.pendingEnd = this.loc(le);
    } else {
      b.pendingId = null;
    }
  }

  private addBlock(id: string, start: Loc, end: Loc): void {
    const key = id.toLowerCase();
    if (!Object.hasOwn(this.meta.blocks, key)) this.meta.blocks[key] = { id, position: { start, end } };
  }

  private heading(level: number, textStart: number, ls: number, le: number): void {
    const s = this.s;
    let a = textStart;
    while (a < le && isSpaceOrTab(s.charCodeAt(a))) a++;
    let b = le;
    while (b > a && isSpaceOrTab(s.charCodeAt(b - 1))) b--;
    // Closing sequence: spaces then `#`s at the end.
    let h = b;
    while (h > a && s.charCodeAt(h - 1) === 35) h--;
    if (h < b && (h === a || isSpaceOrTab(s.charCodeAt(h - 1)))) {
      b = h;
      while (b > a && isSpaceOrTab(s.charCodeAt(b - 1))) b--;
    }
    const text = s.slice(a, b);
    this.startBlock("other", ls, 0);
    if (text) this.meta.headings.push({ heading: text, level, position: { start: this.loc(ls), end: this.loc(le) } });
    this.scanInline(textStart, le, textStart);
    this.cur = null;
    this.last = { kind: "other", start: this.loc(ls), quoteDepth: 0, lines: [], pendingId: null, pendingEnd: null };
    this.blanksSinceLast = 0;
  }

  private setext(level: number, para: Block, le: number): void {
    const s = this.s;
    const parts: string[] = [];
    for (let i = 0; i < para.lines.length; i += 2) parts.push(s.slice(para.lines[i], para.lines[i + 1]).trim());
    const text = parts.join(" ").trim();
    if (text) this.meta.headings.push({ heading: text, level, position: { start: para.start, end: this.loc(le) } });
    para.pendingId = null;
    this.endBlock();
  }

  /** Finds links, embeds and tags in `[p, end)` of the current line; `tagStart` counts as a line start. */
  private scanInline(p: number, end: number, tagStart: number): void {
    const s = this.s;
    while (p < end) {
      if (this.inComment || this.inMath) {
        // The closing `%%` / `$$` is searched once and remembered, so long comments stay linear.
        const marker = this.inComment ? "%%" : "$$";
        if (this.closeAt < p) {
          const q = s.indexOf(marker, p);
          this.closeAt = q < 0 ? Infinity : q;
        }
        const q = this.closeAt;
        if (q + 2 > end) return;
        this.inComment = false;
        this.inMath = false;
        this.closeAt = -1;
        p = q + 2;
        continue;
      }
      let c = s.charCodeAt(p);
      // Fast path: skip ordinary characters.
      while (c < 128 && SPECIAL[c] === 0) {
        if (++p >= end) return;
        c = s.charCodeAt(p);
      }
      if (c >= 128) {
        p++;
        continue;
      }
      if (c === 92 /* \ */) {
        p += 2;
      } else if (c === 96 /* ` */) {
        p = this.codeSpan(p, end);
      } else if (c === 37 /* % */) {
        if (s.charCodeAt(p + 1) === 37 && p + 1 < end) {
          this.inComment = true;
          p += 2;
        } else p++;
      } else if (c === 36 /* $ */) {
        if (s.charCodeAt(p + 1) === 36 && p + 1 < end) {
          this.inMath = true;
          p += 2;
        } else if (p >= this.mathFailFrom && this.codeFailLine === this.line) {
          p++;
        } else {
          this.touchLine();
          const next = skipInlineMath(s, p, end);
          if (next === p + 1 && p + 1 < end && !isWhitespace(s.charCodeAt(p + 1))) this.mathFailFrom = p;
          p = next;
        }
      } else if ((c === 33 || c === 91) && p >= this.lastCloseBracket(end)) {
        p++; // no `]` left on this line: nothing here can be a link
      } else if (c === 33 /* ! */) {
        if (s.charCodeAt(p + 1) === 91) {
          const next = s.charCodeAt(p + 2) === 91 ? this.wikilink(p + 1, end, true) : this.mdLink(p + 1, end, true);
          p = next > 0 ? next : p + 1;
        } else p++;
      } else if (c === 91 /* [ */) {
        const next = s.charCodeAt(p + 1) === 91 ? this.wikilink(p, end, false) : this.mdLink(p, end, false);
        p = next > 0 ? next : p + 1;
      } else if (c === 35 /* # */) {
        p = p === tagStart || isWhitespace(s.charCodeAt(p - 1)) ? this.tag(p, end) : p + 1;
      } else if (c === 60 /* < */) {
        p = skipAutolink(s, p, end);
      } else if (c === 58 /* : */) {
        p = skipBareUrl(s, p, end);
      } else {
        p++;
      }
    }
  }

  /** Position of the last `]` on the current line (-1 when none), computed once per line. */
  private lastCloseBracket(end: number): number {
    if (this.bracketLine !== this.line) {
      this.bracketLine = this.line;
      let k = end - 1;
      while (k >= this.lineStart && this.s.charCodeAt(k) !== 93) k--;
      this.bracketAt = k >= this.lineStart ? k : -1;
    }
    return this.bracketAt;
  }

  /** Position of the last `)` on the current line (-1 when none), computed once per line. */
  private lastCloseParen(end: number): number {
    if (this.parenLine !== this.line) {
      this.parenLine = this.line;
      let k = end - 1;
      while (k >= this.lineStart && this.s.charCodeAt(k) !== 41) k--;
      this.parenAt = k >= this.lineStart ? k : -1;
    }
    return this.parenAt;
  }

  /** Resets the per-line memo when the scanner moves to a new line. */
  private touchLine(): void {
    if (this.codeFailLine !== this.line) {
      this.codeFailLine = this.line;
      this.codeFailFrom.length = 0;
      this.mathFailFrom = Infinity;
    }
  }

  /** Skips an inline code span (or an unmatched backtick run) at `p`; returns where scanning resumes. */
  private codeSpan(p: number, end: number): number {
    const s = this.s;
    let n = 0;
    while (p + n < end && s.charCodeAt(p + n) === 96) n++;
    this.touchLine();
    const failed = this.codeFailFrom[n];
    if (failed === undefined || p < failed) {
      const after = skipCodeSpan(s, p, end);
      if (after > 0) return after;
      this.codeFailFrom[n] = p;
    }
    return p + n;
  }

  private wikilink(p: number, end: number, embed: boolean): number {
    const w = parseWikilinkAt(this.s, p, end);
    if (!w) return -1;
    const startOff = embed ? p - 1 : p;
    const link = w.target.trim();
    const ref: LinkRef = {
      link,
      original: this.s.slice(startOff, w.end),
      displayText: w.alias !== undefined ? w.alias : link,
      position: { start: this.loc(startOff), end: this.loc(w.end) },
    };
    (embed ? this.meta.embeds : this.meta.links).push(ref);
    return w.end;
  }

  private mdLink(p: number, end: number, embed: boolean): number {
    const s = this.s;
    if (this.matchLine !== this.line) {
      this.matchLine = this.line;
      this.matches = bracketMatches(s, this.lineStart, end);
    }
    const textEnd = this.matches.get(p);
    if (textEnd === undefined || textEnd + 1 >= end || s.charCodeAt(textEnd + 1) !== 40) return -1;
    if (this.lastCloseParen(end) < textEnd) return -1; // no `)` left on the line

    const m = parseMarkdownLinkAt(s, p, end, textEnd);
    if (!m) return -1;
    const dest = s.slice(m.destStart, m.destEnd);
    if (dest === "" || hasScheme(dest)) return m.end;
    const startOff = embed ? p - 1 : p;
    const ref: LinkRef = {
      link: safeDecode(unescapeMarkdown(dest)),
      original: s.slice(startOff, m.end),
      displayText: s.slice(m.textStart, m.textEnd),
      position: { start: this.loc(startOff), end: this.loc(m.end) },
    };
    (embed ? this.meta.embeds : this.meta.links).push(ref);
    return m.end;
  }

  private tag(p: number, end: number): number {
    const s = this.s;
    let q = p + 1;
    let nonDigit = false;
    while (q < end) {
      const c = s.charCodeAt(q);
      if (!isTagChar(c)) break;
      if (c < 48 || c > 57) nonDigit = true;
      q++;
    }
    if (q === p + 1 || !nonDigit) return q;
    this.meta.tags.push({ tag: s.slice(p, q), position: { start: this.loc(p), end: this.loc(q) } });
    return q;
  }
}

function isClosingFence(s: string, t: number, le: number, f: Fence): boolean {
  let n = 0;
  while (t + n < le && s.charCodeAt(t + n) === f.ch) n++;
  if (n < f.len) return false;
  for (let i = t + n; i < le; i++) if (!isSpaceOrTab(s.charCodeAt(i))) return false;
  return true;
}

function isThematicBreak(s: string, t: number, le: number, c: number): boolean {
  let n = 0;
  for (let i = t; i < le; i++) {
    const x = s.charCodeAt(i);
    if (x === c) n++;
    else if (!isSpaceOrTab(x)) return false;
  }
  return n >= 3;
}

/** End of a list marker (`- `, `* `, `+ `, `1. `, `1) `) at `t`, or -1. */
function listMarkerEnd(s: string, t: number, le: number): number {
  const c = s.charCodeAt(t);
  if (c === 45 || c === 42 || c === 43) {
    if (t + 1 >= le) return t + 1;
    return isSpaceOrTab(s.charCodeAt(t + 1)) ? t + 2 : -1;
  }
  if (c >= 48 && c <= 57) {
    let i = t;
    while (i < le && i - t < 9 && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
    const d = s.charCodeAt(i);
    if (i < le && (d === 46 || d === 41)) {
      if (i + 1 >= le) return i + 1;
      return isSpaceOrTab(s.charCodeAt(i + 1)) ? i + 2 : -1;
    }
  }
  return -1;
}

function isBlockIdChar(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 45;
}

/** `^id` alone on a line: the id, or null. */
function blockIdAt(s: string, i: number, le: number): string | null {
  let e = le;
  while (e > i && isSpaceOrTab(s.charCodeAt(e - 1))) e--;
  if (e === i) return null;
  for (let k = i; k < e; k++) if (!isBlockIdChar(s.charCodeAt(k))) return null;
  return s.slice(i, e);
}

/** `$…$` inline math starting at `p` (a single `$`): index after it, or p+1 when it is not math. */
function skipInlineMath(s: string, p: number, end: number): number {
  const first = s.charCodeAt(p + 1);
  if (p + 1 >= end || isWhitespace(first)) return p + 1;
  let q = p + 1;
  for (;;) {
    q = s.indexOf("$", q);
    if (q < 0 || q >= end) return p + 1;
    const before = s.charCodeAt(q - 1);
    const after = s.charCodeAt(q + 1);
    if (q > p + 1 && !isWhitespace(before) && before !== 92 && !(after >= 48 && after <= 57)) return q + 1;
    q++;
  }
}

/** `<scheme:…>` autolinks are skipped whole so their `#fragment`s are not tags. */
function skipAutolink(s: string, p: number, end: number): number {
  let q = p + 1;
  while (q < end) {
    const c = s.charCodeAt(q);
    if (c === 62) break;
    if (c <= 32 || c === 60) return p + 1;
    q++;
  }
  if (q >= end) return p + 1;
  return hasScheme(s.slice(p + 1, q)) ? q + 1 : p + 1;
}

/** After a bare `scheme://`, skip the rest of the URL so its `#fragment`, `%%` or `$` mean nothing. */
function skipBareUrl(s: string, p: number, end: number): number {
  if (s.charCodeAt(p + 1) !== 47 || s.charCodeAt(p + 2) !== 47) return p + 1;
  let q = p + 3;
  while (q < end) {
    const c = s.charCodeAt(q);
    if (c <= 32 || c === 60 || c === 62 || c === 91 || c === 93 || c === 41 || c === 96) break;
    q++;
  }
  return q;
}

/** ASCII characters the inline scanner stops at. */
const SPECIAL = (() => {
  const t = new Uint8Array(128);
  for (const ch of "\\`%$![#<:") t[ch.charCodeAt(0)] = 1;
  return t;
})();
