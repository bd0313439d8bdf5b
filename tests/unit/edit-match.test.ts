import { describe, expect, it } from "@jest/globals";
import { describeMiss, findMatches, normalizeForMatch } from "../../src/core/write/edit-match";

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
});
