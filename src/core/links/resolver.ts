/**
 * Link resolution with Obsidian's `metadataCache.getFirstLinkpathDest` semantics, headless.
 *
 * `resolve(linkpath, sourcePath)` (linkpath without `#fragment`):
 * 1. empty linkpath → the source note itself;
 * 2. the exact vault path as written, then with `.md` appended;
 * 3. `./` and `../` paths relative to the source's folder (as written, then with `.md`);
 * 4. by name: files whose name (notes: with or without `.md`; attachments: with their extension)
 *    matches the last segment case-insensitively and whose path ends with the whole linkpath
 *    (`folder/note` matches `…/folder/note.md`). Ties: exact path → same folder as the source →
 *    shortest path → alphabetical.
 * Attachments need their extension: `[[image]]` does not find `image.png`.
 */
import type { NoteMetadata } from "../metadata";
import { splitLinkpath } from "../metadata";
import { dict } from "../dict";
import { fnv1a30 as nameHash } from "../hash";
import { addOne, removeOne, type OneOrMany } from "../one-or-many";

export class LinkResolver {
  /**
   * Every known file and its number: given in order of arrival and never given again, so that a
   * number a caller kept for a file that left names no other file (`pathAt` gives undefined).
   */
  private readonly files = new Map<string, number>();
  private readonly byId: (string | undefined)[] = [];
  /**
   * Files by name: a hash of the lower-cased name without `.md` → the path, or paths (most names
   * have one: no array). Numbers, not the names themselves: at 100k notes the two lower-cased key
   * strings a note took were ~8 MB. A bucket may hold other names (a collision, or `a.md` beside
   * `a.md.md`): `named` keeps only the files a name can refer to.
   */
  private readonly byName = new Map<number, OneOrMany<string>>();

  constructor(paths?: Iterable<string>) {
    if (paths) for (const p of paths) this.add(p);
  }

  /** Makes `path` known (if it was not); returns its number. */
  add(path: string): number {
    const had = this.files.get(path);
    if (had !== undefined) return had;
    const id = this.byId.length;
    this.files.set(path, id);
    this.byId.push(path);
    const key = nameHash(stripMd(lowerName(path)));
    addOne(this.byName, key, path, false);
    return id;
  }

  remove(path: string): void {
    const id = this.files.get(path);
    if (id === undefined) return;
    this.files.delete(path);
    this.byId[id] = undefined;
    removeOne(this.byName, nameHash(stripMd(lowerName(path))), path);
  }

  /** A known file's number (see `files`). */
  idOf(path: string): number | undefined {
    return this.files.get(path);
  }

  /** The known file numbered `id`, or undefined once it left. */
  pathAt(id: number): string | undefined {
    return this.byId[id];
  }

  /** Files a lower-cased name (`note`, `note.md`, `image.png`) can refer to: by their name, or notes by their basename. */
  private named(name: string): string[] {
    const out: string[] = [];
    const take = (e: string | string[] | undefined): void => {
      if (e === undefined) return;
      if (typeof e === "string") {
        if (nameMatches(e, name)) out.push(e);
      } else for (const p of e) if (nameMatches(p, name)) out.push(p);
    };
    const bare = stripMd(name);
    take(this.byName.get(nameHash(bare)));
    if (bare !== name) take(this.byName.get(nameHash(name)));
    return out;
  }

  has(path: string): boolean {
    return this.files.has(path);
  }

  get size(): number {
    return this.files.size;
  }

  /** Every known path (insertion order). */
  paths(): IterableIterator<string> {
    return this.files.keys();
  }

  /** Paths of the files a bare name (`Note`, `Note.md`, `image.png`) can refer to. */
  filesNamed(name: string): readonly string[] {
    return this.named(name.toLowerCase());
  }

  resolve(linkpath: string, sourcePath: string): string | null {
    let lp = linkpath.trim();
    if (lp === "") return this.files.has(sourcePath) ? sourcePath : null;
    // Vault paths are NFC; a link typed on macOS may arrive decomposed.
    if (NON_ASCII.test(lp)) lp = lp.normalize("NFC");
    if (lp.indexOf("\\") >= 0) lp = lp.replace(/\\/g, "/");
    if (lp.startsWith("./") || lp.startsWith("../")) {
      const rel = joinRelative(folderOf(sourcePath), lp);
      if (rel !== null) {
        const hit = this.exact(rel);
        if (hit) return hit;
      }
      return null;
    }
    while (lp.startsWith("/")) lp = lp.slice(1);
    if (lp === "") return null;
    const slash = lp.lastIndexOf("/");
    if (slash >= 0) {
      const hit = this.exact(lp);
      if (hit) return hit;
    }
    const name = (slash < 0 ? lp : lp.slice(slash + 1)).toLowerCase();
    const candidates = this.named(name);
    if (candidates.length === 0) return null;
    if (slash < 0) {
      // The exact path at the root (`lp`, then `lp.md`) is among the name's candidates: found there,
      // without making `lp + ".md"` and hashing it for every link.
      for (const c of candidates) if (c === lp) return c;
      for (const c of candidates) if (c.length === lp.length + 3 && c.endsWith(".md") && c.startsWith(lp)) return c;
      if (candidates.length === 1) return candidates[0];
    }
    const lower = lp.toLowerCase();
    let best: string | null = null;
    const srcFolder = folderOf(sourcePath);
    for (const c of candidates) {
      if (slash >= 0 && !pathEndsWith(c.toLowerCase(), lower)) continue;
      if (best === null || better(c, best, lower, srcFolder)) best = c;
    }
    return best;
  }

  private exact(p: string): string | null {
    if (this.files.has(p)) return p;
    const md = p + ".md";
    if (this.files.has(md)) return md;
    return null;
  }
}

const NON_ASCII = /[^ -~]/;

function lowerName(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1).toLowerCase();
}

function stripMd(name: string): string {
  return name.length > 3 && name.endsWith(".md") ? name.slice(0, -3) : name;
}

/** Does `name` (lower-cased) name the file at `path`: its whole name, or a note's without `.md`? */
function nameMatches(path: string, name: string): boolean {
  const start = path.lastIndexOf("/") + 1;
  // An ASCII name compared in place (no lower-cased copy per candidate); any other the slow way
  // (lower-casing may change its length).
  for (let i = start; i < path.length; i++) if (path.charCodeAt(i) >= 128) return nameMatchesSlow(path, name);
  const len = path.length - start;
  if (len !== name.length && len !== name.length + 3) return false;
  for (let i = 0; i < name.length; i++) {
    let c = path.charCodeAt(start + i);
    if (c >= 65 && c <= 90) c += 32;
    if (c !== name.charCodeAt(i)) return false;
  }
  if (len === name.length) return true;
  const e = path.charCodeAt(path.length - 3);
  const m = path.charCodeAt(path.length - 2) | 32;
  const d = path.charCodeAt(path.length - 1) | 32;
  return e === 46 && m === 109 && d === 100 && len > 3;
}

function nameMatchesSlow(path: string, name: string): boolean {
  const n = lowerName(path);
  return n === name || (n.length === name.length + 3 && stripMd(n) === name);
}

/** Does the lower-cased `candidate` path match the partial link path `lp` (with or without `.md`)? */
function pathEndsWith(candidate: string, lp: string): boolean {
  const noMd = candidate.endsWith(".md") ? candidate.slice(0, -3) : null;
  for (const c of noMd === null ? [candidate] : [candidate, noMd]) {
    if (c === lp) return true;
    if (c.length > lp.length && c.endsWith(lp) && c.charCodeAt(c.length - lp.length - 1) === 47) return true;
  }
  return false;
}

function better(a: string, b: string, lower: string, srcFolder: string): boolean {
  const aExact = isExactIgnoringCase(a, lower);
  const bExact = isExactIgnoringCase(b, lower);
  if (aExact !== bExact) return aExact;
  const aSame = folderOf(a) === srcFolder;
  const bSame = folderOf(b) === srcFolder;
  if (aSame !== bSame) return aSame;
  if (a.length !== b.length) return a.length < b.length;
  return a < b;
}

function isExactIgnoringCase(path: string, lower: string): boolean {
  const p = path.toLowerCase();
  return p === lower || p === lower + ".md";
}

export function folderOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}

/** Joins a `./` / `../` path onto a folder; null when it climbs above the vault root. */
export function joinRelative(folder: string, rel: string): string | null {
  const out = folder === "" ? [] : folder.split("/");
  for (const seg of rel.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (out.length === 0) return null;
      out.pop();
    } else out.push(seg);
  }
  return out.join("/");
}

/** Records without a prototype (see `dict`): a note or link target may be named `constructor` or `__proto__`. */
export interface LinkMaps {
  /** source → resolved target path → count (every note has an entry, possibly empty). */
  resolved: Record<string, Record<string, number>>;
  /** source → link path as written (no fragment) → count. */
  unresolved: Record<string, Record<string, number>>;
}

/** Obsidian's `resolvedLinks` / `unresolvedLinks` over links, embeds and frontmatter links. */
export function computeLinkMaps(notes: Iterable<[string, NoteMetadata]>, resolver: LinkResolver): LinkMaps {
  const resolved = dict<Record<string, number>>();
  const unresolved = dict<Record<string, number>>();
  for (const [path, meta] of notes) {
    const r = dict<number>();
    const u = dict<number>();
    const count = (link: string): void => {
      const lp = splitLinkpath(link).path;
      const dest = resolver.resolve(lp, path);
      if (dest !== null) r[dest] = (r[dest] ?? 0) + 1;
      else u[lp] = (u[lp] ?? 0) + 1;
    };
    for (const l of meta.links) count(l.link);
    for (const l of meta.embeds) count(l.link);
    for (const l of meta.frontmatterLinks) count(l.link);
    resolved[path] = r;
    unresolved[path] = u;
  }
  return { resolved, unresolved };
}
