import { Notice, PluginSettingTab, Setting, type App, type Plugin } from "obsidian";
import { clientConfigs } from "../common/client-config";
import { generateToken, maskToken, parseFolderList, parseOriginList, parsePort, type VaultMcpSettings } from "./settings";
import { statusDescription, type ServerState } from "./status";

/** What the settings tab needs from the plugin. */
export interface SettingsHost extends Plugin {
  settings: VaultMcpSettings;
  saveSettings(): Promise<void>;
  /** Saves, then restarts the server so options read at start (port, folders, write mode) apply. */
  applyAndRestart(): Promise<void>;
  /** Restarts a little later (for text fields that change on every keystroke). */
  restartSoon(): void;
  serverState(): ServerState;
  serverUrl(): string;
  copyToClipboard(text: string, what: string): Promise<void>;
}

export class VaultMcpSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    private readonly host: SettingsHost,
  ) {
    super(app, host);
  }

  override display(): void {
    const { containerEl } = this;
    const s = this.host.settings;
    containerEl.empty();

    new Setting(containerEl).setName("Server").setHeading();

    new Setting(containerEl)
      .setName("Run the server")
      .setDesc(statusDescription(this.host.serverState()))
      .addToggle((t) =>
        t.setValue(s.enabled).onChange(async (v) => {
          s.enabled = v;
          await this.host.applyAndRestart();
          this.display();
        }),
      );

    const portSetting = new Setting(containerEl)
      .setName("Port")
      .setDesc("The local port the server listens on (1024–65535). Clients connect to 127.0.0.1 only.");
    portSetting.addText((t) =>
      t
        .setPlaceholder("28765")
        .setValue(String(s.port))
        .onChange(async (v) => {
          const port = parsePort(v);
          portSetting.setDesc(
            port === null
              ? "Enter a whole number from 1024 to 65535."
              : "The local port the server listens on (1024–65535). Clients connect to 127.0.0.1 only.",
          );
          if (port === null || port === s.port) return;
          s.port = port;
          await this.host.saveSettings();
          this.host.restartSoon();
        }),
    );

    new Setting(containerEl)
      .setName("Restart the server")
      .setDesc("Applies every change below at once.")
      .addButton((b) =>
        b.setButtonText("Restart").onClick(async () => {
          await this.host.applyAndRestart();
          this.display();
        }),
      );

    new Setting(containerEl).setName("Access").setHeading();

    new Setting(containerEl)
      .setName("Access token")
      .setDesc(`Clients send it as "Authorization: Bearer <token>". Current token: ${maskToken(s.token)}`)
      .addButton((b) => b.setButtonText("Copy").onClick(() => this.host.copyToClipboard(s.token, "Access token")))
      .addButton((b) =>
        b
          .setButtonText("Regenerate")
          .onClick(async () => {
            s.token = generateToken();
            await this.host.saveSettings();
            new Notice("A new access token is in effect; update your clients' configuration.");
            this.display();
          }),
      );

    new Setting(containerEl)
      .setName("Write mode")
      .setDesc(
        "Lets assistants create, edit, move and delete notes (deleted notes go to the trash). Turn it on only for assistants you trust; read-only is safer.",
      )
      .addToggle((t) =>
        t.setValue(s.writeMode).onChange(async (v) => {
          s.writeMode = v;
          await this.host.applyAndRestart();
        }),
      );

    new Setting(containerEl)
      .setName("Hidden folders")
      .setDesc("One folder per line. Assistants cannot see, search or change anything in them.")
      .addTextArea((t) =>
        t
          .setPlaceholder("Private")
          .setValue(s.hiddenFolders.join("\n"))
          .onChange(async (v) => {
            s.hiddenFolders = parseFolderList(v);
            await this.host.saveSettings();
            this.host.restartSoon();
          }),
      );

    new Setting(containerEl)
      .setName("Protected folders")
      .setDesc("One folder per line. Assistants can read these folders but never change them, even in write mode.")
      .addTextArea((t) =>
        t
          .setPlaceholder("Templates")
          .setValue(s.protectedFolders.join("\n"))
          .onChange(async (v) => {
            s.protectedFolders = parseFolderList(v);
            await this.host.saveSettings();
            this.host.restartSoon();
          }),
      );

    new Setting(containerEl)
      .setName("Allowed origins")
      .setDesc("One web origin per line, for browser-based clients only. Leave empty unless a client's documentation asks for it.")
      .addTextArea((t) =>
        t
          .setPlaceholder("https://example.com")
          .setValue(s.allowedOrigins.join("\n"))
          .onChange(async (v) => {
            s.allowedOrigins = parseOriginList(v);
            await this.host.saveSettings();
            this.host.restartSoon();
          }),
      );

    new Setting(containerEl).setName("Connect a client").setHeading();

    const url = this.host.serverUrl();
    const vaultName = this.app.vault.getName();
    const shown = clientConfigs(url, maskToken(s.token), vaultName);
    for (const config of clientConfigs(url, s.token, vaultName)) {
      const display = shown.find((c) => c.id === config.id)?.text ?? "";
      const setting = new Setting(containerEl)
        .setName(config.label)
        .addButton((b) => b.setButtonText("Copy").onClick(() => this.host.copyToClipboard(config.text, config.label)));
      setting.descEl.createEl("pre", { text: display, cls: "vault-mcp-client-config" });
    }
  }
}
