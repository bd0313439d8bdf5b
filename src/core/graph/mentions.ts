import type { NoteMetadata } from "../metadata";
import type { IndexStatus, SearchRequest, SearchResponse } from "../search/types";
import { basenameOf, type VaultPort } from "../vault";
import type { LinkGraph } from "./link-graph";
import type { GraphScheduler } from "./types";

/** What the unlinked-mentions finder needs of the search service (all of it optional but `search`). */
export interface MentionSearch {
  search(req: SearchRequest): SearchResponse | Promise<SearchResponse>;
  /** The paths `search` would return, without sections or snippets (used when present: cheaper). */
  matchPaths?(req: SearchRequest): { paths: string[]; total: number };
  status?(): IndexStatus;
  hasPendingWork?(): boolean;
  /** False while the index does not cover the vault yet (loading, first build): then the notes are read instead. */
  readonly ready?: boolean;
}

export interface UnlinkedMention {
  /** The note that mentions the target without linking it. */
  path: string;
  title: string;
  /** 1-based. */
  line: number;
  /** The line, trimmed (clipped around the mention when long). */
  text: string;
  /** The title or alias that was found. */
  matched: string;
}

export interface MentionsResult {
  mentions: UnlinkedMention[];
  /** Every mention found, or null when there are more than `limit` (reading stopped there). */
  total: number | null;
  truncated: boolean;
  /** `search`: candidates from the keyword index, then verified; `scan`: every note read. */
  method: "search" | "scan";
  /** True when the search index had changes it had not applied yet. */
  stale: boolean;
}

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]/;
const MAX_TEXT = 200;
const SEARCH_CANDIDATES = 2000;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Case-insensitive whole-word pattern for a title or alias (any run of whitespace matches the spaces).
 * Scripts written without spaces (CJK) match anywhere: there are no word boundaries to require.
 */
export function mentionPattern(name: string): RegExp | null {
  const n = name.normalize("NFC").trim();
  if (!n) return null;
  const body = n.split(/\s+/).map(escapeRegExp).join("\\s+");
  if (CJK.test(n)) return new RegExp(body, "iu");
  return new RegExp(`(?<![\\p{L}\\p{N}\\p{M}_])${body}(?![\\p{L}\\p{N}\\p{M}_])`, "iu");
}

/** Text with link/embed spans and the frontmatter blanked out (same length, line breaks kept). */
function maskedText(text: string, meta: NoteMetadata | null): { masked: string; firstBodyLine: number } {
  let masked = text;
  if (meta) {
    const spans: [number, number][] = [];
    for (const l of meta.links ?? []) spans.push([l.position.start.offset, l.position.end.offset]);
    for (const e of meta.embeds ?? []) spans.push([e.position.start.offset, e.position.end.offset]);
    if (spans.length > 0) {
      spans.sort((a, b) => a[0] - b[0]);
      let out = "";
      let pos = 0;
      for (const [s0, e0] of spans) {
        const s = Math.max(s0, pos);
        const e = Math.min(e0, text.length);
        if (e <= s) continue;
        out += text.slice(pos, s) + text.slice(s, e).replace(/[^\n]/g, " ");
        pos = e;
      }
      masked = out + text.slice(pos);
    }
  }
  const firstBodyLine = meta?.frontmatterPosition ? meta.frontmatterPosition.end.line + 1 : 0;
  return { masked, firstBodyLine };
}

function clipAround(line: string, index: number, length: number): string {
  const l = line.replace(/\r$/, "");
  if (l.trim().length <= MAX_TEXT) return l.trim();
  const start = Math.max(0, index - Math.floor((MAX_TEXT - length) / 2));
  const end = Math.min(l.length, start + MAX_TEXT);
  return (start > 0 ? "…" : "") + l.slice(start, end).trim() + (end < l.length ? "…" : "");
}

/**
 * Notes the keyword index says hold one of the names as a phrase (stemmed: a superset of the exact
 * mentions), at most `cap` per name; `complete` when no name had more. Null when the index cannot be
 * used (absent, not ready, a name it cannot match on, or an error).
 */
async function searchCandidates(search: MentionSearch | undefined, names: string[], cap: number): Promise<{ paths: Set<string>; complete: boolean } | null> {
  if (!search) return null;
  try {
    // An index that does not cover the vault yet would miss mentions in the notes it lacks.
    if (search.ready === false) return null;
    if (search.status && search.status().state !== "queryable") return null;
    const paths = new Set<string>();
    let complete = true;
    for (const name of names) {
      if (!/[\p{L}\p{N}]/u.test(name)) return null; // nothing the keyword index could match on
      const req: SearchRequest = { query: `"${name.replace(/"/g, " ")}"`, limit: cap, chunksPerFile: 1, snippetWords: 1 };
      if (search.matchPaths) {
        const res = search.matchPaths(req);
        if (res.total > res.paths.length) complete = false;
        for (const p of res.paths) paths.add(p);
      } else {
        const res = await search.search(req);
        if (res.total_files > res.hits.length) complete = false;
        for (const h of res.hits) paths.add(h.path);
      }
    }
    return { paths, complete };
  } catch {
    return null;
  }
}

/**
 * How many candidates the index is asked for: a few first (most names are rare and fit), then many
 * (a common name usually reaches the limit among them); past that the remaining notes are read.
 */
const SEARCH_TIERS = [100, SEARCH_CANDIDATES];
/** Notes read at once while verifying. */
const READ_BATCH = 16;

export interface MentionsRequest {
  port: VaultPort;
  graph: LinkGraph;
  search?: MentionSearch;
  scheduler: GraphScheduler;
  sliceMs: number;
  /** The note whose mentions are wanted. */
  target: string;
  /** Its title and aliases. */
  names: string[];
  limit: number;
}

/**
 * Obsidian's "Unlinked mentions": notes whose text names the target (title or an alias, whole words,
 * any case) on a line that does not link to it. Text inside links and the frontmatter does not count.
 */
export async function findUnlinkedMentions(req: MentionsRequest): Promise<MentionsResult> {
  const { port, graph, target } = req;
  const patterns: { name: string; re: RegExp }[] = [];
  const seen = new Set<string>();
  for (const name of req.names) {
    const k = name.trim().toLowerCase();
    if (!k || seen.has(k)) continue;
    seen.add(k);
    const re = mentionPattern(name);
    if (re) patterns.push({ name: name.trim(), re });
  }
  const mentions: UnlinkedMention[] = [];
  const checked = new Set<string>([target]);
  let stopped = false;
  let sliceStart = req.scheduler.now();

  /** Reads and checks notes (a few at a time) until `limit` + 1 mentions are known. */
  const verify = async (paths: string[]): Promise<void> => {
    const todo = paths.filter((p) => !checked.has(p) && graph.hasNote(p)).sort();
    for (let i = 0; i < todo.length && !stopped; i += READ_BATCH) {
      const batch = todo.slice(i, i + READ_BATCH);
      const texts = await Promise.all(batch.map((p) => port.read(p).catch(() => null)));
      for (let j = 0; j < batch.length && !stopped; j++) {
        checked.add(batch[j]);
        const text = texts[j];
        if (text !== null) scanNote(batch[j], text);
      }
      if (req.scheduler.now() - sliceStart >= req.sliceMs) {
        await req.scheduler.yield();
        sliceStart = req.scheduler.now();
      }
    }
  };

  const scanNote = (path: string, text: string): void => {
    const meta = port.getMetadata(path);
    const linkedLines = new Set<number>();
    for (const l of graph.links(path) ?? []) if (l.target === target && l.line !== null) linkedLines.add(l.line);
    const { masked, firstBodyLine } = maskedText(text, meta);
    // A mention on a line is a match in the whole text too: a note with none is done without splitting it.
    if (!patterns.some((p) => p.re.test(masked))) return;
    const lines = masked.split("\n");
    let original: string[] | null = null;
    for (let i = firstBodyLine; i < lines.length; i++) {
      if (linkedLines.has(i + 1)) continue;
      for (const p of patterns) {
        const m = p.re.exec(lines[i]);
        if (!m) continue;
        if (mentions.length >= req.limit) {
          stopped = true;
          return;
        }
        original ??= text.split("\n");
        mentions.push({ path, title: basenameOf(path), line: i + 1, text: clipAround(original[i] ?? "", m.index, m[0].length), matched: p.name });
        break;
      }
    }
  };

  let method: MentionsResult["method"] = "scan";
  let stale = false;
  let complete = false;
  if (patterns.length === 0) complete = true;
  else {
    for (const cap of SEARCH_TIERS) {
      const found = await searchCandidates(req.search, patterns.map((p) => p.name), cap);
      if (!found) break;
      method = "search";
      stale = !!req.search?.hasPendingWork?.();
      await verify([...found.paths]);
      if (stopped || found.complete) {
        complete = true;
        break;
      }
    }
    // No index, or a name too common for it: read the remaining notes.
    if (!complete) await verify([...graph.notes()]);
  }
  mentions.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line));
  return { mentions, total: stopped ? null : mentions.length, truncated: stopped, method, stale };
}
