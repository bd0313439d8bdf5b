import { VaultError } from "../errors";
import { makePathMatcher } from "../glob";
import { isUnder } from "../paths";
import type { AccessPolicy } from "../policy";
import { isNotePath, parentOf, type VaultPort } from "../vault";

export interface GrepRequest {
  pattern: string;
  regex?: boolean;
  caseSensitive?: boolean;
  /** Vault-relative folder, already validated ("" = whole vault). */
  folder?: string;
  /** Glob over paths (`Projects/**`, `*.md`). */
  glob?: string;
  /** 0..5 lines of context before and after each match. */
  contextLines?: number;
  /** Maximum number of matching lines returned. */
  limit: number;
  /** Maximum bytes of returned text (line texts and context), roughly. */
  maxBytes?: number;
  signal?: AbortSignal;
}

export interface GrepMatch {
  path: string;
  /** 1-based line number in the file. */
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

export interface GrepResult {
  matches: GrepMatch[];
  truncated: boolean;
  files_scanned: number;
}

/** Lines longer than this are matched and shown only up to this many characters. */
export const MAX_LINE_CHARS = 2000;
/** Regular expressions longer than this are refused (they are usually a mistake, and slow). */
export const MAX_PATTERN_CHARS = 1000;
export const DEFAULT_GREP_BYTES = 64 * 1024;
const SLICE_MS = 10;

/** Compiles the pattern into a line matcher, or throws `invalid_argument` saying what to fix. */
export function compileGrepPattern(pattern: string, regex: boolean, caseSensitive: boolean): (line: string) => boolean {
  if (pattern.length === 0) throw new VaultError("invalid_argument", "The grep pattern is empty; give the text (or regular expression with regex: true) to look for.");
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new VaultError("invalid_argument", `The grep pattern is ${pattern.length} characters long; keep it under ${MAX_PATTERN_CHARS}.`);
  }
  if (!regex) {
    if (caseSensitive) return (line) => line.includes(pattern);
    const needle = pattern.toLowerCase();
    return (line) => line.toLowerCase().includes(needle);
  }
  let re: RegExp;
  try {
    re = new RegExp(pattern, caseSensitive ? "u" : "iu");
  } catch (e) {
    // Retry without the `u` flag, which rejects some escapes people write out of habit (`\-`, `\_`).
    try {
      re = new RegExp(pattern, caseSensitive ? "" : "i");
    } catch {
      const why = e instanceof Error ? e.message.replace(/^Invalid regular expression: /, "") : String(e);
      throw new VaultError(
        "invalid_argument",
        `The regular expression is not valid (${why}). Fix it, or pass regex: false to search for the text literally.`,
      );
    }
  }
  if (re.test("")) {
    throw new VaultError("invalid_argument", `The regular expression /${pattern}/ matches empty text, so it would match every line; make it match at least one character.`);
  }
  return (line) => re.test(line);
}

/** Literal or regex search over note text, line by line; yields to the event loop every ~10 ms. */
export async function grepNotes(port: VaultPort, policy: AccessPolicy, req: GrepRequest): Promise<GrepResult> {
  const match = compileGrepPattern(req.pattern, req.regex ?? false, req.caseSensitive ?? false);
  const folder = req.folder ?? "";
  const glob = req.glob ? makePathMatcher(req.glob) : null;
  const ctx = Math.max(0, Math.min(5, Math.floor(req.contextLines ?? 0)));
  const maxBytes = req.maxBytes ?? DEFAULT_GREP_BYTES;
  const files = port
    .listFiles()
    .filter((f) => isNotePath(f.path) && !policy.isHidden(f.path) && isUnder(parentOf(f.path), folder) && (!glob || glob(f.path)))
    .map((f) => f.path)
    .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  const matches: GrepMatch[] = [];
  let bytes = 0;
  let truncated = false;
  let scanned = 0;
  let sliceStart = Date.now();
  outer: for (const path of files) {
    if (req.signal?.aborted) throw new VaultError("unavailable", "The grep was cancelled.");
    if (Date.now() - sliceStart >= SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = Date.now();
    }
    let text: string;
    try {
      text = await port.read(path);
    } catch {
      continue; // deleted or unreadable since listing
    }
    scanned++;
    const lines = text.split("\n");
    for (let i = 0; i < lines.length; i++) {
      const line = clip(lines[i]);
      if (!match(line)) continue;
      if (matches.length >= req.limit) {
        truncated = true;
        break outer;
      }
      const m: GrepMatch = { path, line: i + 1, text: line };
      if (ctx > 0) {
        m.before = lines.slice(Math.max(0, i - ctx), i).map(clip);
        m.after = lines.slice(i + 1, i + 1 + ctx).map(clip);
      }
      const size = path.length + line.length + 16 + (m.before?.join("\n").length ?? 0) + (m.after?.join("\n").length ?? 0);
      if (bytes + size > maxBytes && matches.length > 0) {
        truncated = true;
        break outer;
      }
      bytes += size;
      matches.push(m);
    }
  }
  return { matches, truncated, files_scanned: scanned };
}

/** Lets other work run (the core runs in Obsidian and in Node; a zero-delay timer is what both have). */
function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => {
    setTimeout(resolve, 0);
  });
}

function clip(line: string): string {
  const l = line.endsWith("\r") ? line.slice(0, -1) : line;
  return l.length > MAX_LINE_CHARS ? l.slice(0, MAX_LINE_CHARS) : l;
}

/** `path:line: text` lines, with context lines as `path-line- text` like grep -C. */
export function formatGrep(res: GrepResult): string {
  const out: string[] = [];
  for (const m of res.matches) {
    const first = m.line - (m.before?.length ?? 0);
    m.before?.forEach((t, k) => out.push(`${m.path}-${first + k}- ${t}`));
    out.push(`${m.path}:${m.line}: ${m.text}`);
    m.after?.forEach((t, k) => out.push(`${m.path}-${m.line + 1 + k}- ${t}`));
    if (m.before || m.after) out.push("--");
  }
  if (res.matches.length === 0) out.push(`No matches (${res.files_scanned} notes scanned).`);
  if (res.truncated) out.push(`[truncated: more matches exist; narrow the pattern, folder or glob, or raise limit]`);
  return out.join("\n");
}
