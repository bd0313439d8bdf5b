/**
 * Cooperative time slices for long loops in the core: Obsidian runs plugins on its UI thread, so a
 * loop over the whole vault gives the event loop back every few milliseconds. Owns only the clock
 * and the yield; what a loop does between yields is the caller's.
 */
import { soon } from "./timers";

/** How long a loop may run before it yields (the UI must never block for more than 50 ms). */
export const SLICE_MS = 8;

/** Lets other work run: the host's immediate, in the turn the engines share (see timers.ts `soon`). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise<void>((resolve) => {
    soon(resolve);
  });
}

export class TimeSlice {
  private start = Date.now();
  private checks = 0;

  /** `every`: iterations between two looks at the clock, for loops whose steps take microseconds. */
  constructor(
    private readonly ms = SLICE_MS,
    private readonly every = 1,
  ) {}

  /** True when the slice is used up: the caller should `await next()`. Cheap enough for every iteration. */
  due(): boolean {
    if (++this.checks < this.every) return false;
    this.checks = 0;
    return Date.now() - this.start >= this.ms;
  }

  /** Yields to the event loop and starts a new slice. */
  async next(): Promise<void> {
    await yieldToEventLoop();
    this.start = Date.now();
  }

  /** `due()`, then `next()` when it is. */
  async pause(): Promise<void> {
    if (this.due()) await this.next();
  }
}

/**
 * A loop over `[from, to)` cut into steps `[a, b)` for a fresh process: the first 1/32 of `max`, each
 * next twice the last, up to `max`. A warm start's first steps run before V8 has optimised their code
 * (interpreted, a step of the full size took 14–73 ms where it later takes a few).
 */
export function* rampedSteps(from: number, to: number, max: number): Generator<readonly [number, number], void, void> {
  for (let a = from, step = Math.max(1, max >> 5); a < to; a += step, step = Math.min(max, 2 * step)) yield [a, Math.min(to, a + step)];
}

