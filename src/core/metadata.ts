/**
 * Per-note metadata, shaped like the subset of Obsidian's `CachedMetadata` that we use.
 * Inside Obsidian these come from `metadataCache.getFileCache`; headless they come from our own
 * parser (`core/parser`). Both must agree — the contract tests hold them to it.
 */

export interface Loc {
  /** 0-based line number. */
  line: number;
  /** 0-based column (UTF-16 code units). */
  col: number;
  /** 0-based offset into the file text (UTF-16 code units). */
  offset: number;
}

export interface Pos {
  start: Loc;
  end: Loc;
}

/** A link or an embed in the note body, like Obsidian's `LinkCache`/`EmbedCache`. */
export interface LinkRef {
  /** The link target as written, decoded: `Folder/Note#Heading` (no `|alias`, markdown links URL-decoded). */
  link: string;
  /** The exact source text, e.g. `[[Note|alias]]` or `![](img.png)`. */
  original: string;
  /** The alias / link text when there is one. */
  displayText?: string;
  position: Pos;
}

/** A link found in a frontmatter property value (`related: "[[Other]]"`), like Obsidian's `FrontmatterLinkCache`. */
export interface FrontmatterLinkRef {
  /** The property key; for list items `key.index` as Obsidian does (`related.0`). */
  key: string;
  link: string;
  original: string;
  displayText?: string;
}

export interface HeadingRef {
  heading: string;
  /** 1..6 */
  level: number;
  position: Pos;
}

export interface TagRef {
  /** With the leading `#`, e.g. `#nested/tag`. */
  tag: string;
  position: Pos;
}

export interface BlockRef {
  /** The block id without `^`. */
  id: string;
  position: Pos;
}

export interface NoteMetadata {
  frontmatter?: Record<string, unknown>;
  /** Where the `---` … `---` block sits (both fences included). */
  frontmatterPosition?: Pos;
  /** Set when the frontmatter block exists but is not valid YAML (then `frontmatter` is undefined). */
  frontmatterError?: string;
  headings: HeadingRef[];
  /** Wikilinks and markdown links that are not embeds. */
  links: LinkRef[];
  /** `![[…]]` and `![](…)`. */
  embeds: LinkRef[];
  frontmatterLinks: FrontmatterLinkRef[];
  /** Inline `#tags` in the body (frontmatter tags are in `frontmatter.tags`). */
  tags: TagRef[];
  /** Block ids (`^id`), keyed by lower-cased id as Obsidian does. */
  blocks: Record<string, BlockRef>;
}

export type LinkType = "wikilink" | "markdown" | "embed" | "frontmatter";

/** Splits `Note#Heading` / `Note#^block` into path and fragment (fragment without `#`). */
export function splitLinkpath(link: string): { path: string; fragment: string | null } {
  const i = link.indexOf("#");
  if (i < 0) return { path: link, fragment: null };
  return { path: link.slice(0, i), fragment: link.slice(i + 1) };
}

/**
 * A note's link texts (`link`, with any `#fragment`) in the order the link graph lists a note's links:
 * frontmatter links first, then links and embeds by line (on one line, its links before its embeds).
 * `body` holds the links then the embeds (`nLinks` of them links), `lines` their lines; `out` starts
 * with the frontmatter links and gets the body appended. Shared by `linkTextsOf` and the ports'
 * `linkTexts`, so both give the same order.
 */
export function appendBodyLinksByLine(out: string[], body: readonly string[], lines: readonly number[], nLinks: number): string[] {
  const n = body.length;
  if (nLinks === 0 || nLinks === n) {
    for (let i = 0; i < n; i++) out.push(body[i]);
    return out;
  }
  // A stable sort by line, as the graph's links are sorted (links and embeds both present).
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((a, b) => lines[a] - lines[b]);
  for (let i = 0; i < n; i++) out.push(body[order[i]]);
  return out;
}

/**
 * A note's link texts in the link graph's order (see `appendBodyLinksByLine`): what the port's
 * optional `linkTexts` gives, made from the note's metadata.
 */
export function linkTextsOf(meta: NoteMetadata): string[] {
  const out: string[] = [];
  for (const fl of meta.frontmatterLinks ?? []) out.push(fl.link);
  const links = meta.links ?? [];
  const embeds = meta.embeds ?? [];
  if (embeds.length === 0 || links.length === 0) {
    for (const l of links) out.push(l.link);
    for (const e of embeds) out.push(e.link);
    return out;
  }
  const body: string[] = [];
  const lines: number[] = [];
  for (const l of links) {
    body.push(l.link);
    lines.push(l.position.start.line);
  }
  for (const e of embeds) {
    body.push(e.link);
    lines.push(e.position.start.line);
  }
  return appendBodyLinksByLine(out, body, lines, links.length);
}

/** `wikilink` or `markdown`, from a link's original text. */
export function linkSyntax(original: string): "wikilink" | "markdown" {
  return original.startsWith("[[") || original.startsWith("![[") ? "wikilink" : "markdown";
}

/**
 * Frontmatter `tags`/`tag`, normalised to `#tag` strings (Obsidian accepts a list or a comma/space
 * separated string). A YAML number counts as its text; a tag of digits only is not a tag (as inline:
 * "#1984 isn't a valid tag").
 */
export function frontmatterTags(fm: Record<string, unknown> | undefined): string[] {
  if (!fm) return [];
  const out: string[] = [];
  for (const key of ["tags", "tag"]) {
    const v = fm[key];
    const items = Array.isArray(v) ? v : typeof v === "string" ? v.split(/[,\s]+/) : typeof v === "number" ? [v] : [];
    for (const item of items) {
      if (typeof item !== "string" && typeof item !== "number") continue;
      const t = String(item).trim().replace(/^#/, "");
      if (t && !/^\d+$/.test(t)) out.push("#" + t);
    }
  }
  return out;
}

/** Frontmatter `aliases`/`alias`, as strings. */
export function frontmatterAliases(fm: Record<string, unknown> | undefined): string[] {
  if (!fm) return [];
  const out: string[] = [];
  for (const key of ["aliases", "alias"]) {
    const v = fm[key];
    const items = Array.isArray(v) ? v : typeof v === "string" ? v.split(/,/) : [];
    for (const item of items) {
      if (typeof item !== "string" && typeof item !== "number") continue;
      const a = String(item).trim();
      if (a) out.push(a);
    }
  }
  return out;
}

/** True when `JSON.parse(JSON.stringify(v))` gives back exactly `v` (plain objects and arrays, finite numbers other than -0). */
export function jsonExact(v: unknown): boolean {
  switch (typeof v) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(v) && !Object.is(v, -0);
    case "object": {
      if (v === null) return true;
      if (Array.isArray(v)) {
        for (let i = 0; i < v.length; i++) if (!(i in v) || !jsonExact(v[i])) return false;
        return Object.getPrototypeOf(v) === Array.prototype;
      }
      if (Object.getPrototypeOf(v) !== Object.prototype) return false;
      for (const k of Object.keys(v)) {
        const d = Object.getOwnPropertyDescriptor(v, k);
        if (!d || !("value" in d) || !jsonExact(d.value)) return false;
      }
      return Object.getOwnPropertySymbols(v).length === 0 && Object.keys(v).length === Object.getOwnPropertyNames(v).length;
    }
    default:
      return false;
  }
}
