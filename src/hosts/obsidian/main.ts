import { debounce, Notice, Plugin } from "obsidian";
import type { ActivityEntry } from "../../core/write";
import { writeBundle } from "./bridge-file";
import { registerCommands } from "./commands";
import { ServerController } from "./server";
import { obsidianGitInfo, type ObsidianGitInfo } from "./obsidian-git";
import { migrateSettings, type VaultMcpSettings } from "./settings";
import { VaultMcpSettingTab } from "./settings-tab";
import { StatusBar, type ServerState } from "./status";

/** Lifecycle only: settings, UI entries, and the server started once the workspace is ready. */
export default class VaultMcpPlugin extends Plugin {
  declare settings: VaultMcpSettings;
  private server!: ServerController;
  private statusBar!: StatusBar;
  private unloaded = false;
  private stopped: Promise<void> | null = null;
  private readonly restartDebounced = debounce(() => void this.restartServer(), 1500, true);

  override async onload(): Promise<void> {
    const { settings, changed } = migrateSettings(await this.loadData());
    this.settings = settings;
    if (changed) await this.saveSettings();

    this.statusBar = new StatusBar(this.addStatusBarItem());
    this.server = new ServerController({
      app: this.app,
      manifest: this.manifest,
      settings: () => this.settings,
      registerEvent: (ref) => this.registerEvent(ref),
      onState: (state) => this.statusBar.show(state),
    });
    this.statusBar.show(this.server.state);
    this.addSettingTab(new VaultMcpSettingTab(this.app, this));
    registerCommands(this);

    this.app.workspace.onLayoutReady(() => {
      if (!this.unloaded) void this.server.start();
    });
  }

  override onunload(): void {
    void this.shutdown();
  }

  /** Stops the server (the port is free when this resolves); `onunload` starts it, tests await it. */
  shutdown(): Promise<void> {
    if (!this.stopped) {
      this.unloaded = true;
      this.restartDebounced.cancel();
      this.stopped = this.server ? this.server.stop() : Promise.resolve();
    }
    return this.stopped;
  }

  async saveSettings(): Promise<void> {
    await this.saveData(this.settings);
  }

  async applyAndRestart(): Promise<void> {
    this.restartDebounced.cancel();
    await this.saveSettings();
    await this.restartServer();
  }

  restartSoon(): void {
    this.restartDebounced();
  }

  async restartServer(): Promise<void> {
    if (!this.unloaded) await this.server.restart();
  }

  /** "Ask before destructive changes" applies to the running server at once. */
  applyConfirmations(): void {
    this.server.updateConfirmer();
  }

  activity(limit: number): Promise<ActivityEntry[]> {
    return this.server.activity(limit);
  }

  serverState(): ServerState {
    return this.server.state;
  }

  cancelModelDownload(): boolean {
    return this.server.cancelModelDownload();
  }

  resumeEmbeddings(): void {
    this.server.resumeEmbeddings();
  }

  /** Whether the running server found a git repository (null while stopped). */
  gitBacked(): boolean | null {
    const services = this.server.services;
    return services ? services.git !== null : null;
  }

  obsidianGit(): Promise<ObsidianGitInfo> {
    return obsidianGitInfo(this.app);
  }

  bridgePath(): string | null {
    return this.server.bridgePath;
  }

  /** Writes the MCP Bundle for Claude Desktop into the plugin's folder; its absolute path, or null. */
  saveBundle(): Promise<string | null> {
    return writeBundle(this.app, this.server.dataDir, this.manifest.version, this.server.url);
  }

  serverUrl(): string {
    return this.server.url;
  }

  token(): string {
    return this.settings.token;
  }

  async copyToClipboard(text: string, what: string): Promise<void> {
    try {
      await navigator.clipboard.writeText(text);
      new Notice(`${what} copied to the clipboard.`);
    } catch {
      new Notice(`Could not copy the ${what.toLowerCase()} to the clipboard.`);
    }
  }
}
