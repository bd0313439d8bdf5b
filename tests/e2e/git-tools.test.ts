import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";
import { bareRemote, cloneOf, commitAll, git, initRepo, put } from "../support/git-repo";

/**
 * The git tools over MCP on real repositories made with git: history across renames, diffs by sha,
 * by time and per commit, recent changes, a commit per change holding only the touched files,
 * push, and git_sync (fast-forward, rebase, a real conflict keeping both sides). Hidden paths never
 * show. Runs on both adapters (the obsidian-adapter project runs it again).
 */

/** Lines that never change, so git sees the moved note as a rename. */
const KEEP = Array.from({ length: 12 }, (_, i) => `kept line ${i}\n`).join("");

const GIT_TOOLS = ["get_history", "get_diff", "get_recent_changes"];

/** Commit ids as the history tools give them (12 hex digits). */
const short = (...shas: string[]) => shas.map((s) => s.slice(0, 12));

function disk(root: string, p: string): string {
  return readFileSync(path.join(root, ...p.split("/")), "utf8");
}

async function serve(root: string, opts: Parameters<typeof startTestServer>[1] = {}): Promise<{ s: TestServer; client: Client }> {
  const s = await startTestServer(root, { git: {}, ...opts });
  return { s, client: await s.connect() };
}

describe("a vault that is not a repository", () => {
  test("has no git tools, and stats says so", async () => {
    const root = makeTempVault({ "A.md": "# A\n" });
    const { s, client } = await serve(root);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      for (const n of [...GIT_TOOLS, "git_sync"]) expect(names).not.toContain(n);
      const stats = await ok(client, "stats");
      expect(stats.git).toEqual({ git_backed: false });
      expect(textOf(await call(client, "get_history", {}))).toMatch(/not found|unknown tool/i);
    } finally {
      await s.close();
      removeTree(root);
    }
  });

  test("a missing git program gives a clear message, never a crash", async () => {
    const root = initRepo(makeTempVault({ "A.md": "# A\n" }));
    commitAll(root, "first", "2026-01-01T10:00:00Z");
    const { s, client } = await serve(root, { git: { program: path.join(root, "no-such-git") } });
    try {
      const stats = await ok(client, "stats");
      expect(stats.git.git_backed).toBe(false);
      expect(stats.git.unavailable).toMatch(/could not be started: it is not installed or not on the PATH/);
      expect(stats.git.unavailable).not.toContain(root);
      expect((await client.listTools()).tools.map((t) => t.name)).not.toContain("get_history");
    } finally {
      await s.close();
      removeTree(root);
    }
  });
});

describe("history, diffs and recent changes", () => {
  let root: string;
  let s: TestServer;
  let client: Client;
  const sha: Record<string, string> = {};

  beforeAll(async () => {
    root = initRepo(makeTempVault({}));
    sha.c1 = commitAll(root, "Start the notes", "2026-01-01T10:00:00Z", {
      "Notes/A.md": "# A\n\nline one\nline two\n" + KEEP,
      "Notes/B.md": "# B\n\nSee [[A]].\n",
      ".obsidian/app.json": "{}\n",
      "Private/Secret.md": "secret one\n",
      "img.png": new Uint8Array([137, 80, 78, 71, 0, 2, 3]),
    });
    sha.c2 = commitAll(root, "Second line changed", "2026-02-01T10:00:00Z", { "Notes/A.md": "# A\n\nline one\nline 2\n" + KEEP });
    // A rename (with the hidden config changing in the same commit).
    put(root, { "Archive/.keep": "" });
    git(root, ["mv", "Notes/A.md", "Archive/A2.md"]);
    sha.c3 = commitAll(root, "Archive A", "2026-03-01T10:00:00Z", { ".obsidian/app.json": '{"a":1}\n' });
    sha.c4 = commitAll(root, "More on A, and the secret", "2026-04-01T10:00:00Z", {
      "Archive/A2.md": "# A\n\nline one\nline 2\nline three\n" + KEEP,
      "Private/Secret.md": "secret two\n",
      "img.png": new Uint8Array([137, 80, 78, 71, 0, 9, 9, 9, 9]),
    });
    sha.c5 = commitAll(root, "Only the config", "2026-05-01T10:00:00Z", { ".obsidian/app.json": '{"a":2}\n' });
    // Uncommitted: a modified note, a new note, a new hidden file.
    put(root, { "Archive/A2.md": "# A\n\nline one\nline 2\nline three\nuncommitted four\n" + KEEP, "Notes/New.md": "new\n", "Private/Draft.md": "x\n" });
    ({ s, client } = await serve(root, { hidden: ["Private"] }));
  });
  afterAll(async () => {
    await s.close();
    removeTree(root);
  });

  test("the git tools are listed (read-only), git_sync not without write mode", async () => {
    const tools = (await client.listTools()).tools;
    const names = tools.map((t) => t.name);
    for (const n of GIT_TOOLS) expect(names).toContain(n);
    expect(names).not.toContain("git_sync");
    expect(tools.find((t) => t.name === "get_history")!.annotations).toMatchObject({ readOnlyHint: true });
  });

  test("stats and config://vault say the vault is git-backed: branch, no remote, not clean", async () => {
    const stats = await ok(client, "stats");
    expect(stats.git).toMatchObject({ git_backed: true, branch: "main", upstream: null, remotes: [], clean: false, head: sha.c5, commit_changes: false });
    const res = await client.readResource({ uri: "config://vault" });
    const cfg = JSON.parse((res.contents[0] as { text: string }).text);
    expect(cfg.git).toMatchObject({ git_backed: true, branch: "main" });
  });

  test("a note's history follows it across the rename, newest first, with no hidden path anywhere", async () => {
    const r = await ok(client, "get_history", { path: "Archive/A2.md" });
    expect(r.target).toBe("file");
    expect(r.commits.map((c: { sha: string }) => c.sha)).toEqual(short(sha.c4, sha.c3, sha.c2, sha.c1));
    expect(r.previous_paths).toEqual(["Notes/A.md"]);
    // Each commit: the note's own change (lines added and removed, its name then when it had another), and how many other files.
    const rename = r.commits[1];
    expect(rename).toEqual({ sha: sha.c3.slice(0, 12), time: "2026-03-01T10:00:00Z", author: "Test Author", message: "Archive A", change: { status: "renamed", from: "Notes/A.md", added: 0, removed: 0 }, other_files: 0 });
    expect(r.commits[0]).toMatchObject({ sha: sha.c4.slice(0, 12), message: "More on A, and the secret", change: { status: "modified", added: 1, removed: 0 }, other_files: 1 });
    expect(r.commits[2]).toMatchObject({ change: { status: "modified", path: "Notes/A.md", added: 1, removed: 1 }, other_files: 0 });
    expect(r.commits[3]).toMatchObject({ change: { status: "added", path: "Notes/A.md", added: 16, removed: 0 }, other_files: 2 });
    const text = textOf(await call(client, "get_history", { path: "Archive/A2.md" }));
    expect(text).toContain(`${sha.c3.slice(0, 7)} 2026-03-01 10:00 Test Author: Archive A (renamed from Notes/A.md, +0 -0)`);
    expect(text).toContain("More on A, and the secret (+1 -0, 1 other file)");
    expect(text).toContain("Second line changed (as Notes/A.md, +1 -1)");
    const json = JSON.stringify(r);
    expect(json).not.toMatch(/\.obsidian|Private|Secret|\.keep/);
  });

  test("the whole vault's history leaves out commits that only touched hidden files", async () => {
    const r = await ok(client, "get_history", {});
    expect(r.target).toBe("vault");
    expect(r.commits.map((c: { sha: string }) => c.sha)).toEqual(short(sha.c4, sha.c3, sha.c2, sha.c1));
    expect(JSON.stringify(r)).not.toMatch(/\.obsidian|Private|Secret/);
    expect(r.commits[3].changes.map((c: { path: string }) => c.path).sort()).toEqual(["Notes/A.md", "Notes/B.md", "img.png"]);
  });

  test("since/until (ISO dates and git expressions), limit and has_more; a folder's history", async () => {
    const r = await ok(client, "get_history", { path: "Archive/A2.md", since: "2026-02-15", until: "2026-03-15T00:00:00Z" });
    expect(r.commits.map((c: { sha: string }) => c.sha)).toEqual(short(sha.c3));
    expect(r.since).toMatch(/^2026-02-1[45]T/);
    const old = await ok(client, "get_history", { path: "Archive/A2.md", until: "100 years ago" });
    expect(old.commits).toEqual([]);
    const lim = await ok(client, "get_history", { path: "Archive/A2.md", limit: 2 });
    expect(lim.commits).toHaveLength(2);
    expect(lim.has_more).toBe(true);
    const folder = await ok(client, "get_history", { path: "Notes" });
    expect(folder.target).toBe("folder");
    expect(folder.commits.map((c: { sha: string }) => c.sha)).toEqual(short(sha.c3, sha.c2, sha.c1));
  });

  test("hidden paths look missing; a client's path or date can never become a git option", async () => {
    expect(await fails(client, "get_history", { path: "Private/Secret.md" })).toMatch(/No note, file or folder at "Private\/Secret.md"/);
    expect(await fails(client, "get_history", { path: ".obsidian/app.json" })).toMatch(/No note, file or folder/);
    expect(await fails(client, "get_history", { path: "Private" })).toMatch(/No note, file or folder/);
    expect(await fails(client, "get_history", { path: "--output=x.txt" })).toMatch(/No note, file or folder at "--output=x.txt"/);
    expect(await fails(client, "get_history", { since: "--all" })).toMatch(/not a date/);
    expect(await fails(client, "get_diff", { path: "Archive/A2.md", since_sha: "--help" })).toMatch(/not a commit id/);
    expect(existsSync(path.join(root, "x.txt"))).toBe(false);
  });

  test("get_diff since a commit compares with the current text (uncommitted included), naming the old path", async () => {
    const r = await ok(client, "get_diff", { path: "Archive/A2.md", since_sha: sha.c1.slice(0, 7) });
    expect(r.since_sha).toBe(sha.c1);
    expect(r.path_then).toBe("Notes/A.md");
    const d = r.diffs[0].diff as string;
    expect(d).toContain("-line two");
    expect(d).toContain("+line 2");
    expect(d).toContain("+uncommitted four");
    expect(d).toContain("rename from Notes/A.md");
  });

  test("get_diff since a time takes the last commit at or before it", async () => {
    const r = await ok(client, "get_diff", { path: "Archive/A2.md", since_timestamp: "2026-02-15T00:00:00Z" });
    expect(r.since_sha).toBe(sha.c2);
    const d = r.diffs[0].diff as string;
    expect(d).not.toContain("-line two");
    expect(d).toContain("+line three");
    expect(await fails(client, "get_diff", { path: "Archive/A2.md", since_timestamp: "2020-01-01" })).toMatch(/No commit at or before/);
    expect(await fails(client, "get_diff", { path: "Archive/A2.md", since_sha: "deadbeef" })).toMatch(/No commit "deadbeef"/);
    expect(await fails(client, "get_diff", { path: "Archive/A2.md" })).toMatch(/exactly one of since_sha/);
  });

  test("per_commit gives one diff per commit, newest first, capped by limit", async () => {
    const r = await ok(client, "get_diff", { path: "Archive/A2.md", per_commit: true, limit: 3 });
    expect(r.diffs.map((d: { sha: string }) => d.sha)).toEqual([sha.c4, sha.c3, sha.c2]);
    expect(r.diffs[0].diff).toContain("+line three");
    expect(r.diffs[2].diff).toContain("-line two");
    expect(r.diffs[2].diff).toContain("Notes/A.md");
  });

  test("a binary attachment's diff is a size summary", async () => {
    const r = await ok(client, "get_diff", { path: "img.png", since_sha: sha.c1 });
    expect(r.diffs[0].binary).toEqual({ size_before: 7, size_after: 9 });
    expect(r.diffs[0].diff).toMatch(/Binary file: 7 → 9 bytes/);
  });

  test("a long diff is cut with a notice, and offset gets the rest", async () => {
    const long = Array.from({ length: 400 }, (_, i) => `long line number ${i} with some words in it`).join("\n");
    writeFileSync(path.join(root, "Notes", "B.md"), long);
    const first = await call(client, "get_diff", { path: "Notes/B.md", since_sha: sha.c1, max_chars: 2000 });
    const r1 = first.structuredContent as Record<string, any>;
    expect(r1.truncated).toBe(true);
    expect(r1.diffs[0].diff.length).toBe(2000);
    expect(textOf(first)).toMatch(/call again with offset 2000/);
    const r2 = await ok(client, "get_diff", { path: "Notes/B.md", since_sha: sha.c1, offset: r1.next_offset, max_chars: 200_000 });
    expect(r2.truncated).toBe(false);
    expect(r1.diffs[0].diff + r2.diffs[0].diff).toHaveLength(r1.total_chars);
    git(root, ["checkout", "--", "Notes/B.md"]);
  });

  test("get_recent_changes: commits in the window with their files, plus visible uncommitted changes", async () => {
    const r = await ok(client, "get_recent_changes", { since: "2026-02-15" });
    expect(r.commits.map((c: { sha: string }) => c.sha)).toEqual(short(sha.c4, sha.c3));
    const un = r.uncommitted.map((u: { status: string; path: string }) => `${u.status} ${u.path}`).sort();
    expect(un).toEqual(["modified Archive/A2.md", "untracked Notes/New.md"]);
    expect(JSON.stringify(r)).not.toMatch(/Private|\.obsidian/);
    const none = await ok(client, "get_recent_changes", { include_uncommitted: false, limit: 1, since: "2026-01-01" });
    expect(none.commits).toHaveLength(1);
    expect(none.has_more).toBe(true);
    expect(none.uncommitted).toEqual([]);
    // Without since/until: the last 7 days (these commits are older).
    const recent = await ok(client, "get_recent_changes", {});
    expect(recent.commits).toEqual([]);
    expect(Date.now() - Date.parse(recent.since)).toBeGreaterThan(6.9 * 86_400_000);
    expect(Date.now() - Date.parse(recent.since)).toBeLessThan(7.1 * 86_400_000);
  });

  test("since/until git cannot read as a date are refused, with examples of what it can", async () => {
    for (const bad of ["banana", "2026-13-45", "2026-02-30", "next tuesday"]) {
      expect(await fails(client, "get_history", { path: "Archive/A2.md", since: bad })).toMatch(/is not a date: give an ISO date or time \("2026-11-24".*"2 weeks ago"/);
      expect(await fails(client, "get_recent_changes", { until: bad })).toMatch(/until ".*" is not a date/);
      expect(await fails(client, "get_diff", { path: "Archive/A2.md", since_timestamp: bad })).toMatch(/since_timestamp ".*" is not a date/);
    }
    expect((await ok(client, "get_history", { path: "Archive/A2.md", since: "2 Weeks ago" })).commits).toEqual([]);
    expect((await ok(client, "get_history", { path: "Archive/A2.md", until: "yesterday" })).commits).toHaveLength(4);
  });

  test("new commits made outside the server show up at the next call", async () => {
    const c6 = commitAll(root, "Outside commit", "2026-06-01T10:00:00Z", { "Notes/B.md": "# B\n\nchanged outside\n" });
    const r = await ok(client, "get_history", { path: "Notes/B.md" });
    expect(r.commits[0].sha).toBe(c6.slice(0, 12));
    // A rewrite of history (amend) is noticed too.
    git(root, ["commit", "-q", "--amend", "-m", "Outside commit, amended"], { date: "2026-06-01T10:00:00Z" });
    const r2 = await ok(client, "get_history", { path: "Notes/B.md" });
    expect(r2.commits[0].message).toBe("Outside commit, amended");
    expect(r2.commits.map((c: { sha: string }) => c.sha)).not.toContain(c6.slice(0, 12));
  });
});

describe("a commit per change made through the server", () => {
  let root: string;
  let remote: string;
  let s: TestServer;
  let client: Client;

  beforeAll(async () => {
    remote = bareRemote();
    root = initRepo(makeTempVault({}));
    commitAll(root, "first", "2026-01-01T10:00:00Z", {
      "Notes/B.md": "# B\n\nbody\n",
      "Notes/Linker.md": "See [[Target]].\n",
      "Target.md": "# Target\n",
      "Other.md": "other\n",
      "Staged.md": "staged\n",
      "Gone.md": "bye\n",
      "Mixed.md": "one\ntwo\nthree\nfour\nfive\nsix\n",
      "Close.md": "alpha\nbeta\ngamma\n",
      "Dirty.md": "# Dirty\n\nbody\n",
      "DirtyLinker.md": "See [[Dirty]].\n\nmore\n",
    });
    git(root, ["remote", "add", "origin", remote]);
    git(root, ["push", "-q", "-u", "origin", "main"]);
    // The owner's own uncommitted work: one modified file, one staged change.
    put(root, { "Other.md": "other, edited by the owner\n", "Staged.md": "staged by the owner\n", "Loose.md": "never committed\n" });
    git(root, ["add", "Staged.md"]);
    // A hook that must not run on our commits.
    put(root, { ".git/hooks/pre-commit": "#!/bin/sh\ntouch hook-ran\n" });
    chmodSync(path.join(root, ".git", "hooks", "pre-commit"), 0o755);
    ({ s, client } = await serve(root, { write: true, git: { commit: true, push: true } }));
  });
  afterAll(async () => {
    await s.close();
    removeTree(root);
    removeTree(remote);
  });

  const head = () => git(root, ["rev-parse", "HEAD"]).trim();
  const files = (rev = "HEAD") => git(root, ["show", "--name-status", "--format=", rev]).trim().split("\n").sort();

  test("an edit is committed alone, named after tool, path and client, and pushed; the owner's work stays uncommitted", async () => {
    const r = await ok(client, "read", { path: "Notes/B.md" });
    const e = await ok(client, "edit", { path: "Notes/B.md", old_text: "body", new_text: "body, edited", if_match: r.etag });
    expect(e.commit).toMatchObject({ committed: true, sha: head(), pushed: true, message: "vault-mcp: edit Notes/B.md (vault-mcp-tests)" });
    expect(git(root, ["log", "-1", "--format=%s"]).trim()).toBe("vault-mcp: edit Notes/B.md (vault-mcp-tests)");
    expect(files()).toEqual(["M\tNotes/B.md"]);
    const status = git(root, ["status", "--porcelain"]);
    expect(status).toContain(" M Other.md");
    expect(status).toContain("M  Staged.md");
    expect(git(root, ["rev-parse", "origin/main"]).trim()).toBe(head());
    expect(git(remote, ["rev-parse", "main"]).trim()).toBe(head());
    expect(existsSync(path.join(root, "hook-ran"))).toBe(false);
    const log = await ok(client, "get_activity_log", { limit: 1 });
    expect(log.entries[0]).toMatchObject({ tool: "edit", path: "Notes/B.md", commit: head() });
  });

  test("a new note, a frontmatter change and a delete are each their own commit", async () => {
    const w = await ok(client, "write", { path: "Inbox/Idea.md", content: "idea\n" });
    expect(w.commit.committed).toBe(true);
    expect(files()).toEqual(["A\tInbox/Idea.md"]);
    await ok(client, "update_frontmatter", { path: "Inbox/Idea.md", set: { status: "new" } });
    expect(files()).toEqual(["M\tInbox/Idea.md"]);
    const d = await ok(client, "delete", { path: "Gone.md", confirm_path: "Gone.md" });
    expect(d.commit.committed).toBe(true);
    expect(files()).toEqual(["D\tGone.md"]);
    expect(git(root, ["log", "-1", "--format=%s"]).trim()).toBe("vault-mcp: delete Gone.md (vault-mcp-tests)");
    // The trash copy is the owner's local undo, not history: out of their git status, and said once.
    expect(d.trash_note).toMatch(/\.git\/info\/exclude/);
    expect(readFileSync(path.join(root, ".git", "info", "exclude"), "utf8")).toMatch(/^\/\.trash\/$/m);
    expect(git(root, ["status", "--porcelain", "--untracked-files=all"])).not.toMatch(/\.trash/);
    await ok(client, "write", { path: "Inbox/Brief.md", content: "brief\n" });
    const d2 = await ok(client, "delete", { path: "Inbox/Brief.md", confirm_path: "Inbox/Brief.md" });
    expect(d2.trash_note).toBeUndefined();
    expect(git(root, ["status", "--porcelain", "--untracked-files=all"])).not.toMatch(/\.trash/);
  });

  test("a note git never knew, edited through the server, is added and committed", async () => {
    const r = await ok(client, "read", { path: "Loose.md" });
    const e = await ok(client, "edit", { path: "Loose.md", old_text: "never", new_text: "now", if_match: r.etag });
    expect(e.commit.committed).toBe(true);
    expect(files()).toEqual(["A\tLoose.md"]);
  });

  test("a rename commits both ends and the notes whose links it rewrote", async () => {
    const r = await ok(client, "rename", { path: "Target.md", new_path: "Moved/Goal.md" });
    expect(r.links_updated).toBe(1);
    expect(r.commit.committed).toBe(true);
    expect(disk(root, "Notes/Linker.md")).toBe("See [[Goal]].\n");
    expect(files()).toEqual(["M\tNotes/Linker.md", "R100\tTarget.md\tMoved/Goal.md"]);
    expect(git(root, ["log", "-1", "--format=%s"]).trim()).toBe("vault-mcp: rename Target.md → Moved/Goal.md (vault-mcp-tests)");
    const h = await ok(client, "get_history", { path: "Moved/Goal.md" });
    expect(h.previous_paths).toEqual(["Target.md"]);
    const status = git(root, ["status", "--porcelain"]);
    expect(status).toContain(" M Other.md");
    expect(status).toContain("M  Staged.md");
  });

  test("a push the remote refuses is reported in the result and in stats, the commit kept", async () => {
    const other = cloneOf(remote);
    try {
      commitAll(other, "elsewhere", "2026-07-01T10:00:00Z", { "Elsewhere.md": "x\n" });
      git(other, ["push", "-q", "origin", "main"]);
      const w = await call(client, "write", { path: "Inbox/Second.md", content: "two\n" });
      const sc = w.structuredContent as { commit: { committed: boolean; pushed: boolean; push_error: string } };
      expect(sc.commit).toMatchObject({ committed: true, pushed: false });
      expect(sc.commit.push_error).toMatch(/git_sync/);
      expect(textOf(w)).toMatch(/Committed [0-9a-f]{7}\. Committed but not pushed/);
      expect((await ok(client, "stats")).git.last_push_error).toMatch(/git_sync/);
    } finally {
      removeTree(other);
    }
  });

  test("a held index.lock is waited for; one held too long fails the commit, not the change", async () => {
    const lock = path.join(root, ".git", "index.lock");
    writeFileSync(lock, "");
    setTimeout(() => rmSync(lock, { force: true }), 250);
    const a = await ok(client, "write", { path: "Inbox/Locked1.md", content: "one\n" });
    expect(a.commit.committed).toBe(true);
    writeFileSync(lock, "");
    try {
      const b = await ok(client, "write", { path: "Inbox/Locked2.md", content: "two\n" });
      expect(b.commit.committed).toBe(false);
      expect(b.commit.error).toMatch(/held the repository's lock/);
      expect(disk(root, "Inbox/Locked2.md")).toBe("two\n");
    } finally {
      rmSync(lock, { force: true });
    }
    // Kept pending (stats lists it), then committed, with its own message, before the next change.
    const pending = (await ok(client, "stats")).git.pending_commits;
    expect(pending).toEqual([expect.objectContaining({ tool: "write", path: "Inbox/Locked2.md" })]);
    expect((await ok(client, "get_activity_log", { limit: 1 })).entries[0]).toMatchObject({ path: "Inbox/Locked2.md", commit_pending: true });
    const c = await ok(client, "write", { path: "Inbox/Locked3.md", content: "three\n" });
    expect(c.commit).toMatchObject({ committed: true, sha: head() });
    expect(c.commit.note).toMatch(/1 earlier change/);
    expect(git(root, ["log", "-2", "--format=%s"]).trim().split("\n")).toEqual(["vault-mcp: write Inbox/Locked3.md (vault-mcp-tests)", "vault-mcp: write Inbox/Locked2.md (vault-mcp-tests)"]);
    expect(files("HEAD~1")).toEqual(["A\tInbox/Locked2.md"]);
    const log = await ok(client, "get_activity_log", { limit: 2 });
    expect(log.entries[1]).toMatchObject({ path: "Inbox/Locked2.md", commit: git(root, ["rev-parse", "HEAD~1"]).trim() });
    expect(log.entries[1].commit_pending).toBeUndefined();
    expect((await ok(client, "stats")).git.pending_commits).toBeUndefined();
  }, 20_000);

  test("a commit that fails after staging (the branch's ref locked) leaves nothing staged and stays pending", async () => {
    // Signing cannot fail a commit of ours any more (they are unsigned: #30), so the branch ref's own
    // lock makes git fail where it did: after the change was staged, when the ref is updated.
    const refLock = path.join(root, ".git", "refs", "heads", `${git(root, ["symbolic-ref", "--short", "HEAD"]).trim()}.lock`);
    writeFileSync(refLock, "");
    try {
      const w = await ok(client, "write", { path: "Inbox/Signed.md", content: "signed\n" });
      expect(w.commit).toMatchObject({ committed: false, pending: true });
      expect(git(root, ["status", "--porcelain", "--", "Inbox/Signed.md"])).toBe("?? Inbox/Signed.md\n");
    } finally {
      rmSync(refLock, { force: true });
    }
    await ok(client, "git_sync", { direction: "pull" });
    expect(git(root, ["log", "--format=%s"])).toContain("vault-mcp: write Inbox/Signed.md (vault-mcp-tests)\n");
    expect(git(root, ["status", "--porcelain", "--", "Inbox/Signed.md"])).toBe("");
  });

  test("our commit holds only our change: the owner's staged and unstaged lines in the same note stay theirs", async () => {
    put(root, { "Mixed.md": "one, staged by the owner\ntwo\nthree\nfour\nfive\nsix\n" });
    git(root, ["add", "Mixed.md"]);
    put(root, { "Mixed.md": "one, staged by the owner\ntwo\nthree\nfour\nfive\nsix, not staged\n" });
    const r = await ok(client, "read", { path: "Mixed.md" });
    const e = await ok(client, "edit", { path: "Mixed.md", old_text: "three", new_text: "three, ours", if_match: r.etag });
    expect(e.commit).toMatchObject({ committed: true, sha: head() });
    expect(e.commit.note).toMatch(/uncommitted/);
    expect(git(root, ["show", "HEAD:Mixed.md"])).toBe("one\ntwo\nthree, ours\nfour\nfive\nsix\n");
    expect(git(root, ["show", ":Mixed.md"])).toBe("one, staged by the owner\ntwo\nthree, ours\nfour\nfive\nsix\n");
    expect(disk(root, "Mixed.md")).toBe("one, staged by the owner\ntwo\nthree, ours\nfour\nfive\nsix, not staged\n");
    expect(git(root, ["status", "--porcelain", "--", "Mixed.md"])).toBe("MM Mixed.md\n");
    expect(files()).toEqual(["M\tMixed.md"]);
  });

  test("a rename of a note with the owner's uncommitted edits commits the rename alone; a rewritten note with their edits stays out, said", async () => {
    put(root, { "Dirty.md": "# Dirty\n\nbody, the owner's\n", "DirtyLinker.md": "See [[Dirty]].\n\nmore, the owner's\n" });
    const r = await ok(client, "rename", { path: "Dirty.md", new_path: "Renamed.md" });
    expect(r.commit).toMatchObject({ committed: true, sha: head() });
    expect(r.commit.note).toMatch(/"DirtyLinker\.md"/);
    expect(files()).toEqual(["R100\tDirty.md\tRenamed.md"]);
    expect(git(root, ["show", "HEAD:Renamed.md"])).toBe("# Dirty\n\nbody\n");
    expect(disk(root, "Renamed.md")).toBe("# Dirty\n\nbody, the owner's\n");
    expect(disk(root, "DirtyLinker.md")).toBe("See [[Renamed]].\n\nmore, the owner's\n");
    const status = git(root, ["status", "--porcelain", "--", "Renamed.md", "Dirty.md", "DirtyLinker.md"]);
    expect(status).toBe(" M DirtyLinker.md\n M Renamed.md\n");
  });

  test("a change next to the owner's uncommitted edits is not committed, and the answer says so", async () => {
    put(root, { "Close.md": "alpha\nbeta, the owner's\ngamma\n" });
    const headBefore = head();
    const r = await ok(client, "read", { path: "Close.md" });
    const e = await call(client, "edit", { path: "Close.md", old_text: "gamma", new_text: "gamma, ours", if_match: r.etag });
    const sc = e.structuredContent as { commit: { committed: boolean; skipped: string } };
    expect(sc.commit.committed).toBe(false);
    expect(sc.commit.skipped).toMatch(/uncommitted edits/);
    expect(textOf(e)).toMatch(/Not committed: the note has your uncommitted edits/);
    expect(head()).toBe(headBefore);
    expect(git(root, ["show", "HEAD:Close.md"])).toBe("alpha\nbeta\ngamma\n");
    expect(git(root, ["status", "--porcelain", "--", "Close.md"])).toBe(" M Close.md\n");
  });
});

describe("git_sync and a vault whose file watcher is slow", () => {
  test("answers once the vault lists what the pull added and no longer lists what it deleted", async () => {
    const remote = bareRemote();
    const seed = cloneOf(remote);
    commitAll(seed, "seed", "2026-01-01T10:00:00Z", { "Kept.md": "kept\n", "Gone.md": "gone soon\n" });
    git(seed, ["push", "-q", "origin", "main"]);
    const root = cloneOf(remote);
    // The watcher looks 400 ms after a change (Obsidian's can be as slow on a busy machine).
    const { s, client } = await serve(root, { write: true, watch: true, watchDelayMs: 400, git: { commit: true } });
    try {
      git(seed, ["rm", "-q", "Gone.md"]);
      commitAll(seed, "elsewhere", "2026-02-01T10:00:00Z", { "New note.md": "written elsewhere\n" });
      git(seed, ["push", "-q", "origin", "main"]);
      expect(await ok(client, "git_sync", { direction: "pull" })).toMatchObject({ status: "pulled", pull: { action: "fast_forward", commits: 1 } });
      // At once: no "No note or file", and the deleted note is not listed.
      expect((await ok(client, "read", { path: "New note.md" })).body).toBe("written elsewhere\n");
      expect(textOf(await call(client, "read", { path: "Gone.md" }))).toMatch(/No note or file/);
      expect((await ok(client, "list_documents", {})).items.map((i: { path: string }) => i.path)).toEqual(["Kept.md", "New note.md"]);
    } finally {
      await s.close();
      for (const d of [root, seed, remote]) removeTree(d);
    }
  });
});

describe("git_sync", () => {
  let remote: string;
  let other: string;
  let root: string;
  let s: TestServer;
  let client: Client;
  const today = new Date().toISOString().slice(0, 10);

  beforeAll(async () => {
    remote = bareRemote();
    const seed = cloneOf(remote);
    commitAll(seed, "seed", "2026-01-01T10:00:00Z", { "X.md": "x1\n", "C.md": "c base\n", "D.md": "d base\n", "E.md": "e base\n", "S.md": "s base\n", "U.md": "u base\n" });
    git(seed, ["push", "-q", "origin", "main"]);
    removeTree(seed);
    root = cloneOf(remote);
    other = cloneOf(remote);
    // Watching, as headless servers do: git changes files behind the server's back.
    ({ s, client } = await serve(root, { write: true, watch: true, git: { commit: true } }));
  });
  afterAll(async () => {
    await s.close();
    for (const d of [root, other, remote]) removeTree(d);
  });

  const otherCommits = (files: Record<string, string>, msg: string) => {
    git(other, ["pull", "-q", "--rebase", "origin", "main"]);
    commitAll(other, msg, "2026-02-01T10:00:00Z", files);
    git(other, ["push", "-q", "origin", "main"]);
  };

  test("dry_run fetches and says what would happen, changing nothing", async () => {
    otherCommits({ "X.md": "x2\n" }, "x2 elsewhere");
    const before = git(root, ["rev-parse", "HEAD"]);
    const r = await ok(client, "git_sync", { direction: "both", dry_run: true });
    expect(r).toMatchObject({ status: "would_change", remote: "origin/main", branch: "main", pull: { action: "fast_forward", commits: 1, files: ["X.md"] } });
    expect(git(root, ["rev-parse", "HEAD"])).toBe(before);
    expect(disk(root, "X.md")).toBe("x1\n");
  });

  test("pull fast-forwards", async () => {
    const r = await ok(client, "git_sync", { direction: "pull" });
    expect(r).toMatchObject({ status: "pulled", pull: { action: "fast_forward", commits: 1 }, conflicts: [] });
    expect(disk(root, "X.md")).toBe("x2\n");
    expect((await ok(client, "git_sync", { direction: "pull" })).status).toBe("up_to_date");
  });

  test("local commits are rebased when no file changed on both sides, then pushed", async () => {
    const r0 = await ok(client, "read", { path: "D.md" });
    await ok(client, "edit", { path: "D.md", old_text: "d base", new_text: "d local", if_match: r0.etag });
    otherCommits({ "E.md": "e remote\n" }, "e elsewhere");
    const r = await ok(client, "git_sync", { direction: "both" });
    expect(r).toMatchObject({ status: "pulled_and_pushed", pull: { action: "rebase", commits: 1 }, push: { commits: 1, pushed: true } });
    expect(git(root, ["log", "--format=%s", "-2"]).trim().split("\n")).toEqual(["vault-mcp: edit D.md (vault-mcp-tests)", "e elsewhere"]);
    expect(git(remote, ["rev-parse", "main"])).toBe(git(root, ["rev-parse", "HEAD"]));
    expect(disk(root, "E.md")).toBe("e remote\n");
  });

  test("a rebase leaves the owner's staged and unstaged work as it was; the activity log's shas follow the rebased commits", async () => {
    put(root, { "S.md": "s staged by the owner\n", "U.md": "u edited by the owner\n", "New.md": "staged new file\n" });
    git(root, ["add", "S.md", "New.md"]);
    put(root, { "S.md": "s staged, then edited again\n" });
    const statusBefore = git(root, ["status", "--porcelain"]);
    expect(statusBefore).toContain("MM S.md");
    const r0 = await ok(client, "read", { path: "D.md" });
    await ok(client, "edit", { path: "D.md", old_text: "d local", new_text: "d local again", if_match: r0.etag });
    otherCommits({ "E.md": "e remote again\n" }, "e elsewhere again");
    const r = await ok(client, "git_sync", { direction: "both" });
    expect(r).toMatchObject({ status: "pulled_and_pushed", pull: { action: "rebase" } });
    expect(git(root, ["status", "--porcelain"])).toBe(statusBefore);
    expect(git(root, ["show", ":S.md"])).toBe("s staged by the owner\n");
    expect(disk(root, "S.md")).toBe("s staged, then edited again\n");
    // Every sha in the activity log is on the branch (the rebase gave our commits new ones).
    const log = await ok(client, "get_activity_log", { limit: 50 });
    const shas = (log.entries as { commit?: string }[]).map((e) => e.commit).filter((c): c is string => !!c);
    expect(shas.length).toBeGreaterThanOrEqual(2);
    for (const sha of shas) expect(git(root, ["branch", "--contains", sha, "--format=%(refname:short)"]).trim()).toBe("main");
    expect(shas[0]).toBe(git(root, ["rev-parse", "HEAD"]).trim());
    git(root, ["reset", "-q", "--", "S.md", "New.md"]);
    git(root, ["checkout", "--", "S.md", "U.md"]);
    rmSync(path.join(root, "New.md"));
  });

  test("push refused because the remote moved says to pull first", async () => {
    const r0 = await ok(client, "read", { path: "D.md" });
    await ok(client, "edit", { path: "D.md", old_text: "d local", new_text: "d local 2", if_match: r0.etag });
    otherCommits({ "X.md": "x3\n" }, "x3 elsewhere");
    const r = await call(client, "git_sync", { direction: "push" });
    expect((r.structuredContent as Record<string, unknown>).status).toBe("push_rejected");
    expect(textOf(r)).toMatch(/pull first/);
    expect((await ok(client, "git_sync", { direction: "both" })).status).toBe("pulled_and_pushed");
  });

  test("an uncommitted local edit and a remote change to the same note: both kept, byte for byte", async () => {
    otherCommits({ "C.md": "c from the other machine\n" }, "c elsewhere");
    put(root, { "C.md": "c edited here, not committed\n" });
    // A dry run says what it would do, in those words.
    const dry = textOf(await call(client, "git_sync", { direction: "pull", dry_run: true }));
    expect(dry).toMatch(/C\.md: would keep the local version; the remote's would go to "C \(conflict/);
    expect(dry).not.toMatch(/kept|is in/);
    const r = await ok(client, "git_sync", { direction: "pull" });
    const copy = `C (conflict ${today} from origin).md`;
    expect(r).toMatchObject({ status: "kept_both", pull: { action: "fast_forward" }, conflicts: [{ path: "C.md", remote_copy: copy, kind: "both_changed" }] });
    expect(disk(root, "C.md")).toBe("c edited here, not committed\n");
    expect(disk(root, copy)).toBe("c from the other machine\n");
    expect(git(root, ["show", "HEAD:C.md"])).toBe("c from the other machine\n");
    git(root, ["checkout", "--", "C.md"]);
    await ok(client, "delete", { path: copy, confirm_path: copy });
  });

  test("a fast-forward over the owner's staged edit of a note the remote changed too: both kept, and what they staged stays staged", async () => {
    otherCommits({ "C.md": "c from the other machine, again\n" }, "c elsewhere again");
    put(root, { "C.md": "c edited here and staged\n", "Q.md": "q staged, the remote never touched it\n" });
    git(root, ["add", "C.md", "Q.md"]);
    const r = await ok(client, "git_sync", { direction: "pull" });
    const copy = `C (conflict ${today} from origin).md`;
    expect(r).toMatchObject({ status: "kept_both", pull: { action: "fast_forward" }, conflicts: [{ path: "C.md", remote_copy: copy }] });
    expect(git(root, ["show", "HEAD:C.md"])).toBe("c from the other machine, again\n");
    expect(disk(root, copy)).toBe("c from the other machine, again\n");
    // Their staged versions are staged still, against the new HEAD.
    expect(git(root, ["show", ":C.md"])).toBe("c edited here and staged\n");
    expect(git(root, ["show", ":Q.md"])).toBe("q staged, the remote never touched it\n");
    expect(git(root, ["status", "--porcelain", "--", "C.md", "Q.md"])).toBe("M  C.md\nA  Q.md\n");
    git(root, ["reset", "-q", "--", "C.md", "Q.md"]);
    git(root, ["checkout", "--", "C.md"]);
    rmSync(path.join(root, "Q.md"));
    await ok(client, "delete", { path: copy, confirm_path: copy });
    // C.md as the next test expects it.
    otherCommits({ "C.md": "c from the other machine\n" }, "c as it was");
    expect((await ok(client, "git_sync", { direction: "both" })).status).toMatch(/^pulled/);
  });

  test("a local commit and a remote commit to the same note: a merge keeps the local version, the remote's beside it, and pushes", async () => {
    const r0 = await ok(client, "read", { path: "C.md" });
    await ok(client, "edit", { path: "C.md", old_text: "c from the other machine", new_text: "c committed here", if_match: r0.etag });
    otherCommits({ "C.md": "c committed there\n", "X.md": "x4\n" }, "c and x elsewhere");
    const r = await ok(client, "git_sync", { direction: "both" });
    const copy = `C (conflict ${today} from origin).md`;
    expect(r).toMatchObject({ status: "kept_both", pull: { action: "merge_keeping_both" }, push: { pushed: true }, conflicts: [{ path: "C.md", remote_copy: copy }] });
    expect(disk(root, "C.md")).toBe("c committed here\n");
    expect(disk(root, copy)).toBe("c committed there\n");
    expect(disk(root, "X.md")).toBe("x4\n");
    expect(git(root, ["show", "HEAD:C.md"])).toBe("c committed here\n");
    expect(git(root, ["rev-list", "--parents", "-1", "HEAD"]).trim().split(" ")).toHaveLength(3);
    expect(git(remote, ["rev-parse", "main"])).toBe(git(root, ["rev-parse", "HEAD"]));
    // The remote's version is committed with the merge: the other clone gets both sides at its pull.
    expect(git(root, ["show", `HEAD:${copy}`])).toBe("c committed there\n");
    expect(git(root, ["status", "--porcelain", "--", copy])).toBe("");
    git(other, ["pull", "-q", "--rebase", "origin", "main"]);
    expect(disk(other, "C.md")).toBe("c committed here\n");
    expect(disk(other, copy)).toBe("c committed there\n");
  });

  test("a repository without a remote says so", async () => {
    const lone = initRepo(makeTempVault({ "A.md": "a\n" }));
    commitAll(lone, "a", "2026-01-01T10:00:00Z");
    const { s: s2, client: c2 } = await serve(lone, { write: true });
    try {
      const r = await ok(c2, "git_sync", {});
      expect(r.status).toBe("no_remote");
      expect(r.message).toMatch(/git remote add/);
    } finally {
      await s2.close();
      removeTree(lone);
    }
  });
});

describe("a vault in a folder of a larger repository", () => {
  let top: string;
  let root: string;
  let s: TestServer;
  let client: Client;

  beforeAll(async () => {
    top = initRepo(makeTempVault({}));
    commitAll(top, "both", "2026-01-01T10:00:00Z", { "vault/Notes/A.md": "# A\n\none\n", "code/main.c": "int main;\n", "README.md": "top\n" });
    commitAll(top, "code only", "2026-02-01T10:00:00Z", { "code/main.c": "int main(void);\n" });
    commitAll(top, "note", "2026-03-01T10:00:00Z", { "vault/Notes/A.md": "# A\n\ntwo\n", "README.md": "top 2\n" });
    root = path.join(top, "vault");
    ({ s, client } = await serve(root, { write: true, git: { commit: true } }));
  });
  afterAll(async () => {
    await s.close();
    removeTree(top);
  });

  test("history and diffs speak vault paths; files outside the vault never show", async () => {
    const h = await ok(client, "get_history", {});
    expect(h.commits.map((c: { message: string }) => c.message)).toEqual(["note", "both"]);
    expect(JSON.stringify(h)).not.toMatch(/main\.c|README|vault\//);
    const n = await ok(client, "get_history", { path: "Notes/A.md" });
    expect(n.commits).toHaveLength(2);
    put(root, { "Notes/A.md": "# A\n\nthree\n" });
    const d = await ok(client, "get_diff", { path: "Notes/A.md", per_commit: true });
    expect(d.diffs[0].diff).toContain("--- a/Notes/A.md");
    expect(d.diffs[0].diff).not.toContain("vault/");
    const since = await ok(client, "get_diff", { path: "Notes/A.md", since_sha: n.commits[1].sha });
    expect(since.diffs[0].diff).toContain("+++ b/Notes/A.md");
    expect(since.diffs[0].diff).toContain("+three");
    const recent = await ok(client, "get_recent_changes", {});
    expect(recent.uncommitted).toEqual([{ status: "modified", path: "Notes/A.md", staged: false }]);
  });

  test("a change is committed under the vault's folder, nothing else", async () => {
    put(top, { "code/main.c": "dirty outside the vault\n" });
    const w = await ok(client, "write", { path: "Notes/B.md", content: "b\n" });
    expect(w.commit.committed).toBe(true);
    expect(git(top, ["show", "--name-only", "--format=", "HEAD"]).trim()).toBe("vault/Notes/B.md");
    expect(git(top, ["status", "--porcelain"])).toContain(" M code/main.c");
  });

  test("only our change is committed beside the owner's staged edit, and a delete keeps the vault's trash out of status", async () => {
    await ok(client, "write", { path: "Notes/M.md", content: "m1\nm2\nm3\nm4\nm5\n" });
    put(root, { "Notes/M.md": "m1, the owner's\nm2\nm3\nm4\nm5\n" });
    git(top, ["add", "vault/Notes/M.md"]);
    const r = await ok(client, "read", { path: "Notes/M.md" });
    const e = await ok(client, "edit", { path: "Notes/M.md", old_text: "m5", new_text: "m5, ours", if_match: r.etag });
    expect(e.commit).toMatchObject({ committed: true });
    expect(git(top, ["show", "HEAD:vault/Notes/M.md"])).toBe("m1\nm2\nm3\nm4\nm5, ours\n");
    expect(git(top, ["status", "--porcelain", "--", "vault/Notes/M.md"])).toBe("M  vault/Notes/M.md\n");
    await ok(client, "delete", { path: "Notes/B.md", confirm_path: "Notes/B.md" });
    expect(readFileSync(path.join(top, ".git", "info", "exclude"), "utf8")).toMatch(/^\/vault\/\.trash\/$/m);
    expect(git(top, ["status", "--porcelain", "--untracked-files=all"])).not.toMatch(/\.trash/);
  });
});

test("a repository above the vault that tracks none of its files (a home folder in git) does not make it git-backed", async () => {
  const top = initRepo(makeTempVault({}));
  commitAll(top, "dotfiles", "2026-01-01T10:00:00Z", { ".bashrc": "x\n" });
  put(top, { "Documents/Vault/A.md": "# A\n" });
  const { s, client } = await serve(path.join(top, "Documents", "Vault"));
  try {
    expect((await ok(client, "stats")).git).toEqual({ git_backed: false });
  } finally {
    await s.close();
    removeTree(top);
  }
});

describe("programs a repository's configuration names never run", () => {
  /**
   * A marker program: configured every way a repository can name a program, it leaves a file named
   * after the way it was started in `marks` (and, as a filter, turns "plain" into "FILTERED").
   */
  let marks: string;
  let mark: string;
  const HOOKS = ["pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "post-merge", "pre-push", "pre-rebase", "post-rewrite", "reference-transaction", "pre-auto-gc", "post-index-change", "fsmonitor-watchman"];

  beforeAll(() => {
    marks = makeTempVault({}, "vault-mcp-marks-");
    mark = path.join(marks, "mark.sh");
    writeFileSync(mark, `#!/bin/sh\ntouch "${marks}/ran-$1"\ncase "$1" in *clean|*smudge) sed 's/plain/FILTERED/' ;; *) exit 1 ;; esac\n`);
    chmodSync(mark, 0o755);
  });
  afterAll(() => removeTree(marks));

  beforeEach(() => {
    for (const f of readdirSync(marks)) if (f.startsWith("ran-")) rmSync(path.join(marks, f));
  });
  /** The test's own pushes from the other clone leave the remote's hooks alone. */
  const NO_REMOTE_HOOKS = "--receive-pack=git -c core.hooksPath=/dev/null receive-pack";
  const ran = () => readdirSync(marks).filter((f) => f.startsWith("ran-")).sort();
  const blob = (root: string, rev: string) => git(root, ["cat-file", "blob", rev]);

  /** Every way a repository's own configuration and attributes can name a program. */
  function arm(root: string, signing: "openpgp" | "ssh"): void {
    put(root, {
      ".git/extra.cfg": `[filter "included"]\n\tclean = ${mark} included-clean\n\tsmudge = ${mark} included-smudge\n`,
      ".git/info/attributes": "*.txt filter=included\n",
    });
    const cfg: [string, string][] = [
      ["include.path", "extra.cfg"],
      ["filter.evil.clean", `${mark} filter-clean`],
      ["filter.evil.smudge", `${mark} filter-smudge`],
      ["filter.evil.required", "true"],
      ["filter.proc.process", `${mark} filter-process`],
      ["diff.drv.textconv", `${mark} textconv`],
      ["diff.drv.command", `${mark} diff-command`],
      ["diff.external", `${mark} diff-external`],
      ["merge.mrg.driver", `${mark} merge-driver %A`],
      ["merge.default", "mrg"],
      ["commit.gpgSign", "true"],
      ["tag.gpgSign", "true"],
      ["push.gpgSign", "true"],
      ["merge.verifySignatures", "true"],
      ...(signing === "openpgp"
        ? ([["gpg.program", `${mark} gpg`], ["gpg.openpgp.program", `${mark} gpg-openpgp`]] as [string, string][])
        : ([["gpg.format", "ssh"], ["gpg.ssh.program", `${mark} gpg-ssh`], ["gpg.ssh.defaultKeyCommand", `${mark} gpg-ssh-key`]] as [string, string][])),
      ["core.editor", `${mark} editor`],
      ["sequence.editor", `${mark} sequence-editor`],
      ["core.pager", `${mark} pager`],
      ["core.fsmonitor", `${mark} fsmonitor`],
      ["core.askPass", `${mark} askpass`],
      ["credential.helper", `${mark} credential`],
      ["core.sshCommand", `${mark} ssh`],
      ["core.gitProxy", `${mark} git-proxy`],
      ["core.alternateRefsCommand", `${mark} alternate-refs`],
      ["remote.origin.uploadpack", `${mark} upload-pack`],
      ["remote.origin.receivepack", `${mark} receive-pack`],
      ["protocol.ext.allow", "always"],
      ["submodule.recurse", "true"],
    ];
    for (const [k, v] of cfg) git(root, ["config", "--add", k, v]);
    for (const h of HOOKS) {
      put(root, { [`.git/hooks/${h}`]: `#!/bin/sh\ntouch "${marks}/ran-hook-${h}"\n` });
      chmodSync(path.join(root, ".git", "hooks", h), 0o755);
    }
  }

  test("reads, writes with commits and pushes, and git_sync (rebase, merge, fast-forward) run none; written bytes are committed as they are", async () => {
    const remote = bareRemote();
    const seed = cloneOf(remote);
    const attributes = "*.md filter=evil diff=drv merge=mrg\nproc/* filter=proc\n";
    commitAll(seed, "seed", "2026-01-01T10:00:00Z", { ".gitattributes": attributes, "A.md": "plain a\n\n\nlast a\n", "B.md": "plain b\n", "proc/P.md": "plain p\n", "Shared.md": "shared base\n" });
    git(seed, ["push", "-q", "origin", "main"]);
    removeTree(seed);
    const root = cloneOf(remote);
    const other = cloneOf(remote);
    arm(root, "openpgp");
    // The remote is a repository on this machine: a push runs its receive-pack here, with its hooks.
    for (const h of ["pre-receive", "update", "post-receive", "post-update", "reference-transaction"]) {
      put(remote, { [`hooks/${h}`]: `#!/bin/sh\ntouch "${marks}/ran-remote-hook-${h}"\n` });
      chmodSync(path.join(remote, "hooks", h), 0o755);
    }
    // Dirty, in the future (no racy-clean shortcut): status and diffs must read them through git.
    put(root, { "A.md": "plain a, edited\n\n\nlast a\n", "proc/P.md": "plain p, edited\n", "T.txt": "plain t\n" });
    const { s, client } = await serve(root, { write: true, git: { commit: true, push: true } });
    try {
      // Reads.
      await ok(client, "stats");
      await ok(client, "get_history", { path: "A.md" });
      await ok(client, "get_recent_changes", {});
      const d = await ok(client, "get_diff", { path: "A.md", since_sha: git(root, ["rev-parse", "HEAD"]).trim() });
      expect(d.diffs[0].diff).toContain("+plain a, edited");
      await ok(client, "get_diff", { path: "proc/P.md", per_commit: true });
      expect(ran()).toEqual([]);

      // Writes, each committed and pushed.
      const w = await ok(client, "write", { path: "New.md", content: "plain new\n" });
      expect(w.commit).toMatchObject({ committed: true, pushed: true });
      expect(blob(root, "HEAD:New.md")).toBe("plain new\n");
      const r = await ok(client, "read", { path: "A.md" });
      // A.md holds the owner's uncommitted edit: our commit is built apart from their index (hash-object, commit-tree).
      const e = await ok(client, "edit", { path: "A.md", old_text: "last a", new_text: "last a, ours", if_match: r.etag });
      expect(e.commit).toMatchObject({ committed: true, pushed: true });
      expect(blob(root, "HEAD:A.md")).toBe("plain a\n\n\nlast a, ours\n");
      await ok(client, "write", { path: "proc/Q.md", content: "plain q\n" });
      expect(blob(root, "HEAD:proc/Q.md")).toBe("plain q\n");
      expect(ran()).toEqual([]);

      // git_sync: a rebase of a local commit over a remote one.
      git(other, ["pull", "-q", "origin", "main"]);
      commitAll(other, "b elsewhere", "2026-02-01T10:00:00Z", { "B.md": "plain b, remote\n" });
      git(other, ["push", "-q", NO_REMOTE_HOOKS, "origin", "main"]);
      await ok(client, "write", { path: "Local.md", content: "plain local\n" });
      expect((await ok(client, "git_sync", { direction: "both" })).pull.action).toBe("rebase");
      expect(readFileSync(path.join(root, "B.md"), "utf8")).toBe("plain b, remote\n");
      // A merge of a note committed on both sides (the merge driver's case).
      git(other, ["pull", "-q", "origin", "main"]);
      commitAll(other, "shared elsewhere", "2026-03-01T10:00:00Z", { "Shared.md": "shared base\nremote line\n" });
      git(other, ["push", "-q", NO_REMOTE_HOOKS, "origin", "main"]);
      const r2 = await ok(client, "read", { path: "Shared.md" });
      await ok(client, "edit", { path: "Shared.md", old_text: "shared base", new_text: "local line\nshared base", if_match: r2.etag });
      const m = await ok(client, "git_sync", { direction: "both" });
      expect(m).toMatchObject({ status: "kept_both", pull: { action: "merge_keeping_both" } });
      expect(readFileSync(path.join(root, "Shared.md"), "utf8")).toBe("local line\nshared base\n");
      // A fast-forward that checks out a filtered file (the smudge filter's case).
      commitAll(other, "a elsewhere", "2026-04-01T10:00:00Z", { "C.md": "plain c\n" });
      git(other, ["pull", "-q", "--no-rebase", "origin", "main"]);
      git(other, ["push", "-q", NO_REMOTE_HOOKS, "origin", "main"]);
      expect((await ok(client, "git_sync", { direction: "pull" })).pull.action).toBe("fast_forward");
      expect(readFileSync(path.join(root, "C.md"), "utf8")).toBe("plain c\n");
      expect(ran()).toEqual([]);
    } finally {
      await s.close();
      for (const dir of [root, other, remote]) removeTree(dir);
    }
  }, 60_000);

  test("ssh signing programs and an ext:: remote run neither", async () => {
    const root = initRepo(makeTempVault({}));
    commitAll(root, "first", "2026-01-01T10:00:00Z", { "A.md": "plain a\n" });
    arm(root, "ssh");
    git(root, ["remote", "add", "evil", `ext::${mark} ext-transport %S`]);
    git(root, ["config", "branch.main.remote", "evil"]);
    git(root, ["config", "branch.main.merge", "refs/heads/main"]);
    const { s, client } = await serve(root, { write: true, git: { commit: true } });
    try {
      const w = await ok(client, "write", { path: "New.md", content: "plain new\n" });
      expect(w.commit).toMatchObject({ committed: true });
      const sync = await ok(client, "git_sync", { direction: "both" });
      expect(sync.status).toBe("failed");
      expect(ran()).toEqual([]);
    } finally {
      await s.close();
      removeTree(root);
    }
  });
});
