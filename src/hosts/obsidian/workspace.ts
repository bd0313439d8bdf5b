import { MarkdownView, normalizePath, type App } from "obsidian";
import { VaultError } from "../../core/errors";
import type { ActiveNote, WorkspacePort } from "../../core/workspace";

/** The live editor state (`app.workspace`), for the workspace tools. */
export class ObsidianWorkspace implements WorkspacePort {
  constructor(private readonly app: App) {}

  private activeView(): MarkdownView | null {
    const { workspace } = this.app;
    const active = workspace.getActiveViewOfType(MarkdownView);
    if (active) return active;
    // Focus may be in a side panel: fall back to the most recent leaf in the main area.
    const view = workspace.getMostRecentLeaf()?.view;
    return view instanceof MarkdownView ? view : null;
  }

  activeNote(): ActiveNote | null {
    const view = this.activeView();
    const file = view?.file;
    if (!view || !file) return null;
    const source = view.getMode() === "source";
    return {
      path: file.path,
      selection: source ? view.editor.getSelection() : "",
      cursorLine: source ? view.editor.getCursor().line + 1 : null,
    };
  }

  openNotes(): string[] {
    const out: string[] = [];
    for (const leaf of this.app.workspace.getLeavesOfType("markdown")) {
      const view = leaf.view;
      const path = view instanceof MarkdownView ? view.file?.path : undefined;
      if (path && !out.includes(path)) out.push(path);
    }
    return out;
  }

  async openNote(path: string, opts: { line?: number; newTab?: boolean }): Promise<void> {
    const file = this.app.vault.getFileByPath(normalizePath(path));
    if (!file) throw new VaultError("not_found", `There is no file at "${path}"; check the path with list_documents or find_notes.`);
    const leaf = this.app.workspace.getLeaf(opts.newTab ? "tab" : false);
    await leaf.openFile(file, { eState: opts.line ? { line: opts.line - 1 } : undefined, active: true });
  }
}
