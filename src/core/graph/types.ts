import type { LinkType } from "../metadata";

/** One link, embed or frontmatter link of a note, with its resolution. */
export interface GraphLink {
  /** The note the link is written in. */
  readonly source: string;
  /** The visible file it resolves to, or null (missing, or hidden, which must look missing). */
  target: string | null;
  /** The link target as written, fragment included (`Folder/Note#Heading`). */
  readonly link: string;
  /** The path part of `link` ("" for a link inside the same note, `[[#Heading]]`). */
  readonly linkpath: string;
  /** Heading (`H1#H2` for nested) or `^block`, without the leading `#`; null when none. */
  readonly fragment: string | null;
  /** The exact source text, e.g. `[[Note|alias]]`. */
  readonly original: string;
  readonly displayText: string | undefined;
  readonly type: LinkType;
  /** 1-based line; for frontmatter links filled in on demand (null until then, or when not found). */
  line: number | null;
  /** The frontmatter property holding a frontmatter link (`related`, `related.0`). */
  readonly property: string | undefined;
  /** Lower-cased file name the link names (last path segment, `.md` dropped): who to re-resolve when files come and go. */
  readonly key: string;
}

/** How background work gives the event loop back. Injectable so tests can count yields. */
export interface GraphScheduler {
  now(): number;
  yield(): Promise<void>;
}

export interface GraphOptions {
  /** Background work runs in slices of about this many ms, then yields (default 10). */
  sliceMs: number;
  /** Changes are applied in the background this long after the last event (default 30). */
  debounceMs: number;
  /** A query applies pending changes synchronously for at most this long before answering stale (default 25). */
  querySyncMs: number;
  /** Upper bound of `wait_for_pending_writes` (default 3000). */
  maxWaitMs: number;
}

export const DEFAULT_GRAPH_OPTIONS: GraphOptions = { sliceMs: 10, debounceMs: 30, querySyncMs: 25, maxWaitMs: 3000 };
