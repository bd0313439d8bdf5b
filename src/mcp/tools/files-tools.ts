import { z } from "zod";
import { VaultError } from "../../core/errors";
import { formatBytes } from "../../core/strings";
import { defineTool, READ_ONLY } from "../tool";

/** Replacing an existing file needs its etag, as for write. */
const ifMatch = z.string().optional().describe("With overwrite: the etag (from read) of the file replaced.");

const actor = (clientName: string, tool: string) => ({ client: clientName, tool });

export const createDownloadLinkTool = defineTool({
  name: "create_download_link",
  title: "Download link",
  description:
    "A one-time, short-lived URL serving a vault file's bytes (for curl or another program), so a large file need not pass through the conversation.",
  input: { path: z.string().describe('The file, e.g. "Attachments/Report.pdf".') },
  output: { url: z.string(), path: z.string(), size: z.number(), content_type: z.string(), expires_at: z.string() },
  annotations: READ_ONLY,
  access: "read",
  example: { path: "Attachments/Report.pdf" },
  handler: async (args, ctx) => {
    await ctx.services.port.ready();
    const r = ctx.services.transfer.createDownload(args.path, actor(ctx.clientName, "create_download_link"));
    return {
      structured: r,
      text: `One-time download of "${r.path}" (${formatBytes(r.size)}, ${r.content_type}), valid until ${r.expires_at}:\n${r.url}\ne.g. curl -o "${r.path.split("/").pop()}" "${r.url}"`,
    };
  },
});

export const createUploadLinkTool = defineTool({
  name: "create_upload_link",
  title: "Upload link",
  description:
    "A one-time, short-lived URL that takes a file's raw bytes by PUT or POST (curl -T file URL) into a vault path, so a large file need not pass through the conversation.",
  input: {
    path: z.string().describe('Where the file goes, e.g. "Attachments/Scan.pdf".'),
    overwrite: z.boolean().default(false),
    if_match: ifMatch,
  },
  output: { url: z.string(), path: z.string(), overwrite: z.boolean(), max_bytes: z.number(), expires_at: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  access: "write",
  example: { path: "Attachments/Scan.pdf" },
  handler: async (args, ctx) => {
    await ctx.services.port.ready();
    const r = await ctx.services.transfer.createUpload(args.path, args.overwrite, actor(ctx.clientName, "create_upload_link"), args.if_match);
    return {
      structured: r,
      text: `One-time upload to "${r.path}" (up to ${formatBytes(r.max_bytes)}${r.overwrite ? (args.if_match !== undefined ? `, replacing it if its etag is still ${args.if_match}` : ", only if no file is there by then") : ""}), valid until ${r.expires_at}:\n${r.url}\ne.g. curl -T "<local file>" "${r.url}"`,
    };
  },
});

export const fetchTool = defineTool({
  name: "fetch",
  title: "Fetch a URL into the vault",
  description:
    "Saves an http(s) URL into the vault: a web page as a Markdown note, other files as they are. format \"html\" keeps the HTML without scripts (Obsidian does not open .html). Public addresses only.",
  input: {
    url: z.string().describe("An http:// or https:// URL."),
    path: z.string().describe('e.g. "Clippings/Article.md"; without an extension, one from the content type.'),
    overwrite: z.boolean().default(false),
    if_match: ifMatch,
    format: z.enum(["markdown", "html"]).optional(),
  },
  output: {
    path: z.string(),
    url: z.string(),
    status: z.number(),
    content_type: z.string(),
    size: z.number(),
    etag: z.string(),
    created: z.boolean(),
    converted: z.boolean(),
    redirects: z.number(),
    commit: z.object({ committed: z.boolean(), sha: z.string().optional(), error: z.string().optional(), skipped: z.string().optional(), message: z.string().optional(), pushed: z.boolean().optional(), push_error: z.string().optional() }).optional(),
  },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  access: "write",
  example: { url: "https://example.com/article", path: "Clippings/Article.md" },
  handler: async (args, ctx) => {
    const fetcher = ctx.services.fetcher;
    if (!fetcher) throw new VaultError("unavailable", "fetch is not available on this server.");
    await ctx.services.port.ready();
    const r = await fetcher.fetchToVault(args, { ...actor(ctx.clientName, "fetch"), ...(ctx.signal ? { signal: ctx.signal } : {}) });
    const how = r.converted ? " (the web page as Markdown)" : "";
    return { structured: r, text: `${r.created ? "Saved" : "Replaced"} "${r.path}" from ${r.url}${how}: ${formatBytes(r.size)}, ${r.content_type}. etag: ${r.etag}` };
  },
});

export const filesTools = [createDownloadLinkTool, createUploadLinkTool, fetchTool];
