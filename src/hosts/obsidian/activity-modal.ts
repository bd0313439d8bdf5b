import { Modal, type App } from "obsidian";
import type { ActivityEntry } from "../../core/write";

/** How many entries the modal lists. */
export const ACTIVITY_MODAL_LIMIT = 200;

/** The latest changes assistants made through the server: time, client, tool, path, etags. */
export class ActivityModal extends Modal {
  constructor(
    app: App,
    private readonly load: (limit: number) => Promise<ActivityEntry[]>,
  ) {
    super(app);
  }

  override onOpen(): void {
    this.setTitle("Activity log");
    const status = this.contentEl.createEl("p", { text: "Loading…", cls: "vault-mcp-activity-status" });
    this.load(ACTIVITY_MODAL_LIMIT).then(
      (entries) => {
        status.remove();
        this.render(entries);
      },
      (e: unknown) => status.setText(`Could not read the activity log: ${e instanceof Error ? e.message : String(e)}`),
    );
  }

  override onClose(): void {
    this.contentEl.empty();
  }

  private render(entries: ActivityEntry[]): void {
    const { contentEl } = this;
    if (entries.length === 0) {
      contentEl.createEl("p", { text: "No changes have been made through the server yet." });
      return;
    }
    contentEl.createEl("p", {
      text: `The latest ${entries.length === 1 ? "change" : `${entries.length} changes`} made by assistants, newest first.`,
      cls: "setting-item-description",
    });
    const wrapper = contentEl.createDiv({ cls: "vault-mcp-activity" });
    const table = wrapper.createEl("table");
    const head = table.createEl("thead").createEl("tr");
    for (const h of ["Time", "Client", "Tool", "Path", "Etag before", "Etag after"]) head.createEl("th", { text: h });
    const body = table.createEl("tbody");
    for (const e of entries) {
      const row = body.createEl("tr");
      row.createEl("td", { text: formatTime(e.time), attr: { title: e.time } });
      row.createEl("td", { text: e.client });
      row.createEl("td", { text: e.tool });
      const path = e.new_path !== undefined ? `${e.path} → ${e.new_path}` : e.path;
      row.createEl("td", { text: e.detail ? `${path} (${e.detail})` : path });
      row.createEl("td", { text: shortEtag(e.etag_before), attr: { title: e.etag_before ?? "none" } });
      row.createEl("td", { text: shortEtag(e.etag_after), attr: { title: e.etag_after ?? "none" } });
    }
  }
}

function formatTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

/** Etags are long hashes; the first characters tell versions apart (the full value is in the tooltip). */
function shortEtag(etag: string | null): string {
  if (etag === null) return "—";
  const bare = etag.replace(/^W\//, "").replace(/"/g, "");
  return bare.length > 10 ? `${bare.slice(0, 10)}…` : bare;
}
