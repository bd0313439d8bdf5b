/**
 * Regular expressions a client supplies, run in linear time: RE2 semantics through re2js (pure JS,
 * bundled into main.js), never V8's backtracking engine, so no pattern can freeze the server or
 * Obsidian's UI thread. Owns the translation from JavaScript syntax and the refusals; must not be
 * used for our own fixed patterns, which V8 runs faster.
 */
import { RE2JS } from "re2js";
import { VaultError } from "./errors";

/** Patterns longer than this are refused (they are usually a mistake). */
export const MAX_PATTERN_CHARS = 1000;
/**
 * Largest compiled program accepted. Matching costs up to (program size × line length) steps when
 * RE2's DFA gives up (large counted repeats of broad classes: `\p{L}{300}`): measured 20 ms for a
 * program of 200 over a 2,000-character line, 37 ms at 300, 110–190 ms at 1,000. A 40-word
 * alternation is ~250.
 */
export const MAX_PROGRAM_SIZE = 400;

export interface LinearRegex {
  /** True when the pattern matches somewhere in `text`. */
  test(text: string): boolean;
  /**
   * With `blocks`: for whole lines joined by "\n", false only when no line of them matches on its
   * own (`^` and `$` match at every line), so a line scan can skip the block with one call instead of
   * one a line (re2js costs ~0.5 µs a call on top of matching). Null when the pattern anchors to the
   * whole text (`\A`, `\z`, a `(?-m)` flag), where a block cannot stand in for its lines.
   */
  readonly testBlock: ((block: string) => boolean) | null;
  /** The compiled program's size (a rough cost per character matched). */
  readonly cost: number;
}

export interface RegexOptions {
  caseSensitive: boolean;
  /** Also compile `testBlock`. */
  blocks?: boolean;
  /** What the pattern is called in messages ("The regular expression", "The path pattern"). */
  what?: string;
  /** How to get out of a refusal, appended to the message. */
  recovery?: string;
}

/**
 * Compiles a JavaScript-syntax pattern for linear-time matching, or throws `invalid_argument`
 * saying what is wrong: a syntax error, a feature RE2 lacks (backreferences, lookaround), or a
 * pattern too large to match in bounded time.
 */
export function compileLinearRegex(pattern: string, opts: RegexOptions): LinearRegex {
  const what = opts.what ?? "The regular expression";
  const recovery = opts.recovery ?? "";
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new VaultError("invalid_argument", `${what} is ${pattern.length} characters long; keep it under ${MAX_PATTERN_CHARS}.${recovery}`);
  }
  const missing = unsupportedFeature(pattern);
  if (missing) {
    throw new VaultError(
      "invalid_argument",
      `${what} uses ${missing}, which this server does not support: it runs patterns on a linear-time engine (RE2) so that no pattern can hang it. Rewrite it without them (often two simpler searches do it).${recovery}`,
    );
  }
  let re: RE2JS;
  let blockRe: RE2JS | null = null;
  const flags = opts.caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE;
  try {
    const translated = RE2JS.translateRegExp(pattern);
    re = RE2JS.compile(translated, flags);
    // Over-cautious on purpose: an escaped backslash before A or z also turns blocks off.
    if (opts.blocks && !/\\[Az]|\(\?[a-zA-Z]*-/.test(translated)) blockRe = RE2JS.compile(translated, flags | RE2JS.MULTILINE);
  } catch (e) {
    const why = (e instanceof Error ? e.message : String(e)).replace(/^error parsing regexp: /, "");
    throw new VaultError("invalid_argument", `${what} is not valid (${why}).${recovery}`);
  }
  const cost = re.programSize();
  if (cost > MAX_PROGRAM_SIZE) {
    throw new VaultError(
      "invalid_argument",
      `${what} is too complex to match in bounded time (its compiled program has ${cost} steps; the limit is ${MAX_PROGRAM_SIZE}). Large counted repeats such as {200} are the usual cause: use a smaller count or a simpler pattern.${recovery}`,
    );
  }
  const block = blockRe;
  return { test: (text) => re.test(text), testBlock: block ? (text) => block.test(text) : null, cost };
}

/**
 * The first JavaScript feature in `pattern` that RE2 lacks, named for the message, or null. Scans
 * the pattern's syntax (escapes and character classes skipped) rather than trusting RE2's error,
 * which would call a lookbehind an "invalid named capture".
 */
export function unsupportedFeature(pattern: string): string | null {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (!inClass && next >= "1" && next <= "9") return "a backreference (\\1 …)";
      if (next === "k" && pattern[i + 2] === "<") return "a named backreference (\\k<name>)";
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") {
      inClass = true;
      // A `]` first in a class (after an optional `^`) is a literal, not the class's end.
      if (pattern[i + 1] === "^") i++;
      if (pattern[i + 1] === "]") i++;
      continue;
    }
    if (c === "(" && pattern[i + 1] === "?") {
      const a = pattern[i + 2];
      const b = pattern[i + 3];
      if (a === "=") return "a lookahead (?=…)";
      if (a === "!") return "a negative lookahead (?!…)";
      if (a === "<" && b === "=") return "a lookbehind (?<=…)";
      if (a === "<" && b === "!") return "a negative lookbehind (?<!…)";
    }
  }
  return null;
}
