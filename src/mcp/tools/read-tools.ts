import { z } from "zod";
import { VaultError } from "../../core/errors";
import { createReadService, DEFAULT_TREE_ENTRIES, MAX_INFO_PATHS, MAX_READ_MULTIPLE, MAX_TREE_ENTRIES, type ReadService, type TreeNode } from "../../core/read";
import type { CoreServices } from "../../core/services";
import { defineTool, READ_ONLY } from "../tool";

/** The read service as `services.reader` once wired; until then one built over the vault service. */
export function readerOf(services: CoreServices): ReadService {
  const s = services as CoreServices & { reader?: ReadService };
  if (s.reader) return s.reader;
  if (!services.vault) throw new VaultError("unavailable", "Reading is not available yet; try again in a moment.");
  return createReadService({ port: services.port, policy: services.policy, vault: services.vault });
}

const pathArg = z.string().describe('Vault-relative path (".md" optional).');
const errItem = z.object({ path: z.string(), error: z.string() });
const readItem = z.object({
  path: z.string(),
  title: z.string(),
  folder: z.string(),
  frontmatter: z.record(z.string(), z.unknown()),
  body: z.string(),
  modified_at: z.string(),
  size: z.number(),
  etag: z.string(),
});
const heading = z.object({ level: z.number(), heading: z.string(), line: z.number() });

export const readMultipleTool = defineTool({
  name: "read_multiple",
  title: "Read several notes",
  description: `Reads up to ${MAX_READ_MULTIPLE} notes at once; failures are listed per path in err without failing the others.`,
  input: { paths: z.array(z.string()).min(1).max(MAX_READ_MULTIPLE).describe("Vault-relative note paths.") },
  output: { ok: z.array(readItem), err: z.array(errItem) },
  annotations: READ_ONLY,
  access: "read",
  example: { paths: ["Projects/Plan.md", "Home.md"] },
  handler: async (args, { services }) => {
    const r = await readerOf(services).readMultiple(args.paths);
    const parts = r.ok.map((n) => `=== ${n.path} (etag ${n.etag})${Object.keys(n.frontmatter).length ? `\nfrontmatter: ${JSON.stringify(n.frontmatter)}` : ""}\n${n.body}`);
    for (const e of r.err) parts.push(`=== ${e.path}: ERROR ${e.error}`);
    return { structured: r, text: parts.join("\n\n") };
  },
});

export const notesInfoTool = defineTool({
  name: "get_notes_info",
  title: "Notes info",
  description: `Metadata without content for up to ${MAX_INFO_PATHS} paths: size, dates, tags, aliases, headings, link counts (out, in).`,
  input: { paths: z.array(z.string()).min(1).max(MAX_INFO_PATHS).describe("Vault-relative paths.") },
  output: {
    ok: z.array(
      z.object({
        path: z.string(),
        kind: z.enum(["note", "attachment"]),
        title: z.string(),
        size: z.number(),
        created_at: z.string(),
        modified_at: z.string(),
        has_frontmatter: z.boolean(),
        frontmatter_error: z.string().optional(),
        tags: z.array(z.string()),
        aliases: z.array(z.string()),
        headings: z.array(heading),
        links_out: z.number(),
        unresolved_out: z.number(),
        links_in: z.number(),
        backlinking_notes: z.number(),
      }),
    ),
    err: z.array(errItem),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { paths: ["Projects/Plan.md"] },
  handler: async (args, { services }) => {
    const r = await readerOf(services).notesInfo(args.paths);
    const parts = r.ok.map(
      (n) =>
        `${n.path}: ${n.size} bytes, modified ${n.modified_at}, links out ${n.links_out} (${n.unresolved_out} unresolved), in ${n.links_in} from ${n.backlinking_notes} notes` +
        `${n.tags.length ? `, tags ${n.tags.join(" ")}` : ""}${n.aliases.length ? `, aliases ${n.aliases.join(" | ")}` : ""}` +
        `${n.frontmatter_error ? `, INVALID frontmatter: ${n.frontmatter_error}` : ""}${n.headings.length ? `, ${n.headings.length} headings` : ""}`,
    );
    for (const e of r.err) parts.push(`${e.path}: ERROR ${e.error}`);
    return { structured: r, text: parts.join("\n") };
  },
});

export const outlineTool = defineTool({
  name: "get_outline",
  title: "Note outline",
  description: "A note's headings with levels and 1-based line numbers (use them with read's section or edit's line_start).",
  input: { path: pathArg },
  output: { path: z.string(), headings: z.array(heading) },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects/Plan.md" },
  handler: async (args, { services }) => {
    const r = await readerOf(services).outline(args.path);
    const lines = r.headings.map((h) => `${"  ".repeat(h.level - 1)}${"#".repeat(h.level)} ${h.heading} (line ${h.line})`);
    return { structured: r, text: `${r.path}\n${lines.length ? lines.join("\n") : "(no headings)"}` };
  },
});

export const treeNode: z.ZodType<TreeNode> = z.lazy(() =>
  z.object({
    name: z.string(),
    path: z.string(),
    type: z.enum(["folder", "file"]),
    size: z.number().optional(),
    children: z.array(treeNode).optional(),
    files: z.number().optional(),
    folders: z.number().optional(),
    collapsed: z.boolean().optional(),
  }),
);

export const listDirectoryTool = defineTool({
  name: "list_directory",
  title: "Directory tree",
  description: "A tree of folders and files under a folder down to depth; deeper ones as counts. Paged: give next_offset as offset.",
  input: {
    path: z.string().optional().describe('Folder; "" or omitted = vault root.'),
    depth: z.number().int().min(1).max(20).default(2),
    include_files: z.boolean().default(true),
    limit: z.number().int().min(1).max(MAX_TREE_ENTRIES).default(DEFAULT_TREE_ENTRIES),
    offset: z.number().int().min(0).default(0),
  },
  output: { path: z.string(), tree: treeNode, entries: z.number(), truncated: z.boolean(), next_offset: z.number().optional() },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Projects", depth: 2 },
  handler: async (args, { services }) => {
    await services.port.ready();
    const r = await readerOf(services).directory(args.path, args.depth, { includeFiles: args.include_files, maxEntries: args.limit, offset: args.offset });
    return { structured: { path: r.path, tree: r.tree, entries: r.entries, truncated: r.truncated, ...(r.next_offset !== undefined ? { next_offset: r.next_offset } : {}) }, text: r.text };
  },
});

export const readTools = [readMultipleTool, notesInfoTool, outlineTool, listDirectoryTool];
