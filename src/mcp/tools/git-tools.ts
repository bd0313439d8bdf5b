import { z } from "zod";
import { VaultError } from "../../core/errors";
import type { FileHistoryCommit, GitService, HistoryCommit } from "../../core/git/service";
import type { CoreServices } from "../../core/services";
import { defineTool, READ_ONLY } from "../tool";

/** The git service, or the error that says this vault is not git-backed. */
export function gitOf(services: CoreServices): GitService {
  if (!services.git) {
    throw new VaultError("unavailable", services.gitUnavailable ?? "This vault is not in a git repository, so it has no history to show.");
  }
  return services.git;
}

/** What `stats` and `config://vault` say about git. */
export const gitSummaryShape = z.object({
  git_backed: z.boolean(),
  branch: z.string().nullable().optional(),
  head: z.string().nullable().optional(),
  upstream: z.string().nullable().optional(),
  remotes: z.array(z.string()).optional(),
  clean: z.boolean().optional(),
  commit_changes: z.boolean().optional(),
  push_after_commit: z.boolean().optional(),
  last_push_error: z.string().optional(),
  pending_commits: z.array(z.object({ tool: z.string(), path: z.string(), time: z.string(), error: z.string() })).optional(),
  unavailable: z.string().optional(),
});

export async function gitSummary(services: CoreServices): Promise<z.infer<typeof gitSummaryShape>> {
  if (!services.git) return { git_backed: false, ...(services.gitUnavailable ? { unavailable: services.gitUnavailable } : {}) };
  try {
    return await services.git.status();
  } catch (e) {
    return { git_backed: true, unavailable: e instanceof Error ? e.message : String(e) };
  }
}

const changeShape = z.object({ status: z.string(), path: z.string(), from: z.string().optional() });
const commitShape = z.object({
  sha: z.string().describe("12 hex digits (get_diff's since_sha takes it)."),
  time: z.string(),
  author: z.string(),
  message: z.string().describe("The first line."),
  changes: z.array(changeShape).describe("The first files it changed (the folder's first)."),
  changes_total: z.number(),
});
const fileCommitShape = z.object({
  sha: z.string(),
  time: z.string(),
  author: z.string(),
  message: z.string(),
  change: z
    .object({ status: z.string(), path: z.string().optional(), from: z.string().optional(), added: z.number().optional(), removed: z.number().optional() })
    .describe("The file's own change: lines added and removed; path (and from) when it had another name then."),
  other_files: z.number().describe("Other files the commit changed."),
});

const when = (what: string) => z.string().optional().describe(`${what}: an ISO date/time ("2026-11-24", "2026-11-24T15:00:00Z") or "3 days ago", "2 weeks ago", "yesterday".`);

const day = (t: string) => t.slice(0, 16).replace("T", " ");

function commitLines(commits: HistoryCommit[]): string[] {
  return commits.map((c) => {
    // Modified files by name alone; other changes say what they were.
    const files = c.changes.map((ch) => (ch.status === "modified" ? ch.path : `${ch.path} (${ch.status}${ch.from ? ` from ${ch.from}` : ""})`)).join(", ");
    const more = c.changes_total > c.changes.length ? `, +${c.changes_total - c.changes.length} more` : "";
    return `${c.sha.slice(0, 7)} ${day(c.time)} ${c.author}: ${c.message} — ${files}${more}`;
  });
}

function fileCommitLines(commits: FileHistoryCommit[]): string[] {
  return commits.map((c) => {
    const ch = c.change;
    const what = [
      ...(ch.status === "modified" ? [] : [`${ch.status}${ch.from ? ` from ${ch.from}` : ""}`]),
      ...(ch.path && !ch.from ? [`as ${ch.path}`] : []),
      ...(ch.added !== undefined ? [`+${ch.added} -${ch.removed ?? 0}`] : []),
      ...(c.other_files ? [`${c.other_files} other file${c.other_files === 1 ? "" : "s"}`] : []),
    ];
    return `${c.sha.slice(0, 7)} ${day(c.time)} ${c.author}: ${c.message}${what.length ? ` (${what.join(", ")})` : ""}`;
  });
}

export const getHistoryTool = defineTool({
  name: "get_history",
  title: "Git history",
  description:
    "Commits that touched a note, file or folder (following renames), or the whole vault without a path, newest first: sha, time, author, message; for a file its own change (lines added/removed) and how many other files changed, for a folder or the vault the first files changed. Git-backed vaults only.",
  input: {
    path: z.string().optional().describe('A note, file or folder; omit for the whole vault.'),
    since: when("Only commits from"),
    until: when("Only commits up to"),
    limit: z.number().int().min(1).max(500).default(20),
  },
  output: {
    path: z.string(),
    target: z.enum(["file", "folder", "vault"]),
    commits: z.array(z.union([fileCommitShape, commitShape])),
    has_more: z.boolean(),
    previous_paths: z.array(z.string()).optional(),
    since: z.string().optional(),
    until: z.string().optional(),
  },
  annotations: READ_ONLY,
  access: "read",
  needs: "git",
  example: { path: "Projects/Plan.md", since: "2 weeks ago", limit: 10 },
  handler: async (args, { services }) => {
    const r = await gitOf(services).getHistory(args);
    const what = r.target === "vault" ? "the vault" : `"${r.path}"`;
    const head = `${r.commits.length}${r.has_more ? "+" : ""} commit${r.commits.length === 1 ? "" : "s"} touched ${what}${r.previous_paths?.length ? ` (earlier names: ${r.previous_paths.join(", ")})` : ""}:`;
    const more = r.has_more ? "\nMore commits exist: raise limit or narrow with since/until." : "";
    const lines = r.target === "file" ? fileCommitLines(r.commits as FileHistoryCommit[]) : commitLines(r.commits as HistoryCommit[]);
    return { structured: r, text: [head, ...lines].join("\n") + more };
  },
});

export const getDiffTool = defineTool({
  name: "get_diff",
  title: "Git diff of a note",
  description:
    "A note's unified diff from a commit (since_sha) or a date (since_timestamp: the last commit then) to its current text (uncommitted edits included), or per_commit: one diff per commit. Git-backed vaults only.",
  input: {
    path: z.string().describe("The note or file."),
    since_sha: z.string().optional().describe("A commit (4–40 hex digits), e.g. a short_sha from get_history."),
    since_timestamp: when("Compare with the note as it was committed at"),
    per_commit: z.boolean().optional().describe("One diff per commit that changed the note, newest first (up to limit)."),
    limit: z.number().int().min(1).max(50).default(10).describe("Commits for per_commit."),
    offset: z.number().int().min(0).default(0).describe("Start at this character of the diff text (next_offset of a cut answer)."),
    max_chars: z.number().int().min(1000).max(200_000).default(40_000),
  },
  output: {
    path: z.string(),
    since_sha: z.string().optional(),
    path_then: z.string().optional(),
    diffs: z.array(
      z.object({
        sha: z.string().optional(),
        short_sha: z.string().optional(),
        time: z.string().optional(),
        message: z.string().optional(),
        diff: z.string(),
        binary: z.object({ size_before: z.number().nullable(), size_after: z.number().nullable() }).optional(),
      }),
    ),
    truncated: z.boolean(),
    next_offset: z.number().optional(),
    total_chars: z.number(),
  },
  annotations: READ_ONLY,
  access: "read",
  needs: "git",
  example: { path: "Projects/Plan.md", since_timestamp: "1 week ago" },
  handler: async (args, { services }) => {
    const r = await gitOf(services).getDiff(args);
    const parts: string[] = [];
    if (r.since_sha) {
      const d = r.diffs[0]?.diff ?? "";
      parts.push(`"${r.path}" since ${r.since_sha.slice(0, 7)}${r.path_then ? ` (then "${r.path_then}")` : ""}: ${d ? "" : "no change."}`, ...(d ? [d] : []));
    } else {
      if (r.diffs.length === 0) parts.push(`No commit changed "${r.path}".`);
      for (const d of r.diffs) parts.push(`── ${d.short_sha} ${d.time?.slice(0, 16).replace("T", " ")} ${d.message}`, d.diff || "(no textual change)");
    }
    if (r.truncated) parts.push(`[diff cut at ${r.next_offset} of ${r.total_chars} characters: call again with offset ${r.next_offset} for the rest, or narrow it (a later since_sha, per_commit with a smaller limit)]`);
    return { structured: r, text: parts.join("\n") };
  },
});

export const getRecentChangesTool = defineTool({
  name: "get_recent_changes",
  title: "Recent changes (git)",
  description:
    "What changed in the vault lately: commits with their first files (newest first; the last 7 days unless since/until say otherwise), plus uncommitted changes in the working tree. Git-backed vaults only.",
  input: {
    since: when("From (default: 7 days ago, when until is not given either)"),
    until: when("Up to"),
    folder: z.string().optional().describe("Only this folder."),
    limit: z.number().int().min(1).max(200).default(10).describe("Commits at most."),
    include_uncommitted: z.boolean().default(true),
  },
  output: {
    commits: z.array(commitShape),
    has_more: z.boolean(),
    uncommitted: z.array(z.object({ status: z.string(), path: z.string(), from: z.string().optional(), staged: z.boolean() })),
    uncommitted_total: z.number(),
    since: z.string().optional(),
    until: z.string().optional(),
  },
  annotations: READ_ONLY,
  access: "read",
  needs: "git",
  example: { since: "3 days ago" },
  handler: async (args, { services }) => {
    const r = await gitOf(services).recentChanges(args);
    const lines = [`${r.commits.length}${r.has_more ? "+" : ""} commit${r.commits.length === 1 ? "" : "s"}${r.since ? ` since ${day(r.since)}` : ""}${r.has_more ? " (more: raise limit or narrow since/until)" : ""}:`, ...commitLines(r.commits)];
    if (args.include_uncommitted !== false) {
      lines.push(r.uncommitted_total ? `Uncommitted (${r.uncommitted_total}):` : "No uncommitted changes.");
      for (const u of r.uncommitted) lines.push(`  ${u.status}${u.staged ? " (staged)" : ""} ${u.path}${u.from ? ` (from ${u.from})` : ""}`);
      if (r.uncommitted_total > r.uncommitted.length) lines.push(`  … ${r.uncommitted_total - r.uncommitted.length} more`);
    }
    return { structured: r, text: lines.join("\n") };
  },
});

export const gitSyncTool = defineTool({
  name: "git_sync",
  title: "Sync with the git remote",
  description:
    "Pulls (fast-forward, or rebase when clean; a file changed on both sides keeps the local version and gets the remote's beside it) and/or pushes. dry_run only fetches and tells what would happen.",
  input: {
    direction: z.enum(["pull", "push", "both"]).default("both"),
    dry_run: z.boolean().default(false),
  },
  output: {
    status: z.enum(["up_to_date", "pulled", "pushed", "pulled_and_pushed", "kept_both", "push_rejected", "would_change", "no_remote", "blocked", "failed"]),
    direction: z.enum(["pull", "push", "both"]),
    dry_run: z.boolean(),
    remote: z.string().nullable(),
    branch: z.string().nullable(),
    pull: z.object({ action: z.enum(["none", "fast_forward", "rebase", "merge_keeping_both"]), commits: z.number(), files: z.array(z.string()), files_total: z.number() }).optional(),
    push: z.object({ commits: z.number(), pushed: z.boolean() }).optional(),
    conflicts: z.array(z.object({ path: z.string(), remote_copy: z.string().nullable(), kind: z.enum(["both_changed", "deleted_here", "deleted_on_remote"]) })),
    message: z.string(),
  },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  access: "write",
  needs: "git",
  example: { direction: "both", dry_run: true },
  handler: async (args, { services }) => {
    const r = await gitOf(services).sync(args);
    const conflicts = r.conflicts.map((c) =>
      r.dry_run
        ? `  ${c.path}: would keep the local version${c.remote_copy ? `; the remote's would go to "${c.remote_copy}"` : ` (${c.kind.replace(/_/g, " ")})`}`
        : `  ${c.path}: kept the local version${c.remote_copy ? `; the remote's is in "${c.remote_copy}"` : ` (${c.kind.replace(/_/g, " ")})`}`,
    );
    return { structured: r, text: [`${r.status}: ${r.message}`, ...conflicts].join("\n") };
  },
});

export const gitTools = [getHistoryTool, getDiffTool, getRecentChangesTool, gitSyncTool];
