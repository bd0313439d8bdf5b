import { VaultError } from "../errors";
import { isUnder, normalizeVaultPath } from "../paths";
import { gitBlobId } from "../hash";
import type { AccessPolicy } from "../policy";
import type { StateStore } from "../state";
import type { VaultPort } from "../vault";
import type { ChangeCommitter, CommitOutcome, CommittedChange } from "../write/commit";
import { cleanGitMessage, Git, GitCommandError, GitLockedError } from "./git";
import { HistoryIndex } from "./history";
import { parsePathList, parseStatus, statusEntryKind, type RepoChange, type RepoCommit } from "./parse";
import { GitMissingError, GIT_NETWORK_TIMEOUT_MS, type GitRunner } from "./runner";
import { commitOwnChange, entriesOf, hashContent, hashFile, headAndIndexBlobs, PendingCommits, type ChangeBlobs, type PendingCommit } from "./own-commit";
import { syncWithRemote, type SyncHost, type SyncRequest, type SyncResult } from "./sync";

/** A commit as the tools show it (a folder's or the vault's history, recent changes). */
export interface HistoryCommit {
  sha: string;
  /** Author time, ISO 8601 (seconds). */
  time: string;
  author: string;
  /** The message's first line (at most `MAX_MESSAGE_CHARS`). */
  message: string;
  /** The first visible paths it changed (at most `MAX_LISTED_CHANGES`; those in the folder asked about first), vault-relative. */
  changes: { status: string; path: string; from?: string }[];
  /** How many visible paths it changed in all. */
  changes_total: number;
}

/** A commit in one file's history: the file's own change, and how many other files the commit changed. */
export interface FileHistoryCommit {
  sha: string;
  time: string;
  author: string;
  message: string;
  /** `path` and `from` only when the file had another name in this commit. */
  change: { status: string; path?: string; from?: string; added?: number; removed?: number };
  other_files: number;
}

export interface HistoryRequest {
  path?: string;
  since?: string;
  until?: string;
  limit?: number;
}

export interface HistoryResult {
  path: string;
  target: "file" | "folder" | "vault";
  commits: HistoryCommit[] | FileHistoryCommit[];
  /** More commits matched than `limit`. */
  has_more: boolean;
  /** The names the file had before renames, newest first (a file's history only). */
  previous_paths?: string[];
  since?: string;
  until?: string;
}

export interface DiffRequest {
  path: string;
  since_sha?: string;
  since_timestamp?: string;
  per_commit?: boolean;
  limit?: number;
  offset?: number;
  max_chars?: number;
}

export interface DiffResult {
  path: string;
  /** The commit compared with the working tree (not for per_commit). */
  since_sha?: string;
  /** The file's name in that commit, when it was renamed since. */
  path_then?: string;
  /** One diff against the working tree, or one per commit (newest first). */
  diffs: { sha?: string; short_sha?: string; time?: string; message?: string; diff: string; binary?: { size_before: number | null; size_after: number | null } }[];
  /** Characters of diff text left out (from `next_offset` on). */
  truncated: boolean;
  next_offset?: number;
  total_chars: number;
}

export interface RecentRequest {
  since?: string;
  until?: string;
  limit?: number;
  folder?: string;
  include_uncommitted?: boolean;
}

export interface RecentResult {
  commits: HistoryCommit[];
  has_more: boolean;
  uncommitted: { status: string; path: string; from?: string; staged: boolean }[];
  uncommitted_total: number;
  since?: string;
  until?: string;
}

export interface GitStatus {
  git_backed: true;
  branch: string | null;
  head: string | null;
  upstream: string | null;
  remotes: string[];
  /** No uncommitted changes to the vault's visible files. */
  clean: boolean;
  commit_changes: boolean;
  push_after_commit: boolean;
  last_push_error?: string;
  /** Changes made through the server whose commit failed (committed with the next commit or by git_sync). */
  pending_commits?: { tool: string; path: string; time: string; error: string }[];
}

export interface GitOptions {
  /** Commit each change made through the server ("Commit changes made through the server"; headless `--git-commit`). */
  commitChanges: boolean;
  /** Push after each such commit. */
  pushAfterCommit: boolean;
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  now?: () => Date;
  /** The git folder's files (`info/exclude`: the vault's `.trash` stays out of the owner's git status). */
  files?: GitFiles;
}

/** Reads and appends files of the repository's git folder, at a path git printed relative to the vault folder; the host gives it. */
export interface GitFiles {
  read(rel: string): Promise<string | null>;
  append(rel: string, text: string): Promise<void>;
}

export const MAX_LISTED_CHANGES = 4;
export const MAX_MESSAGE_CHARS = 120;
/** Commit ids in answers: 12 hex digits (unambiguous in any vault's repository; get_diff takes 4 to 40). */
export const SHA_CHARS = 12;
/** get_recent_changes without since/until: this window (a vault committed every few minutes has thousands of commits). */
export const DEFAULT_RECENT_WINDOW = "7 days ago";
export const DEFAULT_DIFF_CHARS = 40_000;
const MAX_UNCOMMITTED = 500;

/** What `detectGitRepo` found. */
export type GitDetection =
  | { kind: "repo"; git: Git; prefix: string; identity: boolean }
  | { kind: "none"; reason: "not_a_repository" | "git_missing" | "no_tracked_files" | "error"; message: string };

/**
 * Is the vault git-backed? Its folder must be inside a work tree, and the repository must be the
 * vault's own (its top is the vault folder) or track files in the vault: a home folder kept in git
 * for dotfiles does not make every vault under it "git-backed".
 */
export async function detectGitRepo(runner: GitRunner): Promise<GitDetection> {
  const git = new Git(runner);
  try {
    const r = await git.raw(["rev-parse", "--is-inside-work-tree", "--show-prefix"], { env: { GIT_OPTIONAL_LOCKS: "0" } });
    // The runner refused to start git (a configuration it cannot make safe, a git too old): say why.
    if (r.code !== 0 && /cannot be switched off safely|too old to be run safely|could not read the repository's configuration/.test(r.stderr)) return { kind: "none", reason: "error", message: cleanGitMessage(r.stderr) };
    if (r.code !== 0) return { kind: "none", reason: "not_a_repository", message: "The vault is not inside a git repository." };
    const [inside, prefixLine = ""] = r.stdout.split("\n");
    if (inside.trim() !== "true") return { kind: "none", reason: "not_a_repository", message: "The vault folder is not in a git work tree." };
    const prefix = prefixLine.trim();
    if (prefix) {
      let tracked = false;
      await git.raw(["ls-files", "-z", "--", "."], { onStdout: (c) => (c.length > 0 ? ((tracked = true), false) : true), env: { GIT_OPTIONAL_LOCKS: "0" } });
      if (!tracked) return { kind: "none", reason: "no_tracked_files", message: "The vault is inside a git repository that tracks none of its files." };
    }
    const email = await git.raw(["config", "--get", "user.email"]);
    return { kind: "repo", git, prefix, identity: email.code === 0 && email.stdout.trim() !== "" };
  } catch (e) {
    if (e instanceof GitMissingError) return { kind: "none", reason: "git_missing", message: e.message };
    return { kind: "none", reason: "error", message: e instanceof Error ? e.message : String(e) };
  }
}

/** Git-backed vaults: history, diffs, recent changes, a commit per change, sync with the remote. */
export class GitService implements ChangeCommitter, SyncHost {
  readonly history: HistoryIndex;
  private lastPushError: string | undefined;
  private readonly listeners = new Set<(e: { pushError?: string; committed?: string }) => void>();
  private statusCache: { at: number; value: GitStatus } | null = null;

  constructor(
    readonly git: Git,
    /** The vault folder inside the repository: "" or "sub/dir/". */
    readonly prefix: string,
    private readonly deps: { port: VaultPort; policy: AccessPolicy; identity: boolean; store?: StateStore },
    readonly options: GitOptions,
  ) {
    this.history = new HistoryIndex(git);
    this.pending = new PendingCommits(deps.store);
  }

  private readonly pending: PendingCommits;

  /** Builds the history index in the background. */
  start(): void {
    this.history.refresh().catch((e) => this.options.log?.("warn", `git history: ${e instanceof Error ? e.message : String(e)}`));
  }

  /** Ends the git helper process, if any. */
  close(): void {
    this.git.runner.close?.();
  }

  /** Hears commits and push failures (the status bar). */
  onEvent(listener: (e: { pushError?: string; committed?: string }) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ------------------------------------------------------------------ paths

  /** A repository path as a vault path, or null when it is outside the vault. */
  fromRepo(repoPath: string): string | null {
    if (!this.prefix) return repoPath;
    return repoPath.startsWith(this.prefix) ? repoPath.slice(this.prefix.length) : null;
  }

  toRepo(vaultPath: string): string {
    return vaultPath ? this.prefix + vaultPath : this.prefix.replace(/\/$/, "");
  }

  /** A repository path a client may see: in the vault and not hidden. */
  visible(repoPath: string): string | null {
    const v = this.fromRepo(repoPath);
    return v !== null && v !== "" && !this.deps.policy.isHidden(v) ? v : null;
  }

  // ------------------------------------------------------------------ status

  async status(): Promise<GitStatus> {
    const now = Date.now();
    if (this.statusCache && now - this.statusCache.at < 2000) return { ...this.statusCache.value, ...(this.lastPushError ? { last_push_error: this.lastPushError } : {}) };
    const [branch, head, upstream, remotes, dirty] = await Promise.all([
      this.currentBranch(),
      this.git.headSha(),
      this.upstream(),
      this.git.out(["remote"]).then((o) => o.split("\n").map((s) => s.trim()).filter(Boolean), () => []),
      this.uncommitted(1),
    ]);
    const pending = await this.pendingCommits().catch(() => []);
    const value: GitStatus = {
      git_backed: true,
      branch,
      head,
      upstream: upstream ? `${upstream.remote}/${upstream.branch}` : null,
      remotes,
      clean: dirty.total === 0,
      commit_changes: this.options.commitChanges,
      push_after_commit: this.options.pushAfterCommit,
      ...(pending.length ? { pending_commits: pending } : {}),
    };
    this.statusCache = { at: now, value };
    return { ...value, ...(this.lastPushError ? { last_push_error: this.lastPushError } : {}) };
  }

  async currentBranch(): Promise<string | null> {
    const r = await this.git.raw(["symbolic-ref", "--short", "-q", "HEAD"], { env: { GIT_OPTIONAL_LOCKS: "0" } });
    return r.code === 0 ? r.stdout.trim() || null : null;
  }

  /** The current branch's upstream (remote and branch there), or the same-named branch on the only/`origin` remote. */
  async upstream(): Promise<{ remote: string; branch: string; configured: boolean } | null> {
    const branch = await this.currentBranch();
    if (!branch) return null;
    const remote = (await this.git.raw(["config", "--get", `branch.${branch}.remote`])).stdout.trim();
    const merge = (await this.git.raw(["config", "--get", `branch.${branch}.merge`])).stdout.trim();
    if (remote && remote !== "." && merge.startsWith("refs/heads/")) return { remote, branch: merge.slice("refs/heads/".length), configured: true };
    const remotes = (await this.git.raw(["remote"])).stdout.split("\n").map((s) => s.trim()).filter(Boolean);
    const pick = remotes.includes("origin") ? "origin" : remotes.length === 1 ? remotes[0] : null;
    return pick ? { remote: pick, branch, configured: false } : null;
  }

  // ------------------------------------------------------------------ dates

  /**
   * A client's `since`/`until`: an ISO date or time, or a relative date ("2 weeks ago", "yesterday").
   * Git reads nearly any text as some date without a word ("banana" is now, "2026-13-45" a day in
   * 2027), so only these forms are accepted; the relative ones are then read by git itself.
   * Returns seconds since the epoch.
   */
  async parseWhen(expr: string, what: string): Promise<number> {
    const s = expr.trim().toLowerCase();
    const refuse = () =>
      new VaultError(
        "invalid_argument",
        `${what} "${expr.slice(0, 100)}" is not a date: give an ISO date or time ("2026-11-24", "2026-11-24T15:00", "2026-11-24T15:00:00Z", "2026-11-24T15:00:00+02:00") or a relative date ("3 days ago", "2 weeks ago", "6 months ago", "1 year ago", "yesterday", "today", "now").`,
      );
    const iso = /^(\d{4})-(\d{2})-(\d{2})(?:[t ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(z|[+-]\d{2}:?\d{2})?)?$/.exec(s);
    if (iso) {
      const [, y, mo, d, h = "0", mi = "0", sec = "0"] = iso;
      const days = new Date(Date.UTC(Number(y), Number(mo), 0)).getUTCDate();
      if (Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > days || Number(h) > 23 || Number(mi) > 59 || Number(sec) > 59) throw refuse();
      const ms = Date.parse(s.length === 10 ? `${s}T00:00:00` : s.replace(" ", "T").toUpperCase());
      if (!Number.isFinite(ms)) throw refuse();
      return Math.floor(ms / 1000);
    }
    if (!/^(now|today|yesterday|(\d{1,4}|an?|one) (second|minute|hour|day|week|month|year)s? ago)$/.test(s)) throw refuse();
    const out = await this.git.out(["rev-parse", `--since=${s}`]).catch(() => "");
    const m = /--max-age=(\d+)/.exec(out);
    if (!m) throw refuse();
    // git prints a time before 1970 as an unsigned 64-bit number.
    let n = BigInt(m[1]);
    if (n >= 1n << 63n) n -= 1n << 64n;
    return Number(n);
  }

  private async window(since?: string, until?: string): Promise<{ from: number; to: number }> {
    const from = since !== undefined ? await this.parseWhen(since, "since") : -Infinity;
    const to = until !== undefined ? await this.parseWhen(until, "until") : Infinity;
    return { from, to };
  }

  // ------------------------------------------------------------------ history

  private shown(c: RepoCommit, under?: string): HistoryCommit | null {
    const inside: HistoryCommit["changes"] = [];
    const outside: HistoryCommit["changes"] = [];
    let total = 0;
    let touchesTarget = under === undefined;
    for (const ch of c.changes) {
      const path = this.visible(ch.path);
      const from = ch.from !== undefined ? this.visible(ch.from) : null;
      if (!path && !from) continue;
      const here = under === undefined || under === "" || (path !== null && isUnder(path, under)) || (from !== null && isUnder(from, under));
      if (here) touchesTarget = true;
      total++;
      // The folder's own files first, then others: at most MAX_LISTED_CHANGES in all.
      const list = here ? inside : outside;
      if (inside.length >= MAX_LISTED_CHANGES || (!here && inside.length + outside.length >= MAX_LISTED_CHANGES)) continue;
      if (path && ch.from !== undefined) list.push(from ? { status: ch.status, path, from } : { status: "added", path });
      else if (path) list.push({ status: ch.status, path });
      else if (from) list.push({ status: "deleted", path: from });
    }
    if (total === 0 || !touchesTarget) return null;
    return { ...commitHead(c), changes: [...inside, ...outside].slice(0, MAX_LISTED_CHANGES), changes_total: total };
  }

  /** One file's change in a commit (under the name `name` it had then) and the number of other visible files. */
  private fileCommit(c: RepoCommit, name: string, now: string): FileHistoryCommit {
    let own: RepoChange | undefined;
    let others = 0;
    for (const ch of c.changes) {
      if (!own && (ch.path === name || ch.from === name)) {
        own = ch;
        continue;
      }
      if (this.visible(ch.path) !== null || (ch.from !== undefined && this.visible(ch.from) !== null)) others++;
    }
    const path = own ? this.fromRepo(own.path) : null;
    const from = own?.from !== undefined ? this.visible(own.from) : null;
    const change: FileHistoryCommit["change"] = { status: own ? (own.from !== undefined && !from ? "added" : own.status) : "modified" };
    if (path !== null && path !== now) change.path = path;
    if (from !== null && own?.status === "renamed") change.from = from;
    return { ...commitHead(c), change, other_files: others };
  }

  /** Lines added and removed in each commit's change of the file (one `git log --numstat` for all of them; binary files have none). */
  private async addLineCounts(commits: FileHistoryCommit[], full: Map<FileHistoryCommit, string>, names: string[]): Promise<void> {
    if (!commits.length) return;
    const out = await this.git
      .out(["log", "--no-walk=unsorted", "-M", "--numstat", "-z", "--format=%x1e%H", ...commits.map((c) => full.get(c) ?? c.sha), "--", ...names.map((n) => this.relToCwd(n))], { timeoutMs: 60_000 })
      .catch(() => "");
    const bySha = new Map<string, { added: number; removed: number }>();
    for (const rec of out.split("\x1e")) {
      const m = /^([0-9a-f]{40,64})[\0\n]+(\d+)\t(\d+)\t/.exec(rec);
      if (m) bySha.set(m[1], { added: Number(m[2]), removed: Number(m[3]) });
    }
    for (const c of commits) {
      const n = bySha.get(full.get(c) ?? c.sha);
      if (n) Object.assign(c.change, n);
    }
  }

  async getHistory(req: HistoryRequest): Promise<HistoryResult> {
    const path = normalizeVaultPath(req.path ?? "");
    if (path && this.deps.policy.isHidden(path)) throw notInHistory(path);
    const limit = Math.max(1, Math.min(req.limit ?? 20, 500));
    const { from, to } = await this.window(req.since, req.until);
    await this.history.refresh();
    const inWindow = (c: RepoCommit) => c.commitTime >= from && c.commitTime <= to;
    let commits: HistoryCommit[] | FileHistoryCommit[] = [];
    let hasMore = false;
    const repoPath = this.toRepo(path);
    const isFile = path !== "" && (this.deps.port.stat(path) !== null || (!this.deps.port.isFolder(path) && this.history.hasPath(repoPath)));
    const previous: string[] = [];
    if (isFile) {
      const own: FileHistoryCommit[] = [];
      const full = new Map<FileHistoryCommit, string>();
      const names = new Set<string>();
      this.history.follow(
        repoPath,
        (older) => this.visible(older) !== null,
        (c, name) => {
          const v = this.fromRepo(name);
          if (v !== null && v !== path && previous[previous.length - 1] !== v) previous.push(v);
          // Commit times are not strictly ordered (rebases, merges): skip, never stop, outside the window.
          if (!inWindow(c)) return;
          if (own.length >= limit) {
            hasMore = true;
            return false;
          }
          names.add(name);
          const shown = this.fileCommit(c, name, path);
          full.set(shown, c.sha);
          own.push(shown);
        },
      );
      if (own.length === 0 && !this.deps.port.stat(path) && !this.history.hasPath(repoPath)) throw notInHistory(path);
      await this.addLineCounts(own, full, [...names]);
      commits = own;
    } else {
      if (path && !this.deps.port.isFolder(path) && !this.history.hasPathUnder(repoPath)) throw notInHistory(path);
      ({ commits, hasMore } = await this.collect(path, limit, inWindow));
    }
    return {
      path,
      target: isFile ? "file" : path ? "folder" : "vault",
      commits,
      has_more: hasMore,
      ...(isFile && previous.length ? { previous_paths: previous } : {}),
      ...(from !== -Infinity ? { since: iso(from) } : {}),
      ...(to !== Infinity ? { until: iso(to) } : {}),
    };
  }

  /** Commits newest first that pass `inWindow` and changed a visible path under `under` ("" = the vault), at most `limit`. */
  private async collect(under: string, limit: number, inWindow: (c: RepoCommit) => boolean): Promise<{ commits: HistoryCommit[]; hasMore: boolean }> {
    const commits: HistoryCommit[] = [];
    let hasMore = false;
    await this.history.walk((c) => {
      if (!inWindow(c)) return;
      const shown = this.shown(c, under);
      if (!shown) return;
      if (commits.length >= limit) {
        hasMore = true;
        return false;
      }
      commits.push(shown);
    });
    return { commits, hasMore };
  }

  // ------------------------------------------------------------------ recent changes

  async recentChanges(req: RecentRequest): Promise<RecentResult> {
    const folder = normalizeVaultPath(req.folder ?? "", "folder");
    if (folder && this.deps.policy.isHidden(folder)) throw notInHistory(folder);
    const limit = Math.max(1, Math.min(req.limit ?? 10, 200));
    const { from, to } = await this.window(req.since === undefined && req.until === undefined ? DEFAULT_RECENT_WINDOW : req.since, req.until);
    const [, dirty] = await Promise.all([this.history.refresh(), req.include_uncommitted === false ? null : this.uncommitted(MAX_UNCOMMITTED, folder)]);
    const { commits, hasMore } = await this.collect(folder, limit, (c) => c.commitTime >= from && c.commitTime <= to);
    return {
      commits,
      has_more: hasMore,
      uncommitted: dirty?.entries ?? [],
      uncommitted_total: dirty?.total ?? 0,
      ...(from !== -Infinity ? { since: iso(from) } : {}),
      ...(to !== Infinity ? { until: iso(to) } : {}),
    };
  }

  /** Uncommitted changes to visible files of the vault (or of `folder`). */
  async uncommitted(max: number, folder = ""): Promise<{ entries: RecentResult["uncommitted"]; total: number }> {
    const out = await this.git.out(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", folder || "."]);
    const entries: RecentResult["uncommitted"] = [];
    let total = 0;
    for (const e of parseStatus(out)) {
      const path = this.visible(e.path);
      if (!path || (folder && !isUnder(path, folder))) continue;
      total++;
      if (entries.length >= max) continue;
      const from = e.from !== undefined ? this.visible(e.from) : null;
      entries.push({ status: statusEntryKind(e.code), path, ...(from ? { from } : {}), staged: e.code[0] !== " " && e.code[0] !== "?" });
    }
    return { entries, total };
  }

  // ------------------------------------------------------------------ diffs

  async getDiff(req: DiffRequest): Promise<DiffResult> {
    const path = normalizeVaultPath(req.path);
    if (!path) throw new VaultError("invalid_argument", "get_diff needs the path of a note or file.");
    if (this.deps.policy.isHidden(path)) throw notInHistory(path);
    const given = [req.since_sha !== undefined, req.since_timestamp !== undefined, req.per_commit === true].filter(Boolean).length;
    if (given !== 1) {
      throw new VaultError("invalid_argument", "Give exactly one of since_sha (a commit, from get_history), since_timestamp (a date) or per_commit: true.");
    }
    const maxChars = Math.max(1000, Math.min(req.max_chars ?? DEFAULT_DIFF_CHARS, 200_000));
    const offset = Math.max(0, req.offset ?? 0);
    await this.history.refresh();
    const repoPath = this.toRepo(path);
    // The names the file had, newest first, each with the position of the rename that gave it that name.
    const names: { name: string; renamedAt: number }[] = [];
    const touching: { c: RepoCommit; name: string }[] = [];
    const limit = Math.max(1, Math.min(req.limit ?? 10, 50));
    this.history.follow(
      repoPath,
      (older) => this.visible(older) !== null,
      (c, name, change) => {
        if (names.length === 0 || names[names.length - 1].name !== name) names.push({ name, renamedAt: -1 });
        if (change?.status === "renamed" && change.path === name) names[names.length - 1].renamedAt = this.history.positionOf(c.sha);
        if (touching.length < limit) touching.push({ c, name });
      },
    );
    if (!this.deps.port.stat(path) && touching.length === 0) throw notInHistory(path);

    if (req.per_commit) {
      const shown = touching.slice(0, limit);
      const pieces: DiffResult["diffs"] = [];
      if (shown.length) {
        const pathspecs = [...new Set(names.map((n) => n.name))].map((n) => this.relToCwd(n));
        const out = await this.git.out(["show", "--no-ext-diff", "--no-textconv", "-M", "--no-color", "--format=%x1e%H", "-p", ...shown.map((t) => t.c.sha), "--", ...pathspecs], { timeoutMs: 60_000 });
        const bySha = new Map<string, string>();
        for (const rec of out.split("\x1e")) {
          const nl = rec.indexOf("\n");
          if (nl < 0) continue;
          bySha.set(rec.slice(0, nl).trim(), rec.slice(nl + 1).replace(/^\n+/, ""));
        }
        for (const t of shown) {
          const diff = bySha.get(t.c.sha) ?? "";
          pieces.push({
            sha: t.c.sha,
            short_sha: t.c.sha.slice(0, 7),
            time: new Date(t.c.authorTime * 1000).toISOString(),
            message: t.c.message.split("\n")[0],
            ...(await this.binaryOr(diff, `${t.c.sha}^`, t.c.sha, t.name)),
          });
        }
      }
      const r = capDiffs(pieces, offset, maxChars);
      return { path, ...r };
    }

    let sha: string;
    if (req.since_sha !== undefined) {
      const s = req.since_sha.trim();
      if (!/^[0-9a-fA-F]{4,64}$/.test(s)) throw new VaultError("invalid_argument", `since_sha "${req.since_sha}" is not a commit id: give 4 to 40 hex digits, e.g. a short_sha from get_history.`);
      const r = await this.git.raw(["rev-parse", "-q", "--verify", `${s.toLowerCase()}^{commit}`]);
      if (r.code !== 0) throw new VaultError("not_found", `No commit "${s}" in this repository (or the prefix is ambiguous); take a sha from get_history.`);
      sha = r.stdout.trim();
    } else {
      const when = await this.parseWhen(req.since_timestamp ?? "", "since_timestamp");
      const r = await this.git.out(["rev-list", "-1", `--before=${when}`, "HEAD", "--"]).catch(() => "");
      if (!r.trim()) throw new VaultError("not_found", `No commit at or before ${iso(when)}: the history starts later. Use get_history to see the first commit.`);
      sha = r.trim();
    }
    // The file's name in that commit: the newest name given to it at or before that commit.
    const pos = this.history.positionOf(sha);
    const nameThen = pos < 0 ? repoPath : (names.find((n) => n.renamedAt <= pos)?.name ?? repoPath);
    const specs = nameThen === repoPath ? [this.relToCwd(repoPath)] : [this.relToCwd(nameThen), this.relToCwd(repoPath)];
    const diff = await this.git.out(["diff", "--no-ext-diff", "--no-textconv", "-M", "--no-color", sha, "--", ...specs], { timeoutMs: 60_000 });
    const piece = { ...(await this.binaryOr(diff, sha, null, nameThen, repoPath)) };
    const r = capDiffs([piece], offset, maxChars);
    const thenVault = this.fromRepo(nameThen);
    return { path, since_sha: sha, ...(thenVault && thenVault !== path ? { path_then: thenVault } : {}), ...r };
  }

  /** Cwd-relative pathspec of a repository path (git runs in the vault folder). */
  private relToCwd(repoPath: string): string {
    // Only visible (so in-vault) names are ever followed.
    return this.fromRepo(repoPath) ?? repoPath;
  }

  /** A binary file's diff becomes its sizes. */
  private async binaryOr(diff: string, before: string, after: string | null, nameThen: string, nameNow = nameThen): Promise<{ diff: string; binary?: { size_before: number | null; size_after: number | null } }> {
    if (!/^Binary files .* differ$/m.test(diff)) return { diff: this.vaultRelativeDiff(diff) };
    const size = async (rev: string, p: string) => {
      const r = await this.git.raw(["cat-file", "-s", `${rev}:${p}`]);
      return r.code === 0 ? Number(r.stdout.trim()) : null;
    };
    const sizeBefore = await size(before, nameThen);
    let sizeAfter: number | null;
    if (after) sizeAfter = await size(after, nameNow);
    else {
      const v = this.fromRepo(nameNow);
      sizeAfter = v !== null ? (this.deps.port.stat(v)?.size ?? null) : null;
    }
    const what = `Binary file: ${sizeBefore ?? "absent"} → ${sizeAfter ?? "absent"} bytes`;
    return { diff: what, binary: { size_before: sizeBefore, size_after: sizeAfter } };
  }

  /** Diff headers name repository paths; shown vault-relative. */
  private vaultRelativeDiff(diff: string): string {
    if (!this.prefix) return diff;
    const p = escapeRe(this.prefix);
    return diff
      .replace(new RegExp(`^diff --git a/${p}(.*) b/${p}(.*)$`, "gm"), "diff --git a/$1 b/$2")
      .replace(new RegExp(`^--- a/${p}`, "gm"), "--- a/")
      .replace(new RegExp(`^\\+\\+\\+ b/${p}`, "gm"), "+++ b/")
      .replace(new RegExp(`^(rename (?:from|to)|copy (?:from|to)) ${p}`, "gm"), "$1 ");
  }

  // ------------------------------------------------------------------ a commit per change

  /**
   * Commits one change made through the server: only the paths it touched (the owner's other
   * uncommitted work stays uncommitted, staged or not), with a message naming the tool, the path
   * and the client; then pushes when asked. Never throws: the outcome says what happened.
   */
  commit(change: CommittedChange): Promise<CommitOutcome | null> {
    if (!this.options.commitChanges) return Promise.resolve(null);
    return this.git.exclusive(async () => {
      const earlier = await this.retryPending();
      const outcome = await this.commitNow(change);
      if (earlier > 0) outcome.note = [outcome.note, `${earlier} earlier change(s) whose commit had failed were committed first.`].filter(Boolean).join(" ");
      return outcome;
    });
  }

  /** Changes whose commit failed, oldest first (stats lists them). */
  async pendingCommits(): Promise<{ tool: string; path: string; time: string; error: string }[]> {
    return (await this.pending.all()).map((p) => ({ tool: p.change.tool, path: p.change.path, time: p.time, error: p.error }));
  }

  /**
   * Commits the changes whose commit failed earlier, oldest first, each with its own message and
   * only its own change; the ones that fail again stay pending. Returns how many were committed.
   * Runs in the repository queue (the caller's `exclusive`).
   */
  async retryPending(): Promise<number> {
    const list = await this.pending.all();
    if (list.length === 0) return 0;
    const left: PendingCommit[] = [];
    let done = 0;
    for (const p of list) {
      if (left.length) {
        left.push(p);
        continue;
      }
      try {
        const message = commitMessage(p.change);
        if (p.blobs) {
          const r = await commitOwnChange(this.git, this, p.blobs, message, this.identityArgs());
          if (r.kind === "committed") {
            done++;
            this.emit({ committed: r.sha });
            await this.pendingListener?.(p.change.tool, p.change.path, r.sha).catch(() => undefined);
          }
        } else {
          const r = await this.commitPaths(p.change, message);
          if (r.error) throw new Error(r.error);
          if (r.committed) {
            done++;
            if (r.sha) await this.pendingListener?.(p.change.tool, p.change.path, r.sha).catch(() => undefined);
          }
        }
      } catch (e) {
        left.push({ ...p, error: errorText(e) });
      }
    }
    await this.pending.set(left);
    this.statusCache = null;
    return done;
  }

  async uncommittedPaths(): Promise<string[] | null> {
    if (!this.options.commitChanges) return null;
    const out = await this.git.out(["status", "--porcelain=v1", "-z", "--untracked-files=no", "--", "."]).catch(() => "");
    const paths: string[] = [];
    for (const e of parseStatus(out)) {
      const v = this.fromRepo(e.path);
      if (v !== null) paths.push(v);
    }
    return paths;
  }

  private async commitNow(change: CommittedChange): Promise<CommitOutcome> {
    // Notes a rename rewrote links in that had the owner's uncommitted edits: their lines and ours
    // cannot be told apart there, so they stay out of the commit (said in the answer).
    const dirty = new Set(change.uncommittedBefore ?? []);
    const own = new Set([change.path, ...(change.newPath !== undefined ? [change.newPath] : [])]);
    const leftOutLinks = change.paths.filter((p) => dirty.has(p) && !own.has(p));
    if (leftOutLinks.length) {
      const outcome = await this.commitNow({ ...change, paths: change.paths.filter((p) => !leftOutLinks.includes(p)), uncommittedBefore: [] });
      const said = `Not committed: the link updates in ${leftOutLinks.map((p) => `"${p}"`).join(", ")}, which had your uncommitted edits (they stay uncommitted with them).`;
      outcome.note = [outcome.note, said].filter(Boolean).join(" ");
      return outcome;
    }
    const message = commitMessage(change);
    let blobs: ChangeBlobs[] | null = null;
    try {
      const files = await this.fileChanges(change);
      // The common case in one git call: the owner has nothing of theirs in these paths. Else the
      // full check (the blobs hashed by git, the file's attributes applied), and maybe our own commit.
      if (files && !(await this.ownsNothing(change, files))) {
        blobs = await this.captureBefore(change, files);
        // The owner's own uncommitted work in a path we changed (staged, or edits in the file
        // before ours): our change alone is committed, built apart from their index.
        const { head, index } = await entriesOf(this.git, [...new Set([...files, ...blobs.flatMap((b) => (b.from !== undefined ? [b.from] : []))])]);
        const foreign = blobs.some((b) => {
          const rp = this.toRepo(b.from ?? b.path);
          const h = head.get(rp)?.sha ?? null;
          if ((index.get(rp)?.sha ?? null) !== h) return true;
          return typeof b.before === "string" && h !== null && b.before !== h;
        });
        if (foreign) {
          for (const b of blobs) b.after = this.deps.port.stat(b.path) ? await hashFile(this.git, b.path) : null;
          const r = await commitOwnChange(this.git, this, blobs, message, this.identityArgs());
          const leftOut = r.leftOut.length ? `Not committed: ${r.leftOut.map((l) => `"${l.path}" (${l.why})`).join(", ")}; your change and ours to it stay uncommitted in the file.` : "";
          if (r.kind === "skipped") return { committed: false, skipped: r.leftOut.length ? `the note has your uncommitted edits where it was changed; commit it yourself (${r.why})` : r.why };
          const outcome = this.committed(r.sha, message, leftOut || "Your own uncommitted edits in the same file stay uncommitted (only this change was committed).");
          if (this.options.pushAfterCommit) Object.assign(outcome, await this.pushQuietly());
          return outcome;
        }
      }
      return await this.commitPaths(change, message, true);
    } catch (e) {
      const error = errorText(e);
      this.options.log?.("warn", `git commit after ${change.tool} of ${change.path} failed: ${error}`);
      // Kept pending: committed with the next commit or by git_sync (stats lists it).
      try {
        const files = await this.fileChanges(change).catch(() => null);
        if (files && !blobs) blobs = await this.captureBefore(change, files).catch(() => null);
        if (blobs) for (const b of blobs) b.after = this.deps.port.stat(b.path) ? await hashFile(this.git, b.path) : null;
        const { before: _before, ...rest } = change;
        void _before;
        await this.pending.set([...(await this.pending.all()), { change: rest, blobs, time: (this.options.now?.() ?? new Date()).toISOString(), error }]);
        this.statusCache = null;
      } catch (e2) {
        this.options.log?.("warn", `could not keep the failed commit pending: ${errorText(e2)}`);
      }
      return { committed: false, pending: true, error: `The change was made but not committed: ${error.replace(/\.?$/, ".")} It is kept pending: the next commit (or git_sync) commits it; stats lists pending commits.` };
    }
  }

  /** The vault paths of a change when all are files (present or gone), or null when a folder is among them. */
  private async fileChanges(change: CommittedChange): Promise<string[] | null> {
    const paths = [...new Set(change.paths)].filter((p) => p !== "");
    if (paths.some((p) => this.deps.port.isFolder(p))) return null;
    const gone = paths.filter((p) => !this.deps.port.stat(p));
    if (gone.length) {
      const tracked = parsePathList(await this.git.out(["ls-files", "-z", "--full-name", "--", ...gone])).map((p) => this.fromRepo(p) ?? p);
      if (tracked.some((t) => !gone.includes(t))) return null; // a folder that was deleted
    }
    return paths;
  }

  /**
   * True when no path of the change holds the owner's uncommitted work: its index entry is HEAD's,
   * and what we changed it from (where known) is HEAD's blob byte for byte. False sends the change
   * through the full check (a file whose attributes convert its bytes is treated there).
   */
  private async ownsNothing(change: CommittedChange, files: string[]): Promise<boolean> {
    const items = files.map((path) => {
      const known = change.before?.find((b) => b.path === path);
      return { repo: this.toRepo(known?.from ?? path), known };
    });
    const blobs = await headAndIndexBlobs(this.git, [...new Set(items.map((i) => i.repo))]);
    if (!blobs) return false;
    for (const { repo, known } of items) {
      const e = blobs.get(repo);
      if (!e || e.index !== e.head) return false;
      if (known && known.content !== null && e.head !== null && (await gitBlobId(known.content)) !== e.head) return false;
    }
    return true;
  }

  /** Blobs of what each file was before our change, where the write service knew it. */
  private async captureBefore(change: CommittedChange, files: string[]): Promise<ChangeBlobs[]> {
    const out: ChangeBlobs[] = [];
    for (const path of files) {
      const known = change.before?.find((b) => b.path === path);
      const before = known === undefined ? undefined : known.content === null ? null : await hashContent(this.git, path, known.content);
      out.push({ path, ...(known?.from !== undefined ? { from: known.from } : {}), ...(before !== undefined ? { before } : {}), after: null });
    }
    return out;
  }

  private committed(sha: string, message: string, note?: string): CommitOutcome {
    this.statusCache = null;
    this.emit({ committed: sha });
    return { committed: true, sha, message, ...(note ? { note } : {}) };
  }

  /**
   * `git commit --only -- <paths>`: the paths' working-tree content, nothing else of the index.
   * When the commit fails, what we staged for it (new files) is unstaged again. Throws on failure.
   */
  private async commitPaths(change: CommittedChange, message: string, push = false): Promise<CommitOutcome> {
    const paths = [...new Set(change.paths)].filter((p) => p !== "");
    const exists = (p: string) => this.deps.port.stat(p) !== null || this.deps.port.isFolder(p);
    const present = paths.filter(exists);
    const gone = paths.filter((p) => !exists(p));
    // Files that are gone are committed only when git knew them (deleting an untracked file is no change).
    const trackedGone = gone.length ? parsePathList(await this.git.out(["ls-files", "-z", "--", ...gone])).map((p) => this.fromRepo(p) ?? p) : [];
    const goneSpecs = gone.filter((g) => trackedGone.some((t) => t === g || isUnder(t, g)));
    const identity = this.identityArgs();
    const specs = [...present, ...goneSpecs];
    if (specs.length === 0) return { committed: false, skipped: "nothing git tracks was changed" };
    const added: string[] = [];
    // New files must be added first; a changed tracked file needs no `add` (`commit --only` takes
    // its working-tree content), which saves a git call on every edit.
    const add = async (paths: string[]): Promise<CommitOutcome | null> => {
      if (!paths.length) return null;
      const r = await this.git.change(["add", "-A", "--", ...paths]);
      if (r.code === 0) {
        added.push(...paths);
        return null;
      }
      if (/ignored by one of your \.gitignore/i.test(r.stderr)) return { committed: false, skipped: "the file is ignored by .gitignore" };
      throw new GitCommandError("add", r.stderr);
    };
    try {
      const created = new Set(change.created);
      const skipped = await add(present.filter((p) => created.has(p) || this.deps.port.isFolder(p)));
      if (skipped) return skipped;
      // Without `gc --auto`/maintenance after our commit: it may start a long job; the owner's own git commands still run it.
      const commit = () => this.git.change([...identity, "-c", "maintenance.auto=false", "commit", "-q", "--no-verify", "--no-status", "--untracked-files=no", "-m", message, "--only", "--", ...specs]);
      let r = await commit();
      if (r.code !== 0 && /did not match any file\(s\) known to git/i.test(r.stderr)) {
        // A file git never knew (the owner never committed it): add it, then commit.
        const again = await add(present);
        if (again) return again;
        r = await commit();
      }
      if (r.code !== 0) {
        if (/nothing to commit|no changes added to commit|nothing added to commit/i.test(r.stderr + r.stdout)) return { committed: false, skipped: "no change to commit" };
        throw new GitCommandError("commit", r.stderr || r.stdout);
      }
    } catch (e) {
      // Nothing stays staged that the owner had not staged: what we added goes out of the index again.
      if (added.length) await this.git.change(["reset", "-q", "--", ...added]).catch(() => undefined);
      throw e;
    }
    const sha = (await this.git.headSha()) ?? "";
    const outcome = this.committed(sha, message);
    if (push && this.options.pushAfterCommit) Object.assign(outcome, await this.pushQuietly());
    return outcome;
  }

  private trashChecked = false;

  /**
   * After something went to the vault's `.trash`: the trash is the owner's local undo, not history,
   * so it goes into the repository's `info/exclude` (once, unless git already ignores it) and stays
   * out of their `git status`. Returns a sentence for the answer the time it is added, else null.
   */
  async trashed(): Promise<string | null> {
    if (this.trashChecked || !this.options.files) return null;
    this.trashChecked = true;
    try {
      const probe = ".trash/vault-mcp-probe.md";
      if ((await this.git.raw(["check-ignore", "-q", "--no-index", "--", probe])).code === 0) return null;
      const rel = (await this.git.out(["rev-parse", "--git-path", "info/exclude"])).trim();
      if (!rel) return null;
      const old = (await this.options.files.read(rel)) ?? "";
      const line = `/${this.toRepo(".trash")}/`;
      if (old.split(/\r?\n/).includes(line)) return null;
      await this.options.files.append(rel, `${old && !old.endsWith("\n") ? "\n" : ""}# Vault MCP: the vault's trash is the owner's local undo, not history\n${line}\n`);
      this.statusCache = null;
      return "The vault's .trash folder was added to this repository's .git/info/exclude, so trashed notes stay out of git status (a deletion itself is committed, when commits are on).";
    } catch (e) {
      this.options.log?.("warn", `could not exclude .trash in git: ${errorText(e)}`);
      return null;
    }
  }

  /** Pushes the current branch to its remote; the outcome carries a failure instead of throwing. */
  private async pushQuietly(): Promise<Pick<CommitOutcome, "pushed" | "push_error">> {
    const up = await this.upstream();
    if (!up) return this.pushFailed("the repository has no remote to push to");
    const r = await this.git.change(["push", "--porcelain", up.remote, `HEAD:refs/heads/${up.branch}`], { timeoutMs: GIT_NETWORK_TIMEOUT_MS });
    if (r.code === 0) {
      this.lastPushError = undefined;
      this.emit({});
      return { pushed: true };
    }
    const rejected = /\[rejected\]|non-fast-forward|fetch first/i.test(r.stdout + r.stderr);
    return this.pushFailed(rejected ? `the remote has commits this vault does not have; run git_sync with direction "both" to pull them first` : r.timedOut ? "the push took too long and was stopped" : cleanGitMessage(r.stderr || r.stdout));
  }

  private pushFailed(why: string): Pick<CommitOutcome, "pushed" | "push_error"> {
    this.lastPushError = why;
    this.emit({ pushError: why });
    this.options.log?.("warn", `git push failed: ${why}`);
    return { pushed: false, push_error: `Committed but not pushed: ${why}.` };
  }

  private emit(e: { pushError?: string; committed?: string }): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        /* a listener's failure is not the commit's */
      }
    }
  }

  // ------------------------------------------------------------------ sync

  sync(req: SyncRequest): Promise<SyncResult> {
    return this.git.exclusive(async () => {
      try {
        // Commits that failed earlier go in first, so the sync pushes them.
        if (this.options.commitChanges) await this.retryPending().catch(() => 0);
        return await syncWithRemote(this, this.deps.port, req, this.options.now?.() ?? new Date());
      } finally {
        this.statusCache = null;
      }
    });
  }

  /** The git identity arguments for our own commits when the repository has none configured. */
  identityArgs(): string[] {
    return this.deps.identity ? [] : ["-c", "user.name=Vault MCP", "-c", "user.email=vault-mcp@localhost"];
  }

  get policy(): AccessPolicy {
    return this.deps.policy;
  }

  private readonly rewriteListeners = new Set<(map: ReadonlyMap<string, string>) => Promise<unknown>>();

  /** Hears commits rewritten by a sync (old sha → new sha): the activity log follows them. */
  onRewrite(listener: (map: ReadonlyMap<string, string>) => Promise<unknown>): void {
    this.rewriteListeners.add(listener);
  }

  private pendingListener: ((tool: string, path: string, sha: string) => Promise<unknown>) | null = null;

  /** Hears a pending commit being made (the activity log's entry gets its sha). */
  onPendingCommitted(listener: (tool: string, path: string, sha: string) => Promise<unknown>): void {
    this.pendingListener = listener;
  }

  /** Called by sync after a rebase with the commits it rewrote. */
  async commitsRewritten(map: ReadonlyMap<string, string>): Promise<void> {
    if (map.size === 0) return;
    for (const l of this.rewriteListeners) {
      try {
        await l(map);
      } catch (e) {
        this.options.log?.("warn", `after a rebase, the activity log could not be updated: ${e instanceof Error ? e.message : String(e)}`);
      }
    }
  }

  /** Called by sync after it pushed (clears a push failure shown in the status bar). */
  pushSucceeded(): void {
    this.lastPushError = undefined;
    this.emit({});
  }
}

function errorText(e: unknown): string {
  return e instanceof GitLockedError || e instanceof GitCommandError ? e.message : e instanceof Error ? cleanGitMessage(e.message) : String(e);
}

function notInHistory(path: string): VaultError {
  return new VaultError("not_found", `No note, file or folder at "${path}" in the vault or its git history. Paths are vault-relative; use list_documents or get_history without a path.`);
}

function iso(sec: number): string {
  return new Date(sec * 1000).toISOString().replace(".000Z", "Z");
}

/** What every shown commit starts with. */
function commitHead(c: RepoCommit): { sha: string; time: string; author: string; message: string } {
  const first = c.message.split("\n")[0].trim();
  return { sha: c.sha.slice(0, SHA_CHARS), time: iso(c.authorTime), author: c.author, message: first.length > MAX_MESSAGE_CHARS ? `${first.slice(0, MAX_MESSAGE_CHARS - 1)}…` : first };
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** `vault-mcp: edit Projects/Plan.md (claude-code)` */
export function commitMessage(change: CommittedChange): string {
  const client = change.client.replace(/[\r\n\t]+/g, " ").trim().slice(0, 60) || "unknown client";
  const target = change.newPath !== undefined ? `${change.path} → ${change.newPath}` : change.path;
  return `vault-mcp: ${change.tool} ${target} (${client})`;
}

/** Diffs cut at `maxChars` characters in all, from `offset` (the text of every diff, one after another). */
function capDiffs(pieces: DiffResult["diffs"], offset: number, maxChars: number): Pick<DiffResult, "diffs" | "truncated" | "next_offset" | "total_chars"> {
  const total = pieces.reduce((n, p) => n + p.diff.length, 0);
  let skip = offset;
  let room = maxChars;
  const out: DiffResult["diffs"] = [];
  for (const p of pieces) {
    if (skip >= p.diff.length) {
      skip -= p.diff.length;
      if (p.diff.length === 0 && skip === 0 && room > 0) out.push(p);
      continue;
    }
    if (room <= 0) break;
    const text = p.diff.slice(skip, skip + room);
    room -= text.length;
    skip = 0;
    out.push({ ...p, diff: text });
  }
  const shownEnd = Math.min(total, offset + maxChars);
  return { diffs: out, truncated: shownEnd < total, ...(shownEnd < total ? { next_offset: shownEnd } : {}), total_chars: total };
}

export type { RepoChange };
