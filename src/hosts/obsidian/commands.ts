import type { Plugin } from "obsidian";
import type { ActivityEntry } from "../../core/write";
import { clientConfigs } from "../common/client-config";
import { ActivityModal } from "./activity-modal";

export interface CommandsHost extends Plugin {
  serverUrl(): string;
  token(): string;
  copyToClipboard(text: string, what: string): Promise<void>;
  restartServer(): Promise<void>;
  /** The latest changes made through the server, newest first. */
  activity(limit: number): Promise<ActivityEntry[]>;
}

/** The command palette entries (ids without the plugin id; Obsidian prefixes it). */
export function registerCommands(plugin: CommandsHost): void {
  plugin.addCommand({
    id: "copy-server-url",
    name: "Copy server URL",
    callback: () => plugin.copyToClipboard(plugin.serverUrl(), "Server URL"),
  });
  plugin.addCommand({
    id: "copy-client-configuration",
    name: "Copy client configuration",
    callback: () => {
      const config = clientConfigs(plugin.serverUrl(), plugin.token(), plugin.app.vault.getName()).find((c) => c.id === "http");
      return plugin.copyToClipboard(config?.text ?? plugin.serverUrl(), "Client configuration");
    },
  });
  plugin.addCommand({
    id: "restart-server",
    name: "Restart server",
    callback: () => plugin.restartServer(),
  });
  plugin.addCommand({
    id: "show-activity-log",
    name: "Show activity log",
    callback: () => new ActivityModal(plugin.app, (limit) => plugin.activity(limit)).open(),
  });
}
