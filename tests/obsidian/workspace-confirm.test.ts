import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { App } from "obsidian";
import { ConfirmModal, ModalConfirmer } from "../../src/hosts/obsidian/confirm";
import { ObsidianWorkspace } from "../../src/hosts/obsidian/workspace";
import { createTestApp, MarkdownView, Modal, Notice, settingsIn, type App as StandInApp, type ButtonComponent } from "../stand-in/obsidian";

let root: string;
let app: StandInApp;

beforeEach(() => {
  root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "obsidian-ws-")));
  fs.writeFileSync(path.join(root, "A.md"), "alpha\nline 2\n");
  fs.mkdirSync(path.join(root, "F"));
  fs.writeFileSync(path.join(root, "F/B.md"), "beta\n");
  app = createTestApp(root).app;
});

afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

describe("ObsidianWorkspace", () => {
  test("no open note: null and an empty list", () => {
    const ws = new ObsidianWorkspace(app as unknown as App);
    expect(ws.activeNote()).toBeNull();
    expect(ws.openNotes()).toEqual([]);
  });

  test("openNote opens in the current leaf or a new tab, at a 1-based line; active note and open notes follow", async () => {
    const ws = new ObsidianWorkspace(app as unknown as App);
    await ws.openNote("A.md", { line: 2 });
    const first = app.workspace.leaves[0];
    expect(first.lastOpenState).toEqual({ eState: { line: 1 }, active: true });
    await ws.openNote("F/B.md", { newTab: true });
    await ws.openNote("A.md", { newTab: true });
    expect(app.workspace.leaves).toHaveLength(3);
    expect(ws.openNotes()).toEqual(["A.md", "F/B.md"]);

    const view = app.workspace.activeLeaf!.view as MarkdownView;
    view.editor.selection = "alpha";
    view.editor.cursor = { line: 1, ch: 0 };
    expect(ws.activeNote()).toEqual({ path: "A.md", selection: "alpha", cursorLine: 2 });
    view.mode = "preview";
    expect(ws.activeNote()).toEqual({ path: "A.md", selection: "", cursorLine: null });

    // Focus in a side panel: the most recent leaf still counts.
    app.workspace.setActiveLeaf(null);
    expect(ws.activeNote()?.path).toBe("A.md");
    await expect(ws.openNote("Nope.md", {})).rejects.toThrow();
  });
});

describe("ModalConfirmer", () => {
  async function answer(click: "Allow" | "Decline" | "close"): Promise<boolean> {
    const result = new ModalConfirmer(app as unknown as App).confirm({
      action: "overwrite",
      path: "A.md",
      summary: 'Replace the content of "A.md"',
      diff: "-alpha\n+omega",
    });
    const modal = Modal.opened[Modal.opened.length - 1];
    expect(modal).toBeInstanceOf(ConfirmModal);
    expect(modal.contentEl.getText()).toContain('Replace the content of "A.md"');
    expect(modal.contentEl.getText()).toContain("+omega");
    if (click === "close") modal.close();
    else {
      const buttons = settingsIn(modal.contentEl as never).flatMap((s) => s.components) as ButtonComponent[];
      await buttons.find((b) => b.buttonEl.getText() === click)!.click();
    }
    return result;
  }

  test("Allow says yes, Decline and closing say no", async () => {
    expect(await answer("Allow")).toBe(true);
    expect(await answer("Decline")).toBe(false);
    expect(await answer("close")).toBe(false);
  });

  test("without an answer the modal closes and the change is refused with a message the assistant can read", async () => {
    const result = new ModalConfirmer(app as unknown as App, 30).confirm({ action: "delete", path: "A.md", summary: 'Delete "A.md" (moved to the trash)' });
    const modal = Modal.opened[Modal.opened.length - 1];
    expect(modal.isOpen).toBe(true);
    expect(modal.titleEl.getText()).toBe("An assistant wants to delete a file");
    await expect(result).rejects.toMatchObject({ name: "VaultError", code: "declined", message: expect.stringContaining("Nobody answered") });
    expect(modal.isOpen).toBe(false);
  });

  test("a cancelled call withdraws its question: the modal closes, the owner is told, the change is refused as cancelled", async () => {
    Notice.messages.length = 0;
    const stop = new AbortController();
    const result = new ModalConfirmer(app as unknown as App).confirm({ action: "delete", path: "A.md", summary: 'Delete "A.md" (moved to the trash)' }, stop.signal);
    const modal = Modal.opened[Modal.opened.length - 1];
    expect(modal.isOpen).toBe(true);
    stop.abort();
    await expect(result).rejects.toMatchObject({ name: "VaultError", code: "cancelled", message: expect.stringContaining("nothing was changed") });
    expect(modal.isOpen).toBe(false);
    expect(Notice.messages).toEqual([expect.stringMatching(/stopped waiting for your answer \(Delete "A\.md".*nothing was changed/)]);
    // Already cancelled: no modal at all.
    const before = Modal.opened.length;
    await expect(new ModalConfirmer(app as unknown as App).confirm({ action: "delete", path: "A.md", summary: "x" }, stop.signal)).rejects.toMatchObject({ code: "cancelled" });
    expect(Modal.opened.length).toBe(before);
  });

  test("the default timeout is 2 minutes, and the modal says so", () => {
    void new ModalConfirmer(app as unknown as App).confirm({ action: "rename", path: "A.md", target: "B.md", summary: 'Rename "A.md" to "B.md"' });
    const modal = Modal.opened[Modal.opened.length - 1];
    expect(modal.contentEl.getText()).toContain("New path: B.md");
    expect(modal.contentEl.getText()).toContain("within 2 minutes");
    modal.close();
  });
});
