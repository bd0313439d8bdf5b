import { Notice, PluginSettingTab, requireApiVersion, Setting, type App, type Plugin, type SettingDefinition, type SettingDefinitionItem } from "obsidian";
import { DEFAULT_MODEL_HUB, MODEL_CATALOG } from "../../core/search/vector/model-catalog";
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
import { mcpbFileName } from "../common/mcpb";

/** What the settings tab needs from the plugin. */
export interface SettingsHost extends Plugin {
  settings: VaultMcpSettings;
  saveSettings(): Promise<void>;
  /** Saves, then restarts the server so options read at start (port, folders, write mode) apply. */
  applyAndRestart(): Promise<void>;
  /** Restarts a little later (for text fields that change on every keystroke). */
  restartSoon(): void;
  serverState(): ServerState;
  /** Stops the built-in model's download under way (true when there was one). */
  cancelModelDownload(): boolean;
  /** Resumes embedding (a cancelled download, a failure). */
  resumeEmbeddings(): void;
  bridgePath(): string | null;
  serverUrl(): string;
  /** Applies "Ask before destructive changes" to the running server. */
  applyConfirmations(): void;
  copyToClipboard(text: string, what: string): Promise<void>;
  /** Writes the MCP Bundle for Claude Desktop into the plugin's folder; its absolute path, or null. */
  saveBundle(): Promise<string | null>;
  /** Whether the running server found a git repository (null while stopped). */
  gitBacked(): boolean | null;
  /** The Obsidian Git plugin's state, so our commits and its commits do not both happen unasked. */
  obsidianGit(): Promise<ObsidianGitInfo>;
}

/**
 * One row of the tab: its name and description (what Obsidian's settings search finds) and what it
 * draws into its `Setting` (controls, a description that depends on state).
 */
interface Row {
  name: string;
  desc?: string;
  /** Evaluated on every render: false hides the row (and, on 1.13+, leaves it out of the search). */
  visible?: () => boolean;
  /** Returns what it likes (a `Setting` chain is thenable, so `void` would make every chain a "promise"). */
  render?: (setting: Setting) => unknown;
}

interface Group {
  heading: string;
  rows: Row[];
}

/**
 * The settings, once, as rows in groups, drawn two ways: on Obsidian 1.13+ from
 * `getSettingDefinitions()` (the declarative settings API, which also puts them in the settings
 * search), and on older versions by `display()`, which draws the same rows itself. `display` stays
 * while minAppVersion is below 1.13.
 */
export class VaultMcpSettingTab extends PluginSettingTab {
  /** Set when Obsidian (< 1.13) drew the tab with display(): changes redraw it the same way. */
  private legacyShown = false;

  constructor(
    app: App,
    private readonly host: SettingsHost,
  ) {
    super(app, host);
  }

  override getSettingDefinitions(): SettingDefinitionItem[] {
    return this.groups().map((g) => ({ type: "group", heading: g.heading, items: g.rows.map((r) => definition(r)) }));
  }

  override display(): void {
    this.legacyShown = true;
    this.drawRows();
  }

  /** Obsidian before 1.13: every group's heading and visible rows, drawn into the tab. */
  private drawRows(): void {
    const { containerEl } = this;
    containerEl.empty();
    for (const group of this.groups()) {
      new Setting(containerEl).setName(group.heading).setHeading();
      for (const row of group.rows) {
        if (row.visible && !row.visible()) continue;
        drawRow(new Setting(containerEl), row);
      }
    }
  }

  /** Draws the tab again after a change that alters what it shows (visibility, descriptions). */
  private redraw(): void {
    if (requireApiVersion("1.13.0") && !this.legacyShown) this.update();
    else this.drawRows();
  }

  private groups(): Group[] {
    return [
      { heading: "Server", rows: this.serverRows() },
      { heading: "Access", rows: this.accessRows() },
      { heading: "Tools", rows: this.toolRows() },
      { heading: "Reading and search", rows: this.limitRows() },
      { heading: "Semantic search", rows: this.semanticRows() },
      { heading: "Git", rows: this.gitRows() },
      { heading: "Files in and out", rows: this.fileRows() },
      { heading: "Connect a client", rows: this.clientRows() },
    ];
  }

  private serverRows(): Row[] {
    const s = this.host.settings;
    const portDesc = `The local port the server listens on (1024–65535). Clients connect to 127.0.0.1 only. When the default, ${DEFAULT_PORT}, is taken the server moves to the next free port; any other port is used exactly, or the server does not start.`;
    return [
      {
        name: "Run the server",
        desc: "Whether the server runs; shows its state.",
        render: (setting) =>
          setting.setDesc(statusDescription(this.host.serverState())).addToggle((t) =>
            t.setValue(s.enabled).onChange(async (v) => {
              s.enabled = v;
              await this.host.applyAndRestart();
              this.redraw();
            }),
          ),
      },
      {
        name: "Port",
        desc: portDesc,
        render: (setting) =>
          setting.addText((t) =>
            t
              .setPlaceholder("28765")
              .setValue(String(s.port))
              .onChange(async (v) => {
                const port = parsePort(v);
                setting.setDesc(port === null ? "Enter a whole number from 1024 to 65535." : portDesc);
                if (port === null || port === s.port) return;
                s.port = port;
                await this.host.saveSettings();
                this.host.restartSoon();
              }),
          ),
      },
      {
        name: "Restart the server",
        desc: "Applies every change below at once.",
        render: (setting) =>
          setting.addButton((b) =>
            b.setButtonText("Restart").onClick(async () => {
              await this.host.applyAndRestart();
              this.redraw();
            }),
          ),
      },
    ];
  }

  private accessRows(): Row[] {
    const s = this.host.settings;
    return [
      {
        name: "Access token",
        desc: 'Clients send it as "Authorization: Bearer <token>".',
        render: (setting) =>
          setting
            .setDesc(`Clients send it as "Authorization: Bearer <token>". Current token: ${maskToken(s.token)}`)
            .addButton((b) => b.setButtonText("Copy").onClick(() => this.host.copyToClipboard(s.token, "Access token")))
            .addButton((b) =>
              b.setButtonText("Regenerate").onClick(async () => {
                s.token = generateToken();
                await this.host.saveSettings();
                new Notice("A new access token is in effect; update your clients' configuration.");
                this.redraw();
              }),
            ),
      },
      {
        name: "Write mode",
        desc: "Lets assistants create, edit, move and delete notes (deleted notes go to the trash). Turn it on only for assistants you trust; read-only is safer.",
        render: (setting) =>
          setting.addToggle((t) =>
            t.setValue(s.writeMode).onChange(async (v) => {
              s.writeMode = v;
              await this.host.applyAndRestart();
            }),
          ),
      },
      {
        name: "Ask before destructive changes",
        desc: "In write mode, deleting, moving or replacing a file waits until you allow it in a dialog that shows what will change. Without an answer within 2 minutes the change is refused. Turn off to let assistants make these changes without asking.",
        render: (setting) =>
          setting.addToggle((t) =>
            t.setValue(s.confirmDestructive).onChange(async (v) => {
              s.confirmDestructive = v;
              await this.host.saveSettings();
              this.host.applyConfirmations();
            }),
          ),
      },
      this.listRow("Hidden folders", "One folder per line. Assistants cannot see, search or change anything in them.", "Private", () => s.hiddenFolders, (v) => (s.hiddenFolders = parseFolderList(v))),
      this.listRow("Protected folders", "One folder per line. Assistants can read these folders but never change them, even in write mode.", "Templates", () => s.protectedFolders, (v) => (s.protectedFolders = parseFolderList(v))),
      this.listRow("Allowed origins", "One web origin per line, for browser-based clients only. Leave empty unless a client's documentation asks for it.", "https://example.com", () => s.allowedOrigins, (v) => (s.allowedOrigins = parseOriginList(v))),
    ];
  }

  /** A text area of one entry per line, applied at the next restart. */
  private listRow(name: string, desc: string, placeholder: string, get: () => string[], set: (v: string) => void): Row {
    return {
      name,
      desc,
      render: (setting) =>
        setting.addTextArea((t) =>
          t
            .setPlaceholder(placeholder)
            .setValue(get().join("\n"))
            .onChange(async (v) => {
              set(v);
              await this.host.saveSettings();
              this.host.restartSoon();
            }),
        ),
    };
  }

  private toolRows(): Row[] {
    const s = this.host.settings;
    const rows: Row[] = [
      {
        name: "Tool set",
        desc: "Which tools assistants see. Fewer tools leave more of the assistant's context for your notes. Tools that change the vault appear only in write mode.",
        render: (setting) =>
          setting.addDropdown((d) =>
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
          ),
      },
    ];
    for (const tool of allTools) {
      const notes = [tool.name];
      if (tool.access !== "read") notes.push("changes the vault; write mode only");
      rows.push({
        name: tool.title,
        desc: notes.join(" · "),
        visible: () => s.toolProfile === "custom",
        render: (setting) =>
          setting.addToggle((t) =>
            t.setValue(s.enabledTools.includes(tool.name)).onChange(async (on) => {
              const others = s.enabledTools.filter((n) => n !== tool.name);
              s.enabledTools = on ? [...others, tool.name] : others;
              await this.host.saveSettings();
              this.host.restartSoon();
            }),
          ),
      });
    }
    return rows;
  }

  private limitRows(): Row[] {
    const s = this.host.settings;
    return [
      this.wholeNumberRow("Largest note to read (KB)", "Longer notes are read a section at a time.", READ_KB_RANGE, "256", () => s.maxReadKB, (v) => (s.maxReadKB = v)),
      this.wholeNumberRow("Largest attachment to read (KB)", "Images, PDFs and other files up to this size can be read whole.", ATTACHMENT_KB_RANGE, "1024", () => s.maxAttachmentKB, (v) => (s.maxAttachmentKB = v)),
      this.wholeNumberRow(
        "Tool call time limit (seconds)",
        "A search, grep or other read that takes longer is stopped and answered with what it found so far, or a timeout error. Changes are never cut off.",
        TOOL_TIMEOUT_RANGE,
        "10",
        () => s.toolTimeoutSeconds,
        (v) => (s.toolTimeoutSeconds = v),
      ),
      {
        name: "Search language",
        desc: "English matches word forms (plan, plans, planning). Choose exact words for notes in other languages. Changing it rebuilds the search index once.",
        render: (setting) =>
          setting.addDropdown((d) =>
            d
              .addOptions({ en: "English", none: "Exact words (any language)" })
              .setValue(s.searchLanguage)
              .onChange(async (v) => {
                s.searchLanguage = v as SearchLanguage;
                await this.host.applyAndRestart();
              }),
          ),
      },
    ];
  }

  /** The running server's embeddings state (the built-in model's download, or why it is unavailable). */
  private embeddingsState() {
    const st = this.host.serverState();
    return st.kind === "listening" ? st.embeddings : undefined;
  }

  private semanticRows(): Row[] {
    const s = this.host.settings;
    const builtin = () => s.semanticProvider === "builtin";
    const remote = () => s.semanticProvider === "ollama" || s.semanticProvider === "openai";
    const text = (name: string, desc: string, visible: () => boolean, placeholder: () => string, get: () => string, set: (v: string) => void, secret = false): Row => ({
      name,
      desc,
      visible,
      render: (setting) =>
        setting.addText((t) => {
          if (secret) t.inputEl.type = "password";
          t.setPlaceholder(placeholder())
            .setValue(get())
            .onChange(async (v) => {
              set(v.trim());
              await this.host.saveSettings();
              this.host.restartSoon();
            });
        }),
    });
    const defaults = () => REMOTE_DEFAULTS[s.semanticProvider === "openai" ? "openai" : "ollama"];
    const again = " Changing the provider or the model embeds every note again, once, in the background; the status bar shows the progress.";
    return [
      {
        name: "Embedding provider",
        desc: "Lets assistants search by meaning, find similar notes and get link suggestions. Ollama runs on your computer: nothing leaves it. An OpenAI-compatible endpoint (a local server, or OpenAI) receives the text of your notes and of semantic queries.",
        render: (setting) =>
          setting.addDropdown((d) =>
            d
              .addOptions({ off: "Off", builtin: "Built-in model (on this computer)", ollama: "Ollama (local)", openai: "OpenAI-compatible endpoint" })
              .setValue(s.semanticProvider)
              .onChange(async (v) => {
                s.semanticProvider = v as SemanticProvider;
                await this.host.applyAndRestart();
                this.redraw();
              }),
          ),
      },
      {
        name: "Built-in model",
        desc: "Downloaded once from the Hugging Face hub into this plugin's folder when semantic search first needs it, each file checked (pinned size and SHA-256, or the hub's stated SHA-256) before it is used. The multilingual model reads about 100 languages; the English one is smaller and faster.",
        visible: builtin,
        render: (setting) =>
          setting.addDropdown((d) => {
            for (const m of MODEL_CATALOG) d.addOption(m.id, m.label);
            d.addOption("folder", "My own model folder");
            d.setValue(s.builtinModel).onChange(async (v) => {
              s.builtinModel = v;
              await this.host.applyAndRestart();
              this.redraw();
            });
          }),
      },
      {
        name: "Embeddings",
        visible: () => builtin() && this.embeddingsState() !== undefined,
        render: (setting) => {
          const emb = this.embeddingsState();
          if (!emb) return;
          setting.setDesc(emb.description);
          if (emb.state === "downloading") {
            setting.addButton((b) =>
              b.setButtonText("Cancel download").onClick(() => {
                this.host.cancelModelDownload();
                window.setTimeout(() => this.redraw(), 500);
              }),
            );
          } else if (emb.state === "unavailable") {
            setting.addButton((b) =>
              b.setButtonText("Try again").onClick(() => {
                this.host.resumeEmbeddings();
                window.setTimeout(() => this.redraw(), 500);
              }),
            );
          }
        },
      },
      text(
        "Model download URL",
        "Where a model of the list is downloaded from: the Hugging Face hub, or a mirror of its /<model>/resolve/main/<file> paths.",
        () => builtin() && s.builtinModel !== "folder",
        () => DEFAULT_MODEL_HUB,
        () => s.embeddingsHubUrl,
        (v) => (s.embeddingsHubUrl = parseHttpUrl(v)),
      ),
      text(
        "Model folder",
        "The full path of a folder holding a sentence-embedding model in the usual layout: config.json, tokenizer.json and onnx/model.onnx (for example a copy of Xenova/multilingual-e5-small).",
        () => builtin() && s.builtinModel === "folder",
        () => "/path/to/multilingual-e5-small",
        () => s.embeddingsModelDir,
        (v) => (s.embeddingsModelDir = v),
      ),
      text(
        "Runtime download URL",
        `Where the runtime is fetched from: jsDelivr's npm files, or a mirror of the same paths. Every file is checked against a pinned checksum. The model runs in a process of its own, on this computer: nothing leaves it. Its runtime (transformers.js and onnxruntime-web, ${Math.round(RUNTIME_BYTES / 1024 / 1024)} MB) is downloaded once into the plugin's folder when embedding first starts.`,
        builtin,
        () => DEFAULT_RUNTIME_URL,
        () => s.embeddingsRuntimeUrl,
        (v) => (s.embeddingsRuntimeUrl = parseHttpUrl(v)),
      ),
      text("Provider URL", "Where Ollama listens, or an OpenAI-compatible endpoint's base URL, up to /v1.", remote, () => defaults().url, () => s.embeddingsUrl, (v) => (s.embeddingsUrl = parseHttpUrl(v))),
      text(
        "Model",
        `For Ollama, an embedding model you have pulled (ollama pull …); for notes in Chinese, Japanese or Korean a multilingual one such as bge-m3. For an endpoint, its embedding model.${again}`,
        remote,
        () => defaults().model,
        () => s.embeddingsModel,
        (v) => (s.embeddingsModel = v),
      ),
      text("API key", "Kept in this plugin's data; never logged or shown to assistants. Leave empty for local servers.", () => s.semanticProvider === "openai", () => "", () => s.embeddingsApiKey, (v) => (s.embeddingsApiKey = v), true),
    ];
  }

  private fileRows(): Row[] {
    const s = this.host.settings;
    return [
      this.wholeNumberRow("Transfer link lifetime (minutes)", "How long a one-time download or upload link works (it works once either way).", TRANSFER_TTL_RANGE, "10", () => s.transferTtlMinutes, (v) => (s.transferTtlMinutes = v)),
      this.wholeNumberRow("Largest upload (MB)", "Uploads through an upload link above this size are refused; nothing is written.", TRANSFER_MB_RANGE, "50", () => s.uploadMaxMB, (v) => (s.uploadMaxMB = v)),
      this.wholeNumberRow("Largest fetch (MB)", "Downloads by fetch above this size are stopped; nothing is written.", TRANSFER_MB_RANGE, "20", () => s.fetchMaxMB, (v) => (s.fetchMaxMB = v)),
      this.listRow(
        "Fetch: allowed hosts",
        "One host (or host:port) per line that fetch may reach although it is on your own network (a network drive, a local wiki). Everything private is refused otherwise. Headless: --fetch-allow-host.",
        "192.168.1.20:8080",
        () => s.fetchAllowHosts,
        (v) => (s.fetchAllowHosts = parseHostList(v)),
      ),
      this.listRow("Fetch: content types", "One per line; type/* allows a whole family. Other types are refused.", "", () => s.fetchContentTypes, (v) => (s.fetchContentTypes = parseContentTypes(v))),
    ];
  }

  private gitRows(): Row[] {
    const s = this.host.settings;
    const toggle = (get: () => boolean, set: (v: boolean) => void, redraw: boolean) => (setting: Setting): unknown =>
      setting.addToggle((t) =>
        t.setValue(get()).onChange(async (v) => {
          set(v);
          await this.host.applyAndRestart();
          if (redraw) this.redraw();
        }),
      );
    const gitDesc = "When the vault is in a git repository, assistants can read its history (get_history, get_diff, get_recent_changes) and, in write mode, sync it (git_sync). Needs the git program.";
    return [
      {
        name: "Git tools",
        desc: gitDesc,
        render: (setting) => {
          const backed = this.host.gitBacked();
          setting.setDesc(`${gitDesc} ${backed === null ? "" : backed ? "This vault is git-backed." : "This vault is not in a git repository (or git was not found)."}`);
          toggle(() => s.gitEnabled, (v) => (s.gitEnabled = v), true)(setting);
        },
      },
      {
        name: "Commit changes made through the server",
        desc: "Each change an assistant makes becomes its own commit, holding only the files it touched (your other uncommitted work stays uncommitted). Needs write mode.",
        visible: () => s.gitEnabled,
        render: (setting) => {
          toggle(() => s.gitCommit, (v) => (s.gitCommit = v), true)(setting);
          // Obsidian Git committing by itself: say so, and leave the committing to it unless the owner insists.
          void this.host.obsidianGit().then((info) => {
            if (!autoCommits(info)) return;
            const when = info.autoCommitMinutes > 0 ? `every ${info.autoCommitMinutes} minute${info.autoCommitMinutes === 1 ? "" : "s"}` : "after every change";
            setting.descEl.createDiv({
              text: `Obsidian Git is enabled and commits ${when}: leave this off and let it do the committing. If both are on, neither fights over the repository's lock (ours waits and retries).`,
              cls: "mod-warning",
            });
          });
        },
      },
      {
        name: "Push after committing",
        desc: "Pushes each of those commits to the branch's remote. A failed push is shown in the status bar and in the assistant's result; the sync tool pulls and pushes again.",
        visible: () => s.gitEnabled && s.gitCommit,
        render: toggle(() => s.gitPush, (v) => (s.gitPush = v), false),
      },
      {
        name: "Run the repository's hooks",
        desc: "Off: our commits skip the repository's hooks (pre-commit and the rest), which could run any program. Turn on only for hooks you trust.",
        visible: () => s.gitEnabled && s.gitCommit,
        render: toggle(() => s.gitHooks, (v) => (s.gitHooks = v), false),
      },
      {
        name: "Git program",
        desc: "Leave empty to use the Git on your search path (or Obsidian Git's setting). On macOS, Obsidian may not see a Git installed by a package manager: give the program's full path.",
        visible: () => s.gitEnabled,
        render: (setting) =>
          setting.addText((t) =>
            t
              .setValue(s.gitProgram)
              .onChange(async (v) => {
                s.gitProgram = v.trim();
                await this.host.saveSettings();
                this.host.restartSoon();
              }),
          ),
      },
    ];
  }

  private clientRows(): Row[] {
    const s = this.host.settings;
    const rows: Row[] = [
      {
        name: "MCP Bundle for Claude Desktop (.mcpb)",
        desc: `One file to open instead of editing Claude Desktop's configuration: Claude Desktop installs it, asks for the server URL and the access token (Copy, under Access) and keeps the token as a secret. Save writes ${mcpbFileName()} into this plugin's folder and copies its path; every release on GitHub carries the same file.`,
        render: (setting) =>
          setting.addButton((b) =>
            b.setButtonText("Save .mcpb").onClick(async () => {
              const path = await this.host.saveBundle();
              if (path === null) {
                new Notice(`The bundle cannot be written here (the vault is not on a local disk): download ${mcpbFileName()} from the plugin's release page instead.`);
                return;
              }
              await this.host.copyToClipboard(path, "The bundle's path");
              new Notice(`Saved ${path}. Open it with Claude Desktop to install Vault MCP there.`);
            }),
          ),
      },
    ];
    // The ready-to-paste configurations: the running server's URL, and the bridge once written.
    const url = this.host.serverUrl();
    const vaultName = this.app.vault.getName();
    const opts = { bridgePath: this.host.bridgePath() };
    const shown = clientConfigs(url, maskToken(s.token), vaultName, opts);
    for (const config of clientConfigs(url, s.token, vaultName, opts)) {
      const display = shown.find((c) => c.id === config.id)?.text ?? "";
      rows.push({
        name: config.label,
        desc: "Paste this into the assistant's configuration. It holds your access token: keep it private.",
        render: (setting) => {
          setting.descEl.createEl("pre", { text: display, cls: "vault-mcp-client-config" });
          setting.addButton((b) => b.setButtonText("Copy").onClick(() => this.host.copyToClipboard(config.text, config.label)));
        },
      });
    }
    return rows;
  }

  private wholeNumberRow(name: string, desc: string, range: { min: number; max: number }, placeholder: string, get: () => number, set: (v: number) => void): Row {
    return {
      name,
      desc,
      render: (setting) =>
        setting.addText((t) =>
          t
            .setPlaceholder(placeholder)
            .setValue(String(get()))
            .onChange(async (v) => {
              const n = parseKB(v, range);
              setting.setDesc(n === null ? `Enter a whole number from ${range.min} to ${range.max}.` : desc);
              if (n === null || n === get()) return;
              set(n);
              await this.host.saveSettings();
              this.host.restartSoon();
            }),
        ),
    };
  }
}

/** Draws a row's name, description and controls into a `Setting` (either path). */
function drawRow(setting: Setting, row: Row): void {
  setting.setName(row.name);
  if (row.desc) setting.setDesc(row.desc);
  row.render?.(setting);
}

/** A row as a declarative definition: name and description for the search, the row drawn by `render`. */
function definition(row: Row): SettingDefinition {
  const base = { name: row.name, desc: row.desc, visible: row.visible };
  return row.render ? { ...base, render: (setting: Setting) => drawRow(setting, row) } : base;
}
