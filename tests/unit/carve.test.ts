import { describe, expect, test } from "@jest/globals";
import { Carver, ScratchChunks } from "../../src/core/search/keyword/carve";

describe("Carver", () => {
  test("carves pieces one after another from one big buffer, aligned; copies in what it does not own", () => {
    const c = new Carver();
    const a = c.take(5)!;
    const b = c.take(16)!;
    expect(a.buffer).toBe(b.buffer);
    expect(b.byteOffset).toBe(8);
    expect(c.owns(a)).toBe(true);
    const src = Uint8Array.from([1, 2, 3]);
    expect(c.owns(src)).toBe(false);
    const copied = c.copy(src);
    expect([...copied]).toEqual([1, 2, 3]);
    expect(c.owns(copied)).toBe(true);
    expect(c.copy(copied)).toBe(copied);
    // Too large to carve: left to a buffer of its own.
    expect(c.take(64 << 20)).toBeUndefined();
  });
});

describe("ScratchChunks", () => {
  test("a chunk is reused once every piece taken from it is given back, and not before", () => {
    const before = ScratchChunks.chunkBytes;
    ScratchChunks.chunkBytes = 1024;
    try {
      const s = new ScratchChunks();
      // Pieces of 250 bytes (256 with alignment): four fill a chunk.
      const p0 = s.take(0, 250)!;
      const p1 = s.take(1, 250)!;
      expect(p0.buffer).toBe(p1.buffer);
      // Segment 0 given back, segment 1 not: the chunk still has a live piece, so a full chunk makes a new one.
      s.done(0);
      s.take(2, 250);
      s.take(3, 250);
      const p4 = s.take(4, 250)!;
      expect(s.chunkCount).toBe(2);
      expect(p4.buffer).not.toBe(p0.buffer);
      p1.fill(7);
      // Every piece of the first chunk back: it is the one reused next, from its start.
      for (const k of [1, 2, 3]) s.done(k);
      s.take(5, 250);
      s.take(5, 250);
      s.take(5, 250);
      const again = s.take(6, 250)!;
      expect(s.chunkCount).toBe(2);
      expect(again.buffer).toBe(p0.buffer);
      expect(again.byteOffset).toBe(0);
      // Pieces over a quarter of a chunk are not carved.
      expect(s.take(7, 300)).toBeUndefined();
    } finally {
      ScratchChunks.chunkBytes = before;
    }
  });
});

describe("ScratchChunks.release", () => {
  test("gives back the memory of the chunks with no piece out (they read as empty), keeps the others, and carves anew after", () => {
    const before = ScratchChunks.chunkBytes;
    ScratchChunks.chunkBytes = 1024;
    try {
      const s = new ScratchChunks();
      // Pieces of 250 bytes (256 with alignment): four fill a chunk.
      const p0 = s.take(0, 250)!;
      for (let i = 0; i < 3; i++) s.take(0, 250);
      const p1 = s.take(1, 250)!;
      expect(p0.buffer).not.toBe(p1.buffer);
      expect(s.chunkCount).toBe(2);
      s.done(0);
      s.release();
      // The first chunk had no piece out: detached, forgotten. The second still has one: intact.
      expect(p0.buffer.byteLength).toBe(0);
      expect(p1.buffer.byteLength).toBe(1024);
      expect(s.chunkCount).toBe(1);
      p1.fill(3);
      for (let i = 0; i < 3; i++) s.take(2, 250);
      const p2 = s.take(2, 250)!;
      expect(p2.buffer).not.toBe(p0.buffer);
      expect(p2.buffer).not.toBe(p1.buffer);
      expect(p2.buffer.byteLength).toBe(1024);
      expect(p1.every((b) => b === 3)).toBe(true);
    } finally {
      ScratchChunks.chunkBytes = before;
    }
  });

  test("Carver lists the chunks it carved", () => {
    const c = new Carver();
    const a = c.take(100)!;
    expect(c.chunks).toEqual([a.buffer]);
  });
});
