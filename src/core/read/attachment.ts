import { etagOf } from "../hash";
import { formatBytes } from "../strings";
import { extensionOf, type VaultFile, type VaultPort } from "../vault";
import { yieldToEventLoop } from "../time-slice";
import { encodeBase64InSteps } from "../write/base64";
import { DEFAULT_ATTACHMENT_CAP_BYTES, sizeCapMessage } from "./format";

// A Map: the extension comes from the vault (a file `x.constructor` must not find Object.prototype's).
const MIME = new Map<string, string>(Object.entries({
  md: "text/markdown", txt: "text/plain", csv: "text/csv", json: "application/json", canvas: "application/json", base: "text/yaml",
  css: "text/css", html: "text/html", htm: "text/html", xml: "application/xml", yaml: "text/yaml", yml: "text/yaml",
  png: "image/png", jpg: "image/jpeg", jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", svg: "image/svg+xml",
  bmp: "image/bmp", avif: "image/avif", ico: "image/x-icon", tif: "image/tiff", tiff: "image/tiff", heic: "image/heic",
  pdf: "application/pdf", zip: "application/zip", epub: "application/epub+zip",
  mp3: "audio/mpeg", wav: "audio/wav", m4a: "audio/mp4", ogg: "audio/ogg", oga: "audio/ogg", flac: "audio/flac", webm: "video/webm", "3gp": "video/3gpp",
  mp4: "video/mp4", m4v: "video/mp4", mov: "video/quicktime", mkv: "video/x-matroska", ogv: "video/ogg",
  docx: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
  xlsx: "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
  pptx: "application/vnd.openxmlformats-officedocument.presentationml.presentation",
}));

export function mimeTypeOf(path: string): string {
  return MIME.get(extensionOf(path)) ?? "application/octet-stream";
}

export interface AttachmentRead {
  path: string;
  mime_type: string;
  size: number;
  modified_at: string;
  /** Etag of the bytes (absent when they were not read). */
  etag?: string;
  /** The bytes, base64; absent when over the cap. */
  base64?: string;
  /** Why base64 is absent. */
  omitted?: string;
}

/** The largest attachment read gives an etag of when its bytes are over the cap (they are read to hash them). */
export const MAX_ETAG_BYTES = 64 * 1024 * 1024;

/** An attachment's facts and (under the cap) its bytes as base64. `file` must already be checked against the policy. */
export async function readAttachment(port: VaultPort, file: VaultFile, capBytes = DEFAULT_ATTACHMENT_CAP_BYTES): Promise<AttachmentRead> {
  const base = { path: file.path, mime_type: mimeTypeOf(file.path), modified_at: new Date(file.mtime).toISOString() };
  if (file.size > capBytes) {
    // Its etag still (replacing a file needs it): the bytes are read and hashed, not returned.
    if (file.size > MAX_ETAG_BYTES) {
      const why = ` It is over ${formatBytes(MAX_ETAG_BYTES)}, so it has no etag here and cannot be replaced through this server (delete it first to put another file there).`;
      return { ...base, size: file.size, omitted: sizeCapMessage(file.path, file.size, capBytes, "attachment") + why };
    }
    const bytes = await port.readBinary(file.path);
    return { ...base, size: bytes.length, etag: await etagOf(bytes), omitted: sizeCapMessage(file.path, bytes.length, capBytes, "attachment") };
  }
  const bytes = await port.readBinary(file.path);
  if (bytes.length > capBytes) {
    return { ...base, size: bytes.length, etag: await etagOf(bytes), omitted: sizeCapMessage(file.path, bytes.length, capBytes, "attachment") };
  }
  return { ...base, size: bytes.length, etag: await etagOf(bytes), base64: await encodeBase64InSteps(bytes, yieldToEventLoop) };
}
