import { VaultError } from "../errors";
import { makePathMatcher } from "../glob";
import { SLICE_MS, TimeSlice } from "../time-slice";
import { etagOf } from "../hash";
import { frontmatterAliases, frontmatterTags } from "../metadata";
import { isUnder, normalizeVaultPath } from "../paths";
import { notFoundError, type AccessPolicy } from "../policy";
import { splitFrontmatter } from "../frontmatter";
import { extractSection, headingsOf } from "../lookup/section";
import { readAttachment, type AttachmentRead } from "../read/attachment";
import { bodyWithLineNumbers, DEFAULT_ATTACHMENT_CAP_BYTES, DEFAULT_NOTE_CAP_BYTES, sectionCapMessage, sizeCapError, utf8Length, withLineNumbers } from "../read/format";
import { basenameOf, isNotePath, parentOf, type VaultFile, type VaultPort } from "../vault";

export interface DocumentEntry {
  path: string;
  kind: "note" | "attachment";
  title: string;
  size: number;
  modified_at: string;
}

export interface ReadResult {
  path: string;
  kind: "note";
  title: string;
  folder: string;
  frontmatter: Record<string, unknown>;
  /** The body after the frontmatter — or only the requested section — optionally with `N| ` line numbers. */
  body: string;
  /** Set when a section was asked for: which heading, and its line range in the file. */
  section?: { heading: string; line_start: number; line_end: number };
  modified_at: string;
  size: number;
  etag: string;
}

export interface ReadOptions {
  section?: string;
  withLineNumbers?: boolean;
}

export interface ReadLimits {
  /** Largest text a read returns: a whole note, or one section of a larger one (UTF-8 bytes, line numbers included). */
  maxNoteBytes: number;
  /** Largest attachment returned as base64. */
  maxAttachmentBytes: number;
}

export interface ListOptions {
  folder?: string;
  pattern?: string;
  includeAttachments?: boolean;
  limit: number;
  cursor?: string;
}

/** Reading and listing through the access policy: hidden files are invisible, paths are validated. */
export class VaultService {
  constructor(
    readonly port: VaultPort,
    readonly policy: AccessPolicy,
    readonly limits: ReadLimits = { maxNoteBytes: DEFAULT_NOTE_CAP_BYTES, maxAttachmentBytes: DEFAULT_ATTACHMENT_CAP_BYTES },
  ) {}

  /** Every visible file, sorted by path. */
  visibleFiles(): VaultFile[] {
    return this.port
      .listFiles()
      .filter((f) => !this.policy.isHidden(f.path))
      .sort((a, b) => compareStrings(a.path, b.path));
  }

  visibleNotes(): VaultFile[] {
    return this.visibleFiles().filter((f) => isNotePath(f.path));
  }

  visibleFolders(): string[] {
    return this.port
      .listFolders()
      .filter((f) => !this.policy.isHidden(f))
      .sort(compareStrings);
  }

  /** Validates a client's folder argument: "" (root) or an existing visible folder. */
  resolveFolder(input: string | undefined): string {
    if (input === undefined) return "";
    const folder = normalizeVaultPath(input, "folder");
    if (folder === "") return "";
    if (this.policy.isHidden(folder) || !this.port.isFolder(folder)) {
      throw new VaultError("not_found", `No folder "${folder}" in the vault. Call list_folders to see the folders.`);
    }
    return folder;
  }

  /** A folder argument that may also be a note's path: returns the folder (the note's own folder for a note). */
  resolveFolderOrNoteFolder(input: string): string {
    const path = normalizeVaultPath(input);
    if (path === "" || (this.port.isFolder(path) && !this.policy.isHidden(path))) return path;
    return parentOf(this.requireFile(path).path);
  }

  /** Validates a client's file path and returns the visible file, or throws `not_found` with a hint. */
  requireFile(input: unknown): VaultFile {
    const path = normalizeVaultPath(input);
    if (path === "") throw new VaultError("invalid_path", `The path is empty; give a note's path such as "Folder/Note.md".`);
    this.policy.assertVisible(path);
    const file = this.port.stat(path) ?? (isNotePath(path) ? null : this.port.stat(path + ".md"));
    if (!file) {
      if (this.port.isFolder(path)) throw new VaultError("invalid_argument", `"${path}" is a folder, not a file. Use list_documents with folder "${path}".`);
      throw notFoundError(path);
    }
    return file;
  }

  /** Files by folder and glob, paged; the glob is tested in slices (a pathological one costs ~5 µs a path). */
  async listDocuments(opts: ListOptions): Promise<{ items: DocumentEntry[]; total: number; next_cursor?: string }> {
    const folder = this.resolveFolder(opts.folder);
    const match = opts.pattern ? makePathMatcher(opts.pattern) : null;
    const all: VaultFile[] = [];
    const slice = new TimeSlice(SLICE_MS, 64);
    for (const f of this.visibleFiles()) {
      if (match && slice.due()) await slice.next();
      if (isUnder(parentOf(f.path), folder) && (opts.includeAttachments || isNotePath(f.path)) && (!match || match(f.path))) all.push(f);
    }
    const offset = decodeCursor(opts.cursor);
    const page = all.slice(offset, offset + opts.limit);
    const next = offset + page.length < all.length ? encodeCursor(offset + page.length) : undefined;
    return {
      items: page.map((f) => toEntry(f)),
      total: all.length,
      ...(next ? { next_cursor: next } : {}),
    };
  }

  /** Reads a note (whole, or one section), or an attachment (mime type, size, base64 under its cap). */
  async readAny(input: unknown, opts: ReadOptions = {}): Promise<ReadResult | (AttachmentRead & { kind: "attachment"; title: string; folder: string })> {
    const file = this.requireFile(input);
    if (!isNotePath(file.path)) {
      const a = await readAttachment(this.port, file, this.limits.maxAttachmentBytes);
      return { ...a, kind: "attachment", title: file.path.slice(file.path.lastIndexOf("/") + 1), folder: parentOf(file.path) };
    }
    return this.read(file.path, opts);
  }

  /** Reads a note, whole or one section; attachments are refused. */
  async read(input: unknown, opts: ReadOptions = {}): Promise<ReadResult> {
    const file = this.requireFile(input);
    if (!isNotePath(file.path)) {
      throw new VaultError("invalid_argument", `"${file.path}" is an attachment, not a note; use read to get its bytes.`);
    }
    if (opts.section === undefined && file.size > this.limits.maxNoteBytes) {
      throw sizeCapError(file.path, file.size, this.limits.maxNoteBytes);
    }
    const text = await this.port.read(file.path);
    const meta = this.port.getMetadata(file.path);
    const base = {
      path: file.path,
      kind: "note" as const,
      title: basenameOf(file.path),
      folder: parentOf(file.path),
      frontmatter: meta?.frontmatter ?? {},
      modified_at: new Date(file.mtime).toISOString(),
      size: file.size,
      etag: await etagOf(text),
    };
    const cap = this.limits.maxNoteBytes;
    if (opts.section !== undefined) {
      const sec = extractSection(text, meta, opts.section);
      const body = opts.withLineNumbers ? withLineNumbers(sec.content, sec.line_start) : sec.content;
      // The cap holds for what a read returns, a section too (it is returned as text and again as structured content).
      const bytes = utf8Length(body);
      if (bytes > cap) {
        const what = `The section "${sec.heading}" (lines ${sec.line_start}–${sec.line_end})${opts.withLineNumbers ? " with line numbers" : ""}`;
        throw new VaultError("too_large", sectionCapMessage(file.path, what, bytes, cap, subsectionsOf(text, meta, sec.line_start, sec.line_end)));
      }
      return { ...base, body, section: { heading: sec.heading, line_start: sec.line_start, line_end: sec.line_end } };
    }
    const split = splitFrontmatter(text);
    const body = opts.withLineNumbers ? bodyWithLineNumbers(text) : text.slice(split.bodyOffset).replace(/^\uFEFF/, "");
    // The file fitted; its body with line numbers may not.
    const bytes = utf8Length(body);
    if (bytes > cap) {
      throw new VaultError("too_large", sectionCapMessage(file.path, "The body with line numbers", bytes, cap, subsectionsOf(text, meta, 0, Number.MAX_SAFE_INTEGER)));
    }
    return { ...base, body };
  }

  /**
   * Counts for `stats`: a pass over every visible note's metadata and links, in time slices, with each
   * target's visibility asked once (asked per link, 10k notes took ~200 ms in one step).
   */
  async stats(): Promise<{ notes: number; attachments: number; folders: number; links: number; unresolved_links: number; tags: number }> {
    const slice = new TimeSlice(SLICE_MS, 64);
    const files = this.visibleFiles();
    const notes = files.filter((f) => isNotePath(f.path));
    const seen = new Map<string, boolean>();
    const visible = (p: string): boolean => {
      let v = seen.get(p);
      if (v === undefined) seen.set(p, (v = !this.policy.isHidden(p)));
      return v;
    };
    // One pass over the visible notes: each one's link records looked up (the headless maps make them
    // on demand; a `for…in` over the maps listed all 100k sources' keys in one step first, ~56 ms) and
    // its tags.
    const resolved = this.port.resolvedLinks();
    const unresolvedMap = this.port.unresolvedLinks();
    let links = 0;
    let unresolved = 0;
    const tags = new Set<string>();
    for (const n of notes) {
      if (slice.due()) await slice.next();
      const targets = Object.hasOwn(resolved, n.path) ? resolved[n.path] : undefined;
      if (targets) for (const dst in targets) if (visible(dst)) links += targets[dst];
      const missing = Object.hasOwn(unresolvedMap, n.path) ? unresolvedMap[n.path] : undefined;
      if (missing) for (const dst in missing) unresolved += missing[dst];
      const meta = this.port.getMetadata(n.path);
      if (!meta) continue;
      for (const t of meta.tags) tags.add(t.tag.toLowerCase());
      for (const t of frontmatterTags(meta.frontmatter)) tags.add(t.toLowerCase());
    }
    return {
      notes: notes.length,
      attachments: files.length - notes.length,
      folders: this.visibleFolders().length,
      links,
      unresolved_links: unresolved,
      tags: tags.size,
    };
  }

  aliasesOf(path: string): string[] {
    return frontmatterAliases(this.port.getMetadata(path)?.frontmatter);
  }
}

export /**
 * The section arguments of the sections directly below lines `start`–`end` (1-based, the heading
 * line first): the highest headings after the first line, as "Parent > Child" paths.
 */
function subsectionsOf(text: string, meta: Parameters<typeof headingsOf>[1], start: number, end: number): string[] {
  const all = headingsOf(text, meta);
  const own = all.find((h) => h.line + 1 === start);
  const inner = all.filter((h) => h.line + 1 > start && h.line + 1 <= end && (!own || h.level > own.level));
  if (!inner.length) return [];
  const top = Math.min(...inner.map((h) => h.level));
  return inner.filter((h) => h.level === top).map((h) => (own ? `${own.heading} > ${h.heading}` : h.heading));
}

function toEntry(f: VaultFile): DocumentEntry {
  const note = isNotePath(f.path);
  return {
    path: f.path,
    kind: note ? "note" : "attachment",
    title: note ? basenameOf(f.path) : f.path.slice(f.path.lastIndexOf("/") + 1),
    size: f.size,
    modified_at: new Date(f.mtime).toISOString(),
  };
}

export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function encodeCursor(offset: number): string {
  return `o${offset.toString(36)}`;
}

export function decodeCursor(cursor: string | undefined): number {
  if (!cursor) return 0;
  const m = /^o([0-9a-z]+)$/.exec(cursor);
  const n = m ? parseInt(m[1], 36) : NaN;
  if (!Number.isFinite(n) || n < 0) throw new VaultError("invalid_argument", `The cursor "${cursor}" is not valid; pass the next_cursor value from the previous page, or omit it to start over.`);
  return n;
}
