import { z } from "zod";
import { VaultError } from "../../core/errors";
import type { CoreServices } from "../../core/services";
import { isNotePath, type VaultFile } from "../../core/vault";
import { describeEmbeddings, EMBEDDINGS_STATES, embeddingsMeta as metaOf, type EmbeddingsStatus, type SemanticService } from "../../core/search/vector/semantic-service";
import { extractSection, headingsOf } from "../../core/lookup/section";
import { similarNotes, suggestLinks } from "../../core/search/vector/related";
import { defineTool, READ_ONLY, type ToolContext, type ToolDef } from "../tool";
import { oneLine, waitUntil } from "./search-tools";

/** The semantic engine, or the error that says semantic search is off and how to turn it on. */
function semanticOf(services: CoreServices): SemanticService {
  if (!services.semantic) {
    throw new VaultError(
      "unavailable",
      "Semantic search is off on this server: the owner turns it on in the plugin's settings (Semantic search), or starts the headless server with --embeddings. Meanwhile use search (keyword) and get_backlinks.",
    );
  }
  return services.semantic;
}

/** The semantic engine and the visible note a tool asks about, once the saved vectors are loaded (waiting a few seconds at most). */
async function semanticNote(services: CoreServices, path: string, ctx: Pick<ToolContext, "deadline" | "signal">): Promise<{ semantic: SemanticService; file: VaultFile }> {
  const semantic = semanticOf(services);
  await services.port.ready();
  const file = services.vault.requireFile(path);
  if (!semantic.loaded) {
    const until = waitUntil(ctx.deadline);
    if (until > Date.now()) await semantic.whenLoaded(until - Date.now(), ctx.signal);
  }
  return { semantic, file };
}

const statusShape = {
  provider: z.string(),
  model: z.string(),
  dimension: z.number().nullable(),
  state: z.enum(EMBEDDINGS_STATES as [EmbeddingsStatus["state"], ...EmbeddingsStatus["state"][]]).describe("loading → downloading (the built-in model, once) → building → ready; unavailable while the provider fails (last_error says why)."),
  chunks_embedded: z.number(),
  chunks_total: z.number().describe("Sections found so far; final once counting is false."),
  counting: z.boolean().describe("Notes are still being cut into sections: chunks_total still grows."),
  notes_queued: z.number(),
  chunks_queued: z.number(),
  chunks_refused: z.number(),
  refused_reason: z.string().nullable(),
  last_error: z.string().nullable().describe("Why the state is unavailable; null otherwise."),
  save_error: z.string().nullable().describe("Why the vectors could not be saved (searches still work); null once saved."),
  download: z.object({ file: z.string(), files_done: z.number(), files_total: z.number(), bytes_done: z.number(), bytes_total: z.number() }).nullable(),
};

function formatStatus(s: EmbeddingsStatus): string {
  const queue = s.notes_queued || s.chunks_queued ? ` Queued: ${s.notes_queued} notes, ${s.chunks_queued} sections.` : "";
  return `${describeEmbeddings(s)}${queue}`;
}

/** `_meta` of every semantic answer: how far embedding has come. */
function embeddingsMeta(s: EmbeddingsStatus): Record<string, unknown> {
  return { embeddings: metaOf(s) };
}

/** A note without vectors yet: why, and what to do. */
function notEmbedded(path: string, s: EmbeddingsStatus): VaultError {
  const why =
    s.state === "unavailable"
      ? `the embedding provider is unavailable (${s.last_error ?? "no answer"})`
      : s.state === "loading"
        ? "the saved embeddings are still loading (the server has just started)"
        : `embedding is under way (${s.chunks_embedded} of ${s.chunks_total} sections)`;
  return new VaultError("unavailable", `"${path}" has no embeddings yet: ${why}. Try again later, or check embeddings_status.`);
}

/**
 * The note's first section chunk inside the section `heading` names, in any form `read` takes (a
 * heading alone, a path "A > B", case- and width-insensitive, `#` forms); -1 when no chunk is
 * there; not_found naming the note's sections when it has no such section.
 */
async function sectionChunk(services: CoreServices, path: string, heading: string, chunks: readonly { lineStart: number; lineEnd: number }[]): Promise<number> {
  const text = await services.port.read(path);
  const meta = services.port.getMetadata(path);
  let sec: { line_start: number; line_end: number };
  try {
    sec = extractSection(text, meta, heading);
  } catch (e) {
    if (!(e instanceof VaultError) || e.code !== "not_found") throw e;
    // The note's headings as paths, each usable as is (or its last part alone).
    const stack: { level: number; heading: string }[] = [];
    const paths: string[] = [];
    for (const h of headingsOf(text, meta)) {
      while (stack.length && stack[stack.length - 1].level >= h.level) stack.pop();
      stack.push(h);
      paths.push(stack.map((x) => x.heading).join(" > "));
    }
    const list = paths.slice(0, 20).map((p) => `"${p}"`).join(", ");
    throw new VaultError("not_found", `"${path}" has no section "${heading}"${list ? `; its sections: ${list} (a heading alone works too, as in read)` : " (it has no headings)"}. Omit heading for the whole note.`);
  }
  const inside = chunks.findIndex((c) => c.lineStart >= sec.line_start && c.lineStart <= sec.line_end);
  return inside >= 0 ? inside : chunks.findIndex((c) => c.lineStart <= sec.line_start && c.lineEnd >= sec.line_start);
}

const pathArg = z.string().describe('A note, e.g. "Projects/Plan.md".');

const similarSection = z.object({ heading: z.string(), content: z.string(), line_start: z.number(), line_end: z.number() });

export const getSimilarTool = defineTool({
  name: "get_similar",
  title: "Similar notes",
  description: "Notes closest in meaning to a note (or to one of its sections), with the sections that matched. Needs semantic search.",
  input: {
    path: pathArg,
    heading: z.string().optional().describe('Only this section of the note: a heading ("Conflict resolution") or a heading path ("General > Conflict resolution"), as read\'s section takes it.'),
    limit: z.number().int().min(1).max(50).default(10),
    snippet_words: z.number().int().min(0).max(500).default(30).describe("Words per section snippet; 0 = the whole section."),
  },
  output: { path: z.string(), similar: z.array(z.object({ path: z.string(), score: z.number(), sections: z.array(similarSection) })) },
  annotations: READ_ONLY,
  access: "read",
  needs: "semantic",
  example: { path: "Projects/Plan.md", limit: 5 },
  handler: async (args, { services, deadline, signal }) => {
    const { semantic, file } = await semanticNote(services, args.path, { deadline, signal });
    let ordinal: number | undefined;
    if (args.heading !== undefined) {
      const chunks = semantic.chunksOf(file.path) ?? [];
      ordinal = chunks.findIndex((c) => c.heading === args.heading);
      if (ordinal < 0) ordinal = await sectionChunk(services, file.path, args.heading, chunks);
      if (ordinal < 0) {
        const known = [...new Set(chunks.map((c) => c.heading).filter(Boolean))].slice(0, 10);
        throw new VaultError("not_found", `"${file.path}" has no section "${args.heading}"${known.length ? `; its sections: ${known.map((h) => `"${h}"`).join(", ")}` : ""}.`);
      }
    }
    const found = await similarNotes(semantic, services.port, file.path, args.limit, {
      ordinal,
      sectionsPerNote: 2,
      snippetWords: args.snippet_words,
      language: services.searchLanguage,
      exclude: (p) => services.policy.isHidden(p),
    });
    const st = semantic.status();
    if (!found) throw notEmbedded(file.path, st);
    const similar = found.map((n) => ({ ...n, score: Math.round(n.score * 1000) / 1000 }));
    const lines = similar.map((n) => `${n.path} (${n.score})${n.sections[0] ? `: ${n.sections[0].heading ? `${n.sections[0].heading}: ` : ""}${oneLine(n.sections[0].content, 80)}` : ""}`);
    const head = similar.length ? `Notes closest in meaning to ${file.path}${args.heading ? ` > ${args.heading}` : ""}:` : `No other note has embeddings yet.`;
    return { structured: { path: file.path, similar }, text: [head, ...lines].join("\n"), meta: embeddingsMeta(st) };
  },
});

export const suggestLinksTool = defineTool({
  name: "suggest_links",
  title: "Suggest links",
  description:
    "Notes this note should probably link to and does not (close in meaning, not linked either way), each with the sentence where a link would fit. Needs semantic search.",
  input: { path: pathArg, limit: z.number().int().min(1).max(50).default(10) },
  output: {
    path: z.string(),
    suggestions: z.array(
      z.object({
        path: z.string(),
        score: z.number(),
        sentence: z.string().describe("The sentence of this note where a link would fit."),
        line: z.number().describe("Its line (1-based)."),
        mention: z.string().optional().describe("Words in the sentence naming the other note (title or alias): link them."),
      }),
    ),
  },
  annotations: READ_ONLY,
  access: "read",
  needs: "semantic",
  example: { path: "Projects/Plan.md", limit: 5 },
  handler: async (args, { services, deadline, signal }) => {
    const { semantic, file } = await semanticNote(services, args.path, { deadline, signal });
    const found = await suggestLinks(semantic, services.port, file.path, args.limit, services.searchLanguage, (p) => !services.policy.isHidden(p));
    const st = semantic.status();
    if (!found) throw notEmbedded(file.path, st);
    const lines = found.map((s) => `${s.path} (${s.score}) at line ${s.line}${s.mention ? ` (mentions "${s.mention}")` : ""}: ${oneLine(s.sentence, 100)}`);
    const head = found.length ? `Notes ${file.path} could link to:` : `No unlinked note is close in meaning to ${file.path}.`;
    return { structured: { path: file.path, suggestions: found }, text: [head, ...lines].join("\n"), meta: embeddingsMeta(st) };
  },
});

export const embeddingsStatusTool = defineTool({
  name: "embeddings_status",
  title: "Embeddings status",
  description: "Semantic search's state: provider, model, dimension, sections embedded of all, queue, last error.",
  input: {},
  output: statusShape,
  annotations: READ_ONLY,
  access: "read",
  needs: "semantic",
  example: {},
  handler: async (_args, { services }) => {
    const st = semanticOf(services).status();
    return { structured: st, text: formatStatus(st) };
  },
});

export const buildEmbeddingsTool = defineTool({
  name: "build_embeddings",
  title: "Build embeddings",
  description:
    "Brings the embeddings up to date with the notes in the background (force: discard them and embed every note again, the vector length taken anew from the model). Says what it started; with a progress token it reports progress (sections embedded) until done or the call's time limit, then answers — embeddings_status follows the rest.",
  input: { force: z.boolean().default(false).describe("Discard every vector and embed the whole vault again (slow).") },
  output: { queued: z.boolean(), started: z.string(), notes: z.number(), discarded: z.number(), status: z.object(statusShape) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: "read",
  needs: "semantic",
  example: {},
  handler: async (args, { services, progress, deadline, signal }) => {
    const semantic = semanticOf(services);
    await services.port.ready();
    const notes = services.port.listFiles().filter((f) => isNotePath(f.path) && !services.policy.isHidden(f.path)).length;
    const before = semantic.status();
    semantic.rebuild(args.force);
    const discarded = args.force ? before.chunks_embedded : 0;
    const started = args.force
      ? `Started embedding every note again: ${discarded} vectors discarded, the vector length taken anew from the model's first answer, ${notes} notes to cut into sections and embed.`
      : `Started bringing the embeddings up to date: ${notes} notes compared with their embeddings; new and changed sections are embedded (${before.chunks_embedded} sections had vectors).`;
    if (progress) {
      // The client asked for progress: report sections embedded (with the total once it is counted) while the call may last.
      let last = -1;
      const send = (s: EmbeddingsStatus) => {
        if (s.chunks_embedded === last && s.state === "building") return;
        last = s.chunks_embedded;
        progress(s.chunks_embedded, s.counting ? undefined : s.chunks_total, describeEmbeddings(s));
      };
      const off = semantic.onProgress(send);
      send(semantic.status());
      try {
        const until = deadline - 200;
        while (Date.now() < until && !signal?.aborted && semantic.hasPendingWork()) {
          await semantic.waitForIdle(Math.min(1000, until - Date.now()));
          const s = semantic.status();
          if (s.state === "unavailable") break;
        }
      } finally {
        off();
      }
      send(semantic.status());
    }
    const st = semantic.status();
    const follow = st.state === "ready" ? "" : " It goes on in the background: embeddings_status tells how far it is.";
    return { structured: { queued: true, started, notes, discarded, status: st }, text: `${started}\n${formatStatus(st)}${follow}` };
  },
});

/** The semantic tools, for `mcp/tools/index.ts` (listed only when semantic search is on). */
export const semanticTools: ToolDef[] = [getSimilarTool, suggestLinksTool, embeddingsStatusTool, buildEmbeddingsTool];
