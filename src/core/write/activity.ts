import type { StateStore } from "../state";

/** One change made through the server. */
export interface ActivityEntry {
  /** ISO time. */
  time: string;
  /** The MCP client's name from `initialize`. */
  client: string;
  tool: string;
  path: string;
  /** Etag before the change (null when the file did not exist, or for folders). */
  etag_before: string | null;
  /** Etag after the change (null when deleted, or for folders). */
  etag_after: string | null;
  /** For renames. */
  new_path?: string;
  /** A few words, e.g. `3 replacements`, `links: 5 in 3 notes`. */
  detail?: string;
  /** The git commit of this change (when the owner turned committing on). */
  commit?: string;
  /** Its commit failed and is pending (the next commit or git_sync makes it, then `commit` is set). */
  commit_pending?: boolean;
}

export const ACTIVITY_FILE = "activity.jsonl";

/** The activity log: JSON lines appended to the state store. */
export class ActivityLog {
  constructor(
    private readonly store: StateStore,
    private readonly file = ACTIVITY_FILE,
  ) {}

  /** Appends and rewrites one after another (a rewrite must not lose an entry appended meanwhile). */
  private tail: Promise<unknown> = Promise.resolve();

  private queued<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  append(entry: ActivityEntry): Promise<void> {
    return this.queued(() => this.store.append(this.file, JSON.stringify(entry)));
  }

  /** A pending commit was made: the oldest pending entry of that tool and path gets its sha. */
  commitMade(tool: string, path: string, sha: string): Promise<boolean> {
    return this.queued(async () => {
      const bytes = await this.store.read(this.file);
      if (!bytes) return false;
      const lines = new TextDecoder().decode(bytes).split("\n");
      for (let i = 0; i < lines.length; i++) {
        if (!lines[i].includes('"commit_pending"')) continue;
        try {
          const e = JSON.parse(lines[i]) as ActivityEntry;
          if (!e.commit_pending || e.tool !== tool || e.path !== path) continue;
          const { commit_pending: _pending, ...rest } = e;
          void _pending;
          lines[i] = JSON.stringify({ ...rest, commit: sha });
          await this.store.write(this.file, lines.join("\n"));
          return true;
        } catch {
          /* a torn line: skip it */
        }
      }
      return false;
    });
  }

  /**
   * Commits that were rewritten (a sync rebased them): each entry naming an old sha gets the new
   * one, so every sha in the log stays on the branch. Returns how many entries changed.
   */
  remapCommits(map: ReadonlyMap<string, string>): Promise<number> {
    return this.queued(async () => {
      if (map.size === 0) return 0;
      const bytes = await this.store.read(this.file);
      if (!bytes) return 0;
      let changed = 0;
      const lines = new TextDecoder().decode(bytes).split("\n");
      const out = lines.map((line) => {
        if (!line.includes('"commit"')) return line;
        try {
          const e = JSON.parse(line) as ActivityEntry;
          const next = typeof e.commit === "string" ? map.get(e.commit) : undefined;
          if (!next) return line;
          changed++;
          return JSON.stringify({ ...e, commit: next });
        } catch {
          return line;
        }
      });
      if (changed) await this.store.write(this.file, out.join("\n"));
      return changed;
    });
  }

  /** The latest `limit` entries, newest first. Lines that are not valid JSON are skipped. */
  async recent(limit: number): Promise<ActivityEntry[]> {
    const bytes = await this.store.read(this.file);
    if (!bytes) return [];
    const lines = new TextDecoder().decode(bytes).split("\n");
    const out: ActivityEntry[] = [];
    for (let i = lines.length - 1; i >= 0 && out.length < limit; i--) {
      const line = lines[i].trim();
      if (!line) continue;
      try {
        const e = JSON.parse(line) as ActivityEntry;
        if (e && typeof e === "object" && typeof e.path === "string") out.push(e);
      } catch {
        /* a torn last line after a crash: skip it */
      }
    }
    return out;
  }
}
