import { dict } from "../../core/dict";
import { lookup } from "node:dns/promises";
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import zlib from "node:zlib";
import { BodyTooLargeError, type NetPort } from "../../core/fetch/fetch-service";

/**
 * The network port of `fetch` on Node's http/https, for both hosts. Inside Obsidian too: Obsidian's
 * `requestUrl` follows redirects by itself and looks the host name up again, so neither a redirect
 * hop nor the address actually connected to could be checked. Here the connection goes to the address
 * the guard checked (`lookup` answers with it), redirects are returned, not followed, and the body is
 * counted (after decompression) as it arrives.
 */
export function createNodeNet(opts: { resolve?: NetPort["resolve"]; userAgent?: string } = {}): NetPort {
  return {
    resolve:
      opts.resolve ??
      (async (host) => {
        const all = await lookup(host, { all: true, verbatim: true });
        return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
      }),
    get: (req) =>
      new Promise((resolve, reject) => {
        const u = new URL(req.url);
        const pinned: LookupFunction = (_host, options, cb) => {
          if ((options as { all?: boolean }).all) (cb as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: req.address, family: req.family }]);
          else cb(null, req.address, req.family);
        };
        const mod = u.protocol === "https:" ? https : http;
        let settled = false;
        const fail = (e: Error) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          r.destroy();
          reject(e);
        };
        const r = mod.request(
          {
            protocol: u.protocol,
            hostname: u.hostname.replace(/^\[|\]$/g, ""),
            port: u.port || undefined,
            path: `${u.pathname}${u.search}`,
            method: "GET",
            lookup: pinned,
            headers: { "User-Agent": opts.userAgent ?? "vault-mcp (Obsidian vault fetch)", Accept: "*/*", "Accept-Encoding": "gzip, deflate, br" },
          },
          (res) => {
            const headers: Record<string, string> = dict();
            for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
            const status = res.statusCode ?? 0;
            if (status >= 300 && status < 400) {
              res.resume();
              settled = true;
              clearTimeout(timer);
              resolve({ status, headers, body: new Uint8Array() });
              return;
            }
            const declared = Number(headers["content-length"]);
            const enc = (headers["content-encoding"] ?? "").toLowerCase();
            if (!enc && Number.isFinite(declared) && declared > req.maxBytes) {
              res.resume();
              fail(new BodyTooLargeError(req.maxBytes));
              return;
            }
            // Decompressed bytes are what count: a small compressed body may unpack to gigabytes.
            const stream: NodeJS.ReadableStream =
              enc === "gzip" || enc === "x-gzip" ? res.pipe(zlib.createGunzip()) : enc === "deflate" ? res.pipe(zlib.createInflate()) : enc === "br" ? res.pipe(zlib.createBrotliDecompress()) : res;
            const chunks: Buffer[] = [];
            let total = 0;
            stream.on("data", (c: Buffer) => {
              total += c.length;
              if (total > req.maxBytes) {
                fail(new BodyTooLargeError(req.maxBytes));
                return;
              }
              chunks.push(c);
            });
            stream.on("error", (e: Error) => fail(e));
            stream.on("end", () => {
              if (settled) return;
              settled = true;
              clearTimeout(timer);
              resolve({ status, headers, body: new Uint8Array(Buffer.concat(chunks)) });
            });
          },
        );
        const timer = setTimeout(() => fail(new Error("timed out")), req.timeoutMs);
        r.on("error", (e) => fail(e));
        r.end();
      }),
  };
}
