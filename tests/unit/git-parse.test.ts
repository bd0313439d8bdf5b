import { describe, expect, test } from "@jest/globals";
import { cleanGitMessage, isLockError } from "../../src/core/git/git";
import { LogStreamParser, parseLogRecord, parseStatus, statusEntryKind } from "../../src/core/git/parse";
import { commitMessage } from "../../src/core/git/service";

const SHA1 = "a".repeat(40);
const SHA2 = "b".repeat(40);
/** One commit as `git log LOG_FORMAT --name-status -z` prints it. */
const record = (sha: string, message: string, changes: string) => `\x1e${sha}\x1f${SHA2}\x1f1700000000\x1f1700000100\x1fAnn Author\x1fann@example.com\x1f${message}\n\x1f\0\n${changes}`;

describe("git output parsers", () => {
  test("a log record: fields, multi-line message, name-status with renames and odd file names", () => {
    const c = parseLogRecord(record(SHA1, "Subject line\n\nBody, with\ttabs", "M\0Notes/A b.md\0R087\0Old/x.md\0New/x \"quoted\".md\0D\0Gone.md\0A\0Ünïcode → ok.md\0").slice(1));
    expect(c).toMatchObject({ sha: SHA1, parents: [SHA2], authorTime: 1700000000, commitTime: 1700000100, author: "Ann Author", email: "ann@example.com", message: "Subject line\n\nBody, with\ttabs" });
    expect(c!.changes).toEqual([
      { status: "modified", path: "Notes/A b.md" },
      { status: "renamed", path: 'New/x "quoted".md', from: "Old/x.md" },
      { status: "deleted", path: "Gone.md" },
      { status: "added", path: "Ünïcode → ok.md" },
    ]);
  });

  test("a commit without changes (a merge) and a damaged record", () => {
    expect(parseLogRecord(record(SHA1, "Merge", "").slice(1))!.changes).toEqual([]);
    expect(parseLogRecord("not a record")).toBeNull();
    expect(parseLogRecord(record("zz", "x", "").slice(1))).toBeNull();
  });

  test("the stream parser gives the same commits however the output is cut into chunks", () => {
    const text = [record(SHA1, "one", "M\0A.md\0"), record(SHA2, "two ✓", "A\0B.md\0R100\0B.md\0C.md\0")].join("");
    const whole: string[] = [];
    const p = new LogStreamParser((c) => void whole.push(`${c.message}:${c.changes.map((x) => x.path).join(",")}`));
    p.push(text);
    p.end();
    expect(whole).toEqual(["one:A.md", "two ✓:B.md,C.md"]);
    for (const size of [1, 3, 7, 50]) {
      const got: string[] = [];
      const q = new LogStreamParser((c) => void got.push(`${c.message}:${c.changes.map((x) => x.path).join(",")}`));
      for (let i = 0; i < text.length; i += size) q.push(text.slice(i, i + size));
      q.end();
      expect(got).toEqual(whole);
    }
  });

  test("the stream parser stops when the consumer says so", () => {
    const text = [record(SHA1, "one", ""), record(SHA2, "two", ""), record(SHA1, "three", "")].join("");
    const got: string[] = [];
    const p = new LogStreamParser((c) => {
      got.push(c.message);
      return got.length < 2;
    });
    expect(p.push(text)).toBe(false);
    expect(got).toEqual(["one", "two"]);
  });

  test("porcelain status: modified, staged, untracked, renamed (two paths), conflicted", () => {
    const out = " M Notes/A.md\0M  Staged.md\0?? New file.md\0R  New.md\0Old.md\0UU Both.md\0";
    const entries = parseStatus(out);
    expect(entries).toEqual([
      { code: " M", path: "Notes/A.md" },
      { code: "M ", path: "Staged.md" },
      { code: "??", path: "New file.md" },
      { code: "R ", path: "New.md", from: "Old.md" },
      { code: "UU", path: "Both.md" },
    ]);
    expect(entries.map((e) => statusEntryKind(e.code))).toEqual(["modified", "modified", "untracked", "renamed", "conflicted"]);
  });

  test("git's messages for people: first lines, no prefixes, no absolute paths; lock errors recognised", () => {
    const msg = cleanGitMessage("hint: try this\nfatal: Unable to create '/home/ann/vault/.git/index.lock': File exists.\n\nAnother git process seems to be running\n");
    expect(msg).toBe("Unable to create '<path>': File exists. Another git process seems to be running");
    expect(cleanGitMessage("fatal: 'C:\\Users\\ann\\remote.git' does not appear to be a git repository")).not.toContain("Users");
    expect(cleanGitMessage("error: failed to push some refs to 'https://github.com/ann/notes.git'")).toContain("https://github.com/ann/notes.git");
    expect(isLockError("fatal: Unable to create '/x/.git/index.lock': File exists.")).toBe(true);
    expect(isLockError("fatal: not a git repository")).toBe(false);
  });

  test("commit messages name the tool, the path (both ends of a rename) and a tidied client name", () => {
    expect(commitMessage({ tool: "edit", client: "claude-code", path: "Projects/Plan.md", paths: [], created: [] })).toBe("vault-mcp: edit Projects/Plan.md (claude-code)");
    expect(commitMessage({ tool: "rename", client: "Cursor\nInjected: line", path: "A.md", newPath: "B/A.md", paths: [], created: [] })).toBe("vault-mcp: rename A.md → B/A.md (Cursor Injected: line)");
    expect(commitMessage({ tool: "write", client: "", path: "X.md", paths: [], created: [] })).toBe("vault-mcp: write X.md (unknown client)");
  });
});
