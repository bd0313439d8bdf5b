import { describe, expect, test } from "@jest/globals";
import { PostingList, PostingPool, TF_OF, tfCode } from "../../src/core/search/keyword/postings";

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

describe("posting pool", () => {
  test("the room it gives never overlaps: ids and tf codes of every list, across slabs and own buffers, keep what was written", () => {
    const pool = new PostingPool();
    const lists: PostingList[] = [];
    // Sizes that cross the first slabs' ends and the own-buffer size (2M postings).
    const sizes = [5, 1 << 17, (1 << 18) - 3, 1 << 20, 300, (1 << 21) + 1, 7];
    sizes.forEach((n, k) => {
      const l = new PostingList();
      l.reserve(n, pool);
      for (let i = 0; i < n; i++) {
        l.ids[i] = i * 7 + k;
        l.tfs[i] = (i + k) & 255;
      }
      l.n = n;
      lists.push(l);
    });
    // Grow the first list past several doublings: its postings move, the others stay.
    const first = lists[0];
    for (let r = 0; r < 20; r++) {
      first.reserve(first.n + 1, pool);
      first.ids[first.n] = first.n * 7;
      first.tfs[first.n] = first.n & 255;
      first.n++;
    }
    sizes[0] = first.n;
    lists.forEach((l, k) => {
      expect(l.ids.length).toBeGreaterThanOrEqual(l.n);
      expect(l.tfs.length).toBe(l.ids.length);
      let bad = 0;
      for (let i = 0; i < sizes[k]; i++) if (l.ids[i] !== i * 7 + k || l.tfs[i] !== ((i + k) & 255)) bad++;
      expect(bad).toBe(0);
    });
    pool.reset();
    const [ids, tfs] = pool.take(10);
    expect(ids.length).toBe(10);
    expect(tfs.length).toBe(10);
  });
});

describe("PostingList.peek", () => {
  test("reads a placed list's postings without keeping views; a pending list is filled once", () => {
    const ids = Int32Array.from([9, 9, 3, 5, 7, 9]);
    const tfs = Uint8Array.from([0, 0, 1, 2, 3, 0]);
    const l = new PostingList();
    l.placeIn(ids, tfs, 2, 3);
    l.n = 3;
    const [pi, pt] = l.peek();
    expect([...pi]).toEqual([3, 5, 7]);
    expect([...pt]).toEqual([1, 2, 3]);
    // Nothing kept: the list still makes its views on first use, over the same room.
    expect((l as unknown as { idView: Int32Array }).idView.length).toBe(0);
    expect([...l.ids]).toEqual([3, 5, 7]);
    expect((l as unknown as { idView: Int32Array }).idView.length).toBe(3);

    let fills = 0;
    const r = new PostingList();
    r.placeIn(ids, tfs, 0, 2);
    r.n = 2;
    r.pending = (x) => {
      fills++;
      expect(x).toBe(r);
      ids[0] = 1;
      ids[1] = 2;
    };
    expect([...r.peek()[0]]).toEqual([1, 2]);
    expect([...r.peek()[0]]).toEqual([1, 2]);
    expect([...r.ids]).toEqual([1, 2]);
    expect(fills).toBe(1);
  });
});
