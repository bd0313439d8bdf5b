import type { HostTimers } from "../../core/timers";

/** Node's timers, for the headless host, the bench and the tests (see core/timers.ts). */
export const nodeTimers: HostTimers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  setImmediate: (fn) => setImmediate(fn),
};
