/** The index's byte writer encodes text as UTF-8 itself (saving the dictionary): it must write exactly what TextEncoder writes. */
import { describe, expect, test } from "@jest/globals";
import { ByteWriter } from "../../src/core/search/keyword/codec";

describe("ByteWriter.text", () => {
  test("writes the bytes TextEncoder writes, lone surrogates included, across growth", () => {
    const samples = [
      "",
      "plain ascii",
      "naïve café ß",
      "東京都 検索 한국어",
      "emoji 😀 and 𝄞 clef",
      "lone high \ud83d at the end \ud83d",
      "lone low \ude00 here",
      "high then letter \ud83dx",
      "\udbff\udfff last code point",
      "\u007f\u0080\u07ff\u0800\uffff edges",
    ];
    const w = new ByteWriter(4); // tiny: every sample makes it grow
    const expected: number[] = [];
    for (const s of samples) {
      w.text(s);
      w.byte(0x0a);
      expected.push(...new TextEncoder().encode(s), 0x0a);
    }
    expect(Array.from(w.view())).toEqual(expected);
    // Random strings of any UTF-16 units.
    let seed = 3;
    const rnd = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    for (let round = 0; round < 200; round++) {
      let s = "";
      for (let i = rnd(40); i > 0; i--) s += String.fromCharCode([rnd(0x80), rnd(0x800), rnd(0x10000), 0xd800 + rnd(0x800)][rnd(4)]);
      const one = new ByteWriter(1);
      one.text(s);
      expect(Buffer.from(one.view()).equals(Buffer.from(new TextEncoder().encode(s)))).toBe(true);
    }
  });
});
