import { z } from "zod";
import { VaultError } from "../../core/errors";
import type { GraphService } from "../../core/graph";
import { similarNotes } from "../../core/search/vector/related";
import type { CoreServices } from "../../core/services";
import type { WorkspacePort } from "../../core/workspace";
import { defineTool, READ_ONLY, type ToolDef } from "../tool";

function workspaceOf(services: CoreServices): WorkspacePort {
  const w = services.workspace;
  if (!w) throw new VaultError("unavailable", "There is no Obsidian workspace here: the server runs headless. Use read with a path instead.");
  return w;
}

/** Applies pending vault changes to the graph (waiting a bounded time when asked); `_meta.index_stale` says whether some remain. */
async function syncGraph(services: CoreServices, wait: boolean): Promise<{ graph: GraphService; meta: { index_stale: boolean } }> {
  await services.port.ready();
  const graph = services.graph;
  const { stale } = await graph.sync(wait);
  return { graph, meta: { index_stale: stale } };
}

// Waits up to 3 s (the README says so; the name says the rest).
const waitArg = z.boolean().default(false);
const pathArg = z.string().describe('Vault-relative note path (".md" optional).');
const folderArg = z.string().optional().describe('Only notes in this folder.');
const linkType = z.enum(["wikilink", "markdown", "embed", "frontmatter"]);
const noteRef = z.object({ path: z.string(), title: z.string() });

const backlink = z.object({
  source: z.string(),
  title: z.string(),
  link_type: linkType,
  link: z.string(),
  original: z.string(),
  display_text: z.string().optional(),
  fragment: z.string().nullable(),
  line: z.number().nullable(),
  property: z.string().optional(),
});

const outlink = z.object({
  link: z.string(),
  original: z.string(),
  display_text: z.string().optional(),
  path: z.string().nullable(),
  exists: z.boolean(),
  link_type: linkType,
  fragment: z.string().nullable(),
  fragment_exists: z.boolean().optional(),
  line: z.number().nullable(),
  property: z.string().optional(),
});

const mention = z.object({ path: z.string(), title: z.string(), line: z.number(), text: z.string(), matched: z.string() });

function at(path: string, line: number | null): string {
  return line === null ? path : `${path}:${line}`;
}

function more(shown: number, total: number | null, hint: string): string {
  if (total === null) return `\n(more exist; ${hint})`;
  return total > shown ? `\n… ${total - shown} more; ${hint}` : "";
}

export const getBacklinksTool = defineTool({
  name: "get_backlinks",
  title: "Backlinks",
  description: "Notes linking to a note (or embedding a file), with line, link type and fragment.",
  input: { path: pathArg, limit: z.number().int().min(1).max(500).default(50), wait_for_pending_writes: waitArg },
  output: { path: z.string(), backlinks: z.array(backlink), total: z.number(), notes: z.number(), truncated: z.boolean() },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects/Plan.md" },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.backlinks(args.path, { limit: args.limit });
    const lines = r.backlinks.map((b) => `${at(b.source, b.line)} ${b.original} (${b.link_type}${b.property ? ` ${b.property}` : ""})`);
    const head = r.total === 0 ? `No links to ${r.path}.` : `${r.total} links from ${r.notes} notes to ${r.path}:`;
    return { structured: r, text: [head, ...lines].join("\n") + more(r.backlinks.length, r.total, "raise limit to see them."), meta };
  },
});

export const getOutlinksTool = defineTool({
  name: "get_outlinks",
  title: "Outgoing links",
  description: "Links from a note: each target's path (null when missing), link type and fragment, and whether the linked heading or block exists.",
  input: { path: pathArg, limit: z.number().int().min(1).max(1000).default(200), wait_for_pending_writes: waitArg },
  output: {
    path: z.string(),
    outlinks: z.array(outlink),
    total: z.number(),
    unresolved: z.number(),
    missing_fragments: z.number(),
    truncated: z.boolean(),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects/Plan.md" },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.outlinks(args.path, { limit: args.limit });
    const lines = r.outlinks.map((o) => {
      const where = o.exists ? `→ ${o.path}` : "→ (missing)";
      const frag = o.fragment_exists === false ? ` (no such ${o.fragment?.startsWith("^") ? "block" : "heading"} "${o.fragment}")` : "";
      return `${o.line ?? "fm"}: ${o.original} ${where}${frag} [${o.link_type}]`;
    });
    const head = `${r.total} links in ${r.path}${r.unresolved ? `, ${r.unresolved} to missing files` : ""}${r.missing_fragments ? `, ${r.missing_fragments} to missing headings/blocks` : ""}:`;
    return { structured: r, text: [head, ...lines].join("\n") + more(r.outlinks.length, r.total, "raise limit to see them."), meta };
  },
});

export const getUnlinkedMentionsTool = defineTool({
  name: "get_unlinked_mentions",
  title: "Unlinked mentions",
  description: "Notes that mention a note's title or aliases without linking to it, with the line: candidates for new links.",
  input: { path: pathArg, limit: z.number().int().min(1).max(200).default(30), wait_for_pending_writes: waitArg },
  output: {
    path: z.string(),
    mentions: z.array(mention),
    total: z.number().nullable(),
    truncated: z.boolean(),
    method: z.enum(["search", "scan"]),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects/Plan.md" },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.unlinkedMentions(args.path, { limit: args.limit });
    const { stale, ...structured } = r;
    const lines = r.mentions.map((m) => `${m.path}:${m.line} "${m.matched}": ${m.text}`);
    const head = r.mentions.length === 0 ? `No unlinked mentions of ${r.path}.` : `Unlinked mentions of ${r.path}:`;
    return {
      structured,
      text: [head, ...lines].join("\n") + more(r.mentions.length, r.truncated ? r.total : r.mentions.length, "raise limit to see them."),
      meta: { index_stale: meta.index_stale || stale },
    };
  },
});

export const getBrokenLinksTool = defineTool({
  name: "get_broken_links",
  title: "Broken links",
  description: "Links to files (or, with include_fragments, headings and blocks) that do not exist.",
  input: {
    folder: folderArg,
    include_fragments: z.boolean().default(false).describe("Also links to missing headings and blocks."),
    limit: z.number().int().min(1).max(1000).default(200),
    wait_for_pending_writes: waitArg,
  },
  output: {
    links: z.array(
      z.object({
        source: z.string(),
        line: z.number().nullable(),
        link: z.string(),
        original: z.string(),
        link_type: linkType,
        reason: z.enum(["missing_file", "missing_heading", "missing_block"]),
        target: z.string().optional(),
      }),
    ),
    total: z.number(),
    truncated: z.boolean(),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { folder: "Projects" },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.brokenLinks({ folder: args.folder, limit: args.limit, includeFragments: args.include_fragments });
    const lines = r.links.map((l) => `${at(l.source, l.line)} ${l.original}${l.reason === "missing_file" ? "" : ` (${l.reason.replace("_", " ")} in ${l.target})`}`);
    const head = r.total === 0 ? "No broken links." : `${r.total} broken links:`;
    return { structured: r, text: [head, ...lines].join("\n") + more(r.links.length, r.total, "raise limit or narrow folder."), meta };
  },
});

export const getOrphanNotesTool = defineTool({
  name: "get_orphan_notes",
  title: "Orphan notes",
  description: "Notes with no links to or from other existing notes or files.",
  input: { folder: folderArg, limit: z.number().int().min(1).max(1000).default(100), wait_for_pending_writes: waitArg },
  output: { notes: z.array(noteRef), total: z.number(), truncated: z.boolean() },
  annotations: READ_ONLY,
  access: "read",
  example: { limit: 50 },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.orphans({ folder: args.folder, limit: args.limit });
    const head = r.total === 0 ? "No orphan notes." : `${r.total} orphan notes:`;
    return { structured: r, text: [head, ...r.notes.map((n) => n.path)].join("\n") + more(r.notes.length, r.total, "raise limit or narrow folder."), meta };
  },
});

export const getMostLinkedTool = defineTool({
  name: "get_most_linked",
  title: "Most linked notes",
  description: "Notes ranked by how many other notes link to them (hubs of the vault), with link counts.",
  input: {
    limit: z.number().int().min(1).max(200).default(20),
    folder: z.string().optional().describe("Only targets in this folder (recursive)."),
    include_attachments: z.boolean().default(false).describe("Rank embedded files (images, PDFs) too."),
    wait_for_pending_writes: waitArg,
  },
  output: { notes: z.array(z.object({ path: z.string(), title: z.string(), linking_notes: z.number(), backlinks: z.number() })) },
  annotations: READ_ONLY,
  access: "read",
  example: { limit: 20 },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.mostLinked({ limit: args.limit, folder: args.folder, includeAttachments: args.include_attachments });
    const lines = r.notes.map((n, i) => `${i + 1}. ${n.path} — ${n.linking_notes} notes, ${n.backlinks} links`);
    return { structured: r, text: lines.length ? lines.join("\n") : "No note is linked from another note.", meta };
  },
});

export const getConnectionPathTool = defineTool({
  name: "get_connection_path",
  title: "Connection between notes",
  description: "Shortest chain of links between two notes, following links in either direction; steps say which way each link points.",
  input: {
    from: pathArg,
    to: z.string().describe("Vault-relative path of the other note."),
    max_depth: z.number().int().default(6).describe("Most hops (1–10)."),
    wait_for_pending_writes: waitArg,
  },
  output: {
    found: z.boolean(),
    path: z.array(z.string()),
    hops: z.number(),
    steps: z.array(z.object({ from: z.string(), to: z.string(), direction: z.enum(["forward", "backward"]) })),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { from: "Home.md", to: "Projects/Plan.md" },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.connectionPath(args.from, args.to, { maxDepth: args.max_depth });
    const depth = Math.min(10, Math.max(1, args.max_depth));
    let text: string;
    if (!r.found) text = `No connection within ${depth} hops.${depth < 10 ? " Try a larger max_depth." : ""}`;
    else if (r.hops === 0) text = "Both paths name the same note.";
    else text = `${r.hops} hops: ${r.path[0]}${r.steps.map((s) => ` ${s.direction === "forward" ? "→" : "←"} ${s.to}`).join("")}`;
    return { structured: r, text, meta };
  },
});

export const getRecentTool = defineTool({
  name: "get_recent",
  title: "Recently modified notes",
  description: "Recently modified notes, newest first.",
  input: { limit: z.number().int().min(1).max(200).default(20), folder: folderArg, wait_for_pending_writes: waitArg },
  output: { notes: z.array(z.object({ path: z.string(), title: z.string(), modified_at: z.string() })), total: z.number() },
  annotations: READ_ONLY,
  access: "read",
  example: { limit: 20 },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const r = await graph.recent({ limit: args.limit, folder: args.folder });
    return { structured: r, text: r.notes.map((n) => `${n.modified_at} ${n.path}`).join("\n") || "No notes.", meta };
  },
});

export const getContextTool = defineTool({
  name: "get_context",
  title: "Note context",
  description: "One note's dossier: frontmatter, tags, aliases, outline, backlinks, outlinks, unlinked mentions, folder peers. Cheaper than several calls.",
  input: {
    path: pathArg,
    backlinks_limit: z.number().int().min(0).max(100).default(10),
    outlinks_limit: z.number().int().min(0).max(100).default(10),
    mentions_limit: z.number().int().min(0).max(50).default(5).describe("0 skips the mentions (the slowest part)."),
    peers_limit: z.number().int().min(0).max(100).default(10),
    similar_limit: z.number().int().min(0).max(20).default(5).describe("Notes closest in meaning (with semantic search)."),
    wait_for_pending_writes: waitArg,
  },
  output: {
    path: z.string(),
    title: z.string(),
    folder: z.string(),
    modified_at: z.string(),
    size: z.number(),
    frontmatter: z.record(z.string(), z.unknown()),
    tags: z.array(z.string()),
    aliases: z.array(z.string()),
    outline: z.array(z.object({ level: z.number(), heading: z.string(), line: z.number() })),
    outline_total: z.number(),
    backlinks: z.array(z.object({ source: z.string(), link_type: linkType, line: z.number().nullable(), fragment: z.string().optional() })),
    backlinks_total: z.number(),
    backlinking_notes: z.number(),
    outlinks: z.array(z.object({ link: z.string(), path: z.string().nullable(), exists: z.boolean(), link_type: linkType, fragment_exists: z.boolean().optional() })),
    outlinks_total: z.number(),
    unresolved_outlinks: z.number(),
    unlinked_mentions: z.array(mention),
    unlinked_mentions_total: z.number().nullable(),
    folder_peers: z.array(noteRef),
    folder_peers_total: z.number(),
    similar: z.array(z.object({ path: z.string(), score: z.number() })).optional(),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects/Plan.md" },
  handler: async (args, { services }) => {
    const { graph, meta } = await syncGraph(services, args.wait_for_pending_writes);
    const c = await graph.context(args.path, {
      backlinks: args.backlinks_limit,
      outlinks: args.outlinks_limit,
      mentions: args.mentions_limit,
      peers: args.peers_limit,
    });
    const parts = [
      `${c.path} (modified ${c.modified_at}, ${c.size} bytes)`,
      Object.keys(c.frontmatter).length ? `frontmatter: ${JSON.stringify(c.frontmatter)}` : "",
      c.tags.length ? `tags: ${c.tags.join(" ")}` : "",
      c.aliases.length ? `aliases: ${c.aliases.join(", ")}` : "",
      c.outline.length ? `outline:\n${c.outline.map((h) => `${"  ".repeat(h.level - 1)}- ${h.heading} (line ${h.line})`).join("\n")}${c.outline_total > c.outline.length ? `\n  … ${c.outline_total - c.outline.length} more` : ""}` : "",
      `backlinks: ${c.backlinks_total} from ${c.backlinking_notes} notes${c.backlinks.length ? "\n" + c.backlinks.map((b) => `  ${at(b.source, b.line)}${b.fragment ? ` #${b.fragment}` : ""}`).join("\n") : ""}`,
      `outlinks: ${c.outlinks_total}${c.unresolved_outlinks ? ` (${c.unresolved_outlinks} missing)` : ""}${c.outlinks.length ? "\n" + c.outlinks.map((o) => `  ${o.link} → ${o.path ?? "(missing)"}${o.fragment_exists === false ? " (missing heading/block)" : ""}`).join("\n") : ""}`,
      c.unlinked_mentions.length ? `unlinked mentions:\n${c.unlinked_mentions.map((m) => `  ${m.path}:${m.line} ${m.text}`).join("\n")}` : "",
      c.folder_peers_total ? `folder peers (${c.folder_peers_total}): ${c.folder_peers.map((p) => p.title).join(", ")}` : "",
    ];
    // With semantic search: a few notes close in meaning (none while this note has no vector yet).
    let similar: { path: string; score: number }[] | undefined;
    if (services.semantic && args.similar_limit > 0) {
      const found = await similarNotes(services.semantic, services.port, c.path, args.similar_limit, { language: services.searchLanguage, snippetWords: 0, exclude: (p) => services.policy.isHidden(p) });
      similar = (found ?? []).map((n) => ({ path: n.path, score: Math.round(n.score * 1000) / 1000 }));
      if (similar.length) parts.push(`similar in meaning: ${similar.map((n) => n.path).join(", ")}`);
    }
    return { structured: { ...c, ...(similar ? { similar } : {}) }, text: parts.filter(Boolean).join("\n"), meta };
  },
});

const activeNoteTool = defineTool({
  name: "get_active_note",
  title: "Active note",
  description: "The note in Obsidian's active editor, its selection and cursor line: what \"this note\" means.",
  input: {},
  output: {
    active: z.boolean(),
    path: z.string().nullable(),
    selection: z.string(),
    selection_truncated: z.boolean(),
    cursor_line: z.number().nullable(),
  },
  annotations: READ_ONLY,
  access: "read",
  example: {},
  hosts: ["obsidian"],
  handler: async (_args, { services }) => {
    const a = workspaceOf(services).activeNote();
    if (!a || services.policy.isHidden(a.path)) {
      return { structured: { active: false, path: null, selection: "", selection_truncated: false, cursor_line: null }, text: "No note is open in the active editor." };
    }
    const max = 20_000;
    const selection = a.selection.length > max ? a.selection.slice(0, max) : a.selection;
    const structured = { active: true, path: a.path, selection, selection_truncated: a.selection.length > max, cursor_line: a.cursorLine };
    const text = `${a.path}${a.cursorLine !== null ? `, cursor on line ${a.cursorLine}` : ""}${selection ? `\nselection:\n${selection}` : "\n(no selection)"}`;
    return await Promise.resolve({ structured, text });
  },
});

const listOpenNotesTool = defineTool({
  name: "list_open_notes",
  title: "Open notes",
  description: "Notes open in Obsidian's tabs and panes.",
  input: {},
  output: { notes: z.array(z.string()) },
  annotations: READ_ONLY,
  access: "read",
  example: {},
  hosts: ["obsidian"],
  handler: async (_args, { services }) => {
    const notes = workspaceOf(services)
      .openNotes()
      .filter((p) => !services.policy.isHidden(p));
    return await Promise.resolve({ structured: { notes }, text: notes.length ? notes.join("\n") : "No notes are open." });
  },
});

const openNoteTool = defineTool({
  name: "open_note",
  title: "Open a note in Obsidian",
  description: "Shows a note to the user in Obsidian, optionally at a line or in a new tab.",
  input: {
    path: pathArg,
    line: z.number().int().min(1).optional().describe("1-based line to scroll to."),
    new_tab: z.boolean().default(false),
  },
  output: { path: z.string(), opened: z.boolean() },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  access: "read",
  example: { path: "Projects/Plan.md", line: 12 },
  hosts: ["obsidian"],
  handler: async (args, { services }) => {
    const workspace = workspaceOf(services);
    const file = services.vault.requireFile(args.path);
    await workspace.openNote(file.path, { line: args.line, newTab: args.new_tab });
    return { structured: { path: file.path, opened: true }, text: `Opened ${file.path}${args.line ? ` at line ${args.line}` : ""}.` };
  },
});

export const workspaceTools = [activeNoteTool, listOpenNotesTool, openNoteTool];

export const graphTools: ToolDef[] = [
  getBacklinksTool,
  getOutlinksTool,
  getUnlinkedMentionsTool,
  getBrokenLinksTool,
  getOrphanNotesTool,
  getMostLinkedTool,
  getConnectionPathTool,
  getRecentTool,
  getContextTool,
  ...workspaceTools,
];
