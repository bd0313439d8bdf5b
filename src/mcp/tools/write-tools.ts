import { z } from "zod";
import { VaultError } from "../../core/errors";
import type { CoreServices } from "../../core/services";
import type { WriteService } from "../../core/write";
import { defineTool, READ_ONLY, type ToolContext } from "../tool";

/** The write service, once the lead wired it as `services.writer`. */
export function writerOf(services: CoreServices): WriteService {
  const w = (services as CoreServices & { writer?: WriteService }).writer;
  if (!w) throw new VaultError("unavailable", "Changing notes is not available in this server build; ask the vault owner to update the plugin.");
  return w;
}

const actor = (ctx: ToolContext, tool: string) => ({ client: ctx.clientName, tool, ...(ctx.signal ? { signal: ctx.signal } : {}) });
const pathArg = z.string().describe('Vault-relative path.');
const ifMatch = z.string().optional().describe("The etag from read; a stale one is a conflict.");
const WRITE_ANN = { readOnlyHint: false, openWorldHint: false } as const;

/** The git commit of a change (git-backed vaults with "commit changes" on). */
const commitOut = z
  .object({
    committed: z.boolean(),
    sha: z.string().optional(),
    message: z.string().optional(),
    skipped: z.string().optional(),
    error: z.string().optional(),
    pushed: z.boolean().optional(),
    push_error: z.string().optional(),
    note: z.string().optional(),
    pending: z.boolean().optional(),
  })
  .optional();

/** One line about the commit for the text answer ("" when committing is off). */
function commitLine(c: z.infer<typeof commitOut>): string {
  if (!c) return "";
  if (c.error) return `\n${c.error}`;
  if (!c.committed) return c.skipped ? `\nNot committed: ${c.skipped}.` : "";
  const push = c.push_error ? ` ${c.push_error}` : c.pushed ? " Pushed." : "";
  return `\nCommitted ${c.sha?.slice(0, 7) ?? ""}.${push}${c.note ? ` ${c.note}` : ""}`;
}

export const writeTool = defineTool({
  name: "write",
  title: "Write a note or file",
  description:
    'Creates a note (and its folders), or overwrites, appends or prepends; replacing a file needs if_match. Frontmatter is kept unless given (append/prepend merge it).',
  input: {
    path: pathArg,
    content: z.string().optional().describe('The note body; ".md" is added to a path without extension.'),
    frontmatter: z.record(z.string(), z.unknown()).optional().describe("Properties to set."),
    mode: z.enum(["overwrite", "append", "prepend"]).default("overwrite"),
    if_match: ifMatch,
    content_base64: z.string().optional().describe("An attachment's bytes, base64."),
  },
  output: { path: z.string(), created: z.boolean(), mode: z.string(), etag: z.string(), size: z.number(), diff: z.string().optional(), commit: commitOut },
  annotations: { ...WRITE_ANN, destructiveHint: true, idempotentHint: false },
  access: "write",
  example: { path: "Inbox/Idea.md", content: "# Idea\n\nFirst thoughts.\n" },
  handler: async (args, ctx) => {
    const r = await writerOf(ctx.services).write(args, actor(ctx, "write"));
    const head = r.created ? `Created "${r.path}"` : `${r.mode === "overwrite" ? "Overwrote" : r.mode === "append" ? "Appended to" : "Prepended to"} "${r.path}"`;
    return { structured: r, text: `${head} (${r.size} bytes). etag: ${r.etag}${commitLine(r.commit)}${r.diff ? `\n${r.diff}` : ""}` };
  },
});

export const editTool = defineTool({
  name: "edit",
  title: "Edit a note",
  description:
    "Replaces old_text (unique, or replace_all) and/or lines line_start–line_end with new_text; returns a diff and the new etag. dry_run only shows the diff.",
  input: {
    path: pathArg,
    old_text: z.string().optional().describe("Text to replace (quotes, dashes and spaces match loosely)."),
    new_text: z.string().describe('Replacement text ("" deletes).'),
    replace_all: z.boolean().default(false),
    line_start: z.number().int().min(1).optional().describe("First line (1-based): replaces whole lines, or with old_text limits the search."),
    line_end: z.number().int().min(1).optional().describe("1-based last line, inclusive."),
    if_match: ifMatch,
    dry_run: z.boolean().default(false),
  },
  output: {
    path: z.string(),
    replacements: z.number(),
    match_type: z.enum(["exact", "normalized", "lines"]),
    lines: z.array(z.number()),
    etag: z.string(),
    diff: z.string(),
    dry_run: z.boolean(),
    commit: commitOut,
  },
  annotations: { ...WRITE_ANN, destructiveHint: false, idempotentHint: false },
  access: "write",
  example: { path: "Projects/Plan.md", old_text: "Step two.", new_text: "Step 2." },
  handler: async (args, ctx) => {
    const r = await writerOf(ctx.services).edit(args, actor(ctx, "edit"));
    const verb = r.dry_run ? "Would make" : "Made";
    const how = r.match_type === "normalized" ? " (matched after normalising quotes/dashes/spaces)" : "";
    return {
      structured: r,
      text: `${verb} ${r.replacements} replacement${r.replacements === 1 ? "" : "s"} in "${r.path}"${how}. etag: ${r.etag}${commitLine(r.commit)}\n${r.diff || "(no change)"}`,
    };
  },
});

export const updateFrontmatterTool = defineTool({
  name: "update_frontmatter",
  title: "Update frontmatter",
  description: 'Sets and/or removes frontmatter properties of a note, leaving the body untouched; mode "replace" drops properties not in set.',
  input: {
    path: pathArg,
    set: z.record(z.string(), z.unknown()).optional().describe("Properties to add or change."),
    remove: z.array(z.string()).optional().describe("Property names to delete."),
    mode: z.enum(["merge", "replace"]).default("merge"),
    if_match: ifMatch,
  },
  output: { path: z.string(), frontmatter: z.record(z.string(), z.unknown()), changed: z.array(z.string()), etag: z.string(), commit: commitOut },
  annotations: { ...WRITE_ANN, destructiveHint: false, idempotentHint: true },
  access: "write",
  example: { path: "Projects/Plan.md", set: { status: "done" } },
  handler: async (args, ctx) => {
    const r = await writerOf(ctx.services).updateFrontmatter(args, actor(ctx, "update_frontmatter"));
    const what = r.changed.length ? `Changed ${r.changed.join(", ")}` : "Nothing changed";
    return { structured: r, text: `${what} in "${r.path}". etag: ${r.etag}${commitLine(r.commit)}\nfrontmatter: ${JSON.stringify(r.frontmatter)}` };
  },
});

export const manageTagsTool = defineTool({
  name: "manage_tags",
  title: "Manage tags",
  description: "Adds or removes tags in a note's frontmatter (no duplicates, '#' optional), or lists its frontmatter and inline tags.",
  input: {
    path: pathArg,
    action: z.enum(["add", "remove", "list"]),
    tags: z.array(z.string()).optional().describe('e.g. ["project/alpha", "#todo"].'),
    if_match: ifMatch,
  },
  output: {
    path: z.string(),
    tags: z.array(z.string()),
    inline_tags: z.array(z.string()),
    added: z.array(z.string()),
    removed: z.array(z.string()),
    inline_only: z.array(z.string()),
    etag: z.string(),
    commit: commitOut,
  },
  annotations: { ...WRITE_ANN, destructiveHint: false, idempotentHint: true },
  access: "write",
  example: { path: "Projects/Plan.md", action: "add", tags: ["project/active"] },
  handler: async (args, ctx) => {
    const r = await writerOf(ctx.services).manageTags(args, actor(ctx, "manage_tags"));
    const parts = [`tags of "${r.path}": ${r.tags.join(", ") || "(none)"}`, `inline: ${r.inline_tags.join(", ") || "(none)"}`];
    if (r.added.length) parts.push(`added: ${r.added.join(", ")}`);
    if (r.removed.length) parts.push(`removed: ${r.removed.join(", ")}`);
    if (r.inline_only.length) parts.push(`only inline in the body (change with edit): ${r.inline_only.join(", ")}`);
    return { structured: r, text: parts.join("\n") + `\netag: ${r.etag}${commitLine(r.commit)}` };
  },
});

export const deleteTool = defineTool({
  name: "delete",
  title: "Delete a note or folder",
  description: "Moves a file or folder to the trash; confirm_path repeats path.",
  input: { path: pathArg, confirm_path: z.string().describe("The same path again, to confirm.") },
  output: { path: z.string(), kind: z.enum(["file", "folder"]), trashed_to: z.string(), files: z.number(), trash_note: z.string().optional(), commit: commitOut },
  annotations: { ...WRITE_ANN, destructiveHint: true, idempotentHint: false },
  access: "write",
  example: { path: "Inbox/Old.md", confirm_path: "Inbox/Old.md" },
  handler: async (args, ctx) => {
    const r = await writerOf(ctx.services).delete(args, actor(ctx, "delete"));
    return { structured: r, text: `Moved "${r.path}"${r.kind === "folder" ? ` (folder, ${r.files} files)` : ""} to ${r.trashed_to}.${r.trash_note ? ` ${r.trash_note}` : ""}${commitLine(r.commit)}` };
  },
});

export const renameTool = defineTool({
  name: "rename",
  title: "Rename or move",
  description: "Renames or moves a file or folder, updating every link to it; overwrite trashes an existing target first (if_match: its etag).",
  input: {
    path: pathArg,
    new_path: z.string().describe('The new vault-relative path.'),
    overwrite: z.boolean().default(false),
    if_match: z.string().optional(),
  },
  output: {
    path: z.string(),
    new_path: z.string(),
    kind: z.enum(["file", "folder"]),
    links_updated: z.number(),
    notes_updated: z.number(),
    duration_ms: z.number(),
    replaced_target_trashed_to: z.string().optional(),
    commit: commitOut,
  },
  annotations: { ...WRITE_ANN, destructiveHint: true, idempotentHint: false },
  access: "write",
  example: { path: "Inbox/Idea.md", new_path: "Projects/Idea.md" },
  handler: async (args, ctx) => {
    const progress = ctx.progress;
    const r = await writerOf(ctx.services).rename(args, actor(ctx, "rename"), progress && ((done, total) => progress(done, total, `updating links: ${done} of ${total} notes`)));
    const replaced = r.replaced_target_trashed_to ? ` The previous "${r.new_path}" went to ${r.replaced_target_trashed_to}.` : "";
    return {
      structured: r,
      text: `Renamed "${r.path}" to "${r.new_path}"; updated ${r.links_updated} link${r.links_updated === 1 ? "" : "s"} in ${r.notes_updated} note${r.notes_updated === 1 ? "" : "s"} in ${(r.duration_ms / 1000).toFixed(1)} s.${replaced}${commitLine(r.commit)}`,
    };
  },
});

export const activityLogTool = defineTool({
  name: "get_activity_log",
  title: "Activity log",
  description: "The latest changes made through this server (time, client, tool, path, etags), newest first.",
  input: { limit: z.number().int().min(1).max(500).default(50) },
  output: {
    entries: z.array(
      z.object({
        time: z.string(),
        client: z.string(),
        tool: z.string(),
        path: z.string(),
        etag_before: z.string().nullable(),
        etag_after: z.string().nullable(),
        new_path: z.string().optional(),
        detail: z.string().optional(),
        commit: z.string().optional(),
        commit_pending: z.boolean().optional(),
      }),
    ),
  },
  annotations: READ_ONLY,
  access: "read",
  example: { limit: 20 },
  handler: async (args, ctx) => {
    const entries = await writerOf(ctx.services).activity(args.limit);
    const lines = entries.map((e) => `${e.time} ${e.client} ${e.tool} ${e.path}${e.new_path ? ` → ${e.new_path}` : ""}${e.detail ? ` (${e.detail})` : ""}`);
    return { structured: { entries }, text: entries.length ? lines.join("\n") : "No changes recorded yet." };
  },
});

/** Write-mode tools (get_activity_log is a read tool but lives here with its service). */
export const writeTools = [writeTool, editTool, updateFrontmatterTool, manageTagsTool, deleteTool, renameTool, activityLogTool];
