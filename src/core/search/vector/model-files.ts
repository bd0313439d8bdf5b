/**
 * Fetching the built-in model's files (weights, tokenizer, runtime) once, when the owner turns it on:
 * in ranges appended to a `.part` file, so an interrupted download resumes where it stopped; checked
 * against a pinned SHA-256 before the `.part` becomes the file, so nothing half-written or altered
 * is ever used. I/O only through the ports the host gives (HTTP ranges, a folder).
 */
import { gitBlobId, sha256Hex } from "../../hash";
import type { HttpClient } from "../../http";
import { errText } from "../../strings";

/**
 * One file to fetch: where from, and what it must be. A file whose SHA-256 is pinned is checked
 * against that alone; a file without one (a model file we could not hash ourselves) is checked
 * against the SHA-256 the model hub states for it (`X-Linked-Etag`, large files) or, for a small file
 * kept in git, its git blob SHA-1 (`ETag`), and against its pinned size, or at most `maxBytes`.
 */
export interface ModelFile {
  /** The name in the model folder (may hold `/`). */
  name: string;
  url: string;
  /** The pinned size; absent: the hub's stated size, at most `maxBytes`. */
  bytes?: number;
  /** The pinned SHA-256; absent: the hub's stated hash. */
  sha256?: string;
  /** For a file without a pinned size: the most it may be. */
  maxBytes?: number;
}

/** The folder the files go to (the plugin's data folder inside Obsidian, the state folder headless). */
export interface ModelFolder {
  /** The file's size, or null when there is none. */
  size(name: string): Promise<number | null>;
  read(name: string): Promise<Uint8Array | null>;
  /** Appends bytes (creating the file). Throws as the disk does (ENOSPC when it is full). */
  append(name: string, bytes: Uint8Array): Promise<void>;
  /** Replaces `to` with `from`, atomically. */
  rename(from: string, to: string): Promise<void>;
  remove(name: string): Promise<void>;
}

/** An answer to a range request: its status, bytes, and (lower-case) headers. */
export interface RangeAnswer {
  status: number;
  bytes: Uint8Array;
  headers?: Record<string, string>;
  /** What the hub stated about the file on the way (the redirect's `X-Linked-*` headers, or the answer's `ETag`). */
  stated?: StatedFile;
}

/** What a hub says a file is. */
export interface StatedFile {
  sha256?: string;
  gitSha1?: string;
  size?: number;
}

/** Fetches byte ranges: `end` inclusive; an answer is 206 with the range, or 200 with the whole file. */
export type RangeFetch = (url: string, start: number, end: number) => Promise<RangeAnswer>;

export interface DownloadProgress {
  file: string;
  done: number;
  total: number;
}

export class ModelDownloadError extends Error {
  constructor(
    message: string,
    /** The owner stopped it (nothing is wrong; it resumes when asked). */
    readonly cancelled = false,
  ) {
    super(message);
    this.name = "ModelDownloadError";
  }
}

/** Bytes per request: small enough to resume near where it stopped, large enough to be few requests. */
export const RANGE_BYTES = 4 * 1024 * 1024;

/** Where the hashes of installed files that have no pinned hash are kept (checked on every start). */
export const VERIFIED_FILE = "verified.json";

/**
 * Makes sure every file is in `folder` and matches its checksum, fetching what is missing (resuming
 * a `.part` left by an earlier try). Throws ModelDownloadError saying which file and why; what was
 * fetched so far stays in its `.part` for the next try, unless it turned out wrong (then it is removed).
 * `signal` cancels between two ranges (the `.part` stays).
 */
export async function ensureModelFiles(
  files: readonly ModelFile[],
  folder: ModelFolder,
  fetchRange: RangeFetch,
  onProgress?: (p: DownloadProgress) => void,
  rangeBytes = RANGE_BYTES,
  signal?: AbortSignal,
): Promise<void> {
  const verified = await readVerified(folder);
  for (const f of files) {
    const have = await folder.size(f.name);
    if (have !== null && (await installedOk(folder, f, have, verified))) continue;
    if (have !== null) await folder.remove(f.name);
    const sha256 = await fetchFile(f, folder, fetchRange, onProgress, rangeBytes, signal);
    if (!f.sha256) {
      verified.set(f.name, { bytes: (await folder.size(f.name)) ?? 0, sha256 });
      await writeVerified(folder, verified);
    }
  }
}

/** The model's files are all there and checked (no network): what the host asks before loading them. */
export async function modelFilesPresent(files: readonly ModelFile[], folder: ModelFolder): Promise<boolean> {
  const verified = await readVerified(folder);
  for (const f of files) {
    const have = await folder.size(f.name);
    if (have === null || !(await installedOk(folder, f, have, verified))) return false;
  }
  return true;
}

async function installedOk(folder: ModelFolder, f: ModelFile, have: number, verified: Map<string, { bytes: number; sha256: string }>): Promise<boolean> {
  if (f.sha256) return have === f.bytes && (await matches(folder, f.name, f.sha256));
  const v = verified.get(f.name);
  if (!v || v.bytes !== have || (f.bytes !== undefined && f.bytes !== have)) return false;
  return matches(folder, f.name, v.sha256);
}

async function readVerified(folder: ModelFolder): Promise<Map<string, { bytes: number; sha256: string }>> {
  const out = new Map<string, { bytes: number; sha256: string }>();
  const raw = await folder.read(VERIFIED_FILE);
  if (!raw) return out;
  try {
    const json = JSON.parse(new TextDecoder().decode(raw)) as unknown;
    if (json && typeof json === "object") {
      for (const [k, v] of Object.entries(json as Record<string, unknown>)) {
        const e = v as { bytes?: unknown; sha256?: unknown };
        if (typeof e?.bytes === "number" && typeof e.sha256 === "string") out.set(k, { bytes: e.bytes, sha256: e.sha256 });
      }
    }
  } catch {
    // Unreadable: every unpinned file is fetched again.
  }
  return out;
}

async function writeVerified(folder: ModelFolder, verified: Map<string, { bytes: number; sha256: string }>): Promise<void> {
  const tmp = `${VERIFIED_FILE}.part`;
  await folder.remove(tmp);
  await folder.append(tmp, new TextEncoder().encode(JSON.stringify(Object.fromEntries(verified), null, 1)));
  await folder.rename(tmp, VERIFIED_FILE);
}

async function matches(folder: ModelFolder, name: string, sha256: string): Promise<boolean> {
  const bytes = await folder.read(name);
  return bytes !== null && (await sha256Hex(bytes)) === sha256.toLowerCase();
}

const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

/** What the file must be: its size and hash, pinned or as the hub states them (one 1-byte request). */
async function expectation(f: ModelFile, fetchRange: RangeFetch): Promise<{ bytes: number; sha256?: string; gitSha1?: string }> {
  if (f.sha256 && f.bytes !== undefined) return { bytes: f.bytes, sha256: f.sha256.toLowerCase() };
  let res: RangeAnswer;
  try {
    res = await fetchRange(f.url, 0, 0);
  } catch (e) {
    throw new ModelDownloadError(`Could not reach the model hub for ${f.name} (${errText(e)}); it is tried again later.`);
  }
  if (res.status !== 206 && res.status !== 200) throw new ModelDownloadError(`Downloading ${f.name} failed: HTTP ${res.status}.`);
  const stated = res.stated ?? {};
  const size = stated.size ?? totalOf(res);
  if (f.bytes !== undefined && size !== undefined && size !== f.bytes) {
    throw new ModelDownloadError(`The hub now serves ${f.name} with ${size} bytes where ${f.bytes} are pinned: not downloaded (a changed model; an update of the plugin knows the new one).`);
  }
  if (f.sha256 && stated.sha256 && stated.sha256 !== f.sha256.toLowerCase()) {
    throw new ModelDownloadError(`The hub states another SHA-256 for ${f.name} than the pinned one: not downloaded.`);
  }
  const bytes = f.bytes ?? size;
  if (bytes === undefined) throw new ModelDownloadError(`The hub stated no size for ${f.name}: not downloaded.`);
  if (f.bytes === undefined && f.maxBytes !== undefined && bytes > f.maxBytes) {
    throw new ModelDownloadError(`The hub serves ${f.name} with ${mb(bytes)}, more than the ${mb(f.maxBytes)} it may be: not downloaded.`);
  }
  if (f.sha256) return { bytes, sha256: f.sha256.toLowerCase() };
  if (stated.sha256) return { bytes, sha256: stated.sha256 };
  if (stated.gitSha1) return { bytes, gitSha1: stated.gitSha1 };
  throw new ModelDownloadError(`The hub stated no checksum for ${f.name} (no X-Linked-Etag or ETag header), so it cannot be checked: not downloaded.`);
}

function totalOf(res: RangeAnswer): number | undefined {
  const cr = res.headers?.["content-range"];
  const m = cr ? /\/(\d+)\s*$/.exec(cr) : null;
  if (m) return Number(m[1]);
  return res.status === 200 ? res.bytes.length : undefined;
}

/** Fetches one file into place; returns its SHA-256. */
async function fetchFile(
  f: ModelFile,
  folder: ModelFolder,
  fetchRange: RangeFetch,
  onProgress: ((p: DownloadProgress) => void) | undefined,
  rangeBytes: number,
  signal: AbortSignal | undefined,
): Promise<string> {
  const part = `${f.name}.part`;
  let done = (await folder.size(part)) ?? 0;
  const cancelled = () =>
    new ModelDownloadError(`The download of ${f.name} was cancelled at ${mb(done)}; it resumes from there when semantic search is turned on again (or build_embeddings is called).`, true);
  if (signal?.aborted) throw cancelled();
  const want = await expectation(f, fetchRange);
  const total = want.bytes;
  if (done > total) {
    await folder.remove(part);
    done = 0;
  }
  onProgress?.({ file: f.name, done, total });
  while (done < total) {
    if (signal?.aborted) throw cancelled();
    const end = Math.min(total, done + rangeBytes) - 1;
    let res: RangeAnswer;
    try {
      res = await fetchRange(f.url, done, end);
    } catch (e) {
      throw new ModelDownloadError(`Downloading ${f.name} stopped at ${done} of ${total} bytes (${errText(e)}); it resumes from there on the next try.`);
    }
    const served = res.status === 416 ? /\*\/(\d+)/.exec(res.headers?.["content-range"] ?? "")?.[1] : res.status === 206 ? String(totalOf(res) ?? total) : undefined;
    if (served !== undefined && Number(served) !== total) {
      // Another file than the one pinned (or stated when the download began): what was fetched is not kept.
      await folder.remove(part);
      throw new ModelDownloadError(`The server now serves ${f.name} with ${served} bytes where ${total} are ${f.bytes !== undefined ? "pinned" : "stated"}: not downloaded (a changed model; the downloaded bytes were deleted).`);
    }
    let bytes = res.bytes;
    if (res.status === 200) {
      // The server sent the whole file (no ranges): keep what follows what we have.
      if (bytes.length !== total) throw new ModelDownloadError(`${f.name}: the server sent ${bytes.length} bytes where ${total} were expected.`);
      bytes = bytes.subarray(done);
    } else if (res.status !== 206) {
      throw new ModelDownloadError(`Downloading ${f.name} failed: HTTP ${res.status}.`);
    } else if (bytes.length === 0 || bytes.length > end - done + 1) {
      throw new ModelDownloadError(`${f.name}: the server answered a range request with ${bytes.length} bytes.`);
    }
    try {
      await folder.append(part, bytes);
    } catch (e) {
      const full = /ENOSPC|no space|quota/i.test(errText(e));
      throw new ModelDownloadError(
        full
          ? `The disk is full: ${f.name} needs ${total - done} more bytes. Free some space; the download resumes where it stopped.`
          : `Could not save ${f.name} (${errText(e)}); the download resumes where it stopped.`,
      );
    }
    done += bytes.length;
    onProgress?.({ file: f.name, done, total });
  }
  const got = await folder.read(part);
  const sha256 = got ? await sha256Hex(got) : "";
  const ok = got !== null && got.length === total && (want.sha256 ? sha256 === want.sha256 : want.gitSha1 === (await gitBlobId(got)));
  if (!ok) {
    await folder.remove(part);
    const against = want.sha256 ? (f.sha256 ? "its pinned SHA-256" : "the SHA-256 the hub states for it") : "the git SHA-1 the hub states for it";
    throw new ModelDownloadError(`${f.name} does not match ${against} (a changed or damaged download); the downloaded bytes were deleted and it will be fetched again.`);
  }
  await folder.rename(part, f.name);
  return sha256;
}

/** A RangeFetch over an HTTP port that returns bytes (`HttpClient` gives text; hosts give this one). */
export type BinaryHttp = (req: Parameters<HttpClient>[0]) => Promise<{ status: number; bytes: Uint8Array; headers?: Record<string, string> }>;

/** Redirects followed per request (the hub sends large files to its CDN). */
const MAX_REDIRECTS = 5;

/**
 * Range requests over a binary HTTP port that does not follow redirects itself: redirects are
 * followed here (at most 5; never from https to http), and what the hub states about the file on
 * the way (`X-Linked-Etag`, `X-Linked-Size` on its redirect; `ETag` of a file it serves itself) is
 * kept for the checks.
 */
export function rangeFetchOver(http: BinaryHttp, timeoutMs = 120_000): RangeFetch {
  return async (url, start, end) => {
    let at = url;
    let stated: StatedFile | undefined;
    for (let hop = 0; ; hop++) {
      const res = await http({ url: at, method: "GET", headers: { Range: `bytes=${start}-${end}` }, timeoutMs });
      const h = res.headers ?? {};
      // Only the hub's own answers state the file (a CDN's ETag is its own business): the first
      // answer, or one of the hub's own redirects after it (a renamed repository's canonical path).
      if (!stated?.sha256 && !stated?.gitSha1 && new URL(at).origin === new URL(url).origin) stated = statedBy(h, res.status) ?? stated;
      if (res.status >= 300 && res.status < 400 && h.location) {
        if (hop >= MAX_REDIRECTS) throw new Error(`more than ${MAX_REDIRECTS} redirects`);
        const next = new URL(h.location, at);
        if (new URL(at).protocol === "https:" && next.protocol !== "https:") throw new Error("a redirect from https to http");
        if (next.protocol !== "https:" && next.protocol !== "http:") throw new Error(`a redirect to ${next.protocol}`);
        at = next.toString();
        continue;
      }
      return { status: res.status, bytes: res.bytes, headers: h, stated };
    }
  };
}

const unquote = (v: string | undefined) => v?.replace(/^W\//, "").replace(/"/g, "").trim().toLowerCase();

function statedBy(h: Record<string, string>, status: number): StatedFile | undefined {
  const linked = unquote(h["x-linked-etag"]);
  const size = h["x-linked-size"] !== undefined && /^\d+$/.test(h["x-linked-size"]) ? Number(h["x-linked-size"]) : undefined;
  if (linked && /^[0-9a-f]{64}$/.test(linked)) return { sha256: linked, size };
  // A file the hub serves itself (kept in git, not LFS): its ETag is the git blob SHA-1.
  if (status === 200 || status === 206) {
    const etag = unquote(h.etag);
    if (etag && /^[0-9a-f]{64}$/.test(etag)) return { sha256: etag, size };
    if (etag && /^[0-9a-f]{40}$/.test(etag)) return { gitSha1: etag, size };
  }
  return size !== undefined ? { size } : undefined;
}
