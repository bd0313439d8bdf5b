import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { detectGitRepo } from "../../src/core/git/service";
import { createGitRunner, isLocalRemote, parseConfigList, programOverrides } from "../../src/hosts/common/git-process";

/**
 * The git runner's own safety: no folder left in the system temp folder, the repository's programs
 * switched off even when its configuration changes while the server runs, a name that cannot be
 * overridden refused, and the transport programs of a fetch or push taken from the owner's configuration.
 */
const HELPER = path.resolve(__dirname, "../../dist/git-helper.js");
const ENV = { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: path.join(tmpdir(), "vault-mcp-test-no-gitconfig"), GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@e" };

let base: string;
let marks: string;
let mark: string;
const savedTmp = process.env.TMPDIR;
beforeAll(() => {
  base = mkdtempSync(path.join(tmpdir(), "vault-mcp-gitproc-"));
  marks = path.join(base, "marks");
  mkdirSync(marks);
  mark = path.join(base, "mark.sh");
  writeFileSync(mark, `#!/bin/sh\ntouch "${marks}/ran-$1"\ncat\n`);
  chmodSync(mark, 0o755);
});
afterAll(() => {
  if (savedTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmp;
  rmSync(base, { recursive: true, force: true });
});

function repo(name: string): { dir: string; git: (...args: string[]) => string } {
  const dir = path.join(base, name);
  mkdirSync(dir);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, env: ENV, encoding: "utf8" });
  git("init", "-q", "-b", "main");
  writeFileSync(path.join(dir, "a.md"), "a\n");
  git("add", "a.md");
  git("commit", "-q", "-m", "first");
  return { dir, git };
}

describe("the git runner", () => {
  test.each([["directly"], ["through the helper"]])("with hooks off, started %s, leaves nothing in the system temp folder and runs no hook", async (how) => {
    const { dir, git } = repo(`hooks-${how.replace(/ /g, "-")}`);
    writeFileSync(path.join(dir, ".git", "hooks", "pre-commit"), `#!/bin/sh\ntouch "${marks}/ran-hook"\n`);
    chmodSync(path.join(dir, ".git", "hooks", "pre-commit"), 0o755);
    const tmp = path.join(base, `tmp-${how.replace(/ /g, "-")}`);
    mkdirSync(tmp);
    process.env.TMPDIR = tmp;
    const runner = createGitRunner({ cwd: dir, ...(how === "directly" ? {} : { helperFile: HELPER }) });
    try {
      writeFileSync(path.join(dir, "a.md"), "changed\n");
      const r = await runner.run(["commit", "-q", "-m", "second", "--", "a.md"], { env: { GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@e", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@e" } });
      expect(r.code).toBe(0);
      expect(git("log", "-1", "--format=%s").trim()).toBe("second");
      expect(readdirSync(tmp).filter((f) => f.startsWith("vault-mcp-no-hooks"))).toEqual([]);
      expect(existsSync(path.join(marks, "ran-hook"))).toBe(false);
    } finally {
      runner.close?.();
      process.env.TMPDIR = savedTmp ?? tmpdir();
    }
  });

  test("a filter added to the configuration (or to a file it includes) while running is switched off too", async () => {
    const { dir, git } = repo("late-filter");
    const runner = createGitRunner({ cwd: dir });
    expect((await runner.run(["status", "--porcelain"])).code).toBe(0);
    writeFileSync(path.join(dir, ".gitattributes"), "*.md filter=late\n*.txt filter=inc\n");
    git("config", "filter.late.clean", `${mark} late-clean`);
    git("config", "include.path", "more.cfg");
    writeFileSync(path.join(dir, "a.md"), "a, changed\n");
    expect((await runner.run(["add", "-A"])).code).toBe(0);
    writeFileSync(path.join(dir, ".git", "more.cfg"), `[filter "inc"]\n\tclean = ${mark} inc-clean\n`);
    writeFileSync(path.join(dir, "b.txt"), "b\n");
    expect((await runner.run(["add", "-A"])).code).toBe(0);
    expect((await runner.run(["diff", "--cached", "--stat"])).code).toBe(0);
    expect(readdirSync(marks).filter((f) => f.startsWith("ran-"))).toEqual([]);
    expect(git("cat-file", "blob", ":a.md")).toBe("a, changed\n");
  });

  test("a driver name that cannot be given on the command line fails the call, git not started", async () => {
    const { dir, git } = repo("odd-name");
    git("config", "filter.a=b.clean", `${mark} odd`);
    const r = await createGitRunner({ cwd: dir }).run(["status", "--porcelain"]);
    expect(r.code).toBe(128);
    expect(r.stderr).toMatch(/cannot be switched off safely/);
    // The server then says why the vault is not treated as git-backed.
    const d = await detectGitRepo(createGitRunner({ cwd: dir }));
    expect(d).toMatchObject({ kind: "none", reason: "error" });
    expect(d.kind === "none" && d.message).toMatch(/names "filter\.a=b\.clean", which cannot be switched off safely/);
  });
});

describe("programOverrides", () => {
  const list = (...rows: [string, string, string, string | null][]) => rows.map(([scope, origin, key, value]) => `${scope}\0${origin}\0${key}${value === null ? "" : `\n${value}`}\0`).join("");

  test("empties filters and diff drivers and turns merge drivers into a conflict, by name, whichever file named them", () => {
    const entries = parseConfigList(list(["global", "file:/home/o/.gitconfig", "filter.lfs.clean", "git-lfs clean -- %f"], ["local", "file:.git/config", "filter.my.dotted.process", "x"], ["local", "file:.git/config", "merge.ours-too.driver", "y"], ["local", "file:.git/config", "diff.pic.textconv", "z"], ["local", "file:.git/config", "core.bare", "false"]));
    const o = programOverrides(entries, false);
    const pairs = o.filter((_, i) => i % 2 === 1);
    expect(pairs).toEqual(expect.arrayContaining(["filter.lfs.clean=", "filter.lfs.smudge=", "filter.lfs.process=", "filter.lfs.required=false", "filter.my.dotted.clean=", "merge.ours-too.driver=exit 1", "diff.pic.textconv=", "diff.pic.command=", "credential.helper=", "core.askPass="]));
  });

  test("a fetch or push uses the owner's credential helpers and ssh command, not the repository's", () => {
    const owner = list(["global", "file:/home/o/.gitconfig", "credential.helper", "osxkeychain"], ["global", "file:/home/o/.gitconfig", "credential.https://example.com.helper", "store"]);
    expect(programOverrides(parseConfigList(owner), true)).toEqual([]);
    const both = parseConfigList(owner + list(["local", "file:.git/config", "credential.helper", "evil"], ["local", "file:.git/config", "core.sshCommand", "evil-ssh"]));
    expect(programOverrides(both, true).filter((_, i) => i % 2 === 1)).toEqual(["credential.helper=", "credential.helper=osxkeychain", "credential.https://example.com.helper=store", "core.sshCommand=ssh"]);
  });
});

test("a remote on this machine (its receive-pack runs here, with its hooks) is told from one elsewhere", () => {
  for (const url of ["/srv/vault.git", "../vault.git", "file:///srv/vault.git", "C:\\Users\\o\\vault.git", "D:/vault.git"]) expect(isLocalRemote(url)).toBe(true);
  for (const url of ["git@github.com:o/vault.git", "ssh://host/vault.git", "https://github.com/o/vault.git", "host:vault.git", "gcrypt::rsync://host/x"]) expect(isLocalRemote(url)).toBe(false);
});
