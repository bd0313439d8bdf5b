/**
 * Splits a note into its YAML frontmatter block and body, as Obsidian does: the file must start with
 * a line that is exactly `---` (a BOM before it is allowed), and the block ends at the next line that is
 * exactly `---` (or `...`). Returns offsets so callers can keep the body byte for byte.
 */
export interface FrontmatterSplit {
  /** The YAML text between the fences (no fences), or null when the note has no frontmatter block. */
  yaml: string | null;
  /** Offset where the body starts (after the closing fence's line break); 0 without frontmatter. */
  bodyOffset: number;
  /** Number of lines the frontmatter block spans, fences included (0 without). */
  lineCount: number;
}

export function splitFrontmatter(text: string): FrontmatterSplit {
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const firstEnd = lineEnd(text, start);
  if (text.slice(start, firstEnd.contentEnd).trimEnd() !== "---") return { yaml: null, bodyOffset: 0, lineCount: 0 };
  let pos = firstEnd.next;
  let lines = 1;
  while (pos <= text.length) {
    const le = lineEnd(text, pos);
    lines++;
    const line = text.slice(pos, le.contentEnd).trimEnd();
    if (line === "---" || line === "...") {
      return { yaml: text.slice(firstEnd.next, pos), bodyOffset: le.next, lineCount: lines };
    }
    if (le.next === pos || le.next > text.length) break;
    pos = le.next;
  }
  return { yaml: null, bodyOffset: 0, lineCount: 0 };
}

function lineEnd(text: string, from: number): { contentEnd: number; next: number } {
  const nl = text.indexOf("\n", from);
  if (nl < 0) return { contentEnd: text.length, next: text.length + 1 };
  const contentEnd = nl > from && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
  return { contentEnd, next: nl + 1 };
}
