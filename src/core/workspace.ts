/**
 * The live editor state, available only inside Obsidian (`app.workspace`). Headless there is no
 * workspace, so `CoreServices.workspace` is absent and the tools that need it are not registered.
 *
 * What the Obsidian adapter must do:
 * - `activeNote()`: `app.workspace.getActiveViewOfType(MarkdownView)` (or the most recent leaf via
 *   `getMostRecentLeaf()` when focus is in a side panel); `null` when no markdown note is open. `path`
 *   is `view.file.path`; `selection` is `view.editor.getSelection()` ("" when nothing is selected);
 *   `cursorLine` is `view.editor.getCursor().line + 1` (1-based), or null in reading view.
 * - `openNotes()`: paths of the markdown files shown in leaves, from
 *   `app.workspace.getLeavesOfType("markdown")` (`leaf.view.file?.path`), deduplicated, in leaf order.
 * - `openNote(path, { line, newTab })`: `app.workspace.getLeaf(newTab ? "tab" : false).openFile(file,
 *   { eState: line ? { line: line - 1 } : undefined, active: true })`, where `file` is
 *   `app.vault.getFileByPath(normalizePath(path))`. The tool has already checked the path is visible.
 */
export interface ActiveNote {
  /** Vault-relative path of the note in the active editor. */
  path: string;
  /** The selected text ("" when nothing is selected). */
  selection: string;
  /** 1-based line of the cursor, null when unknown (reading view). */
  cursorLine: number | null;
}

export interface WorkspacePort {
  activeNote(): ActiveNote | null;
  /** Paths of the notes open in tabs/panes, in workspace order, without duplicates. */
  openNotes(): string[];
  /** Opens a note in the editor (`line` is 1-based), in a new tab when `newTab`. */
  openNote(path: string, opts: { line?: number; newTab?: boolean }): Promise<void>;
}
