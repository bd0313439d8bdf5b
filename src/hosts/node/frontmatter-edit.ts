/**
 * Editing a note's frontmatter for the headless host's `processFrontMatter` (Obsidian's own does this
 * inside the app): through yaml's Document API, so untouched keys keep their comments, order and
 * style. Pure text in, text out; no I/O.
 */
import { Document, isMap, parseDocument } from "yaml";
import { VaultError } from "../../core/errors";
import { splitFrontmatter } from "../../core/frontmatter";

/**
 * Applies `fn` to a note's frontmatter and returns the new text. The YAML block is edited through
 * yaml's Document API, so untouched keys keep their comments, order and style; the body after the
 * block is kept byte for byte; CRLF notes stay CRLF; a BOM stays. Returns `text` itself when `fn`
 * changed nothing. Invalid YAML → `invalid_argument` (the caller writes nothing).
 */
export function applyFrontmatterEdit(text: string, fn: (fm: Record<string, unknown>) => void, path: string): string {
  const split = splitFrontmatter(text);
  const bom = text.charCodeAt(0) === 0xfeff ? "\uFEFF" : "";
  const firstNl = text.indexOf("\n");
  const eol = firstNl > 0 && text.charCodeAt(firstNl - 1) === 13 ? "\r\n" : "\n";
  let doc: Document;
  // eslint-disable-next-line no-restricted-syntax -- frontmatter as a plain object (what Obsidian gives); read with Object.hasOwn
  let original: Record<string, unknown> = {};
  if (split.yaml !== null) {
    let js: unknown;
    try {
      doc = parseDocument(split.yaml, { schema: "core", prettyErrors: false, logLevel: "silent" });
      if (doc.errors.length > 0) throw doc.errors[0];
      js = doc.toJS({ maxAliasCount: 100 });
    } catch (e) {
      const why = (e instanceof Error ? e.message : String(e)).split("\n")[0];
      throw new VaultError("invalid_argument", `The frontmatter of "${path}" is not valid YAML (${why}). Fix it with a full edit of the note, then retry.`);
    }
    if (js !== null && js !== undefined) {
      if (typeof js !== "object" || Array.isArray(js)) {
        throw new VaultError("invalid_argument", `The frontmatter of "${path}" is not a list of properties (key: value). Fix it with a full edit of the note, then retry.`);
      }
      original = js as Record<string, unknown>;
    }
  } else {
    doc = new Document({});
  }
  const working = structuredClone(original);
  fn(working);
  if (deepEqual(working, original)) return text;
  if (!isMap(doc.contents)) doc.contents = doc.createNode({});
  for (const key of Object.keys(original)) if (!Object.hasOwn(working, key)) doc.delete(key);
  for (const [k, v] of Object.entries(working)) {
    if (v === undefined) {
      doc.delete(k);
      continue;
    }
    if (!Object.hasOwn(original, k) || !deepEqual(v, original[k])) doc.set(k, v);
  }
  let yamlText = isMap(doc.contents) && doc.contents.items.length === 0 && !doc.commentBefore && !doc.comment ? "" : doc.toString({ lineWidth: 0 });
  yamlText = yamlText.replace(/\r?\n/g, eol);
  if (split.yaml !== null) {
    const body = split.bodyOffset <= text.length ? text.slice(split.bodyOffset) : "";
    const closing = split.bodyOffset <= text.length ? eol : "";
    return `${bom}---${eol}${yamlText}---${closing}${body}`;
  }
  return `${bom}---${eol}${yamlText}---${eol}${text.slice(bom.length)}`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return Number.isNaN(a) && Number.isNaN(b);
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  const ka = Object.keys(a);
  const kb = Object.keys(b as object);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!Object.hasOwn(b as object, k) || !deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])) return false;
  return true;
}
