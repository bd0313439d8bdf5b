/**
 * Timers for the core and the MCP layer, given by the host: Obsidian's main window's timers in the
 * plugin (as Obsidian's guidelines ask: `window.setTimeout`), Node's headless and in tests. The
 * core runs in both and names neither.
 */
export interface HostTimers {
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
  /** Runs `fn` once the event loop is free, without `setTimeout(0)`'s clamp; when absent, `setTimeout(fn, 0)`. */
  setImmediate?(fn: () => void): unknown;
}

/** A browser's timer id or Node's timer object. */
export type TimerHandle = number | object;

let host: HostTimers | null = null;

/** Called by each host before it starts the core. */
export function useHostTimers(timers: HostTimers): void {
  host = timers;
}

function timers(): HostTimers {
  if (!host) throw new Error("The host has not given the core its timers: call useHostTimers() before starting it.");
  return host;
}

export function setTimer(fn: () => void, ms: number): TimerHandle {
  return timers().setTimeout(fn, ms);
}

export function clearTimer(handle: TimerHandle | null | undefined): void {
  if (handle !== null && handle !== undefined) timers().clearTimeout(handle);
}

/**
 * Runs `fn` as soon as the event loop is free. `setImmediate` (Node, Obsidian's Electron renderer)
 * gives the loop back without `setTimeout(0)`'s clamp (1 ms in Node, 4 ms when nested in Chromium),
 * which cost an index build ~0.8 s of idle time per 10k notes.
 *
 * Every engine's slices share one turn of the loop (`TURN_MS`). The immediates queued by the vault's
 * reading, the search index, the link graph and the watcher all run in the same check phase, one
 * after the other, before the loop reads a request: three engines' slices of 5–8 ms each kept a
 * request waiting 25–60 ms at 100k notes. A callback that finds the turn used up goes to the next
 * turn, after the loop has read what arrived.
 */
export function soon(fn: () => void): void {
  const t = timers();
  if (t.setImmediate) t.setImmediate(() => inTurn(fn));
  else t.setTimeout(fn, 0);
}

/** How long the slices resumed in one turn of the event loop may run together before the rest wait a turn. */
export const TURN_MS = 12;
/** When the current turn's first slice began (-1: none has run in this turn yet). */
let turnStart = -1;
const clockNow = (): number => (typeof performance !== "undefined" ? performance.now() : Date.now());

function inTurn(fn: () => void): void {
  const now = clockNow();
  if (turnStart < 0) {
    turnStart = now;
    // Queued before any callback this turn defers, so it runs first in the next turn: a new turn.
    timers().setImmediate!(() => {
      turnStart = -1;
    });
  } else if (now - turnStart >= TURN_MS) {
    timers().setImmediate!(() => inTurn(fn));
    return;
  }
  fn();
}

/** Resolves after `ms` (on the host's timers). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => {
    setTimer(resolve, ms);
  });
}
