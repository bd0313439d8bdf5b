import { VaultError } from "../../src/core/errors";
import { parseQuery } from "../../src/core/search";
import { checkQueryBounds, MAX_QUERY_CHARS, MAX_QUERY_TERMS } from "../../src/core/search/query";

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
    // Words as typed (folded, not stemmed): the index matches a word's other forms at query time.
    expect(q.exclude).toEqual([{ kind: "term", term: "canvas", prefix: false }]);
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
    expect(parseQuery('"unbalanced phrase').clauses).toEqual([[{ kind: "phrase", terms: ["unbalanced", "phrase"] }]]);
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

describe("checkQueryBounds: queries too large to answer in one bounded step are refused", () => {
  const bounds = (q: string) => () => checkQueryBounds(q, parseQuery(q));
  const refusal = (q: string): string => {
    try {
      bounds(q)();
    } catch (e) {
      expect(e).toBeInstanceOf(VaultError);
      expect((e as VaultError).code).toBe("invalid_argument");
      return (e as VaultError).message;
    }
    throw new Error(`accepted: ${q.slice(0, 40)}`);
  };

  test("ordinary queries pass, up to the limits", () => {
    expect(bounds('sync "link view" plug* -canvas a OR b')).not.toThrow();
    expect(bounds(Array.from({ length: MAX_QUERY_TERMS }, (_, i) => `w${i}`).join(" "))).not.toThrow();
    expect(bounds("ab* cd* ef* gh*")).not.toThrow();
    expect(bounds("日*")).not.toThrow();
    expect(bounds("x".repeat(MAX_QUERY_CHARS))).not.toThrow();
  });

  test("too long, too many terms (phrases and exclusions count), too many or one-letter prefixes", () => {
    expect(refusal("x".repeat(MAX_QUERY_CHARS + 1))).toMatch(/1001 characters long; keep it under 1000\. Search with a few distinctive words; use grep/);
    expect(refusal(Array.from({ length: 65 }, (_, i) => `w${i}`).join(" "))).toMatch(/65 terms; keep it to 64/);
    expect(refusal(`"${Array.from({ length: 40 }, (_, i) => `p${i}`).join(" ")}" ${Array.from({ length: 30 }, (_, i) => `-x${i}`).join(" ")}`)).toMatch(/70 terms/);
    expect(refusal("ab* cd* ef* gh* ij*")).toMatch(/5 prefix\* terms; keep it to 4/);
    expect(refusal("sync s*")).toMatch(/prefix "s\*" is one letter.*at least two letters/);
  });
});
