import { linkSyntax, linkTextsOf, splitLinkpath, type NoteMetadata } from "../metadata";
import type { AccessPolicy } from "../policy";
import { isNotePath, parentOf, type VaultEvent, type VaultPort } from "../vault";
import { DEFAULT_GRAPH_OPTIONS, type GraphLink, type GraphOptions, type GraphScheduler } from "./types";
import { yieldToEventLoop } from "../time-slice";
import { clearTimer, setTimer, type TimerHandle } from "../timers";
import { IdLists } from "./id-lists";
import { fnv1a30 as nameHash } from "../hash";

/** Lower-cased last path segment without `.md`: the name a link uses, and the name a file answers to. */
export function nameKey(pathOrLinkpath: string): string {
  const p = pathOrLinkpath.trim().replace(/\\/g, "/");
  const seg = p.slice(p.lastIndexOf("/") + 1);
  return seg.normalize("NFC").toLowerCase().replace(/\.md$/, "");
}

export const defaultScheduler: GraphScheduler = {
  now: () => performance.now(),
  yield: yieldToEventLoop,
};

/**
 * Links held for at most this many notes at once (`links`): a note's links are made again from its
 * metadata when it falls out (a few µs), so the graph's memory does not grow with every link's object.
 */
const LINK_CACHE = 2048;

/** Paths in code-unit order (the order every sorted list of the graph keeps). */
const byPath = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);


/**
 * The vault's link graph in memory: for every visible note the files its links resolve to (forward),
 * and for every file the notes linking to it (backward), as numbers — a path gets an id once, and
 * each note's target ids, each file's linking notes and each link name's notes are lists in typed
 * arrays (`IdLists`), not JS arrays. The build reads only each note's link texts (the port's
 * `linkTexts`, or its metadata); a link's details (text, display text, line, fragment) are made
 * again from the note's metadata when a query needs them (`links`), and the last notes asked for
 * are kept. At 100k notes and ~590k links the graph of link objects held ~200 MB; this holds
 * ~15 MB of heap and ~11 MB of typed arrays. Built in time slices, then kept current from the port's change events:
 * a changed note's links are recomputed; a created, deleted or renamed file re-resolves the notes
 * whose links name it. Hidden notes are left out entirely, and links to hidden files count as
 * unresolved (a hidden file must look exactly like a missing one).
 */
export class LinkGraph {
  /** Path → id; `paths[id]` the other way. Ids are never reused (a path that comes back gets its old one). */
  private readonly ids = new Map<string, number>();
  private readonly paths: string[] = [];
  /** Per id: the note's links' target ids in document order (-1: resolves to no visible file); absent when not a visible note. */
  private readonly outT = new IdLists();
  /** Per id: the ids of the notes linking to it, once per link (unordered); absent or empty when none. */
  private readonly backS = new IdLists();
  /**
   * Per id: the note's mtime as the port gave it when the note was last read (`recompute`: a change
   * of a note is a `modify` that reads it again). `eachNoteMtime` reads them, not the port: at 100k
   * notes a lookup of each note's file took 60–90 ms. Headless, any change of the file's size, times
   * or inode is a `modify`; in Obsidian it is the metadata cache's `changed`, so if Obsidian sends
   * none for a note rewritten with the same text, that note keeps its earlier mtime here until it changes.
   */
  private mtimes = new Float64Array(0);
  /** `recompute`'s target ids, reused. */
  private readonly scratch: number[] = [];
  private noteCount = 0;
  private linkCount = 0;
  /** Folder → its visible notes (direct children). */
  readonly byFolder = new Map<string, Set<string>>();
  /**
   * A nameKey's 30-bit hash (`fnv1a30`) → the number of its list of the note ids with a link naming it (in
   * `nameLists`). May keep notes whose links changed since, and two names may share a hash: either
   * way a note is only re-read once more. Hashes, not the names: ~4 MB of strings fewer at 100k notes.
   */
  private readonly byName = new Map<number, number>();
  /** `byName`'s lists: name → list number → note ids (names are never removed but by `reset`, so a name's number is the count before it). */
  private readonly nameLists = new IdLists();
  /** The last notes' links, made from their metadata (see `links`); cleared when anything changes. */
  private readonly linkCache = new Map<string, GraphLink[]>();
  private readonly dirty = new Set<string>();
  private readonly resolveCache = new Map<string, string | null>();
  private readonly hiddenCache = new Map<string, boolean>();
  /** Notes with at least one link to no file (see `sortedWithUnresolved`). */
  private readonly withUnresolved = new Set<string>();
  private sortedUnresolved: string[] | null = null;
  private state: "empty" | "building" | "built" = "empty";
  private buildPromise: Promise<void> | null = null;
  private flushTimer: TimerHandle | null = null;
  private flushing: Promise<void> | null = null;
  private hiddenSig = "";
  private closed = false;
  private readonly unsubscribe: () => void;
  readonly options: GraphOptions;

  constructor(
    private readonly port: VaultPort,
    private readonly policy: AccessPolicy,
    options: Partial<GraphOptions> = {},
    private readonly scheduler: GraphScheduler = defaultScheduler,
  ) {
    this.options = { ...DEFAULT_GRAPH_OPTIONS, ...options };
    this.unsubscribe = port.onChange((ev) => this.onEvent(ev));
  }

  get isBuilt(): boolean {
    return this.state === "built";
  }

  get isBuilding(): boolean {
    return this.state === "building";
  }

  /** Changes received and not yet applied. */
  pendingCount(): number {
    return this.dirty.size;
  }

  /** Visible notes in the graph. */
  get size(): number {
    return this.noteCount;
  }

  /** Links of every visible note (resolved or not). */
  get totalLinks(): number {
    return this.linkCount;
  }

  /** True when `path` is a visible note of the graph. */
  hasNote(path: string): boolean {
    const id = this.ids.get(path);
    return id !== undefined && this.outT.lengthOf(id) >= 0;
  }

  /** Every visible note (unordered). */
  *notes(): IterableIterator<string> {
    for (let id = 0; id < this.outT.size; id++) if (this.outT.lengthOf(id) >= 0) yield this.paths[id];
  }

  /**
   * A note's links in document order (frontmatter links first), made from its metadata; undefined
   * when it is not a visible note. Callers may fill in `line` (kept while the note stays cached).
   */
  links(path: string): GraphLink[] | undefined {
    if (!this.hasNote(path)) return undefined;
    const hit = this.linkCache.get(path);
    if (hit) {
      this.linkCache.delete(path);
      this.linkCache.set(path, hit);
      return hit;
    }
    const meta = this.port.getMetadata(path);
    const links = meta ? this.linksOf(path, meta) : [];
    if (this.linkCache.size >= LINK_CACHE) this.linkCache.delete(this.linkCache.keys().next().value as string);
    this.linkCache.set(path, links);
    return links;
  }

  /** The files a note's links resolve to, once each, in document order (no link objects made). */
  targets(path: string): string[] {
    const id = this.ids.get(path);
    const n = id === undefined ? -1 : this.outT.lengthOf(id);
    if (id === undefined || n < 0) return [];
    const out: string[] = [];
    const seen = new Set<number>();
    const d = this.outT.data;
    for (let k = this.outT.startOf(id), e = k + n; k < e; k++) {
      const t = d[k];
      if (t < 0 || seen.has(t)) continue;
      seen.add(t);
      out.push(this.paths[t]);
    }
    return out;
  }

  /** The notes linking to `path`, once each, sorted by path. */
  sources(path: string): string[] {
    const id = this.ids.get(path);
    const n = id === undefined ? 0 : this.backS.lengthOf(id);
    if (id === undefined || n <= 0) return [];
    const s0 = this.backS.startOf(id);
    const uniq = [...new Set(this.backS.data.subarray(s0, s0 + n))].map((s) => this.paths[s]);
    return uniq.sort(byPath);
  }

  /**
   * Calls `each(path, mtime)` for every visible note: its mtime when the graph last read it, or the
   * port's own for a note changed since and not read again yet (a note gone since is left out).
   */
  eachNoteMtime(each: (path: string, mtime: number) => void): void {
    const dirty = this.dirty.size > 0 ? this.dirty : null;
    for (let id = 0; id < this.outT.size; id++) {
      if (this.outT.lengthOf(id) < 0) continue;
      const p = this.paths[id];
      if (dirty !== null && dirty.has(p)) {
        const st = this.port.stat(p);
        if (st) each(p, st.mtime);
      } else each(p, this.mtimes[id]);
    }
  }

  /**
   * The visible notes that link to no other file and that no other note links to (self links and
   * links to no file do not count), sorted by path. Read by id from the lists: a
   * note's targets and sources made for each note took 107–121 ms at 100k notes, a lookup of each
   * note's id 21–34 ms.
   */
  orphans(): string[] {
    const out: string[] = [];
    for (let id = 0; id < this.outT.size; id++) {
      if (this.outT.lengthOf(id) >= 0 && !this.outT.holdsOther(id, id) && !this.backS.holdsOther(id, id)) out.push(this.paths[id]);
    }
    return out.sort(byPath);
  }

  /** Links pointing at `path` (self links included). */
  backlinkCount(path: string): number {
    const id = this.ids.get(path);
    return id === undefined ? 0 : Math.max(0, this.backS.lengthOf(id));
  }

  /** The links to `path`, grouped by linking note (sorted by path), each note's in document order. */
  backlinks(path: string): Map<string, GraphLink[]> {
    const out = new Map<string, GraphLink[]>();
    for (const src of this.sources(path)) {
      const ls = (this.links(src) ?? []).filter((l) => l.target === path);
      if (ls.length) out.set(src, ls);
    }
    return out;
  }

  /**
   * Every file some note links to, with how many distinct notes link to it and how many links,
   * self links left out (`notes` 0 when only the file itself links to it).
   */
  *linkedFiles(): IterableIterator<{ path: string; notes: number; links: number; isNote: boolean }> {
    const stamp = new Int32Array(this.paths.length).fill(-1);
    for (let t = 0; t < this.backS.size; t++) {
      const n = this.backS.lengthOf(t);
      if (n <= 0) continue;
      let notes = 0;
      let links = 0;
      // Each list read whole between two yields (the store may change while the consumer runs).
      const d = this.backS.data;
      for (let k = this.backS.startOf(t), e = k + n; k < e; k++) {
        const s = d[k];
        if (s === t) continue;
        links++;
        if (stamp[s] !== t) {
          stamp[s] = t;
          notes++;
        }
      }
      // `isNote` as `hasNote` says, without looking the path up again (~90k lookups at 100k notes).
      yield { path: this.paths[t], notes, links, isNote: this.outT.lengthOf(t) >= 0 };
    }
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    clearTimer(this.flushTimer);
    this.flushTimer = null;
  }

  /** Builds the graph (once) in slices that yield to the event loop; resolves when built. */
  ensureBuilt(): Promise<void> {
    if (this.state === "built" && this.hiddenSig !== this.currentHiddenSig()) this.reset();
    if (this.state === "built") return Promise.resolve();
    if (!this.buildPromise) {
      this.buildPromise = this.build().finally(() => {
        this.buildPromise = null;
      });
    }
    return this.buildPromise;
  }

  /**
   * Applies pending changes: synchronously for at most `querySyncMs`, then, when `wait`, in slices until
   * none are left or `maxWaitMs` passed. Returns true when changes are still pending (the answer is stale).
   */
  async sync(wait: boolean, timeoutMs = this.options.maxWaitMs): Promise<boolean> {
    await this.ensureBuilt();
    this.applyPending(this.options.querySyncMs);
    if (this.dirty.size > 0 && wait) {
      const deadline = this.scheduler.now() + Math.min(timeoutMs, this.options.maxWaitMs);
      while (this.dirty.size > 0 && this.scheduler.now() < deadline && !this.closed) {
        await this.scheduler.yield();
        if (this.state !== "built") await this.ensureBuilt();
        this.applyPending(this.options.sliceMs);
      }
    }
    return this.dirty.size > 0;
  }

  /** Forgets everything; the next query rebuilds. */
  reset(): void {
    this.ids.clear();
    this.paths.length = 0;
    this.mtimes = new Float64Array(0);
    this.outT.clear();
    this.backS.clear();
    this.noteCount = 0;
    this.linkCount = 0;
    this.linkCache.clear();
    this.byFolder.clear();
    this.byName.clear();
    this.nameLists.clear();
    this.hiddenCache.clear();
    this.withUnresolved.clear();
    this.sortedUnresolved = null;
    this.dirty.clear();
    this.resolveCache.clear();
    this.state = "empty";
  }

  /** The notes with a link to no file, sorted by path (cached until the next change): broken links scan only these. */
  sortedWithUnresolved(): readonly string[] {
    if (!this.sortedUnresolved) this.sortedUnresolved = [...this.withUnresolved].sort(byPath);
    return this.sortedUnresolved;
  }

  /** The policy's answer, remembered: it only changes with the excluded-files setting, which resets the graph. */
  isHidden(path: string): boolean {
    let h = this.hiddenCache.get(path);
    if (h === undefined) {
      h = this.policy.isHidden(path);
      if (this.hiddenCache.size > 200_000) this.hiddenCache.clear();
      this.hiddenCache.set(path, h);
    }
    return h;
  }

  private currentHiddenSig(): string {
    return this.port.excludedFilters().join("\n");
  }

  private async build(): Promise<void> {
    await this.port.ready();
    this.reset();
    this.state = "building";
    this.hiddenSig = this.currentHiddenSig();
    let sliceStart = this.scheduler.now();
    const files = this.port.listFiles();
    for (const f of files) {
      if (this.closed) return;
      if (this.state !== "building") return; // reset meanwhile
      if (!isNotePath(f.path)) continue;
      this.recompute(f.path);
      if (this.scheduler.now() - sliceStart >= this.options.sliceMs) {
        await this.scheduler.yield();
        sliceStart = this.scheduler.now();
      }
    }
    this.resolveCache.clear();
    this.hiddenCache.clear();
    // Lists grown by appending keep room to spare, and left dead space where they were: packed, a
    // task each (together they were a 50–60 ms block at 100k notes).
    for (const lists of [this.outT, this.backS, this.nameLists]) {
      await this.scheduler.yield();
      if (this.closed || this.state !== "building") return;
      lists.compact(true);
    }
    this.state = "built";
    // Events that arrived during the build are applied by the next query or the background flush.
    if (this.dirty.size > 0) this.scheduleFlush();
  }

  private onEvent(ev: VaultEvent): void {
    if (this.closed) return;
    this.resolveCache.clear();
    this.linkCache.clear();
    if (this.state === "empty") return; // the build will read the current state
    switch (ev.type) {
      case "modify":
        this.dirty.add(ev.path);
        break;
      case "create":
      case "delete":
        this.touch(ev.path);
        break;
      case "rename":
        this.touch(ev.oldPath);
        this.touch(ev.path);
        break;
    }
    this.scheduleFlush();
  }

  /** A file or folder appeared or went away: re-read it and re-resolve every note whose links could name it. */
  private touch(path: string): void {
    this.touchFile(path);
    const id = this.ids.get(path);
    const known = id !== undefined && this.inGraph(id);
    const stat = this.port.stat(path);
    if (known && stat) return;
    // A folder (created, deleted or renamed): everything under it, known before or listed now.
    const prefix = path + "/";
    if (this.port.isFolder(path)) for (const f of this.port.listFiles()) if (f.path.startsWith(prefix)) this.touchFile(f.path);
    if (!stat) {
      for (let i = 0; i < this.paths.length; i++) {
        if (this.inGraph(i) && this.paths[i].startsWith(prefix)) this.touchFile(this.paths[i]);
      }
    }
  }

  /** A visible note, or a file some note links to. */
  private inGraph(id: number): boolean {
    return this.outT.lengthOf(id) >= 0 || this.backS.lengthOf(id) > 0;
  }

  private touchFile(path: string): void {
    this.dirty.add(path);
    const id = this.ids.get(path);
    const n = id === undefined ? 0 : this.backS.lengthOf(id);
    if (id !== undefined && n > 0) {
      const d = this.backS.data;
      for (let k = this.backS.startOf(id), e = k + n; k < e; k++) this.dirty.add(this.paths[d[k]]);
    }
    const li = this.byName.get(nameHash(nameKey(path)));
    const m = li === undefined ? 0 : this.nameLists.lengthOf(li);
    if (li !== undefined && m > 0) {
      const d = this.nameLists.data;
      for (let k = this.nameLists.startOf(li), e = k + m; k < e; k++) this.dirty.add(this.paths[d[k]]);
    }
  }

  private scheduleFlush(): void {
    if (this.flushTimer || this.closed || this.state !== "built") return;
    this.flushTimer = setTimer(() => {
      this.flushTimer = null;
      if (!this.flushing) {
        this.flushing = this.flush().finally(() => {
          this.flushing = null;
        });
      }
    }, this.options.debounceMs);
  }

  private async flush(): Promise<void> {
    while (this.dirty.size > 0 && !this.closed && this.state === "built") {
      this.applyPending(this.options.sliceMs);
      if (this.dirty.size > 0) await this.scheduler.yield();
    }
  }

  /** Applies pending changes for at most `budgetMs` (at least one). */
  applyPending(budgetMs: number): void {
    if (this.state !== "built" || this.dirty.size === 0) return;
    const start = this.scheduler.now();
    for (const path of this.dirty) {
      this.dirty.delete(path);
      this.recompute(path);
      if (this.scheduler.now() - start >= budgetMs) break;
    }
    if (this.dirty.size === 0) this.resolveCache.clear();
  }

  /** The id of a path (given one on first sight). */
  private idOf(path: string): number {
    let id = this.ids.get(path);
    if (id === undefined) {
      id = this.paths.length;
      this.paths.push(path);
      this.ids.set(path, id);
    }
    return id;
  }

  /**
   * Re-reads one path's links (or removes it when it is gone, hidden or not a note): only their texts
   * (`linkTexts`), resolved to ids and name keys, since the graph keeps nothing else; `links` makes
   * the full link objects when a query needs them.
   */
  private recompute(path: string): void {
    this.removeSource(path);
    if (!isNotePath(path) || this.isHidden(path)) return;
    const st = this.port.stat(path);
    if (!st) return;
    const texts = this.linkTextsOf(path);
    const id = this.idOf(path);
    if (id >= this.mtimes.length) {
      const m = new Float64Array(Math.max(1024, this.mtimes.length * 2, id + 1));
      m.set(this.mtimes);
      this.mtimes = m;
    }
    this.mtimes[id] = st.mtime;
    const ts = this.scratch;
    ts.length = texts.length;
    let unresolved = false;
    for (let i = 0; i < texts.length; i++) {
      // What `makeLink` makes of it, without the link object: the target and the name key.
      const text = texts[i];
      const hash = text.indexOf("#");
      const linkpath = hash < 0 ? text : text.slice(0, hash);
      const target = this.resolve(linkpath, path);
      if (target === null) {
        ts[i] = -1;
        unresolved = true;
      } else {
        const t = this.idOf(target);
        ts[i] = t;
        this.backS.push(t, id);
      }
      if (linkpath !== "") {
        const key = nameKey(linkpath);
        if (key !== "") this.addName(nameHash(key), id);
      }
    }
    this.outT.set(id, ts);
    this.noteCount++;
    this.linkCount += ts.length;
    ts.length = 0;
    if (unresolved) {
      this.withUnresolved.add(path);
      this.sortedUnresolved = null;
    }
    const folder = parentOf(path);
    let peers = this.byFolder.get(folder);
    if (!peers) this.byFolder.set(folder, (peers = new Set()));
    peers.add(path);
  }

  /** Notes `id` under name `key` (once). */
  private addName(key: number, id: number): void {
    let li = this.byName.get(key);
    if (li === undefined) this.byName.set(key, (li = this.byName.size));
    // While building, each note is read once: it can only be its name list's last id already.
    else if (this.nameLists.includes(li, id, this.state === "building")) return;
    this.nameLists.push(li, id);
  }

  private removeSource(path: string): void {
    this.linkCache.delete(path);
    const id = this.ids.get(path);
    const n = id === undefined ? -1 : this.outT.lengthOf(id);
    if (id === undefined || n < 0) return;
    this.outT.remove(id);
    this.noteCount--;
    this.linkCount -= n;
    if (this.withUnresolved.delete(path)) this.sortedUnresolved = null;
    const peers = this.byFolder.get(parentOf(path));
    peers?.delete(path);
    if (peers && peers.size === 0) this.byFolder.delete(parentOf(path));
    // The list stays readable after `remove` (only marked absent); the back lists are another store.
    const d = this.outT.data;
    for (let k = this.outT.startOf(id), e = k + n; k < e; k++) {
      const t = d[k];
      if (t >= 0) this.backS.removeOne(t, id);
    }
  }

  /** A note's link texts in the order of `linksOf` (the port's light path when it has one). */
  private linkTextsOf(path: string): string[] {
    if (this.port.linkTexts) return this.port.linkTexts(path) ?? [];
    const meta = this.port.getMetadata(path);
    return meta ? linkTextsOf(meta) : [];
  }

  private linksOf(source: string, meta: NoteMetadata): GraphLink[] {
    const out: GraphLink[] = [];
    for (const fl of meta.frontmatterLinks ?? []) {
      out.push(this.makeLink(source, fl.link, fl.original, fl.displayText, "frontmatter", null, fl.key));
    }
    for (const l of meta.links ?? []) {
      out.push(this.makeLink(source, l.link, l.original, l.displayText, linkSyntax(l.original), l.position.start.line + 1, undefined));
    }
    for (const e of meta.embeds ?? []) {
      out.push(this.makeLink(source, e.link, e.original, e.displayText, "embed", e.position.start.line + 1, undefined));
    }
    if ((meta.embeds?.length ?? 0) > 0 && (meta.links?.length ?? 0) > 0) {
      out.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    }
    return out;
  }

  private makeLink(
    source: string,
    link: string,
    original: string,
    displayText: string | undefined,
    type: GraphLink["type"],
    line: number | null,
    property: string | undefined,
  ): GraphLink {
    const { path: linkpath, fragment } = splitLinkpath(link);
    return {
      source,
      target: this.resolve(linkpath, source),
      link,
      linkpath,
      fragment: fragment === "" ? null : fragment,
      original,
      displayText,
      type,
      line,
      property,
      key: linkpath === "" ? "" : nameKey(linkpath),
    };
  }

  private resolve(linkpath: string, source: string): string | null {
    if (linkpath === "") return source;
    if (this.state === "building") {
      // Not remembered while building: every note is read once, and at 100k notes (2% hits) the
      // cache's keys added ~100 MB of garbage to the build's heap peak, and time.
      const target = this.port.resolveLink(linkpath, source);
      return target !== null && this.isHidden(target) ? null : target;
    }
    const cacheKey = parentOf(source) + "\n" + linkpath;
    const cached = this.resolveCache.get(cacheKey);
    if (cached !== undefined) return cached;
    let target = this.port.resolveLink(linkpath, source);
    if (target !== null && this.isHidden(target)) target = null;
    if (this.resolveCache.size > 200_000) this.resolveCache.clear();
    this.resolveCache.set(cacheKey, target);
    return target;
  }
}
