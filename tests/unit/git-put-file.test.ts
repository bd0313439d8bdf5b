import { describe, expect, test } from "@jest/globals";
import { putFile } from "../../src/core/git/sync";
import type { VaultPort } from "../../src/core/vault";
import { GitService, detectGitRepo } from "../../src/core/git/service";
import { AccessPolicy } from "../../src/core/policy";
import { createGitRunner } from "../../src/hosts/common/git-process";
import { FsVault } from "../../src/hosts/node/fs-vault";
import { bareRemote, cloneOf, commitAll, git, put } from "../support/git-repo";
import { removeTree } from "../support/harness";

/**
 * git_sync puts the owner's version of a conflicting note back right after git rewrote it. Obsidian
 * learns of git's write from its file watcher; until then the note is on disk but not listed, and
 * Obsidian refuses both to modify it and to create it. (Seen in CI: "File already exists." from a sync.)
 */
function lagging(unlistedFor: number) {
  let tries = 0;
  const written: string[] = [];
  const port = {
    stat: () => null,
    writeBinary: (_p: string, data: Uint8Array) => {
      tries++;
      if (tries <= unlistedFor) return Promise.reject(new Error("File not found: C.md"));
      written.push(Buffer.from(data).toString());
      return Promise.resolve();
    },
    create: () => Promise.reject(new Error("File already exists.")),
  } as unknown as VaultPort;
  return { port, written, tries: () => tries };
}
const noGit = { git: { raw: () => Promise.reject(new Error("not used")) } } as never;

describe("putFile (git_sync's write-back)", () => {
  test("waits for the vault to list a file git has just rewritten, then writes it", async () => {
    const l = lagging(3);
    await putFile(l.port, noGit, "C.md", Buffer.from("c edited here\n"));
    expect(l.written).toEqual(["c edited here\n"]);
    expect(l.tries()).toBe(4);
  });

  test("gives up after its wait with the last failure, having written nothing", async () => {
    const l = lagging(Infinity);
    await expect(putFile(l.port, noGit, "C.md", Buffer.from("x"), 50)).rejects.toThrow("File already exists.");
    expect(l.written).toEqual([]);
  });
});

describe("git_sync when the owner's version cannot be put back", () => {
  test("it says so, names where each file is kept in git, and pushes nothing", async () => {
    const remote = bareRemote();
    const root = cloneOf(remote);
    const other = cloneOf(remote);
    const vault = await (async () => {
      commitAll(other, "seed", "2026-01-01T10:00:00Z", { "C.md": "c base\n" });
      git(other, ["push", "-q", "origin", "main"]);
      git(root, ["pull", "-q", "origin", "main"]);
      git(root, ["branch", "-q", "--set-upstream-to=origin/main"]);
      commitAll(other, "c elsewhere", "2026-02-01T10:00:00Z", { "C.md": "c from the other machine\n" });
      git(other, ["push", "-q", "origin", "main"]);
      put(root, { "C.md": "c edited here, not committed\n" });
      return FsVault.open(root, { debounceMs: 20 });
    })();
    try {
      // The vault refuses every write of C.md (a disk gone read-only, a file locked by another program).
      const port = new Proxy(vault, {
        get(t, k, r) {
          if (k === "writeBinary" || k === "create") return (p: string, d: Uint8Array) => (p === "C.md" ? Promise.reject(new Error("EACCES")) : Reflect.get(t, k, r).call(t, p, d));
          const v = Reflect.get(t, k, r);
          return typeof v === "function" ? v.bind(t) : v;
        },
      });
      const d = await detectGitRepo(createGitRunner({ cwd: root }));
      if (d.kind !== "repo") throw new Error(d.message);
      const policy = new AccessPolicy({ configDir: ".obsidian" });
      const svc = new GitService(d.git, d.prefix, { port, policy, identity: d.identity }, { commitChanges: false, pushAfterCommit: false });
      const r = await svc.sync({ direction: "both" });
      expect(r.status).toBe("failed");
      const m = /your version of "C\.md" \(git cat-file blob ([0-9a-f]{12})\)/.exec(r.message);
      expect(m).not.toBeNull();
      expect(git(root, ["cat-file", "blob", m![1]])).toBe("c edited here, not committed\n");
      expect(r.message).toMatch(/Nothing was pushed/);
      // The remote's version went beside it.
      expect(r.conflicts).toEqual([expect.objectContaining({ path: "C.md", remote_copy: expect.stringMatching(/^C \(conflict .* from origin\)\.md$/) })]);
    } finally {
      await vault.close();
      for (const dir of [root, other, remote]) removeTree(dir);
    }
  }, 20_000);
});
