/**
 * A hint to the JS engine that much memory just became garbage (a posting layout replaced, a saved
 * index's loading buffers let go, the link graph built).
 *
 * V8 collects dead ArrayBuffers only in a full collection, and it starts one for external memory
 * only while that memory grows: after the big buffers of a finished job die, nothing grows, and a
 * process that then sits idle keeps them. The headless server at 100k notes held ~180 MB of dead
 * posting slabs after its cold build that way (RSS 722 MB, 540 after a collection). There is no API
 * for a memory-pressure signal in Node or in a renderer, and `gc()` is a full collection in one
 * pause (~100 ms at that size, over the 50 ms budget for a blocked event loop). Allocating a buffer
 * just over V8's external-memory step (64 MB) and dropping it starts V8's *incremental* marking, in
 * short steps, like the allocation of a big buffer does: its pages are never touched, so it costs no
 * memory (a fresh mapping, given back by the same collection).
 */
const NUDGE_BYTES = 65 << 20;
/** At most one nudge per this long: a collection started by one is enough for the work of a while. */
const MIN_GAP_MS = 1_000;

let last = -Infinity;

/** Nudges V8 toward a collection (see above); at most once per MIN_GAP_MS. True when it did. */
export function releaseGarbage(now: number = Date.now()): boolean {
  if (now - last < MIN_GAP_MS) return false;
  last = now;
  try {
    // Dropped at once; its byte length is read so the allocation is not left out as unused.
    return new ArrayBuffer(NUDGE_BYTES).byteLength === NUDGE_BYTES;
  } catch {
    // No room for the mapping: nothing to hint with.
    return false;
  }
}
