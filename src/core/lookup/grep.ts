import { VaultError } from "../errors";
import { makePathMatcher } from "../glob";
import { isUnder } from "../paths";
import type { AccessPolicy } from "../policy";
import { compileLinearRegex, MAX_PATTERN_CHARS } from "../regex";
import { yieldToEventLoop } from "../time-slice";
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
/** Tests (of a line or a block) between two looks at the clock, for patterns whose tests take microseconds. */
const TESTS_PER_CLOCK_CHECK = 64;

/** A compiled grep pattern: a line test, and for regexes a block test that lets a scan skip many lines at once. */
export interface GrepMatcher {
  test(line: string): boolean;
  /** See `LinearRegex.testBlock`; null for literal text (V8's `includes` is fast line by line). */
  testBlock: ((block: string) => boolean) | null;
  /** True when one test can take milliseconds: the scan looks at the clock before every test. */
  heavy: boolean;
}

/** Compiles the pattern into a line matcher, or throws `invalid_argument` saying what to fix. */
export function compileGrepPattern(pattern: string, regex: boolean, caseSensitive: boolean): GrepMatcher {
  if (pattern.length === 0) throw new VaultError("invalid_argument", "The grep pattern is empty; give the text (or regular expression with regex: true) to look for.");
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new VaultError("invalid_argument", `The grep pattern is ${pattern.length} characters long; keep it under ${MAX_PATTERN_CHARS}.`);
  }
  if (!regex) {
    if (caseSensitive) return { test: (line) => line.includes(pattern), testBlock: null, heavy: false };
    const needle = pattern.toLowerCase();
    return { test: (line) => line.toLowerCase().includes(needle), testBlock: null, heavy: false };
  }
  const re = compileLinearRegex(pattern, { caseSensitive, blocks: true, recovery: " Or pass regex: false to search for the text literally." });
  if (re.test("")) {
    throw new VaultError("invalid_argument", `The regular expression /${pattern}/ matches empty text, so it would match every line; make it match at least one character.`);
  }
  // Above ~50 steps one test of a 2,000-character text can take milliseconds.
  return { test: (line) => re.test(line), testBlock: re.testBlock, heavy: re.cost > 50 };
}

/**
 * Literal or regex search over note text, line by line (regexes first test blocks of lines up to
 * `MAX_LINE_CHARS` long, and only a matching block line by line). Yields to the event loop every
 * ~10 ms, also within a long note, and stops at `deadline`, answering with the matches found so far.
 */
export async function grepNotes(port: VaultPort, policy: AccessPolicy, req: GrepRequest): Promise<GrepResult> {
  const matcher = compileGrepPattern(req.pattern, req.regex ?? false, req.caseSensitive ?? false);
  const folder = req.folder ?? "";
  const glob = req.glob ? makePathMatcher(req.glob) : null;
  const ctx = Math.max(0, Math.min(5, Math.floor(req.contextLines ?? 0)));
  const maxBytes = req.maxBytes ?? DEFAULT_GREP_BYTES;
  const deadline = req.deadline ?? Infinity;
  const testsPerCheck = matcher.heavy ? 1 : TESTS_PER_CLOCK_CHECK;
  const files = await listNotes(port, policy, folder, glob, req.signal);

  const matches: GrepMatch[] = [];
  let bytes = 0;
  let stop: GrepStop | undefined;
  let scanned = 0;
  let tests = 0;
  let sliceStart = Date.now();
  /** Before a piece of work: yields when the slice is used up; false once the deadline has passed. */
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
    const raw = text.split("\n");
    const lines = raw.map(clip);
    // Without CRs, a block of several lines (none clipped: a clipped line is a block alone) is a slice of the text.
    const sliceable = !text.includes("\r");
    let offset = 0; // of line `from` in the text
    for (let from = 0; from < lines.length; ) {
      // The block [from, to): one line, or with a block test as many whole lines as fit in MAX_LINE_CHARS.
      let to = from + 1;
      const start = offset;
      offset += raw[from].length + 1;
      if (matcher.testBlock) {
        let len = lines[from].length;
        while (to < lines.length && len + 1 + lines[to].length <= MAX_LINE_CHARS) {
          len += 1 + lines[to].length;
          offset += raw[to++].length + 1;
        }
        if (to - from > 1) {
          // Every `testsPerCheck` tests (a line's or a block's), a look at the clock.
          if (++tests % testsPerCheck === 0 && !(await mayGoOn())) {
            stop = "time_limit";
            break outer;
          }
          const block = sliceable ? text.slice(start, start + len) : lines.slice(from, to).join("\n");
          if (!matcher.testBlock(block)) {
            from = to;
            continue;
          }
        }
      }
      for (let i = from; i < to; i++) {
        if (++tests % testsPerCheck === 0 && !(await mayGoOn())) {
          stop = "time_limit";
          break outer;
        }
        const line = lines[i];
        if (!matcher.test(line)) continue;
        if (matches.length >= req.limit) {
          stop = "limit";
          break outer;
        }
        const m: GrepMatch = { path, line: i + 1, text: line };
        if (ctx > 0) {
          m.before = lines.slice(Math.max(0, i - ctx), i);
          m.after = lines.slice(i + 1, i + 1 + ctx);
        }
        const size = path.length + line.length + 16 + (m.before?.join("\n").length ?? 0) + (m.after?.join("\n").length ?? 0);
        if (bytes + size > maxBytes && matches.length > 0) {
          stop = "size";
          break outer;
        }
        bytes += size;
        matches.push(m);
      }
      from = to;
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
