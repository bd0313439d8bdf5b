/**
 * The HTTP port headless, on `node:http`/`node:https` (`fetch` is what the plugin must not use; the
 * headless host has no `requestUrl`). Answers with the status and body whatever the status; rejects
 * only when no answer came (refused, timed out).
 */
import * as http from "node:http";
import * as https from "node:https";
import { dict } from "../../core/dict";
import type { HttpClient, HttpRequest } from "../../core/http";
import type { BinaryHttp } from "../../core/search/vector/model-files";

function request(req: HttpRequest): Promise<{ status: number; body: Buffer; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const url = new URL(req.url);
    const lib = url.protocol === "https:" ? https : http;
    const r = lib.request(url, { method: req.method, headers: req.headers, timeout: req.timeoutMs }, (res) => {
      const parts: Buffer[] = [];
      res.on("data", (c: Buffer) => parts.push(c));
      res.on("end", () => {
        // Header names come from the server: no prototype for them to meet.
        const headers = dict<string>();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : v;
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(parts), headers });
      });
      res.on("aborted", () => reject(new Error("the connection closed before the answer was complete")));
      res.on("error", reject);
    });
    r.on("timeout", () => r.destroy(new Error(`timed out after ${Math.round(req.timeoutMs / 1000)} s`)));
    r.on("error", reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

export const nodeHttp: HttpClient = async (req) => {
  const { status, body } = await request(req);
  return { status, text: body.toString("utf8") };
};

export const nodeBinaryHttp: BinaryHttp = async (req) => {
  const { status, body, headers } = await request(req);
  return { status, bytes: new Uint8Array(body.buffer, body.byteOffset, body.byteLength), headers };
};
