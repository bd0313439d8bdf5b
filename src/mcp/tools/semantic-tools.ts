import { z } from "zod";
import { VaultError } from "../../core/errors";
import type { CoreServices } from "../../core/services";
import type { VaultFile } from "../../core/vault";
import type { EmbeddingsStatus, SemanticService } from "../../core/search/vector/semantic-service";
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
  state: z.enum(["loading", "building", "ready", "unavailable"]),
  chunks_embedded: z.number(),
  chunks_total: z.number(),
  notes_queued: z.number(),
  chunks_queued: z.number(),
  last_error: z.string().nullable(),
};

function formatStatus(s: EmbeddingsStatus): string {
  const what = `${s.provider} model ${s.model}${s.dimension ? ` (${s.dimension} dimensions)` : ""}`;
  const progress = `${s.chunks_embedded} of ${s.chunks_total} sections embedded`;
  const queue = s.notes_queued || s.chunks_queued ? `; queued: ${s.notes_queued} notes, ${s.chunks_queued} sections` : "";
  const err = s.last_error ? `; last error: ${s.last_error}` : "";
  return `Embeddings ${s.state}: ${progress} with ${what}${queue}${err}.`;
}

/** `_meta` of every semantic answer: how far embedding has come. */
function embeddingsMeta(s: EmbeddingsStatus): Record<string, unknown> {
  return { embeddings: { state: s.state, chunks_embedded: s.chunks_embedded, chunks_total: s.chunks_total } };
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

const pathArg = z.string().describe('A note, e.g. "Projects/Plan.md".');

const similarSection = z.object({ heading: z.string(), content: z.string(), line_start: z.number(), line_end: z.number() });

export const getSimilarTool = defineTool({
  name: "get_similar",
  title: "Similar notes",
  description: "Notes closest in meaning to a note (or to one of its sections), with the sections that matched. Needs semantic search.",
  input: {
    path: pathArg,
    heading: z.string().optional().describe('Only this section of the note: its heading path, "A > B", as search and get_outline give it.'),
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
  description: "Brings the embeddings up to date with the notes in the background (force: discard them and embed every note again).",
  input: { force: z.boolean().default(false).describe("Discard every vector and embed the whole vault again (slow).") },
  output: { queued: z.boolean(), status: z.object(statusShape) },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  access: "read",
  needs: "semantic",
  example: {},
  handler: async (args, { services }) => {
    const semantic = semanticOf(services);
    semantic.rebuild(args.force);
    const st = semantic.status();
    return { structured: { queued: true, status: st }, text: `${args.force ? "Rebuilding every embedding" : "Bringing embeddings up to date"} in the background. ${formatStatus(st)}` };
  },
});

/** The semantic tools, for `mcp/tools/index.ts` (listed only when semantic search is on). */
export const semanticTools: ToolDef[] = [getSimilarTool, suggestLinksTool, embeddingsStatusTool, buildEmbeddingsTool];
