/**
 * The HTTP port headless, on `node:http`/`node:https` (`fetch` is what the plugin must not use; the
 * headless host has no `requestUrl`). Answers with the status and text whatever the status; rejects
 * only when no answer came (refused, timed out).
 */
import * as http from "node:http";
import * as https from "node:https";
import type { HttpClient } from "../../core/http";

export const nodeHttp: HttpClient = (req) =>
  new Promise((resolve, reject) => {
    const url = new URL(req.url);
    const lib = url.protocol === "https:" ? https : http;
    const r = lib.request(url, { method: req.method, headers: req.headers, timeout: req.timeoutMs }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(parts).toString("utf8") }));
      res.on("error", reject);
    });
    r.on("timeout", () => r.destroy(new Error(`timed out after ${Math.round(req.timeoutMs / 1000)} s`)));
    r.on("error", reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
