/**
 * What the first listing's worker (scan-worker.ts) and the thread that takes its results in
 * (fs-scan.ts `listInWorker`) send each other. Types and sizes only.
 */

/** What the worker is given. */
export interface ScanWorkerData {
  /** The vault folder's real path. */
  rootReal: string;
  /** Its config folder's vault path (skipped, as every dot-entry is). */
  configDir: string;
}

/** A file's facts the listing keeps (see vault-state.ts `listedFile`): a `Stats` has them too. */
export interface FileFacts {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  birthtimeMs: number;
  ino: number;
}

/** A symbolic link the walk passed by, for the main thread to check and follow (see fs-scan.ts `scanLink`). */
export interface ScanLink {
  vp: string;
  dp: string;
  /** The real paths of the folder it is in and of those above it. */
  chain: string[];
}

/** Files posted at once. */
export const SCAN_BATCH = 2048;
/** Numbers a file in `ScanBatch.nums`: FileFacts' size, mtimeMs, ctimeMs, birthtimeMs, ino. */
export const SCAN_NUMS = 5;

/** Part of the walk's results, in the order found. */
export interface ScanBatch {
  /** Files' vault paths (NFC). */
  files: string[];
  /** Their disk paths, null where the same as the vault path. */
  disk: (string | null)[];
  /** SCAN_NUMS numbers a file, room for SCAN_BATCH files (those past `files` unused). */
  nums: Float64Array<ArrayBuffer>;
  /** Folders: vault path, disk path, vault path, disk path… */
  folders: string[];
  links: ScanLink[];
  /** Our temp files the walk passed by (disk-relative; see leftovers.ts). */
  leftovers: string[];
  /** Folders that could not be listed, as the log says it. */
  warnings: string[];
}

export type ScanMessage = { batch: ScanBatch; done?: undefined } | { done: true; batch?: undefined };
