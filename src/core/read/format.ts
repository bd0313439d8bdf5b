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

/** `"Notes/Big.md" is 412 KB, over the 256 KB cap; read a part with section, or raise the cap in settings.` */
export function sizeCapMessage(path: string, bytes: number, capBytes: number, kind: "note" | "attachment" = "note"): string {
  const how = kind === "note" ? "read a part with section, or raise the cap in settings" : "raise the attachment cap in settings to get its content";
  return `"${path}" is ${formatBytes(bytes)}, over the ${formatBytes(capBytes)} cap; ${how}.`;
}

export function sizeCapError(path: string, bytes: number, capBytes: number, kind: "note" | "attachment" = "note"): VaultError {
  return new VaultError("too_large", sizeCapMessage(path, bytes, capBytes, kind));
}
