import { afterEach, describe, expect, test } from "@jest/globals";
import { clearPackedCache, PACKED_CACHE, packedBound, packedCacheBytes, packPostings, PostingList, PostingPool, TF_OF, tfCode } from "../../src/core/search/keyword/postings";

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

describe("packed posting lists", () => {
  /** A packed list of `ids` (ascending) with tf codes `tfs`. */
  const packed = (ids: number[], tfs: number[]): PostingList => {
    const out = new Uint8Array(packedBound(ids.length) + 3);
    const n = packPostings(Int32Array.from(ids), Uint8Array.from(tfs), ids.length, out, 3);
    const l = new PostingList();
    l.setPacked(out, 3, ids.length);
    expect(n).toBeLessThanOrEqual(packedBound(ids.length));
    return l;
  };
  const budget = PACKED_CACHE.bytes;
  afterEach(() => {
    PACKED_CACHE.bytes = budget;
    clearPackedCache();
  });

  test("a packed list reads back every id and tf code, near ids in one byte each and ids up to 2^26, tf codes in nibbles", () => {
    const ids = [1, 2, 3, 130, 131, 20_000, 20_001, 3_000_000, (1 << 26) - 1, (1 << 26) + 7];
    // Codes 14 and 15 sit on the nibble's edge; 0 and 255 at the ends; an odd count of escapes and of postings.
    const tfs = [1, 2, 255, 14, 15, 0, 7, 8, 191, 16];
    for (const n of [ids.length, ids.length - 1]) {
      clearPackedCache();
      const l = packed(ids.slice(0, n), tfs.slice(0, n));
      expect([...l.peek()[1].subarray(0, n)]).toEqual(tfs.slice(0, n));
      expect([...l.peek()[0].subarray(0, n)]).toEqual(ids.slice(0, n));
      expect([...l.tfs.subarray(0, l.n)]).toEqual(tfs.slice(0, n));
      expect([...l.ids.subarray(0, l.n)]).toEqual(ids.slice(0, n));
    }
    // 1,000 neighbours with tf codes below 15: a byte for the id's step (and the first id's two), half a byte for the tf.
    const near = Array.from({ length: 1000 }, (_, i) => 5000 + i * 3);
    const out = new Uint8Array(packedBound(near.length));
    expect(packPostings(Int32Array.from(near), new Uint8Array(1000).fill(1), 1000, out, 0)).toBe(1000 + 1 + 500);
    // The same with every tf code 200: a byte each after the nibbles.
    expect(packPostings(Int32Array.from(near), new Uint8Array(1000).fill(200), 1000, out, 0)).toBe(1000 + 1 + 500 + 1000);
  });

  test("decoded ids are kept up to the cache's budget, least recently used leaving first; a list left out decodes again, and an array a reader holds stays whole", () => {
    PACKED_CACHE.bytes = 1000 * 5 * 2; // two lists of 1,000 (ids and tf codes)
    const lists = [0, 1, 2].map((k) => packed(Array.from({ length: 1000 }, (_, i) => 1 + i * 5 + k), new Array(1000).fill(k + 1)));
    const held = lists[0].ids;
    const heldTfs = lists[0].tfs;
    void lists[1].ids;
    void lists[0].ids; // used again: list 1 is now the least recently used
    expect(packedCacheBytes()).toBe(10000);
    void lists[2].ids;
    expect(packedCacheBytes()).toBe(10000);
    // List 1 left the cache; 0 and 2 are kept (the same arrays).
    expect(lists[0].ids).toBe(held);
    expect(lists[1].idView.length).toBe(0);
    expect(lists[1].ids[999]).toBe(1 + 999 * 5 + 1);
    // Reading list 1 pushed out list 2 (0 was used after it); what a reader holds is intact.
    expect(lists[2].idView.length).toBe(0);
    expect(held[999]).toBe(1 + 999 * 5);
    expect(heldTfs[999]).toBe(1);
    expect(lists[2].tfView.length).toBe(0);
    // peek reads a list that is not cached without caching it.
    const [pi] = lists[2].peek();
    expect(pi[999]).toBe(1 + 999 * 5 + 2);
    expect(lists[2].idView.length).toBe(0);
    expect(packedCacheBytes()).toBe(10000);
    // Asking for the tf codes alone decodes the list too (and caches it).
    expect(lists[2].tfs[999]).toBe(3);
    expect(lists[2].idView[999]).toBe(1 + 999 * 5 + 2);
    expect(packedCacheBytes()).toBe(10000);
  });

  test("a packed list that grows is unpacked into the pool, leaves the cache, and keeps its postings", () => {
    const pool = new PostingPool();
    const l = packed([3, 9, 40], [1, 2, 3]);
    expect(l.ids.length).toBe(3);
    expect(packedCacheBytes()).toBe(15);
    l.reserve(2, pool);
    expect(l.packed).toBeNull();
    expect(packedCacheBytes()).toBe(0);
    l.ids[3] = 41;
    l.tfs[3] = 4;
    l.n = 4;
    expect([...l.ids.subarray(0, 4)]).toEqual([3, 9, 40, 41]);
    expect([...l.tfs.subarray(0, 4)]).toEqual([1, 2, 3, 4]);
    clearPackedCache();
    expect([...l.ids.subarray(0, 4)]).toEqual([3, 9, 40, 41]);
  });

  test("lists short and long (copied a posting at a time up to 16, as a block above) keep every posting when they grow", () => {
    const pool = new PostingPool();
    for (const n of [1, 2, 15, 16, 17, 40, 5000]) {
      const ids = Array.from({ length: n }, (_, i) => 7 + i * 3);
      const tfs = Array.from({ length: n }, (_, i) => 1 + (i % 14));
      const l = packed(ids, tfs);
      expect(l.reserve(1, pool)).toBe(n); // copied
      expect(l.packed).toBeNull();
      expect([...l.ids.subarray(0, n)]).toEqual(ids);
      expect([...l.tfs.subarray(0, n)]).toEqual(tfs);
      expect(l.reserve(1, pool)).toBe(0); // room already there
      const grow = l.ids.length - n + 1;
      expect(l.reserve(grow, pool)).toBe(n); // a plain list that outgrows its room: copied too
      expect([...l.ids.subarray(0, n)]).toEqual(ids);
      expect([...l.tfs.subarray(0, n)]).toEqual(tfs);
    }
  });
});
