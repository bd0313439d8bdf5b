/**
 * Reading many notes' texts asynchronously into a few reused buffers (the headless vault's opening
 * on a slow disk, see SyncReads). `fs.readFile` makes a buffer of its own for every file: a warm
 * start at 100k notes made 100k of them (~2.4 KB each), which glibc serves from its heap and gets
 * back only when the collector sweeps them, in bursts, between the blocks that live on. The heap
 * grew around them and kept the free room: with `grownArray` (core/memory.ts), RSS 437–443 MB after
 * such a start against 381–390 with every note read synchronously (`readFileSync` with an encoding
 * allocates no buffer); 380 either way with this pool.
 *
 * A read takes a buffer from the pool, opens the file, reads it (short of the buffer only at its
 * end, as a regular file's read is), decodes it, gives the buffer back and closes the file without
 * waiting: three callbacks a file against `readFile`'s four (open, stat, read, close).
 */
import { close, open, read } from "node:fs";

/** A pooled buffer's first size, and the largest kept for reuse (a bigger note's is its own). */
const FIRST_BYTES = 64 << 10;
const POOLED_MAX_BYTES = 1 << 20;

export class ReadPool {
  private readonly free: Buffer[] = [];

  constructor(private readonly decoder: TextDecoder) {}

  /** The text of the file at `abs` (about `sizeHint` bytes: its listed size). */
  text(abs: string, sizeHint: number): Promise<string> {
    return new Promise((resolve, reject) => {
      open(abs, "r", (e, fd) => {
        if (e) return reject(e);
        let buf = this.take(sizeHint + 1);
        let n = 0;
        const done = (err: Error | null): void => {
          close(fd, () => undefined);
          let text = "";
          try {
            if (!err) text = this.decoder.decode(buf.subarray(0, n));
          } catch (x) {
            err = x as Error;
          }
          this.give(buf);
          if (err) reject(err);
          else resolve(text);
        };
        const more = (): void => {
          if (n === buf.length) {
            const bigger = this.take(2 * buf.length);
            buf.copy(bigger, 0, 0, n);
            this.give(buf);
            buf = bigger;
          }
          read(fd, buf, n, buf.length - n, n, (err, got) => {
            if (err) return done(err);
            n += got;
            // A regular file's read comes back short only at its end.
            if (got === 0 || n < buf.length) done(null);
            else more();
          });
        };
        more();
      });
    });
  }

  private take(bytes: number): Buffer {
    for (let i = this.free.length - 1; i >= 0; i--) {
      const b = this.free[i];
      if (b.length >= bytes) {
        this.free[i] = this.free[this.free.length - 1];
        this.free.pop();
        return b;
      }
    }
    if (bytes > POOLED_MAX_BYTES) return Buffer.allocUnsafeSlow(bytes);
    let size = FIRST_BYTES;
    while (size < bytes) size *= 2;
    return Buffer.allocUnsafeSlow(size);
  }

  private give(b: Buffer): void {
    if (b.length <= POOLED_MAX_BYTES) this.free.push(b);
  }
}
