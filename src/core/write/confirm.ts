/**
 * "Ask before destructive changes": the write service asks a Confirmer before it deletes, renames or
 * overwrites. Inside Obsidian the plugin shows a modal; headless, `AutoApprove` says yes.
 */
export interface ConfirmRequest {
  action: "delete" | "rename" | "overwrite";
  /** The vault-relative path acted on. */
  path: string;
  /** The new path (rename). */
  target?: string;
  /** One line for the owner, e.g. `Rename "A.md" to "B.md" (links in other notes are updated)`. */
  summary: string;
  /** For overwrites: the unified diff of the change. */
  diff?: string;
}

export interface Confirmer {
  /**
   * `signal` aborts when the call is cancelled (the client stopped waiting): the question is then
   * withdrawn and the promise rejects with a `cancelled` VaultError.
   */
  confirm(req: ConfirmRequest, signal?: AbortSignal): Promise<boolean>;
}

/** Approves everything (headless server, or the owner turned confirmations off). */
export class AutoApprove implements Confirmer {
  confirm(): Promise<boolean> {
    return Promise.resolve(true);
  }
}
