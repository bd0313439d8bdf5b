/**
 * The headless host's metadata cache: each note's parsed metadata (packed), the link resolver over
 * every file, the resolved and unresolved link maps, and an index of link targets' last segments that
 * says which notes a file's arrival or departure affects. Does no I/O: the vault hands it texts and paths.
 *
 * Kept compact for big vaults (at 100k notes a dict per note per map, a Set per link key and a key
 * array per note took ~120 MB): each note's links are one string (`LinkRecord`: resolved targets as
 * file numbers with counts, unresolved link paths with counts), and `resolved` / `unresolved` are
 * read-only views that make a note's `{ target: count }` record when it is asked for.
 */
import { dict } from "../../core/dict";
import { LinkResolver } from "../../core/links/resolver";
import { splitLinkpath, type NoteMetadata } from "../../core/metadata";
import { parseNote } from "../../core/parser";
import type { LogLevel } from "../common/runtime";
import { keysOfFile, keysOfLinks, LinkKeyIndex } from "./link-key-index";
import { pack, packedLinks, packedLinkTexts, unpack, type PackedMetadata } from "./packed-metadata";

type LinkMap = Record<string, Record<string, number>>;

/**
 * A note's links as UTF-16 code units: the number of resolved targets, then each target's file
 * number and link count; the number of unresolved link paths, then each one's count, length and
 * text. Numbers are 15 bits a unit (the high bit: more follows). In first-seen order, as Obsidian's maps.
 */
type LinkRecord = string;

const EMPTY_RECORD: LinkRecord = "\u0000\u0000";

function pushNum(out: number[], v: number): void {
  while (v >= 0x8000) {
    out.push((v % 0x8000) | 0x8000);
    v = Math.floor(v / 0x8000);
  }
  out.push(v);
}

/** Builds a flat string from code units (in pieces: `apply` takes a bounded number of arguments). */
function fromCodes(codes: number[]): string {
  if (codes.length <= 4096) return String.fromCharCode.apply(null, codes);
  const parts: string[] = [];
  for (let i = 0; i < codes.length; i += 4096) parts.push(String.fromCharCode.apply(null, codes.slice(i, i + 4096)));
  return parts.join(""); // one flat string, not a rope of the pieces

}

/** Reads a `LinkRecord`. */
class RecordReader {
  i = 0;
  constructor(readonly s: string) {}
  num(): number {
    const s = this.s;
    let c = s.charCodeAt(this.i++);
    if (c < 0x8000) return c;
    let v = c & 0x7fff;
    let mul = 0x8000;
    for (;;) {
      c = s.charCodeAt(this.i++);
      v += (c & 0x7fff) * mul;
      if (c < 0x8000) return v;
      mul *= 0x8000;
    }
  }
  text(len: number): string {
    const t = this.s.slice(this.i, this.i + len);
    this.i += len;
    return t;
  }
}

/** A read-only live view over the records (`resolved` or `unresolved`), shaped as Obsidian's map. */
function linkMapView(records: Map<string, LinkRecord>, make: (rec: LinkRecord) => Record<string, number>): LinkMap {
  // `Object.entries` and `for…in` ask for a key's descriptor and then its value: make it once.
  let lastKey: string | undefined;
  let lastRec: LinkRecord | undefined;
  let lastObj: Record<string, number> | undefined;
  const value = (key: string | symbol): Record<string, number> | undefined => {
    if (typeof key !== "string") return undefined;
    const rec = records.get(key);
    if (rec === undefined) return undefined;
    if (key === lastKey && rec === lastRec) return lastObj;
    lastKey = key;
    lastRec = rec;
    return (lastObj = make(rec));
  };
  return new Proxy(dict<Record<string, number>>(), {
    get: (_t, key) => value(key),
    has: (_t, key) => typeof key === "string" && records.has(key),
    ownKeys: () => [...records.keys()],
    getOwnPropertyDescriptor: (_t, key) => {
      const v = value(key);
      return v === undefined ? undefined : { value: v, writable: true, enumerable: true, configurable: true };
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  });
}

export class NoteLinks {
  /** Each note's metadata, packed (see `packed-metadata`). */
  private readonly meta = new Map<string, PackedMetadata>();
  /**
   * Every file, and its number (link records name targets by number): the resolver's. At 100k files
   * a map of the numbers beside the resolver's set of the paths took 2.6 MB more.
   */
  private readonly resolver = new LinkResolver();
  /** Each note's links, in the maps' order (a note's links re-resolved go to the end, as in Obsidian's maps). */
  private readonly records = new Map<string, LinkRecord>();
  /** The live maps, like Obsidian's `metadataCache.resolvedLinks` and `unresolvedLinks` (read-only views). */
  readonly resolved: LinkMap = linkMapView(this.records, (rec) => this.resolvedOf(rec));
  readonly unresolved: LinkMap = linkMapView(this.records, (rec) => this.unresolvedOf(rec));
  /** Which notes link to a given name, to know whom a new or removed file affects (see `link-key-index`). */
  private readonly linkKeys = new LinkKeyIndex();

  constructor(private readonly log: (level: LogLevel, message: string) => void) {}

  get(path: string): NoteMetadata | null {
    const m = this.meta.get(path);
    return m ? unpack(m) : null;
  }

  /** A note's link texts in the link graph's order, without unpacking its metadata (the port's `linkTexts`). */
  linkTexts(path: string): string[] | null {
    const m = this.meta.get(path);
    return m ? packedLinkTexts(m) : null;
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
      // Not detached: packing copies every string out of the text.
      m = parseNote(text, false);
    } catch (e) {
      this.log("warn", `Could not parse "${path}": ${(e as Error).message}`);
      m = { headings: [], links: [], embeds: [], frontmatterLinks: [], tags: [], blocks: dict() };
    }
    let packed = pack(m);
    // A frontmatter JSON cannot carry is kept as the object: then with strings of its own.
    if (typeof packed !== "string") packed = pack(parseNote(text));
    this.unindexSource(path);
    this.meta.set(path, packed);
    this.indexSource(path, [...m.links, ...m.embeds, ...m.frontmatterLinks].map((l) => l.link));
  }

  /** After opening: the resolver over every listed file, and every note's links resolved. */
  resolveAll(files: Iterable<string>): void {
    this.setFiles(files);
    this.relink(this.meta.keys());
  }

  /**
   * `resolveAll`'s first step: every listed file made known to the resolver, and the link-key index
   * sorted. The second, `relink` of every note, may then run in pieces (each note's record is whole
   * after its piece).
   */
  setFiles(files: Iterable<string>): void {
    for (const f of files) this.addFile(f);
    this.linkKeys.build();
  }

  /** Every note of the opening vault has been read (`setMeta`): what grew while reading is fitted to it. */
  opened(): void {
    this.linkKeys.fit();
  }

  /** After `opened`: the link-key index sorted in steps until `due()`; true once done (else the first lookup finishes it at once). */
  sortKeysSome(due: () => boolean): boolean {
    return this.linkKeys.buildSome(due);
  }

  addFile(path: string): void {
    this.resolver.add(path);
  }

  /**
   * A file's number; a note's metadata may be set just before its file is added (a new note), so
   * the number makes the file known.
   */
  private idOf(path: string): number {
    return this.resolver.add(path);
  }

  private forgetFile(path: string): void {
    // Numbers are not reused: a record still naming it (re-resolved in the same step) reads as no file.
    this.resolver.remove(path);
  }

  /** Forgets a file (and its note's metadata and links); re-resolves the notes its departure affects. */
  removeFile(path: string): void {
    this.unindexSource(path);
    this.forgetFile(path);
    this.meta.delete(path);
    this.records.delete(path);
    this.relink(this.affectedByFile(path));
  }

  /** A file moved from `o` to `n`; adds the notes to re-resolve to `affected` (the caller relinks them all at once). */
  moveFile(o: string, n: string, affected: Set<string>): void {
    const m = this.meta.get(o);
    if (m) this.unindexSource(o);
    this.forgetFile(o);
    this.addFile(n);
    if (m) {
      this.meta.delete(o);
      this.records.delete(o);
      this.meta.set(n, m);
      this.indexSource(n, packedLinks(m));
      affected.add(n);
    }
    for (const s of this.affectedByFile(o)) affected.add(s);
    for (const s of this.affectedByFile(n)) affected.add(s);
  }

  /** Notes whose links may resolve differently now that `file` appeared or disappeared. */
  affectedByFile(file: string, extra: Iterable<string> = []): Set<string> {
    const out = new Set<string>(extra);
    const add = (note: number): void => {
      const p = this.resolver.pathAt(note);
      if (p !== undefined) out.add(p);
    };
    for (const k of keysOfFile(file)) this.linkKeys.lookup(k, add);
    return out;
  }

  /** Notes with a resolved link to any of `targets`, in the maps' order. */
  sourcesLinkingTo(targets: Iterable<string>): string[] {
    const out: string[] = [];
    this.scanResolved(targets, (src) => {
      out.push(src);
      return true;
    });
    return out;
  }

  /** For each of `targets`: the notes linking to it, source → link count (the port's `linkSources`). */
  linkSources(targets: readonly string[]): Map<string, Map<string, number>> {
    const out = new Map<string, Map<string, number>>(targets.map((t) => [t, new Map()]));
    this.scanResolved(targets, (src, target, count) => {
      out.get(target)?.set(src, count);
      return false;
    });
    return out;
  }

  /**
   * Calls `found` for each resolved link record entry naming one of `targets`, reading the records'
   * numbers only (no per-note objects); `found` returning true skips the rest of that source.
   */
  private scanResolved(targets: Iterable<string>, found: (source: string, target: string, count: number) => boolean): void {
    const ids = new Map<number, string>();
    for (const t of targets) {
      const id = this.resolver.idOf(t);
      if (id !== undefined) ids.set(id, t);
    }
    if (ids.size === 0) return;
    for (const [src, rec] of this.records) {
      const r = new RecordReader(rec);
      for (let n = r.num(); n > 0; n--) {
        const target = ids.get(r.num());
        const count = r.num();
        if (target !== undefined && found(src, target, count)) break;
      }
    }
  }

  /** Recomputes the link maps of the given sources (those that are no longer notes are dropped). */
  relink(sources: Iterable<string>): void {
    const resolvedCounts = new Map<number, number>();
    const unresolvedCounts = new Map<string, number>();
    const codes: number[] = [];
    for (const s of [...sources]) {
      this.records.delete(s);
      const m = this.meta.get(s);
      if (!m) continue;
      resolvedCounts.clear();
      unresolvedCounts.clear();
      for (const link of packedLinks(m)) {
        const lp = splitLinkpath(link).path;
        const dest = this.resolver.resolve(lp, s);
        const id = dest === null ? undefined : this.idOf(dest);
        if (id !== undefined) resolvedCounts.set(id, (resolvedCounts.get(id) ?? 0) + 1);
        else unresolvedCounts.set(lp, (unresolvedCounts.get(lp) ?? 0) + 1);
      }
      if (resolvedCounts.size === 0 && unresolvedCounts.size === 0) {
        this.records.set(s, EMPTY_RECORD);
        continue;
      }
      codes.length = 0;
      pushNum(codes, resolvedCounts.size);
      for (const [id, c] of resolvedCounts) {
        pushNum(codes, id);
        pushNum(codes, c);
      }
      pushNum(codes, unresolvedCounts.size);
      for (const [lp, c] of unresolvedCounts) {
        pushNum(codes, c);
        pushNum(codes, lp.length);
        for (let i = 0; i < lp.length; i++) codes.push(lp.charCodeAt(i));
      }
      this.records.set(s, fromCodes(codes));
    }
  }

  private resolvedOf(rec: LinkRecord): Record<string, number> {
    const out = dict<number>();
    const r = new RecordReader(rec);
    for (let n = r.num(); n > 0; n--) {
      const path = this.resolver.pathAt(r.num());
      const c = r.num();
      if (path !== undefined) out[path] = c;
    }
    return out;
  }

  private unresolvedOf(rec: LinkRecord): Record<string, number> {
    const out = dict<number>();
    const r = new RecordReader(rec);
    for (let n = r.num(); n > 0; n--) {
      r.num();
      r.num();
    }
    for (let n = r.num(); n > 0; n--) {
      const c = r.num();
      out[r.text(r.num())] = c;
    }
    return out;
  }

  private unindexSource(path: string): void {
    const m = this.meta.get(path);
    const id = this.resolver.idOf(path);
    if (m && id !== undefined) this.linkKeys.remove(id, keysOfLinks(path, packedLinks(m)));
  }

  private indexSource(path: string, links: readonly string[]): void {
    this.linkKeys.add(this.idOf(path), keysOfLinks(path, links));
  }
}
