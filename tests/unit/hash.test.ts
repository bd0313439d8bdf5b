import { describe, expect, test } from "@jest/globals";
import type { Stats } from "node:fs";
import { hash53, hash53OfHashText, hashText } from "../../src/core/hash";
import { sigOf } from "../../src/hosts/node/vault-state";

describe("hash53", () => {
  test("is hashText's two lanes as one exact integer below 2^53", () => {
    for (const s of ["", "a", "constructor", "__proto__", "12:1700000000123.456:1700000000123.456:98765", "日本語のノート"]) {
      const n = hash53(s);
      expect(Number.isSafeInteger(n)).toBe(true);
      expect(n).toBeGreaterThanOrEqual(0);
      const hex = hashText(s);
      const hi = parseInt(hex.slice(0, 8), 16);
      const lo = parseInt(hex.slice(8, 16), 16);
      expect(n).toBe((hi & 0x1fffff) * 2 ** 32 + lo);
    }
  });

  test("hash53OfHashText reads a hashText as the hash53 of its text; another string gets a hash of its own", () => {
    for (const s of ["", "a", "constructor", "__proto__", "toString", "x".repeat(70000), "日本語のノート"]) {
      expect(hash53OfHashText(hashText(s))).toBe(hash53(s));
    }
    // Not a hashText (an index entry written by hand, or damaged): never a text's hash by design.
    expect(hash53OfHashText("n1.md")).toBe(hash53("n1.md"));
    expect(hash53OfHashText("0123456789abcdef")).toBe(hash53("0123456789abcdef"));
  });

  test("a change signature tells apart stats that differ in one field only", () => {
    const st = (size: number, mtimeMs: number, ctimeMs: number, ino: number) => ({ size, mtimeMs, ctimeMs, ino }) as Stats;
    const base = sigOf(st(120, 1700000000123.25, 1700000000456.5, 4242));
    expect(sigOf(st(120, 1700000000123.25, 1700000000456.5, 4242))).toBe(base);
    const others = [st(121, 1700000000123.25, 1700000000456.5, 4242), st(120, 1700000000123.5, 1700000000456.5, 4242), st(120, 1700000000123.25, 1700000000457.5, 4242), st(120, 1700000000123.25, 1700000000456.5, 4243)];
    for (const o of others) expect(sigOf(o)).not.toBe(base);
    // 100k files listed one after another (inodes in a row, times a millisecond apart): no two alike,
    // each an exact integer below 2^53.
    const seen = new Set<number>();
    for (let i = 0; i < 100_000; i++) seen.add(sigOf(st(100 + (i % 7), 1700000000000 + i, 1700000000000 + i, 5000 + i)));
    expect(seen.size).toBe(100_000);
    expect([...seen].every((x) => Number.isSafeInteger(x) && x >= 0)).toBe(true);
  });
});
