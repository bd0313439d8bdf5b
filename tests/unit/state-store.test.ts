import { afterEach, describe, expect, jest, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { FsStateStore } from "../../src/hosts/node/state-store";

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) fs.rmSync(dirs.pop()!, { recursive: true, force: true });
});
function temp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "statestore-"));
  dirs.push(d);
  return d;
}
const text = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));

describe("FsStateStore", () => {
  test("creates its folder lazily; read is null when missing", async () => {
    const dir = path.join(temp(), "a", "b");
    const s = new FsStateStore(dir);
    expect(fs.existsSync(dir)).toBe(false);
    expect(await s.read("index.db")).toBeNull();
    expect(fs.existsSync(dir)).toBe(false);
    await s.write("index.db", "v1");
    expect(fs.existsSync(dir)).toBe(true);
    expect(text(await s.read("index.db"))).toBe("v1");
  });

  test("a slow synchronous read switches it to asynchronous reads; the bytes are the same", async () => {
    const s = new FsStateStore(temp());
    await s.write("a.db", "constructor");
    await s.write("b.db", "__proto__ toString");
    expect(text(await s.read("a.db"))).toBe("constructor");
    expect(s.readsAsync).toBe(false);
    s.slowReadMs = -1; // every synchronous read counts as slow
    expect(text(await s.read("a.db"))).toBe("constructor");
    expect(s.readsAsync).toBe(true);
    const sync = jest.spyOn(jest.requireActual<typeof fs>("node:fs"), "readFileSync");
    const syncInto = jest.spyOn(jest.requireActual<typeof fs>("node:fs"), "readSync");
    try {
      expect(text(await s.read("b.db"))).toBe("__proto__ toString");
      const room = new Uint8Array(64);
      expect(text(await s.readInto("b.db", (n) => room.subarray(0, n)))).toBe("__proto__ toString");
      expect(sync).not.toHaveBeenCalled();
      expect(syncInto).not.toHaveBeenCalled();
    } finally {
      sync.mockRestore();
      syncInto.mockRestore();
    }
  });

  test("readInto reads a file into the room it is given (or its own buffer), null when missing", async () => {
    const s = new FsStateStore(temp());
    const sizes: number[] = [];
    const big = new Uint8Array(64);
    const room = (n: number) => {
      sizes.push(n);
      return big.subarray(8, 8 + n);
    };
    expect(await s.readInto("index.db", room)).toBeNull();
    await s.write("index.db", "constructor");
    const got = await s.readInto("index.db", room);
    expect(text(got)).toBe("constructor");
    expect(got!.buffer).toBe(big.buffer);
    expect(got!.byteOffset).toBe(8);
    expect(sizes).toEqual([11]);
    // No room given: the store's own buffer.
    const own = await s.readInto("index.db", () => undefined);
    expect(text(own)).toBe("constructor");
    expect(own!.buffer).not.toBe(big.buffer);
  });

  test("write replaces atomically and leaves no temp files", async () => {
    const dir = temp();
    const s = new FsStateStore(dir);
    await s.write("x.bin", new Uint8Array([1, 2, 3]));
    await Promise.all([s.write("x.bin", "one"), s.write("x.bin", "two")]);
    expect(["one", "two"]).toContain(text(await s.read("x.bin")));
    expect(fs.readdirSync(dir)).toEqual(["x.bin"]);
  });

  test("append adds lines; remove deletes (and tolerates missing)", async () => {
    const s = new FsStateStore(temp());
    await s.append("activity.log", "first");
    await s.append("activity.log", "second\n");
    expect(text(await s.read("activity.log"))).toBe("first\nsecond\n");
    await s.remove("activity.log");
    await s.remove("activity.log");
    expect(await s.read("activity.log")).toBeNull();
  });

  test("refuses names that climb out of its folder", async () => {
    const s = new FsStateStore(temp());
    await expect(s.write("../escape", "x")).rejects.toThrow(/Invalid state file name/);
    await expect(s.read("/etc/passwd")).rejects.toThrow(/Invalid state file name/);
  });

  test("description is vault-relative inside the vault, ~-relative otherwise", () => {
    const vault = temp();
    expect(new FsStateStore(path.join(vault, ".obsidian", "plugins", "vault-mcp"), vault).description).toBe(".obsidian/plugins/vault-mcp");
    expect(new FsStateStore("/home/u/.cache/vault-mcp/v-123", vault, "/home/u").description).toBe("~/.cache/vault-mcp/v-123");
    expect(new FsStateStore("/srv/state", vault, "/home/u").description).toBe("/srv/state");
  });
});
