/**
 * Which notes have a link that a file of a given name could answer: the index that says whom a
 * file's arrival or departure affects (they are re-resolved). A link's key is its target's last
 * segment, lower-cased, without `.md`; a file's keys are its name's. Keys are 26-bit hashes and notes
 * are numbers: a collision only re-resolves a note more than needed.
 *
 * Compact for big vaults (a `Map` of key strings to `Set`s of paths took ~26 MB at 100k notes, 63 MB
 * with each note's key list): the pairs known when the vault opens are one sorted typed array (8 bytes
 * a link target); later changes go to a small map beside it, and a changed note's pairs in the sorted
 * array are ignored from then on.
 */
import { joinRelative, folderOf } from "../../core/links/resolver";
import { splitLinkpath } from "../../core/metadata";
import { addOne, removeOne, valuesOf, type OneOrMany } from "../../core/one-or-many";
import { lowerBound } from "../../core/sorted";
import { fnv1a } from "../../core/hash";
import { grownArray } from "../../core/memory";

/**
 * Keys are 26-bit hashes and note numbers stay below 2^27 (numbers are not reused: each file added
 * or renamed takes one), so a pair packs into one exact double.
 */
const ID_SPACE = 2 ** 27;

export class LinkKeyIndex {
  /** Sorted `key * ID_SPACE + note`. */
  private base = new Float64Array(0);
  /** Pairs added before the first `build` (opening), unsorted. */
  private pending = new Float64Array(1024);
  private pendingLength = 0;
  /** Notes whose pairs in `base` no longer count. */
  private readonly stale = new Set<number>();
  /** Pairs added after the first `build`: key → note(s). */
  private readonly overlay = new Map<number, OneOrMany<number>>();
  private built = false;

  /** Indexes a note's link keys (from `keysOfLinks`). */
  add(note: number, keys: Iterable<number>): void {
    if (note >= ID_SPACE) throw new Error("Too many files for the link index.");
    if (!this.built) {
      for (const k of keys) {
        if (this.pendingLength === this.pending.length) {
          this.pending = grownArray(Float64Array, this.pending, Math.max(1024, this.pending.length * 2));
        }
        this.pending[this.pendingLength++] = k * ID_SPACE + note;
      }
      return;
    }
    for (const k of keys) addOne(this.overlay, k, note);
  }

  /**
   * Opening added every note's pairs: `pending` shrinks to them (it grew by doubling: at 100k notes
   * an 8 MB array for 3.4 MB of pairs, kept until the first lookup sorts it).
   */
  fit(): void {
    if (!this.built && this.pending.length > this.pendingLength) this.pending = this.pending.slice(0, this.pendingLength);
  }

  /** Forgets a note's pairs (`keys`: the same it was added with). */
  remove(note: number, keys: Iterable<number>): void {
    if (!this.built) this.build();
    this.stale.add(note);
    for (const k of keys) removeOne(this.overlay, k, note);
  }

  /** The notes indexed under `key`, added to `out`. */
  lookup(key: number, out: (note: number) => void): void {
    if (!this.built) this.build();
    const b = this.base;
    const lo = key * ID_SPACE;
    let i = lowerBound(b, lo);
    for (; i < b.length && b[i] < lo + ID_SPACE; i++) {
      const note = b[i] - lo;
      if (!this.stale.has(note)) out(note);
    }
    for (const n of valuesOf(this.overlay.get(key))) out(n);
  }

  /** Sorts what opening added into the compact array (later additions stay in the overlay). */
  build(): void {
    const parts: number[] = [];
    const b = this.base;
    for (let i = 0; i < b.length; i++) if (!this.stale.has(b[i] % ID_SPACE)) parts.push(b[i]);
    for (const [k, e] of this.overlay) {
      if (typeof e === "number") parts.push(k * ID_SPACE + e);
      else for (const n of e) parts.push(k * ID_SPACE + n);
    }
    const all = new Float64Array(parts.length + this.pendingLength);
    all.set(parts);
    all.set(this.pending.subarray(0, this.pendingLength), parts.length);
    all.sort();
    this.base = all;
    this.pending = new Float64Array(0);
    this.pendingLength = 0;
    this.stale.clear();
    this.overlay.clear();
    this.built = true;
  }
}

/** FNV-1a over UTF-16 code units, reduced to 26 bits. */
function hashKey(s: string): number {
  return fnv1a(s) % 2 ** 26;
}

function stripMd(name: string): string {
  return name.length > 3 && name.endsWith(".md") ? name.slice(0, -3) : name;
}

const NON_ASCII = /[^ -~]/;

/**
 * A note's link keys: each link target's last segment as the resolver reads it (trimmed, NFC, `\` as
 * `/`, `./` and `../` taken from the source's folder), lower-cased, without `.md`.
 */
export function keysOfLinks(source: string, links: readonly string[]): Set<number> {
  const keys = new Set<number>();
  for (const link of links) {
    let lp = splitLinkpath(link).path.trim();
    if (NON_ASCII.test(lp)) lp = lp.normalize("NFC");
    if (lp.includes("\\")) lp = lp.replace(/\\/g, "/");
    if (lp.startsWith("./") || lp.startsWith("../")) {
      const rel = joinRelative(folderOf(source), lp);
      if (rel === null) continue;
      lp = rel;
    }
    const seg = lp.slice(lp.lastIndexOf("/") + 1);
    if (seg === "") continue;
    keys.add(hashKey(stripMd(seg.toLowerCase())));
  }
  return keys;
}

/** A file's keys: its name, lower-cased, without `.md` (and without a second `.md`: `a.md.md` answers `[[a.md]]`). */
export function keysOfFile(path: string): number[] {
  const once = stripMd(path.slice(path.lastIndexOf("/") + 1).toLowerCase());
  const twice = stripMd(once);
  return once === twice ? [hashKey(once)] : [hashKey(once), hashKey(twice)];
}
