import { VaultError } from "../errors";
import { joinVaultPath } from "../paths";
import type { AccessPolicy } from "../policy";
import type { VaultPort } from "../vault";
import { basenameOf, extensionOf, parentOf } from "../vault";
import { cleanGitMessage, type Git } from "./git";
import { parsePathList, parseStatus } from "./parse";
import { GIT_NETWORK_TIMEOUT_MS } from "./runner";
import { sleep } from "../timers";

/**
 * What a sync needs of the git service (`GitService` is one): declared here so that this module
 * does not import the service, which imports it.
 */
export interface SyncHost {
  readonly git: Git;
  readonly policy: AccessPolicy;
  currentBranch(): Promise<string | null>;
  upstream(): Promise<{ remote: string; branch: string; configured: boolean } | null>;
  /** A repository path as a vault path, or null when it is outside the vault. */
  fromRepo(repoPath: string): string | null;
  toRepo(vaultPath: string): string;
  /** A repository path a client may see (in the vault and not hidden), as a vault path; else null. */
  visible(repoPath: string): string | null;
  identityArgs(): string[];
  commitsRewritten(map: ReadonlyMap<string, string>): Promise<void>;
  pushSucceeded(): void;
}

export interface SyncRequest {
  direction?: "pull" | "push" | "both";
  dry_run?: boolean;
}

export type SyncStatus =
  | "up_to_date"
  | "pulled"
  | "pushed"
  | "pulled_and_pushed"
  | "kept_both"
  | "push_rejected"
  | "would_change"
  | "no_remote"
  | "blocked"
  | "failed";

export interface SyncConflict {
  /** The vault path: it keeps the local version (or stays deleted when it was deleted here). */
  path: string;
  /** Where the remote's version went (none when the remote deleted it). */
  remote_copy: string | null;
  kind: "both_changed" | "deleted_here" | "deleted_on_remote";
}

export interface SyncResult {
  status: SyncStatus;
  direction: "pull" | "push" | "both";
  dry_run: boolean;
  remote: string | null;
  branch: string | null;
  pull?: {
    action: "none" | "fast_forward" | "rebase" | "merge_keeping_both";
    commits: number;
    /** Visible files the incoming commits change (at most 100). */
    files: string[];
    files_total: number;
  };
  push?: { commits: number; pushed: boolean };
  conflicts: SyncConflict[];
  /** What happened or what to do, in a sentence or two. */
  message: string;
}

const MAX_FILES = 100;

/**
 * `git_sync`: fetch, then pull (fast-forward; rebase of local commits when no file changed on both
 * sides; otherwise a merge that keeps the local version of each file changed on both sides and puts
 * the remote's beside it as `Note (conflict 2026-11-24 from origin).md`), then push. Every outcome is
 * a status with a sentence, never git's raw output; nothing of either side is lost.
 */
export async function syncWithRemote(svc: SyncHost, port: VaultPort, req: SyncRequest, now: Date): Promise<SyncResult> {
  const direction = req.direction ?? "both";
  const dry = req.dry_run ?? false;
  const git = svc.git;
  const branch = await svc.currentBranch();
  const base: SyncResult = { status: "up_to_date", direction, dry_run: dry, remote: null, branch, conflicts: [], message: "" };
  if (!branch) return { ...base, status: "blocked", message: "The repository is not on a branch (detached HEAD); check out a branch in git first." };
  const up = await svc.upstream();
  if (!up) return { ...base, status: "no_remote", message: "The repository has no remote to sync with. Add one in git (git remote add origin <url>) and set the branch's upstream." };
  const remoteName = `${up.remote}/${up.branch}`;
  base.remote = remoteName;
  const remoteRef = `refs/remotes/${up.remote}/${up.branch}`;

  const fetched = await git.change(["fetch", "--quiet", "--no-tags", up.remote, `+refs/heads/${up.branch}:${remoteRef}`], { timeoutMs: GIT_NETWORK_TIMEOUT_MS });
  let remoteHasBranch = true;
  if (fetched.code !== 0) {
    if (/couldn't find remote ref/i.test(fetched.stderr)) remoteHasBranch = false;
    else return { ...base, status: "failed", message: `Could not fetch from ${up.remote}: ${fetched.timedOut ? "it took too long" : cleanGitMessage(fetched.stderr)}. Nothing was changed.` };
  }
  const upSha = remoteHasBranch ? await revParse(svc, remoteRef) : null;
  let head = await git.headSha();
  const mergeBase = head && upSha ? (await git.raw(["merge-base", head, upSha])).stdout.trim() || null : null;
  const incoming = upSha ? await countCommits(svc, head ? `${head}..${upSha}` : upSha) : 0;
  let outgoing = head ? await countCommits(svc, upSha ? `${upSha}..${head}` : head) : 0;

  // ---------------------------------------------------------------- pull
  if (direction !== "push" && upSha && incoming > 0) {
    const upstreamFiles = mergeBase ? await diffNames(svc, mergeBase, upSha) : await treeFiles(svc, upSha);
    const localCommitted = head && mergeBase && head !== mergeBase ? await diffNames(svc, mergeBase, head) : head && !mergeBase ? await treeFiles(svc, head) : [];
    const dirtyEntries = parseStatus(await git.out(["status", "--porcelain=v1", "-z", "--untracked-files=all"]));
    const dirty = new Set<string>();
    for (const e of dirtyEntries) {
      dirty.add(e.path);
      if (e.from) dirty.add(e.from);
    }
    const local = new Set([...localCommitted, ...dirty]);
    const cdup = (await git.out(["rev-parse", "--show-cdup"])).trim();
    const conflicts: { repoPath: string; localHash: string | null; remoteHash: string | null }[] = [];
    const sameOnBoth: string[] = [];
    for (const p of upstreamFiles) {
      if (!local.has(p)) continue;
      const localHash = await workingHash(svc, cdup + p);
      const remoteHash = await revParse(svc, `${upSha}:${p}`);
      if (localHash === remoteHash) {
        if (dirty.has(p)) sameOnBoth.push(p);
      } else conflicts.push({ repoPath: p, localHash, remoteHash });
    }
    const visibleIncoming = upstreamFiles.map((p) => svc.visible(p)).filter((p): p is string => p !== null);
    const action = outgoing === 0 ? "fast_forward" : conflicts.length ? "merge_keeping_both" : "rebase";
    base.pull = { action, commits: incoming, files: visibleIncoming.slice(0, MAX_FILES), files_total: visibleIncoming.length };
    const outside = conflicts.filter((c) => svc.fromRepo(c.repoPath) === null);
    if (outside.length) {
      return { ...base, status: "blocked", message: `${outside.length} file(s) outside the vault folder changed both here and on ${remoteName}; resolve them with git itself. Nothing was changed.` };
    }
    const today = now.toISOString().slice(0, 10);
    const planned: SyncConflict[] = [];
    const taken = new Set<string>();
    for (const c of conflicts) {
      const v = svc.fromRepo(c.repoPath) as string;
      const kind: SyncConflict["kind"] = c.localHash === null ? "deleted_here" : c.remoteHash === null ? "deleted_on_remote" : "both_changed";
      const copy = c.remoteHash === null ? null : siblingName(port, v, today, up.remote, taken);
      if (copy) taken.add(copy);
      planned.push({ path: v, remote_copy: copy, kind });
    }
    // Hidden files are kept both ways too, but never named to a client.
    base.conflicts = planned.filter((c) => !svc.policy.isHidden(c.path));
    if (dry) {
      base.status = "would_change";
    } else {
      if (action === "merge_keeping_both") {
        const staged = await git.raw(["diff", "--cached", "--quiet"]);
        if (staged.code !== 0) {
          return { ...base, status: "blocked", message: "There are staged but uncommitted changes; commit or unstage them in git first (a merge would take them in). Nothing was changed." };
        }
      }
      // Save the local side of every conflict before git touches the files.
      const saved = new Map<string, Uint8Array | null>();
      for (const c of planned) saved.set(c.path, port.stat(c.path) ? await port.readBinary(c.path) : null);
      // ...and into git's object store, so that they outlive a failure to put them back below.
      const savedBlobs = new Map<string, string>();
      for (const [p, bytes] of saved) {
        if (!bytes) continue;
        const r = await git.raw(["hash-object", "-w", "--no-filters", "--stdin"], { input: bytes });
        if (r.code === 0 && r.stdout.trim()) savedBlobs.set(p, r.stdout.trim());
      }
      const restoreSaved = async () => {
        for (const [p, bytes] of saved) await putFile(port, svc, p, bytes);
      };
      // The owner's staged entries, put back after a fast-forward or a rebase: resetting a conflicting
      // file below unstages it, and `rebase --autostash` brings the work tree back but unstages
      // everything. (A merge refuses above while anything is staged.)
      const staged = action === "merge_keeping_both" ? "" : await stagedEntries(svc);
      // Files changed on both sides identically, or with a conflict and dirty here: back to HEAD
      // (their local bytes are saved or equal to the remote's), so git may update them.
      for (const p of [...sameOnBoth, ...conflicts.filter((c) => dirty.has(c.repoPath)).map((c) => c.repoPath)]) await resetToHead(svc, head, p);
      let ok: { ok: true } | { ok: false; why: string };
      const oldHead = head;
      if (action === "fast_forward") ok = await run(svc, ["merge", "--ff-only", "--no-edit", upSha]);
      else if (action === "rebase") {
        ok = await run(svc, [...svc.identityArgs(), "rebase", "--autostash", upSha]);
        if (!ok.ok) await git.raw(["rebase", "--abort"]);
      } else ok = await mergeKeepingOurs(svc, head, upSha, conflicts.map((c) => c.repoPath), remoteName, planned);
      if (!ok.ok) {
        await restoreSaved();
        return { ...base, status: "failed", message: `Could not update from ${remoteName}: ${ok.why}. Your files are as they were.` };
      }
      // The remote's version beside each conflicting file (in a merge, already committed with it);
      // the local version back in place.
      const notBack: string[] = [];
      for (const c of planned) {
        // A hidden file is never named to a client, here either.
        const hidden = svc.policy.isHidden(c.path);
        const name = hidden ? "a hidden file" : `"${c.path}"`;
        try {
          if (c.remote_copy) {
            const bytes = await blob(svc, `${upSha}:${svc.toRepo(c.path)}`);
            if (bytes) await port.create(c.remote_copy, bytes);
          }
        } catch {
          notBack.push(`the remote's version of ${name}${hidden ? "" : ` (git show ${upSha.slice(0, 12)}:"${svc.toRepo(c.path)}")`}`);
        }
        try {
          await putFile(port, svc, c.path, saved.get(c.path) ?? null);
        } catch {
          const id = savedBlobs.get(c.path);
          if (id) notBack.push(`your version of ${name} (git cat-file blob ${id.slice(0, 12)})`);
          else notBack.push(hidden ? `your version of ${name}` : name);
        }
      }
      if (staged) await git.change(["update-index", "--index-info"], { input: staged });
      head = await git.headSha();
      if (action === "rebase" && oldHead && mergeBase && head) await svc.commitsRewritten(await rewrittenShas(svc, `${mergeBase}..${oldHead}`, `${upSha}..${head}`));
      outgoing = head ? await countCommits(svc, `${upSha}..${head}`) : 0;
      base.status = planned.length ? "kept_both" : "pulled";
      // The vault learns of the files git wrote from its file watcher (Obsidian's, or ours headless):
      // the next call must not find a pulled note missing.
      await untilListed(svc, port, oldHead, head);
      if (notBack.length) {
        base.status = "failed";
        base.message = `Updated from ${remoteName}, but could not write ${notBack.length} file(s) into the vault: ${notBack.join("; ")}. Nothing is lost: each is in git, and the command beside it prints it. Nothing was pushed.`;
        return base;
      }
    }
  } else if (direction !== "push") {
    base.pull = { action: "none", commits: 0, files: [], files_total: 0 };
  }

  // ---------------------------------------------------------------- push
  if (direction !== "pull") {
    if (outgoing > 0 || (!remoteHasBranch && head)) {
      const commits = outgoing;
      if (dry || (incoming > 0 && direction === "push")) {
        base.push = { commits, pushed: false };
        if (dry) base.status = "would_change";
        else {
          base.status = "push_rejected";
          base.message = `${remoteName} has ${incoming} commit(s) this vault does not have; pull first (git_sync with direction "pull" or "both"). Nothing was pushed.`;
          return base;
        }
      } else {
        const r = await git.change(["push", "--porcelain", up.remote, `HEAD:refs/heads/${up.branch}`], { timeoutMs: GIT_NETWORK_TIMEOUT_MS });
        if (r.code !== 0) {
          const rejected = /\[rejected\]|non-fast-forward|fetch first/i.test(r.stdout + r.stderr);
          base.push = { commits, pushed: false };
          base.status = rejected ? "push_rejected" : "failed";
          base.message = rejected
            ? `${remoteName} moved while syncing; pull first (git_sync with direction "both"), then push again.`
            : `Could not push to ${up.remote}: ${r.timedOut ? "it took too long" : cleanGitMessage(r.stderr || r.stdout)}.`;
          return base;
        }
        svc.pushSucceeded();
        base.push = { commits, pushed: true };
        base.status = base.status === "pulled" || base.status === "kept_both" ? (base.status === "kept_both" ? "kept_both" : "pulled_and_pushed") : "pushed";
      }
    } else base.push = { commits: 0, pushed: false };
  }
  base.message ||= describe(base, remoteName);
  return base;
}

function describe(r: SyncResult, remote: string): string {
  const pulled = r.pull && r.pull.commits ? `${r.pull.commits} commit(s) from ${remote} (${r.pull.action.replace(/_/g, " ")})` : "";
  const pushed = r.push && r.push.commits ? `${r.push.commits} commit(s) to ${remote}` : "";
  const conflicts = r.conflicts.length
    ? ` ${r.conflicts.length} file(s) changed on both sides: ${r.dry_run ? "the local version would stay and the remote's would go" : "the local version stays and the remote's is"} beside it (see conflicts).`
    : "";
  if (r.dry_run) {
    if (!pulled && !pushed) return `Up to date with ${remote}; nothing to pull or push (fetched only).`;
    return `Would pull ${pulled || "nothing"} and push ${pushed || "nothing"}.${conflicts} Nothing was changed (fetched only).`;
  }
  switch (r.status) {
    case "up_to_date":
      return `Up to date with ${remote}.`;
    case "pulled":
      return `Pulled ${pulled}.`;
    case "pushed":
      return `Pushed ${pushed}.`;
    case "pulled_and_pushed":
      return `Pulled ${pulled} and pushed ${pushed}.`;
    case "kept_both":
      return `Pulled ${pulled}${r.push?.pushed ? ` and pushed ${pushed}` : ""}.${conflicts}`;
    default:
      return r.status;
  }
}

async function run(svc: SyncHost, args: string[]): Promise<{ ok: true } | { ok: false; why: string }> {
  const r = await svc.git.change(args);
  return r.code === 0 ? { ok: true } : { ok: false, why: cleanGitMessage(r.stderr || r.stdout) || `git ${args[0]} failed` };
}

/**
 * Merges the remote, taking the local side of every file changed on both sides (its remote side
 * is saved beside it by the caller), and commits the merge.
 */
async function mergeKeepingOurs(svc: SyncHost, head: string | null, upSha: string, conflicts: string[], remoteName: string, copies: SyncConflict[]): Promise<{ ok: true } | { ok: false; why: string }> {
  const git = svc.git;
  const m = await git.change([...svc.identityArgs(), "merge", "--no-ff", "--no-commit", "-X", "ours", upSha]);
  if (m.code !== 0 && !/CONFLICT|Automatic merge failed/i.test(m.stdout + m.stderr)) return { ok: false, why: cleanGitMessage(m.stderr || m.stdout) };
  for (const p of conflicts) {
    const spec = svc.fromRepo(p) as string;
    if (head && (await revParse(svc, `${head}:${p}`))) await git.change(["checkout", "-q", head, "--", spec]);
    else {
      await git.change(["rm", "-q", "--cached", "--ignore-unmatch", "--", spec]);
      await git.change(["clean", "-f", "-q", "--", spec]);
    }
  }
  const unmerged = parsePathList(await git.out(["diff", "--name-only", "--diff-filter=U", "-z"]));
  if (unmerged.length) {
    await git.raw(["merge", "--abort"]);
    return { ok: false, why: `${unmerged.length} file(s) could not be merged` };
  }
  // The remote's versions go into the merge itself, beside the local ones, so every clone gets both
  // sides of each conflict at its next pull (the caller writes the same bytes to the work tree).
  for (const c of copies) {
    if (!c.remote_copy) continue;
    const entry = await treeEntry(svc, upSha, svc.toRepo(c.path));
    if (entry) await git.change(["update-index", "--add", "--cacheinfo", `${entry.mode},${entry.sha},${svc.toRepo(c.remote_copy)}`]);
  }
  const c = await git.change([...svc.identityArgs(), "commit", "-q", "--no-verify", "-m", `vault-mcp: sync with ${remoteName}, kept the local version of ${conflicts.length} file(s) changed on both sides (remote versions saved beside them)`]);
  if (c.code !== 0) {
    await git.raw(["merge", "--abort"]);
    return { ok: false, why: cleanGitMessage(c.stderr || c.stdout) };
  }
  return { ok: true };
}

/** A file's mode and blob in a commit (repository path), or null. */
async function treeEntry(svc: SyncHost, rev: string, repoPath: string): Promise<{ mode: string; sha: string } | null> {
  const r = await svc.git.raw(["ls-tree", "-z", "--full-tree", rev, "--", repoPath], { env: { GIT_OPTIONAL_LOCKS: "0" } });
  const m = /^(\d{6}) blob ([0-9a-f]+)\t/.exec(r.stdout);
  return r.code === 0 && m ? { mode: m[1], sha: m[2] } : null;
}

/**
 * The owner's staged changes as `update-index --index-info` lines (mode, blob, repository path),
 * or "" when nothing is staged.
 */
async function stagedEntries(svc: SyncHost): Promise<string> {
  const out = await svc.git.out(["diff-index", "--cached", "--raw", "-z", "--no-renames", "HEAD", "--"]);
  const parts = out.split("\0");
  let lines = "";
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const m = /^:\d{6} (\d{6}) [0-9a-f]+ ([0-9a-f]+) [A-Z]/.exec(parts[i]);
    if (!m) continue;
    lines += `${m[1] === "000000" ? "0" : m[1]} ${m[2]}\t${parts[i + 1]}\n`;
  }
  return lines;
}

/**
 * Old sha → new sha of the commits a rebase rewrote: matched by author, author time and message
 * (a rebase keeps all three). Commits the rebase dropped (already upstream) have no entry.
 */
async function rewrittenShas(svc: SyncHost, oldRange: string, newRange: string): Promise<Map<string, string>> {
  const list = async (range: string) => {
    const out = await svc.git.out(["log", "-z", "--format=%H%x1f%an%x1f%ae%x1f%at%x1f%B", range, "--"]);
    return out
      .split("\0")
      .filter(Boolean)
      .map((rec) => {
        const i = rec.indexOf("\x1f");
        return { sha: rec.slice(0, i).trim(), key: rec.slice(i + 1) };
      });
  };
  const map = new Map<string, string>();
  const fresh = new Map<string, string[]>();
  for (const c of await list(newRange)) fresh.set(c.key, [...(fresh.get(c.key) ?? []), c.sha]);
  for (const c of await list(oldRange)) {
    const candidates = fresh.get(c.key);
    const next = candidates?.shift();
    if (next && next !== c.sha) map.set(c.sha, next);
  }
  return map;
}

/** Puts a file's working-tree copy back to HEAD's (or removes it when HEAD does not have it). */
async function resetToHead(svc: SyncHost, head: string | null, repoPath: string): Promise<void> {
  const spec = svc.fromRepo(repoPath);
  if (spec === null) return;
  if (head && (await revParse(svc, `${head}:${repoPath}`))) await svc.git.change(["checkout", "-q", head, "--", spec]);
  else await svc.git.change(["clean", "-f", "-q", "--", spec]);
}

/**
 * Writes (or removes, for null) a vault file's bytes, whatever the port currently knows about it.
 *
 * Git has just rewritten the file, and the vault learns of that from its file watcher: for a moment
 * it may not list a file that is on disk (git replaces a file by removing it first). Obsidian then
 * refuses both to modify it (not listed) and to create it (it exists). Seen in CI under load, as
 * "File already exists." from a sync. So both are tried again until the watcher has caught up
 * (at most LISTING_WAIT_MS); only the last failure is reported.
 */
export async function putFile(port: VaultPort, svc: Pick<SyncHost, "git">, path: string, bytes: Uint8Array | null, waitMs = LISTING_WAIT_MS): Promise<void> {
  if (bytes === null) {
    if (port.stat(path)) await port.trash(path);
    else await svc.git.raw(["clean", "-f", "-q", "--", path]);
    return;
  }
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      await port.writeBinary(path, bytes);
      return;
    } catch {
      // Not listed: create it.
    }
    try {
      await port.create(path, bytes);
      return;
    } catch (e) {
      if (Date.now() >= until) throw e;
    }
    await sleep(20);
  }
}

async function revParse(svc: SyncHost, rev: string): Promise<string | null> {
  const r = await svc.git.raw(["rev-parse", "-q", "--verify", rev], { env: { GIT_OPTIONAL_LOCKS: "0" } });
  return r.code === 0 ? r.stdout.trim() || null : null;
}

async function countCommits(svc: SyncHost, range: string): Promise<number> {
  const out = await svc.git.out(["rev-list", "--count", range, "--"]);
  return Number(out.trim()) || 0;
}

/** How long `git_sync` waits for the vault to list what a pull added and forget what it deleted. */
const LISTING_WAIT_MS = 3000;

/**
 * Waits (at most LISTING_WAIT_MS) until the vault lists every visible file git added between commits
 * `a` and `b` and no longer lists those it deleted. Without it, a read right after a pull answered
 * "No note or file" for a note the pull had just written (seen in tests under load, where the file
 * watcher's event came later than the next call).
 */
async function untilListed(svc: SyncHost, port: VaultPort, a: string | null, b: string | null): Promise<void> {
  if (!a || !b || a === b) return;
  const parts = (await svc.git.out(["diff", "--name-status", "--no-renames", "-z", a, b, "--"])).split("\0");
  const want: { path: string; listed: boolean }[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const path = svc.visible(parts[i + 1]);
    if (path !== null) want.push({ path, listed: parts[i] !== "D" });
  }
  const until = Date.now() + LISTING_WAIT_MS;
  while (want.some((w) => (port.stat(w.path) !== null) !== w.listed) && Date.now() < until) await sleep(20);
}

async function diffNames(svc: SyncHost, a: string, b: string): Promise<string[]> {
  return parsePathList(await svc.git.out(["diff", "--name-only", "--no-renames", "-z", a, b, "--"]));
}

async function treeFiles(svc: SyncHost, rev: string): Promise<string[]> {
  return parsePathList(await svc.git.out(["ls-tree", "-r", "-z", "--name-only", "--full-tree", rev]));
}

/** The blob id git would give a working-tree file, or null when there is none. */
async function workingHash(svc: SyncHost, cwdPath: string): Promise<string | null> {
  const r = await svc.git.raw(["hash-object", "--", cwdPath]);
  return r.code === 0 ? r.stdout.trim() || null : null;
}

async function blob(svc: SyncHost, rev: string): Promise<Uint8Array | null> {
  const r = await svc.git.raw(["cat-file", "blob", rev], { binary: true });
  return r.code === 0 ? (r.stdoutBytes ?? null) : null;
}

/** `Folder/Note (conflict 2026-11-24 from origin).md`, numbered when taken. */
export function siblingName(port: VaultPort, path: string, day: string, remote: string, taken: Set<string>): string {
  const ext = extensionOf(path);
  const base = basenameOf(path);
  const folder = parentOf(path);
  for (let n = 1; ; n++) {
    const name = `${base} (conflict ${day} from ${remote}${n > 1 ? ` ${n}` : ""})${ext ? `.${ext}` : ""}`;
    const p = joinVaultPath(folder, name);
    if (!port.stat(p) && !taken.has(p)) return p;
    if (n > 1000) throw new VaultError("exists", `Too many conflict copies of "${path}" already; tidy them up first.`);
  }
}
