import { afterAll, describe, expect, jest, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ReadPool } from "../../src/hosts/node/read-pool";

/**
 * The headless vault's pooled reads (opening on a slow disk): every file's text exactly, whatever
 * its size against the listed one and the pool's buffers, and a few buffers for many files.
 */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-mcp-read-pool-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
function put(name: string, text: string): string {
  const abs = path.join(dir, name);
  fs.writeFileSync(abs, text);
  return abs;
}
/** `n` bytes of UTF-8 text whose 3-byte characters straddle every 64 KB boundary of a buffer. */
function text(n: number): string {
  const unit = "ab€constructor __proto__ toString\n";
  // Cut at n bytes: a character cut in two at the end becomes U+FFFD, as the decoder would make it.
  return Buffer.from(unit.repeat(Math.ceil(n / Buffer.byteLength(unit)))).subarray(0, n).toString("utf8");
}

describe("ReadPool", () => {
  test("reads each file's text exactly: empty, around the buffer sizes, larger than pooled, multi-byte characters at the seams", async () => {
    const pool = new ReadPool(decoder);
    for (const n of [0, 1, 65535, 65536, 65537, 131072, 200_000, 1_048_577, 2_500_000]) {
      const t = text(n);
      const abs = put(`f${n}.md`, t);
      expect(await pool.text(abs, Buffer.byteLength(t))).toBe(t);
    }
  });

  test("a file larger or smaller than its listed size is read whole", async () => {
    const pool = new ReadPool(decoder);
    const big = text(300_000);
    expect(await pool.text(put("grew.md", big), 10)).toBe(big);
    const small = text(100);
    expect(await pool.text(put("shrank.md", small), 500_000)).toBe(small);
    // A BOM stays in the text (as Obsidian reads it), as with the vault's other reads.
    expect(await pool.text(put("bom.md", "\uFEFFhello"), 8)).toBe("\uFEFFhello");
  });

  test("a missing file or a folder rejects, and the pool still reads afterwards", async () => {
    const pool = new ReadPool(decoder);
    await expect(pool.text(path.join(dir, "no such note.md"), 10)).rejects.toMatchObject({ code: "ENOENT" });
    fs.mkdirSync(path.join(dir, "folder.md"), { recursive: true });
    await expect(pool.text(path.join(dir, "folder.md"), 10)).rejects.toMatchObject({ code: "EISDIR" });
    expect(await pool.text(put("after.md", "still here"), 10)).toBe("still here");
  });

  test("200 files, 16 at a time: each its own text, through at most 16 buffers", async () => {
    const pool = new ReadPool(decoder);
    const files = Array.from({ length: 200 }, (_, i) => {
      const t = `# Note ${i}\n\n${text(1000 + i * 37)}`;
      return { abs: put(`n${i}.md`, t), t };
    });
    const made = jest.spyOn(Buffer, "allocUnsafeSlow");
    try {
      for (let i = 0; i < files.length; i += 16) {
        const batch = files.slice(i, i + 16);
        const got = await Promise.all(batch.map((f) => pool.text(f.abs, Buffer.byteLength(f.t))));
        expect(got).toEqual(batch.map((f) => f.t));
      }
      expect(made.mock.calls.length).toBeLessThanOrEqual(16);
    } finally {
      made.mockRestore();
    }
  });
});
