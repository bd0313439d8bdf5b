import { z } from "zod";
import { instructionFilesAlong } from "../../core/services/instructions";
import { defineTool, READ_ONLY } from "../tool";
import { gitSummary, gitSummaryShape } from "./git-tools";

const documentEntry = z.object({
  path: z.string(),
  kind: z.enum(["note", "attachment"]),
  title: z.string(),
  size: z.number(),
  modified_at: z.string(),
});

export const statsTool = defineTool({
  name: "stats",
  title: "Vault statistics",
  description: "Counts of notes, attachments, folders, links and tags; whether writing is on; git state.",
  input: {},
  output: {
    vault: z.string(),
    notes: z.number(),
    attachments: z.number(),
    folders: z.number(),
    links: z.number(),
    unresolved_links: z.number(),
    tags: z.number(),
    capabilities: z.object({ write_mode: z.boolean(), search_modes: z.array(z.string()), semantic_search_available: z.boolean(), host: z.enum(["obsidian", "node"]) }),
    git: gitSummaryShape,
    last_recovery: z
      .object({
        at: z.string(),
        renames: z.array(
          z.object({
            path: z.string(),
            new_path: z.string(),
            interrupted_at: z.string(),
            outcome: z.enum(["finished", "dropped"]),
            moved_at_start: z.boolean(),
            links_updated: z.number(),
            notes_updated: z.number(),
            reason: z.string().optional(),
          }),
        ),
      })
      .optional()
      .describe("Only when this server's start finished renames a crash had cut short."),
  },
  annotations: READ_ONLY,
  access: "read",
  example: {},
  handler: async (_args, { services }) => {
    await services.port.ready();
    const [s, git] = await Promise.all([services.vault.stats(), gitSummary(services)]);
    return {
      structured: {
        vault: services.port.name,
        ...s,
        capabilities: { write_mode: services.writeMode, search_modes: services.searchModes(), semantic_search_available: services.semantic !== null, host: services.host },
        git,
        ...(services.writer.lastRecovery ? { last_recovery: services.writer.lastRecovery } : {}),
      },
    };
  },
});

export const listDocumentsTool = defineTool({
  name: "list_documents",
  title: "List documents",
  description: "Lists notes (and attachments) by path, filtered by folder or glob, paginated.",
  input: {
    folder: z.string().optional().describe('Folder to list recursively; "" or omitted = whole vault.'),
    pattern: z.string().optional().describe('Glob on vault paths: "*" within a name, "**" any depth, "{a,b}". Without "/" it matches file names.'),
    include_attachments: z.boolean().default(false),
    limit: z.number().int().min(1).max(1000).default(100),
    cursor: z.string().optional().describe("next_cursor from the previous page."),
  },
  output: { items: z.array(documentEntry), total: z.number(), next_cursor: z.string().optional() },
  annotations: READ_ONLY,
  access: "read",
  example: { folder: "Projects", limit: 50 },
  handler: async (args, { services }) => {
    await services.port.ready();
    const r = await services.vault.listDocuments({
      folder: args.folder,
      pattern: args.pattern,
      includeAttachments: args.include_attachments,
      limit: args.limit,
      cursor: args.cursor,
    });
    const lines = r.items.map((d) => `${d.path}${d.kind === "attachment" ? " (attachment)" : ""}`);
    const more = r.next_cursor ? `\n… ${r.total - r.items.length} more; call again with cursor "${r.next_cursor}".` : "";
    return { structured: r, text: `${r.total} documents${r.items.length < r.total ? `, showing ${r.items.length}` : ""}:\n${lines.join("\n")}${more}` };
  },
});

export const listFoldersTool = defineTool({
  name: "list_folders",
  title: "List folders",
  description: 'Every folder in the vault, sorted; the root is "".',
  input: {},
  output: { folders: z.array(z.string()) },
  annotations: READ_ONLY,
  access: "read",
  example: {},
  handler: async (_args, { services }) => {
    await services.port.ready();
    const folders = ["", ...services.vault.visibleFolders()];
    return { structured: { folders }, text: folders.map((f) => (f === "" ? '"" (root)' : f)).join("\n") };
  },
});

export const readTool = defineTool({
  name: "read",
  title: "Read a note",
  description:
    "Reads a note (or one section): frontmatter, body, etag for if_match. An attachment: its type, size and base64 under a cap.",
  input: {
    path: z.string().describe('Vault-relative path (".md" optional).'),
    section: z.string().optional().describe('Read only this section, e.g. "Setup > Install".'),
    with_line_numbers: z.boolean().default(false).describe("Prefix lines with their numbers, for line edits."),
  },
  output: {
    path: z.string(),
    kind: z.enum(["note", "attachment"]),
    title: z.string(),
    folder: z.string(),
    frontmatter: z.record(z.string(), z.unknown()).optional(),
    body: z.string().optional(),
    section: z.object({ heading: z.string(), line_start: z.number(), line_end: z.number() }).optional(),
    modified_at: z.string(),
    size: z.number(),
    etag: z.string().optional(),
    mime_type: z.string().optional(),
    base64: z.string().optional(),
    omitted: z.string().optional().describe("Why an attachment's bytes were not returned."),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects/Plan.md", section: "Next steps" },
  handler: async (args, { services }) => {
    await services.port.ready();
    const r = await services.vault.readAny(args.path, { section: args.section, withLineNumbers: args.with_line_numbers });
    if (r.kind === "attachment") {
      const text = `path: ${r.path}\nmime_type: ${r.mime_type}\nsize: ${r.size}\n${r.base64 ? `base64 (${r.base64.length} chars) in structured content` : (r.omitted ?? "")}`;
      return { structured: r, text };
    }
    const fm = Object.keys(r.frontmatter).length ? `\nfrontmatter: ${JSON.stringify(r.frontmatter)}` : "";
    const sec = r.section ? `\nsection: ${r.section.heading} (lines ${r.section.line_start}-${r.section.line_end})` : "";
    return { structured: r, text: `path: ${r.path}\netag: ${r.etag}\nmodified_at: ${r.modified_at}${fm}${sec}\n\n${r.body}` };
  },
});

export const folderInstructionsTool = defineTool({
  name: "get_folder_instructions",
  title: "Folder instructions",
  description: "The AGENTS.md / CLAUDE.md files from the vault root down to a folder: the owner's conventions there.",
  input: { path: z.string().describe('A folder or a note path; "" for the root.') },
  output: { files: z.array(z.object({ path: z.string(), folder: z.string(), content: z.string() })) },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects" },
  handler: async (args, { services }) => {
    await services.port.ready();
    const { vault, port, policy } = services;
    // A note's instructions are its folder's.
    const folder = vault.resolveFolderOrNoteFolder(args.path.trim());
    const files = await instructionFilesAlong(port, policy, folder);
    const text = files.length
      ? files.map((f) => `# ${f.path}\n\n${f.content.trim()}`).join("\n\n")
      : `No AGENTS.md or CLAUDE.md applies to "${folder}".`;
    return { structured: { files }, text };
  },
});

export const vaultTools = [statsTool, listDocumentsTool, listFoldersTool, readTool, folderInstructionsTool];
