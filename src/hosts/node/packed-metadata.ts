/**
 * The headless vault's per-note metadata, each note's kept as one compact binary string instead of
 * its object tree. A note's `NoteMetadata` is ~60 objects (every link, heading and tag has a position
 * of three objects): at 100k notes the object trees took ~1.5 GB, and a flat array of numbers and
 * strings per note still 2.2 KB a note (223 MB at 100k), every element a pointer the garbage
 * collector marks. Packed as bytes (varints for numbers and position deltas, UTF-8 for strings, the
 * frontmatter as its JSON text, a link's `original` left out when it is the plain `[[link]]` or
 * `[[link|display]]` it can be rebuilt from) a note takes ~250 bytes, in one flat string (a leaf
 * the collector does not look into, and no backing store of its own as a typed array would have).
 *
 * `unpack` makes a plain `NoteMetadata` again, as the parser made it (same keys in the same order,
 * same prototypes), on every call: a few µs a note, short-lived objects. The frontmatter is parsed
 * from its JSON text on every call, so callers get a copy of their own; a frontmatter JSON cannot
 * give back exactly (a `-0`, an odd object) is kept as the object itself, beside the string.
 */
import { dict } from "../../core/dict";
import { appendBodyLinksByLine, jsonExact, type BlockRef, type FrontmatterLinkRef, type HeadingRef, type LinkRef, type NoteMetadata, type Pos, type TagRef } from "../../core/metadata";

/** The packed bytes as a Latin-1 string; with the frontmatter object beside it when JSON would not round-trip it. */
export type PackedMetadata = string | readonly [string, Record<string, unknown>];

const HAS_FRONTMATTER = 1;
const HAS_FRONTMATTER_POSITION = 2;
const HAS_FRONTMATTER_ERROR = 4;
/** The frontmatter is the object beside the string, not JSON text in it. */
const FRONTMATTER_OBJECT = 8;

// Link flags: display text (bits 0–1) and original (bits 2–3).
const DISPLAY_NONE = 0;
const DISPLAY_SAME = 1;
const DISPLAY_STORED = 2;
/** The `displayText` key present with the value `undefined`. */
const DISPLAY_UNDEFINED = 3;
const ORIGINAL_STORED = 0;
/** `[[link]]` (embeds: `![[link]]`). */
const ORIGINAL_WIKI = 4;
/** `[[link|display]]`. */
const ORIGINAL_WIKI_ALIAS = 8;
/** A block whose id is its key. */
const BLOCK_ID_IS_KEY = 1;

// String kinds (the low two bits of a string's length header).
const STR_ASCII = 0;
const STR_UTF8 = 1;
/** UTF-16 code units as they are: a string with a lone surrogate, which UTF-8 cannot carry. */
const STR_UTF16 = 2;

const LONE_SURROGATE_SUSPECT = /[\uD800-\uDFFF]/;

/** Writes into one reused buffer; `done` copies the bytes out as a Latin-1 string. */
class Writer {
  buf = Buffer.allocUnsafe(4096);
  n = 0;
  prevLine = 0;
  prevOffset = 0;

  reset(): void {
    this.n = 0;
    this.prevLine = 0;
    this.prevOffset = 0;
  }

  private room(k: number): void {
    if (this.n + k <= this.buf.length) return;
    const b = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.n + k));
    this.buf.copy(b, 0, 0, this.n);
    this.buf = b;
  }

  /** An unsigned integer (any safe integer), 7 bits a byte. */
  u(v: number): void {
    this.room(8);
    const b = this.buf;
    while (v >= 128) {
      b[this.n++] = (v % 128) | 128;
      v = Math.floor(v / 128);
    }
    b[this.n++] = v;
  }

  /** A signed integer (zigzag). */
  z(v: number): void {
    this.u(v >= 0 ? v * 2 : -v * 2 - 1);
  }

  str(s: string): void {
    const len = Buffer.byteLength(s, "utf8");
    if (len === s.length) {
      this.u(len * 4 + STR_ASCII);
      this.room(len);
      this.n += this.buf.write(s, this.n, "latin1");
      return;
    }
    if (LONE_SURROGATE_SUSPECT.test(s) && Buffer.from(s, "utf8").toString("utf8") !== s) {
      this.u(s.length * 2 * 4 + STR_UTF16);
      this.room(s.length * 2);
      this.n += this.buf.write(s, this.n, "utf16le");
      return;
    }
    this.u(len * 4 + STR_UTF8);
    this.room(len);
    this.n += this.buf.write(s, this.n, "utf8");
  }

  pos(p: Pos): void {
    const { start, end } = p;
    this.z(start.line - this.prevLine);
    this.u(start.col);
    this.z(start.offset - this.prevOffset);
    const lines = end.line - start.line;
    const len = end.offset - start.offset;
    this.z(lines);
    this.z(len);
    this.z(lines === 0 ? end.col - start.col - len : end.col);
    this.prevLine = start.line;
    this.prevOffset = start.offset;
  }

  done(): string {
    return this.buf.toString("latin1", 0, this.n);
  }
}

const w = new Writer();

/** The link flags for `l` (what its display text and original are), written before its strings. */
function linkFlags(prefix: string, l: { link: string; original: string; displayText?: string }): number {
  const hasDisplay = "displayText" in l;
  const display = !hasDisplay ? DISPLAY_NONE : l.displayText === undefined ? DISPLAY_UNDEFINED : l.displayText === l.link ? DISPLAY_SAME : DISPLAY_STORED;
  let original = ORIGINAL_STORED;
  const o = l.original;
  if (o === `${prefix}[[${l.link}]]`) original = ORIGINAL_WIKI;
  else if (hasDisplay && l.displayText !== undefined && o === `${prefix}[[${l.link}|${l.displayText}]]`) original = ORIGINAL_WIKI_ALIAS;
  return display | original;
}

function writeLinkStrings(flags: number, l: { link: string; original: string; displayText?: string }): void {
  w.str(l.link);
  if ((flags & 12) === ORIGINAL_STORED) w.str(l.original);
  if ((flags & 3) === DISPLAY_STORED) w.str(l.displayText as string);
}


export function pack(m: NoteMetadata): PackedMetadata {
  const hasFm = "frontmatter" in m;
  const fmObject = hasFm && m.frontmatter !== undefined && !jsonExact(m.frontmatter);
  const flags =
    (hasFm ? HAS_FRONTMATTER : 0) |
    (m.frontmatterPosition ? HAS_FRONTMATTER_POSITION : 0) |
    ("frontmatterError" in m ? HAS_FRONTMATTER_ERROR : 0) |
    (fmObject ? FRONTMATTER_OBJECT : 0);
  w.reset();
  w.u(flags);
  // `undefined` (the key present without a value) as the empty text.
  if (hasFm && !fmObject) w.str(m.frontmatter === undefined ? "" : JSON.stringify(m.frontmatter));
  if (m.frontmatterPosition) w.pos(m.frontmatterPosition);
  if (flags & HAS_FRONTMATTER_ERROR) w.str(m.frontmatterError ?? "");
  w.u(m.headings.length);
  for (const h of m.headings) {
    w.str(h.heading);
    w.u(h.level);
    w.pos(h.position);
  }
  for (const [list, prefix] of [
    [m.links, ""],
    [m.embeds, "!"],
  ] as const) {
    w.u(list.length);
    for (const l of list) {
      const f = linkFlags(prefix, l);
      w.u(f);
      writeLinkStrings(f, l);
      w.pos(l.position);
    }
  }
  w.u(m.frontmatterLinks.length);
  for (const l of m.frontmatterLinks) {
    w.str(l.key);
    const f = linkFlags("", l);
    w.u(f);
    writeLinkStrings(f, l);
  }
  w.u(m.tags.length);
  for (const t of m.tags) {
    w.str(t.tag);
    w.pos(t.position);
  }
  const blocks = Object.entries(m.blocks);
  w.u(blocks.length);
  for (const [k, b] of blocks) {
    w.str(k);
    const same = b.id === k;
    w.u(same ? BLOCK_ID_IS_KEY : 0);
    if (!same) w.str(b.id);
    w.pos(b.position);
  }
  const s = w.done();
  return fmObject ? [s, m.frontmatter as Record<string, unknown>] : s;
}

/** Reads a packed string from the start. */
class Reader {
  i = 0;
  prevLine = 0;
  prevOffset = 0;
  constructor(private readonly s: string) {}

  u(): number {
    const s = this.s;
    let b = s.charCodeAt(this.i++);
    if (b < 128) return b;
    let v = b & 127;
    let mul = 128;
    for (;;) {
      b = s.charCodeAt(this.i++);
      v += (b & 127) * mul;
      if (b < 128) return v;
      mul *= 128;
    }
  }

  z(): number {
    const v = this.u();
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  str(): string {
    const h = this.u();
    const kind = h & 3;
    const len = (h - kind) / 4;
    const from = this.i;
    this.i += len;
    if (kind === STR_ASCII) return this.s.slice(from, from + len);
    const bytes = Buffer.from(this.s.slice(from, from + len), "latin1");
    return kind === STR_UTF8 ? bytes.toString("utf8") : bytes.toString("utf16le");
  }

  skipStr(): void {
    const h = this.u();
    this.i += (h - (h & 3)) / 4;
  }

  /** Skips a position (keeping the running line and offset the next one is relative to). */
  skipPos(): void {
    this.prevLine += this.z();
    this.u();
    this.prevOffset += this.z();
    this.u();
    this.u();
    this.u();
  }

  pos(): Pos {
    const line = this.prevLine + this.z();
    const col = this.u();
    const offset = this.prevOffset + this.z();
    const lines = this.z();
    const len = this.z();
    const c = this.z();
    this.prevLine = line;
    this.prevOffset = offset;
    return {
      start: { line, col, offset },
      end: { line: line + lines, col: lines === 0 ? col + len + c : c, offset: offset + len },
    };
  }
}

function readLink(r: Reader, prefix: string): { link: string; original: string; displayText: string | undefined; has: boolean } {
  const f = r.u();
  const link = r.str();
  const o = f & 12;
  const storedOriginal = o === ORIGINAL_STORED ? r.str() : "";
  const d = f & 3;
  const displayText = d === DISPLAY_STORED ? r.str() : d === DISPLAY_SAME ? link : undefined;
  const original = o === ORIGINAL_WIKI ? `${prefix}[[${link}]]` : o === ORIGINAL_WIKI_ALIAS ? `${prefix}[[${link}|${displayText ?? ""}]]` : storedOriginal;
  return { link, original, displayText, has: d !== DISPLAY_NONE };
}

export function unpack(p: PackedMetadata): NoteMetadata {
  const s = typeof p === "string" ? p : p[0];
  const r = new Reader(s);
  const flags = r.u();
  let fm: Record<string, unknown> | undefined;
  if (flags & FRONTMATTER_OBJECT) fm = (p as readonly [string, Record<string, unknown>])[1];
  else if (flags & HAS_FRONTMATTER) {
    const json = r.str();
    fm = json === "" ? undefined : (JSON.parse(json) as Record<string, unknown>);
  }
  const fmPos = flags & HAS_FRONTMATTER_POSITION ? r.pos() : undefined;
  const fmErr = flags & HAS_FRONTMATTER_ERROR ? r.str() : undefined;
  const headings: HeadingRef[] = [];
  for (let n = r.u(); n > 0; n--) {
    const heading = r.str();
    const level = r.u();
    headings.push({ heading, level, position: r.pos() });
  }
  const linkList = (prefix: string): LinkRef[] => {
    const out: LinkRef[] = [];
    for (let n = r.u(); n > 0; n--) {
      const { link, original, displayText, has } = readLink(r, prefix);
      // Keys in the parser's order.
      out.push(has ? { link, original, displayText, position: r.pos() } : { link, original, position: r.pos() });
    }
    return out;
  };
  const links = linkList("");
  const embeds = linkList("!");
  const frontmatterLinks: FrontmatterLinkRef[] = [];
  for (let n = r.u(); n > 0; n--) {
    const key = r.str();
    const { link, original, displayText, has } = readLink(r, "");
    frontmatterLinks.push(has ? { key, link, original, displayText } : { key, link, original });
  }
  const tags: TagRef[] = [];
  for (let n = r.u(); n > 0; n--) {
    const tag = r.str();
    tags.push({ tag, position: r.pos() });
  }
  const blocks = dict<BlockRef>();
  for (let n = r.u(); n > 0; n--) {
    const k = r.str();
    const id = r.u() & BLOCK_ID_IS_KEY ? k : r.str();
    blocks[k] = { id, position: r.pos() };
  }
  const m: NoteMetadata = { headings, links, embeds, frontmatterLinks, tags, blocks };
  if (fmPos) m.frontmatterPosition = fmPos;
  if (flags & HAS_FRONTMATTER) m.frontmatter = fm;
  if (flags & HAS_FRONTMATTER_ERROR) m.frontmatterError = fmErr;
  return m;
}

/** A reader of a packed note placed at its links (its frontmatter and headings skipped over). */
function readerAtLinks(p: PackedMetadata): Reader {
  const r = new Reader(typeof p === "string" ? p : p[0]);
  const flags = r.u();
  if (flags & HAS_FRONTMATTER && !(flags & FRONTMATTER_OBJECT)) r.skipStr();
  if (flags & HAS_FRONTMATTER_POSITION) r.skipPos();
  if (flags & HAS_FRONTMATTER_ERROR) r.skipStr();
  for (let n = r.u(); n > 0; n--) {
    r.skipStr();
    r.u();
    r.skipPos();
  }
  return r;
}

/**
 * The link texts of a packed note (links, embeds, frontmatter links, in that order), read without
 * making its metadata: the rest is skipped over (relinking reads every note's links at opening).
 */
export function packedLinks(p: PackedMetadata): string[] {
  const r = readerAtLinks(p);
  const out: string[] = [];
  const link = (): void => {
    const f = r.u();
    out.push(r.str());
    if ((f & 12) === ORIGINAL_STORED) r.skipStr();
    if ((f & 3) === DISPLAY_STORED) r.skipStr();
  };
  for (let list = 0; list < 2; list++) {
    for (let n = r.u(); n > 0; n--) {
      link();
      r.skipPos();
    }
  }
  for (let n = r.u(); n > 0; n--) {
    r.skipStr();
    link();
  }
  return out;
}

/** Reused by `packedLinkTexts` (its body links and their lines; copied out before it returns). */
const scratchBody: string[] = [];
const scratchLines: number[] = [];

/**
 * A packed note's link texts in the link graph's order (`linkTextsOf`'s: frontmatter links, then
 * links and embeds by line), read without making its metadata: the link graph's build reads every
 * note's, and unpacking each into a `NoteMetadata` made ~100 short-lived objects a note.
 */
export function packedLinkTexts(p: PackedMetadata): string[] {
  const r = readerAtLinks(p);
  const body = scratchBody;
  const lines = scratchLines;
  body.length = 0;
  lines.length = 0;
  const link = (): string => {
    const f = r.u();
    const text = r.str();
    if ((f & 12) === ORIGINAL_STORED) r.skipStr();
    if ((f & 3) === DISPLAY_STORED) r.skipStr();
    return text;
  };
  let nLinks = 0;
  for (let list = 0; list < 2; list++) {
    const n = r.u();
    if (list === 0) nLinks = n;
    for (let k = 0; k < n; k++) {
      body.push(link());
      r.skipPos();
      lines.push(r.prevLine);
    }
  }
  const out: string[] = [];
  for (let n = r.u(); n > 0; n--) {
    r.skipStr();
    out.push(link());
  }
  appendBodyLinksByLine(out, body, lines, nLinks);
  body.length = 0;
  lines.length = 0;
  return out;
}
