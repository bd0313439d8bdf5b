import { parseQuery } from "../../src/core/search";

describe("parseQuery", () => {
  test("words, phrases, prefixes, exclusions and OR", () => {
    const q = parseQuery('graph "link view" plug* -canvas a OR b');
    expect(q.clauses).toEqual([
      [{ kind: "term", term: "graph", prefix: false }],
      [{ kind: "phrase", terms: ["link", "view"] }],
      [{ kind: "term", term: "plug", prefix: true }],
      [
        { kind: "term", term: "a", prefix: false },
        { kind: "term", term: "b", prefix: false },
      ],
    ]);
    expect(q.exclude).toEqual([{ kind: "term", term: "canva", prefix: false }]);
  });

  test("hyphens, colons and C++ become phrases or terms; tag: searches the tag", () => {
    expect(parseQuery("e-mail").clauses).toEqual([[{ kind: "phrase", terms: ["e", "mail"] }]]);
    expect(parseQuery("well-known").clauses[0][0]).toEqual({ kind: "phrase", terms: ["well", "known"] });
    expect(parseQuery("a:b").clauses[0][0]).toEqual({ kind: "phrase", terms: ["a", "b"] });
    expect(parseQuery("tag:craft").clauses).toEqual([[{ kind: "term", term: "craft", prefix: false }]]);
    expect(parseQuery("#craft").clauses).toEqual([[{ kind: "term", term: "craft", prefix: false }]]);
    expect(parseQuery("C++").clauses).toEqual([[{ kind: "term", term: "c", prefix: false }]]);
  });

  test("never throws on odd input", () => {
    const odd = ["", " ", "OR", "OR OR", "-", "--", "*", "**", '"', '""', '"unbalanced phrase', "(a", "a)", "[x]", "{y}", "a:", ":b", "::", "-\"x", "a OR", "OR a", "- a", "+a", "|", "a | b", "\\", "NOT a", "AND", "*prefix", "-*", "\u0000", "😀", "日本語 OR", "x".repeat(10000)];
    for (const s of odd) expect(() => parseQuery(s)).not.toThrow();
    expect(parseQuery("OR").clauses).toEqual([]);
    expect(parseQuery("-").clauses).toEqual([]);
    expect(parseQuery('"unbalanced phrase').clauses).toEqual([[{ kind: "phrase", terms: ["unbalanc", "phrase"] }]]);
    expect(parseQuery("a OR").clauses).toEqual([[{ kind: "term", term: "a", prefix: false }]]);
    expect(parseQuery("-only").clauses).toEqual([]);
    expect(parseQuery("-only").exclude).toHaveLength(1);
  });

  test("lower-case or is a word; CJK words become bigram phrases", () => {
    expect(parseQuery("this or that").clauses).toHaveLength(3);
    expect(parseQuery("東京都").clauses).toEqual([[{ kind: "phrase", terms: ["東京", "京都"] }]]);
    expect(parseQuery("東京").clauses).toEqual([[{ kind: "term", term: "東京", prefix: false }]]);
  });
});
