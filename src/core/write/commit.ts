/**
 * The commit port of the write service: after each change made through the server, the git
 * feature (when the owner turned "commit changes" on) commits exactly the paths it touched.
 */
export interface CommittedChange {
  /** The tool that made it (`edit`, `rename`…). */
  tool: string;
  /** The MCP client's name. */
  client: string;
  /** The path the change was about (the old path of a rename). */
  path: string;
  /** A rename's new path. */
  newPath?: string;
  /** Every vault path the change touched: the file, a rename's both ends, notes whose links were rewritten. */
  paths: string[];
  /** Those of `paths` that did not exist before the change (git must be told about them). */
  created: string[];
  /**
   * What files were before the change, where the write service knows it (null: the file did not
   * exist): the commit then holds only this change, never the owner's uncommitted edits in them.
   */
  before?: { path: string; content: string | Uint8Array | null; from?: string }[];
  /** Paths that had the owner's uncommitted changes before this one (a rename's notes whose links it rewrote are left out of the commit). */
  uncommittedBefore?: string[];
}

export interface CommitOutcome {
  committed: boolean;
  sha?: string;
  message?: string;
  /** Why nothing was committed, when that is fine (no change, ignored by .gitignore). */
  skipped?: string;
  /** Why the commit failed (the change itself stands). */
  error?: string;
  pushed?: boolean;
  push_error?: string;
  /** Something the owner should know about the commit (their own edits left out of it, earlier commits made first). */
  note?: string;
  /** The commit failed and is kept pending: the next commit or git_sync makes it. */
  pending?: boolean;
}

export interface ChangeCommitter {
  /** Commits one change; null when committing is off. Never throws. */
  commit(change: CommittedChange): Promise<CommitOutcome | null>;
  /** Something went to the vault's trash: keeps it out of git (once); a sentence for the answer when that is new. */
  trashed?(): Promise<string | null>;
  /** Vault paths with uncommitted changes now (null when committing is off), asked before a change whose every path is not known in advance. */
  uncommittedPaths?(): Promise<string[] | null>;
}
