import { z } from "zod";
import { VaultError } from "../../core/errors";
import { formatGrep } from "../../core/lookup";
import type { IndexStatus, SearchRequest, SearchService } from "../../core/search";
import { hybridSearch, semanticSearch, type RankedResponse } from "../../core/search/hybrid";
import { describeEmbeddings, embeddingsMeta, trimStop, type SemanticService } from "../../core/search/vector/semantic-service";
import { errText } from "../../core/strings";
import { whenListed } from "../../core/vault";
import type { CoreServices } from "../../core/services";
import { defineTool, READ_ONLY, type ToolContext, type ToolDef } from "../tool";

/** The longest a tool waits for the index to catch up when asked to (`wait_for_pending_writes`). */
export const MAX_FRESHNESS_WAIT_MS = 5000;

/** Search modes the tool accepts; those the server cannot answer yet are refused with a clear message. */
export const SEARCH_MODES = ["keyword", "semantic", "hybrid"] as const;

// Waits up to 5 s (the README says so; the name says the rest).
const waitForPendingWrites = z.boolean().default(false);

function searchOf(services: CoreServices): SearchService {
  return services.search;
}

/** How far the index has come while it does not cover the vault yet (start-up), for the answer. */
export type IndexLoading = { readiness: Exclude<IndexStatus["readiness"], "ready">; notes_covered: number; notes_total: number };

const indexLoading = z
  .object({ readiness: z.enum(["loading", "checking", "indexing"]), notes_covered: z.number(), notes_total: z.number() })
  .optional()
  .describe("Present when the index was still loading: the answer may lack notes; search again shortly.");

/**
 * Before a search reads the index: while the index does not cover the vault yet (the saved index
 * loading, a first build), waits for it, bounded (5 s, never past the call's deadline, ended by
 * cancellation); then, when asked to, for pending work within what is left of the same bound.
 * Ordinary pending work (a note just changed) never makes a search wait unless asked. Returns
 * whether the index still does not cover the vault (with its progress) and whether it is behind.
 */
async function freshness(search: SearchService, wait: boolean, ctx: Pick<ToolContext, "deadline" | "signal">): Promise<{ loading: IndexLoading | null; stale: boolean }> {
  if (search.ready && !wait) return { loading: null, stale: search.hasPendingWork() };
  const until = waitUntil(ctx.deadline);
  if (!search.ready && until > Date.now()) await search.whenReady(until - Date.now(), ctx.signal);
  if (wait && search.ready && search.hasPendingWork() && until > Date.now() && !ctx.signal?.aborted) await (search.waitForPending ? search.waitForPending(until - Date.now(), ctx.signal) : search.waitForIdle(until - Date.now()));
  return { loading: loadingOf(search), stale: !search.ready || search.hasPendingWork() };
}

/** Until when a call may wait for an index at start-up: 5 s from now, never past the call's deadline. */
export function waitUntil(deadline: number): number {
  return Math.min(Date.now() + MAX_FRESHNESS_WAIT_MS, deadline);
}

function loadingOf(search: SearchService): IndexLoading | null {
  if (search.ready) return null;
  const s = search.status();
  return s.readiness === "ready" ? null : { readiness: s.readiness, notes_covered: s.notes_covered, notes_total: s.notes_total };
}

const READINESS_TEXT: Record<IndexLoading["readiness"], string> = {
  loading: "reading the saved index",
  checking: "comparing it with the notes on disk",
  indexing: "indexing notes",
};

/** "reading the saved index: 1200 of 3000 notes, 40%". */
function loadingProgress(l: IndexLoading): string {
  const pct = l.notes_total > 0 ? Math.floor((100 * l.notes_covered) / l.notes_total) : 0;
  return `${READINESS_TEXT[l.readiness]}: ${l.notes_covered} of ${l.notes_total} notes, ${pct}%`;
}

// Which engines found a note (semantic and hybrid modes).
const foundBy = z.array(z.enum(["keyword", "semantic"])).optional();

const section = z.object({
  heading: z.string().describe('Heading path, "A > B" ("" before the first heading); pass it to read as section.'),
  content: z.string().describe("A snippet centred on the matches (snippet_words), or the whole section."),
  line_start: z.number(),
  line_end: z.number(),
});

export const hit = z.object({
  path: z.string(),
  score: z.number(),
  sections: z.array(section),
  missing: z.array(z.string()).optional().describe("Query words this note lacks."),
  found_by: foundBy,
});

/** Search answers are paid for in a model's context on every call: lean by default, more on request. */
const DEFAULT_SECTIONS = 1;
const DEFAULT_SNIPPET_WORDS = 18;

export const searchTool = defineTool({
  name: "search",
  title: "Search notes",
  description:
    'Ranked full-text search over note contents: the best notes with their best matching section. Supports "exact phrases", -exclude, prefix*, OR. For titles use find_notes.',
  input: {
    query: z.string().describe('Words; "a phrase", -exclude, prefix*, OR.'),
    limit: z.number().int().min(1).max(50).default(10).describe("Notes to return (1–50)."),
    folder: z.string().optional().describe("Only notes in this folder (recursively)."),
    filters: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .optional()
      .describe('Frontmatter field → value, e.g. {"tags": "craft"}; a list matches if it has the value.'),
    chunks_per_file: z.number().int().min(0).max(10).default(DEFAULT_SECTIONS).describe("Matching sections per note (1–10)."),
    snippet_words: z.number().int().min(0).max(2000).default(DEFAULT_SNIPPET_WORDS).describe("Words per snippet; 0 = the whole section."),
    mode: z.enum(SEARCH_MODES).default("keyword").describe("semantic, hybrid: by meaning"),
    wait_for_pending_writes: waitForPendingWrites,
  },
  output: {
    hits: z.array(hit),
    total_files: z.number().describe("Notes that matched (before limit)."),
    relaxed: z.boolean().describe("True when no note had every word, so these match only some of them."),
    partial_files: z.number().optional().describe("Notes with only some of the words, after those with all."),
    mode: z.string(),
    index_loading: indexLoading,
  },
  annotations: READ_ONLY,
  access: "read",
  example: { query: "garden layout", limit: 10 },
  whileOpening: true,
  handler: async (args, { services, deadline, signal }) => {
    if (args.mode !== "keyword" && !services.searchModes().includes(args.mode)) {
      throw new VaultError(
        "invalid_argument",
        `Search mode "${args.mode}" needs semantic search, which is off on this server (the owner turns it on in the plugin's settings, or starts the headless server with --embeddings); use mode "keyword" (the default).`,
      );
    }
    if (args.chunks_per_file < 1) {
      throw new VaultError("invalid_argument", "chunks_per_file must be at least 1 (each result needs a section); use 1 for the single best section per note.");
    }
    const query = args.query.trim();
    if (!query) throw new VaultError("invalid_argument", 'The query is empty; give words to look for, e.g. "sync settings".');
    const search = searchOf(services);
    // Keyword search answers while the vault is still being opened (from its index, saying when the
    // index does not cover the vault yet): it needs the listing only. The other modes wait.
    if (args.mode === "keyword") await whenListed(services.port);
    else await services.port.ready();
    const folder = services.vault.resolveFolder(args.folder);
    const status = search.status();
    if (status.state === "failed") {
      throw new VaultError(
        "unavailable",
        `The search index is not usable (${status.last_error ?? "unknown error"}). Call reindex to rebuild it; meanwhile grep and find_notes still work.`,
      );
    }
    const { loading, stale } = await freshness(search, args.wait_for_pending_writes, { deadline, signal });
    const req = { query, limit: args.limit, folder: folder || undefined, filters: args.filters, chunksPerFile: args.chunks_per_file, snippetWords: args.snippet_words };
    if (args.mode !== "keyword" && services.semantic) return meaningSearch(services, services.semantic, args.mode, req, stale, loading, { deadline, signal });
    const res = await search.search(req);
    // Work pending when the call came in (a warm start's reconciliation, say) may have ended while it
    // searched: said as it is when the answer is made. A search whose index changes under it scores
    // again on the index as it is (InvertedIndex.searchSliced); one over a partial index stays stale.
    const staleNow = stale && (loading !== null || !search.ready || search.hasPendingWork());
    // What a model needs of each hit; the note's title, folder and frontmatter are in its path or a read away.
    const hits = res.hits.map((h) => ({
      path: h.path,
      score: Math.round(h.score * 100) / 100,
      sections: h.sections.map((c) => ({ heading: c.heading, content: c.content, line_start: c.line_start, line_end: c.line_end })),
      ...(h.missing ? { missing: h.missing } : {}),
    }));
    const structured = {
      hits,
      total_files: res.total_files,
      relaxed: res.relaxed,
      ...(res.partial_files ? { partial_files: res.partial_files } : {}),
      mode: args.mode,
      ...(loading ? { index_loading: loading } : {}),
    };
    return { structured, text: formatSearch(query, structured, staleNow, undefined, [], loading), meta: { index_stale: staleNow, ...(loading ? { index_loading: loading } : {}) } };
  },
});

/**
 * Semantic and hybrid modes: the query embedded, then the nearest chunks (or the fused rankings)
 * grouped per note. When the query cannot be embedded (the provider is down), semantic answers from
 * keyword search and hybrid from its keyword half; `_meta` says so, and how far embedding has come.
 */
async function meaningSearch(
  services: CoreServices,
  semantic: SemanticService,
  mode: "semantic" | "hybrid",
  req: SearchRequest,
  stale: boolean,
  loading: IndexLoading | null,
  ctx: Pick<ToolContext, "deadline" | "signal">,
) {
  const language = services.searchLanguage;
  // The saved vectors load after the keyword index: wait for them too (bounded), as for the index.
  if (!semantic.loaded) {
    const until = waitUntil(ctx.deadline);
    if (until > Date.now()) await semantic.whenLoaded(until - Date.now(), ctx.signal);
  }
  let vector: Float32Array | null = null;
  let failure: string | null = null;
  try {
    vector = await semantic.embedQuery(req.query);
  } catch (e) {
    failure = errText(e);
  }
  const st = semantic.status();
  const embeddings = embeddingsMeta(st, failure);
  let used: string = mode;
  let res: RankedResponse;
  if (mode === "semantic" && vector) res = await semanticSearch(semantic, services.port, req, vector, language);
  else if (mode === "hybrid") res = await hybridSearch(services.search, semantic, services.port, req, vector, language);
  else {
    used = "keyword";
    res = await hybridSearch(services.search, semantic, services.port, req, null, language);
  }
  const hits = res.hits.map((h) => ({
    path: h.path,
    score: Math.round(h.score * 1000) / 1000,
    sections: h.sections.map((c) => ({ heading: c.heading, content: c.content, line_start: c.line_start, line_end: c.line_end })),
    ...(h.missing ? { missing: h.missing } : {}),
    found_by: h.found_by,
  }));
  const structured = { hits, total_files: res.total_files, relaxed: false, mode: used, ...(loading ? { index_loading: loading } : {}) };
  const notes: string[] = [];
  if (failure) notes.push(`(Semantic search could not embed the query: ${trimStop(failure)}; ${mode === "semantic" ? "these are keyword results" : "these are its keyword half"}.)`);
  else if (st.state === "loading") notes.push("(The saved embeddings are still loading: results by meaning are missing from this answer; search again in a few seconds.)");
  else if (st.state !== "ready" || st.chunks_embedded < st.chunks_total) notes.push(`(${describeEmbeddings(st)} Notes not embedded yet are missing from the results by meaning.)`);
  const head = used === "keyword" ? `Keyword results for "${req.query}"` : mode === "semantic" ? `Closest in meaning to "${req.query}"` : `Keyword and meaning, fused, for "${req.query}"`;
  const emptyYet = !res.hits.length && !loading && st.state === "loading" && used !== "keyword" ? `Nothing found for "${req.query}" YET — not a final answer:` : undefined;
  const text = formatSearch(req.query, { ...structured, relaxed: false }, stale, res.hits.length ? `${head}; top ${res.hits.length}:` : emptyYet, notes, loading);
  return { structured, text, meta: { index_stale: stale, embeddings, ...(loading ? { index_loading: loading } : {}) } };
}

/** Text beside the structured answer: a line per section (the same facts; the last heading, the snippet shortened). */
function formatSearch(
  query: string,
  r: { hits: z.infer<typeof hit>[]; total_files: number; relaxed: boolean; partial_files?: number },
  stale: boolean,
  header?: string,
  notes: string[] = [],
  loading: IndexLoading | null = null,
): string {
  const out: string[] = [];
  if (loading && r.hits.length === 0) {
    // Never an empty answer that reads as final while the index lacks notes.
    out.push(
      `Nothing found for "${query}" YET — not a final answer: the search index is still loading (${loadingProgress(loading)}). Search again in a few seconds (get_index_status shows the progress).`,
    );
  } else if (header) {
    out.push(header);
  } else if (r.hits.length === 0) {
    out.push(`No notes match "${query}". Try fewer or other words, a prefix (word*), or find_notes for titles.`);
  } else if (r.relaxed) {
    out.push(`No note has every word of "${query}"; ${r.total_files} have some of them; top ${r.hits.length}:`);
  } else {
    const more = r.partial_files ? `, then ${r.partial_files} with some of them` : "";
    out.push(`${r.total_files} notes match every word of "${query}"${more}; top ${r.hits.length}:`);
  }
  for (const h of r.hits) {
    for (const [i, c] of h.sections.entries()) {
      const heading = c.heading.split(" > ").pop();
      const where = `${i === 0 ? h.path : "  "} (${heading ? `${heading}, ` : ""}lines ${c.line_start}-${c.line_end})`;
      const by = i === 0 && h.found_by ? ` [${h.found_by.join("+")}]` : "";
      out.push(`${where}${i === 0 && h.missing ? ` [lacks ${h.missing.join(", ")}]` : ""}${by}: ${oneLine(c.content, 64)}`);
    }
  }
  out.push(...notes);
  if (loading && r.hits.length > 0) out.push(`(The search index is still loading (${loadingProgress(loading)}): notes it has not read yet are missing from these results; search again in a few seconds for a complete answer.)`);
  else if (stale && !loading) out.push("(The index is still catching up with recent changes; pass wait_for_pending_writes: true for fresh results.)");
  return out.join("\n");
}

/** `text` on one line, cut to `max` characters with "…" (never between the halves of a surrogate pair). */
export function oneLine(text: string, max: number): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t.length <= max) return t;
  // Not between the halves of a surrogate pair.
  const end = /[\ud800-\udbff]/.test(t[max - 2]) ? max - 2 : max - 1;
  return `${t.slice(0, end)}…`;
}

export const findNotesTool = defineTool({
  name: "find_notes",
  title: "Find notes by name",
  description: "Finds notes by title, alias or path, typo-tolerant (\"meetng not\" finds \"Meeting notes\"). search looks inside notes.",
  input: {
    query: z.string().describe("Part of a note's title, alias or path."),
    limit: z.number().int().min(1).max(100).default(10),
    wait_for_pending_writes: waitForPendingWrites,
  },
  output: {
    notes: z.array(
      z.object({
        path: z.string(),
        title: z.string(),
        matched_alias: z.string().optional().describe("The alias that matched, when it was not the title."),
        score: z.number(),
      }),
    ),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { query: "project plan" },
  handler: async (args, { services }) => {
    const query = args.query.trim();
    if (!query) throw new VaultError("invalid_argument", 'The query is empty; give part of a note title, e.g. "meeting".');
    const lookup = services.lookup;
    await services.port.ready();
    const notes = await lookup.findNotes(query, args.limit);
    const text = notes.length
      ? notes.map((n) => `${n.path}${n.matched_alias ? ` (alias "${n.matched_alias}")` : ""}`).join("\n")
      : `No note title, alias or path matches "${query}". Try search to look inside notes, or list_documents.`;
    // The name index applies vault changes before answering, so it is never behind.
    return { structured: { notes }, text, meta: { index_stale: lookup.hasPendingWork() } };
  },
});

export const grepTool = defineTool({
  name: "grep",
  title: "Grep notes",
  description:
    "Lines of notes containing exact text or a regular expression, as path:line: text. For exact strings and TODOs; search is for topics.",
  input: {
    query: z.string().describe("Text to find (literal unless regex)."),
    regex: z.boolean().default(false).describe("query is a regular expression (no backreferences or lookaround)."),
    case_sensitive: z.boolean().default(false),
    folder: z.string().optional().describe("Only notes in this folder (recursively)."),
    pattern: z.string().optional().describe('Glob on note paths, e.g. "Projects/**" or "*meeting*".'),
    context_lines: z.number().int().min(0).max(5).default(0).describe("Lines around each match."),
    limit: z.number().int().min(1).max(1000).default(100).describe("Most lines to return."),
  },
  output: {
    matches: z.array(
      z.object({
        path: z.string(),
        line: z.number().describe("1-based line in the file."),
        text: z.string(),
        before: z.array(z.string()).optional(),
        after: z.array(z.string()).optional(),
      }),
    ),
    truncated: z.boolean().describe("True when more matches exist than were returned."),
    truncated_reason: z.enum(["limit", "size", "time_limit"]).optional().describe("time_limit: notes after files_scanned were not searched."),
    files_scanned: z.number(),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { query: "TODO", folder: "Projects" },
  handler: async (args, { services, signal, deadline }) => {
    const lookup = services.lookup;
    await services.port.ready();
    const folder = services.vault.resolveFolder(args.folder);
    const res = await lookup.grep({
      deadline,
      pattern: args.query,
      regex: args.regex,
      caseSensitive: args.case_sensitive,
      folder,
      glob: args.pattern,
      contextLines: args.context_lines,
      limit: args.limit,
      signal,
    });
    return { structured: res, text: formatGrep(res) };
  },
});

export const listTagsTool = defineTool({
  name: "list_tags",
  title: "List tags",
  description: "Tags (frontmatter and inline) or the values of another frontmatter field, with how many notes have each.",
  input: {
    field: z.string().default("tags").describe('Frontmatter field; "tags" also counts inline #tags.'),
    folder: z.string().optional().describe("Only notes in this folder (recursively)."),
    limit: z.number().int().min(1).max(5000).default(500),
    wait_for_pending_writes: waitForPendingWrites,
  },
  output: {
    field: z.string(),
    values: z.array(z.object({ value: z.string(), count: z.number() })),
    total_values: z.number(),
    notes_scanned: z.number(),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { field: "tags" },
  handler: async (args, { services }) => {
    const field = args.field.trim();
    if (!field) throw new VaultError("invalid_argument", 'The field is empty; give a frontmatter field name such as "tags" or "status".');
    const lookup = services.lookup;
    await services.port.ready();
    const folder = services.vault.resolveFolder(args.folder);
    // Values come from the vault's live metadata, which has no queue of its own to wait for.
    const r = await lookup.listTags(field, folder);
    const values = r.values.slice(0, args.limit);
    const isTags = field === "tags" || field === "tag";
    const text = values.length
      ? values.map((v) => `${isTags ? "#" : ""}${v.value} (${v.count})`).join("\n") + (values.length < r.values.length ? `\n… ${r.values.length - values.length} more; raise limit.` : "")
      : `No note${folder ? ` in "${folder}"` : ""} has a value for "${field}".`;
    return {
      structured: { field: r.field, values, total_values: r.values.length, notes_scanned: r.notes_scanned },
      text,
      meta: { index_stale: false },
    };
  },
});

const statusShape = {
  state: z.enum(["queryable", "building", "failed"]),
  readiness: z
    .enum(["loading", "checking", "indexing", "ready"])
    .describe("ready: the index covers the vault; before that (start-up) searches wait for it a few seconds, then answer with what it has."),
  notes_covered: z.number().describe("Notes the index holds of notes_total: the loading progress."),
  notes_total: z.number(),
  documents_indexed: z.number(),
  documents_total: z.number(),
  queue_depth: z.number(),
  pending_work: z.boolean(),
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
  skipped_total: z.number(),
  last_error: z.string().nullable(),
};

function statusOf(search: SearchService): z.infer<z.ZodObject<typeof statusShape>> {
  const s = search.status();
  return {
    state: s.state,
    readiness: s.readiness,
    notes_covered: s.notes_covered,
    notes_total: s.notes_total,
    documents_indexed: s.documents_indexed,
    documents_total: s.documents_total,
    queue_depth: s.queue_depth,
    pending_work: search.hasPendingWork(),
    skipped: s.skipped.slice(0, 50),
    skipped_total: s.skipped.length,
    last_error: s.last_error,
  };
}

function formatStatus(s: z.infer<z.ZodObject<typeof statusShape>>): string {
  const lines = [`Index ${s.state}: ${s.documents_indexed}/${s.documents_total} notes indexed, ${s.queue_depth} changes queued.`];
  if (s.readiness !== "ready") lines.unshift(`Index still loading (${loadingProgress({ readiness: s.readiness, notes_covered: s.notes_covered, notes_total: s.notes_total })}); searches wait for it up to 5 s, then answer with what it has.`);
  if (s.skipped_total) lines.push(`Skipped ${s.skipped_total}: ${s.skipped.map((k) => `${k.path} (${k.reason})`).join("; ")}`);
  if (s.last_error) lines.push(`Last error: ${s.last_error}`);
  return lines.join("\n");
}

export const indexStatusTool = defineTool({
  name: "get_index_status",
  title: "Search index status",
  description: "The search index's state, progress, skipped notes and last error.",
  input: {},
  output: statusShape,
  annotations: READ_ONLY,
  access: "read",
  example: {},
  handler: async (_args, { services }) => {
    const s = statusOf(searchOf(services));
    return { structured: s, text: formatStatus(s) };
  },
});

export const reindexTool = defineTool({
  name: "reindex",
  title: "Rebuild the search index",
  description: "Re-checks the whole search index in the background (rarely needed: it follows changes itself).",
  input: {},
  output: { queued: z.boolean(), status: z.object(statusShape) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: "read",
  example: {},
  handler: async (_args, { services }) => {
    const search = searchOf(services);
    search.reindex();
    const status = statusOf(search);
    return { structured: { queued: true, status }, text: `Reindex queued. ${formatStatus(status)}` };
  },
});

/** The search-family tools, for `mcp/tools/index.ts`. */
export const searchTools: ToolDef[] = [searchTool, findNotesTool, grepTool, listTagsTool, indexStatusTool, reindexTool];

