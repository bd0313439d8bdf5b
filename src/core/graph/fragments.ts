import type { NoteMetadata } from "../metadata";

/**
 * Heading text as links compare it, like Obsidian's `stripHeading`: special characters (punctuation such
 * as `? ( ) : # | ^ [ ]` and backticks) become spaces and runs of spaces shrink, so `[[Note#What is it]]`
 * finds the heading "What is it?" and `[[Functions#hasTag]]` finds "`hasTag()`". Case is ignored.
 */
export function linkHeadingKey(s: string): string {
  return s
    .normalize("NFKC")
    .replace(/[!"#$%&()*+,.:;<=>?@^`{|}~/[\]\\]/g, " ")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
}

/**
 * Whether a link's fragment exists in the target note: `^id` must be a block id; a heading (or a heading
 * path `H1#H2`, whose last part is what counts) must be one of the note's headings. Null when the target
 * has no metadata (an attachment: `#page=3` of a PDF is not ours to judge).
 */
export function fragmentExists(meta: NoteMetadata | null, fragment: string | null): boolean | null {
  if (fragment === null || fragment === "") return true;
  if (!meta) return null;
  if (fragment.startsWith("^")) {
    const id = fragment.slice(1).trim().toLowerCase();
    return Object.prototype.hasOwnProperty.call(meta.blocks, id);
  }
  const parts = fragment.split("#").map(linkHeadingKey).filter(Boolean);
  if (parts.length === 0) return true;
  const last = parts[parts.length - 1];
  return meta.headings.some((h) => linkHeadingKey(h.heading) === last);
}

export function fragmentKind(fragment: string): "block" | "heading" {
  return fragment.startsWith("^") ? "block" : "heading";
}
