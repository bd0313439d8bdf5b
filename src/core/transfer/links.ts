import { VaultError } from "../errors";
import { normalizeVaultPath } from "../paths";
import type { AccessPolicy } from "../policy";
import type { VaultPort } from "../vault";
import { extensionOf } from "../vault";
import type { Actor, WriteResult, WriteService } from "../write";
import { formatBytes } from "../strings";

/**
 * One-time transfer links: a file's bytes go to or from the vault over plain HTTP on the server's
 * own port (`/transfer/<token>`), never through the model's context. The token (32 random bytes) is
 * the link's only credential, so a link is bound to one path, used once, and short-lived; a download
 * or upload that fails or is cut off does not use it up.
 */
export interface TransferOptions {
  /** How long a link lives (default 10 minutes). */
  ttlMs: number;
  /** Largest upload (default 50 MB). */
  maxUploadBytes: number;
}

export const DEFAULT_TRANSFER_OPTIONS: TransferOptions = { ttlMs: 10 * 60_000, maxUploadBytes: 50 * 1024 * 1024 };

/** File types an upload may create: what Obsidian opens, plus plain data formats. */
export const UPLOAD_EXTENSIONS = new Set([
  "md", "txt", "canvas", "base", "csv", "json", "pdf",
  "png", "jpg", "jpeg", "gif", "webp", "svg", "bmp", "avif", "ico", "tif", "tiff",
  "mp3", "wav", "m4a", "ogg", "flac", "3gp", "webm", "mp4", "mov", "mkv", "ogv",
  "docx", "xlsx", "pptx", "odt", "epub", "zip",
]);

interface Link {
  kind: "download" | "upload";
  path: string;
  overwrite: boolean;
  /** An upload's etag of the file it replaces, compared when the bytes arrive. */
  ifMatch?: string;
  expires: number;
  /** A transfer on this link is under way (a second concurrent use gets 404). */
  busy: boolean;
  client: string;
}

export interface DownloadLink {
  url: string;
  path: string;
  size: number;
  content_type: string;
  expires_at: string;
}

export interface UploadLink {
  url: string;
  path: string;
  overwrite: boolean;
  max_bytes: number;
  expires_at: string;
}

/** What the HTTP route gets for a valid download token. */
export interface DownloadTicket {
  path: string;
  bytes: Uint8Array;
  contentType: string;
  /** The bytes were all sent: the link is used up. */
  done(): void;
  /** The transfer failed or was cut off: the link stays usable until it expires. */
  release(): void;
}

export interface UploadTicket {
  path: string;
  maxBytes: number;
  /** Writes the bytes through the write service; the link is used up when it succeeds. */
  commit(bytes: Uint8Array): Promise<WriteResult>;
  release(): void;
}

/** How a refused upload is asked again. */
const UPLOAD_RETRY = "make a new upload link";

const TOKEN_RE = /^[A-Za-z0-9_-]{43}$/;

function newToken(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function contentTypeOf(path: string): string {
  const ext = extensionOf(path);
  return CONTENT_TYPES.get(ext) ?? "application/octet-stream";
}

/** By extension (a Map: the extension comes from the vault). */
const CONTENT_TYPES = new Map<string, string>(Object.entries({
  md: "text/markdown; charset=utf-8", txt: "text/plain; charset=utf-8", csv: "text/csv; charset=utf-8", json: "application/json",
  canvas: "application/json", base: "text/plain; charset=utf-8", pdf: "application/pdf", png: "image/png", jpg: "image/jpeg",
  jpeg: "image/jpeg", gif: "image/gif", webp: "image/webp", svg: "image/svg+xml", bmp: "image/bmp", avif: "image/avif",
  mp3: "audio/mpeg", wav: "audio/wav", m4a: "audio/mp4", ogg: "audio/ogg", flac: "audio/flac", webm: "video/webm",
  mp4: "video/mp4", mov: "video/quicktime", zip: "application/zip",
}));

export class TransferLinks {
  private readonly links = new Map<string, Link>();
  /** `http://127.0.0.1:<port>`, set once the server listens. */
  baseUrl = "";

  constructor(
    private readonly deps: { port: VaultPort; policy: AccessPolicy; writer: WriteService; now?: () => number },
    readonly options: TransferOptions = DEFAULT_TRANSFER_OPTIONS,
  ) {}

  private now(): number {
    return this.deps.now?.() ?? Date.now();
  }

  private sweep(): void {
    const now = this.now();
    for (const [t, l] of this.links) if (l.expires <= now && !l.busy) this.links.delete(t);
  }

  private url(token: string): string {
    if (!this.baseUrl) throw new VaultError("unavailable", "The server is not listening yet; try again in a moment.");
    return `${this.baseUrl}/transfer/${token}`;
  }

  /** A one-time link serving a readable file's current bytes. */
  createDownload(input: string, actor: Actor): DownloadLink {
    this.sweep();
    const path = normalizeVaultPath(input);
    const file = path && !this.deps.policy.isHidden(path) ? this.deps.port.stat(path) : null;
    if (!file) throw new VaultError("not_found", `No file at "${path}" to download. Paths are vault-relative with the extension; use list_documents to find it.`);
    const token = newToken();
    const expires = this.now() + this.options.ttlMs;
    this.links.set(token, { kind: "download", path, overwrite: false, expires, busy: false, client: actor.client });
    return { url: this.url(token), path, size: file.size, content_type: contentTypeOf(path), expires_at: new Date(expires).toISOString() };
  }

  /**
   * A one-time link accepting a file's bytes for `path` (checked now, and again when they arrive).
   * Replacing an existing file needs `ifMatch`, its etag: compared now, and again with the file as it
   * is when the bytes arrive (an edit made in between is not overwritten).
   */
  async createUpload(input: string, overwrite: boolean, actor: Actor, ifMatch?: string): Promise<UploadLink> {
    this.sweep();
    const path = await this.deps.writer.checkWritable(input, overwrite, ifMatch, UPLOAD_RETRY);
    const ext = extensionOf(path);
    if (!UPLOAD_EXTENSIONS.has(ext)) {
      throw new VaultError(
        "invalid_argument",
        `${ext ? `".${ext}" files` : "Files without an extension"} cannot be uploaded into the vault; use a note, image, PDF, audio, video or data file extension (${[...UPLOAD_EXTENSIONS].slice(0, 12).join(", ")}, …).`,
      );
    }
    const token = newToken();
    const expires = this.now() + this.options.ttlMs;
    this.links.set(token, { kind: "upload", path, overwrite, ...(ifMatch !== undefined ? { ifMatch } : {}), expires, busy: false, client: actor.client });
    return { url: this.url(token), path, overwrite, max_bytes: this.options.maxUploadBytes, expires_at: new Date(expires).toISOString() };
  }

  /** Takes a link for one transfer: null for an unknown, used, expired, busy or wrong-kind token. */
  private take(token: string, kind: Link["kind"]): [string, Link] | null {
    if (!TOKEN_RE.test(token)) return null;
    const link = this.links.get(token);
    if (!link || link.kind !== kind || link.busy) return null;
    if (link.expires <= this.now()) {
      this.links.delete(token);
      return null;
    }
    link.busy = true;
    return [token, link];
  }

  /** For `GET /transfer/<token>`. The file is read now, so it is the current version. */
  async openDownload(token: string): Promise<DownloadTicket | null> {
    const taken = this.take(token, "download");
    if (!taken) return null;
    const [t, link] = taken;
    const release = () => {
      link.busy = false;
    };
    try {
      // A file hidden or removed since the link was made is gone for the link too.
      if (this.deps.policy.isHidden(link.path) || !this.deps.port.stat(link.path)) {
        this.links.delete(t);
        return null;
      }
      const bytes = await this.deps.port.readBinary(link.path);
      return { path: link.path, bytes, contentType: contentTypeOf(link.path), done: () => this.links.delete(t), release };
    } catch {
      release();
      return null;
    }
  }

  /** For `PUT`/`POST /transfer/<token>`. */
  openUpload(token: string): UploadTicket | null {
    const taken = this.take(token, "upload");
    if (!taken) return null;
    const [t, link] = taken;
    return {
      path: link.path,
      maxBytes: this.options.maxUploadBytes,
      commit: async (bytes) => {
        try {
          const r = await this.deps.writer.putBytes(
            {
              path: link.path,
              bytes,
              overwrite: link.overwrite,
              ...(link.ifMatch !== undefined ? { if_match: link.ifMatch } : {}),
              detail: `upload link, ${formatBytes(bytes.length)}`,
              retry: UPLOAD_RETRY,
            },
            { client: link.client, tool: "upload" },
          );
          this.links.delete(t);
          return r;
        } catch (e) {
          // The file changed since the link's etag was taken: the link can never replace it now.
          if (e instanceof VaultError && e.code === "conflict") this.links.delete(t);
          else link.busy = false;
          throw e;
        }
      },
      release: () => {
        link.busy = false;
      },
    };
  }

}
