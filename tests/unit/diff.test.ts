import { describe, expect, it } from "@jest/globals";
import { diffLines, unifiedDiff } from "../../src/core/write/diff";

function apply(a: string[], ops: ReturnType<typeof diffLines>): string[] {
  const out: string[] = [];
  let i = 0;
  for (const o of ops) {
    if (o.kind === "equal") {
      expect(a[i]).toBe(o.line);
      out.push(o.line);
      i++;
    } else if (o.kind === "delete") {
      expect(a[i]).toBe(o.line);
      i++;
    } else out.push(o.line);
  }
  expect(i).toBe(a.length);
  return out;
}

describe("line diff", () => {
  it("produces a valid edit script that turns a into b", () => {
    const cases: Array<[string[], string[]]> = [
      [[], []],
      [["a"], []],
      [[], ["a"]],
      [["a", "b", "c", "a", "b", "b", "a"], ["c", "b", "a", "b", "a", "c"]],
      [["x", "y", "z"], ["x", "q", "z"]],
      [["1", "2", "3", "4", "5"], ["0", "1", "3", "5", "6"]],
    ];
    for (const [a, b] of cases) expect(apply(a, diffLines(a, b))).toEqual(b);
  });

  it("finds a minimal script (Myers classic example: 5 edits)", () => {
    const ops = diffLines("ABCABBA".split(""), "CBABAC".split(""));
    expect(ops.filter((o) => o.kind !== "equal")).toHaveLength(5);
  });

  it("random texts round-trip", () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    for (let t = 0; t < 200; t++) {
      const a = Array.from({ length: Math.floor(rnd() * 15) }, () => "abc"[Math.floor(rnd() * 3)]);
      const b = Array.from({ length: Math.floor(rnd() * 15) }, () => "abc"[Math.floor(rnd() * 3)]);
      expect(apply(a, diffLines(a, b))).toEqual(b);
    }
  });

  it("renders unified hunks with 2 lines of context and correct headers", () => {
    const before = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join("\n") + "\n";
    const after = before.replace("line 5\n", "line five\n").replace("line 18\n", "");
    expect(unifiedDiff(before, after)).toBe(
      ["@@ -3,5 +3,5 @@", " line 3", " line 4", "-line 5", "+line five", " line 6", " line 7",
        "@@ -16,5 +16,4 @@", " line 16", " line 17", "-line 18", " line 19", " line 20"].join("\n"),
    );
  });

  it("merges nearby changes into one hunk and returns '' without changes", () => {
    const a = "1\n2\n3\n4\n5\n6\n7\n";
    const b = "1\nX\n3\n4\nY\n6\n7\n";
    expect(unifiedDiff(a, b).split("\n").filter((l) => l.startsWith("@@"))).toEqual(["@@ -1,7 +1,7 @@"]);
    expect(unifiedDiff(a, a)).toBe("");
  });

  it("handles pure insertion into an empty text", () => {
    expect(unifiedDiff("", "a\nb\n")).toBe("@@ -0,0 +1,2 @@\n+a\n+b");
  });

  it("degrades to a block replacement on huge distances instead of exploding", () => {
    const a = Array.from({ length: 6000 }, (_, i) => `a${i}`).join("\n");
    const b = Array.from({ length: 6000 }, (_, i) => `b${i}`).join("\n");
    const ops = diffLines(a.split("\n"), b.split("\n"));
    expect(ops.filter((o) => o.kind === "delete")).toHaveLength(6000);
    expect(ops.filter((o) => o.kind === "insert")).toHaveLength(6000);
  });

  it("a changed middle too long to search is one hunk written straight from the lines, the same as below the limit", () => {
    const lines = (n: number, p: string) => Array.from({ length: n }, (_, i) => `${p}${i}`);
    const render = (mid: number) => {
      const a = ["h1", "h2", "h3", ...lines(mid, "a"), "t1", "t2", "t3"].join("\n") + "\n";
      const b = ["h1", "h2", "h3", ...lines(mid, "b"), "t1", "t2", "t3"].join("\n") + "\n";
      return unifiedDiff(a, b, { context: 2, maxLines: 12, path: "N.md" });
    };
    const expected = (mid: number) =>
      [
        "--- a/N.md",
        "+++ b/N.md",
        `@@ -2,${mid + 4} +2,${mid + 4} @@`,
        " h2",
        " h3",
        ...lines(7, "-a"),
        `… ${2 * mid + 4 - 9} more diff lines not shown`,
      ].join("\n");
    // Below the limit (Myers' search gives up at 1,000 differing lines and gives the same block), and above it.
    expect(render(3000)).toBe(expected(3000));
    expect(render(15_000)).toBe(expected(15_000));
    // Short enough to show whole: the inserted lines and the trailing context come after the deletions.
    const whole = unifiedDiff("x\na\nb\ny\n", "x\nc\ny\n");
    expect(whole).toBe("@@ -1,4 +1,3 @@\n x\n-a\n-b\n+c\n y");
  });
});
