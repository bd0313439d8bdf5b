import { expect, test } from "@jest/globals";
import { READ_AHEAD, ReadWindow } from "../../src/core/search/keyword/index-files";
import { MemoryStateStore } from "../../src/core/state";

test("loading reads segment files in order, never more than READ_AHEAD ahead of what it has taken, and a failed read is its Error", async () => {
  const store = new MemoryStateStore();
  const names = Array.from({ length: 3 * READ_AHEAD }, (_, i) => `seg-${i}`);
  for (const n of names) await store.write(n, n);
  const started: string[] = [];
  const read = store.read.bind(store);
  store.read = (name: string) => {
    started.push(name);
    if (name === "seg-5") return Promise.reject(new Error("disk said no"));
    return read(name);
  };
  const tick = () => new Promise<void>((r) => setImmediate(r));
  const w = new ReadWindow(store, names, tick);
  const dec = new TextDecoder();
  for (let k = 0; k < names.length; k++) {
    const b = await w.take(k);
    // Let every started read finish: none beyond the window may have started.
    for (let i = 0; i < 4 * READ_AHEAD; i++) await tick();
    expect(started.length).toBe(Math.min(names.length, k + READ_AHEAD));
    if (k === 5) expect(b).toEqual(new Error("disk said no"));
    else expect(dec.decode(b as Uint8Array)).toBe(`seg-${k}`);
  }
  expect(started).toEqual(names);
});
