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
import { clearTimer, setTimer, type TimerHandle } from "./timers";

const NUDGE_BYTES = 65 << 20;
/** At most one nudge per this long: a collection started by one is enough for the work of a while. */
const MIN_GAP_MS = 1_000;
/**
 * One more nudge this long after the last one, when no other came since. The job's own nudge comes
 * while other work still allocates (a warm start's last list decoded while the link graph builds),
 * and V8 keeps its young generation at the size that work grew it to (2 × 16 MB); it shrinks it at
 * the end of a full collection only when little was allocated over the last ~5 s. Node has no idle
 * collections (V8's memory reducer never ran in an idle Node 20 process; a renderer has them), so a
 * headless server kept those 32 MB until ~50 requests and 5 s of quiet made the server hint
 * (`transport/http.ts`): at 100k notes, 601–615 MB of RSS after a warm start, 567 after this one.
 */
export const FOLLOW_UP_MS = 8_000;
/**
 * How many follow-ups, FOLLOW_UP_MS apart. With one, V8 kept its 32 MB young generation after 5 of
 * 8 warm starts at 100k notes (RSS ~30 MB higher: the same code measured 425–437 or 452–461 MB, as
 * the last collection happened to judge the allocation rate); with a second one, 8 s of quiet
 * later, it shrank it in 4 of 4.
 */
export const FOLLOW_UPS = 2;

let last = -Infinity;
let followUp: TimerHandle | null = null;

/**
 * Nudges V8 toward a collection (see above); at most once per MIN_GAP_MS. True when it did. With
 * `followUp` (the default) FOLLOW_UPS more nudges come, FOLLOW_UP_MS apart, after the last one (see there).
 */
export function releaseGarbage(now: number = Date.now(), opts: { followUp?: boolean } = {}): boolean {
  if (opts.followUp ?? true) armFollowUp();
  if (now - last < MIN_GAP_MS) return false;
  last = now;
  return nudge();
}

function nudge(): boolean {
  try {
    // Dropped at once; its byte length is read so the allocation is not left out as unused.
    return new ArrayBuffer(NUDGE_BYTES).byteLength === NUDGE_BYTES;
  } catch {
    // No room for the mapping: nothing to hint with.
    return false;
  }
}

function armFollowUp(again = FOLLOW_UPS - 1): void {
  clearTimer(followUp);
  followUp = setTimer(() => {
    followUp = null;
    last = Date.now();
    nudge();
    if (again > 0) armFollowUp(again - 1);
  }, FOLLOW_UP_MS);
  // Not a reason for a Node process to stay (a window's timer id has no `unref`).
  (followUp as { unref?: () => void }).unref?.();
}

/**
 * Gives big buffers' memory back now, without a collection: each is transferred into a message on
 * a channel that is then closed, so its backing store goes with the dropped message (in Node and in
 * a renderer alike) and the ArrayBuffer is left detached (length 0). For buffers that are garbage
 * already but would wait for V8's next full collection: loading a saved index at 100k notes gives
 * back its 33 MB scratch chunks and the chunks that held the encoded postings (~200 MB in all) as
 * each job ends, and the warm start's peak RSS fell from 799 to 731 MB (its settled RSS did not move:
 * `releaseGarbage` had them collected later). Only for buffers nothing reads again: every view of a
 * detached buffer reads as empty. False when the runtime has no MessageChannel (the buffers are left
 * as they are).
 */
export function freeBuffers(buffers: readonly ArrayBufferLike[]): boolean {
  const own = buffers.filter((b): b is ArrayBuffer => b instanceof ArrayBuffer && b.byteLength > 0);
  if (own.length === 0 || typeof MessageChannel !== "function") return false;
  try {
    const { port1, port2 } = new MessageChannel();
    port1.postMessage(null, own);
    port1.close();
    port2.close();
    return true;
  } catch {
    // A buffer that cannot be transferred (say, a WebAssembly memory's): left to the collector.
    return false;
  }
}

/**
 * Arrays that grow (the link graph's lists, the index's per-chunk numbers, the scorer's scratch)
 * headless on glibc. glibc maps a block of its own only above its mmap threshold, and that
 * threshold rises to the size of any mapped block freed (up to 32 MB): Node's own start (reading
 * its bundle) already raises it to ~4 MB. Below it, every array comes from glibc's heap, and an array
 * that grew by doubling leaves its old room there as a hole between live blocks; glibc gives such
 * holes back only in `malloc_trim`, which Node never calls. A warm 100k-note server held ~64 MB of
 * them (RSS 435 MB; 371 with the threshold pinned at 128 KB by `MALLOC_MMAP_THRESHOLD_`, which a
 * process cannot set for itself). So, when the host asks for it, an array of 128 KB or more takes
 * its room in a buffer of at least OWN_MAPPING_BYTES: always a mapping of its own (over glibc's largest
 * threshold, so never raising it either), given back whole when freed, and only its touched pages
 * count. It then grows in place, a longer view over the same buffer, while the buffer has room.
 */
const RESERVE_FROM = 128 << 10;
/**
 * A buffer this large is always a mapping of its own under glibc: above its largest dynamic mmap
 * threshold (32 MB), so freeing it never raises that threshold. Reservations here and `Carver`
 * chunks (search/keyword/carve.ts) are this size.
 */
export const OWN_MAPPING_BYTES = 33 << 20;
let reserving = false;
const reservedBuffers = new WeakSet<ArrayBufferLike>();

/** Whether growable arrays take their room in reservations (see above): the headless host turns it on. */
export function reserveGrowableArrays(on: boolean): void {
  reserving = on;
}

type GrowableArray = Int32Array | Uint32Array | Float64Array | Float32Array | Uint16Array | Uint8Array | Int8Array;
interface GrowableCtor<T extends GrowableArray> {
  new (length: number): T;
  new (buffer: ArrayBuffer, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * An array of `length` elements holding `old`'s (all of them; `length` at least old's), zeros after
 * them. `old` must not be written after this: the new array may share its memory (see above).
 */
export function grownArray<T extends GrowableArray>(C: GrowableCtor<T>, old: T | null, length: number): T {
  const bytes = length * C.BYTES_PER_ELEMENT;
  if (old && old.length > length) throw new RangeError("grownArray: shorter than the array it grows");
  if (old && reserving && old.byteOffset === 0 && bytes <= old.buffer.byteLength && reservedBuffers.has(old.buffer)) {
    return new C(old.buffer as ArrayBuffer, 0, length);
  }
  let out: T;
  if (!reserving || bytes < RESERVE_FROM) out = new C(length);
  else {
    const buffer = new ArrayBuffer(Math.max(bytes, OWN_MAPPING_BYTES));
    reservedBuffers.add(buffer);
    out = new C(buffer, 0, length);
  }
  if (old) out.set(old);
  return out;
}
