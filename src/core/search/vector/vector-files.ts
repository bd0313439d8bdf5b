/**
 * The vector index's files in the state store: 32 segments by path (as the keyword index), each a
 * small SQLite database (db.ts) with its notes' chunks and their int8 vectors and scales, stamped with
 * the provider, model, dimension and chunking. Only changed segments are written. No embedding here.
 */
import type { StateStore } from "../../state";
import { errText } from "../../strings";
import { readBlobs, segmentFileName, writeBlobs } from "../db";
import { segmentOf } from "../keyword/doc";

/** The vectors are saved in this many segment files, by a hash of the note's path (a fixed layout, unlike the keyword index's). */
const SEGMENT_COUNT = 32;
import type { SliceClock } from "../slices";
import { VectorIndex } from "./vector-index";

const FILE = "embeddings.sqlite";
const utf8e = new TextEncoder();
const utf8d = new TextDecoder();

/** A saved note: path, mtime, size, tags, frontmatter, chunks as [key, heading, first line, last line, vector number or -1]. */
interface SavedDoc {
  p: string;
  m: number;
  s: number;
  t: string[];
  f: Record<string, unknown>;
  c: [string, string, number, number, number][];
}

export interface VectorFilesDeps {
  store: StateStore;
  key: () => string;
  log: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
  clock: SliceClock;
}

export class VectorFiles {
  /** Segments changed since they were saved. */
  readonly dirty = new Set<number>();

  constructor(private readonly deps: VectorFilesDeps) {}

  markDirty(path: string): void {
    this.dirty.add(segmentOf(path, SEGMENT_COUNT));
  }

  markAllDirty(): void {
    for (let k = 0; k < SEGMENT_COUNT; k++) this.dirty.add(k);
  }

  /**
   * The saved vectors of this provider, model and chunking (any dimension when `dim` is null), one
   * segment per task; null when there are none. A segment saved for another model, or unreadable, is
   * left out (its notes are embedded again) and marked to be rewritten.
   */
  async load(dim: number | null, provider: string, model: string, chunkWords: number): Promise<VectorIndex | null> {
    const { store, log, clock } = this.deps;
    let index: VectorIndex | null = null;
    let found = false;
    for (let k = 0; k < SEGMENT_COUNT; k++) {
      await clock.next();
      const name = segmentFileName(FILE, k);
      let bytes: Uint8Array | null;
      try {
        bytes = await store.read(name);
      } catch (e) {
        log("warn", `Embeddings file ${name} could not be read (${errText(e)}); its notes are embedded again.`);
        this.dirty.add(k);
        continue;
      }
      if (!bytes || bytes.length === 0) {
        this.dirty.add(k);
        continue;
      }
      try {
        const blobs = readBlobs(bytes);
        const key = utf8d.decode(blobs.get("key"));
        const [v, p, m, d, cw] = key.split("/");
        const savedDim = Number(d);
        if (v !== "v1" || p !== provider || m !== keyPart(model) || Number(cw) !== chunkWords || !(savedDim > 0) || (dim !== null && savedDim !== dim) || (index && index.dim !== savedDim)) {
          if (!found) log("info", `Saved embeddings are for another model or format (${key}); notes are embedded again.`);
          this.dirty.add(k);
          continue;
        }
        index ??= new VectorIndex(savedDim);
        const docs = JSON.parse(utf8d.decode(blobs.get("docs"))) as SavedDoc[];
        const vecs = blobs.get("vecs") ?? new Uint8Array(0);
        const scales = blobs.get("scales") ?? new Uint8Array(0);
        const q = new Int8Array(vecs.buffer, vecs.byteOffset, vecs.byteLength);
        const sc = new Float32Array(scales.slice().buffer);
        for (const doc of docs) {
          index.setDoc(
            doc.p,
            doc.m,
            doc.s,
            doc.c.map(([hash, heading, lineStart, lineEnd]) => ({ hash, heading, lineStart, lineEnd })),
            doc.t,
            doc.f,
          );
          for (const [ord, c] of doc.c.entries()) {
            const n = c[4];
            if (n >= 0 && (n + 1) * savedDim <= q.length && n < sc.length) index.restoreVector(doc.p, ord, q.subarray(n * savedDim, (n + 1) * savedDim), sc[n]);
          }
        }
        found = true;
      } catch (e) {
        log("warn", `Embeddings file ${name} is unusable (${errText(e)}); its notes are embedded again.`);
        this.dirty.add(k);
      }
    }
    return found ? index : null;
  }

  /**
   * Writes the changed segments, one per task. A failed write leaves its segment dirty and is not
   * logged here: the result says why (the caller reports a failure that recurs once). An error while
   * serializing leaves every segment of this save dirty and is thrown.
   */
  async save(index: VectorIndex): Promise<string | null> {
    if (this.dirty.size === 0) return null;
    const segs = [...this.dirty].sort((a, b) => a - b);
    this.dirty.clear();
    try {
      return await this.saveSegments(index, segs);
    } catch (e) {
      for (const k of segs) this.dirty.add(k);
      throw e;
    }
  }

  private async saveSegments(index: VectorIndex, segs: number[]): Promise<string | null> {
    const { store, clock } = this.deps;
    let failed: string | null = null;
    const bySeg = new Map<number, string[]>();
    for (const k of segs) bySeg.set(k, []);
    for (const path of index.docs.keys()) bySeg.get(segmentOf(path, SEGMENT_COUNT))?.push(path);
    const key = utf8e.encode(this.deps.key());
    for (const k of segs) {
      await clock.next();
      const docs: SavedDoc[] = [];
      const slots: number[] = [];
      for (const path of bySeg.get(k)!) {
        const d = index.docs.get(path)!;
        docs.push({
          p: d.path,
          m: d.mtime,
          s: d.size,
          t: d.tags,
          f: d.frontmatter,
          c: d.chunks.map((c) => {
            let n = -1;
            if (c.slot >= 0) {
              n = slots.length;
              slots.push(c.slot);
            }
            return [c.hash, c.heading, c.lineStart, c.lineEnd, n];
          }),
        });
      }
      const vecs = new Int8Array(slots.length * index.dim);
      const scales = new Float32Array(slots.length);
      for (const [n, slot] of slots.entries()) {
        const { q, scale } = index.vectorOf(slot);
        vecs.set(q, n * index.dim);
        scales[n] = scale;
      }
      const bytes = writeBlobs({
        key,
        docs: utf8e.encode(JSON.stringify(docs)),
        vecs: new Uint8Array(vecs.buffer),
        scales: new Uint8Array(scales.buffer),
      });
      try {
        await store.write(segmentFileName(FILE, k), bytes);
      } catch (e) {
        this.dirty.add(k);
        failed = `could not write them to ${store.description}: ${errText(e)}`;
      }
    }
    return failed;
  }
}

/** A model name as one part of the saved key ("Xenova/all-MiniLM-L6-v2" holds a slash). */
export function keyPart(model: string): string {
  return model.replace(/%/g, "%25").replace(/\//g, "%2F");
}
