import { describe, expect, test } from "@jest/globals";
import { IdLists } from "../../src/core/graph/id-lists";

function read(l: IdLists, i: number): number[] | undefined {
  const n = l.lengthOf(i);
  if (n < 0) return undefined;
  const s = l.startOf(i);
  return [...l.data.subarray(s, s + n)];
}

const readAll = (l: IdLists, n: number) => Array.from({ length: n }, (_, j) => read(l, j));
const refAll = (ref: (number[] | undefined)[], n: number) => Array.from({ length: n }, (_, j) => ref[j]);

describe("IdLists (the link graph's lists in one typed array)", () => {
  test("set, push, removeOne, remove and compaction agree with plain arrays over random operations", () => {
    let seed = 12345;
    const rnd = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const l = new IdLists();
    const ref: (number[] | undefined)[] = [];
    for (let step = 0; step < 60000; step++) {
      const i = rnd(3000);
      const op = rnd(10);
      if (op < 4) {
        const id = rnd(500);
        l.push(i, id);
        (ref[i] ??= []).push(id);
      } else if (op < 6) {
        const ids = Array.from({ length: rnd(9) }, () => rnd(500) - 1);
        l.set(i, ids);
        ref[i] = [...ids];
      } else if (op < 8) {
        const cur = ref[i];
        const id = cur && cur.length > 0 && rnd(2) === 0 ? cur[rnd(cur.length)] : rnd(500);
        const k = cur ? cur.lastIndexOf(id) : -1;
        expect(l.removeOne(i, id)).toBe(k >= 0);
        if (cur && k >= 0) {
          cur[k] = cur[cur.length - 1];
          cur.pop();
        }
      } else if (op < 9) {
        l.remove(i);
        ref[i] = undefined;
      } else if (rnd(50) === 0) {
        l.compact(true);
      }
      // One comparison of every list at a time (an expect per list was most of the test's time).
      if (step % 997 === 0) expect(readAll(l, 3000)).toEqual(refAll(ref, 3000));
    }
    expect(readAll(l, 3100)).toEqual(refAll(ref, 3100));
    l.compact(true);
    expect(readAll(l, 3100)).toEqual(refAll(ref, 3100));
    l.clear();
    expect(l.lengthOf(0)).toBe(-1);
  });
});
