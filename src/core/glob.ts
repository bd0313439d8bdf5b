import { VaultError } from "./errors";
import { compileLinearRegex, type LinearRegex } from "./regex";

/** Globs longer than this are refused. */
export const MAX_GLOB_CHARS = 500;

/**
 * Glob patterns over vault paths: `*` (within a segment), `**` (any depth), `?`, `[abc]`, `{a,b}`.
 * Matching is case-insensitive, as users of macOS and Windows vaults expect, and runs on the
 * linear-time engine (`regex.ts`): `**` and `*` become repeats that V8 could backtrack on forever.
 */
export function globToRegExp(glob: string): LinearRegex {
  if (glob.length > MAX_GLOB_CHARS) {
    throw new VaultError("invalid_argument", `The path pattern is ${glob.length} characters long; keep it under ${MAX_GLOB_CHARS}.`);
  }
  let re = "";
  let i = 0;
  let braceDepth = 0;
  while (i < glob.length) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        // `**/` matches zero or more whole segments; a bare `**` matches anything.
        if (glob[i + 2] === "/") {
          re += "(?:[^/]*/)*";
          i += 3;
        } else {
          re += ".*";
          i += 2;
        }
      } else {
        re += "[^/]*";
        i++;
      }
    } else if (c === "?") {
      re += "[^/]";
      i++;
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) {
        re += "\\[";
        i++;
      } else {
        let body = glob.slice(i + 1, end).replace(/\\/g, "\\\\");
        if (body.startsWith("!")) body = "^" + body.slice(1);
        re += `[${body}]`;
        i = end + 1;
      }
    } else if (c === "{") {
      braceDepth++;
      re += "(?:";
      i++;
    } else if (c === "}" && braceDepth > 0) {
      braceDepth--;
      re += ")";
      i++;
    } else if (c === "," && braceDepth > 0) {
      re += "|";
      i++;
    } else {
      re += c.replace(/[.+^${}()|\\/]/g, "\\$&");
      i++;
    }
  }
  while (braceDepth-- > 0) re += ")";
  return compileLinearRegex(`^${re}$`, {
    caseSensitive: false,
    what: `The path pattern "${glob}"`,
    recovery: ' Globs take * (within a folder), ** (any depth), ?, [abc] and {a,b}, e.g. "Projects/**/*.md".',
  });
}

/** A pattern without `/` matches the file name at any depth (`*.md`); with `/` it matches the whole path. */
export function makePathMatcher(glob: string): (path: string) => boolean {
  const re = globToRegExp(glob);
  if (glob.includes("/")) return (p) => re.test(p);
  return (p) => re.test(p) || re.test(p.slice(p.lastIndexOf("/") + 1));
}
