/**
 * Fetching the built-in model's files (weights, tokenizer, runtime) once, when the owner turns it on:
 * in ranges appended to a `.part` file, so an interrupted download resumes where it stopped; checked
 * against a pinned SHA-256 before the `.part` becomes the file, so nothing half-written or altered
 * is ever used. I/O only through the ports the host gives (HTTP ranges, a folder).
 */
import { sha256Hex } from "../../hash";
import type { HttpClient } from "../../http";
import { errText } from "../../strings";

/** One file to fetch: where from, its size and its pinned checksum. */
export interface ModelFile {
  /** The name in the model folder (may hold `/`). */
  name: string;
  url: string;
  bytes: number;
  sha256: string;
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

/** Fetches byte ranges: `end` inclusive; an answer is 206 with the range, or 200 with the whole file. */
export type RangeFetch = (url: string, start: number, end: number) => Promise<{ status: number; bytes: Uint8Array }>;

/** An HTTP port's range fetch (Range header; the answer's text as bytes is not enough: binary). */
export interface DownloadProgress {
  file: string;
  done: number;
  total: number;
}

export class ModelDownloadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "ModelDownloadError";
  }
}

/** Bytes per request: small enough to resume near where it stopped, large enough to be few requests. */
export const RANGE_BYTES = 4 * 1024 * 1024;

/**
 * Makes sure every file is in `folder` and matches its checksum, fetching what is missing (resuming
 * a `.part` left by an earlier try). Throws ModelDownloadError saying which file and why; what was
 * fetched so far stays in its `.part` for the next try, unless it turned out wrong (then it is removed).
 */
export async function ensureModelFiles(files: readonly ModelFile[], folder: ModelFolder, fetchRange: RangeFetch, onProgress?: (p: DownloadProgress) => void, rangeBytes = RANGE_BYTES): Promise<void> {
  for (const f of files) {
    const have = await folder.size(f.name);
    if (have === f.bytes && (await matches(folder, f.name, f.sha256))) continue;
    if (have !== null) await folder.remove(f.name);
    await fetchFile(f, folder, fetchRange, onProgress, rangeBytes);
  }
}

async function matches(folder: ModelFolder, name: string, sha256: string): Promise<boolean> {
  const bytes = await folder.read(name);
  return bytes !== null && (await sha256Hex(bytes)) === sha256.toLowerCase();
}

async function fetchFile(f: ModelFile, folder: ModelFolder, fetchRange: RangeFetch, onProgress: ((p: DownloadProgress) => void) | undefined, rangeBytes: number): Promise<void> {
  const part = `${f.name}.part`;
  let done = (await folder.size(part)) ?? 0;
  if (done > f.bytes) {
    await folder.remove(part);
    done = 0;
  }
  onProgress?.({ file: f.name, done, total: f.bytes });
  while (done < f.bytes) {
    const end = Math.min(f.bytes, done + rangeBytes) - 1;
    let res: { status: number; bytes: Uint8Array };
    try {
      res = await fetchRange(f.url, done, end);
    } catch (e) {
      throw new ModelDownloadError(`Downloading ${f.name} stopped at ${done} of ${f.bytes} bytes (${errText(e)}); it resumes from there on the next try.`);
    }
    let bytes = res.bytes;
    if (res.status === 200) {
      // The server sent the whole file (no ranges): keep what follows what we have.
      if (bytes.length !== f.bytes) throw new ModelDownloadError(`${f.name}: the server sent ${bytes.length} bytes where ${f.bytes} were expected.`);
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
          ? `The disk is full: ${f.name} needs ${f.bytes - done} more bytes. Free some space; the download resumes where it stopped.`
          : `Could not save ${f.name} (${errText(e)}); the download resumes where it stopped.`,
      );
    }
    done += bytes.length;
    onProgress?.({ file: f.name, done, total: f.bytes });
  }
  if (!(await matches(folder, part, f.sha256))) {
    await folder.remove(part);
    throw new ModelDownloadError(`${f.name} does not match its pinned checksum (a changed or damaged download); it was removed and will be fetched again.`);
  }
  await folder.rename(part, f.name);
}

/** A RangeFetch over an HTTP port that returns bytes (`HttpClient` gives text; hosts give this one). */
export type BinaryHttp = (req: Parameters<HttpClient>[0]) => Promise<{ status: number; bytes: Uint8Array }>;

export function rangeFetchOver(http: BinaryHttp, timeoutMs = 120_000): RangeFetch {
  return (url, start, end) => http({ url, method: "GET", headers: { Range: `bytes=${start}-${end}` }, timeoutMs });
}
