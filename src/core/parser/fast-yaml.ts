/**
 * A fast path for the frontmatter most notes have: top-level `key: scalar`, `key: [a, b]` and
 * `key:` followed by `- item` lines, with plain, single- or double-quoted scalars.
 * It returns exactly what the `yaml` package (YAML 1.2 core schema) would, or `undefined` for
 * anything outside that subset (comments after values, nesting, block scalars, floats, escapes,
 * duplicate keys…), and the caller then uses the full parser. Tests hold the two to the same output.
 */
export function fastYaml(src: string): Record<string, unknown> | undefined {
  const lines = src.split("\n");
  // eslint-disable-next-line no-restricted-syntax -- frontmatter as a plain object (what Obsidian gives); keys are checked with hasOwnProperty and `__proto__` goes to the full parser
  const out: Record<string, unknown> = {};
  let i = 0;
  const n = lines.length;
  while (i < n) {
    const line = stripCr(lines[i]);
    i++;
    if (isBlank(line) || line.charCodeAt(0) === 35 /* # */) continue;
    const c0 = line.charCodeAt(0);
    if (!isKeyStart(c0)) return undefined;
    const colon = findKeyColon(line);
    if (colon < 0) return undefined;
    const key = line.slice(0, colon);
    if (!isPlainKey(key) || Object.prototype.hasOwnProperty.call(out, key)) return undefined;
    const rest = line.slice(colon + 1).trim();
    if (rest === "") {
      // Either null, or a block sequence of scalars.
      const items: unknown[] = [];
      let indent = -1;
      while (i < n) {
        const l = stripCr(lines[i]);
        if (isBlank(l)) {
          // A blank line may sit between items; look ahead.
          let j = i + 1;
          while (j < n && isBlank(stripCr(lines[j]))) j++;
          if (j < n && indent >= 0 && isItemLine(stripCr(lines[j]), indent)) {
            i = j;
            continue;
          }
          break;
        }
        let k = 0;
        while (k < l.length && l.charCodeAt(k) === 32) k++;
        if (l.charCodeAt(k) !== 45 /* - */ || !(k + 1 === l.length || l.charCodeAt(k + 1) === 32)) {
          if (k > 0) return undefined; // indented but not an item: nested mapping or continuation
          break;
        }
        if (indent < 0) indent = k;
        else if (k !== indent) return undefined;
        const v = scalar(l.slice(k + 1).trim());
        if (v === FAIL) return undefined;
        items.push(v);
        i++;
      }
      out[key] = indent < 0 ? null : items;
      // A following indented line that is not part of the sequence means structure we do not handle.
      if (i < n && !isBlank(stripCr(lines[i])) && isIndented(stripCr(lines[i]))) return undefined;
      continue;
    }
    if (i < n && isIndented(stripCr(lines[i])) && !isBlank(stripCr(lines[i]))) return undefined; // multi-line scalar
    if (rest.charCodeAt(0) === 91 /* [ */) {
      const v = flowSeq(rest);
      if (v === FAIL) return undefined;
      out[key] = v;
      continue;
    }
    const v = scalar(rest);
    if (v === FAIL) return undefined;
    out[key] = v;
  }
  return out;
}

const FAIL = Symbol("fail");

function stripCr(l: string): string {
  return l.length > 0 && l.charCodeAt(l.length - 1) === 13 ? l.slice(0, -1) : l;
}

function isBlank(l: string): boolean {
  for (let k = 0; k < l.length; k++) {
    const c = l.charCodeAt(k);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

function isIndented(l: string): boolean {
  const c = l.charCodeAt(0);
  return c === 32 || c === 9;
}

function isItemLine(l: string, indent: number): boolean {
  for (let k = 0; k < indent; k++) if (l.charCodeAt(k) !== 32) return false;
  return l.charCodeAt(indent) === 45 && (l.length === indent + 1 || l.charCodeAt(indent + 1) === 32);
}

function isKeyStart(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c >= 0xc0;
}

/** The `:` ending the key (followed by a space or the end of the line), or -1. */
function findKeyColon(line: string): number {
  for (let k = 1; k < line.length; k++) {
    const c = line.charCodeAt(k);
    if (c === 58 /* : */) {
      if (k + 1 === line.length || line.charCodeAt(k + 1) === 32) return k;
      return -1;
    }
    if (c === 35 || c === 34 || c === 39 || c === 9 || c === 91 || c === 93 || c === 123 || c === 125 || c === 44) return -1;
  }
  return -1;
}

const SPECIAL_WORDS = new Set(["null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "~"]);

function isPlainKey(key: string): boolean {
  if (key.charCodeAt(key.length - 1) === 32 || SPECIAL_WORDS.has(key) || key === "__proto__") return false;
  for (let k = 0; k < key.length; k++) {
    const c = key.charCodeAt(k);
    if (c < 32 || c === 35 || c === 38 || c === 42 || c === 33 || c === 124 || c === 62 || c === 37 || c === 64 || c === 96) return false;
  }
  return true;
}

function scalar(s: string): unknown {
  if (s === "") return null;
  const c = s.charCodeAt(0);
  if (c === 34 /* " */) {
    if (s.length < 2 || s.charCodeAt(s.length - 1) !== 34) return FAIL;
    const inner = s.slice(1, -1);
    if (inner.includes('"') || inner.includes("\\")) return FAIL;
    return inner;
  }
  if (c === 39 /* ' */) {
    if (s.length < 2 || s.charCodeAt(s.length - 1) !== 39) return FAIL;
    const inner = s.slice(1, -1);
    if (inner.replace(/''/g, "").includes("'")) return FAIL;
    return inner.replace(/''/g, "'");
  }
  // Indicators that start something other than a plain scalar, or need the full parser.
  if ("-?:,[]{}#&*!|>%@`".includes(s[0])) return FAIL;
  if (s.includes(": ") || s.includes(" #") || s.endsWith(":") || s.includes("\t")) return FAIL;
  if (SPECIAL_WORDS.has(s)) {
    if (s === "~" || s.toLowerCase() === "null") return null;
    return s.toLowerCase() === "true";
  }
  if ((c >= 48 && c <= 57) || c === 43 || c === 46) {
    if (/^\+?[0-9]+$/.test(s)) {
      const v = Number(s);
      return Number.isSafeInteger(v) ? v : FAIL;
    }
    // Floats, octal, hex, .inf/.nan: let the full parser decide.
    if (/^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/.test(s) || /^0[ox]/.test(s) || /^[-+]?\.(?:inf|Inf|INF|nan|NaN|NAN)$/.test(s)) return FAIL;
  }
  return s;
}

function flowSeq(s: string): unknown {
  if (s.charCodeAt(s.length - 1) !== 93) return FAIL;
  const inner = s.slice(1, -1);
  if (/["'[\]{}#]/.test(inner)) return FAIL;
  if (inner.trim() === "") return [];
  const out: unknown[] = [];
  for (const part of inner.split(",")) {
    const t = part.trim();
    if (t === "") return FAIL;
    const v = scalar(t);
    if (v === FAIL) return FAIL;
    out.push(v);
  }
  return out;
}
