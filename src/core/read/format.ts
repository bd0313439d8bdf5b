import { VaultError } from "../errors";
import { splitFrontmatter } from "../frontmatter";
import { formatBytes } from "../strings";

/** Default cap on a note read in one call. */
export const DEFAULT_NOTE_CAP_BYTES = 256 * 1024;
/** Default cap on an attachment's bytes returned as base64. */
export const DEFAULT_ATTACHMENT_CAP_BYTES = 1024 * 1024;

/**
 * Prefixes each line with its number: `12| text`. `firstLine` is the file line number of the first
 * line of `text`, so the numbers match edit's line_start/line_end.
 */
export function withLineNumbers(text: string, firstLine = 1): string {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  return lines.map((l, i) => `${firstLine + i}| ${l.replace(/\r$/, "")}`).join("\n");
}

/** The file line number (1-based) where the body starts, i.e. after the frontmatter block. */
export function bodyFirstLine(fullText: string): number {
  const split = splitFrontmatter(fullText);
  return split.yaml === null ? 1 : split.lineCount + 1;
}

/** A note's body (after frontmatter, without BOM) with file line numbers. */
export function bodyWithLineNumbers(fullText: string): string {
  const split = splitFrontmatter(fullText);
  const body = split.yaml === null ? fullText.replace(/^\uFEFF/, "") : fullText.slice(Math.min(split.bodyOffset, fullText.length));
  return withLineNumbers(body, bodyFirstLine(fullText));
}

/** Where the owner raises a cap: the plugin's settings, or the headless server's flag. */
function raiseCap(flag: string): string {
  return `the owner can raise the cap (plugin settings; headless: ${flag})`;
}

/** `"Notes/Big.md" is 412 KB, over the 256 KB cap; read a part with section, or the owner can raise the cap (…).` */
export function sizeCapMessage(path: string, bytes: number, capBytes: number, kind: "note" | "attachment" = "note"): string {
  const how =
    kind === "note"
      ? `read a part with section, or ${raiseCap("--max-read-kb")}`
      : `get its bytes with create_download_link, or ${raiseCap("--max-attachment-kb")}`;
  return `"${path}" is ${formatBytes(bytes)}, over the ${formatBytes(capBytes)} cap; ${how}.`;
}

/**
 * A section (or a note with line numbers) whose returned text is over the read cap. `parts`: the
 * section arguments of its subsections, when it has some.
 */
export function sectionCapMessage(path: string, what: string, bytes: number, capBytes: number, parts: readonly string[]): string {
  const MAX_LISTED = 20;
  const listed = parts.slice(0, MAX_LISTED).map((p) => JSON.stringify(p)).join(", ") + (parts.length > MAX_LISTED ? `, … (${parts.length - MAX_LISTED} more)` : "");
  const how = parts.length
    ? `read its subsections one at a time (section ${listed})`
    : `it has no subsections: get the whole file with create_download_link, or find the lines you need with grep`;
  return `${what} of "${path}" is ${formatBytes(bytes)}, over the ${formatBytes(capBytes)} cap on what a read returns; nothing was returned. ${how[0].toUpperCase()}${how.slice(1)}; or ${raiseCap("--max-read-kb")}.`;
}

/** The UTF-8 length of a string, without encoding it. */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 2;
      i++;
    } else n += 2;
  }
  return n;
}

export function sizeCapError(path: string, bytes: number, capBytes: number, kind: "note" | "attachment" = "note"): VaultError {
  return new VaultError("too_large", sizeCapMessage(path, bytes, capBytes, kind));
}
