/**
 * The room packed lists' decoded postings take (decoded-room.ts; postings.ts `usePacked`): blocks in
 * a few size classes, reused once the task that let them go has ended, never more carved than the cap.
 */
import { afterEach, describe, expect, test } from "@jest/globals";
import { DecodedRoom, roomFor } from "../../src/core/search/keyword/decoded-room";
import { clearPackedCache, decodedRoomBytes, PACKED_CACHE, packedBound, packPostings, PostingList } from "../../src/core/search/keyword/postings";

const nextTask = (): Promise<void> => new Promise((r) => setTimeout(r, 10));

describe("decoded lists' room", () => {
  test("a block's room is at most a quarter more than asked, 64 bytes at least, a multiple of 8", () => {
    for (let bytes = 1; bytes < 300_000; bytes += 1 + Math.floor(bytes / 50)) {
      const r = roomFor(bytes);
      expect(r).toBeGreaterThanOrEqual(bytes);
      expect(r % 8).toBe(0);
      if (bytes > 64) expect(r).toBeLessThanOrEqual(bytes * 1.25);
      else expect(r).toBe(64);
    }
    expect([roomFor(65), roomFor(80), roomFor(81), roomFor(128), roomFor(129)]).toEqual([80, 80, 96, 128, 160]);
  });

  test("a block let go is taken again only after the task ends; the cap and the slab's quarter say no", async () => {
    const room = new DecodedRoom(() => 4096, 16384, 16384);
    const a = room.take(1000)!;
    expect(a.size).toBe(1024);
    new Uint8Array(a.slab, a.at, a.size).fill(7);
    room.retire(a);
    // Same task: the room is not reused (a reader may still hold a's arrays).
    const b = room.take(1000)!;
    expect(b.at).not.toBe(a.at);
    expect(new Uint8Array(a.slab, a.at, a.size).every((v) => v === 7)).toBe(true);
    expect(room.idleBytes).toBe(1024);
    await nextTask();
    // After it: a's block serves a request of its class or of a smaller one (up to twice the room).
    const c = room.take(600)!;
    expect([c.slab, c.at, c.size]).toEqual([a.slab, a.at, 1024]);
    expect(room.idleBytes).toBe(0);
    expect(room.carved).toBe(2048);
    // 4096 carved at most: 2048 more fit, then nothing.
    expect(room.take(2000)).not.toBeNull();
    expect(room.carved).toBe(4096);
    expect(room.take(100)).toBeNull();
    // Slabs grow: the first one's size, then twice the last (a block larger than that gets a slab it fits).
    const growing = new DecodedRoom(() => 1 << 30, 4096, 1 << 20);
    const sizes = new Set<number>();
    for (let k = 0; k < 40; k++) sizes.add(growing.take(1000)!.slab.byteLength);
    expect([...sizes]).toEqual([4096, 8192, 16384, 32768]);
    expect(growing.take(100_000)!.slab.byteLength).toBe(131072);
    // More than a quarter of a slab is never carved.
    expect(new DecodedRoom(() => 1 << 30, 16384, 16384).take(4097)).toBeNull();
  });
});

describe("packed lists decoded into the room", () => {
  const packed = (ids: number[], tf: number): PostingList => {
    const out = new Uint8Array(packedBound(ids.length));
    packPostings(Int32Array.from(ids), new Uint8Array(ids.length).fill(tf), ids.length, out, 0);
    const l = new PostingList();
    l.setPacked(out, 0, ids.length);
    return l;
  };
  const budget = PACKED_CACHE.bytes;
  afterEach(() => {
    PACKED_CACHE.bytes = budget;
    clearPackedCache();
  });

  test("searches that keep decoding lists past the cache reuse its room: every decode lands in it, never more than twice the budget carved, every list read back whole", async () => {
    PACKED_CACHE.bytes = 64 * 1024;
    const lists = Array.from({ length: 60 }, (_, k) => packed(Array.from({ length: 100 + 7 * k }, (_, i) => 1 + i * 3 + (k % 3)), 1 + (k % 200)));
    clearPackedCache(); // a room of its own
    const carvedAfter: number[] = [];
    for (let round = 0; round < 12; round++) {
      // A "search" of a task: ten lists read, each checked whole.
      for (let q = 0; q < 10; q++) {
        const l = lists[(round * 17 + q * 7) % lists.length];
        const k = lists.indexOf(l);
        const ids = l.ids;
        const tfs = l.tfs;
        expect(ids.length).toBe(l.n);
        // In one of the room's slabs (1 MB at least), not in arrays of its own: the room had a block for it.
        expect(ids.buffer.byteLength).toBeGreaterThanOrEqual(1 << 20);
        expect([ids[0], ids[l.n - 1], tfs[l.n - 1]]).toEqual([1 + (k % 3), 1 + (l.n - 1) * 3 + (k % 3), 1 + (k % 200)]);
      }
      carvedAfter.push(decodedRoomBytes().carved);
      await nextTask();
    }
    // Never more than twice the budget carved: past it, every decode above took room freed by the lists before.
    expect(Math.max(...carvedAfter)).toBeLessThanOrEqual(2 * PACKED_CACHE.bytes);
  });

  test("a list pushed out of the cache while a reader holds its arrays stays whole until the reader's task ends", () => {
    PACKED_CACHE.bytes = 2000 * 5;
    clearPackedCache();
    const a = packed(Array.from({ length: 2000 }, (_, i) => 2 * i + 1), 5);
    const held = a.ids;
    // Lists decoded after it in the same task push it out, and take room of their own.
    for (let k = 0; k < 8; k++) void packed(Array.from({ length: 2000 }, (_, i) => 2 * i + 2), 9).ids;
    expect(a.idView.length).toBe(0);
    expect(held.buffer.byteLength).toBeGreaterThanOrEqual(1 << 20);
    expect(held.every((v, i) => v === 2 * i + 1)).toBe(true);
  });
});
