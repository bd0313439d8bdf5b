import type { StateStore } from "../state";
import type { CommittedChange } from "../write/commit";
import { GitCommandError, type Git } from "./git";
import { mergeTexts } from "./merge3";

/**
 * Our own commit of one change, built without touching the owner's index or work tree: the tree is
 * HEAD's with only our change applied (in a temporary index), the commit is made with `commit-tree`
 * and HEAD moved with a compare-and-swap; then the owner's index entry of each path gets our change
 * on top of what they staged. Used when the owner has uncommitted work in a file we changed (the
 * plain `commit --only` would take their lines in under our name) and for commits retried later.
 */

/** What our change did to one file, as blobs in the object database. */
export interface ChangeBlobs {
  /** Vault path. */
  path: string;
  /** A rename's new path: the old path, whose HEAD and index entries the change starts from. */
  from?: string;
  /** The file before our change: a blob, null when it did not exist, absent when not known. */
  before?: string | null;
  /** The file after our change: a blob, or null when our change removed it. */
  after: string | null;
}

interface Entry {
  mode: string;
  sha: string;
}

export interface OwnCommitPaths {
  toRepo(vaultPath: string): string;
}

export type OwnCommitResult =
  | { kind: "committed"; sha: string; leftOut: { path: string; why: string }[] }
  | { kind: "skipped"; why: string; leftOut: { path: string; why: string }[] };

const ZERO = "0".repeat(40);

/** Blob ids of text or bytes, written to the object database (the file's attributes apply). */
export async function hashContent(git: Git, cwdPath: string, content: string | Uint8Array): Promise<string> {
  const r = await git.raw(["hash-object", "-w", "--stdin", `--path=${cwdPath}`], { input: content });
  if (r.code !== 0) throw new GitCommandError("hash-object", r.stderr);
  return r.stdout.trim();
}

/**
 * Each repository path's blob in HEAD and in the index (stage 0), in one `cat-file --batch-check`;
 * null when a path cannot be asked this way (a newline in it).
 */
export async function headAndIndexBlobs(git: Git, repoPaths: string[]): Promise<Map<string, { head: string | null; index: string | null }> | null> {
  if (repoPaths.some((p) => p.includes("\n"))) return null;
  const r = await git.raw(["cat-file", "--batch-check=%(objectname) %(objecttype)"], { input: repoPaths.flatMap((p) => [`HEAD:${p}`, `:0:${p}`]).join("\n") + "\n", env: { GIT_OPTIONAL_LOCKS: "0" } });
  if (r.code !== 0) return null;
  const lines = r.stdout.split("\n");
  const blobOf = (line: string | undefined): string | null => {
    const m = /^([0-9a-f]{40,64}) blob$/.exec(line ?? "");
    return m ? m[1] : null;
  };
  const out = new Map<string, { head: string | null; index: string | null }>();
  repoPaths.forEach((p, k) => out.set(p, { head: blobOf(lines[2 * k]), index: blobOf(lines[2 * k + 1]) }));
  return out;
}

/** The working-tree file's blob (written), or null when it is gone. */
export async function hashFile(git: Git, cwdPath: string): Promise<string | null> {
  const r = await git.raw(["hash-object", "-w", "--", cwdPath]);
  return r.code === 0 ? r.stdout.trim() || null : null;
}

/** Mode and blob of each path (repository paths) in HEAD and in the index (stage 0; unmerged paths are listed apart). */
export async function entriesOf(git: Git, cwdSpecs: string[]): Promise<{ head: Map<string, Entry>; index: Map<string, Entry>; unmerged: Set<string> }> {
  const head = new Map<string, Entry>();
  const index = new Map<string, Entry>();
  const unmerged = new Set<string>();
  if (cwdSpecs.length === 0) return { head, index, unmerged };
  const t = await git.raw(["ls-tree", "-r", "-z", "--full-name", "HEAD", "--", ...cwdSpecs], { env: { GIT_OPTIONAL_LOCKS: "0" } });
  if (t.code === 0) {
    for (const rec of t.stdout.split("\0")) {
      const m = /^(\d{6}) blob ([0-9a-f]+)\t(.*)$/s.exec(rec);
      if (m) head.set(m[3], { mode: m[1], sha: m[2] });
    }
  }
  const i = await git.raw(["ls-files", "-s", "-z", "--full-name", "--", ...cwdSpecs], { env: { GIT_OPTIONAL_LOCKS: "0" } });
  if (i.code === 0) {
    for (const rec of i.stdout.split("\0")) {
      const m = /^(\d{6}) ([0-9a-f]+) (\d)\t(.*)$/s.exec(rec);
      if (!m) continue;
      if (m[3] !== "0") unmerged.add(m[4]);
      else index.set(m[4], { mode: m[1], sha: m[2] });
    }
  }
  return { head, index, unmerged };
}

async function blobText(git: Git, sha: string): Promise<string | null> {
  const r = await git.raw(["cat-file", "blob", sha], { binary: true });
  if (r.code !== 0 || !r.stdoutBytes) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(r.stdoutBytes);
  } catch {
    return null;
  }
}

/** `theirs` (a blob) with the change from `base` to `ours` applied: a blob, or null when it does not apply cleanly. */
async function mergeBlobs(git: Git, base: string, ours: string, theirs: string): Promise<string | null> {
  if (base === ours) return theirs;
  if (base === theirs || ours === theirs) return ours;
  const [b, o, t] = await Promise.all([blobText(git, base), blobText(git, ours), blobText(git, theirs)]);
  if (b === null || o === null || t === null) return null;
  const merged = mergeTexts(b, t, o);
  if (merged === null) return null;
  const r = await git.raw(["hash-object", "-w", "--stdin", "--no-filters"], { input: merged });
  return r.code === 0 ? r.stdout.trim() : null;
}

/**
 * Commits our change (`blobs`) on top of HEAD without the owner's other edits; see the file's comment.
 * Throws when the commit cannot be made (lock, signing, HEAD moved): the caller keeps it pending.
 */
export async function commitOwnChange(
  git: Git,
  paths: OwnCommitPaths,
  blobs: ChangeBlobs[],
  message: string,
  identity: string[],
): Promise<OwnCommitResult> {
  const head = await git.headSha();
  const cwdSpecs = [...new Set(blobs.flatMap((b) => (b.from !== undefined ? [b.path, b.from] : [b.path])))];
  const { head: inHead, index: inIndex, unmerged } = await entriesOf(git, cwdSpecs);
  const leftOut: { path: string; why: string }[] = [];
  const commitLines: string[] = [];
  const indexLines: string[] = [];
  for (const b of blobs) {
    const rp = paths.toRepo(b.path);
    if (unmerged.has(rp)) {
      leftOut.push({ path: b.path, why: "it has unresolved merge conflicts in git" });
      continue;
    }
    const fromRp = b.from !== undefined ? paths.toRepo(b.from) : rp;
    const h = inHead.get(fromRp) ?? null;
    const i = inIndex.get(fromRp) ?? null;
    const mode = h?.mode ?? i?.mode ?? "100644";
    // What the commit gets: HEAD's version with our change applied.
    let c: string | null;
    if (b.after === null) c = null;
    else if (b.before === undefined || b.before === null || h === null || b.before === h.sha) c = b.after;
    else c = await mergeBlobs(git, b.before, b.after, h.sha);
    if (b.after !== null && c === null) {
      leftOut.push({ path: b.path, why: "it has your uncommitted edits close to the lines changed" });
      continue;
    }
    // What the owner's index gets: what they staged, with our change on top.
    let n: string | null | undefined;
    if (c === null) n = null;
    else if ((i?.sha ?? null) === (h?.sha ?? null)) n = c;
    else if (i === null) n = undefined; // they staged its removal: left as it is
    else if (b.before !== undefined && b.before !== null && i.sha === b.before) n = b.after;
    else n = h ? await mergeBlobs(git, h.sha, c, i.sha) : null;
    if (n === null && c !== null) {
      leftOut.push({ path: b.path, why: "what you staged in it overlaps the lines changed" });
      continue;
    }
    commitLines.push(c === null ? `0 ${ZERO}\t${rp}` : `${mode} ${c}\t${rp}`);
    if (n !== undefined) indexLines.push(n === null ? `0 ${ZERO}\t${rp}` : `${i?.mode ?? mode} ${n}\t${rp}`);
  }
  if (commitLines.length === 0) return { kind: "skipped", why: leftOut.map((l) => `"${l.path}": ${l.why}`).join("; ") || "no change to commit", leftOut };

  // Absolute: git reads GIT_INDEX_FILE from the top of the work tree, not from the vault folder.
  const indexFile = `${(await git.out(["rev-parse", "--absolute-git-dir"])).trim()}/vault-mcp-commit.index`;
  const env = { GIT_INDEX_FILE: indexFile };
  const step = async (args: string[], input?: string): Promise<string> => {
    const r = await git.raw(args, { env, ...(input !== undefined ? { input } : {}) });
    if (r.code !== 0) throw new GitCommandError(args[0], r.stderr || r.stdout);
    return r.stdout.trim();
  };
  await step(head ? ["read-tree", "HEAD"] : ["read-tree", "--empty"]);
  await step(["update-index", "--index-info"], commitLines.join("\n") + "\n");
  const tree = await step(["write-tree"]);
  if (head && tree === (await git.out(["rev-parse", `${head}^{tree}`])).trim()) return { kind: "skipped", why: "no change to commit", leftOut };
  // Unsigned, like every commit of ours: signing would run the program the repository names (gpg.program).
  const c = await git.raw([...identity, "commit-tree", tree, ...(head ? ["-p", head] : []), "-m", message]);
  if (c.code !== 0) throw new GitCommandError("commit", c.stderr || c.stdout);
  const sha = c.stdout.trim();
  // Compare-and-swap: a commit the owner made meanwhile is never overwritten.
  const u = await git.change(["update-ref", "-m", `commit: ${message.split("\n")[0]}`, "HEAD", sha, head ?? ZERO]);
  if (u.code !== 0) throw new GitCommandError("update-ref", u.stderr || "HEAD moved while committing");
  if (indexLines.length) {
    const r = await git.change(["update-index", "--index-info"], { input: indexLines.join("\n") + "\n" });
    if (r.code !== 0) throw new GitCommandError("update-index", `committed ${sha.slice(0, 7)}, but the index could not be updated: ${r.stderr}`);
  }
  return { kind: "committed", sha, leftOut };
}

/** A change whose commit failed, kept (in the state folder) to be committed with the next one or by git_sync. */
export interface PendingCommit {
  change: Omit<CommittedChange, "before">;
  blobs: ChangeBlobs[] | null;
  time: string;
  error: string;
}

export const PENDING_FILE = "git-pending-commits.json";

/** The pending commits, in memory and in the state store (surviving restarts). */
export class PendingCommits {
  private list: PendingCommit[] | null = null;

  constructor(private readonly store: StateStore | undefined) {}

  async all(): Promise<PendingCommit[]> {
    if (this.list === null) {
      this.list = [];
      const bytes = await this.store?.read(PENDING_FILE).catch(() => null);
      if (bytes) {
        try {
          const parsed = JSON.parse(new TextDecoder().decode(bytes)) as unknown;
          if (Array.isArray(parsed)) this.list = parsed.filter((p): p is PendingCommit => !!p && typeof p === "object" && typeof (p as PendingCommit).change?.path === "string");
        } catch {
          /* a damaged file: nothing pending */
        }
      }
    }
    return this.list;
  }

  async set(list: PendingCommit[]): Promise<void> {
    this.list = list;
    if (!this.store) return;
    if (list.length) await this.store.write(PENDING_FILE, JSON.stringify(list));
    else await this.store.remove(PENDING_FILE).catch(() => undefined);
  }
}
