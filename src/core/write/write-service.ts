import { setOwn } from "../dict";
import { cancelledError, VaultError } from "../errors";
import { splitFrontmatter } from "../frontmatter";
import { etagOf } from "../hash";
import { frontmatterTags } from "../metadata";
import { isUnder, normalizeVaultPath } from "../paths";
import type { AccessPolicy } from "../policy";
import type { StateStore } from "../state";
import { formatBytes } from "../strings";
import { extensionOf, isNotePath, parentOf, type RenamePlan, type RenameProgress, type VaultFile, type VaultPort } from "../vault";
import { ActivityLog, type ActivityEntry } from "./activity";
import type { ChangeCommitter, CommitOutcome, CommittedChange } from "./commit";
import { decodeBase64InSteps } from "./base64";
import { AutoApprove, type Confirmer, type ConfirmRequest } from "./confirm";
import { unifiedDiffInSteps } from "./diff";
import { describeMiss, findMatches, lineOfOffset, lineStarts, MAX_LOOSE_MATCH_CHARS } from "./edit-match";
import { frontmatterBlock, mergeFrontmatter, readFrontmatterStrict } from "./frontmatter-edit";
import { yieldToEventLoop } from "../time-slice";
import { KeyedLock } from "./lock";
import { finishInterruptedRename, RenameJournal, type RecoveredRename } from "./rename-journal";
import { fromWorkingText, shapeOf, toWorkingText } from "./text";

/**
 * The largest text a write or an edit takes, and the largest note it changes (UTF-16 units): reading,
 * hashing, matching, diffing and parsing a note are each one step of the event loop, measured at
 * 20–60 ms a MB; a 10 MB edit held it for 1.9 s.
 */
export const MAX_TEXT_CHANGE_CHARS = 2 * 1024 * 1024;

/** Throws `too_large` when a text (an argument, or a note before or after a change) is over the limit. */
function checkTextSize(what: string, text: string, path: string): void {
  if (text.length <= MAX_TEXT_CHANGE_CHARS) return;
  throw new VaultError(
    "too_large",
    `${what} is ${formatMB(text.length)} (characters); changes through this server are limited to ${formatMB(MAX_TEXT_CHANGE_CHARS)} a note ("${path}"). Split the note or the change, or make it in Obsidian.`,
  );
}

function formatMB(n: number): string {
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

/** An edit's result lists the lines of at most this many replacements (`replacements` counts them all). */
const MAX_LISTED_LINES = 1000;

/** Who asks for a change (for the activity log). */
export interface Actor {
  client: string;
  tool?: string;
  /**
   * Aborts when the call is cancelled (the client stopped waiting, e.g. at its own time limit). A
   * change not yet begun is then not made: checked once the paths' locks are held, and before and
   * after the owner's confirmation. A change under way is finished (never left half-done).
   */
  signal?: AbortSignal;
}

function assertWanted(actor: Actor): void {
  if (actor.signal?.aborted) throw cancelledError();
}

export type WriteMode = "overwrite" | "append" | "prepend";

export interface WriteRequest {
  path: string;
  /** Note body (or a whole text file). */
  content?: string;
  /** Bytes of an attachment, base64. */
  content_base64?: string;
  frontmatter?: Record<string, unknown>;
  mode?: WriteMode;
  if_match?: string;
}

export interface WriteResult {
  /** The git commit of this change, when the owner turned committing on. */
  commit?: CommitOutcome;
  path: string;
  created: boolean;
  mode: WriteMode;
  etag: string;
  size: number;
  /** Unified diff for text changes of existing files. */
  diff?: string;
}

export interface EditRequest {
  path: string;
  old_text?: string;
  new_text: string;
  replace_all?: boolean;
  line_start?: number;
  line_end?: number;
  if_match?: string;
  dry_run?: boolean;
}

export interface EditResult {
  /** The git commit of this change, when the owner turned committing on. */
  commit?: CommitOutcome;
  path: string;
  replacements: number;
  match_type: "exact" | "normalized" | "lines";
  /** 1-based lines (in the old text) where the replaced text started. */
  lines: number[];
  etag: string;
  diff: string;
  dry_run: boolean;
}

export interface FrontmatterRequest {
  path: string;
  set?: Record<string, unknown>;
  remove?: string[];
  mode?: "merge" | "replace";
  if_match?: string;
}

export interface FrontmatterResult {
  /** The git commit of this change, when the owner turned committing on. */
  commit?: CommitOutcome;
  path: string;
  frontmatter: Record<string, unknown>;
  changed: string[];
  etag: string;
}

export interface TagsRequest {
  path: string;
  action: "add" | "remove" | "list";
  tags?: string[];
  if_match?: string;
}

export interface TagsResult {
  /** The git commit of this change, when the owner turned committing on. */
  commit?: CommitOutcome;
  path: string;
  /** Frontmatter tags, without `#`. */
  tags: string[];
  /** Inline `#tags` of the body, without `#` (change them with edit). */
  inline_tags: string[];
  added: string[];
  removed: string[];
  /** Tags asked to be removed that are only inline in the body. */
  inline_only: string[];
  etag: string;
}

export interface DeleteResult {
  /** The git commit of this change, when the owner turned committing on. */
  commit?: CommitOutcome;
  path: string;
  kind: "file" | "folder";
  /** Where it went, e.g. `the vault's .trash folder`. */
  trashed_to: string;
  files: number;
  /** The vault's `.trash` was just excluded from git (a git-backed vault's first delete). */
  trash_note?: string;
}

export interface RenameRequest {
  path: string;
  new_path: string;
  overwrite?: boolean;
  /** With overwrite: the etag of the existing file at new_path that is replaced (moved to the trash). */
  if_match?: string;
}

export interface RenameResultOut {
  /** The git commit of this change, when the owner turned committing on. */
  commit?: CommitOutcome;
  path: string;
  new_path: string;
  kind: "file" | "folder";
  links_updated: number;
  notes_updated: number;
  /** How long the move and the link updates took. */
  duration_ms: number;
  /** When overwrite replaced an existing target: where the old target went. */
  replaced_target_trashed_to?: string;
}

/** Bytes that arrive from outside the conversation (an upload link, a fetched URL). */
export interface PutBytesRequest {
  path: string;
  bytes: Uint8Array;
  /** Replace an existing file (asks the owner first where confirmations are on); needs `if_match`. */
  overwrite: boolean;
  /** The etag of the file being replaced; compared with the file when the bytes are written. */
  if_match?: string;
  /** For the activity log, e.g. `upload (2.1 MB)`, `fetch https://…`. */
  detail: string;
  /** How the caller asks again, for refusals (e.g. `make a new upload link`). Default: `ask again`. */
  retry?: string;
}

/** What the start-up did with renames a crash had cut short. */
export interface RenameRecoveryReport {
  /** When the start-up finished them (ISO time). */
  at: string;
  renames: RecoveredRename[];
}

export interface WriteServiceDeps {
  port: VaultPort;
  policy: AccessPolicy;
  stateStore: StateStore;
  confirmer?: Confirmer;
  /** Commits each change (git-backed vaults, when the owner turned it on). */
  committer?: ChangeCommitter;
  now?: () => Date;
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

export interface WriteService {
  write(req: WriteRequest, actor: Actor): Promise<WriteResult>;
  edit(req: EditRequest, actor: Actor): Promise<EditResult>;
  updateFrontmatter(req: FrontmatterRequest, actor: Actor): Promise<FrontmatterResult>;
  manageTags(req: TagsRequest, actor: Actor): Promise<TagsResult>;
  delete(req: { path: string; confirm_path: string }, actor: Actor): Promise<DeleteResult>;
  /** Writes bytes from outside the conversation to a vault path (atomic, checked, logged, committed). */
  putBytes(req: PutBytesRequest, actor: Actor): Promise<WriteResult>;
  /**
   * Throws unless a client may write to `path` (valid, visible, not protected, not a folder; an
   * existing file only with overwrite and the etag of its current content). Returns the normalised
   * path. For an early refusal (before a download or an upload): `putBytes` checks it all again.
   */
  checkWritable(path: string, overwrite: boolean, ifMatch?: string, retry?: string): Promise<string>;
  rename(req: RenameRequest, actor: Actor, onProgress?: RenameProgress): Promise<RenameResultOut>;
  /**
   * At start-up, before clients are served: finishes the renames a crash cut short (from the rename
   * journal), and says so in the log and the activity log. Null when there were none.
   */
  recoverInterruptedRenames(): Promise<RenameRecoveryReport | null>;
  /** What `recoverInterruptedRenames` did at this server's start, if anything. */
  readonly lastRecovery: RenameRecoveryReport | null;
  /** Newest first. */
  activity(limit: number): Promise<ActivityEntry[]>;
  /** Commits a sync rewrote (old sha → new): the activity log's entries follow them. */
  remapCommits(map: ReadonlyMap<string, string>): Promise<number>;
  /** A pending commit was made: its activity entry gets the sha. */
  commitMade(tool: string, path: string, sha: string): Promise<boolean>;
  /** The confirmer in use; hosts may swap it (e.g. when the owner toggles confirmations). */
  confirmer: Confirmer;
}

/** Extensions edit treats as text. */
const TEXT_EXTENSIONS = new Set(["md", "txt", "canvas", "base", "csv", "json", "css"]);

export function createWriteService(deps: WriteServiceDeps): WriteService {
  return new WriteServiceImpl(deps);
}

class WriteServiceImpl implements WriteService {
  private readonly port: VaultPort;
  private readonly policy: AccessPolicy;
  private readonly log: ActivityLog;
  private readonly locks = new KeyedLock();
  private readonly now: () => Date;
  private readonly journal: RenameJournal;
  lastRecovery: RenameRecoveryReport | null = null;
  confirmer: Confirmer;

  constructor(private readonly deps: WriteServiceDeps) {
    this.port = deps.port;
    this.policy = deps.policy;
    this.log = new ActivityLog(deps.stateStore);
    this.journal = new RenameJournal(deps.stateStore);
    this.confirmer = deps.confirmer ?? new AutoApprove();
    this.now = deps.now ?? (() => new Date());
  }

  // ------------------------------------------------------------------ write

  async write(req: WriteRequest, actor: Actor): Promise<WriteResult> {
    const mode = req.mode ?? "overwrite";
    if (req.content !== undefined && req.content_base64 !== undefined) {
      throw new VaultError("invalid_argument", "Give either content (text) or content_base64 (an attachment's bytes), not both.");
    }
    if (req.content === undefined && req.content_base64 === undefined) {
      throw new VaultError("invalid_argument", "Nothing to write: give content (the note's body) or content_base64 (an attachment's bytes).");
    }
    let path = this.targetPath(req.path);
    if (req.content !== undefined && extensionOf(path) === "") path += ".md";
    this.assertTargetWritable(path);
    if (this.port.isFolder(path)) throw new VaultError("invalid_argument", `"${path}" is a folder; give a file path inside it, such as "${path}/Note.md".`);
    return this.locked(actor, [path], async () => {
      await this.port.ready();
      if (req.content_base64 !== undefined) return this.writeBinary(path, req, mode, actor);
      if (req.frontmatter !== undefined && !isNotePath(path)) {
        throw new VaultError("invalid_argument", `"${path}" is not a markdown note, so it cannot have frontmatter; drop frontmatter or use a ".md" path.`);
      }
      const content = req.content ?? "";
      checkTextSize("content", content, path);
      const existing = this.port.stat(path);
      if (!existing) {
        const text = (req.frontmatter ? frontmatterBlock(req.frontmatter) : "") + content;
        await this.port.create(path, text);
        const etag = await etagOf(text);
        const commit = await this.record(actor, "write", path, null, etag, "created");
        return { path, created: true, mode, etag, size: new TextEncoder().encode(text).length, ...withCommit(commit) };
      }
      const old = await this.port.read(path);
      if (mode !== "overwrite") checkTextSize("The note", old, path);
      const before = await etagOf(old);
      if (mode === "overwrite") requireEtag(path, req.if_match, before, WRITE_RETRY, ' (or use edit, or mode "append"/"prepend")');
      else this.checkEtag(path, req.if_match, before);
      const shape = shapeOf(old);
      const working = toWorkingText(old, shape);
      const incoming = content.replace(/\r\n/g, "\n");
      let next: string;
      if (mode === "overwrite") {
        const split = splitFrontmatter(working);
        if (req.frontmatter !== undefined) next = frontmatterBlock(req.frontmatter) + incoming;
        else if (splitFrontmatter(incoming).yaml !== null || split.yaml === null) next = incoming;
        else next = keepBlock(working, split.bodyOffset) + incoming;
      } else {
        let base = req.frontmatter ? mergeFrontmatter(working, req.frontmatter, path) : working;
        if (mode === "append") {
          next = base === "" || base.endsWith("\n") || incoming === "" ? base + incoming : base + "\n" + incoming;
        } else {
          const split = splitFrontmatter(base);
          let at = split.yaml !== null ? split.bodyOffset : 0;
          if (at > base.length) {
            base += "\n";
            at = base.length;
          }
          const piece = incoming === "" || incoming.endsWith("\n") ? incoming : incoming + "\n";
          next = base.slice(0, at) + piece + base.slice(at);
        }
      }
      checkTextSize("The note after the change", next, path);
      await yieldToEventLoop();
      const finalText = shape.eol === "\r\n" || shape.bom ? fromWorkingText(next, shape) : next;
      const diff = await unifiedDiffInSteps(working, toWorkingText(finalText, shape), { context: 2 }, yieldToEventLoop);
      if (mode === "overwrite") {
        await this.ask({ action: "overwrite", path, summary: `Overwrite "${path}" (${describeDiff(diff)})`, diff }, actor);
      }
      await this.commitText(path, old, finalText);
      const etag = await etagOf(finalText);
      const commit = await this.record(actor, "write", path, before, etag, mode, undefined, [], old);
      return { path, created: false, mode, etag, size: new TextEncoder().encode(finalText).length, diff, ...withCommit(commit) };
    });
  }

  private async writeBinary(path: string, req: WriteRequest, mode: WriteMode, actor: Actor): Promise<WriteResult> {
    if (mode !== "overwrite") throw new VaultError("invalid_argument", `content_base64 only supports mode "overwrite"; append and prepend are for text.`);
    if (req.frontmatter !== undefined) throw new VaultError("invalid_argument", "An attachment has no frontmatter; drop frontmatter when sending content_base64.");
    const bytes = await decodeBase64InSteps(req.content_base64 ?? "", yieldToEventLoop);
    if (!bytes) throw new VaultError("invalid_argument", "content_base64 is not valid base64; encode the file's bytes with standard base64.");
    const existing = this.port.stat(path);
    if (!existing) {
      await this.port.create(path, bytes);
      const etag = await etagOf(bytes);
      const commit = await this.record(actor, "write", path, null, etag, "created (binary)");
      return { path, created: true, mode, etag, size: bytes.length, ...withCommit(commit) };
    }
    const { before, old: oldBytes } = await this.replaceBytes(path, bytes, req.if_match, WRITE_RETRY, `Overwrite "${path}" with ${formatBytes(bytes.length)} of new content`, actor);
    const etag = await etagOf(bytes);
    const commit = await this.record(actor, "write", path, before, etag, "overwrite (binary)", undefined, [], oldBytes);
    return { path, created: false, mode, etag, size: bytes.length, ...withCommit(commit) };
  }

  async checkWritable(input: string, overwrite: boolean, ifMatch?: string, retry = "ask again"): Promise<string> {
    const path = this.writablePath(input, overwrite, ifMatch, retry);
    await this.port.ready();
    if (this.port.stat(path)) requireEtag(path, ifMatch, await etagOf(await this.port.readBinary(path)), retry);
    return path;
  }

  /** `checkWritable`'s synchronous part: the path, and whether an existing file may be replaced at all. */
  private writablePath(input: string, overwrite: boolean, ifMatch: string | undefined, retry: string): string {
    const path = this.targetPath(input);
    this.assertTargetWritable(path);
    if (this.port.isFolder(path)) throw new VaultError("invalid_argument", `"${path}" is a folder; give a file path inside it.`);
    if (ifMatch !== undefined && !overwrite) {
      throw new VaultError("invalid_argument", `if_match is the etag of a file being replaced; pass overwrite: true with it (or drop if_match to create a new file).`);
    }
    if (!overwrite && this.port.stat(path)) {
      throw new VaultError("exists", `"${path}" already exists; choose another path, or to replace it read it for its etag and ${retry} with overwrite: true and if_match set to that etag.`);
    }
    return path;
  }

  async putBytes(req: PutBytesRequest, actor: Actor): Promise<WriteResult> {
    const retry = req.retry ?? "ask again";
    const path = this.writablePath(req.path, req.overwrite, req.if_match, retry);
    return this.locked(actor, [path], async () => {
      await this.port.ready();
      const existing = this.port.stat(path);
      const tool = actor.tool ?? "write";
      if (!existing) {
        await this.port.create(path, req.bytes);
        const etag = await etagOf(req.bytes);
        const commit = await this.record(actor, tool, path, null, etag, req.detail);
        return { path, created: true, mode: "overwrite", etag, size: req.bytes.length, ...withCommit(commit) };
      }
      if (!req.overwrite) {
        throw new VaultError("exists", `"${path}" appeared in the meantime; nothing was written. To replace it, read it for its etag and ${retry} with overwrite: true and if_match set to that etag.`);
      }
      const { before, old: oldBytes } = await this.replaceBytes(path, req.bytes, req.if_match, retry, `Overwrite "${path}" with ${formatBytes(req.bytes.length)} (${req.detail})`, actor);
      const etag = await etagOf(req.bytes);
      const commit = await this.record(actor, tool, path, before, etag, req.detail, undefined, [], oldBytes);
      return { path, created: false, mode: "overwrite", etag, size: req.bytes.length, ...withCommit(commit) };
    });
  }

  // ------------------------------------------------------------------ edit

  async edit(req: EditRequest, actor: Actor): Promise<EditResult> {
    const file = this.existingFile(req.path);
    const path = file.path;
    if (!TEXT_EXTENSIONS.has(file.extension)) {
      throw new VaultError("invalid_argument", `"${path}" is not a text file; edit changes notes and other text files only.`);
    }
    const hasLines = req.line_start !== undefined || req.line_end !== undefined;
    if (req.old_text === undefined && !hasLines) {
      throw new VaultError("invalid_argument", "Say what to replace: old_text (the exact text, once in the note), or line_start/line_end, or both.");
    }
    if (req.old_text === "") throw new VaultError("invalid_argument", "old_text is empty; give the exact text to replace (or use line_start/line_end to replace whole lines).");
    if (req.old_text !== undefined) checkTextSize("old_text", req.old_text, path);
    checkTextSize("new_text", req.new_text, path);
    return this.locked(actor, [path], async () => {
      const old = await this.port.read(path);
      checkTextSize("The note", old, path);
      const before = await etagOf(old);
      this.checkEtag(path, req.if_match, before);
      const shape = shapeOf(old);
      const working = toWorkingText(old, shape);
      const crlfMode = shape.eol === "\r\n";
      const fold = (s: string) => (crlfMode ? s.replace(/\r\n/g, "\n") : s);
      let newText = fold(req.new_text);
      await yieldToEventLoop();
      const starts = lineStarts(working);
      const lineCount = working.endsWith("\n") ? starts.length - 1 : starts.length;
      let from = 0;
      let to = working.length;
      let ls = 1;
      let le = lineCount;
      if (hasLines) {
        ls = req.line_start ?? req.line_end ?? 1;
        le = req.line_end ?? ls;
        if (!Number.isInteger(ls) || !Number.isInteger(le) || ls < 1 || le < ls || le > lineCount) {
          throw new VaultError(
            "invalid_argument",
            `Lines ${ls}–${le} are not in "${path}", which has ${lineCount} lines; give 1 ≤ line_start ≤ line_end ≤ ${lineCount} (read with with_line_numbers to see them).`,
          );
        }
        from = starts[ls - 1];
        to = le < starts.length ? starts[le] - 1 : working.length;
      }
      const replacements: Array<{ start: number; end: number }> = [];
      let matchType: EditResult["match_type"] = "lines";
      if (req.old_text === undefined) {
        if (newText.endsWith("\n")) newText = newText.slice(0, -1);
        let start = from;
        let end = to;
        if (req.new_text === "") {
          if (end < working.length) end++;
          else if (start > 0) start--;
        }
        replacements.push({ start, end });
      } else {
        const needle = fold(req.old_text);
        await yieldToEventLoop();
        const found = findMatches(working, needle, from, to);
        const where = hasLines ? ` within lines ${ls}–${le}` : "";
        if (found.matches.length === 0 && found.tooLong) {
          throw new VaultError(
            "not_found",
            `old_text was not found exactly in "${path}"${where}. Quotes, dashes and spaces are matched loosely only within ${MAX_LOOSE_MATCH_CHARS / 1024} KB of a note: copy the text exactly (read it again), or narrow the search with line_start/line_end.`,
          );
        }
        if (found.matches.length === 0) {
          throw new VaultError(
            "not_found",
            `old_text was not found in "${path}"${where}, not even after normalising quotes, dashes and spaces. ${describeMiss(working, needle, ls, le)}`,
          );
        }
        if (found.matches.length > 1 && !req.replace_all) {
          const lines = found.matches.slice(0, 10).map((m) => lineOfOffset(starts, m.start));
          const more = found.matches.length > lines.length ? ` and ${found.matches.length - lines.length} more` : "";
          throw new VaultError(
            "invalid_argument",
            `old_text occurs ${found.matches.length} times in "${path}"${where} (lines ${lines.join(", ")}${more}); add surrounding text to make it unique, narrow it with line_start/line_end, or set replace_all.`,
          );
        }
        matchType = found.type;
        for (const m of found.matches) replacements.push(m);
        await yieldToEventLoop();
      }
      // One pass over the text (replace_all can have thousands of matches).
      const parts: string[] = [];
      let at = 0;
      for (const r of replacements) {
        parts.push(working.slice(at, r.start), newText);
        at = r.end;
      }
      parts.push(working.slice(at));
      const next = parts.join("");
      checkTextSize("The edited note", next, path);
      // Matching and diffing are each linear in the note: a task of their own each.
      await yieldToEventLoop();
      const finalText = fromWorkingText(next, shape);
      const diff = await unifiedDiffInSteps(working, next, { context: 2 }, yieldToEventLoop);
      const lines = replacements.slice(0, MAX_LISTED_LINES).map((r) => lineOfOffset(starts, r.start));
      const result = (etag: string, dry: boolean): EditResult => ({ path, replacements: replacements.length, match_type: matchType, lines, etag, diff, dry_run: dry });
      if (req.dry_run) return result(before, true);
      if (finalText === old) return result(before, false);
      await this.commitText(path, old, finalText);
      const etag = await etagOf(finalText);
      const commit = await this.record(actor, "edit", path, before, etag, `${replacements.length} replacement${replacements.length === 1 ? "" : "s"} (${matchType})`, undefined, [], old);
      return { ...result(etag, false), ...withCommit(commit) };
    });
  }

  // ------------------------------------------------------------------ frontmatter and tags

  async updateFrontmatter(req: FrontmatterRequest, actor: Actor): Promise<FrontmatterResult> {
    const path = this.existingNote(req.path);
    const set = req.set ?? {};
    const remove = req.remove ?? [];
    const mode = req.mode ?? "merge";
    for (const k of [...Object.keys(set), ...remove]) {
      if (k.trim() === "") throw new VaultError("invalid_argument", "A frontmatter key is empty; give property names such as \"status\".");
    }
    if (Object.keys(set).length === 0 && remove.length === 0 && mode === "merge") {
      throw new VaultError("invalid_argument", "Nothing to change: give set (properties to add or change) and/or remove (property names).");
    }
    return this.locked(actor, [path], async () => {
      const old = await this.port.read(path);
      const before = await etagOf(old);
      this.checkEtag(path, req.if_match, before);
      const { fm } = readFrontmatterStrict(old, path);
      const changed = new Set<string>();
      if (mode === "replace") for (const k of Object.keys(fm)) if (!Object.hasOwn(set, k)) changed.add(k);
      for (const k of remove) if (Object.hasOwn(fm, k)) changed.add(k);
      for (const [k, v] of Object.entries(set)) if (!Object.hasOwn(fm, k) || JSON.stringify(fm[k]) !== JSON.stringify(v)) changed.add(k);
      if (changed.size > 0) {
        await this.port.processFrontMatter(path, (data) => {
          if (mode === "replace") for (const k of Object.keys(data)) delete data[k];
          for (const k of remove) delete data[k];
          for (const [k, v] of Object.entries(set)) setOwn(data, k, v);
        });
      }
      const now = await this.port.read(path);
      const etag = await etagOf(now);
      const commit = changed.size > 0 ? await this.record(actor, "update_frontmatter", path, before, etag, `keys: ${[...changed].join(", ")}`, undefined, [], old) : undefined;
      return { path, frontmatter: readFrontmatterStrict(now, path).fm, changed: [...changed], etag, ...withCommit(commit) };
    });
  }

  async manageTags(req: TagsRequest, actor: Actor): Promise<TagsResult> {
    const path = this.existingNote(req.path);
    const wanted = (req.tags ?? []).map(cleanTag);
    if (req.action !== "list" && wanted.length === 0) throw new VaultError("invalid_argument", `Give the tags to ${req.action}, e.g. ["project/alpha"].`);
    return this.locked(actor, [path], async () => {
      const old = await this.port.read(path);
      const before = await etagOf(old);
      this.checkEtag(path, req.if_match, before);
      const inline = inlineTags(this.port, path);
      if (req.action === "list") {
        const split = splitFrontmatter(old);
        let tags: string[] = [];
        if (split.yaml !== null) tags = fmTagList(readFrontmatterStrict(old, path).fm);
        return { path, tags, inline_tags: inline, added: [], removed: [], inline_only: [], etag: before };
      }
      const { fm } = readFrontmatterStrict(old, path);
      const current = fmTagList(fm);
      const lower = new Set(current.map((t) => t.toLowerCase()));
      const added: string[] = [];
      const removed: string[] = [];
      const inlineOnly: string[] = [];
      let nextTags = current;
      if (req.action === "add") {
        for (const t of wanted) {
          if (lower.has(t.toLowerCase())) continue;
          lower.add(t.toLowerCase());
          added.push(t);
        }
        nextTags = [...current, ...added];
      } else {
        const drop = new Set(wanted.map((t) => t.toLowerCase()));
        nextTags = current.filter((t) => {
          if (drop.has(t.toLowerCase())) {
            removed.push(t);
            return false;
          }
          return true;
        });
        const inlineLower = new Set(inline.map((t) => t.toLowerCase()));
        for (const t of wanted) if (!lower.has(t.toLowerCase()) && inlineLower.has(t.toLowerCase())) inlineOnly.push(t);
      }
      let etag = before;
      let commit: CommitOutcome | undefined;
      if (added.length > 0 || removed.length > 0) {
        await this.port.processFrontMatter(path, (data) => {
          delete data.tag;
          if (nextTags.length > 0) data.tags = nextTags;
          else delete data.tags;
        });
        etag = await etagOf(await this.port.read(path));
        commit = await this.record(actor, "manage_tags", path, before, etag, `${req.action}: ${[...added, ...removed].join(", ")}`, undefined, [], old);
      }
      return { path, tags: nextTags, inline_tags: inline, added, removed, inline_only: inlineOnly, etag, ...withCommit(commit) };
    });
  }

  // ------------------------------------------------------------------ delete and rename

  async delete(req: { path: string; confirm_path: string }, actor: Actor): Promise<DeleteResult> {
    const path = normalizeVaultPath(req.path);
    const confirmPath = normalizeVaultPath(req.confirm_path, "confirm_path");
    if (path === "") throw new VaultError("invalid_path", "The path is empty; the vault root cannot be deleted. Give a file or folder path.");
    if (path !== confirmPath) {
      throw new VaultError("invalid_argument", `confirm_path "${confirmPath}" is not the same as path "${path}"; repeat the exact path in confirm_path to delete it.`);
    }
    if (this.policy.isHidden(path)) throw this.missing(path);
    this.policy.assertWritable(path);
    return this.locked(actor, [path], async () => {
      await this.port.ready();
      const file = this.port.stat(path);
      const isFolder = !file && this.port.isFolder(path);
      if (!file && !isFolder) throw this.missing(path);
      let files = 1;
      let before: string | null = null;
      if (isFolder) {
        files = this.assertFolderMovable(path, "delete");
      } else {
        before = await etagOf(await this.port.readBinary(path));
      }
      const what = isFolder ? `the folder "${path}" and the ${files} file${files === 1 ? "" : "s"} in it` : `"${path}"`;
      await this.ask({ action: "delete", path, summary: `Delete ${what} (moved to the trash)` }, actor);
      const where = await this.port.trash(path);
      const trashNote = (await this.deps.committer?.trashed?.()) ?? null;
      const commit = await this.record(actor, "delete", path, before, null, isFolder ? `folder, ${files} files` : undefined);
      return { path, kind: isFolder ? "folder" : "file", trashed_to: where, files, ...(trashNote ? { trash_note: trashNote } : {}), ...withCommit(commit) };
    });
  }

  async rename(req: RenameRequest, actor: Actor, onProgress?: RenameProgress): Promise<RenameResultOut> {
    const path = normalizeVaultPath(req.path);
    if (path === "") throw new VaultError("invalid_path", "The path is empty; the vault root cannot be renamed. Give a file or folder path.");
    if (this.policy.isHidden(path)) throw this.missing(path);
    this.policy.assertWritable(path);
    await this.port.ready();
    const file = this.port.stat(path);
    const isFolder = !file && this.port.isFolder(path);
    if (!file && !isFolder) throw this.missing(path);
    let target = this.targetPath(req.new_path, "new_path");
    if (file && isNotePath(path) && !isNotePath(target) && extensionOf(target) === "") target += ".md";
    this.assertTargetWritable(target);
    if (target === path) throw new VaultError("invalid_argument", `"${path}" already has that name; give a different new_path.`);
    if (isUnder(target, path)) throw new VaultError("invalid_argument", `Cannot move "${path}" into itself ("${target}"); pick a destination outside it.`);
    return this.locked(actor, [path, target], async () => {
      let files = 1;
      if (isFolder) files = this.assertFolderMovable(path, "rename");
      const caseOnly = target.toLowerCase() === path.toLowerCase();
      const targetExists = !caseOnly && (this.port.stat(target) !== null || this.port.isFolder(target));
      if (targetExists && !req.overwrite) {
        throw new VaultError("exists", `"${target}" already exists; choose another new_path, or set overwrite (with its etag as if_match) to move the existing one to the trash first.`);
      }
      if (targetExists && this.port.isFolder(target)) {
        throw new VaultError("exists", `"${target}" is an existing folder; rename will not replace a folder. Choose another new_path.`);
      }
      // Replacing the target is replacing a file (the trash may be "permanently delete"): its etag, as for write.
      const targetBefore = targetExists ? await etagOf(await this.port.readBinary(target)) : null;
      if (targetBefore !== null) requireEtag(target, req.if_match, targetBefore, "rename again");
      const what = isFolder ? `the folder "${path}" (${files} file${files === 1 ? "" : "s"})` : `"${path}"`;
      await this.ask(
        {
          action: "rename",
          path,
          target,
          summary: `Rename ${what} to "${target}"${targetExists ? `, replacing the existing "${target}" (moved to the trash)` : ""}; links to it are updated`,
        },
        actor,
      );
      // Which notes had the owner's uncommitted edits before the links in them are rewritten.
      const uncommittedBefore = (await this.deps.committer?.uncommittedPaths?.().catch(() => null)) ?? undefined;
      let replaced: string | undefined;
      if (targetBefore !== null) {
        // Compared again at the moment of the change (the owner may have edited it while asked).
        const now = this.port.stat(target) ? await etagOf(await this.port.readBinary(target)) : null;
        if (now !== targetBefore) {
          throw new VaultError("conflict", `"${target}" was changed by someone else while this rename was being made; nothing was changed. Read it again for its new etag and rename again with it.`);
        }
        replaced = await this.port.trash(target);
        await this.deps.committer?.trashed?.();
      }
      const oldBytes = file ? await this.port.readBinary(path) : null;
      const before = oldBytes ? await etagOf(oldBytes) : null;
      const started = Date.now();
      // The journal: what the rename will do, written before anything moves and removed once the
      // change is recorded, so a crash in between is finished at the next start.
      const id = this.journal.newId();
      let journaled = false;
      const beforeMove = async (plan: RenamePlan): Promise<void> => {
        try {
          await this.journal.begin({
            id,
            started: this.now().toISOString(),
            client: actor.client,
            tool: actor.tool ?? "rename",
            path,
            new_path: target,
            kind: isFolder ? "folder" : "file",
            files: [...plan.files],
            notes: [...plan.notes],
          });
          journaled = true;
        } catch (e) {
          this.deps.log?.("warn", `rename journal: could not write it (${e instanceof Error ? e.message : String(e)}); renaming "${path}" without one, so a crash in the middle would not be finished at the next start`);
        }
      };
      let res;
      let commit;
      let durationMs;
      let failed = true;
      try {
        res = await this.port.rename(path, target, onProgress, beforeMove);
        durationMs = Date.now() - started;
        const after = file ? await etagOf(await this.port.readBinary(res.path)) : null;
        commit = await this.record(
          actor,
          "rename",
          path,
          before,
          after,
          `links: ${res.linksUpdated} in ${res.notesUpdated} notes`,
          res.path,
          [...(targetExists ? [target] : []), ...(res.updatedPaths ?? [])],
          undefined,
          { ...(oldBytes ? { before: [{ path: res.path, from: path, content: oldBytes }] } : {}), ...(uncommittedBefore ? { uncommittedBefore } : {}) },
        );
        failed = false;
      } finally {
        // A rename that failed after its move (the adapter threw while updating links) is half done,
        // like one cut short by a crash: its journal stays, and the next start finishes it.
        const halfDone = failed && this.port.stat(path) === null && !this.port.isFolder(path) && (this.port.stat(target) !== null || this.port.isFolder(target));
        if (halfDone && journaled) {
          this.journal.leave(id);
          this.deps.log?.("warn", `renaming "${path}" to "${target}" failed after the move; links still to update are updated at the next start`);
        } else if (journaled) {
          await this.journal.end(id).catch((e: unknown) => this.deps.log?.("warn", `rename journal: could not clear it (${e instanceof Error ? e.message : String(e)})`));
        }
      }
      return {
        path,
        new_path: res.path,
        kind: isFolder ? "folder" : "file",
        links_updated: res.linksUpdated,
        notes_updated: res.notesUpdated,
        duration_ms: durationMs,
        ...(replaced ? { replaced_target_trashed_to: replaced } : {}),
        ...withCommit(commit),
      };
    });
  }

  async recoverInterruptedRenames(): Promise<RenameRecoveryReport | null> {
    const warn = (m: string) => this.deps.log?.("warn", m);
    let entries;
    try {
      entries = await this.journal.interrupted();
    } catch (e) {
      warn(`rename journal: could not read it (${e instanceof Error ? e.message : String(e)}); an interrupted rename, if any, is not finished`);
      return null;
    }
    if (entries.length === 0) return null;
    await this.port.ready();
    const renames: RecoveredRename[] = [];
    for (const e of entries) {
      let r: RecoveredRename;
      let touched: string[] = [];
      try {
        const done = await finishInterruptedRename(this.port, e, warn);
        const { updatedPaths, ...rest } = done;
        touched = updatedPaths;
        r = rest;
      } catch (err) {
        r = {
          path: e.path,
          new_path: e.new_path,
          interrupted_at: e.started,
          outcome: "dropped",
          moved_at_start: false,
          links_updated: 0,
          notes_updated: 0,
          reason: `could not finish it: ${err instanceof Error ? err.message : String(err)}`,
        };
      }
      renames.push(r);
      const what = `the rename of "${e.path}" to "${e.new_path}" (started ${e.started} by ${e.client}) was interrupted`;
      const detail =
        r.outcome === "finished"
          ? `interrupted, finished at start-up: ${r.moved_at_start ? "moved, " : ""}links: ${r.links_updated} in ${r.notes_updated} notes`
          : `interrupted, not finished at start-up: ${r.reason}`;
      this.deps.log?.(
        "warn",
        r.outcome === "finished"
          ? `${what}; finished it at start-up (${r.moved_at_start ? "made the move, " : ""}links updated: ${r.links_updated} in ${r.notes_updated} notes).`
          : `${what}; could not finish it: ${r.reason}.`,
      );
      const file = r.outcome === "finished" && this.port.stat(e.new_path) ? await etagOf(await this.port.readBinary(e.new_path)).catch(() => null) : null;
      if (r.outcome === "finished") await this.record({ client: e.client, tool: e.tool }, "rename", e.path, null, file, detail, e.new_path, touched);
      else await this.appendActivity({ time: this.now().toISOString(), client: e.client, tool: e.tool, path: e.path, etag_before: null, etag_after: null, new_path: e.new_path, detail });
      try {
        await this.journal.end(e.id);
      } catch (err) {
        warn(`rename journal: could not clear it (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    this.lastRecovery = { at: this.now().toISOString(), renames };
    return this.lastRecovery;
  }

  /** Newest first; entries about paths hidden now (the owner may have hidden a folder since) are left out. */
  async activity(limit: number): Promise<ActivityEntry[]> {
    const all = await this.log.recent(Math.max(limit * 4, 200));
    const visible = all.filter((e) => !this.policy.isHidden(e.path) && !(e.new_path !== undefined && this.policy.isHidden(e.new_path)));
    return visible.slice(0, limit);
  }

  remapCommits(map: ReadonlyMap<string, string>): Promise<number> {
    return this.log.remapCommits(map);
  }

  commitMade(tool: string, path: string, sha: string): Promise<boolean> {
    return this.log.commitMade(tool, path, sha);
  }

  // ------------------------------------------------------------------ helpers

  /** A client's path for something to create or move to: validated, not the root, not hidden or protected. */
  private targetPath(input: unknown, what = "path"): string {
    const path = normalizeVaultPath(input, what);
    if (path === "") throw new VaultError("invalid_path", `The ${what} is empty; give a vault-relative path such as "Folder/Note.md".`);
    return path;
  }

  private assertTargetWritable(path: string): void {
    if (this.policy.isHidden(path)) {
      throw new VaultError("forbidden", `"${path}" is not a place this server can write to; choose a path in a visible folder.`);
    }
    this.policy.assertWritable(path);
    for (let f = parentOf(path); f !== ""; f = parentOf(f)) {
      if (this.port.stat(f)) throw new VaultError("invalid_argument", `"${f}" is a file, so it cannot hold "${path}"; choose another folder.`);
    }
  }

  /** An existing visible, writable file; ".md" may be omitted for notes. */
  private existingFile(input: unknown): VaultFile {
    const path = normalizeVaultPath(input);
    if (path === "") throw new VaultError("invalid_path", `The path is empty; give a note's path such as "Folder/Note.md".`);
    if (this.policy.isHidden(path)) throw this.missing(path);
    const file = this.port.stat(path) ?? (isNotePath(path) ? null : this.port.stat(path + ".md"));
    if (!file) {
      if (this.port.isFolder(path)) throw new VaultError("invalid_argument", `"${path}" is a folder, not a file; give a note's path.`);
      throw this.missing(path);
    }
    this.policy.assertWritable(file.path);
    return file;
  }

  private existingNote(input: unknown): string {
    const file = this.existingFile(input);
    if (!isNotePath(file.path)) throw new VaultError("invalid_argument", `"${file.path}" is not a markdown note; only notes have frontmatter and tags.`);
    return file.path;
  }

  private missing(path: string): VaultError {
    const hint = !isNotePath(path) && this.port.stat(path + ".md") && !this.policy.isHidden(path + ".md") ? ` Did you mean "${path}.md"?` : "";
    return new VaultError("not_found", `No note, file or folder at "${path}".${hint} Paths are relative to the vault root and include the extension; use list_documents or find_notes to find it.`);
  }

  /** A folder may be moved or deleted only when the client can see and change everything in it. Returns its file count. */
  private assertFolderMovable(folder: string, verb: string): number {
    let files = 0;
    const blocked = (p: string) => this.policy.isProtected(p) || (this.policy.isHidden(p) && !p.slice(folder.length + 1).split("/").some((s) => s.startsWith(".")));
    for (const f of this.port.listFolders()) {
      if (f !== folder && isUnder(f, folder) && blocked(f)) throw this.folderBlocked(folder, verb);
    }
    for (const f of this.port.listFiles()) {
      if (!isUnder(f.path, folder)) continue;
      if (blocked(f.path)) throw this.folderBlocked(folder, verb);
      files++;
    }
    return files;
  }

  private folderBlocked(folder: string, verb: string): VaultError {
    return new VaultError("read_only", `"${folder}" holds files that cannot be changed through this server (protected or hidden); ${verb} its other contents one by one instead.`);
  }

  private checkEtag(path: string, ifMatch: string | undefined, current: string): void {
    if (ifMatch === undefined) return;
    if (bareEtag(ifMatch) !== bareEtag(current)) {
      throw new VaultError("conflict", `"${path}" changed since you read it (if_match ${ifMatch} is stale); nothing was changed. Read it again and retry with the new etag.`);
    }
  }

  /**
   * The rule for replacing an existing file's bytes (write's content_base64, fetch, upload links; a
   * note's text goes through `commitText`): the caller names what it replaces by its etag
   * (`if_match`), which must be that of the file's content now; the owner is asked (where
   * confirmations are on); then, at the moment of the write, the file is read again and must still
   * be what was checked. Call under the path's lock. Returns the replaced content's etag.
   */
  private async replaceBytes(path: string, next: Uint8Array, ifMatch: string | undefined, retry: string, summary: string, actor: Actor): Promise<{ before: string; old: Uint8Array }> {
    const old = await this.port.readBinary(path);
    const before = await etagOf(old);
    requireEtag(path, ifMatch, before, retry);
    await this.ask({ action: "overwrite", path, summary }, actor);
    // Nothing but this read lies between the check and the write (the port has no compare-and-swap
    // for bytes; a note's text is compared inside the port's atomic process).
    const now = this.port.stat(path) ? await this.port.readBinary(path) : null;
    if (now === null || (await etagOf(now)) !== before) {
      throw new VaultError("conflict", `"${path}" was changed by someone else while this change was being made; nothing was written. Read it again for its new etag and ${retry} with it.`);
    }
    await this.port.writeBinary(path, next);
    return { before, old };
  }

  /** Writes through the port, failing with `conflict` when someone changed the file since we read it. */
  private async commitText(path: string, expected: string, next: string): Promise<void> {
    await this.port.process(path, (current) => {
      if (current !== expected) {
        throw new VaultError("conflict", `"${path}" was changed by someone else while this change was being made; nothing was changed. Read it again and retry.`);
      }
      return next;
    });
  }

  /** Runs `fn` holding the paths' locks, unless the call was cancelled while it waited for them. */
  private locked<T>(actor: Actor, paths: string[], fn: () => Promise<T>): Promise<T> {
    return this.locks.run(paths, () => {
      assertWanted(actor);
      return fn();
    });
  }

  private async ask(req: ConfirmRequest, actor: Actor): Promise<void> {
    assertWanted(actor);
    const yes = await this.confirmer.confirm(req, actor.signal);
    // Cancelled while the owner was being asked: the client is no longer waiting for this change.
    assertWanted(actor);
    if (!yes) {
      throw new VaultError("declined", `The vault owner declined this change (${req.summary}); nothing was changed. Do not retry it unless the owner asks you to.`);
    }
  }

  /**
   * After a change: commits it when the owner asked for commits (only the paths it touched), then
   * appends the activity log entry (with the commit's sha). Returns the commit's outcome.
   */
  private async record(
    actor: Actor,
    tool: string,
    path: string,
    before: string | null,
    after: string | null,
    detail?: string,
    newPath?: string,
    alsoTouched: string[] = [],
    /** The file's content before the change, when known (a commit then holds only this change). */
    beforeContent?: string | Uint8Array,
    extra: Pick<CommittedChange, "before" | "uncommittedBefore"> = {},
  ): Promise<CommitOutcome | undefined> {
    const toolName = actor.tool ?? tool;
    const commit =
      (await this.deps.committer?.commit({
        tool: toolName,
        client: actor.client,
        path,
        ...(newPath !== undefined ? { newPath } : {}),
        paths: [path, ...(newPath !== undefined ? [newPath] : []), ...alsoTouched],
        created: newPath !== undefined ? [newPath] : before === null && after !== null ? [path] : [],
        ...(beforeContent !== undefined ? { before: [{ path, content: beforeContent }] } : newPath === undefined && before === null && after !== null ? { before: [{ path, content: null }] } : {}),
        ...extra,
      })) ?? undefined;
    const entry: ActivityEntry = {
      time: this.now().toISOString(),
      client: actor.client,
      tool: toolName,
      path,
      etag_before: before,
      etag_after: after,
      ...(newPath !== undefined ? { new_path: newPath } : {}),
      ...(detail ? { detail } : {}),
      ...(commit?.sha ? { commit: commit.sha } : {}),
      ...(commit?.pending ? { commit_pending: true } : {}),
    };
    await this.appendActivity(entry);
    return commit;
  }

  private async appendActivity(entry: ActivityEntry): Promise<void> {
    try {
      await this.log.append(entry);
    } catch (e) {
      this.deps.log?.("warn", `activity log: could not append (${e instanceof Error ? e.message : String(e)})`);
    }
  }
}

/** How a `write` asks again. */
const WRITE_RETRY = "write again";

/**
 * The one rule for every tool that replaces an existing file: overwriting needs the etag of what
 * it replaces. Missing or stale: a `conflict` that says how to get the etag and retry.
 */
function requireEtag(path: string, ifMatch: string | undefined, current: string, retry: string, alternatives = ""): void {
  if (ifMatch === undefined) {
    throw new VaultError(
      "conflict",
      `"${path}" already exists; replacing it needs the etag of what you replace: read it (read gives its etag) and ${retry} with if_match set to that etag${alternatives}. Nothing was written.`,
    );
  }
  if (bareEtag(ifMatch) !== bareEtag(current)) {
    throw new VaultError("conflict", `"${path}" changed since you read it (if_match ${ifMatch} is stale); nothing was written. Read it again to see the change, and ${retry} with the new etag if it should still be replaced.`);
  }
}

function withCommit(commit: CommitOutcome | undefined): { commit?: CommitOutcome } {
  return commit ? { commit } : {};
}

function keepBlock(working: string, bodyOffset: number): string {
  return bodyOffset <= working.length ? working.slice(0, bodyOffset) : working + "\n";
}

function bareEtag(e: string): string {
  return e.trim().replace(/^W\//, "").replace(/^"|"$/g, "");
}

function describeDiff(diff: string): string {
  let plus = 0;
  let minus = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+")) plus++;
    else if (line.startsWith("-")) minus++;
  }
  return `${minus} line${minus === 1 ? "" : "s"} removed, ${plus} added`;
}

/** `#Tag` → `Tag`; refuses what Obsidian would not take as a tag. */
function cleanTag(raw: string): string {
  const t = raw.trim().replace(/^#+/, "");
  if (t === "" || /[\s,#]/.test(t) || /^\d+$/.test(t)) {
    throw new VaultError("invalid_argument", `"${raw}" is not a valid tag; tags have no spaces, commas or "#" inside and are not only digits (e.g. "project/alpha").`);
  }
  return t;
}

function fmTagList(fm: Record<string, unknown>): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of frontmatterTags(fm)) {
    const bare = t.slice(1);
    if (seen.has(bare.toLowerCase())) continue;
    seen.add(bare.toLowerCase());
    out.push(bare);
  }
  return out;
}

function inlineTags(port: VaultPort, path: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const t of port.getMetadata(path)?.tags ?? []) {
    const bare = t.tag.replace(/^#/, "");
    if (seen.has(bare.toLowerCase())) continue;
    seen.add(bare.toLowerCase());
    out.push(bare);
  }
  return out;
}
