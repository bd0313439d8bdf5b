import { frontmatterTags } from "../metadata";
import { isUnder } from "../paths";
import type { AccessPolicy } from "../policy";
import { isNotePath, parentOf, type VaultPort } from "../vault";
import { SLICE_MS, TimeSlice } from "../time-slice";

export interface TagCount {
  /** The value as first seen (tags without `#`); values differing only in case are counted together. */
  value: string;
  /** Number of notes that have it. */
  count: number;
}

export interface ListTagsResult {
  field: string;
  values: TagCount[];
  notes_scanned: number;
}

/**
 * Distinct values of a frontmatter field with the number of notes having each. For `tags` the
 * inline `#tags` of the body are merged in and nested tags are kept whole (`craft/wood`).
 * Sorted by count (descending), then by value.
 */
export async function listFieldValues(port: VaultPort, policy: AccessPolicy, field: string, folder: string): Promise<ListTagsResult> {
  const isTags = field === "tags" || field === "tag";
  const counts = new Map<string, TagCount>();
  let scanned = 0;
  // Every note's metadata (10k notes: ~50 ms), in slices.
  const slice = new TimeSlice(SLICE_MS, 64);
  for (const f of port.listFiles()) {
    if (slice.due()) await slice.next();
    if (!isNotePath(f.path) || policy.isHidden(f.path) || !isUnder(parentOf(f.path), folder)) continue;
    const meta = port.getMetadata(f.path);
    scanned++;
    if (!meta) continue;
    const values = new Set<string>();
    const seen = new Map<string, string>();
    const push = (v: string) => {
      const key = v.normalize("NFC").toLowerCase();
      if (!values.has(key)) {
        values.add(key);
        seen.set(key, v);
      }
    };
    if (isTags) {
      for (const t of frontmatterTags(meta.frontmatter)) push(t.replace(/^#/, ""));
      for (const t of meta.tags) push(t.tag.replace(/^#/, ""));
    } else {
      const v = lookupField(meta.frontmatter, field);
      for (const item of Array.isArray(v) ? v : [v]) {
        if (typeof item === "string" && item.trim()) push(item.trim());
        else if (typeof item === "number" || typeof item === "boolean") push(String(item));
      }
    }
    for (const key of values) {
      const c = counts.get(key);
      if (c) c.count++;
      else counts.set(key, { value: seen.get(key)!, count: 1 });
    }
  }
  const list = [...counts.values()].sort((a, b) => b.count - a.count || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  return { field, values: list, notes_scanned: scanned };
}

/** A frontmatter value by key, case-insensitively when there is no exact key. */
function lookupField(fm: Record<string, unknown> | undefined, field: string): unknown {
  if (!fm) return undefined;
  if (Object.hasOwn(fm, field)) return fm[field];
  const lower = field.toLowerCase();
  for (const k of Object.keys(fm)) if (k.toLowerCase() === lower) return fm[k];
  return undefined;
}
