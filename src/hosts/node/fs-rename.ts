/**
 * Renaming and moving in the headless vault, with links following as in Obsidian: the disk move under
 * both paths' locks, the picture in memory moved at once, then every note that linked to a moved file
 * rewritten (each through the writer, after the locks are released). Owns no listing of its own.
 */
import { promises as fsp } from "node:fs";
import { VaultError } from "../../core/errors";
import { LinkResolver } from "../../core/links/resolver";
import { renameContext, rewriteLinks } from "../../core/links/rewrite";
import { parseNote } from "../../core/parser";
import { isUnder } from "../../core/paths";
import { SLICE_MS, TimeSlice } from "../../core/time-slice";
import { parentOf, type RenamePlan, type RenameProgress, type RenameResult } from "../../core/vault";
import type { LogLevel } from "../common/runtime";
import { exists } from "./atomic";
import type { FsWriter, WriteContext } from "./fs-write";
import { assertPath, existsError, notFound, sameEntry } from "./vault-paths";

interface LinkPlan {
  renames: Map<string, string>;
  /** Notes (old paths) whose text may need rewriting. */
  sources: string[];
  context: ReturnType<typeof renameContext> | null;
}

export interface RenameContext extends WriteContext {
  writer: FsWriter;
  log: (level: LogLevel, message: string) => void;
  /** Test-only crash points (`VAULT_MCP_CRASH_AT`, read by the CLI): `rename:after-journal`, `rename:after-move`, `rename:after-rewrite:<n>`. */
  crash?: (point: string) => void;
}

/** Moves `path` (a file or a folder) to `newPath` and rewrites the links to what moved. */
export async function renameEntry(
  ctx: RenameContext,
  path: string,
  newPath: string,
  onProgress?: RenameProgress,
  beforeMove?: (plan: RenamePlan) => Promise<void>,
): Promise<RenameResult> {
  const { state, writer } = ctx;
  const { files, folders, paths } = state;
  assertPath(path);
  assertPath(newPath);
  if (path === newPath) return { path: newPath, linksUpdated: 0, notesUpdated: 0 };
  if (isUnder(newPath, path)) {
    throw new VaultError("invalid_argument", `Cannot move "${path}" into itself ("${newPath}"); pick a destination outside it.`);
  }
  const plan = await writer.withLocks([path, newPath], async () => {
    const isFile = files.has(path);
    if (!isFile && !folders.has(path)) throw notFound(path);
    const src = await paths.entryFor(path);
    const dst = await paths.realFor(newPath);
    if (files.has(newPath) || folders.has(newPath)) {
      if (!(await sameEntry(src, dst))) throw existsError(newPath);
    } else if ((await exists(dst)) && !(await sameEntry(src, dst))) throw existsError(newPath);
    const map = new Map<string, string>();
    if (isFile) map.set(path, newPath);
    else for (const f of files.keys()) if (isUnder(f, path)) map.set(f, newPath + f.slice(path.length));
    const linkPlan = await planLinkUpdates(ctx, map);
    await beforeMove?.({ files: map, notes: linkPlan.sources });
    ctx.crash?.("rename:after-journal");
    const events = await writer.ensureParents(parentOf(newPath));
    await paths.checkParentReal(dst, newPath);
    try {
      await fsp.rename(src, dst);
    } catch (e) {
      throw paths.ioError(e, path);
    }
    const oldDp = paths.diskOf(path);
    const newDp = paths.diskOfNew(newPath);
    const watcher = ctx.watcher();
    if (isFile) {
      events.push(...state.move(map, new Map(), oldDp, newDp));
      state.listFile(newPath, await fsp.stat(dst));
    } else {
      const folderMap = new Map<string, string>([[path, newPath]]);
      for (const f of folders) if (f !== path && isUnder(f, path)) folderMap.set(f, newPath + f.slice(path.length));
      watcher?.unwatchUnder(oldDp);
      events.push(...state.move(map, folderMap, oldDp, newDp));
      for (const f of folderMap.values()) watcher?.watchDir(paths.diskOf(f));
    }
    ctx.emit(events);
    ctx.crash?.("rename:after-move");
    return linkPlan;
  });
  const { linksUpdated, notesUpdated, updatedPaths } = await updateLinksAfterRename(ctx, plan, onProgress);
  return { path: newPath, linksUpdated, notesUpdated, updatedPaths };
}

/**
 * Before a move: which notes have links to the moving files (plus the moving notes themselves, whose
 * relative links may need recomputing), and how links resolved before the move.
 */
async function planLinkUpdates(ctx: RenameContext, renames: Map<string, string>): Promise<LinkPlan> {
  const links = ctx.state.links;
  // The linking notes from the link records' numbers (one pass, no per-note objects: ~50 ms at 100k
  // notes), the paths snapshot, then the two resolvers (before and after the move) in slices: at 10k
  // notes they held the event loop for 55-190 ms in one step.
  const sources = new Set<string>(links.sourcesLinkingTo(renames.keys()));
  const paths = [...links.filePaths()];
  const slice = new TimeSlice(SLICE_MS, 256);
  for (const p of renames.keys()) if (links.isNote(p)) sources.add(p);
  if (sources.size === 0) return { renames, sources: [], context: null };
  const before = new LinkResolver();
  const after = new LinkResolver();
  for (const p of paths) {
    if (slice.due()) await slice.next();
    before.add(p);
    after.add(renames.get(p) ?? p);
  }
  return { renames, sources: [...sources], context: renameContext(before, renames, after) };
}

/**
 * After files moved: rewrites every link that pointed at a moved file (and a moved note's own relative
 * links) with `rewriteLinks`, each note through the writer's `process` — after the renamed paths'
 * locks are released. A note that fails to update is logged and skipped; the rename itself stands.
 */
async function updateLinksAfterRename(ctx: RenameContext, plan: LinkPlan, onProgress?: RenameProgress): Promise<{ linksUpdated: number; notesUpdated: number; updatedPaths: string[] }> {
  let linksUpdated = 0;
  let notesUpdated = 0;
  const updatedPaths: string[] = [];
  const rc = plan.context;
  if (!rc) return { linksUpdated, notesUpdated, updatedPaths };
  // Progress at the start, every 25 notes (~a second of rewriting a large vault at worst) and at the end.
  const total = plan.sources.length;
  onProgress?.(0, total);
  for (const [i, oldSource] of plan.sources.entries()) {
    if (i > 0 && i % 25 === 0) onProgress?.(i, total);
    const newSource = plan.renames.get(oldSource) ?? oldSource;
    if (!ctx.state.files.has(newSource)) continue;
    let count = 0;
    try {
      await ctx.writer.process(newSource, (text) => {
        const r = rewriteLinks(text, parseNote(text), oldSource, newSource, plan.renames, rc.resolveOld, rc.resolveNewShortest);
        count = r.count;
        return r.text;
      });
    } catch (e) {
      ctx.log("warn", `Could not update links in "${newSource}" after a rename: ${(e as Error).message}`);
      continue;
    }
    if (count > 0) {
      linksUpdated += count;
      notesUpdated++;
      updatedPaths.push(newSource);
      ctx.crash?.(`rename:after-rewrite:${notesUpdated}`);
    }
  }
  onProgress?.(total, total);
  return { linksUpdated, notesUpdated, updatedPaths };
}
