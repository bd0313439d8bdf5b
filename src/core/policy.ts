import { VaultError } from "./errors";
import { isUnder } from "./paths";

export interface PolicyOptions {
  /** Obsidian's config folder (`.obsidian` unless changed). */
  configDir: string;
  /** Folders invisible to every tool, search included (user setting). */
  hiddenFolders?: readonly string[];
  /** Folders that can be read but never changed (user setting). */
  protectedFolders?: readonly string[];
  /** Obsidian's "Excluded files" filters: path prefixes, or `/regex/`. */
  excludedFilters?: () => readonly string[];
}

/**
 * What a client may see and change. Hidden: the config folder, every dot-file and dot-folder
 * (`.git`, `.trash`, our state folder…; Obsidian does not show them either), the user's hidden
 * folders and Obsidian's excluded files. Protected: the user's read-only folders.
 */
export class AccessPolicy {
  constructor(private readonly opts: PolicyOptions) {}

  isHidden(path: string): boolean {
    if (path === "") return false;
    // A dot-segment anywhere (without splitting: this runs for every file of a listing).
    if (path.startsWith(".") || path.includes("/.")) return true;
    if (isUnder(path, this.opts.configDir)) return true;
    for (const f of this.opts.hiddenFolders ?? []) if (f && isUnder(path, f)) return true;
    return this.isExcluded(path);
  }

  isExcluded(path: string): boolean {
    for (const filter of this.opts.excludedFilters?.() ?? []) {
      if (!filter) continue;
      if (filter.length > 2 && filter.startsWith("/") && filter.endsWith("/")) {
        try {
          if (new RegExp(filter.slice(1, -1)).test(path)) return true;
        } catch {
          /* an invalid user regex excludes nothing, as in Obsidian */
        }
      } else {
        const f = filter.replace(/\/+$/, "");
        if (isUnder(path, f) || (filter.endsWith("/") === false && path.startsWith(filter))) return true;
      }
    }
    return false;
  }

  isProtected(path: string): boolean {
    for (const f of this.opts.protectedFolders ?? []) if (f && isUnder(path, f)) return true;
    return false;
  }

  /** Throws `not_found` for hidden paths: a hidden file must look exactly like a missing one. */
  assertVisible(path: string): void {
    if (this.isHidden(path)) throw notFoundError(path);
  }

  assertWritable(path: string): void {
    this.assertVisible(path);
    if (this.isProtected(path)) {
      throw new VaultError("read_only", `"${path}" is in a protected folder; the vault owner made it read-only. Write somewhere else.`);
    }
  }
}

/** The one message for a path that does not exist — or is hidden, which must look the same. */
export function notFoundError(path: string): VaultError {
  return new VaultError(
    "not_found",
    `No note or file at "${path}". Paths are relative to the vault root and include the extension; use find_notes or list_documents to find it.`,
  );
}
