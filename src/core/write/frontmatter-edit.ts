import { Document, isMap, parseDocument, stringify } from "yaml";
import { VaultError } from "../errors";
import { splitFrontmatter } from "../frontmatter";

/** Parses a note's frontmatter strictly: `{}` without a block, throws `invalid_argument` when it is not valid YAML. */
export function readFrontmatterStrict(text: string, path: string): { fm: Record<string, unknown>; hasBlock: boolean } {
  const split = splitFrontmatter(text);
  if (split.yaml === null) return { fm: {}, hasBlock: false };
  const doc = parseDocument(split.yaml, { schema: "core", prettyErrors: false, logLevel: "silent" });
  if (doc.errors.length > 0) throw invalidYaml(path, doc.errors[0].message.split("\n")[0]);
  const js: unknown = doc.toJS();
  if (js === null || js === undefined) return { fm: {}, hasBlock: true };
  if (typeof js !== "object" || Array.isArray(js)) throw invalidYaml(path, "it is not a list of properties (key: value)");
  return { fm: js as Record<string, unknown>, hasBlock: true };
}

export function invalidYaml(path: string, why: string): VaultError {
  return new VaultError(
    "invalid_argument",
    `The frontmatter of "${path}" is not valid YAML (${why}); nothing was changed. Fix the frontmatter text with edit (or rewrite the note with write and if_match), then retry.`,
  );
}

/** A fresh `---` block for `fm` (empty string for an empty object), LF line breaks. */
export function frontmatterBlock(fm: Record<string, unknown>): string {
  if (Object.keys(fm).length === 0) return "";
  return `---\n${stringify(fm, { lineWidth: 0 })}---\n`;
}

/**
 * Sets keys in the frontmatter of `text` (LF text without BOM), keeping the other keys, their order and
 * comments. Adds a block when there is none. Throws on invalid YAML.
 */
export function mergeFrontmatter(text: string, set: Record<string, unknown>, path: string): string {
  if (Object.keys(set).length === 0) return text;
  readFrontmatterStrict(text, path);
  const split = splitFrontmatter(text);
  if (split.yaml === null) return frontmatterBlock(set) + text;
  const doc: Document = parseDocument(split.yaml, { schema: "core" });
  if (!isMap(doc.contents)) doc.contents = doc.createNode({});
  for (const [k, v] of Object.entries(set)) {
    if (v === undefined) doc.delete(k);
    else doc.set(k, v);
  }
  const yaml = doc.toString({ lineWidth: 0 });
  const body = split.bodyOffset <= text.length ? text.slice(split.bodyOffset) : "";
  return `---\n${yaml}---\n${body}`;
}
