/**
 * A copy of `s` that keeps no larger string alive. V8 keeps a substring of 13 or more characters as
 * a view into the string it was cut from, and a concatenation as references to its parts: a heading
 * cut from a note's text would hold the whole text in memory for as long as it is kept. The copy is
 * flat (JSON round trip: no slice of a temporary string either, unlike `(" " + s).slice(1)`).
 */
export function detach(s: string): string {
  return s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string);
}

/** A size for humans: `512 bytes`, `12 KB`, `1.5 MB`, `2 MB`. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1).replace(/\.0$/, "")} MB`;
}

/** A caught value's message (an Error's message, anything else as a string). */
export function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
