import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/**
 * Real git repositories for the tests, made with the git program: a fixed identity, no signing,
 * no global configuration leaking in, and commits at the dates the tests give.
 */
const ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: path.join(tmpdir(), "vault-mcp-test-no-gitconfig"),
  GIT_AUTHOR_NAME: "Test Author",
  GIT_AUTHOR_EMAIL: "author@example.com",
  GIT_COMMITTER_NAME: "Test Author",
  GIT_COMMITTER_EMAIL: "author@example.com",
  GIT_TERMINAL_PROMPT: "0",
};

/** Runs git in `cwd` and returns stdout (throws with stderr on failure). */
export function git(cwd: string, args: string[], opts: { date?: string; input?: string } = {}): string {
  const env = opts.date ? { ...ENV, GIT_AUTHOR_DATE: opts.date, GIT_COMMITTER_DATE: opts.date } : ENV;
  return execFileSync("git", args, { cwd, env, encoding: "utf8", input: opts.input, stdio: ["pipe", "pipe", "pipe"] });
}

/** A new repository in `dir` (created when missing) on branch main, with a local identity. */
export function initRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, ["init", "-q", "-b", "main"]);
  git(dir, ["config", "user.name", "Test Author"]);
  git(dir, ["config", "user.email", "author@example.com"]);
  git(dir, ["config", "commit.gpgsign", "false"]);
  return dir;
}

/** Writes files (relative paths) under `root`. */
export function put(root: string, files: Record<string, string | Uint8Array>): void {
  for (const [rel, data] of Object.entries(files)) {
    const abs = path.join(root, ...rel.split("/"));
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, data);
  }
}

/** Writes files, stages everything and commits at `date`; returns the new sha. */
export function commitAll(root: string, message: string, date: string, files: Record<string, string | Uint8Array> = {}): string {
  put(root, files);
  git(root, ["add", "-A"]);
  git(root, ["commit", "-q", "-m", message], { date });
  return git(root, ["rev-parse", "HEAD"]).trim();
}

/** A bare repository to push to, and a clone of it (the "other machine"). */
export function bareRemote(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "vault-mcp-remote-"));
  git(dir, ["init", "-q", "--bare", "-b", "main"]);
  return dir;
}

export function cloneOf(remote: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "vault-mcp-clone-"));
  git(dir, ["clone", "-q", remote, "."]);
  git(dir, ["config", "user.name", "Other Machine"]);
  git(dir, ["config", "user.email", "other@example.com"]);
  git(dir, ["config", "commit.gpgsign", "false"]);
  return dir;
}

export function gitEnv(): NodeJS.ProcessEnv {
  return ENV;
}
