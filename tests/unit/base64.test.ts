import fc from "fast-check";
import { decodeBase64, decodeBase64InSteps, encodeBase64, encodeBase64InSteps } from "../../src/core/write/base64";

const counting = () => {
  const y = { count: 0, now: async () => void y.count++ };
  return y;
};

describe("base64", () => {
  it("encodes like Node's Buffer and decodes standard and URL-safe text, whitespace and missing padding included", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(7), (bytes, gap) => {
        const b = Buffer.from(bytes);
        expect(encodeBase64(bytes)).toBe(b.toString("base64"));
        expect(decodeBase64(b.toString("base64"))).toEqual(bytes);
        const spaced = b.toString("base64url").replace(new RegExp(`(.{${gap + 1}})`, "g"), "$1\n\u00a0") + " = \n";
        expect(decodeBase64(spaced)).toEqual(bytes);
      }),
      { seed: 23, numRuns: 300 },
    );
  });

  it("refuses text that is not base64", () => {
    for (const bad of ["a", "abcde", "ab$c", "AA==AA", "QQé", "QQ\u0000"]) expect(decodeBase64(bad)).toBeNull();
    expect(decodeBase64("  \n")).toEqual(new Uint8Array(0));
  });

  it("works a megabyte at a time in steps, with the same result as in one step", async () => {
    const bytes = Buffer.from(new Uint8Array(3_500_000).map((_, i) => (i * 7919) & 255));
    // Buffer.equals: Jest's deep equality takes seconds over millions of elements.
    const same = (d: Uint8Array | null) => d !== null && bytes.equals(d);
    const enc = counting();
    const text = await encodeBase64InSteps(bytes, enc.now);
    expect(text).toBe(bytes.toString("base64"));
    expect(enc.count).toBe(4); // 4.67 MB of base64: five steps, four yields between them
    const dec = counting();
    expect(same(await decodeBase64InSteps(text, dec.now))).toBe(true);
    expect(dec.count).toBe(4);
    expect(await decodeBase64InSteps(`${text.slice(0, 2_000_000)}*${text.slice(2_000_000)}`, counting().now)).toBeNull();
    expect(await encodeBase64InSteps(new Uint8Array(0), enc.now)).toBe("");
  });
});
