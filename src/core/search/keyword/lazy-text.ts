/**
 * A restored segment's chunk texts, loaded from their own file on first use (`LazyText`), in rows of
 * `TEXT_PART` bytes. Owns the bytes and their loading; what a text means is the index's business.
 */

/** Bytes of chunk text per row of a segment's text file: a search reads only its notes' rows. */
export const TEXT_PART = 64 * 1024;

/** Reads rows (parts) of a segment's text file; `null` reads them all. Throws when the file is unusable. */
export type TextPartReader = (parts: number[] | null, last: boolean) => Map<number, Uint8Array>;

const EMPTY_BYTES = new Uint8Array(0);

/**
 * A restored segment's chunk texts (UTF-8), loaded from their own file on first use: they are more than
 * half of the index's bytes and only snippets read them, so loading the index leaves them for later
 * (the service loads them in the background; a search that needs some first reads only the rows
 * holding them). When they cannot be loaded (missing, corrupt, or from another save than the
 * segment), `slice` returns null and `lost` is called once, so the segment's notes can be indexed again.
 */
export class LazyText {
  private bytes: Uint8Array | null = null;
  private readonly have: Uint8Array;
  private missing: number;
  private read: TextPartReader | null;
  private isLost = false;
  constructor(
    readonly seg: number,
    /** The byte length the segment's chunks add up to. */
    readonly length: number,
    read: TextPartReader,
    private readonly lost: (seg: number, why: string) => void,
  ) {
    const parts = Math.ceil(length / TEXT_PART);
    this.have = new Uint8Array(parts);
    this.missing = parts;
    this.read = parts ? read : null;
  }
  /** True once every part is loaded, or loading failed. */
  get settled(): boolean {
    return this.read === null;
  }
  /** Loads every part not loaded yet. */
  loadAll(): void {
    this.ensure(0, this.length);
  }
  /** Bytes [a, b) of the segment's texts, or null when they are lost. */
  slice(a: number, b: number): Uint8Array | null {
    if (!this.ensure(a, b)) return null;
    return a === b || !this.bytes ? EMPTY_BYTES : this.bytes.subarray(a, b);
  }
  private ensure(a: number, b: number): boolean {
    const read = this.read;
    if (this.isLost) return false;
    if (!read || a >= b) return true;
    const want: number[] = [];
    for (let p = Math.floor(a / TEXT_PART); p * TEXT_PART < b && p < this.have.length; p++) if (!this.have[p]) want.push(p);
    if (!want.length) return true;
    const last = want.length === this.missing;
    try {
      const rows = read(last ? null : want, last);
      if (!this.bytes) this.bytes = new Uint8Array(this.length);
      // When `last`, `want` is every part still missing.
      for (const p of want) {
        const row = rows.get(p);
        const size = Math.min(TEXT_PART, this.length - p * TEXT_PART);
        if (!row) throw new Error(`no texts part ${p}`);
        if (row.length !== size) throw new Error(`texts part ${p} is ${row.length} bytes, the segment's chunks say ${size}`);
        this.bytes.set(row, p * TEXT_PART);
        this.have[p] = 1;
        this.missing--;
      }
      if (this.missing === 0) this.read = null;
    } catch (e) {
      this.isLost = true;
      this.read = null;
      this.bytes = null;
      this.lost(this.seg, e instanceof Error ? e.message : String(e));
    }
    return !this.isLost;
  }
}
