import { VaultError } from "../errors";
import { extensionOf } from "../vault";
import type { Actor, WriteResult, WriteService } from "../write";
import { forbiddenAddress, parseIpv4, parseIpv6 } from "./address-guard";
import { htmlToMarkdown } from "./html";
import { sanitizeMarkup } from "./sanitize";

/**
 * `fetch`: an http(s) URL into the vault, SSRF-safe. Every host name is resolved first and every
 * address it resolves to is checked (`address-guard.ts`); the request then connects to the checked
 * address (no second lookup a DNS answer could change), redirects are not followed by the HTTP
 * client but one hop at a time here, each checked again (at most 5). Bodies are capped while they
 * arrive; content types are allowed by setting. The owner's allow-list lets a host on their own
 * network be reached on purpose; nothing switches the guard off.
 */

/** The network, as the host gives it (`hosts/common/net.ts`: Node's http/https in both hosts). */
export interface NetPort {
  /** Every address a host name resolves to. */
  resolve(host: string): Promise<{ address: string; family: 4 | 6 }[]>;
  /**
   * One GET, connected to `address` (TLS still checked against the URL's host name), redirects not
   * followed. Rejects with `BodyTooLargeError` past `maxBytes` and with an error after `timeoutMs`.
   */
  get(req: { url: string; address: string; family: 4 | 6; maxBytes: number; timeoutMs: number }): Promise<{ status: number; headers: Record<string, string>; body: Uint8Array }>;
}

export class BodyTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the body is larger than ${maxBytes} bytes`);
    this.name = "BodyTooLargeError";
  }
}

export interface FetchOptions {
  /** Host names (or `host:port`) the owner allows even when they resolve to a private address. */
  allowHosts: readonly string[];
  maxBytes: number;
  timeoutMs: number;
  /** Allowed content types: `type/subtype` or `type/*`. */
  contentTypes: readonly string[];
}

export const DEFAULT_FETCH_OPTIONS: FetchOptions = {
  allowHosts: [],
  maxBytes: 20 * 1024 * 1024,
  timeoutMs: 30_000,
  contentTypes: ["text/*", "application/pdf", "application/json", "application/xml", "application/xhtml+xml", "image/*", "audio/*", "video/*"],
};

export const MAX_REDIRECTS = 5;

/** How a refused fetch is asked again. */
const FETCH_RETRY = "fetch again";

export interface FetchRequest {
  url: string;
  path: string;
  overwrite?: boolean;
  /** The etag of the file `overwrite` replaces (from read); compared when the download is written. */
  if_match?: string;
  /** HTML as Markdown (default when saving to a note) or as-is. */
  format?: "markdown" | "html";
}

export interface FetchResult {
  path: string;
  /** The URL finally answered (after redirects). */
  url: string;
  status: number;
  content_type: string;
  size: number;
  etag: string;
  created: boolean;
  /** HTML converted to Markdown. */
  converted: boolean;
  redirects: number;
  commit?: WriteResult["commit"];
}

/** By content type (a Map: the type comes from a server). */
const EXT_BY_TYPE = new Map<string, string>(Object.entries({
  "text/html": "html", "application/xhtml+xml": "html", "text/markdown": "md", "text/plain": "txt", "text/csv": "csv",
  "application/json": "json", "application/pdf": "pdf", "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
  "image/webp": "webp", "image/svg+xml": "svg", "image/avif": "avif", "audio/mpeg": "mp3", "audio/wav": "wav", "audio/ogg": "ogg",
  "video/mp4": "mp4", "video/webm": "webm", "application/xml": "xml", "text/xml": "xml",
}));

/** Extensions a browser (or Obsidian, for SVG) runs markup of: what fetch saves there is sanitised. */
const ACTIVE_EXTS = new Set(["html", "htm", "xhtml", "shtml", "svg", "svgz", "xml", "xsl", "xslt", "mht", "mhtml"]);

/** Markup's text: a BOM first, then the header's charset, then UTF-8; re-encoded as UTF-8 (its meta charset with it). */
function decodeMarkup(bytes: Uint8Array, contentType: string): string {
  let charset = /charset=([^;]+)/i.exec(contentType)?.[1]?.trim().replace(/^"|"$/g, "").toLowerCase() ?? "utf-8";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) charset = "utf-16le";
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) charset = "utf-16be";
  else if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) charset = "utf-8";
  let text: string;
  try {
    text = new TextDecoder(charset).decode(bytes);
  } catch {
    charset = "utf-8";
    text = new TextDecoder().decode(bytes);
  }
  if (charset === "utf-8") return text;
  return text.replace(/(<meta\s[^>]*charset\s*=\s*["']?)[^"'\s/>;]+/gi, "$1utf-8").replace(/(<\?xml\s[^>]*encoding\s*=\s*["'])[^"']+/i, "$1UTF-8");
}

function hostAllowed(u: URL, allow: readonly string[]): boolean {
  const host = u.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const port = u.port || (u.protocol === "https:" ? "443" : "80");
  return allow.some((a) => {
    const entry = a.trim().toLowerCase();
    if (!entry) return false;
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry);
    if (!m) return false;
    return m[1].replace(/^\[|\]$/g, "") === host && (m[2] === undefined || m[2] === port);
  });
}

function typeAllowed(type: string, allowed: readonly string[]): boolean {
  return allowed.some((a) => {
    const p = a.trim().toLowerCase();
    return p.endsWith("/*") ? type.startsWith(p.slice(0, -1)) : type === p;
  });
}

export class FetchService {
  constructor(
    private readonly deps: { net: NetPort; writer: WriteService },
    readonly options: FetchOptions = DEFAULT_FETCH_OPTIONS,
  ) {}

  /** The addresses `u` may be fetched from, or a refusal that says why. */
  private async addressesOf(u: URL): Promise<{ address: string; family: 4 | 6 }> {
    const host = u.hostname.replace(/^\[|\]$/g, "");
    const literal = parseIpv4(host) !== null ? 4 : parseIpv6(host) !== null ? 6 : 0;
    let addrs: { address: string; family: 4 | 6 }[];
    if (literal) addrs = [{ address: host, family: literal }];
    else {
      try {
        addrs = await this.deps.net.resolve(host);
      } catch {
        throw new VaultError("not_found", `The host "${host}" could not be resolved; check the URL.`);
      }
      if (!addrs.length) throw new VaultError("not_found", `The host "${host}" has no address; check the URL.`);
    }
    if (!hostAllowed(u, this.options.allowHosts)) {
      for (const a of addrs) {
        const why = forbiddenAddress(a.address);
        if (why) {
          throw new VaultError(
            "forbidden",
            `Refused: "${host}" ${literal ? "is" : `resolves to ${a.address}, which is`} ${/^(?:[aeio]|un(?!i))/i.test(why) ? "an" : "a"} ${why} address. fetch reaches public internet addresses only; the vault owner can allow a host on their own network in the plugin's settings (Fetch: allowed hosts) or, headless, with --fetch-allow-host ${u.port ? `${u.hostname}:${u.port}` : u.hostname}.`,
          );
        }
      }
    }
    return addrs[0];
  }

  async fetchToVault(req: FetchRequest, actor: Actor): Promise<FetchResult> {
    let u: URL;
    try {
      u = new URL(req.url);
    } catch {
      throw new VaultError("invalid_argument", `"${req.url}" is not a URL; give an http:// or https:// address.`);
    }
    // Checked before any request: a destination the client may not write to costs no download.
    const overwrite = req.overwrite ?? false;
    if (extensionOf(req.path) !== "") await this.deps.writer.checkWritable(req.path, overwrite, req.if_match, FETCH_RETRY);
    const deadline = Date.now() + this.options.timeoutMs;
    let redirects = 0;
    let answer: { status: number; headers: Record<string, string>; body: Uint8Array };
    for (;;) {
      if (u.protocol !== "http:" && u.protocol !== "https:") throw new VaultError("invalid_argument", `Only http and https URLs can be fetched (got ${u.protocol}).`);
      if (u.username || u.password) throw new VaultError("invalid_argument", "URLs with a user name or password are not fetched; give the URL without credentials.");
      const to = await this.addressesOf(u);
      const left = deadline - Date.now();
      if (left <= 0) throw new VaultError("unavailable", `The download took longer than ${Math.round(this.options.timeoutMs / 1000)} s and was stopped; nothing was written.`);
      try {
        answer = await this.deps.net.get({ url: u.href, address: to.address, family: to.family, maxBytes: this.options.maxBytes, timeoutMs: left });
      } catch (e) {
        if (e instanceof BodyTooLargeError || (e instanceof Error && e.name === "BodyTooLargeError")) {
          throw new VaultError("too_large", `The file is larger than the fetch limit of ${Math.round(this.options.maxBytes / 1024 / 1024)} MB; nothing was written. The owner can raise the limit in the plugin's settings (Largest fetch) or, headless, with --fetch-max-mb.`);
        }
        const msg = e instanceof Error ? e.message : String(e);
        if (/timed? ?out/i.test(msg)) throw new VaultError("unavailable", `The download took longer than ${Math.round(this.options.timeoutMs / 1000)} s and was stopped; nothing was written.`);
        throw new VaultError("unavailable", `Could not download ${u.href}: ${msg.replace(/(?:[A-Za-z]:)?(?:[\\/][^\s'"]+){2,}/g, "<path>")}. Nothing was written.`);
      }
      if (answer.status >= 300 && answer.status < 400 && answer.headers.location) {
        if (++redirects > MAX_REDIRECTS) throw new VaultError("unavailable", `More than ${MAX_REDIRECTS} redirects from ${req.url}; nothing was written.`);
        try {
          u = new URL(answer.headers.location, u);
        } catch {
          throw new VaultError("unavailable", `The server redirected to an invalid address; nothing was written.`);
        }
        continue;
      }
      break;
    }
    if (answer.status < 200 || answer.status >= 300) throw new VaultError("unavailable", `${u.href} answered HTTP ${answer.status}; nothing was written.`);
    const type = (answer.headers["content-type"] ?? "application/octet-stream").split(";")[0].trim().toLowerCase();
    if (!typeAllowed(type, this.options.contentTypes)) {
      throw new VaultError("forbidden", `${u.href} is ${type}, which fetch does not save (allowed: ${this.options.contentTypes.join(", ")}); the owner can allow more types in the plugin's settings (Fetch: content types) or, headless, with --fetch-content-type ${type}.`);
    }
    const isHtml = type === "text/html" || type === "application/xhtml+xml";
    let path = req.path;
    let ext = extensionOf(path);
    const convert = isHtml && (req.format === "markdown" || (req.format === undefined && (ext === "md" || ext === "")));
    if (ext === "") {
      ext = convert ? "md" : (EXT_BY_TYPE.get(type) ?? "bin");
      path = `${path}.${ext}`;
    }
    let bytes = answer.body;
    if (convert) {
      const charset = /charset=([^;]+)/i.exec(answer.headers["content-type"] ?? "")?.[1]?.trim().toLowerCase() ?? "utf-8";
      let html: string;
      try {
        html = new TextDecoder(charset).decode(bytes);
      } catch {
        html = new TextDecoder().decode(bytes);
      }
      const md = htmlToMarkdown(html, u.href);
      bytes = new TextEncoder().encode(md);
    } else if (isHtml || type === "image/svg+xml" || ACTIVE_EXTS.has(ext)) {
      // Saved as it is, but a browser opening it must run nothing of it (Obsidian shows an SVG,
      // and a .html opens in a browser): scripts, event handlers and javascript: addresses removed.
      bytes = new TextEncoder().encode(sanitizeMarkup(decodeMarkup(bytes, answer.headers["content-type"] ?? "")));
    }
    const r = await this.deps.writer.putBytes(
      { path, bytes, overwrite, ...(req.if_match !== undefined ? { if_match: req.if_match } : {}), detail: `fetched from ${u.origin}${u.pathname}`.slice(0, 300), retry: FETCH_RETRY },
      actor,
    );
    return {
      path: r.path,
      url: u.href,
      status: answer.status,
      content_type: type,
      size: r.size,
      etag: r.etag,
      created: r.created,
      converted: convert,
      redirects,
      ...(r.commit ? { commit: r.commit } : {}),
    };
  }
}
