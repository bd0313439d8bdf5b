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
}

export interface ChangeCommitter {
  /** Commits one change; null when committing is off. Never throws. */
  commit(change: CommittedChange): Promise<CommitOutcome | null>;
}
