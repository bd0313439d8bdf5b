import { Modal, Setting, type App } from "obsidian";
import type { ConfirmRequest, Confirmer } from "../../core/write/confirm";

/** Asks the vault owner, in a modal, before a destructive change. Closing the modal declines. */
export class ModalConfirmer implements Confirmer {
  constructor(private readonly app: App) {}

  confirm(req: ConfirmRequest): Promise<boolean> {
    return new Promise((resolve) => new ConfirmModal(this.app, req, resolve).open());
  }
}

const TITLES: Record<ConfirmRequest["action"], string> = {
  delete: "An assistant wants to delete a note",
  rename: "An assistant wants to move a note",
  overwrite: "An assistant wants to replace a note's content",
};

export class ConfirmModal extends Modal {
  private answered = false;

  constructor(
    app: App,
    private readonly req: ConfirmRequest,
    private readonly answer: (yes: boolean) => void,
  ) {
    super(app);
  }

  override onOpen(): void {
    const { contentEl, req } = this;
    this.setTitle(TITLES[req.action]);
    contentEl.createEl("p", { text: req.summary });
    if (req.diff) contentEl.createEl("pre", { text: req.diff, cls: "vault-mcp-diff" });
    new Setting(contentEl)
      .addButton((b) => b.setButtonText("Decline").onClick(() => this.finish(false)))
      .addButton((b) =>
        b
          .setButtonText("Allow")
          .setCta()
          .onClick(() => this.finish(true)),
      );
  }

  override onClose(): void {
    this.contentEl.empty();
    if (!this.answered) {
      this.answered = true;
      this.answer(false);
    }
  }

  private finish(yes: boolean): void {
    if (!this.answered) {
      this.answered = true;
      this.answer(yes);
    }
    this.close();
  }
}
