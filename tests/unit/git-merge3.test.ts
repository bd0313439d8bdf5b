import { describe, expect, test } from "@jest/globals";
import { mergeTexts } from "../../src/core/git/merge3";

/** The three-way merge our own commits use to apply our change to HEAD's version of a note. */
describe("mergeTexts", () => {
  const base = "one\ntwo\nthree\nfour\nfive\nsix\n";

  test("changes apart from each other are both kept, byte for byte", () => {
    expect(mergeTexts(base, "ONE\ntwo\nthree\nfour\nfive\nsix\n", "one\ntwo\nthree\nfour\nfive\nSIX\n")).toBe("ONE\ntwo\nthree\nfour\nfive\nSIX\n");
    expect(mergeTexts("a\r\nb\r\nc\r\nd\r\n", "A\r\nb\r\nc\r\nd\r\n", "a\r\nb\r\nc\r\nD\r\n")).toBe("A\r\nb\r\nc\r\nD\r\n");
    expect(mergeTexts(base, base + "seven\n", "zero\n" + base)).toBe("zero\n" + base + "seven\n");
  });

  test("one side unchanged gives the other; both the same gives it", () => {
    expect(mergeTexts(base, base, "x\n")).toBe("x\n");
    expect(mergeTexts(base, "x\n", base)).toBe("x\n");
    expect(mergeTexts(base, "x\n", "x\n")).toBe("x\n");
  });

  test("changes on the same or adjacent lines, or insertions at one place, are refused", () => {
    expect(mergeTexts(base, "one\nTWO\nthree\nfour\nfive\nsix\n", "one\ntwo!\nthree\nfour\nfive\nsix\n")).toBeNull();
    expect(mergeTexts(base, "one\nTWO\nthree\nfour\nfive\nsix\n", "one\ntwo\nTHREE\nfour\nfive\nsix\n")).toBeNull();
    expect(mergeTexts(base, "one\ntwo\nmine\nthree\nfour\nfive\nsix\n", "one\ntwo\ntheirs\nthree\nfour\nfive\nsix\n")).toBeNull();
  });

  test("a last line without a newline is kept as it is", () => {
    expect(mergeTexts("a\nb\nc\nd", "A\nb\nc\nd", "a\nb\nc\nD")).toBe("A\nb\nc\nD");
  });
});
