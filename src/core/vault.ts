import type { NoteMetadata } from "./metadata";
import { yieldToEventLoop } from "./time-slice";

/**
 * The vault port: everything the core needs from a vault. Two adapters implement it —
 * `hosts/obsidian/adapter.ts` over Obsidian's `App`, `hosts/node/fs-vault.ts` over a folder —
 * and `tests/contract/vault-port.contract.ts` holds both to the same behaviour.
 *
 * All paths are vault-relative with `/` separators, no leading or trailing slash, NFC-normalised;
 * the root folder is "". Adapters report *every* file; hiding (config folder, `.git`, `.trash`,
 * excluded files, user-hidden folders) is the core's job (`core/policy.ts`).
 */
export interface VaultFile {
  path: string;
  /** File name without extension for notes (Obsidian's `basename`). */
  basename: string;
  /** Lower-case extension without the dot ("" when none). */
  extension: string;
  size: number;
  /** Milliseconds since the epoch. */
  mtime: number;
  ctime: number;
}

export type VaultEvent =
  | { type: "create"; path: string }
  | { type: "modify"; path: string }
  | { type: "delete"; path: string }
  | { type: "rename"; path: string; oldPath: string };

/** Notes done of notes to update, while a rename rewrites links. */
export type RenameProgress = (done: number, total: number) => void;

/**
 * What a rename is about to do, told to the caller just before anything moves (the write service
 * journals it, so an interrupted rename can be finished at the next start).
 */
export interface RenamePlan {
  /** Every file that moves, old path → new path (a folder: each file in it, attachments too). */
  files: ReadonlyMap<string, string>;
  /** Notes (their paths before the move) whose links may need rewriting: those linking to a moving file, and moving notes. */
  notes: readonly string[];
}

export interface RenameResult {
  /** The new path. */
  path: string;
  /** How many links were rewritten, in how many notes. */
  linksUpdated: number;
  notesUpdated: number;
  /** The (new) paths of the notes whose links were rewritten. */
  updatedPaths?: string[];
}

export interface VaultPort {
  /** The vault's display name (its folder name). */
  readonly name: string;
  /** The Obsidian config folder name, usually `.obsidian` (`vault.configDir`). */
  readonly configDir: string;

  /** Every file in the vault (notes and attachments), config folder excluded. */
  listFiles(): VaultFile[];
  /** Every folder path (root "" excluded), config folder excluded. */
  listFolders(): string[];
  /** A file's facts, or null when there is no such file. */
  stat(path: string): VaultFile | null;
  /** True when `path` is a folder. */
  isFolder(path: string): boolean;

  read(path: string): Promise<string>;
  readBinary(path: string): Promise<Uint8Array>;

  /**
   * Atomically replaces a text file's content: `fn` gets the current text and returns the new text
   * (Obsidian: `vault.process`; headless: temp file + rename). Returns the written text.
   */
  process(path: string, fn: (current: string) => string): Promise<string>;
  /** Creates a new file (parents created as needed). Fails when it exists. */
  create(path: string, data: string | Uint8Array): Promise<void>;
  /** Replaces a binary file's bytes atomically. */
  writeBinary(path: string, data: Uint8Array): Promise<void>;
  createFolder(path: string): Promise<void>;
  /** Moves a file or folder to the trash; returns a human description of where it went. */
  trash(path: string): Promise<string>;
  /**
   * Renames/moves a file or folder and updates every link to it. `onProgress` hears how many of the
   * notes whose links change are done, when the adapter can tell (headless: as it rewrites them).
   * `beforeMove` is awaited with the plan after the checks and before anything changes on disk.
   */
  rename(path: string, newPath: string, onProgress?: RenameProgress, beforeMove?: (plan: RenamePlan) => Promise<void>): Promise<RenameResult>;
  /** Updates frontmatter atomically leaving the body byte for byte (Obsidian: `processFrontMatter`). */
  processFrontMatter(path: string, fn: (fm: Record<string, unknown>) => void): Promise<void>;

  /** Parsed metadata of a markdown note, or null (not a note / not yet parsed). */
  getMetadata(path: string): NoteMetadata | null;
  /**
   * Optional, for an adapter that keeps metadata packed (headless): a note's link texts (each link's
   * `link`, with any `#fragment`) in the link graph's order — frontmatter links, then links and
   * embeds by line — read without making its metadata; null when `getMetadata` gives null. The same
   * as `linkTextsOf(getMetadata(path))` (`core/metadata.ts`), which callers use when an adapter has none.
   */
  linkTexts?(path: string): string[] | null;
  /** Resolves a link path (no `#fragment`) from a source note like Obsidian; null when unresolved. */
  resolveLink(linkpath: string, sourcePath: string): string | null;
  /** source → target → count, like `metadataCache.resolvedLinks`. */
  resolvedLinks(): Record<string, Record<string, number>>;
  /** source → unresolved link text → count, like `metadataCache.unresolvedLinks`. */
  unresolvedLinks(): Record<string, Record<string, number>>;
  /**
   * Optional, for an adapter whose maps are made on demand: for each of `targets`, the notes with
   * resolved links to it, source → link count (self-links included), in `resolvedLinks()` order —
   * what scanning `resolvedLinks()` finds. Callers use `core/links/backlinks.ts`, which scans when
   * an adapter has none (Obsidian's maps are objects already).
   */
  linkSources?(targets: readonly string[]): Map<string, Map<string, number>>;
  /** Obsidian's "Excluded files" (`userIgnoreFilters`): path prefixes or `/regex/`. */
  excludedFilters(): string[];

  /** Subscribes to changes (made by us or by anyone else). Returns the unsubscribe function. */
  onChange(listener: (event: VaultEvent) => void): () => void;
  /** Resolves when files are listed and metadata is available. */
  ready(): Promise<void>;
  /**
   * Resolves when every file is listed (`listFiles`, `stat`, `isFolder` answer for the whole vault)
   * while notes' metadata and links may still be being read (`ready` waits for those too). Absent:
   * the same as `ready` (see `whenListed`).
   */
  listed?(): Promise<void>;
  /**
   * True when listing the vault (until `listed()` resolves) takes little of this thread: headless, its
   * walk runs in a worker thread. Work on this thread (loading a saved search index) then need not
   * wait for it. Absent: false.
   */
  readonly listingOffThread?: boolean;
  /**
   * A hint while opening: read notes' metadata only once `until` resolves (the listing goes on at
   * once), because the host has more urgent work (a saved search index to load). The port may
   * bound the wait; without this method, it is ignored.
   */
  deferMetadata?(until: Promise<unknown>): void;
  /** While opening: notes whose metadata is read, of the notes listed. */
  openingProgress?(): { read: number; total: number };
  /** Stops watching and frees resources. */
  close(): Promise<void>;
}

/** Ports whose listing `whenListed` saw done: later calls go on at once. */
const listedPorts = new WeakSet<VaultPort>();

/**
 * The port's `listed()`, or `ready()` where it has none; then a task of its own for each caller
 * (`yieldToEventLoop`, in the turn the engines share). When the listing ended, everything that waited for it
 * (the search index's start, the first client's session, the CLI's banner) went on in the listing's
 * last task: ~30 ms in one at 100k notes. Once a call saw it done, later ones go on at once, in
 * their caller's task (every search calls it: the task it yielded put the search's answer behind
 * whatever else was queued).
 */
export async function whenListed(port: VaultPort): Promise<void> {
  if (listedPorts.has(port)) return;
  await (port.listed ? port.listed() : port.ready());
  listedPorts.add(port);
  await yieldToEventLoop();
}

export function isNotePath(path: string): boolean {
  // ".md" in any case, without lower-casing the whole path (this runs for every file of a listing).
  const n = path.length;
  return n >= 3 && path.charCodeAt(n - 3) === 46 && (path.charCodeAt(n - 2) | 32) === 109 && (path.charCodeAt(n - 1) | 32) === 100;
}

export function basenameOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(0, dot) : name;
}

export function extensionOf(path: string): string {
  const name = path.slice(path.lastIndexOf("/") + 1);
  const dot = name.lastIndexOf(".");
  return dot > 0 ? name.slice(dot + 1).toLowerCase() : "";
}

export function parentOf(path: string): string {
  const i = path.lastIndexOf("/");
  return i < 0 ? "" : path.slice(0, i);
}
