/**
 * What the first listing's worker (scan-worker.ts) and the thread that takes its results in
 * (fs-scan.ts `listInWorker`) send each other, and the naming rules both walks share (`entryNames`).
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

/** A folder entry as the listing names it: vault path (NFC), disk path, real path. */
export interface EntryNames {
  vp: string;
  dp: string;
  real: string;
}

/**
 * Entry `name` (not a dot-entry: those are skipped, or kept as our temp files, by the caller) of the
 * folder at vault path `vp0`, disk path `dp0`, real path `real0`; null for the config folder, which
 * the listing skips. The real path is concatenated (path.join costs ~2 µs a call); `sep` is the
 * platform's separator.
 */
export function entryNames(name: string, vp0: string, dp0: string, real0: string, configDir: string, sep: string): EntryNames | null {
  const vname = name.normalize("NFC");
  const vp = vp0 ? `${vp0}/${vname}` : vname;
  if (vp === configDir) return null;
  return { vp, dp: dp0 ? `${dp0}/${name}` : name, real: real0.endsWith(sep) ? real0 + name : real0 + sep + name };
}
