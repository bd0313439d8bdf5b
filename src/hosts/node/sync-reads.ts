/**
 * Synchronous reads, except for a while after one was slow. Small files are read synchronously headless (each
 * asynchronous fs call costs ~60 µs of main-thread time), but a read waiting on the disk waits on
 * the event loop too: on a VM writing hundreds of MB meanwhile, single reads of small notes took
 * 50–900 ms. Once a read takes longer than `limitMs`, `slow` is set and the owner reads
 * asynchronously for a while: SLOW_FOR_MS, twice as long each time it happens again (at most
 * SLOW_FOR_MAX_MS). A disk busy for a moment (the case seen here: stalls right after writing the
 * saved index) gets the fast reads back; a disk that stays slow stays read asynchronously nearly
 * all the time, one blocking read per window.
 */
export const SLOW_SYNC_READ_MS = 20;
/** How long reads stay asynchronous after the first slow one. */
export const SLOW_FOR_MS = 30_000;
/** The longest they stay so after a slow read (the window doubles each time). */
export const SLOW_FOR_MAX_MS = 15 * 60_000;

export class SyncReads {
  /** Until when reads are asynchronous (`now()` time; 0: not slow). */
  private slowUntil = 0;
  private window: number;
  /** Slow reads seen so far (each starts a window). */
  private times = 0;

  constructor(
    public limitMs = SLOW_SYNC_READ_MS,
    /** Called at each slow read: its length, how long reads are asynchronous from now, and the how-manyth it is (1 the first). */
    private readonly onSlow?: (ms: number, forMs: number, nth: number) => void,
    slowForMs = SLOW_FOR_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.window = slowForMs;
  }

  /** A synchronous read was slow lately: read asynchronously. */
  get slow(): boolean {
    if (this.slowUntil === 0) return false;
    if (this.now() < this.slowUntil) return true;
    this.slowUntil = 0;
    return false;
  }

  /** Runs a synchronous read, and notes when it was slow. */
  run<T>(read: () => T): T {
    const t = this.now();
    const out = read();
    const end = this.now();
    const ms = end - t;
    if (ms > this.limitMs && !this.slow) {
      const forMs = this.window;
      this.slowUntil = end + forMs;
      this.window = Math.min(SLOW_FOR_MAX_MS, forMs * 2);
      this.onSlow?.(ms, forMs, ++this.times);
    }
    return out;
  }
}
