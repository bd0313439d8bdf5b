/**
 * A local server that behaves like the Hugging Face hub for downloads: `/<repo>/resolve/main/<file>`
 * answers large (LFS) files with a 302 to a CDN host on another port, stating the file's SHA-256
 * and size in `X-Linked-Etag` / `X-Linked-Size`; small files it serves itself with their git blob
 * SHA-1 as `ETag`. Both honour `Range`. Faults on demand: a wrong stated hash, no hash, altered
 * bytes, the CDN dropping the connection after some requests.
 */
import { createHash } from "node:crypto";
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface HubFile {
  bytes: Uint8Array;
  /** Served through the CDN with X-Linked-* headers (LFS), else by the hub with a git ETag. */
  lfs: boolean;
}

export interface HubFaults {
  wrongHash: Set<string>;
  noHash: Set<string>;
  corrupt: Set<string>;
  /** The CDN drops the connection on every request once it has answered this many (counted in cdnRequests). */
  cdnDropAfter: number;
  cdnRequests: number;
}

export interface HubServer {
  /** The hub's base URL (ends with "/"). */
  url: string;
  cdnUrl: string;
  /** Requests as "hub GET /path range" / "cdn GET /path range". */
  seen: string[];
  faults: HubFaults;
  close(): Promise<void>;
}

export const sha256Of = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
export const gitSha1Of = (b: Uint8Array) => createHash("sha1").update(`blob ${b.length}\0`).update(b).digest("hex");

function serveRange(req: http.IncomingMessage, res: http.ServerResponse, data: Uint8Array, headers: Record<string, string | number>): void {
  const m = /^bytes=(\d+)-(\d+)?$/.exec(req.headers.range ?? "");
  if (m) {
    const a = Number(m[1]);
    if (a >= data.length) {
      res.writeHead(416, { ...headers, "Content-Range": `bytes */${data.length}` });
      res.end();
      return;
    }
    const b = Math.min(m[2] === undefined ? data.length - 1 : Number(m[2]), data.length - 1);
    res.writeHead(206, { ...headers, "Content-Range": `bytes ${a}-${b}/${data.length}`, "Content-Length": b - a + 1, "Accept-Ranges": "bytes" });
    res.end(Buffer.from(data.subarray(a, b + 1)));
  } else {
    res.writeHead(200, { ...headers, "Content-Length": data.length });
    res.end(Buffer.from(data));
  }
}

/** Starts the hub and its CDN on loopback; `files` maps "<repo>/<file>" to its bytes. */
export async function startHub(files: Map<string, HubFile>): Promise<HubServer> {
  const seen: string[] = [];
  const faults: HubFaults = { wrongHash: new Set(), noHash: new Set(), corrupt: new Set(), cdnDropAfter: Infinity, cdnRequests: 0 };
  const dataOf = (key: string) => {
    const f = files.get(key)!;
    return faults.corrupt.has(key) ? f.bytes.map((b, i) => (i === 3 ? b ^ 1 : b)) : f.bytes;
  };
  const cdn = http.createServer((req, res) => {
    const key = decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname.replace(/^\/blobs\//, ""));
    seen.push(`cdn ${req.method} /${key} ${req.headers.range ?? "(whole)"}`);
    if (++faults.cdnRequests > faults.cdnDropAfter) {
      req.socket.destroy();
      return;
    }
    if (!files.has(key)) {
      res.writeHead(404).end();
      return;
    }
    serveRange(req, res, dataOf(key), { "Content-Type": "application/octet-stream" });
  });
  await new Promise<void>((r) => cdn.listen(0, "127.0.0.1", r));
  const cdnUrl = `http://127.0.0.1:${(cdn.address() as AddressInfo).port}/`;
  const hub = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    if (url.pathname.startsWith("/renamed/")) {
      // A renamed repository: the hub sends the old path to the new one (relative Location).
      seen.push(`hub ${req.method} ${url.pathname} ${req.headers.range ?? "(whole)"}`);
      res.writeHead(307, { Location: url.pathname.replace(/^\/renamed\//, "/Xenova/") }).end();
      return;
    }
    const m = /^\/(.+?\/.+?)\/resolve\/main\/(.+)$/.exec(url.pathname);
    seen.push(`hub ${req.method} ${url.pathname} ${req.headers.range ?? "(whole)"}`);
    const key = m ? `${m[1]}/${m[2]}` : "";
    const f = files.get(key);
    if (!f) {
      res.writeHead(404, { "X-Error-Code": "EntryNotFound" }).end("Entry not found");
      return;
    }
    if (f.lfs) {
      const sha = faults.wrongHash.has(key) ? sha256Of(new TextEncoder().encode("something else")) : sha256Of(f.bytes);
      const headers: Record<string, string> = { Location: `${cdnUrl}blobs/${encodeURIComponent(key)}?X-Amz-Signature=test`, "X-Linked-Size": String(f.bytes.length), "X-Repo-Commit": "0".repeat(40) };
      if (!faults.noHash.has(key)) {
        headers["X-Linked-Etag"] = `"${sha}"`;
        headers.ETag = `"${sha}"`;
      }
      res.writeHead(302, headers);
      res.end(`Found. Redirecting to ${headers.Location}`);
      return;
    }
    const etag = faults.wrongHash.has(key) ? gitSha1Of(new TextEncoder().encode("something else")) : gitSha1Of(f.bytes);
    serveRange(req, res, dataOf(key), faults.noHash.has(key) ? {} : { ETag: `"${etag}"`, "X-Repo-Commit": "0".repeat(40) });
  });
  await new Promise<void>((r) => hub.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(hub.address() as AddressInfo).port}/`,
    cdnUrl,
    seen,
    faults,
    close: async () => {
      await new Promise((r) => hub.close(r));
      await new Promise((r) => cdn.close(r));
    },
  };
}
