import { VaultError } from "../errors";
import { splitFrontmatter } from "../frontmatter";
import type { NoteMetadata } from "../metadata";

export interface SectionHeading {
  heading: string;
  level: number;
  /** 0-based line of the heading. */
  line: number;
}

export interface ExtractedSection {
  /** The heading as written in the note. */
  heading: string;
  /** The section's text: its heading line through the line before the next heading of the same or a higher level. */
  content: string;
  /** 1-based, inclusive. */
  line_start: number;
  /** 1-based, inclusive. */
  line_end: number;
}

/**
 * The headings of a note: from its metadata when there is some, else parsed from the text
 * (ATX headings outside the frontmatter and fenced code blocks).
 */
export function headingsOf(text: string, meta: NoteMetadata | null): SectionHeading[] {
  if (meta && meta.headings.length > 0) {
    return meta.headings.map((h) => ({ heading: h.heading, level: h.level, line: h.position.start.line }));
  }
  const out: SectionHeading[] = [];
  const lines = text.split("\n");
  const fm = splitFrontmatter(text);
  let fence: string | null = null;
  for (let i = fm.lineCount; i < lines.length; i++) {
    const line = lines[i].replace(/\r$/, "");
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (f) {
      if (fence === null) fence = f[1];
      else if (f[1][0] === fence[0] && f[1].length >= fence.length && line.trim() === f[1]) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const m = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(line) ?? /^ {0,3}(#{1,6})$/.exec(line);
    if (m) out.push({ heading: (m[2] ?? "").trim(), level: m[1].length, line: i });
  }
  return out;
}

/** Case-, width- and whitespace-insensitive form of a heading for matching. */
export function normalizeHeading(s: string): string {
  return s
    .normalize("NFKC")
    .replace(/^#+\s*/, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/**
 * Finds a section of a note by heading — case- and whitespace-insensitive — or by a heading path
 * `Parent > Child` as search results give it (each part must be an enclosing heading, in order).
 * Throws `not_found` listing the note's headings when nothing matches.
 */
export function extractSection(text: string, meta: NoteMetadata | null, section: string): ExtractedSection {
  const headings = headingsOf(text, meta);
  const wanted = normalizeHeading(section.replace(/^[^#]*\.md#/i, ""));
  if (!wanted) throw new VaultError("invalid_argument", `The section is empty; give a heading of the note, such as "${headings[0]?.heading ?? "Introduction"}".`);

  let index = headings.findIndex((h) => normalizeHeading(h.heading) === wanted);
  if (index < 0 && section.includes(">")) {
    const parts = section.split(">").map(normalizeHeading).filter(Boolean);
    index = findByPath(headings, parts);
  }
  if (index < 0) {
    // A heading written with its `#` markers, or a heading path separated by `#` as in links (`A#B`).
    const parts = section.split("#").map(normalizeHeading).filter(Boolean);
    if (parts.length > 1) index = findByPath(headings, parts);
  }
  if (index < 0) {
    const list = headings.length ? headings.map((h) => `${"#".repeat(h.level)} ${h.heading}`).join("; ") : "(none)";
    throw new VaultError(
      "not_found",
      `No section "${section}" in this note. Its headings are: ${truncate(list, 2000)}. Pass one of them as section, or omit section to read the whole note.`,
    );
  }
  const h = headings[index];
  const lines = text.split("\n");
  let end = lines.length - 1;
  for (let j = index + 1; j < headings.length; j++) {
    if (headings[j].level <= h.level) {
      end = headings[j].line - 1;
      break;
    }
  }
  while (end > h.line && lines[end].trim() === "") end--;
  const content = lines
    .slice(h.line, end + 1)
    .map((l) => l.replace(/\r$/, ""))
    .join("\n");
  return { heading: h.heading, content, line_start: h.line + 1, line_end: end + 1 };
}

/** Index of the heading whose enclosing headings (by level) match `parts` in order, last part the heading itself. */
function findByPath(headings: SectionHeading[], parts: string[]): number {
  if (parts.length === 0) return -1;
  const last = parts[parts.length - 1];
  for (let i = 0; i < headings.length; i++) {
    if (normalizeHeading(headings[i].heading) !== last) continue;
    // Walk up the enclosing headings and match the remaining parts from right to left.
    let need = parts.length - 2;
    let level = headings[i].level;
    for (let j = i - 1; j >= 0 && need >= 0; j--) {
      if (headings[j].level >= level) continue;
      level = headings[j].level;
      if (normalizeHeading(headings[j].heading) === parts[need]) need--;
    }
    if (need < 0) return i;
  }
  return -1;
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : s.slice(0, max) + "…";
}
