import { Notice, PluginSettingTab, Setting, type App, type Plugin } from "obsidian";
import { CORE_TOOLS } from "../../mcp/server";
import { allTools } from "../../mcp/tools";
import { REMOTE_DEFAULTS } from "../../core/search/vector/remote-embedder";
import { clientConfigs } from "../common/client-config";
import {
  ATTACHMENT_KB_RANGE,
  generateToken,
  maskToken,
  parseFolderList,
  parseHttpUrl,
  parseKB,
  parseOriginList,
  parseContentTypes,
  parseHostList,
  TRANSFER_MB_RANGE,
  TRANSFER_TTL_RANGE,
  parsePort,
  DEFAULT_PORT,
  READ_KB_RANGE,
  TOOL_TIMEOUT_RANGE,
  type SearchLanguage,
  type SemanticProvider,
  type ToolProfileName,
  type VaultMcpSettings,
} from "./settings";
import { statusDescription, type ServerState } from "./status";
import { autoCommits, type ObsidianGitInfo } from "./obsidian-git";
import { DEFAULT_RUNTIME_URL, RUNTIME_BYTES } from "../common/builtin-runtime";

/** What the settings tab needs from the plugin. */
export interface SettingsHost extends Plugin {
  settings: VaultMcpSettings;
  saveSettings(): Promise<void>;
  /** Saves, then restarts the server so options read at start (port, folders, write mode) apply. */
  applyAndRestart(): Promise<void>;
  /** Restarts a little later (for text fields that change on every keystroke). */
  restartSoon(): void;
  serverState(): ServerState;
  bridgePath(): string | null;
  serverUrl(): string;
  /** Applies "Ask before destructive changes" to the running server. */
  applyConfirmations(): void;
  copyToClipboard(text: string, what: string): Promise<void>;
  /** Whether the running server found a git repository (null while stopped). */
  gitBacked(): boolean | null;
  /** The Obsidian Git plugin's state, so our commits and its commits do not both happen unasked. */
  obsidianGit(): Promise<ObsidianGitInfo>;
}

// Lint warns (prefer-setting-definitions; its disabling is not allowed) that this tab has no
// getSettingDefinitions(): that is Obsidian 1.13's declarative API, and our minAppVersion is 1.7.2,
// which has only display(). Kept until the minimum version moves to 1.13.
export class VaultMcpSettingTab extends PluginSettingTab {
  constructor(
    app: App,
    private readonly host: SettingsHost,
  ) {
    super(app, host);
  }

  /**
   * Draws the tab again after a change that alters what it shows. `display` is deprecated from
   * Obsidian 1.13 (the declarative settings API), but our minAppVersion is 1.7.2, which has only it:
   * lint's no-deprecated warning on the call below stays (disabling it is not allowed).
   */
  private redraw(): void {
    this.display();
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
          this.redraw();
        }),
      );

    const portDesc = `The local port the server listens on (1024–65535). Clients connect to 127.0.0.1 only. When the default, ${DEFAULT_PORT}, is taken the server moves to the next free port; any other port is used exactly, or the server does not start.`;
    const portSetting = new Setting(containerEl)
      .setName("Port")
      .setDesc(portDesc);
    portSetting.addText((t) =>
      t
        .setPlaceholder("28765")
        .setValue(String(s.port))
        .onChange(async (v) => {
          const port = parsePort(v);
          portSetting.setDesc(
            port === null
              ? "Enter a whole number from 1024 to 65535."
              : portDesc,
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
          this.redraw();
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
            this.redraw();
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
      .setName("Ask before destructive changes")
      .setDesc(
        "In write mode, deleting, moving or replacing a file waits until you allow it in a dialog that shows what will change. Without an answer within 2 minutes the change is refused. Turn off to let assistants make these changes without asking.",
      )
      .addToggle((t) =>
        t.setValue(s.confirmDestructive).onChange(async (v) => {
          s.confirmDestructive = v;
          await this.host.saveSettings();
          this.host.applyConfirmations();
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

    this.displayTools(containerEl);
    this.displayLimits(containerEl);
    this.displaySemantic(containerEl);
    this.displayGit(containerEl);
    this.displayFiles(containerEl);

    new Setting(containerEl).setName("Connect a client").setHeading();
    containerEl.createEl("p", {
      text: "Paste one of these into your assistant's configuration. They contain your access token: keep them private.",
      cls: "setting-item-description",
    });

    const url = this.host.serverUrl();
    const vaultName = this.app.vault.getName();
    const opts = { bridgePath: this.host.bridgePath() };
    const shown = clientConfigs(url, maskToken(s.token), vaultName, opts);
    for (const config of clientConfigs(url, s.token, vaultName, opts)) {
      const display = shown.find((c) => c.id === config.id)?.text ?? "";
      const setting = new Setting(containerEl)
        .setName(config.label)
        .addButton((b) => b.setButtonText("Copy").onClick(() => this.host.copyToClipboard(config.text, config.label)));
      setting.descEl.createEl("pre", { text: display, cls: "vault-mcp-client-config" });
    }
  }

  private displayTools(containerEl: HTMLElement): void {
    const s = this.host.settings;
    new Setting(containerEl).setName("Tools").setHeading();
    new Setting(containerEl)
      .setName("Tool set")
      .setDesc(
        "Which tools assistants see. Fewer tools leave more of the assistant's context for your notes. Tools that change the vault appear only in write mode.",
      )
      .addDropdown((d) =>
        d
          .addOptions({ full: "All tools", core: "Core tools", custom: "Custom" })
          .setValue(s.toolProfile)
          .onChange(async (v) => {
            const next = v as ToolProfileName;
            if (next === "custom" && s.enabledTools.length === 0) {
              // Start from what was offered until now.
              s.enabledTools = allTools.map((t) => t.name).filter((n) => s.toolProfile === "full" || CORE_TOOLS.includes(n));
            }
            s.toolProfile = next;
            await this.host.applyAndRestart();
            this.redraw();
          }),
      );
    if (s.toolProfile !== "custom") return;
    for (const tool of allTools) {
      const notes = [tool.name];
      if (tool.access !== "read") notes.push("changes the vault; write mode only");
      new Setting(containerEl)
        .setName(tool.title)
        .setDesc(notes.join(" · "))
        .addToggle((t) =>
          t.setValue(s.enabledTools.includes(tool.name)).onChange(async (on) => {
            const others = s.enabledTools.filter((n) => n !== tool.name);
            s.enabledTools = on ? [...others, tool.name] : others;
            await this.host.saveSettings();
            this.host.restartSoon();
          }),
        );
    }
  }

  private displayLimits(containerEl: HTMLElement): void {
    const s = this.host.settings;
    new Setting(containerEl).setName("Reading and search").setHeading();
    this.wholeNumberSetting(containerEl, "Largest note to read (KB)", "Longer notes are read a section at a time.", READ_KB_RANGE, "256", () => s.maxReadKB, (v) => (s.maxReadKB = v));
    this.wholeNumberSetting(
      containerEl,
      "Largest attachment to read (KB)",
      "Images, PDFs and other files up to this size can be read whole.",
      ATTACHMENT_KB_RANGE,
      "1024",
      () => s.maxAttachmentKB,
      (v) => (s.maxAttachmentKB = v),
    );
    this.wholeNumberSetting(
      containerEl,
      "Tool call time limit (seconds)",
      "A search, grep or other read that takes longer is stopped and answered with what it found so far, or a timeout error. Changes are never cut off.",
      TOOL_TIMEOUT_RANGE,
      "10",
      () => s.toolTimeoutSeconds,
      (v) => (s.toolTimeoutSeconds = v),
    );
    new Setting(containerEl)
      .setName("Search language")
      .setDesc("English matches word forms (plan, plans, planning). Choose exact words for notes in other languages. Changing it rebuilds the search index once.")
      .addDropdown((d) =>
        d
          .addOptions({ en: "English", none: "Exact words (any language)" })
          .setValue(s.searchLanguage)
          .onChange(async (v) => {
            s.searchLanguage = v as SearchLanguage;
            await this.host.applyAndRestart();
          }),
      );
  }

  private displayBuiltinModel(containerEl: HTMLElement): void {
    const s = this.host.settings;
    const text = (name: string, desc: string, placeholder: string, get: () => string, set: (v: string) => void) =>
      new Setting(containerEl)
        .setName(name)
        .setDesc(desc)
        .addText((t) =>
          t
            .setPlaceholder(placeholder)
            .setValue(get())
            .onChange(async (v) => {
              set(v.trim());
              await this.host.saveSettings();
              this.host.restartSoon();
            }),
        );
    text(
      "Model folder",
      "The full path of a folder holding a sentence-embedding model in the usual layout: config.json, tokenizer.json and onnx/model.onnx (for example a copy of Xenova/multilingual-e5-small).",
      "/path/to/multilingual-e5-small",
      () => s.embeddingsModelDir,
      (v) => (s.embeddingsModelDir = v),
    );
    text("Runtime download URL", "Where the runtime is fetched from: jsDelivr's npm files, or a mirror of the same paths. Every file is checked against a pinned checksum.", DEFAULT_RUNTIME_URL, () => s.embeddingsRuntimeUrl, (v) => (s.embeddingsRuntimeUrl = parseHttpUrl(v)));
    containerEl.createEl("p", {
      text: `The model runs in a process of its own, on this computer: nothing leaves it. Its runtime (transformers.js and onnxruntime-web, ${Math.round(RUNTIME_BYTES / 1024 / 1024)} MB) is downloaded once into the plugin's folder when embedding first starts.`,
      cls: "setting-item-description",
    });
  }

  private displayFiles(containerEl: HTMLElement): void {
    const s = this.host.settings;
    new Setting(containerEl).setName("Files in and out").setHeading();
    this.wholeNumberSetting(containerEl, "Transfer link lifetime (minutes)", "How long a one-time download or upload link works (it works once either way).", TRANSFER_TTL_RANGE, "10", () => s.transferTtlMinutes, (v) => (s.transferTtlMinutes = v));
    this.wholeNumberSetting(containerEl, "Largest upload (MB)", "Uploads through an upload link above this size are refused; nothing is written.", TRANSFER_MB_RANGE, "50", () => s.uploadMaxMB, (v) => (s.uploadMaxMB = v));
    this.wholeNumberSetting(containerEl, "Largest fetch (MB)", "Downloads by fetch above this size are stopped; nothing is written.", TRANSFER_MB_RANGE, "20", () => s.fetchMaxMB, (v) => (s.fetchMaxMB = v));
    new Setting(containerEl)
      .setName("Fetch: allowed hosts")
      .setDesc("One host (or host:port) per line that fetch may reach although it is on your own network (a network drive, a local wiki). Everything private is refused otherwise. Headless: --fetch-allow-host.")
      .addTextArea((t) =>
        t
          .setPlaceholder("192.168.1.20:8080")
          .setValue(s.fetchAllowHosts.join("\n"))
          .onChange(async (v) => {
            s.fetchAllowHosts = parseHostList(v);
            await this.host.saveSettings();
            this.host.restartSoon();
          }),
      );
    new Setting(containerEl)
      .setName("Fetch: content types")
      .setDesc("One per line; type/* allows a whole family. Other types are refused.")
      .addTextArea((t) =>
        t.setValue(s.fetchContentTypes.join("\n")).onChange(async (v) => {
          s.fetchContentTypes = parseContentTypes(v);
          await this.host.saveSettings();
          this.host.restartSoon();
        }),
      );
  }

  private displayGit(containerEl: HTMLElement): void {
    const s = this.host.settings;
    new Setting(containerEl).setName("Git").setHeading();
    const backed = this.host.gitBacked();
    new Setting(containerEl)
      .setName("Git tools")
      .setDesc(
        `When the vault is in a git repository, assistants can read its history (get_history, get_diff, get_recent_changes) and, in write mode, sync it (git_sync). Needs the git program. ${
          backed === null ? "" : backed ? "This vault is git-backed." : "This vault is not in a git repository (or git was not found)."
        }`,
      )
      .addToggle((t) =>
        t.setValue(s.gitEnabled).onChange(async (v) => {
          s.gitEnabled = v;
          await this.host.applyAndRestart();
          this.redraw();
        }),
      );
    if (!s.gitEnabled) return;
    const commit = new Setting(containerEl)
      .setName("Commit changes made through the server")
      .setDesc("Each change an assistant makes becomes its own commit, holding only the files it touched (your other uncommitted work stays uncommitted). Needs write mode.")
      .addToggle((t) =>
        t.setValue(s.gitCommit).onChange(async (v) => {
          s.gitCommit = v;
          await this.host.applyAndRestart();
          this.redraw();
        }),
      );
    // Obsidian Git committing by itself: say so, and leave the committing to it unless the owner insists.
    void this.host.obsidianGit().then((info) => {
      if (!autoCommits(info)) return;
      const when = info.autoCommitMinutes > 0 ? `every ${info.autoCommitMinutes} minute${info.autoCommitMinutes === 1 ? "" : "s"}` : "after every change";
      commit.descEl.createDiv({
        text: `Obsidian Git is enabled and commits ${when}: leave this off and let it do the committing. If both are on, neither fights over the repository's lock (ours waits and retries).`,
        cls: "mod-warning",
      });
    });
    if (s.gitCommit) {
      new Setting(containerEl)
        .setName("Push after committing")
        .setDesc("Pushes each of those commits to the branch's remote. A failed push is shown in the status bar and in the assistant's result; the sync tool pulls and pushes again.")
        .addToggle((t) =>
          t.setValue(s.gitPush).onChange(async (v) => {
            s.gitPush = v;
            await this.host.applyAndRestart();
          }),
        );
      new Setting(containerEl)
        .setName("Run the repository's hooks")
        .setDesc("Off: our commits skip the repository's hooks (pre-commit and the rest), which could run any program. Turn on only for hooks you trust.")
        .addToggle((t) =>
          t.setValue(s.gitHooks).onChange(async (v) => {
            s.gitHooks = v;
            await this.host.applyAndRestart();
          }),
        );
    }
    new Setting(containerEl)
      .setName("Git program")
      .setDesc("Leave empty to use the Git on your search path (or Obsidian Git's setting). On macOS, Obsidian may not see a Git installed by a package manager: give the program's full path.")
      .addText((t) =>
        t
          .setValue(s.gitProgram)
          .onChange(async (v) => {
            s.gitProgram = v.trim();
            await this.host.saveSettings();
            this.host.restartSoon();
          }),
      );
  }

  private displaySemantic(containerEl: HTMLElement): void {
    const s = this.host.settings;
    new Setting(containerEl).setName("Semantic search").setHeading();
    new Setting(containerEl)
      .setName("Embedding provider")
      .setDesc(
        "Lets assistants search by meaning, find similar notes and get link suggestions. Ollama runs on your computer: nothing leaves it. An OpenAI-compatible endpoint (a local server, or OpenAI) receives the text of your notes and of semantic queries.",
      )
      .addDropdown((d) =>
        d
          .addOptions({ off: "Off", builtin: "Built-in model (on this computer)", ollama: "Ollama (local)", openai: "OpenAI-compatible endpoint" })
          .setValue(s.semanticProvider)
          .onChange(async (v) => {
            s.semanticProvider = v as SemanticProvider;
            await this.host.applyAndRestart();
            this.redraw();
          }),
      );
    if (s.semanticProvider === "off") return;
    if (s.semanticProvider === "builtin") {
      this.displayBuiltinModel(containerEl);
      return;
    }
    const d = REMOTE_DEFAULTS[s.semanticProvider];
    const text = (name: string, desc: string, placeholder: string, get: () => string, set: (v: string) => void, secret = false) =>
      new Setting(containerEl)
        .setName(name)
        .setDesc(desc)
        .addText((t) => {
          if (secret) t.inputEl.type = "password";
          t.setPlaceholder(placeholder)
            .setValue(get())
            .onChange(async (v) => {
              set(v.trim());
              await this.host.saveSettings();
              this.host.restartSoon();
            });
        });
    text("Provider URL", s.semanticProvider === "ollama" ? "Where Ollama listens." : "The endpoint's base URL, up to /v1.", d.url, () => s.embeddingsUrl, (v) => (s.embeddingsUrl = parseHttpUrl(v)));
    text(
      "Model",
      s.semanticProvider === "ollama" ? "An embedding model you have pulled (ollama pull …); for notes in Chinese, Japanese or Korean a multilingual one such as bge-m3." : "The endpoint's embedding model.",
      d.model,
      () => s.embeddingsModel,
      (v) => (s.embeddingsModel = v),
    );
    if (s.semanticProvider === "openai") text("API key", "Kept in this plugin's data; never logged or shown to assistants. Leave empty for local servers.", "", () => s.embeddingsApiKey, (v) => (s.embeddingsApiKey = v), true);
    containerEl.createEl("p", {
      text: "Changing the provider or the model embeds every note again, once, in the background; the status bar shows the progress.",
      cls: "setting-item-description",
    });
  }

  private wholeNumberSetting(
    containerEl: HTMLElement,
    name: string,
    desc: string,
    range: { min: number; max: number },
    placeholder: string,
    get: () => number,
    set: (v: number) => void,
  ): void {
    const setting = new Setting(containerEl).setName(name).setDesc(desc);
    setting.addText((t) =>
      t
        .setPlaceholder(placeholder)
        .setValue(String(get()))
        .onChange(async (v) => {
          const kb = parseKB(v, range);
          setting.setDesc(kb === null ? `Enter a whole number from ${range.min} to ${range.max}.` : desc);
          if (kb === null || kb === get()) return;
          set(kb);
          await this.host.saveSettings();
          this.host.restartSoon();
        }),
    );
  }
}
