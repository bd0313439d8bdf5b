/**
 * Background work in slices, for any search engine: a clock that says when the current slice of the
 * event loop is used up, and a worker that runs an engine's steps in priority order until none has
 * work. Owns no index and knows no engine: each engine brings its steps and decides when to kick.
 */
import { clearTimer, setTimer } from "../timers";
import { yieldToEventLoop } from "../time-slice";
import type { Scheduler } from "./types";

export const defaultScheduler: Scheduler = {
  now: () => (typeof performance !== "undefined" ? performance.now() : Date.now()),
  // Without setTimeout(0)'s clamp where the host can, in the turn every engine shares (timers.ts `soon`).
  yield: yieldToEventLoop,
};

/** Time slices: work runs until its slice (`sliceMs`) is used up, then gives the event loop back. */
export class SliceClock {
  private start = 0;

  constructor(
    readonly sched: Scheduler,
    private readonly sliceMs: number,
  ) {}

  /** Starts a new slice now (after work that yielded by other means). */
  restart(): void {
    this.start = this.sched.now();
  }

  /** The current slice is used up. */
  readonly used = (): boolean => this.sched.now() - this.start >= this.sliceMs;

  /** Yields, then starts a new slice. */
  async next(): Promise<void> {
    await this.sched.yield();
    this.start = this.sched.now();
  }
}

/**
 * One step of background work: true when it did something (the worker then starts again from the
 * first step, so earlier steps keep their priority), false when it had nothing to do.
 */
export type WorkStep = () => boolean | Promise<boolean>;

export interface WorkerHooks {
  /** The engine's steps, most urgent first. */
  steps: readonly WorkStep[];
  /** A step threw: the run ends there. */
  onError(e: unknown): void;
  /** The run ended (no step had work, it was stopped, or it failed): run again (`kick`) or be idle. */
  onSettled(): void;
}

/**
 * Runs an engine's steps, one run at a time. A run's first step is a task of its own, never the tail
 * of its caller's task (`start()`, whose caller may search at once, or a vault event).
 */
export class BackgroundWorker {
  private loop: Promise<void> | null = null;
  private stopping = false;

  constructor(
    private readonly clock: SliceClock,
    private readonly hooks: WorkerHooks,
  ) {}

  /** A run is under way. */
  get busy(): boolean {
    return this.loop !== null;
  }

  /** Starts a run unless one is under way or the worker is stopped. */
  kick(): void {
    if (this.loop || this.stopping) return;
    this.loop = this.run()
      .catch((e: unknown) => this.hooks.onError(e))
      .finally(() => {
        this.loop = null;
        this.hooks.onSettled();
      });
  }

  /** No further step starts; resolves when the run under way has ended. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.loop) await this.loop;
  }

  private async run(): Promise<void> {
    await this.clock.next();
    while (!this.stopping) {
      let worked = false;
      for (const step of this.hooks.steps) {
        if (await step()) {
          worked = true;
          break;
        }
      }
      if (!worked) break;
    }
  }
}

/** An engine's progress listeners: each gets the status at most every 250 ms, unless forced. */
export class ProgressListeners<S> {
  private readonly listeners = new Set<(s: S) => void>();
  private last = 0;

  constructor(
    private readonly clock: SliceClock,
    private readonly onError: (e: unknown) => void,
  ) {}

  add(cb: (s: S) => void): () => void {
    this.listeners.add(cb);
    return () => this.listeners.delete(cb);
  }

  /** Calls every listener with `status()` (made only when someone listens); a throwing one is reported, not fatal. */
  emit(force: boolean, status: () => S): void {
    if (this.listeners.size === 0) return;
    const now = this.clock.sched.now();
    if (!force && now - this.last < 250) return;
    this.last = now;
    const s = status();
    for (const cb of this.listeners) {
      try {
        cb(s);
      } catch (e) {
        this.onError(e);
      }
    }
  }

  clear(): void {
    this.listeners.clear();
  }
}

/** Callers waiting for an engine to have no pending work, with a timeout each. */
export class IdleWaiters {
  private readonly waiters = new Set<() => void>();

  /** True when `pending()` turned false before the timeout (or before `signal` aborted). */
  wait(timeoutMs: number, pending: () => boolean, signal?: AbortSignal): Promise<boolean> {
    if (!pending()) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const done = (ok: boolean) => {
        clearTimer(timer);
        this.waiters.delete(waiter);
        signal?.removeEventListener("abort", onAbort);
        resolve(ok);
      };
      const waiter = () => {
        if (!pending()) done(true);
      };
      const onAbort = () => done(!pending());
      const timer = setTimer(() => done(!pending()), timeoutMs);
      this.waiters.add(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  /** Lets each waiter look again (it resolves when no work is pending). */
  notify(): void {
    for (const w of [...this.waiters]) w();
  }
}
