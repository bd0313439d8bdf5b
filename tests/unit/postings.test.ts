import { describe, expect, test } from "@jest/globals";
import { TF_OF, tfCode } from "../../src/core/search/keyword/postings";

describe("posting tf codes", () => {
  test("weighted tfs up to 191 are kept exactly; above, every code stands for itself and the scale rises to 65535", () => {
    for (let tf = 0; tf <= 191; tf++) expect(TF_OF[tfCode(tf)]).toBe(tf);
    for (let c = 0; c < 256; c++) expect(tfCode(TF_OF[c])).toBe(c);
    for (let c = 1; c < 256; c++) expect(TF_OF[c]).toBeGreaterThan(TF_OF[c - 1]);
    expect(TF_OF[255]).toBe(0xffff);
  });

  test("a coded tf above 191 is within 5% of the tf", () => {
    for (let tf = 192; tf <= 0xffff; tf += 7) {
      const q = TF_OF[tfCode(tf)];
      expect(Math.abs(q - tf) / tf).toBeLessThan(0.05);
    }
    expect(tfCode(0xffff)).toBe(255);
    expect(tfCode(1 << 27)).toBe(255);
  });
});
