import { z } from "zod";
import { formatBytes } from "../../core/strings";
import { defineTool, READ_ONLY } from "../tool";

const actor = (clientName: string, tool: string) => ({ client: clientName, tool });

export const createDownloadLinkTool = defineTool({
  name: "create_download_link",
  title: "Download link",
  description:
    "A one-time URL (127.0.0.1, no token needed, expires in minutes) serving a vault file's bytes, so a large file reaches a program (curl) without passing through the conversation.",
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
    "A one-time URL accepting a file's raw bytes by PUT or POST (curl -T file URL) into a vault path, so a large file arrives without passing through the conversation. overwrite replaces an existing file.",
  input: {
    path: z.string().describe('Where the file goes, e.g. "Attachments/Scan.pdf".'),
    overwrite: z.boolean().default(false),
  },
  output: { url: z.string(), path: z.string(), overwrite: z.boolean(), max_bytes: z.number(), expires_at: z.string() },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
  access: "write",
  example: { path: "Attachments/Scan.pdf" },
  handler: async (args, ctx) => {
    await ctx.services.port.ready();
    const r = ctx.services.transfer.createUpload(args.path, args.overwrite, actor(ctx.clientName, "create_upload_link"));
    return {
      structured: r,
      text: `One-time upload to "${r.path}" (up to ${formatBytes(r.max_bytes)}${r.overwrite ? ", replacing it if it exists" : ""}), valid until ${r.expires_at}:\n${r.url}\ne.g. curl -T "<local file>" "${r.url}"`,
    };
  },
});

export const transferTools = [createDownloadLinkTool, createUploadLinkTool];
