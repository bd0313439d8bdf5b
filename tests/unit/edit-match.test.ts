import { describe, expect, it } from "@jest/globals";
import fc from "fast-check";
import { diffLines } from "../../src/core/write/diff";
import { describeMiss, findMatches, lineOfOffset, lineStarts, MAX_LOOSE_MATCH_CHARS, normalizeForMatch } from "../../src/core/write/edit-match";

/** The normalisation as it was before its ASCII fast path (cluster by cluster), kept as the reference. */
function referenceNormalize(s: string): { text: string; starts: number[]; ends: number[] } {
  const FOLD: Record<string, string> = { "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-", "\u2026": "..." };
  const HSPACE = /[ \t\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000]/;
  const out: string[] = [];
  const starts: number[] = [];
  const ends: number[] = [];
  const push = (t: string, from: number, to: number) => {
    for (const ch of t) {
      for (let u = 0; u < ch.length; u++) {
        out.push(ch[u]);
        starts.push(from);
        ends.push(to);
      }
    }
  };
  const clusters = /\r\n|[^\p{M}][\p{M}]*|[\p{M}]+/gsu;
  let m: RegExpExecArray | null;
  let spaceFrom = -1;
  let spaceTo = -1;
  const flush = (nl: boolean) => {
    if (spaceFrom >= 0 && !nl) push(" ", spaceFrom, spaceTo);
    spaceFrom = -1;
  };
  while ((m = clusters.exec(s)) !== null) {
    const from = m.index;
    const to = from + m[0].length;
    const c = m[0];
    if (c === "\r\n" || c === "\n" || c === "\r") {
      flush(true);
      push("\n", from, to);
      continue;
    }
    if (c.length === 1 && HSPACE.test(c)) {
      if (spaceFrom < 0) spaceFrom = from;
      spaceTo = to;
      continue;
    }
    flush(false);
    let folded = "";
    for (const ch of c.normalize("NFC")) folded += FOLD[ch] ?? ch;
    push(folded, from, to);
  }
  flush(true);
  return { text: out.join(""), starts, ends };
}

describe("edit matching", () => {
  it("finds exact matches first", () => {
    const r = findMatches("one two one", "one");
    expect(r.type).toBe("exact");
    expect(r.matches).toEqual([
      { start: 0, end: 3 },
      { start: 8, end: 11 },
    ]);
  });

  it("falls back to normalised matching: smart quotes, dashes, whitespace runs", () => {
    const text = "He said “hello” — then   left.\n";
    const r = findMatches(text, 'said "hello" - then left');
    expect(r.type).toBe("normalized");
    expect(r.matches).toHaveLength(1);
    expect(text.slice(r.matches[0].start, r.matches[0].end)).toBe("said “hello” — then   left");
  });

  it("maps NFD text back to exact original offsets", () => {
    const nfd = "Caf\u0065\u0301 au lait and cafe\u0301s";
    const r = findMatches(nfd, "Café au lait".normalize("NFC"));
    expect(r.type).toBe("normalized");
    expect(nfd.slice(r.matches[0].start, r.matches[0].end)).toBe("Caf\u0065\u0301 au lait");
  });

  it("ignores trailing spaces and CRLF vs LF in the normalised view", () => {
    const text = "alpha  \r\nbeta\r\n";
    const r = findMatches(text, "alpha\nbeta");
    expect(r.matches).toHaveLength(1);
    expect(text.slice(r.matches[0].start, r.matches[0].end)).toBe("alpha  \r\nbeta");
  });

  it("restricts matches to a range", () => {
    const text = "x\nx\nx\n";
    expect(findMatches(text, "x", 2, 3).matches).toEqual([{ start: 2, end: 3 }]);
  });

  it("normalised view keeps a unit-by-unit map", () => {
    const n = normalizeForMatch("a\u2014b");
    expect(n.text).toBe("a-b");
    expect(n.starts).toEqual([0, 1, 2]);
    expect(n.ends).toEqual([1, 2, 3]);
  });

  it("describes a miss: the closest line and the first difference", () => {
    const text = "# Title\n\nThe quick brown fox jumps.\nOther line\n";
    const msg = describeMiss(text, "The quick brown cat jumps.");
    expect(msg).toContain("line 3");
    expect(msg).toContain("column 17");
    expect(msg).toContain('"fox jumps."');
  });

  it("a miss in the middle of a line points at the closest text there, not at column 1", () => {
    const text = "# Notes\n\nfirst\nxylophonequux unique word\nlast\n";
    expect(describeMiss(text, "uniqe word")).toBe(
      'The closest text starts at line 4, column 15; it first differs at line 4, column 19: the note has "ue word", old_text has "e word".',
    );
    // Two lines, the first starting mid-line: the second is compared from column 1.
    expect(describeMiss(text, "unique word\nlsat")).toBe(
      'The closest text starts at line 4, column 15; it first differs at line 5, column 2: the note has "ast", old_text has "sat".',
    );
    // A typo in the first character still aligns.
    expect(describeMiss(text, "xnique word")).toMatch(/^The closest text starts at line 4, column 15; it first differs at line 4, column 15:/);
  });

  it("the ASCII fast path gives exactly what cluster-by-cluster normalising gives", () => {
    const piece = fc.constantFrom("a", "Z", " ", "\t", "\n", "\r", "\r\n", "e\u0301", "\u0301", "\u00a0", "\u3000", "“", "—", "…", "é", "日", "😀", "x\u0308\u0301", ".", "\u2018");
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (parts) => {
        const s = parts.join("");
        expect(normalizeForMatch(s)).toEqual(referenceNormalize(s));
      }),
      { seed: 23, numRuns: 500 },
    );
  });

  it("beyond 256 KB the loose match is not tried, and says so; a range inside it still is", () => {
    const line = "He said “hello” — then left.";
    const text = `${"filler line\n".repeat(Math.ceil(MAX_LOOSE_MATCH_CHARS / 12))}${line}\n`;
    expect(findMatches(text, 'said "hello" - then')).toEqual({ matches: [], type: "normalized", tooLong: true });
    const starts = lineStarts(text);
    const from = starts[starts.length - 2];
    const r = findMatches(text, 'said "hello" - then', from, text.length - 1);
    expect(r.type).toBe("normalized");
    expect(r.matches.map((m) => text.slice(m.start, m.end))).toEqual(["said “hello” — then"]);
    expect(lineOfOffset(starts, r.matches[0].start)).toBe(starts.length - 1);
  });

  it("a miss diagnosis compares at most 256 KB of lines and says where it stopped", () => {
    const text = `${"unrelated words here\n".repeat(20_000)}The quick brown fox jumps.\n`;
    const msg = describeMiss(text, "The quick brown cat jumps.");
    expect(msg).toMatch(/Only lines 1–\d+ were compared; narrow the search with line_start\/line_end/);
    expect(describeMiss(text, "The quick brown cat jumps.", 20_001)).toMatch(/closest text starts at line 20001; it first differs at line 20001, column 17/);
  });

  it("lineOfOffset: 1-based line of an offset by binary search", () => {
    const starts = lineStarts("a\nbb\n\nccc");
    expect([0, 1, 2, 4, 5, 6, 9].map((o) => lineOfOffset(starts, o))).toEqual([1, 1, 2, 2, 3, 4, 4]);
  });

  it("diffs of hundreds of thousands of lines do not overflow the stack", () => {
    const a = Array.from({ length: 300_000 }, (_, i) => `line ${i}`);
    const b = a.map((l, i) => (i % 2 ? l : `${l}!`));
    const ops = diffLines(a, b);
    // Past the edit-distance cap the middle is one delete + insert block; every line is accounted for.
    expect(ops.filter((o) => o.kind !== "insert").map((o) => o.line)).toEqual(a);
    expect(ops.filter((o) => o.kind !== "delete").map((o) => o.line)).toEqual(b);
  });
});
