/**
 * Records keyed by text from a vault or a client (note names, link targets, tags, block ids,
 * frontmatter keys, extensions…). A plain `{}` answers `o["constructor"]` with `Object` and
 * `o["toString"]` with a function, and `o["__proto__"] = v` replaces its prototype instead of
 * adding a key: such lookups use a `Map`, a record made by `dict()` (no prototype), or `own()`.
 */

/** An empty record without a prototype: every key, `constructor` and `__proto__` included, is only what was set. */
export function dict<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/** `o[key]` when `key` is `o`'s own property, else undefined (never a property of `Object.prototype`). */
export function own<T>(o: Readonly<Record<string, T>> | null | undefined, key: string): T | undefined {
  return o != null && Object.hasOwn(o, key) ? o[key] : undefined;
}

/** Sets `o[key]` as an own, enumerable property, also when `key` is `__proto__` (an assignment would change the prototype). */
export function setOwn<T>(o: Record<string, T>, key: string, value: T): void {
  if (key === "__proto__") Object.defineProperty(o, key, { value, writable: true, enumerable: true, configurable: true });
  else o[key] = value;
}
