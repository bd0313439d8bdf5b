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
}

export const ACTIVITY_FILE = "activity.jsonl";

/** The activity log: JSON lines appended to the state store. */
export class ActivityLog {
  constructor(
    private readonly store: StateStore,
    private readonly file = ACTIVITY_FILE,
  ) {}

  async append(entry: ActivityEntry): Promise<void> {
    await this.store.append(this.file, JSON.stringify(entry));
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
