import { LOG_FORMAT, LogStreamParser, type RepoChange, type RepoCommit } from "./parse";
import { GitCommandError, type Git } from "./git";
import { SLICE_MS, TimeSlice } from "../time-slice";
import { lowerBound } from "../sorted";

/**
 * The repository's history in memory: every commit reachable from HEAD with the paths it changed
 * (renames detected), and for each path the commits that touched it. Built once from one streamed
 * `git log` (a 20k-commit repository: ~0.8 s of git in its own process, parsed a chunk at a time),
 * then brought up to date incrementally whenever HEAD moved (`old..HEAD`), rebuilt when HEAD moved
 * sideways (a reset or a rebase). A note's history is then a walk over its own list, following
 * renames, instead of a `git log --follow` over every commit (~200 ms each there).
 */
export class HistoryIndex {
  /** Oldest first; new commits are appended. */
  private commits: RepoCommit[] = [];
  private bySha = new Map<string, number>();
  /** Repo path → positions in `commits` (ascending) of commits whose changes name it (as path or rename source). */
  private byPath = new Map<string, number[]>();
  private head: string | null = null;
  private pending: Promise<void> | null = null;

  constructor(private readonly git: Git) {}

  /** Number of commits indexed. */
  get size(): number {
    return this.commits.length;
  }

  get headSha(): string | null {
    return this.head;
  }

  /** Brings the index up to HEAD (one `rev-parse` when nothing moved). Concurrent calls share one update. */
  refresh(): Promise<void> {
    this.pending ??= this.update().finally(() => {
      this.pending = null;
    });
    return this.pending;
  }

  private async update(): Promise<void> {
    const head = await this.git.headSha();
    if (head === this.head) return;
    if (!head) {
      this.reset();
      return;
    }
    if (this.head && (await this.git.isAncestor(this.head, head))) {
      const added = await this.readLog([`${this.head}..${head}`]);
      await this.append(added);
    } else {
      const all = await this.readLog([head]);
      this.reset();
      await this.append(all);
    }
    this.head = head;
  }

  private reset(): void {
    this.commits = [];
    this.bySha.clear();
    this.byPath.clear();
    this.head = null;
  }

  private async readLog(range: string[]): Promise<RepoCommit[]> {
    const newestFirst: RepoCommit[] = [];
    const parser = new LogStreamParser((c) => {
      newestFirst.push(c);
    });
    const r = await this.git.raw(["log", "-M", "--name-status", "-z", LOG_FORMAT, ...range, "--"], {
      onStdout: (chunk) => parser.push(chunk),
      env: { GIT_OPTIONAL_LOCKS: "0" },
      timeoutMs: 10 * 60_000,
    });
    if (r.code !== 0) throw new GitCommandError("log", r.stderr);
    parser.end();
    return newestFirst;
  }

  /** Adds commits (given newest first) in time slices: 20k commits are ~30 ms of work. */
  private async append(newestFirst: RepoCommit[]): Promise<void> {
    const slice = new TimeSlice(SLICE_MS, 256);
    for (let i = newestFirst.length - 1; i >= 0; i--) {
      if (slice.due()) await slice.next();
      const c = newestFirst[i];
      if (this.bySha.has(c.sha)) continue;
      const pos = this.commits.length;
      this.commits.push(c);
      this.bySha.set(c.sha, pos);
      for (const ch of c.changes) {
        this.addPath(ch.path, pos);
        if (ch.from !== undefined && ch.from !== ch.path) this.addPath(ch.from, pos);
      }
    }
  }

  private addPath(path: string, pos: number): void {
    const list = this.byPath.get(path);
    if (!list) this.byPath.set(path, [pos]);
    else if (list[list.length - 1] !== pos) list.push(pos);
  }

  /** True when some commit touched exactly this repository path. */
  hasPath(path: string): boolean {
    return this.byPath.has(path);
  }

  /** True when some commit touched a path inside this folder. */
  hasPathUnder(folder: string): boolean {
    const p = folder.endsWith("/") ? folder : folder + "/";
    for (const k of this.byPath.keys()) if (k.startsWith(p)) return true;
    return false;
  }

  /** Position of a commit (larger = newer), or -1. */
  positionOf(sha: string): number {
    return this.bySha.get(sha) ?? -1;
  }

  /**
   * The commits that touched `path`, newest first, following it back across renames (while
   * `mayFollow` accepts the older name). Each comes with the name the file had in it.
   * `visit` returns false to stop.
   */
  follow(path: string, mayFollow: (repoPath: string) => boolean, visit: (commit: RepoCommit, name: string, change: RepoChange | undefined) => boolean | void): void {
    let name = path;
    let bound = this.commits.length; // only positions below this
    // Each rename moves `bound` strictly down, so the walk ends even when a note was renamed back.
    for (;;) {
      const list = this.byPath.get(name) ?? [];
      let next: { name: string; bound: number } | null = null;
      for (let k = lowerBound(list, bound) - 1; k >= 0; k--) {
        const pos = list[k];
        const c = this.commits[pos];
        const change = c.changes.find((ch) => ch.path === name) ?? c.changes.find((ch) => ch.from === name);
        if (visit(c, name, change) === false) return;
        if (change && change.status === "renamed" && change.path === name && change.from !== undefined && mayFollow(change.from)) {
          next = { name: change.from, bound: pos };
          break;
        }
      }
      if (!next) return;
      name = next.name;
      bound = next.bound;
    }
  }

  /** Every commit, newest first; `visit` returns false to stop. Yields every few milliseconds. */
  async walk(visit: (commit: RepoCommit, pos: number) => boolean | void): Promise<void> {
    const slice = new TimeSlice(SLICE_MS, 256);
    const commits = this.commits;
    for (let pos = commits.length - 1; pos >= 0; pos--) {
      if (visit(commits[pos], pos) === false) return;
      if (slice.due()) await slice.next();
    }
  }
}
