/**
 * A map whose entry holds one value, or an array once it has several: most keys (a file name, a
 * link target's name) have one value, and a Set or array for each was ~40–370 B where one value
 * costs nothing more. Values must not be arrays themselves.
 */
export type OneOrMany<V> = V | V[];

/** Adds `v` under `k` (not again when `unique` and it is there). */
export function addOne<K, V>(m: Map<K, OneOrMany<V>>, k: K, v: V, unique = true): void {
  const e = m.get(k);
  if (e === undefined) m.set(k, v);
  else if (!Array.isArray(e)) {
    if (!unique || e !== v) m.set(k, [e, v]);
  } else if (!unique || !e.includes(v)) e.push(v);
}

/** Removes one `v` from under `k`; the entry becomes a single value again at one, and goes at none. */
export function removeOne<K, V>(m: Map<K, OneOrMany<V>>, k: K, v: V): void {
  const e = m.get(k);
  if (e === undefined) return;
  if (!Array.isArray(e)) {
    if (e === v) m.delete(k);
    return;
  }
  const i = e.indexOf(v);
  if (i >= 0) e.splice(i, 1);
  if (e.length === 1) m.set(k, e[0]);
  else if (e.length === 0) m.delete(k);
}

/** The values of an entry (none when it is missing). */
export function valuesOf<V>(e: OneOrMany<V> | undefined): readonly V[] {
  return e === undefined ? [] : Array.isArray(e) ? e : [e];
}
