/**
 * The headless host's metadata cache: each note's parsed metadata (packed), the link resolver over
 * every file, the resolved and unresolved link maps, and an index of link targets' last segments that
 * says which notes a file's arrival or departure affects. Does no I/O: the vault hands it texts and paths.
 */
import { LinkResolver, computeLinkMaps } from "../../core/links/resolver";
import { splitLinkpath, type NoteMetadata } from "../../core/metadata";
import { dict } from "../../core/dict";
import { parseNote } from "../../core/parser";
import type { LogLevel } from "../common/runtime";
import { pack, unpack, type PackedMetadata } from "./packed-metadata";

type LinkMap = Record<string, Record<string, number>>;

export class NoteLinks {
  /** Each note's metadata, packed (see `packed-metadata`). */
  private readonly meta = new Map<string, PackedMetadata>();
  private resolver = new LinkResolver();
  /** The live maps, like Obsidian's `metadataCache.resolvedLinks` and `unresolvedLinks`. */
  readonly resolved: LinkMap = dict();
  readonly unresolved: LinkMap = dict();
  /** Last-segment key of a link target → notes with such a link (to know whom a new/removed file affects). */
  private readonly linkKeyIndex = new Map<string, Set<string>>();
  private readonly keysOfSource = new Map<string, string[]>();

  constructor(private readonly log: (level: LogLevel, message: string) => void) {}

  get(path: string): NoteMetadata | null {
    const m = this.meta.get(path);
    return m ? unpack(m) : null;
  }

  isNote(path: string): boolean {
    return this.meta.has(path);
  }

  notes(): IterableIterator<string> {
    return this.meta.keys();
  }

  resolve(linkpath: string, sourcePath: string): string | null {
    return this.resolver.resolve(linkpath, sourcePath);
  }

  /** Every file the resolver knows. */
  filePaths(): Iterable<string> {
    return this.resolver.paths();
  }

  /** Parses `text` as the note at `path` and keeps its metadata (the link maps follow with `relink`). */
  setMeta(path: string, text: string): void {
    let m: NoteMetadata;
    try {
      m = parseNote(text);
    } catch (e) {
      this.log("warn", `Could not parse "${path}": ${(e as Error).message}`);
      m = { headings: [], links: [], embeds: [], frontmatterLinks: [], tags: [], blocks: dict() };
    }
    this.unindexSource(path);
    this.meta.set(path, pack(m));
    this.indexSource(path, m);
  }

  /** After opening: the resolver over every listed file, and every note's links resolved. */
  resolveAll(files: Iterable<string>): void {
    this.resolver = new LinkResolver(files);
    this.relink(this.meta.keys());
  }

  addFile(path: string): void {
    this.resolver.add(path);
  }

  /** Forgets a file (and its note's metadata and links); re-resolves the notes its departure affects. */
  removeFile(path: string): void {
    this.resolver.remove(path);
    this.unindexSource(path);
    this.meta.delete(path);
    delete this.resolved[path];
    delete this.unresolved[path];
    this.relink(this.affectedByFile(path));
  }

  /** A file moved from `o` to `n`; adds the notes to re-resolve to `affected` (the caller relinks them all at once). */
  moveFile(o: string, n: string, affected: Set<string>): void {
    this.resolver.remove(o);
    this.resolver.add(n);
    const m = this.meta.get(o);
    if (m) {
      this.unindexSource(o);
      this.meta.delete(o);
      delete this.resolved[o];
      delete this.unresolved[o];
      this.meta.set(n, m);
      this.indexSource(n, unpack(m));
      affected.add(n);
    }
    for (const s of this.affectedByFile(o)) affected.add(s);
    for (const s of this.affectedByFile(n)) affected.add(s);
  }

  /** Notes whose links may resolve differently now that `file` appeared or disappeared. */
  affectedByFile(file: string, extra: Iterable<string> = []): Set<string> {
    const out = new Set<string>(extra);
    for (const k of fileKeys(file)) for (const s of this.linkKeyIndex.get(k) ?? []) out.add(s);
    return out;
  }

  /** Recomputes the link maps of the given sources (those that are no longer notes are dropped). */
  relink(sources: Iterable<string>): void {
    const notes: [string, PackedMetadata][] = [];
    for (const s of sources) {
      delete this.resolved[s];
      delete this.unresolved[s];
      const m = this.meta.get(s);
      if (m) notes.push([s, m]);
    }
    if (notes.length === 0) return;
    // Unpacked one note at a time: all of them at once (opening the vault) would be ~600k objects at
    // 10k notes, alive long enough to be promoted and then left for a full collection to clear.
    const unpacked = function* (): Generator<[string, NoteMetadata]> {
      for (const [s, m] of notes) yield [s, unpack(m)];
    };
    const maps = computeLinkMaps(unpacked(), this.resolver);
    for (const [s] of notes) {
      this.resolved[s] = maps.resolved[s] ?? dict();
      this.unresolved[s] = maps.unresolved[s] ?? dict();
    }
  }

  private unindexSource(path: string): void {
    for (const k of this.keysOfSource.get(path) ?? []) {
      const s = this.linkKeyIndex.get(k);
      s?.delete(path);
      if (s?.size === 0) this.linkKeyIndex.delete(k);
    }
    this.keysOfSource.delete(path);
  }

  private indexSource(path: string, m: NoteMetadata): void {
    this.unindexSource(path);
    const keys = new Set<string>();
    for (const l of [...m.links, ...m.embeds, ...m.frontmatterLinks]) for (const k of linkKeys(l.link)) keys.add(k);
    const arr = [...keys];
    this.keysOfSource.set(path, arr);
    for (const k of arr) {
      let s = this.linkKeyIndex.get(k);
      if (!s) this.linkKeyIndex.set(k, (s = new Set()));
      s.add(path);
    }
  }
}

function stripExt(name: string): string {
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(0, dot) : name;
}

/** Index keys of a link target: its last segment, with and without extension, lower-cased. */
function linkKeys(link: string): string[] {
  const path = splitLinkpath(link).path.trim();
  if (!path) return [];
  const seg = path.slice(path.lastIndexOf("/") + 1).normalize("NFC").toLowerCase();
  const a = stripExt(seg);
  return a === seg ? [seg] : [seg, a];
}

function fileKeys(vp: string): string[] {
  const name = vp.slice(vp.lastIndexOf("/") + 1).toLowerCase();
  const a = stripExt(name);
  return a === name ? [name] : [name, a];
}
