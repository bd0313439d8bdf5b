/**
 * The rename journal: what a rename is about to do (the files that move, the notes whose links may
 * need rewriting), written to the state store before anything moves and removed when it is done, so
 * a rename cut short by a crash or a kill is finished at the next start (`finishInterruptedRename`).
 *
 * A rename has three stages a crash can cut: nothing moved yet (the journal is written), moved with no
 * or some linking notes rewritten. Finishing is idempotent, so there is no progress to record:
 * - not moved yet: the move is made now (with its link updates): the owner asked for this rename
 *   (approved it where confirmations are on), and a target it replaced is already in the trash;
 * - moved: each journaled note's links that pointed, before the move, at a file that moved are
 *   rewritten to its new path, through the normal atomic write path. The vault as it was before the
 *   move is the current listing with the moves undone; a link already pointing at the right file (one
 *   rewritten before the crash, or fixed by the owner since) is left alone, and only link spans change,
 *   so edits the owner made while the server was down stay.
 * A crash while finishing leaves the journal in place: the next start finishes again.
 */
import { parseNote } from "../parser";
import { LinkResolver } from "../links/resolver";
import { rewriteLinks, shortestLinkpath } from "../links/rewrite";
import type { StateStore } from "../state";
import { isNotePath, type VaultPort } from "../vault";

export const RENAME_JOURNAL_FILE = "rename-journal.json";

export interface RenameJournalEntry {
  id: string;
  /** When the rename started (ISO time). */
  started: string;
  /** Who asked (for the activity log). */
  client: string;
  tool: string;
  path: string;
  new_path: string;
  kind: "file" | "folder";
  /** Every file that moves: [old path, new path]. */
  files: [string, string][];
  /** Notes (paths before the move) whose links may need rewriting. */
  notes: string[];
}

/** What the start-up did with one interrupted rename. */
export interface RecoveredRename {
  path: string;
  new_path: string;
  /** When the interrupted rename had started. */
  interrupted_at: string;
  /** finished: the rename is complete now; dropped: it could not be finished (see reason), nothing was changed. */
  outcome: "finished" | "dropped";
  /** True when the move itself had not happened and was made at start-up. */
  moved_at_start: boolean;
  links_updated: number;
  notes_updated: number;
  reason?: string;
}

/** Renames running in this process: a second server started in the same process (the plugin's restart) must not finish them. */
const running = new Set<string>();
/** Journal updates of this process, one at a time (concurrent renames share the file). */
let queue: Promise<unknown> = Promise.resolve();
let counter = 0;

export class RenameJournal {
  constructor(private readonly store: StateStore) {}

  newId(): string {
    return `${Date.now().toString(36)}-${(++counter).toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  }

  /** Records a rename about to start (atomically: the store writes a temp file and renames it). */
  begin(entry: RenameJournalEntry): Promise<void> {
    running.add(entry.id);
    return this.update((list) => [...list.filter((e) => e.id !== entry.id), entry]);
  }

  /** Removes a rename that finished (or failed before moving anything). */
  async end(id: string): Promise<void> {
    try {
      await this.update((list) => list.filter((e) => e.id !== id));
    } finally {
      running.delete(id);
    }
  }

  /** Leaves a rename that failed half done in the journal, for the next start to finish. */
  leave(id: string): void {
    running.delete(id);
  }

  /** Renames journaled and not running in this process: cut short by a crash. */
  async interrupted(): Promise<RenameJournalEntry[]> {
    const list = await this.read();
    return list.filter((e) => !running.has(e.id));
  }

  private update(fn: (list: RenameJournalEntry[]) => RenameJournalEntry[]): Promise<void> {
    const next = queue.then(async () => {
      const list = fn(await this.read());
      if (list.length === 0) await this.store.remove(RENAME_JOURNAL_FILE);
      else await this.store.write(RENAME_JOURNAL_FILE, JSON.stringify({ version: 1, renames: list }));
    });
    queue = next.catch(() => undefined);
    return next;
  }

  /** The journaled renames; entries that are not well-formed are left out (a file that is not JSON reads as none). */
  private async read(): Promise<RenameJournalEntry[]> {
    const bytes = await this.store.read(RENAME_JOURNAL_FILE);
    if (!bytes) return [];
    let data: unknown;
    try {
      data = JSON.parse(new TextDecoder().decode(bytes));
    } catch {
      return [];
    }
    const renames = (data as { renames?: unknown } | null)?.renames;
    return Array.isArray(renames) ? renames.filter(isEntry) : [];
  }
}

function isEntry(e: unknown): e is RenameJournalEntry {
  if (!e || typeof e !== "object") return false;
  const x = e as Record<string, unknown>;
  const str = (v: unknown) => typeof v === "string";
  return (
    str(x.id) &&
    str(x.started) &&
    str(x.client) &&
    str(x.tool) &&
    str(x.path) &&
    str(x.new_path) &&
    (x.kind === "file" || x.kind === "folder") &&
    Array.isArray(x.files) &&
    x.files.every((f) => Array.isArray(f) && f.length === 2 && str(f[0]) && str(f[1])) &&
    Array.isArray(x.notes) &&
    x.notes.every(str)
  );
}

export interface FinishResult extends RecoveredRename {
  /** The notes rewritten (new paths), for the commit. */
  updatedPaths: string[];
}

/** Finishes one interrupted rename (see the file comment). Throws only what the vault port throws. */
export async function finishInterruptedRename(
  port: VaultPort,
  e: RenameJournalEntry,
  warn: (message: string) => void,
): Promise<FinishResult> {
  const base = { path: e.path, new_path: e.new_path, interrupted_at: e.started, moved_at_start: false, links_updated: 0, notes_updated: 0, updatedPaths: [] };
  const exists = (p: string) => port.stat(p) !== null || port.isFolder(p);
  const oldThere = exists(e.path);
  const newThere = exists(e.new_path);
  if (oldThere && !newThere) {
    // Nothing moved: make the move now, with its link updates (the port rewrites links itself).
    const res = await port.rename(e.path, e.new_path);
    return { ...base, outcome: "finished", moved_at_start: true, links_updated: res.linksUpdated, notes_updated: res.notesUpdated, updatedPaths: res.updatedPaths ?? [] };
  }
  if (!newThere) {
    return { ...base, outcome: "dropped", reason: `neither "${e.path}" nor "${e.new_path}" exists now (moved or deleted while the server was down)` };
  }
  // Moved. The files whose move holds now (the new path there, the old one not taken again).
  const renames = new Map<string, string>();
  for (const [from, to] of e.files) if (port.stat(to) !== null && port.stat(from) === null) renames.set(from, to);
  if (renames.size === 0) {
    return { ...base, outcome: "dropped", reason: `"${e.path}" exists again beside "${e.new_path}"; links to it were left as they are` };
  }
  const undo = new Map<string, string>();
  for (const [from, to] of renames) undo.set(to, from);
  const before = new LinkResolver();
  const after = new LinkResolver();
  for (const f of port.listFiles()) {
    before.add(undo.get(f.path) ?? f.path);
    after.add(f.path);
  }
  const updatedPaths: string[] = [];
  let links = 0;
  for (const oldSource of e.notes) {
    const source = renames.get(oldSource) ?? oldSource;
    if (!isNotePath(source) || port.stat(source) === null) continue;
    const rewrite = (text: string) =>
      rewriteLinks(
        text,
        parseNote(text),
        oldSource,
        source,
        renames,
        (lp, src) => {
          const target = before.resolve(lp, src);
          if (target === null) return null;
          const now = after.resolve(lp, source);
          // Already right (rewritten before the crash, or by the owner since): leave it.
          if (now === (renames.get(target) ?? target)) return null;
          // A link to a file that did not move that resolves now (a moved note's relative link, already recomputed).
          if (now !== null && !renames.has(target)) return null;
          return target;
        },
        (target, src) => shortestLinkpath(target, src, after),
      );
    let count = 0;
    try {
      if (rewrite(await port.read(source)).count === 0) continue;
      await port.process(source, (text) => {
        const r = rewrite(text);
        count = r.count;
        return r.text;
      });
    } catch (err) {
      warn(`Could not update links in "${source}" while finishing the rename of "${e.path}": ${(err as Error).message}`);
      continue;
    }
    if (count > 0) {
      links += count;
      updatedPaths.push(source);
    }
  }
  return { ...base, outcome: "finished", links_updated: links, notes_updated: updatedPaths.length, updatedPaths };
}
