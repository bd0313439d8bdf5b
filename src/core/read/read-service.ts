import { own } from "../dict";
import { backlinks } from "../links/backlinks";
import { VaultError, isVaultError } from "../errors";
import { splitFrontmatter } from "../frontmatter";
import { headingsOf } from "../lookup/section";
import { frontmatterAliases, frontmatterTags } from "../metadata";
import { isUnder, normalizeVaultPath } from "../paths";
import type { AccessPolicy } from "../policy";
import { SLICE_MS, TimeSlice } from "../time-slice";
import { compareStrings, type ReadResult, type VaultService } from "../services/vault-service";
import { basenameOf, isNotePath, parentOf, type VaultPort } from "../vault";
import { formatBytes } from "../strings";
import { DEFAULT_NOTE_CAP_BYTES, sizeCapMessage, utf8Length } from "./format";

export const MAX_READ_MULTIPLE = 20;
export const MAX_INFO_PATHS = 50;
export const MAX_TREE_ENTRIES = 2000;
/** Entries list_directory gives by default: ~50 KB of answer; next_offset pages on. */
export const DEFAULT_TREE_ENTRIES = 300;

export interface OutlineHeading {
  level: number;
  heading: string;
  /** 1-based file line number. */
  line: number;
}

export interface NoteInfo {
  path: string;
  kind: "note" | "attachment";
  title: string;
  size: number;
  created_at: string;
  modified_at: string;
  has_frontmatter: boolean;
  /** Set when the frontmatter is not valid YAML. */
  frontmatter_error?: string;
  /** Frontmatter and inline tags, without `#`, de-duplicated (case-insensitive). */
  tags: string[];
  aliases: string[];
  headings: OutlineHeading[];
  /** Links, embeds and frontmatter links from this note (resolved or not). */
  links_out: number;
  /** Of which unresolved. */
  unresolved_out: number;
  /** Links to this file from other visible notes. */
  links_in: number;
  /** Visible notes linking here. */
  backlinking_notes: number;
}

export interface TreeNode {
  name: string;
  path: string;
  type: "folder" | "file";
  size?: number;
  /** Folders: children when within depth. */
  children?: TreeNode[];
  /** Folders beyond depth (or cut by the entry cap): how many files and folders are inside, in total. */
  files?: number;
  folders?: number;
  /** True when children were not listed (depth reached or cap). */
  collapsed?: boolean;
}

export interface ReadMultipleResult {
  ok: ReadResult[];
  err: Array<{ path: string; error: string }>;
}

export interface ReadServiceDeps {
  port: VaultPort;
  policy: AccessPolicy;
  vault: VaultService;
  /** Current cap on one note's size (settings); default 256 KB. */
  noteCapBytes?: () => number;
}

export interface ReadService {
  readMultiple(paths: readonly string[]): Promise<ReadMultipleResult>;
  notesInfo(paths: readonly string[]): Promise<{ ok: NoteInfo[]; err: Array<{ path: string; error: string }> }>;
  outline(path: string): Promise<{ path: string; headings: OutlineHeading[] }>;
  directory(path: string | undefined, depth: number, opts?: { includeFiles?: boolean; maxEntries?: number; offset?: number }): Promise<DirectoryResult>;
}

export interface DirectoryResult {
  path: string;
  tree: TreeNode;
  /** Entries listed (folders + files). */
  entries: number;
  truncated: boolean;
  /** When the folder's own entries (folders first, then files, by name) go on past this page: the offset of the next page. */
  next_offset?: number;
  text: string;
}

/**
 * Links into each of `paths` (as given, and with ".md" added) from visible notes other than itself:
 * one pass over the link map in time slices, each source's visibility asked once (a pass per path
 * asking per source took 1.5 s for 50 paths at 10k notes).
 */
async function incomingLinks(port: VaultPort, paths: readonly string[], policy: AccessPolicy): Promise<Map<string, { links: number; notes: number }>> {
  const counts = new Map<string, { links: number; notes: number }>();
  for (const p of paths) {
    let path: string;
    try {
      path = normalizeVaultPath(p);
    } catch {
      continue; // reported for that path by the caller
    }
    for (const key of [path, `${path}.md`]) if (!counts.has(key)) counts.set(key, { links: 0, notes: 0 });
  }
  const sources = await backlinks(port, counts.keys());
  const hidden = new Map<string, boolean>();
  for (const [target, c] of counts) {
    for (const [src, n] of sources.get(target) ?? []) {
      if (src === target) continue;
      let h = hidden.get(src);
      if (h === undefined) hidden.set(src, (h = policy.isHidden(src)));
      if (h) continue;
      c.links += n;
      c.notes++;
    }
  }
  return counts;
}

export function createReadService(deps: ReadServiceDeps): ReadService {
  const { port, policy, vault } = deps;
  const cap = () => deps.noteCapBytes?.() ?? DEFAULT_NOTE_CAP_BYTES;

  const errorText = (e: unknown): string => {
    if (isVaultError(e)) return e.message;
    throw e;
  };

  return {
    async readMultiple(paths) {
      if (paths.length === 0) throw new VaultError("invalid_argument", "Give at least one path.");
      if (paths.length > MAX_READ_MULTIPLE) {
        throw new VaultError("invalid_argument", `Too many paths (${paths.length}); read_multiple takes up to ${MAX_READ_MULTIPLE}. Split them over several calls.`);
      }
      await port.ready();
      const out: ReadMultipleResult = { ok: [], err: [] };
      // The read cap holds for the whole answer: notes that would take it over are left for another call.
      let used = 0;
      for (const p of paths) {
        try {
          const file = vault.requireFile(p);
          if (isNotePath(file.path) && file.size > cap()) throw new VaultError("too_large", sizeCapMessage(file.path, file.size, cap()));
          const note = await vault.read(p);
          const bytes = utf8Length(note.body);
          if (used + bytes > cap()) {
            throw new VaultError(
              "too_large",
              `Not returned: with it this answer would be over the ${formatBytes(cap())} cap on what a read returns (${formatBytes(used)} of notes before it, ${formatBytes(bytes)} in it). Read it in another call.`,
            );
          }
          used += bytes;
          out.ok.push(note);
        } catch (e) {
          out.err.push({ path: String(p), error: errorText(e) });
        }
      }
      return out;
    },

    async notesInfo(paths) {
      if (paths.length === 0) throw new VaultError("invalid_argument", "Give at least one path.");
      if (paths.length > MAX_INFO_PATHS) {
        throw new VaultError("invalid_argument", `Too many paths (${paths.length}); get_notes_info takes up to ${MAX_INFO_PATHS}. Split them over several calls.`);
      }
      await port.ready();
      const resolved = port.resolvedLinks();
      const unresolved = port.unresolvedLinks();
      const incoming = await incomingLinks(port, paths, policy);
      const ok: NoteInfo[] = [];
      const err: Array<{ path: string; error: string }> = [];
      for (const p of paths) {
        try {
          const file = vault.requireFile(p);
          const note = isNotePath(file.path);
          const meta = note ? port.getMetadata(file.path) : null;
          const { links: linksIn, notes: backlinkers } = incoming.get(file.path) ?? { links: 0, notes: 0 };
          let outCount = 0;
          for (const n of Object.values(own(resolved, file.path) ?? {})) outCount += n;
          let unresolvedCount = 0;
          for (const n of Object.values(own(unresolved, file.path) ?? {})) unresolvedCount += n;
          let headings: OutlineHeading[] = [];
          let hasFm = false;
          if (note) {
            const text = await port.read(file.path);
            hasFm = splitFrontmatter(text).yaml !== null;
            headings = headingsOf(text, meta).map((h) => ({ level: h.level, heading: h.heading, line: h.line + 1 }));
          }
          const tags: string[] = [];
          const seen = new Set<string>();
          for (const t of [...frontmatterTags(meta?.frontmatter), ...(meta?.tags ?? []).map((x) => x.tag)]) {
            const bare = t.replace(/^#/, "");
            if (seen.has(bare.toLowerCase())) continue;
            seen.add(bare.toLowerCase());
            tags.push(bare);
          }
          ok.push({
            path: file.path,
            kind: note ? "note" : "attachment",
            title: note ? basenameOf(file.path) : file.path.slice(file.path.lastIndexOf("/") + 1),
            size: file.size,
            created_at: new Date(file.ctime).toISOString(),
            modified_at: new Date(file.mtime).toISOString(),
            has_frontmatter: hasFm,
            ...(meta?.frontmatterError ? { frontmatter_error: meta.frontmatterError } : {}),
            tags,
            aliases: frontmatterAliases(meta?.frontmatter),
            headings,
            links_out: outCount + unresolvedCount,
            unresolved_out: unresolvedCount,
            links_in: linksIn,
            backlinking_notes: backlinkers,
          });
        } catch (e) {
          err.push({ path: String(p), error: errorText(e) });
        }
      }
      return { ok, err };
    },

    async outline(input) {
      await port.ready();
      const file = vault.requireFile(input);
      if (!isNotePath(file.path)) throw new VaultError("invalid_argument", `"${file.path}" is an attachment, not a note; only notes have an outline.`);
      const text = await port.read(file.path);
      const headings = headingsOf(text, port.getMetadata(file.path)).map((h) => ({ level: h.level, heading: h.heading, line: h.line + 1 }));
      return { path: file.path, headings };
    },

    async directory(input, depth, opts = {}) {
      const includeFiles = opts.includeFiles ?? true;
      const maxEntries = opts.maxEntries ?? MAX_TREE_ENTRIES;
      const root = input === undefined ? "" : normalizeVaultPath(input, "path");
      if (root !== "" && (policy.isHidden(root) || !port.isFolder(root))) {
        if (!policy.isHidden(root) && port.stat(root)) throw new VaultError("invalid_argument", `"${root}" is a file, not a folder; use get_notes_info or read for it.`);
        throw new VaultError("not_found", `No folder "${root}" in the vault. Call list_directory without a path to see the top level.`);
      }
      // Children per folder, visible only.
      const subfolders = new Map<string, string[]>();
      const filesIn = new Map<string, Array<{ path: string; size: number }>>();
      for (const f of port.listFolders()) {
        if (!isUnder(f, root) || f === root || policy.isHidden(f)) continue;
        const parent = parentOf(f);
        (subfolders.get(parent) ?? subfolders.set(parent, []).get(parent)!).push(f);
      }
      // Every file's visibility (10k files: ~30 ms), in slices.
      const slice = new TimeSlice(SLICE_MS, 64);
      for (const f of port.listFiles()) {
        if (slice.due()) await slice.next();
        if (!isUnder(f.path, root) || policy.isHidden(f.path)) continue;
        const parent = parentOf(f.path);
        (filesIn.get(parent) ?? filesIn.set(parent, []).get(parent)!).push({ path: f.path, size: f.size });
      }
      const countAll = (folder: string): { files: number; folders: number } => {
        let files = filesIn.get(folder)?.length ?? 0;
        let folders = 0;
        for (const sub of subfolders.get(folder) ?? []) {
          const c = countAll(sub);
          files += c.files;
          folders += 1 + c.folders;
        }
        return { files, folders };
      };
      const offset = Math.max(0, Math.floor(opts.offset ?? 0));
      let nextOffset: number | undefined;
      let entries = 0;
      let truncated = false;
      const nameOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);
      // Entries of each listed folder not shown (the entry cap), for the "… N more" line.
      const notShown = new Map<TreeNode, number>();
      const collapse = (node: TreeNode): void => {
        const c = countAll(node.path);
        node.files = c.files;
        node.folders = c.folders;
        node.collapsed = c.files + c.folders > 0;
      };
      // Breadth first: a folder's own entries before its subfolders' (a big subfolder must not hide
      // the folders after it); the listed folder's own entries are paged by offset.
      const tree: TreeNode = { name: root === "" ? "" : nameOf(root), path: root, type: "folder" };
      let queue: Array<{ node: TreeNode; level: number }> = [{ node: tree, level: 0 }];
      while (queue.length) {
        const next: typeof queue = [];
        for (const { node, level } of queue) {
          if (level >= depth || (entries >= maxEntries && level > 0)) {
            if (entries >= maxEntries && level < depth) truncated = true;
            collapse(node);
            continue;
          }
          const subs = (subfolders.get(node.path) ?? []).sort(compareStrings);
          const files = includeFiles ? (filesIn.get(node.path) ?? []).sort((x, y) => compareStrings(x.path, y.path)) : [];
          const skip = level === 0 ? Math.min(offset, subs.length + files.length) : 0;
          const items: Array<{ folder: string } | { path: string; size: number }> = [...subs.map((folder) => ({ folder })), ...files].slice(skip);
          node.children = [];
          for (const it of items) {
            if (entries >= maxEntries) {
              truncated = true;
              break;
            }
            entries++;
            if ("folder" in it) {
              const child: TreeNode = { name: nameOf(it.folder), path: it.folder, type: "folder" };
              node.children.push(child);
              next.push({ node: child, level: level + 1 });
            } else node.children.push({ name: nameOf(it.path), path: it.path, type: "file", size: it.size });
          }
          const left = items.length - node.children.length;
          if (left > 0) {
            node.collapsed = true;
            notShown.set(node, left);
            if (level === 0) nextOffset = skip + node.children.length;
          }
        }
        queue = next;
      }
      const lines: string[] = [];
      const write = (node: TreeNode, level: number): void => {
        const indent = "  ".repeat(level);
        for (const child of node.children ?? []) {
          if (child.type === "file") {
            lines.push(`${indent}${child.name}`);
            continue;
          }
          lines.push(`${indent}${child.name}/${child.children === undefined && child.collapsed ? ` (${summary(child.files ?? 0, child.folders ?? 0)})` : ""}`);
          write(child, level + 1);
        }
        const left = notShown.get(node);
        if (left) lines.push(`${indent}… ${left} more${level === 0 ? ` (offset ${nextOffset} lists them)` : ""}`);
      };
      write(tree, 0);
      const head = root === "" ? "/ (vault root)" : `${root}/`;
      const total = countAll(root);
      const page = offset > 0 ? `; from entry ${offset}` : "";
      const cut = truncated ? `; listing cut at ${maxEntries} entries${nextOffset !== undefined ? `, next page at offset ${nextOffset}` : ""}; ask for a subfolder or a smaller depth` : "";
      const text = [`${head} — ${summary(total.files, total.folders)}${page}${cut}`, ...lines].join("\n");
      return { path: root, tree, entries, truncated, ...(nextOffset !== undefined ? { next_offset: nextOffset } : {}), text };
    },
  };
}

function summary(files: number, folders: number): string {
  return `${folders} folder${folders === 1 ? "" : "s"}, ${files} file${files === 1 ? "" : "s"}`;
}
