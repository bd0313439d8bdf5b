/** The index of the first element ≥ `v` in the ascending `a` (its length when there is none). */
export function lowerBound(a: ArrayLike<number>, v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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
