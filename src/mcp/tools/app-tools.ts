import { z } from "zod";
import { VaultError } from "../../core/errors";
import { normalizeVaultPath } from "../../core/paths";
import { EXPLORER_TOOL_META } from "../apps/explorer";
import { defineTool, READ_ONLY, type ToolContext, type ToolDef, type ToolResult } from "../tool";
import { getContextTool } from "./graph-tools";
import { listDirectoryTool, treeNode } from "./read-tools";
import { hit, searchTool } from "./search-tools";

/**
 * Tools that open the vault explorer (an MCP Apps view) in clients that render Apps; every other
 * client gets the same content as text, so they work everywhere. Their answers are what the view
 * starts from; it fetches the rest itself through our read tools.
 */
/** Calls another tool's handler with its arguments checked and its defaults applied, as a client call would. */
async function callTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(def: ToolDef<I, O>, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolResult<z.infer<z.ZodObject<O>>>> {
  return def.handler(z.object(def.input).parse(args), ctx);
}

/** Entries in browse_vault's answer (folders and files, two levels deep): ~20 KB at most. */
const BROWSE_ENTRIES = 150;

export const browseVaultTool = defineTool({
  name: "browse_vault",
  title: "Browse the vault",
  description: "Opens an interactive vault explorer (folders, search, note preview with links) in clients that show apps; others get the folder tree, and the results of query when given, as text.",
  input: {
    folder: z.string().optional().describe('Start in this folder ("" = the vault root).'),
    query: z.string().optional().describe("Start with this search."),
  },
  output: {
    vault: z.string(),
    folder: z.string(),
    search_modes: z.array(z.string()),
    tree: treeNode,
    entries: z.number(),
    next_offset: z.number().optional(),
    query: z.string().optional(),
    hits: z.array(hit).optional(),
  },
  annotations: READ_ONLY,
  access: "read",
  meta: EXPLORER_TOOL_META,
  example: { folder: "Projects" },
  handler: async (args, ctx) => {
    const folder = normalizeVaultPath(args.folder ?? "", "folder");
    if (folder && (ctx.services.policy.isHidden(folder) || !ctx.services.port.isFolder(folder))) {
      throw new VaultError("not_found", `No folder "${folder}" in the vault; use list_folders to see them, or omit folder for the root.`);
    }
    // A small first answer: the view lists the rest a page at a time (list_directory's offset).
    const tree = await callTool(listDirectoryTool, { path: folder, depth: 2, include_files: true, limit: BROWSE_ENTRIES }, ctx);
    let searchText = "";
    let hits: z.infer<typeof hit>[] | undefined;
    if (args.query?.trim()) {
      const r = await callTool(searchTool, { query: args.query, limit: 20 }, ctx);
      hits = r.structured.hits;
      searchText = `\n\nSearch "${args.query}":\n${r.text ?? ""}`;
    }
    return {
      structured: {
        vault: ctx.services.port.name,
        folder,
        search_modes: ctx.services.searchModes(),
        tree: tree.structured.tree,
        entries: tree.structured.entries,
        ...(tree.structured.next_offset !== undefined ? { next_offset: tree.structured.next_offset } : {}),
        ...(hits ? { query: args.query, hits } : {}),
      },
      text: `${tree.text ?? ""}${searchText}`,
    };
  },
});

export const showContextTool = defineTool({
  name: "show_context",
  title: "Show a note's context",
  description: "Shows a note's context card (what get_context returns: outline, backlinks, outlinks, mentions, folder peers) as a page in clients that show apps, as text elsewhere.",
  input: { path: z.string().describe('The note, e.g. "Projects/Plan.md".') },
  output: { vault: z.string(), search_modes: z.array(z.string()), context: z.record(z.string(), z.unknown()) },
  annotations: READ_ONLY,
  access: "read",
  meta: EXPLORER_TOOL_META,
  example: { path: "Projects/Plan.md" },
  handler: async (args, ctx) => {
    const r = await callTool(getContextTool, { path: args.path, backlinks_limit: 20, outlinks_limit: 20 }, ctx);
    return { structured: { vault: ctx.services.port.name, search_modes: ctx.services.searchModes(), context: r.structured }, text: r.text, ...(r.meta ? { meta: r.meta } : {}) };
  },
});

export const appTools = [browseVaultTool, showContextTool];
