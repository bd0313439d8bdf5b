/** Parsers of git's machine-readable output (`-z` forms only: paths are never quoted there). */

export type ChangeStatus = "added" | "modified" | "deleted" | "renamed" | "copied" | "type_changed";

export interface RepoChange {
  status: ChangeStatus;
  /** Repository-relative path (the new one for renames and copies). */
  path: string;
  /** The old path of a rename or copy. */
  from?: string;
}

export interface RepoCommit {
  sha: string;
  parents: string[];
  /** Author time, seconds since the epoch. */
  authorTime: number;
  /** Committer time, seconds since the epoch (what `--since`/`--until` compare). */
  commitTime: number;
  author: string;
  email: string;
  message: string;
  changes: RepoChange[];
}

/** The `--format` the log parser reads: a record separator, fields separated by US, then `-z` name-status. */
export const LOG_FORMAT = "--format=%x1e%H%x1f%P%x1f%at%x1f%ct%x1f%an%x1f%ae%x1f%B%x1f";

/** A commit message longer than this is cut (history answers are for reading, not for replaying). */
export const MAX_MESSAGE_CHARS = 2000;

function statusOf(code: string): ChangeStatus | null {
  switch (code[0]) {
    case "A":
      return "added";
    case "M":
      return "modified";
    case "D":
      return "deleted";
    case "R":
      return "renamed";
    case "C":
      return "copied";
    case "T":
      return "type_changed";
    default:
      return null;
  }
}

/** Parses one record of `git log LOG_FORMAT --name-status -z` (the text after its \x1e). */
export function parseLogRecord(record: string): RepoCommit | null {
  const fields: string[] = [];
  let at = 0;
  for (let i = 0; i < 7; i++) {
    const end = record.indexOf("\x1f", at);
    if (end < 0) return null;
    fields.push(record.slice(at, end));
    at = end + 1;
  }
  const [sha, parents, authorTime, commitTime, author, email, message] = fields;
  if (!/^[0-9a-f]{40,64}$/.test(sha)) return null;
  const tokens = record.slice(at).split("\0");
  const changes: RepoChange[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i].replace(/^\n+/, "");
    if (!t) continue;
    const status = statusOf(t);
    if (!status || !/^[A-Z][0-9]*$/.test(t)) continue;
    if (status === "renamed" || status === "copied") {
      const from = tokens[i + 1];
      const path = tokens[i + 2];
      i += 2;
      if (from !== undefined && path !== undefined) changes.push({ status, path, from });
    } else {
      const path = tokens[i + 1];
      i += 1;
      if (path !== undefined) changes.push({ status, path });
    }
  }
  const trimmed = message.trim();
  return {
    sha,
    parents: parents ? parents.split(" ") : [],
    authorTime: Number(authorTime),
    commitTime: Number(commitTime),
    author,
    email,
    message: trimmed.length > MAX_MESSAGE_CHARS ? trimmed.slice(0, MAX_MESSAGE_CHARS) + "…" : trimmed,
    changes,
  };
}

/**
 * Feeds chunks of `git log` output and hands out whole commits as they complete, so a long log is
 * parsed while git still writes it, a chunk (64 KB at most) at a time.
 */
export class LogStreamParser {
  private rest = "";
  constructor(private readonly onCommit: (c: RepoCommit) => boolean | void) {}

  /** Returns false when the consumer asked to stop. */
  push(chunk: string): boolean {
    const text = this.rest + chunk;
    const parts = text.split("\x1e");
    this.rest = parts.pop() ?? "";
    for (const p of parts) {
      if (!p) continue;
      const c = parseLogRecord(p);
      if (c && this.onCommit(c) === false) return false;
    }
    return true;
  }

  end(): void {
    if (this.rest) {
      const c = parseLogRecord(this.rest);
      this.rest = "";
      if (c) this.onCommit(c);
    }
  }
}

export interface StatusEntry {
  /** Two-letter porcelain code, e.g. " M", "??", "R ". */
  code: string;
  path: string;
  from?: string;
}

/** Parses `git status --porcelain=v1 -z`. */
export function parseStatus(out: string): StatusEntry[] {
  const tokens = out.split("\0");
  const entries: StatusEntry[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i];
    if (t.length < 4) continue;
    const code = t.slice(0, 2);
    const path = t.slice(3);
    if (code[0] === "R" || code[0] === "C" || code[1] === "R" || code[1] === "C") {
      entries.push({ code, path, from: tokens[i + 1] });
      i++;
    } else entries.push({ code, path });
  }
  return entries;
}

/** What a porcelain status code means for a reader. */
export function statusEntryKind(code: string): ChangeStatus | "untracked" | "conflicted" {
  if (code === "??") return "untracked";
  if (code.includes("U") || code === "AA" || code === "DD") return "conflicted";
  if (code.includes("R")) return "renamed";
  if (code.includes("D")) return "deleted";
  if (code.includes("A")) return "added";
  if (code.includes("T")) return "type_changed";
  return "modified";
}

/** NUL-separated path lists (`--name-only -z`, `ls-files -z`). */
export function parsePathList(out: string): string[] {
  return out.split("\0").filter((p) => p.length > 0);
}
