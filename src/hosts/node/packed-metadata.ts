/**
 * The headless vault's per-note metadata, each note's kept as one flat array instead of its object
 * tree. A note's `NoteMetadata` is ~60 objects (every link, heading and tag has a position of three
 * objects): at 10k notes that was 620k long-lived objects, 40% of the server's heap, which every
 * full garbage collection marks again (the longest pauses, up to 60 ms, while indexing). Packed, it
 * is one array per note (its strings and frontmatter are kept as they are).
 *
 * `unpack` makes a plain `NoteMetadata` again, as the parser made it (same keys in the same order),
 * on every call: ~3 µs a note, short-lived objects. Its frontmatter is the stored object itself, so
 * callers must not mutate what they get (as before).
 */
import { dict } from "../../core/dict";
import type { BlockRef, FrontmatterLinkRef, HeadingRef, LinkRef, NoteMetadata, Pos, TagRef } from "../../core/metadata";

export type PackedMetadata = readonly unknown[];

const HAS_FRONTMATTER = 1;
const HAS_FRONTMATTER_POSITION = 2;
const HAS_FRONTMATTER_ERROR = 4;
/** A link's display text, when it is its link text (the common `[[Note]]`): not stored twice. */
const SAME_AS_LINK = 1;
/** A link without a display text key. */
const NO_DISPLAY_TEXT = 0;

function pushPos(a: unknown[], p: Pos): void {
  a.push(p.start.line, p.start.col, p.start.offset, p.end.line, p.end.col, p.end.offset);
}

function pushDisplay(a: unknown[], l: { link: string; displayText?: string }): void {
  a.push(!("displayText" in l) ? NO_DISPLAY_TEXT : l.displayText === l.link ? SAME_AS_LINK : l.displayText);
}

export function pack(m: NoteMetadata): PackedMetadata {
  const flags = ("frontmatter" in m ? HAS_FRONTMATTER : 0) | (m.frontmatterPosition ? HAS_FRONTMATTER_POSITION : 0) | ("frontmatterError" in m ? HAS_FRONTMATTER_ERROR : 0);
  const a: unknown[] = [flags];
  if (flags & HAS_FRONTMATTER) a.push(m.frontmatter);
  if (m.frontmatterPosition) pushPos(a, m.frontmatterPosition);
  if (flags & HAS_FRONTMATTER_ERROR) a.push(m.frontmatterError);
  a.push(m.headings.length);
  for (const h of m.headings) {
    a.push(h.heading, h.level);
    pushPos(a, h.position);
  }
  for (const list of [m.links, m.embeds]) {
    a.push(list.length);
    for (const l of list) {
      a.push(l.link, l.original);
      pushDisplay(a, l);
      pushPos(a, l.position);
    }
  }
  a.push(m.frontmatterLinks.length);
  for (const l of m.frontmatterLinks) {
    a.push(l.key, l.link, l.original);
    pushDisplay(a, l);
  }
  a.push(m.tags.length);
  for (const t of m.tags) {
    a.push(t.tag);
    pushPos(a, t.position);
  }
  const blocks = Object.entries(m.blocks);
  a.push(blocks.length);
  for (const [k, b] of blocks) {
    a.push(k, b.id);
    pushPos(a, b.position);
  }
  return a;
}

type Refs = Pick<NoteMetadata, "headings" | "links" | "embeds" | "frontmatterLinks" | "tags" | "blocks">;

/** Reads a packed array from a position. */
class Reader {
  constructor(
    private readonly a: PackedMetadata,
    public i: number,
  ) {}
  next(): unknown {
    return this.a[this.i++];
  }
  str(): string {
    return this.a[this.i++] as string;
  }
  num(): number {
    return this.a[this.i++] as number;
  }
  pos(): Pos {
    const a = this.a;
    const i = this.i;
    this.i += 6;
    return {
      start: { line: a[i] as number, col: a[i + 1] as number, offset: a[i + 2] as number },
      end: { line: a[i + 3] as number, col: a[i + 4] as number, offset: a[i + 5] as number },
    };
  }
  /** A link's display text (`undefined`: the link has none). */
  display(link: string): string | undefined {
    const d = this.next();
    return d === SAME_AS_LINK ? link : d === NO_DISPLAY_TEXT ? undefined : (d as string);
  }
}

function unpackRefs(a: PackedMetadata, from: number): Refs {
  const r = new Reader(a, from);
  const headings: HeadingRef[] = [];
  for (let n = r.num(); n > 0; n--) headings.push({ heading: r.str(), level: r.num(), position: r.pos() });
  const linkList = (): LinkRef[] => {
    const out: LinkRef[] = [];
    for (let n = r.num(); n > 0; n--) {
      const link = r.str();
      const original = r.str();
      const displayText = r.display(link);
      // Keys in the parser's order.
      out.push(displayText === undefined ? { link, original, position: r.pos() } : { link, original, displayText, position: r.pos() });
    }
    return out;
  };
  const links = linkList();
  const embeds = linkList();
  const frontmatterLinks: FrontmatterLinkRef[] = [];
  for (let n = r.num(); n > 0; n--) {
    const key = r.str();
    const link = r.str();
    const original = r.str();
    const displayText = r.display(link);
    frontmatterLinks.push(displayText === undefined ? { key, link, original } : { key, link, original, displayText });
  }
  const tags: TagRef[] = [];
  for (let n = r.num(); n > 0; n--) tags.push({ tag: r.str(), position: r.pos() });
  const blocks = dict<BlockRef>();
  for (let n = r.num(); n > 0; n--) {
    const k = r.str();
    blocks[k] = { id: r.str(), position: r.pos() };
  }
  return { headings, links, embeds, frontmatterLinks, tags, blocks };
}

export function unpack(a: PackedMetadata): NoteMetadata {
  const r = new Reader(a, 0);
  const flags = r.num();
  const fm = flags & HAS_FRONTMATTER ? r.next() : undefined;
  const fmPos = flags & HAS_FRONTMATTER_POSITION ? r.pos() : undefined;
  const fmErr = flags & HAS_FRONTMATTER_ERROR ? r.str() : undefined;
  const m: NoteMetadata = unpackRefs(a, r.i);
  if (fmPos) m.frontmatterPosition = fmPos;
  if (flags & HAS_FRONTMATTER) m.frontmatter = fm as Record<string, unknown> | undefined;
  if (flags & HAS_FRONTMATTER_ERROR) m.frontmatterError = fmErr;
  return m;
}
