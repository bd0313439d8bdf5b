/**
 * The postings log: new postings are appended here (term, chunk, tf triples, in sequence) and merged
 * into the posting lists in batches, whole or in steps. Owns the log and a merge under way; it must
 * not decide when to merge (the index's readers and the worker do) nor touch anything but the lists.
 */
import { grownArray } from "../../memory";
import { DenseIds } from "./dense-ids";
import { copyPostings, tfCode, type PostingList, type PostingPool } from "./postings";

/**
 * The log is due for a merge into the lists when it holds this many postings (the indexing worker
 * merges it in steps at the start of its next slice, see `due`), and is merged at once at LOG_FULL
 * (and before any read).
 */
const LOG_MERGE_AT = 1 << 15;
/**
 * The log is merged at once when it holds this many postings (12 MB). At twice LOG_MERGE_AT (until
 * the seventeenth pass) a long note's postings, all appended in one step, set off merges at once,
 * packed lists unpacked and all: 605 ms on a vault of 4.65M terms. A note within the size limit
 * (2 MB) gives at most ~1M postings, which the worker then merges in steps.
 */
const LOG_FULL = 1 << 20;
/** A merge step asks `due()` once it has copied this many postings (as well as every 128 terms). */
const MERGE_STEP_POSTINGS = 1 << 16;
/** The sort's buffers are let go after a read (see `flush`) when larger than this many entries. */
const SORT_KEEP = 1 << 17;

/** What the log merges into: the index's lists (made on demand) and their slab pool. */
export interface LogTarget {
  listFor(g: number): PostingList;
  readonly pool: PostingPool;
}

/**
 * New postings go to an append-only log first, merged into the posting lists in batches: a counting
 * sort by term, then one copy per term. Appending to ~30k lists one posting at a time cost a cache
 * miss or three per posting (~0.6 s of a 10k-note build).
 */
export class PostingsLog {
  private log = new Int32Array(3 * 4096);
  private logN = 0;
  /**
   * The sort's terms, numbered as they first appear in the log: run k is term `runs.ids[k]`'s. Sized
   * to the log, not the dictionary: an array of one entry a term (27 MB at 6.7M terms), made again
   * after each read let it go, held the event loop for 45–113 ms a sort.
   */
  private runs = new DenseIds();
  /** Per posting of the log sorted: its run. */
  private runOf = new Int32Array(0);
  /** Per run: its length, then (once sorted) its end in the sorted arrays. */
  private runEnd = new Int32Array(0);
  /** The log sorted by term: chunk ids and tf codes. */
  private sortedIds = new Int32Array(0);
  private sortedTfs = new Uint8Array(0);
  /**
   * A merge under way: runs `[mergeI, runs.n)` of `sortedIds`/`sortedTfs` (run i: term
   * `runs.ids[i]`, ending at `runEnd[i]`) are still to be copied into their lists, the next one
   * starting at `mergeStart`. New postings go to the log meanwhile; every full merge finishes this
   * one first, so each list still gets its postings in chunk order.
   */
  private merging = false;
  private mergeI = 0;
  private mergeStart = 0;

  constructor(private readonly target: LogTarget) {}

  /** Forgets every posting (the index was cleared). */
  reset(): void {
    this.logN = 0;
    this.merging = false;
  }

  /** Appends chunk `id`'s postings `terms[from, to)`, `tfs[from, to)`; merges at once when the log is full. */
  append(id: number, terms: Int32Array, tfs: Int32Array, from: number, to: number): void {
    const n = to - from;
    if ((this.logN + n) * 3 > this.log.length) {
      const grown = new Int32Array(Math.max(this.log.length * 2, (this.logN + n) * 3));
      grown.set(this.log.subarray(0, this.logN * 3));
      this.log = grown;
    }
    const log = this.log;
    let o = this.logN * 3;
    for (let j = from; j < to; j++) {
      log[o++] = terms[j];
      log[o++] = id;
      log[o++] = tfs[j];
    }
    this.logN += n;
    if (this.logN >= LOG_FULL) this.flush(false);
  }

  /** Bytes of the log's buffers. */
  get bytes(): number {
    return this.log.byteLength + this.runs.bytes + this.runOf.byteLength + this.runEnd.byteLength + this.sortedIds.byteLength + this.sortedTfs.byteLength;
  }

  /** Postings are in the log, or a merge is under way: a flush would change the lists. */
  get pending(): boolean {
    return this.logN > 0 || this.merging;
  }

  /**
   * The log is due for a merge (or a merge is under way): the indexing worker does it with
   * `mergeSome` at the start of a slice, in slices of its own, so that a merge (5–18 ms at once) never
   * comes on top of a slice's work.
   */
  get due(): boolean {
    return this.logN >= LOG_MERGE_AT || this.merging;
  }

  /**
   * Merges the log into the lists (every reader of the lists calls this first). `release`: a read, not
   * a full log; the merge buffers (a few MB while building) are let go.
   */
  flush(release = true): void {
    if (this.merging) this.copyRuns(null);
    if (this.logN > 0) {
      this.sortLog();
      this.copyRuns(null);
    }
    if (!release) return;
    if (this.log.length > 3 * 4096) {
      this.log = new Int32Array(3 * 4096);
      this.sortedIds = new Int32Array(0);
      this.sortedTfs = new Uint8Array(0);
    }
    if (this.runs.size > SORT_KEEP) this.runs = new DenseIds();
    if (this.runOf.length > SORT_KEEP) this.runOf = new Int32Array(0);
    if (this.runEnd.length > SORT_KEEP) this.runEnd = new Int32Array(0);
  }

  /**
   * Merges the log in steps: sorts it by term (one step) unless a merge is under way, then copies runs
   * into their lists until `due()` (asked every 128 terms). True when the merge is done.
   */
  mergeSome(due: () => boolean): boolean {
    if (!this.merging) {
      if (this.logN === 0) return true;
      this.sortLog();
      if (due()) return false;
    }
    return this.copyRuns(due);
  }

  /**
   * Sorts the log by term into `sortedIds`/`sortedTfs` (chunk ids, tf codes), runs in the order their
   * terms first appear (a counting sort over the log's own terms), and empties it; `copyRuns` places the runs.
   */
  private sortLog(): void {
    const n = this.logN;
    const log = this.log;
    const runs = this.runs;
    runs.clear();
    if (this.runOf.length < n) this.runOf = new Int32Array(Math.max(n, this.runOf.length * 2));
    const runOf = this.runOf;
    let runEnd = this.runEnd;
    let counted = 0;
    for (let i = 0; i < n; i++) {
      const r = runs.numberOf(log[3 * i]);
      if (r === counted) {
        // A new run (numbers come in order): its count starts at 0.
        if (r === runEnd.length) this.runEnd = runEnd = grownArray(Int32Array, runEnd, Math.max(1024, 2 * r));
        runEnd[counted++] = 0;
      }
      runOf[i] = r;
      runEnd[r]++;
    }
    // Counts → start offsets (in postings) of each run in the sorted arrays.
    let at = 0;
    for (let r = 0; r < runs.n; r++) {
      const c = runEnd[r];
      runEnd[r] = at;
      at += c;
    }
    if (this.sortedIds.length < n) {
      const cap = Math.max(n, this.sortedIds.length * 2);
      this.sortedIds = new Int32Array(cap);
      this.sortedTfs = new Uint8Array(cap);
    }
    const ids = this.sortedIds;
    const tfs = this.sortedTfs;
    for (let i = 0; i < n; i++) {
      const k = runEnd[runOf[i]]++;
      ids[k] = log[3 * i + 1];
      tfs[k] = tfCode(log[3 * i + 2]);
    }
    // runEnd[r] is now the end of run r.
    this.logN = 0;
    this.merging = true;
    this.mergeI = 0;
    this.mergeStart = 0;
  }

  /** Copies the sorted runs of the merge under way into their lists, all of them or until `due()`. True when done. */
  private copyRuns(due: (() => boolean) | null): boolean {
    if (!this.merging) return true;
    const runTerm = this.runs.ids;
    const runEnd = this.runEnd;
    const ids = this.sortedIds;
    const tfs = this.sortedTfs;
    const pool = this.target.pool;
    let start = this.mergeStart;
    // Postings copied since `due()` was last asked: a packed list that grows is unpacked whole, and
    // 128 common words' lists of a vault of millions of terms took 300–500 ms in one step.
    let copied = 0;
    for (let i = this.mergeI, end = this.runs.n; i < end; i++) {
      if (due && i > this.mergeI && ((i & 127) === 0 || copied >= MERGE_STEP_POSTINGS)) {
        copied = 0;
        if (due()) {
          this.mergeI = i;
          this.mergeStart = start;
          return false;
        }
      }
      const end = runEnd[i];
      const l = this.target.listFor(runTerm[i]);
      copied += l.reserve(end - start, pool) + end - start;
      copyPostings(ids, tfs, start, end, l.ids, l.tfs, l.n);
      l.n += end - start;
      start = end;
    }
    this.merging = false;
    return true;
  }
}
