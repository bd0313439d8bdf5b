import { VaultError } from "../errors";
import { frontmatterAliases } from "../metadata";
import type { AccessPolicy } from "../policy";
import { isNotePath, type VaultPort } from "../vault";
import { yieldToEventLoop } from "../time-slice";
import { CJK, NameIndex, nameTokens, type NameHit } from "./name-index";

export { nameTokens } from "./name-index";

export type FindNotesHit = NameHit;

/** A name lookup longer than this is refused: names are short, and each word costs a fuzzy walk of the name index. */
export const MAX_NAME_QUERY_CHARS = 200;
/** Words (other than CJK characters, looked up exactly) a name lookup may have: each is matched fuzzily and as a prefix (≤ ~1.5 ms a word at 100k notes; 12 long words: ~11 ms). */
export const MAX_NAME_QUERY_WORDS = 12;

/** Throws `invalid_argument` for a name lookup too long to run in bounded time. */
export function checkNameQuery(q: string): void {
  const words = nameTokens(q).filter((t) => !CJK.test(t)).length;
  if (q.length > MAX_NAME_QUERY_CHARS || words > MAX_NAME_QUERY_WORDS) {
    throw new VaultError(
      "invalid_argument",
      `find_notes looks notes up by name: give a few words of a title, alias or path (at most ${MAX_NAME_QUERY_WORDS} words and ${MAX_NAME_QUERY_CHARS} characters; this query has ${words} words and ${q.length} characters). To look for text inside notes, use search.`,
    );
  }
}

/** Longest stretch the first build of the name index runs before yielding to the event loop. */
const BUILD_SLICE_MS = 10;

/**
 * Typo-tolerant, prefix-aware lookup of notes by title, alias and path (a NameIndex, name-index.ts),
 * kept up to date from the vault's change events. Changes are applied lazily, at the next lookup,
 * so a burst of events costs nothing until someone asks.
 */

export class NoteFinder {
  private index: NameIndex | null = null;
  /** The first build, shared by lookups that arrive while it runs. */
  private building: Promise<NameIndex> | null = null;
  private readonly dirty = new Set<string>();
  private readonly unsubscribe: () => void;

  constructor(
    private readonly port: VaultPort,
    private readonly policy: AccessPolicy,
  ) {
    this.unsubscribe = port.onChange((ev) => {
      const index = this.index;
      if (!index) return;
      this.dirty.add(ev.path);
      if (ev.type === "rename") {
        this.dirty.add(ev.oldPath);
        // A folder rename moves every note under it.
        for (const p of index.notePaths()) if (p.startsWith(ev.oldPath + "/")) this.dirty.add(p);
        if (this.port.isFolder(ev.path)) {
          for (const f of this.port.listFiles()) if (f.path.startsWith(ev.path + "/")) this.dirty.add(f.path);
        }
      } else if (ev.type === "delete") {
        for (const p of index.notePaths()) if (p.startsWith(ev.path + "/")) this.dirty.add(p);
      }
    });
  }

  /** True when change events arrived that the next lookup will apply first. */
  hasPendingWork(): boolean {
    return this.dirty.size > 0;
  }

  close(): void {
    this.unsubscribe();
    this.index = null;
    this.building = null;
  }

  /** Marks every note for re-reading (e.g. after metadata settled or settings changed). */
  invalidate(): void {
    this.index = null;
    this.building = null;
    this.dirty.clear();
  }

  async find(query: string, limit: number): Promise<FindNotesHit[]> {
    const q = query.trim();
    if (!q) return [];
    checkNameQuery(q);
    const index = await this.ensure();
    return index.search(q, limit, (path) => this.policy.isHidden(path));
  }

  /**
   * The name index, up to date. The first build runs in time slices (Obsidian runs plugins on its UI
   * thread: no task may block it for long); later changes are applied at once (they are few).
   */
  private async ensure(): Promise<NameIndex> {
    // The index object exists from the build's first slice (so changes arriving meanwhile are
    // recorded), but it is complete only when the build is done.
    while (!this.index || this.building) {
      const build = (this.building ??= this.build());
      await build;
      if (this.building === build) this.building = null;
    }
    const index = this.index;
    if (this.dirty.size > 0) {
      const paths = [...this.dirty];
      this.dirty.clear();
      for (const p of paths) {
        index.remove(p);
        if (isNotePath(p) && !this.policy.isHidden(p) && this.port.stat(p)) this.add(index, p);
      }
      index.maybeMerge(false);
    }
    return index;
  }

  private async build(): Promise<NameIndex> {
    const index = new NameIndex();
    this.index = index;
    this.dirty.clear();
    const paths = this.port.listFiles().filter((f) => isNotePath(f.path) && !this.policy.isHidden(f.path)).map((f) => f.path);
    let sliceStart = Date.now();
    for (const p of paths) {
      if (this.index !== index) return index; // closed or invalidated meanwhile
      this.add(index, p, true);
      index.maybeMerge(true);
      if (Date.now() - sliceStart >= BUILD_SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = Date.now();
      }
    }
    index.merge();
    return index;
  }

  private add(index: NameIndex, path: string, isNew = false): void {
    index.add(path, frontmatterAliases(this.port.getMetadata(path)?.frontmatter), isNew);
  }
}
