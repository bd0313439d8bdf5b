import { describe, expect, test } from "@jest/globals";
import { FlatLists, ListSlots, packedBound, packPostings, PostingList } from "../../src/core/search/keyword/postings";

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

/** Term id → list object, in pages made and let go with their objects. */
describe("ListSlots", () => {
  test("keeps objects across pages, counts them and lets a page go with its last object", () => {
    const s = new ListSlots();
    s.grow(10_000);
    expect([s.length, s.count, s.pagesHeld]).toEqual([10_000, 0, 0]);
    const a = new PostingList();
    const b = new PostingList();
    s.set(5, a);
    s.set(4095, b);
    s.set(4096, a);
    s.set(9999, b);
    expect([s.get(5), s.get(4095), s.get(4096), s.get(9999), s.get(6), s.get(8000)]).toEqual([a, b, a, b, undefined, undefined]);
    expect([s.count, s.pagesHeld]).toEqual([4, 3]);
    s.set(5, b); // replaced: still one object there
    expect([s.get(5), s.count]).toEqual([b, 4]);
    s.set(6, undefined); // nothing there: nothing changes
    expect(s.count).toBe(4);
    s.set(5, undefined);
    expect([s.count, s.pagesHeld, s.get(4095)]).toEqual([3, 3, b]);
    s.set(4095, undefined);
    expect([s.count, s.pagesHeld]).toEqual([2, 2]);
    expect([...s.values()]).toEqual([a, b]);
    s.set(20_000, a); // past `length`: slots grow
    expect([s.length, s.get(20_000), s.count]).toEqual([20_001, a, 3]);
    for (const g of [4096, 9999, 20_000]) s.set(g, undefined);
    expect([s.count, s.pagesHeld, [...s.values()]]).toEqual([0, 0, []]);
    // A page let go is made again for another page (packing makes and drops a term's object in turn): it holds nothing else.
    for (let g = 0; g < 20_000; g += 97) {
      s.set(g, a);
      expect([s.get(g), s.get(g ^ 1), s.count, s.pagesHeld]).toEqual([a, undefined, 1, 1]);
      s.set(g, undefined);
    }
    s.set(3, a);
    s.set(8193, b);
    expect([s.get(3), s.get(8193), s.get(4), s.get(8192), s.count, [...s.values()]]).toEqual([a, b, undefined, undefined, 2, [a, b]]);
  });
});
