import { afterEach, describe, expect, test } from "@jest/globals";
import { grownArray, reserveGrowableArrays } from "../../src/core/memory";
import { IdLists } from "../../src/core/graph/id-lists";
import { FlatLists } from "../../src/core/search/keyword/postings";

/** Growable arrays (core/memory.ts): contents kept, zeros after; with reservations, room of their own and growth in place. */
afterEach(() => reserveGrowableArrays(false));

describe("grownArray", () => {
  test("without reservations: an array of the length asked for, the old elements first, zeros after", () => {
    const a = Int32Array.from([1, 2, 3]);
    const b = grownArray(Int32Array, a, 1 << 16);
    expect(b.length).toBe(1 << 16);
    expect(b.buffer.byteLength).toBe(4 << 16);
    expect(Array.from(b.subarray(0, 4))).toEqual([1, 2, 3, 0]);
    expect(b[b.length - 1]).toBe(0);
    expect(grownArray(Float64Array, null, 5)).toEqual(new Float64Array(5));
    expect(() => grownArray(Int32Array, b, 10)).toThrow(RangeError);
  });

  test("with reservations: small arrays as before; from 128 KB a buffer of 33 MB that later growth reuses in place", () => {
    reserveGrowableArrays(true);
    const small = grownArray(Uint8Array, Uint8Array.from([7]), 1000);
    expect(small.buffer.byteLength).toBe(1000);
    const big = grownArray(Int32Array, Int32Array.from([5, 6]), 40_000); // 160 KB
    expect(big.buffer.byteLength).toBe(33 << 20);
    expect(Array.from(big.subarray(0, 3))).toEqual([5, 6, 0]);
    big[39_999] = 9;
    const bigger = grownArray(Int32Array, big, 80_000);
    expect(bigger.buffer).toBe(big.buffer); // in place: no copy, no new block
    expect(bigger[39_999]).toBe(9);
    expect(bigger[40_000]).toBe(0);
    expect(bigger[79_999]).toBe(0);
    // Past the reservation: a buffer of its own again, the elements carried over.
    const past = grownArray(Int32Array, bigger, (33 << 20) / 4 + 1);
    expect(past.buffer).not.toBe(big.buffer);
    expect(past[39_999]).toBe(9);
    // A buffer it did not reserve is never grown in place (another array may share it).
    const shared = new ArrayBuffer(1 << 20);
    const view = new Int32Array(shared, 0, 40_000);
    expect(grownArray(Int32Array, view, 50_000).buffer).not.toBe(shared);
  });

  test("the link graph's lists keep every id through growth in place", () => {
    reserveGrowableArrays(true);
    const lists = new IdLists();
    for (let id = 0; id < 60_000; id++) lists.push(id % 3000, id);
    expect(lists.data.buffer.byteLength).toBe(33 << 20);
    for (const i of [0, 1, 2999]) {
      const got = Array.from(lists.data.subarray(lists.startOf(i), lists.startOf(i) + lists.lengthOf(i)));
      expect(got).toEqual(Array.from({ length: 20 }, (_, k) => i + 3000 * k));
    }
    expect(lists.lengthOf(3000)).toBe(-1);
  });

  test("the packed lists' per-term arrays grow in place, every list kept", () => {
    reserveGrowableArrays(true);
    const flat = new FlatLists();
    const bytes = new Uint8Array(8);
    const cnt = () => (flat as unknown as { cnt: Int32Array }).cnt;
    flat.reserve(40_000); // 160 KB a term array
    for (let g = 0; g < 40_000; g += 7) flat.set(g, bytes, g % 8, 1 + (g % 5));
    const before = cnt().buffer;
    expect(before.byteLength).toBe(33 << 20);
    flat.reserve(2_000_000);
    expect(cnt().buffer).toBe(before);
    flat.set(1_999_999, bytes, 3, 9);
    let wrong = 0;
    for (let g = 0; g < 40_000; g++) if (flat.n(g) !== (g % 7 === 0 ? 1 + (g % 5) : 0)) wrong++;
    expect(wrong).toBe(0);
    expect(flat.take(1_999_999)).toEqual([bytes, 3, 9]);
  });
});
