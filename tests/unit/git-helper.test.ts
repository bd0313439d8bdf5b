import { describe, expect, test } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { GitMissingError } from "../../src/core/git/runner";
import { createGitRunner } from "../../src/hosts/common/git-process";

/**
 * The git helper process (dist/git-helper.js, built by npm test): git calls go through it with the
 * same results as when started directly — output, streaming stopped early, bytes, exit codes, a
 * missing git program — and a helper that cannot start leaves the calls to run directly.
 */
const HELPER = path.resolve(__dirname, "../../dist/git-helper.js");

function repo(): string {
  const dir = mkdtempSync(path.join(tmpdir(), "vault-mcp-helper-"));
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: { ...process.env, GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@e" } });
  git("init", "-q", "-b", "main");
  for (let i = 0; i < 30; i++) {
    writeFileSync(path.join(dir, "a.md"), `v${i}\n`);
    git("add", "a.md");
    git("commit", "-q", "-m", `c${i}`);
  }
  writeFileSync(path.join(dir, "bin.dat"), Buffer.from([0, 1, 2, 255]));
  return dir;
}

describe("the git helper process", () => {
  test("is built (npm test builds it first)", () => {
    expect(existsSync(HELPER)).toBe(true);
  });

  test("gives the same answers as git started directly", async () => {
    const dir = repo();
    const viaHelper = createGitRunner({ cwd: dir, helperFile: HELPER });
    const direct = createGitRunner({ cwd: dir });
    try {
      const a = await viaHelper.run(["log", "--format=%s"]);
      const b = await direct.run(["log", "--format=%s"]);
      expect(a).toEqual(b);
      expect(a.stdout.split("\n")[0]).toBe("c29");
      // A failing command: its exit code and message.
      const bad = await viaHelper.run(["rev-parse", "--verify", "-q", "nope"]);
      expect(bad.code).not.toBe(0);
      // Bytes.
      const bytes = await viaHelper.run(["hash-object", "-w", "bin.dat"]);
      const blob = await viaHelper.run(["cat-file", "blob", bytes.stdout.trim()], { binary: true });
      expect(blob.stdoutBytes).toEqual(new Uint8Array([0, 1, 2, 255]));
      // Streaming, stopped after the first chunk.
      let chunks = 0;
      const stopped = await viaHelper.run(["log", "-p"], {
        onStdout: () => {
          chunks++;
          return false;
        },
      });
      expect(chunks).toBeGreaterThanOrEqual(1);
      expect(stopped.stdout).toBe("");
    } finally {
      viaHelper.close?.();
    }
  });

  test("a missing git program is GitMissingError through the helper too", async () => {
    const r = createGitRunner({ cwd: tmpdir(), program: "/no/such/git", helperFile: HELPER });
    try {
      await expect(r.run(["--version"])).rejects.toBeInstanceOf(GitMissingError);
    } finally {
      r.close?.();
    }
  });

  test("a helper that cannot start leaves its calls to run directly", async () => {
    const r = createGitRunner({ cwd: tmpdir(), helperFile: path.join(tmpdir(), "no-such-helper.js") });
    const out = await r.run(["--version"]);
    expect(out.stdout).toMatch(/^git version/);
    const again = await r.run(["--version"]);
    expect(again.code).toBe(0);
  });
});
