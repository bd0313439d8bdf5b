import { linkSyntax, splitLinkpath, type NoteMetadata } from "../metadata";
import type { AccessPolicy } from "../policy";
import { isNotePath, parentOf, type VaultEvent, type VaultPort } from "../vault";
import { DEFAULT_GRAPH_OPTIONS, type GraphLink, type GraphOptions, type GraphScheduler } from "./types";
import { yieldToEventLoop } from "../time-slice";
import { clearTimer, setTimer, type TimerHandle } from "../timers";

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
 * The vault's link graph in memory: every visible note's links with their resolution (forward), and
 * for every target the notes linking to it (backward). Built in time slices, then kept current from
 * the port's change events: a changed note's links are recomputed; a created, deleted or renamed file
 * re-resolves the notes whose links name it. Hidden notes are left out entirely, and links to hidden
 * files count as unresolved (a hidden file must look exactly like a missing one).
 */
export class LinkGraph {
  /** Visible note → its links in document order (frontmatter links first). Every visible note has an entry. */
  readonly out = new Map<string, GraphLink[]>();
  /** Target path → source path → the source's links to it. */
  readonly back = new Map<string, Map<string, GraphLink[]>>();
  /** Target path → number of links to it (self links included). */
  readonly backCount = new Map<string, number>();
  /** Folder → its visible notes (direct children). */
  readonly byFolder = new Map<string, Set<string>>();
  /** nameKey → notes with a link naming it. */
  private readonly byName = new Map<string, Set<string>>();
  private readonly dirty = new Set<string>();
  private readonly resolveCache = new Map<string, string | null>();
  private readonly hiddenCache = new Map<string, boolean>();
  private sorted: string[] | null = null;
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
    this.out.clear();
    this.back.clear();
    this.backCount.clear();
    this.byFolder.clear();
    this.byName.clear();
    this.hiddenCache.clear();
    this.sorted = null;
    this.withUnresolved.clear();
    this.sortedUnresolved = null;
    this.dirty.clear();
    this.resolveCache.clear();
    this.state = "empty";
  }

  /** Every visible note, sorted by path (cached until the next change). */
  sortedNotes(): readonly string[] {
    if (!this.sorted) this.sorted = [...this.out.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return this.sorted;
  }

  /** The notes with a link to no file, sorted by path (cached until the next change): broken links scan only these. */
  sortedWithUnresolved(): readonly string[] {
    if (!this.sortedUnresolved) this.sortedUnresolved = [...this.withUnresolved].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
    this.state = "built";
    // Events that arrived during the build are applied by the next query or the background flush.
    if (this.dirty.size > 0) this.scheduleFlush();
  }

  private onEvent(ev: VaultEvent): void {
    if (this.closed) return;
    this.resolveCache.clear();
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
    const known = this.out.has(path) || this.back.has(path);
    const stat = this.port.stat(path);
    if (known && stat) return;
    // A folder (created, deleted or renamed): everything under it, known before or listed now.
    const prefix = path + "/";
    if (this.port.isFolder(path)) for (const f of this.port.listFiles()) if (f.path.startsWith(prefix)) this.touchFile(f.path);
    if (!stat) {
      for (const p of this.out.keys()) if (p.startsWith(prefix)) this.touchFile(p);
      for (const p of this.back.keys()) if (p.startsWith(prefix)) this.touchFile(p);
    }
  }

  private touchFile(path: string): void {
    this.dirty.add(path);
    const sources = this.back.get(path);
    if (sources) for (const s of sources.keys()) this.dirty.add(s);
    const named = this.byName.get(nameKey(path));
    if (named) for (const s of named) this.dirty.add(s);
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

  /** Re-reads one path's links from its metadata (or removes it when it is gone, hidden or not a note). */
  private recompute(path: string): void {
    this.removeSource(path);
    if (!isNotePath(path) || this.isHidden(path) || !this.port.stat(path)) return;
    const meta = this.port.getMetadata(path);
    const links = meta ? this.linksOf(path, meta) : [];
    this.out.set(path, links);
    this.sorted = null;
    if (links.some((l) => l.target === null)) {
      this.withUnresolved.add(path);
      this.sortedUnresolved = null;
    }
    const folder = parentOf(path);
    let peers = this.byFolder.get(folder);
    if (!peers) this.byFolder.set(folder, (peers = new Set()));
    peers.add(path);
    for (const l of links) {
      let named = this.byName.get(l.key);
      if (!named) this.byName.set(l.key, (named = new Set()));
      named.add(path);
      if (l.target !== null) this.addBack(l);
    }
  }

  private addBack(l: GraphLink): void {
    let sources = this.back.get(l.target!);
    if (!sources) this.back.set(l.target!, (sources = new Map<string, GraphLink[]>()));
    const list = sources.get(l.source);
    if (list) list.push(l);
    else sources.set(l.source, [l]);
    this.backCount.set(l.target!, (this.backCount.get(l.target!) ?? 0) + 1);
  }

  private removeSource(path: string): void {
    const links = this.out.get(path);
    if (!links) return;
    this.out.delete(path);
    this.sorted = null;
    if (this.withUnresolved.delete(path)) this.sortedUnresolved = null;
    const peers = this.byFolder.get(parentOf(path));
    peers?.delete(path);
    if (peers && peers.size === 0) this.byFolder.delete(parentOf(path));
    for (const l of links) {
      const named = this.byName.get(l.key);
      if (named) {
        named.delete(path);
        if (named.size === 0) this.byName.delete(l.key);
      }
      if (l.target === null) continue;
      const n = (this.backCount.get(l.target) ?? 1) - 1;
      if (n > 0) this.backCount.set(l.target, n);
      else this.backCount.delete(l.target);
      const sources = this.back.get(l.target);
      if (!sources) continue;
      sources.delete(path);
      if (sources.size === 0) this.back.delete(l.target);
    }
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
    const cacheKey = parentOf(source) + "\n" + linkpath;
    const cached = this.resolveCache.get(cacheKey);
    if (cached !== undefined) return cached;
    let target = this.port.resolveLink(linkpath, source);
    if (target !== null && this.isHidden(target)) target = null;
    this.resolveCache.set(cacheKey, target);
    return target;
  }
}
