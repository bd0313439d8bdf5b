import type { Plugin } from "obsidian";
import { clientConfigs } from "../common/client-config";

export interface CommandsHost extends Plugin {
  serverUrl(): string;
  token(): string;
  copyToClipboard(text: string, what: string): Promise<void>;
  restartServer(): Promise<void>;
}

/** The command palette entries (ids without the plugin id; Obsidian prefixes it). */
export function registerCommands(plugin: CommandsHost): void {
  plugin.addCommand({
    id: "copy-server-url",
    name: "Copy MCP server URL",
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
}
