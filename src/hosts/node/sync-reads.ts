/**
 * Synchronous reads until one is slow. Small files are read synchronously headless (each
 * asynchronous fs call costs ~60 µs of main-thread time), but a read waiting on the disk waits on
 * the event loop too: on a VM writing hundreds of MB meanwhile, single reads of small notes took
 * 50–900 ms. Once a read takes longer than `limitMs`, `slow` stays set and the owner reads
 * asynchronously from then on.
 */
export const SLOW_SYNC_READ_MS = 20;

export class SyncReads {
  /** A synchronous read was slow: read asynchronously. */
  slow = false;

  constructor(
    public limitMs = SLOW_SYNC_READ_MS,
    private readonly onSlow?: (ms: number) => void,
  ) {}

  /** Runs a synchronous read, and notes when it was slow. */
  run<T>(read: () => T): T {
    const t = performance.now();
    const out = read();
    const ms = performance.now() - t;
    if (ms > this.limitMs && !this.slow) {
      this.slow = true;
      this.onSlow?.(ms);
    }
    return out;
  }
}
