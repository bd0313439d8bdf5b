/**
 * Link rewriting for renames and moves, headless (inside Obsidian `fileManager.renameFile` does this).
 *
 * Contract: every link, embed and frontmatter link of a note that resolved (before the rename) to a
 * renamed file is rewritten to point at the file's new path, keeping its form:
 * - written as a bare name (`[[Note]]`) → the shortest unambiguous form after the rename;
 * - written as a vault path (`[[Folder/Note]]`) → the new vault path;
 * - written relative (`./x.md`, `../x.md`) → relative to the note's (possibly new) location;
 * - `.md` kept or omitted as written; alias, `#heading` / `#^block` fragment and embed `!` kept;
 *   markdown destinations keep angle brackets, or are URL-encoded (minimal encoding unless the
 *   original used `%` escapes, then `encodeURI`-style).
 * When the note itself moves, its relative links are recomputed so they still reach their targets.
 * Nothing else in the text changes: only the spans of rewritten links are replaced.
 */
import type { NoteMetadata } from "../metadata";
import { parseMarkdownLinkAt, parseWikilinkAt, safeDecode, unescapeMarkdown } from "../parser/inline";
import { folderOf, LinkResolver } from "./resolver";

export interface RewriteResult {
  text: string;
  /** Number of links rewritten. */
  count: number;
}

/**
 * @param renames old path → new path for every file that moves (a folder rename lists all its files).
 * @param resolveOld resolves a link path (no fragment) as the vault was before the rename.
 * @param resolveNewShortest the shortest link path (no `.md` for notes) for a target after the rename.
 */
export function rewriteLinks(
  text: string,
  meta: NoteMetadata,
  sourcePath: string,
  newSourcePath: string,
  renames: ReadonlyMap<string, string>,
  resolveOld: (linkpath: string, source: string) => string | null,
  resolveNewShortest: (targetNewPath: string, newSourcePath: string) => string,
): RewriteResult {
  const ctx: Ctx = { sourcePath, newSourcePath, renames, resolveOld, resolveNewShortest };
  const edits: Edit[] = [];
  for (const ref of [...meta.links, ...meta.embeds]) {
    const start = ref.position.start.offset;
    const end = ref.position.end.offset;
    if (text.slice(start, end) !== ref.original) continue; // stale metadata: never guess
    const repl = rewriteOriginal(ref.original, ctx);
    if (repl !== null && repl !== ref.original) edits.push({ start, end, repl });
  }
  if (meta.frontmatterPosition && meta.frontmatterLinks.length > 0) {
    const fmEnd = meta.frontmatterPosition.end.offset;
    let i = text.indexOf("[[", 0);
    while (i >= 0 && i < fmEnd) {
      const lineEnd = nextLineEnd(text, i, fmEnd);
      const w = parseWikilinkAt(text, i, lineEnd);
      if (!w) {
        i = text.indexOf("[[", i + 2);
        continue;
      }
      const original = text.slice(i, w.end);
      const repl = rewriteOriginal(original, ctx);
      if (repl !== null && repl !== original) edits.push({ start: i, end: w.end, repl });
      i = text.indexOf("[[", w.end);
    }
  }
  if (edits.length === 0) return { text, count: 0 };
  edits.sort((a, b) => a.start - b.start);
  let out = "";
  let pos = 0;
  let count = 0;
  for (const e of edits) {
    if (e.start < pos) continue; // overlapping (should not happen)
    out += text.slice(pos, e.start) + e.repl;
    pos = e.end;
    count++;
  }
  out += text.slice(pos);
  return { text: out, count };
}

/**
 * Obsidian's default "shortest path when possible": the bare name when no other file has it, else the
 * full vault path. `.md` is dropped for notes; attachments keep their extension.
 */
export function shortestLinkpath(targetPath: string, sourcePath: string, resolver: LinkResolver): string {
  void sourcePath;
  const isNote = targetPath.toLowerCase().endsWith(".md");
  const name = targetPath.slice(targetPath.lastIndexOf("/") + 1);
  const bare = isNote ? name.slice(0, -3) : name;
  const same = resolver.filesNamed(bare);
  if (same.length === 1 && same[0] === targetPath) return bare;
  if (same.length === 0 && !resolver.has(targetPath)) return bare; // unknown target: name it plainly
  return isNote ? targetPath.slice(0, -3) : targetPath;
}

/**
 * Convenience for a rename: the resolver after the rename plus the two callbacks `rewriteLinks` needs.
 * `before` is left untouched.
 */
export function renameContext(
  before: LinkResolver,
  renames: ReadonlyMap<string, string>,
  /** The resolver after the move, when the caller built it already (in slices). */
  prebuilt?: LinkResolver,
): {
  after: LinkResolver;
  resolveOld: (linkpath: string, source: string) => string | null;
  resolveNewShortest: (targetNewPath: string, newSourcePath: string) => string;
} {
  const after = prebuilt ?? new LinkResolver();
  if (!prebuilt) for (const p of before.paths()) after.add(renames.get(p) ?? p);
  return {
    after,
    resolveOld: (lp, src) => before.resolve(lp, src),
    resolveNewShortest: (target, src) => shortestLinkpath(target, src, after),
  };
}

/** Relative path from a folder to a file: `../Other/x.md`. */
export function relativePath(fromFolder: string, to: string): string {
  const a = fromFolder === "" ? [] : fromFolder.split("/");
  const b = to.split("/");
  let i = 0;
  while (i < a.length && i < b.length - 1 && a[i] === b[i]) i++;
  const up = a.length - i;
  return "../".repeat(up) + b.slice(i).join("/");
}

interface Edit {
  start: number;
  end: number;
  repl: string;
}

interface Ctx {
  sourcePath: string;
  newSourcePath: string;
  renames: ReadonlyMap<string, string>;
  resolveOld: (linkpath: string, source: string) => string | null;
  resolveNewShortest: (targetNewPath: string, newSourcePath: string) => string;
}

function nextLineEnd(text: string, i: number, limit: number): number {
  const nl = text.indexOf("\n", i);
  return nl < 0 || nl > limit ? limit : nl;
}

/** The rewritten source text of one link, or null when it stays as it is. */
function rewriteOriginal(original: string, ctx: Ctx): string | null {
  if (original.startsWith("[[") || original.startsWith("![[")) {
    const open = original.startsWith("!") ? 3 : 2;
    const inner = original.slice(open, original.length - 2);
    const bar = inner.indexOf("|");
    let target = bar < 0 ? inner : inner.slice(0, bar);
    const tableEscape = bar >= 0 && target.endsWith("\\");
    if (tableEscape) target = target.slice(0, -1);
    const hash = target.indexOf("#");
    const pathRaw = hash < 0 ? target : target.slice(0, hash);
    const fragment = hash < 0 ? "" : target.slice(hash);
    const next = newLinkpath(pathRaw.trim(), ctx);
    if (next === null) return null;
    return original.slice(0, open) + next + fragment + (tableEscape ? "\\" : "") + (bar < 0 ? "" : inner.slice(bar)) + "]]";
  }
  const at = original.startsWith("!") ? 1 : 0;
  const m = parseMarkdownLinkAt(original, at, original.length);
  if (!m) return null;
  const dest = original.slice(m.destStart, m.destEnd);
  const hash = dest.indexOf("#");
  const pathRaw = hash < 0 ? dest : dest.slice(0, hash);
  const fragment = hash < 0 ? "" : dest.slice(hash);
  const next = newLinkpath(safeDecode(unescapeMarkdown(pathRaw)), ctx);
  if (next === null) return null;
  const written = m.angle ? next.replace(/[<>]/g, (c) => (c === "<" ? "%3C" : "%3E")) : encodeDest(next, pathRaw.includes("%"));
  return original.slice(0, m.destStart) + written + fragment + original.slice(m.destEnd);
}

/** The new link path for a link path as written, or null when the link does not need to change. */
function newLinkpath(lp: string, ctx: Ctx): string | null {
  if (lp === "") return null; // `[[#Heading]]`: the note itself, whatever its name
  const oldTarget = ctx.resolveOld(lp, ctx.sourcePath);
  if (oldTarget === null) return null;
  const newTarget = ctx.renames.get(oldTarget) ?? oldTarget;
  const renamed = newTarget !== oldTarget;
  const moved = ctx.sourcePath !== ctx.newSourcePath;
  const form = lp.startsWith("./") || lp.startsWith("../") ? "relative" : lp.includes("/") ? "path" : "name";
  if (!renamed && !(moved && form === "relative")) return null;
  const keepMd = /\.md$/i.test(lp);
  const targetIsNote = newTarget.toLowerCase().endsWith(".md");
  const strip = (p: string): string => (targetIsNote && !keepMd && p.toLowerCase().endsWith(".md") ? p.slice(0, -3) : p);
  if (form === "relative") {
    const rel = relativePath(folderOf(ctx.newSourcePath), newTarget);
    return strip(rel.startsWith("../") ? rel : "./" + rel);
  }
  if (form === "path") return strip(newTarget);
  const short = ctx.resolveNewShortest(newTarget, ctx.newSourcePath);
  return keepMd && targetIsNote && !short.toLowerCase().endsWith(".md") ? short + ".md" : short;
}

/** URL-encodes a markdown destination: `encodeURI` style when the original used `%` escapes, else only what must be. */
function encodeDest(p: string, full: boolean): string {
  if (full) return encodeURI(p).replace(/[#?]/g, (c) => (c === "#" ? "%23" : "%3F"));
  return p.replace(/[ %#?<>\t]/g, (c) => "%" + c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0"));
}
