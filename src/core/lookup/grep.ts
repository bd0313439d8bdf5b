import { VaultError } from "../errors";
import { makePathMatcher } from "../glob";
import { isUnder } from "../paths";
import type { AccessPolicy } from "../policy";
import { compileLinearRegex, MAX_PATTERN_CHARS } from "../regex";
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
  /** `Date.now()` after which the scan stops and answers with what it found (`truncated_reason: "time_limit"`). */
  deadline?: number;
}

export interface GrepMatch {
  path: string;
  /** 1-based line number in the file. */
  line: number;
  text: string;
  before?: string[];
  after?: string[];
}

/** Why a grep stopped early: the match limit, the output size, or the call's time limit. */
export type GrepStop = "limit" | "size" | "time_limit";

export interface GrepResult {
  matches: GrepMatch[];
  truncated: boolean;
  truncated_reason?: GrepStop;
  files_scanned: number;
}

/** Lines longer than this are matched and shown only up to this many characters. */
export const MAX_LINE_CHARS = 2000;
export const DEFAULT_GREP_BYTES = 64 * 1024;
const SLICE_MS = 10;
/** Lines matched between two looks at the clock (a regex line costs up to ~40 ms at the engine's limits; a literal one, microseconds). */
const LINES_PER_CLOCK_CHECK = 64;

/** Compiles the pattern into a line matcher, or throws `invalid_argument` saying what to fix. */
export function compileGrepPattern(pattern: string, regex: boolean, caseSensitive: boolean): { test: (line: string) => boolean; heavy: boolean } {
  if (pattern.length === 0) throw new VaultError("invalid_argument", "The grep pattern is empty; give the text (or regular expression with regex: true) to look for.");
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new VaultError("invalid_argument", `The grep pattern is ${pattern.length} characters long; keep it under ${MAX_PATTERN_CHARS}.`);
  }
  if (!regex) {
    if (caseSensitive) return { test: (line) => line.includes(pattern), heavy: false };
    const needle = pattern.toLowerCase();
    return { test: (line) => line.toLowerCase().includes(needle), heavy: false };
  }
  const re = compileLinearRegex(pattern, { caseSensitive, recovery: " Or pass regex: false to search for the text literally." });
  if (re.test("")) {
    throw new VaultError("invalid_argument", `The regular expression /${pattern}/ matches empty text, so it would match every line; make it match at least one character.`);
  }
  // Above ~50 steps a line can take milliseconds; look at the clock after every line.
  return { test: (line) => re.test(line), heavy: re.cost > 50 };
}

/**
 * Literal or regex search over note text, line by line. Yields to the event loop every ~10 ms (also
 * within a long note) and stops at `deadline`, answering with the matches found so far.
 */
export async function grepNotes(port: VaultPort, policy: AccessPolicy, req: GrepRequest): Promise<GrepResult> {
  const matcher = compileGrepPattern(req.pattern, req.regex ?? false, req.caseSensitive ?? false);
  const folder = req.folder ?? "";
  const glob = req.glob ? makePathMatcher(req.glob) : null;
  const ctx = Math.max(0, Math.min(5, Math.floor(req.contextLines ?? 0)));
  const maxBytes = req.maxBytes ?? DEFAULT_GREP_BYTES;
  const deadline = req.deadline ?? Infinity;
  const linesPerCheck = matcher.heavy ? 1 : LINES_PER_CLOCK_CHECK;
  const files = await listNotes(port, policy, folder, glob, req.signal);

  const matches: GrepMatch[] = [];
  let bytes = 0;
  let stop: GrepStop | undefined;
  let scanned = 0;
  let sliceStart = Date.now();
  /** Between two pieces of work: yields when the slice is used up; false once the deadline has passed. */
  const mayGoOn = async (): Promise<boolean> => {
    if (req.signal?.aborted) throw new VaultError("unavailable", "The grep was cancelled.");
    const now = Date.now();
    if (now >= deadline) return false;
    if (now - sliceStart >= SLICE_MS) {
      await yieldToEventLoop();
      sliceStart = Date.now();
    }
    return true;
  };
  outer: for (const path of files) {
    if (!(await mayGoOn())) {
      stop = "time_limit";
      break;
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
      if (i > 0 && i % linesPerCheck === 0 && !(await mayGoOn())) {
        stop = "time_limit";
        break outer;
      }
      const line = clip(lines[i]);
      if (!matcher.test(line)) continue;
      if (matches.length >= req.limit) {
        stop = "limit";
        break outer;
      }
      const m: GrepMatch = { path, line: i + 1, text: line };
      if (ctx > 0) {
        m.before = lines.slice(Math.max(0, i - ctx), i).map(clip);
        m.after = lines.slice(i + 1, i + 1 + ctx).map(clip);
      }
      const size = path.length + line.length + 16 + (m.before?.join("\n").length ?? 0) + (m.after?.join("\n").length ?? 0);
      if (bytes + size > maxBytes && matches.length > 0) {
        stop = "size";
        break outer;
      }
      bytes += size;
      matches.push(m);
    }
  }
  return { matches, truncated: stop !== undefined, ...(stop ? { truncated_reason: stop } : {}), files_scanned: scanned };
}

/** The notes a grep reads, sorted; the glob is tested in slices too (a vault can hold 50k paths). */
async function listNotes(port: VaultPort, policy: AccessPolicy, folder: string, glob: ((p: string) => boolean) | null, signal?: AbortSignal): Promise<string[]> {
  const out: string[] = [];
  let sliceStart = Date.now();
  for (const f of port.listFiles()) {
    if (isNotePath(f.path) && !policy.isHidden(f.path) && isUnder(parentOf(f.path), folder) && (!glob || glob(f.path))) out.push(f.path);
    if (glob && Date.now() - sliceStart >= SLICE_MS) {
      if (signal?.aborted) throw new VaultError("unavailable", "The grep was cancelled.");
      await yieldToEventLoop();
      sliceStart = Date.now();
    }
  }
  return out.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
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
  if (res.truncated_reason === "time_limit") {
    out.push(`[truncated: the call's time limit came after ${res.files_scanned} notes; the rest were not searched. Narrow the folder or pattern to search them]`);
  } else if (res.truncated) {
    out.push(`[truncated: more matches exist; narrow the pattern, folder or glob, or raise limit]`);
  }
  return out.join("\n");
}
