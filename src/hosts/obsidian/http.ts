/**
 * The HTTP port inside Obsidian: `requestUrl` (not `fetch`: no CORS from the app's origin, and the
 * plugin guidelines ask for it), with a timeout. Any status is an answer; no answer in time rejects.
 */
import { requestUrl } from "obsidian";
import type { HttpClient } from "../../core/http";
import { clearTimer, setTimer } from "../../core/timers";

export const obsidianHttp: HttpClient = (req) =>
  new Promise((resolve, reject) => {
    const timer = setTimer(() => reject(new Error(`timed out after ${Math.round(req.timeoutMs / 1000)} s`)), req.timeoutMs);
    let pending: Promise<{ status: number; text: string }>;
    try {
      pending = requestUrl({ url: req.url, method: req.method, headers: req.headers, body: req.body, throw: false });
    } catch (e) {
      clearTimer(timer);
      reject(e instanceof Error ? e : new Error(String(e)));
      return;
    }
    pending.then(
      (res) => {
        clearTimer(timer);
        resolve({ status: res.status, text: res.text });
      },
      (e: unknown) => {
        clearTimer(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
