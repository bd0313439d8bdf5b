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
  /** A stepped first build under way (see `buildSome`). */
  private job: { all: Float64Array<ArrayBuffer>; tmp: Float64Array<ArrayBuffer>; taken: number; width: number; at: number } | null = null;

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
   * an 8 MB array for 3.4 MB of pairs, kept until it is sorted: in steps after opening, see `buildSome`).
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

  /**
   * Sorts what opening added into the compact array (later additions stay in the overlay), at once:
   * the rest of a stepped build (`buildSome`), when one is under way.
   */
  build(): void {
    while (!this.buildSome(() => false));
  }

  /**
   * The first build in steps until `due()`; true once built. Opening's pairs (~400k at 100k notes)
   * sorted in one go were a 60 ms step at the first write after opening: here runs of RUN pairs are
   * sorted one a step, then merged pairwise, a pair of runs a step. Pairs added meanwhile wait in
   * `pending` after the job's and go to the overlay at the end; a `remove` finishes the build first.
   */
  buildSome(due: () => boolean): boolean {
    if (this.built) return true;
    const j = (this.job ??= { all: this.pending.slice(0, this.pendingLength), tmp: new Float64Array(0), taken: this.pendingLength, width: 0, at: 0 });
    const n = j.all.length;
    while (j.width === 0) {
      if (j.at >= n) {
        j.width = RUN;
        j.at = 0;
        j.tmp = new Float64Array(n);
        break;
      }
      j.all.subarray(j.at, Math.min(n, j.at + RUN)).sort();
      j.at += RUN;
      if (due()) return false;
    }
    while (j.width < n) {
      while (j.at < n) {
        mergeRuns(j.all, j.tmp, j.at, Math.min(n, j.at + j.width), Math.min(n, j.at + 2 * j.width));
        j.at += 2 * j.width;
        if (due()) return false;
      }
      [j.all, j.tmp] = [j.tmp, j.all];
      j.width *= 2;
      j.at = 0;
    }
    this.base = j.all;
    const late = this.pending.subarray(j.taken, this.pendingLength);
    this.pending = new Float64Array(0);
    this.pendingLength = 0;
    this.job = null;
    this.built = true;
    for (const v of late) addOne(this.overlay, Math.floor(v / ID_SPACE), v % ID_SPACE);
    return true;
  }
}

/** Pairs sorted a step at a time before they are merged. */
const RUN = 1 << 15;

/** Merges the sorted runs `a[lo, mid)` and `a[mid, hi)` into `out[lo, hi)`. */
function mergeRuns(a: Float64Array, out: Float64Array, lo: number, mid: number, hi: number): void {
  let i = lo;
  let k = mid;
  let o = lo;
  while (i < mid && k < hi) out[o++] = a[i] <= a[k] ? a[i++] : a[k++];
  while (i < mid) out[o++] = a[i++];
  while (k < hi) out[o++] = a[k++];
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
