/** The index of the first element ≥ `v` in the ascending `a[lo, hi)` (`hi` when there is none). */
export function lowerBound(a: ArrayLike<number>, v: number, lo = 0, hi = a.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * `lowerBound` in the ascending `a[from, end)` for a `v` expected near `from`: steps of 1, 2, 4, …
 * find a bound, then a binary search within it (a walk through sorted values skipping ahead).
 */
export function gallop(a: ArrayLike<number>, v: number, from: number, end: number): number {
  if (from >= end || a[from] >= v) return from;
  let lo = from;
  let step = 1;
  let hi = from + 1;
  while (hi < end && a[hi] < v) {
    lo = hi;
    step *= 2;
    hi = lo + step;
  }
  return lowerBound(a, v, lo + 1, Math.min(hi, end));
}

/** A max-heap of ids ordered by `key[id]`, in `heap[0, n)`: moves `heap[k]` down to its place. */
export function heapDown(heap: Int32Array | number[], n: number, key: ArrayLike<number>, k: number): void {
  const id = heap[k];
  const v = key[id];
  for (;;) {
    let c = 2 * k + 1;
    if (c >= n) break;
    if (c + 1 < n && key[heap[c + 1]] > key[heap[c]]) c++;
    if (key[heap[c]] <= v) break;
    heap[k] = heap[c];
    k = c;
  }
  heap[k] = id;
}

/** The same heap: moves `heap[k]` up to its place. */
export function heapUp(heap: Int32Array | number[], key: ArrayLike<number>, k: number): void {
  const id = heap[k];
  const v = key[id];
  while (k > 0) {
    const parent = (k - 1) >> 1;
    if (key[heap[parent]] >= v) break;
    heap[k] = heap[parent];
    k = parent;
  }
  heap[k] = id;
}
