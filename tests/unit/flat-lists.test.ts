import { describe, expect, test } from "@jest/globals";
import { FlatLists, packedBound, packPostings } from "../../src/core/search/keyword/postings";

/** Packed posting lists kept without an object each (what compaction leaves, 12 bytes a term). */
describe("FlatLists", () => {
  const pack = (ids: number[], tfs: number[]): Uint8Array => {
    const out = new Uint8Array(packedBound(ids.length));
    return out.slice(0, packPostings(Int32Array.from(ids), Uint8Array.from(tfs), ids.length, out, 0));
  };

  test("holds, reads back, hands out and lets go of packed lists; a term past the reserved ones is not lost", () => {
    const f = new FlatLists();
    f.reserve(4);
    const a = pack([3, 9, 200_000], [1, 2, 30]);
    const b = pack([7], [5]);
    f.set(1, a, 0, 3);
    f.set(2, b, 0, 1);
    f.set(10, b, 0, 1); // beyond `reserve`
    expect([f.n(0), f.n(1), f.n(2), f.n(10), f.n(99)]).toEqual([0, 3, 1, 1, 0]);
    expect(f.total).toBe(5);
    const [ids, tfs] = f.peek(1);
    expect([...ids.subarray(0, 3)]).toEqual([3, 9, 200_000]);
    expect([...tfs.subarray(0, 3)]).toEqual([1, 2, 30]);
    const taken = f.take(2)!;
    expect([taken[0] === b, taken[1], taken[2]]).toEqual([true, 0, 1]);
    expect(f.take(2)).toBeNull();
    expect(f.total).toBe(4);
    // Only `b` is still pointed into by term 10 and `a` by term 1: nothing is let go yet.
    f.prune();
    expect([...f.peek(10)[0].subarray(0, 1)]).toEqual([7]);
    f.take(10);
    f.prune();
    expect([...f.peek(1)[0].subarray(0, 3)]).toEqual([3, 9, 200_000]);
  });
});
