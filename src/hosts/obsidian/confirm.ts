import { Modal, Notice, Setting, type App } from "obsidian";
import { cancelledError, VaultError } from "../../core/errors";
import type { ConfirmRequest, Confirmer } from "../../core/write/confirm";

/** How long a confirmation waits for the owner before the change is refused. */
export const CONFIRM_TIMEOUT_MS = 2 * 60 * 1000;

export type ConfirmOutcome = "allow" | "decline" | "timeout" | "cancelled";

/**
 * Asks the vault owner, in a modal, before a destructive change; the tool call waits for the answer.
 * Decline (or closing the modal) → `false`, which the write service reports as "declined". No answer
 * within the timeout → the modal closes and a `VaultError` tells the assistant nobody answered.
 */
export class ModalConfirmer implements Confirmer {
  constructor(
    private readonly app: App,
    private readonly timeoutMs = CONFIRM_TIMEOUT_MS,
  ) {}

  confirm(req: ConfirmRequest, signal?: AbortSignal): Promise<boolean> {
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(cancelledError());
      const onAbort = () => modal.withdraw();
      const modal = new ConfirmModal(this.app, req, this.timeoutMs, (outcome) => {
        signal?.removeEventListener("abort", onAbort);
        if (outcome === "cancelled") {
          // The assistant's call ended (its client stopped waiting): the question is withdrawn.
          new Notice(`The assistant stopped waiting for your answer (${req.summary}); nothing was changed.`);
          reject(cancelledError());
        } else if (outcome === "timeout") {
          reject(
            new VaultError(
              "declined",
              `Nobody answered the confirmation in Obsidian within ${formatDuration(this.timeoutMs)} (${req.summary}); nothing was changed. Ask the user to watch for the dialog in Obsidian, then retry.`,
            ),
          );
        } else resolve(outcome === "allow");
      });
      signal?.addEventListener("abort", onAbort, { once: true });
      modal.open();
    });
  }
}

const TITLES: Record<ConfirmRequest["action"], string> = {
  delete: "An assistant wants to delete a file",
  rename: "An assistant wants to move a file",
  overwrite: "An assistant wants to replace a file's content",
};

export class ConfirmModal extends Modal {
  private answered = false;
  private timer: number | null = null;

  constructor(
    app: App,
    private readonly req: ConfirmRequest,
    private readonly timeoutMs: number,
    private readonly answer: (outcome: ConfirmOutcome) => void,
  ) {
    super(app);
  }

  override onOpen(): void {
    const { contentEl, req } = this;
    this.setTitle(TITLES[req.action]);
    contentEl.createEl("p", { text: req.summary });
    if (req.action === "rename" && req.target) contentEl.createEl("p", { text: `New path: ${req.target}` });
    if (req.diff) contentEl.createEl("pre", { text: req.diff, cls: "vault-mcp-diff" });
    contentEl.createEl("p", {
      text: `Without an answer within ${formatDuration(this.timeoutMs)}, the change is refused.`,
      cls: "setting-item-description",
    });
    new Setting(contentEl)
      .addButton((b) => b.setButtonText("Decline").onClick(() => this.finish("decline")))
      .addButton((b) =>
        b
          .setButtonText("Allow")
          .setCta()
          .onClick(() => this.finish("allow")),
      );
    // The modal's own window (popout-safe); the owner may be away, so the request does not wait forever.
    this.timer = this.modalEl.win.setTimeout(() => this.finish("timeout"), this.timeoutMs);
  }

  override onClose(): void {
    this.contentEl.empty();
    this.settle("decline");
  }

  private settle(outcome: ConfirmOutcome): void {
    if (this.timer !== null) {
      this.modalEl.win.clearTimeout(this.timer);
      this.timer = null;
    }
    if (!this.answered) {
      this.answered = true;
      this.answer(outcome);
    }
  }

  /** Closes the question unanswered: the call that asked it was cancelled. */
  withdraw(): void {
    this.finish("cancelled");
  }

  private finish(outcome: ConfirmOutcome): void {
    this.settle(outcome);
    this.close();
  }
}

function formatDuration(ms: number): string {
  if (ms >= 60_000 && ms % 60_000 === 0) return ms === 60_000 ? "1 minute" : `${ms / 60_000} minutes`;
  const s = Math.max(1, Math.round(ms / 1000));
  return s === 1 ? "1 second" : `${s} seconds`;
}
