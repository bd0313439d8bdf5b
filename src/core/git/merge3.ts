import { diffLines } from "../write/diff";

/**
 * A three-way merge of texts, line by line, for our own commits: `theirs` and `ours` both start
 * from `base`; the result has both sides' changes, or null when they touch the same or adjacent
 * lines (nothing is guessed). No program is run: git's merge drivers come from configuration.
 */
export function mergeTexts(base: string, ours: string, theirs: string): string | null {
  if (ours === base) return theirs;
  if (theirs === base || theirs === ours) return ours;
  const b = linesOf(base);
  const a = regions(b, linesOf(ours));
  const t = regions(b, linesOf(theirs));
  const all = [...a, ...t].sort((x, y) => x.start - y.start || x.end - y.end);
  for (let i = 1; i < all.length; i++) {
    // Overlapping or touching changes (an insertion where the other side changes too) conflict.
    if (all[i].start <= all[i - 1].end) return null;
  }
  const out: string[] = [];
  let at = 0;
  for (const r of all) {
    for (; at < r.start; at++) out.push(b[at]);
    out.push(...r.lines);
    at = r.end;
  }
  for (; at < b.length; at++) out.push(b[at]);
  return out.join("");
}

/** Lines with their line ends kept (so the result is byte-exact). */
function linesOf(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", from)) {
    out.push(text.slice(from, i + 1));
    from = i + 1;
  }
  if (from < text.length) out.push(text.slice(from));
  return out;
}

/** The changed regions of `base` (start/end in base's lines) and what replaces each. */
function regions(base: readonly string[], next: readonly string[]): { start: number; end: number; lines: string[] }[] {
  const out: { start: number; end: number; lines: string[] }[] = [];
  let i = 0;
  let cur: { start: number; end: number; lines: string[] } | null = null;
  for (const op of diffLines(base, next)) {
    if (op.kind === "equal") {
      if (cur) out.push(cur);
      cur = null;
      i++;
      continue;
    }
    cur ??= { start: i, end: i, lines: [] };
    if (op.kind === "delete") {
      i++;
      cur.end = i;
    } else cur.lines.push(op.line);
  }
  if (cur) out.push(cur);
  return out;
}
