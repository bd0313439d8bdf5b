/**
 * Which notes link to given files: the sources of resolved links to each target, with their link
 * counts (self-links included), in the order of the port's `resolvedLinks()`.
 */
import { own } from "../dict";
import { SLICE_MS, TimeSlice } from "../time-slice";
import type { VaultPort } from "../vault";

/**
 * Target → source → link count for each of `targets`. Uses the port's `linkSources` when it has one
 * (the headless vault: its maps are views, and making every note's record to scan them cost ~5× the
 * scan at 100k notes); else scans `resolvedLinks()` in time slices.
 */
export async function backlinks(port: VaultPort, targets: Iterable<string>): Promise<Map<string, Map<string, number>>> {
  const list = [...new Set(targets)];
  if (port.linkSources) return port.linkSources(list);
  const out = new Map<string, Map<string, number>>(list.map((t) => [t, new Map()]));
  const resolved = port.resolvedLinks();
  const slice = new TimeSlice(SLICE_MS, 64);
  for (const src in resolved) {
    if (slice.due()) await slice.next();
    const ts = resolved[src];
    for (const [t, m] of out) {
      const n = own(ts, t);
      if (n) m.set(src, n);
    }
  }
  return out;
}
