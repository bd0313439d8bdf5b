import { FileSystemAdapter, Notice, normalizePath, TFolder, type App, type EventRef, type PluginManifest } from "obsidian";
import * as nodePath from "node:path";
import { catalogFiles, catalogModel, DEFAULT_BUILTIN_MODEL, DEFAULT_MODEL_HUB, modelFolderName } from "../../core/search/vector/model-catalog";
import { describeEmbeddings, shortEmbeddings } from "../../core/search/vector/semantic-service";
import { ModelDownloader } from "../common/model-download";
import wasm from "sql.js/dist/sql-wasm.wasm";
import type { CoreServices } from "../../core/services";
import type { IndexStatus } from "../../core/search";
import { knownPrefixes, type Embedder } from "../../core/search/vector/embedder";
import { RemoteEmbedder, REMOTE_DEFAULTS } from "../../core/search/vector/remote-embedder";
import type { EmbeddingsStatus } from "../../core/search/vector/semantic-service";
import { useHostTimers } from "../../core/timers";
import { ActivityLog, AutoApprove, type ActivityEntry, type Confirmer } from "../../core/write";
import { DEFAULT_PORT_FALLBACK, PortInUseError, startRuntime, type LogLevel, type Runtime } from "../common/runtime";
import { ObsidianVault } from "./adapter";
import { createGitFiles } from "../common/git-files";
import { createGitRunner } from "../common/git-process";
import { createNodeNet } from "../common/net";
import { pluginBuiltinEmbedder } from "../common/builtin-runtime";
import { PLUGIN_GITIGNORE } from "../common/state-gitignore";
import { removeFolderLeftovers, removeStateLeftovers } from "../common/leftovers";
import { acquireServerLock, ServerLockedError, type ServerLock } from "../common/server-lock";
import embedWorkerSource from "virtual:embed-worker-source";
import gitHelperSource from "virtual:git-helper-source";
import { obsidianGitInfo } from "./obsidian-git";
import { installBridge } from "./bridge-file";
import { ModalConfirmer } from "./confirm";
import { obsidianHttp } from "./http";
import { DEFAULT_PORT, toolProfileOf, type VaultMcpSettings } from "./settings";
import { ObsidianStateStore } from "./state-store";
import type { IndexProgress, ServerState } from "./status";
import { mainWindowTimers } from "./timers";
import { ObsidianWorkspace } from "./workspace";

export interface ServerHost {
  app: App;
  manifest: PluginManifest;
  /** The current settings (read at every start, and the token at every request). */
  settings(): VaultMcpSettings;
  /** The plugin's `registerEvent`, so every vault event registration is removed on unload. */
  registerEvent(ref: EventRef): void;
  /** Called whenever the state changes (status bar, settings tab). */
  onState(state: ServerState): void;
}

/**
 * Starts and stops the MCP server for the plugin. Start/stop requests run one after another, so a
 * quick toggle or a restart during start-up never leaves two servers or a half-closed one.
 * Failures become a notice and the `error` state; nothing is thrown into the plugin lifecycle.
 */
export class ServerController {
  private runtime: (Runtime & { services: CoreServices }) | null = null;
  private vault: ObsidianVault | null = null;
  private stopProgress: (() => void) | null = null;
  /** The server lock in the plugin's data folder, while running (see hosts/common/server-lock.ts). */
  private lock: ServerLock | null = null;
  private queue: Promise<void> = Promise.resolve();
  private current: ServerState = { kind: "stopped" };
  /** The last push failure of a commit made through the server (cleared by a successful push). */
  private pushError: string | undefined;
  /** Bytes of the built-in model's runtime downloaded so far, per file, while it downloads. */
  private readonly downloaded = new Map<string, { done: number; total: number }>();
  /** Embeddings' state in embeddings_status's words, while not ready. */
  private embeddings: { text: string; description: string; state: string } | undefined;

  constructor(private readonly host: ServerHost) {}

  get state(): ServerState {
    return this.current;
  }

  /** The server's URL when running, otherwise the URL it will have on the configured port. */
  get url(): string {
    return this.runtime?.url ?? `http://127.0.0.1:${this.host.settings().port}/mcp`;
  }

  /** The plugin's data folder, where the server keeps its index and log. */
  get dataDir(): string {
    const { app, manifest } = this.host;
    return normalizePath(manifest.dir ?? `${app.vault.configDir}/plugins/${manifest.id}`);
  }

  /** Absolute path of `bridge.js` in the plugin's folder (for Claude Desktop), once written. */
  bridgePath: string | null = null;

  /** The running server's core services (null when stopped). */
  get services(): CoreServices | null {
    return this.runtime?.services ?? null;
  }

  /**
   * The latest changes made through the server, newest first. While stopped, read from the log file
   * (the owner may see entries about folders hidden from assistants).
   */
  async activity(limit: number): Promise<ActivityEntry[]> {
    if (this.runtime) return this.runtime.services.writer.activity(limit);
    return new ActivityLog(new ObsidianStateStore(this.host.app.vault.adapter, this.dataDir)).recent(limit);
  }

  /** Applies "Ask before destructive changes" to the running server at once (no restart). */
  updateConfirmer(): void {
    if (this.runtime) this.runtime.services.writer.confirmer = this.confirmer();
  }

  private confirmer(): Confirmer {
    return this.host.settings().confirmDestructive ? new ModalConfirmer(this.host.app) : new AutoApprove();
  }

  start(): Promise<void> {
    return this.enqueue(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => {});
    return run;
  }

  private setState(state: ServerState): void {
    this.current = state;
    this.host.onState(state);
  }

  /**
   * The built-in model (desktop, a vault on disk, a model folder chosen): its worker file is written
   * beside the plugin and its runtime fetched into the plugin's folder when embedding first starts.
   */
  private builtinEmbedder(settings: VaultMcpSettings, onDisk: boolean): Embedder | undefined {
    const { app } = this.host;
    const adapter = app.vault.adapter;
    const own = settings.builtinModel === "folder";
    if (!onDisk || !(adapter instanceof FileSystemAdapter) || (own && !settings.embeddingsModelDir) || !embedWorkerSource) return undefined;
    const pluginDir = adapter.getFullPath(this.dataDir);
    // A model of the list: downloaded on first use into the plugin's folder (models/), each file checked before use.
    const listed = own ? undefined : (catalogModel(settings.builtinModel) ?? catalogModel(DEFAULT_BUILTIN_MODEL)!);
    const modelDir = listed ? nodePath.join(pluginDir, "models", modelFolderName(listed)) : settings.embeddingsModelDir;
    return pluginBuiltinEmbedder({
      pluginDir,
      modelDir,
      ...(listed
        ? {
            model: listed.id,
            dtype: listed.dtype,
            download: new ModelDownloader({ files: catalogFiles(listed, settings.embeddingsHubUrl || DEFAULT_MODEL_HUB), dir: modelDir, approxBytes: listed.approxBytes }),
          }
        : {}),
      runtimeUrl: settings.embeddingsRuntimeUrl,
      writeWorker: async () => {
        await this.writeBeside("embed-worker.mjs", embedWorkerSource);
      },
      onProgress: (p) => {
        this.downloaded.set(p.file, { done: p.done, total: p.total });
        this.refresh();
      },
      onSettled: () => {
        this.downloaded.clear();
        this.refresh();
      },
    });
  }

  /** Writes a file the plugin carries inside main.js into its folder (when it differs); returns its absolute path. */
  private async writeBeside(name: string, source: string): Promise<string | undefined> {
    const adapter = this.host.app.vault.adapter;
    if (!source || !(adapter instanceof FileSystemAdapter)) return undefined;
    const path = normalizePath(`${this.dataDir}/${name}`);
    const current = (await adapter.exists(path)) ? await adapter.read(path) : null;
    if (current !== source) {
      if (!(await adapter.exists(this.dataDir))) await adapter.mkdir(this.dataDir);
      await adapter.write(path, source);
    }
    return adapter.getFullPath(path);
  }

  private async doStart(): Promise<void> {
    if (this.runtime) return;
    const settings = this.host.settings();
    if (!settings.enabled) {
      this.setState({ kind: "stopped" });
      return;
    }
    this.setState({ kind: "starting" });
    const { app } = this.host;
    useHostTimers(mainWindowTimers(app));
    const basePath = app.vault.adapter instanceof FileSystemAdapter ? app.vault.adapter.getBasePath() : null;
    // One server per vault: a headless server on this vault (or this plugin in another Obsidian
    // window on it) holds the lock in this same folder.
    if (basePath && app.vault.adapter instanceof FileSystemAdapter) {
      const dir = app.vault.adapter.getFullPath(this.dataDir);
      try {
        this.lock = acquireServerLock(dir, { host: "obsidian" });
      } catch (e) {
        if (e instanceof ServerLockedError) {
          const message = `Vault MCP did not start its server: ${e.message}`;
          new Notice(message, 15000);
          this.setState({ kind: "error", message });
          return;
        }
        console.warn("[vault-mcp] could not take the server lock", e);
      }
      // Nothing else writes here now: temp files of an interrupted save are leftovers.
      removeStateLeftovers(dir);
    }
    const vault = new ObsidianVault(app, (ref) => this.host.registerEvent(ref));
    // Our own git program setting, else Obsidian Git's (people who set one there need it here too).
    const gitProgram = settings.gitProgram || (settings.gitEnabled && basePath ? (await obsidianGitInfo(app)).gitPath : "");
    // In a vault kept in git, the plugin folder's caches (index, runtime, helper files) stay out of commits.
    if (basePath) await this.writeBeside(".gitignore", PLUGIN_GITIGNORE).catch(() => undefined);
    // Git starts from a small helper process: forking Obsidian itself costs in proportion to its memory.
    const gitHelper = settings.gitEnabled && basePath ? await this.writeBeside("git-helper.js", gitHelperSource).catch(() => undefined) : undefined;
    try {
      this.runtime = await startRuntime({
        port: vault,
        host: "obsidian",
        listenPort: settings.port,
        // The default port moves to the next free one (several vaults open at once); a port the owner
        // chose is used exactly, or the server does not start (a client set up for it must never
        // reach another vault's server).
        portFallback: settings.port === DEFAULT_PORT ? DEFAULT_PORT_FALLBACK : 0,
        token: () => this.host.settings().token,
        allowedOrigins: settings.allowedOrigins,
        writeMode: settings.writeMode,
        hiddenFolders: settings.hiddenFolders,
        protectedFolders: settings.protectedFolders,
        stateStore: new ObsidianStateStore(app.vault.adapter, this.dataDir),
        sqlWasm: wasm,
        version: this.host.manifest.version,
        log,
        tools: toolProfileOf(settings),
        readLimits: { maxNoteBytes: settings.maxReadKB * 1024, maxAttachmentBytes: settings.maxAttachmentKB * 1024 },
        search: { language: settings.searchLanguage },
        toolTimeoutMs: settings.toolTimeoutSeconds * 1000,
        confirmer: this.confirmer(),
        workspace: new ObsidianWorkspace(app),
        embedder: settings.semanticProvider === "builtin" ? this.builtinEmbedder(settings, basePath !== null) : embedderOf(settings),
        ...(settings.gitEnabled && basePath ? { gitRunner: createGitRunner({ cwd: basePath, program: gitProgram, allowHooks: settings.gitHooks, helperFile: gitHelper }) } : {}),
        gitOptions: {
          commitChanges: settings.writeMode && settings.gitCommit,
          pushAfterCommit: settings.writeMode && settings.gitCommit && settings.gitPush,
          ...(basePath ? { files: createGitFiles(basePath) } : {}),
        },
        transfer: { ttlMs: settings.transferTtlMinutes * 60_000, maxUploadBytes: settings.uploadMaxMB * 1024 * 1024 },
        // Node's http/https, not requestUrl: each redirect hop and the connected address must be checked (see net.ts).
        net: createNodeNet(),
        fetch: { allowHosts: settings.fetchAllowHosts, maxBytes: settings.fetchMaxMB * 1024 * 1024, contentTypes: settings.fetchContentTypes },
      });
      this.vault = vault;
      this.lock?.setPort(this.runtime.listenPort);
      // A headless server on this vault was killed (its lock was left): a write it had under way may
      // have left a temp file beside a note. Obsidian lists no dot-files, so they are looked for here,
      // in the background, one folder at a time.
      if (app.vault.adapter instanceof FileSystemAdapter && this.lock?.tookOver?.host === "node") void removeNoteLeftovers(app, app.vault.adapter);
      try {
        this.bridgePath = await installBridge(app, this.dataDir);
      } catch (e) {
        console.error("[vault-mcp] could not write bridge.js for stdio clients", e);
      }
      const { search, semantic, git } = this.runtime.services;
      this.showListening(search.status());
      const stopSearch = search.onProgress((status) => this.showListening(status));
      const stopSemantic = semantic?.onProgress((status) => this.showEmbedding(status));
      // A failed push shows in the status bar until a push succeeds.
      const stopGit = git?.onEvent((e) => {
        if (e.committed !== undefined) return;
        this.pushError = e.pushError;
        if (e.pushError) new Notice(`Vault MCP: a commit was not pushed: ${e.pushError}`, 8000);
        this.refresh();
      });
      this.stopProgress = () => {
        stopSearch();
        stopSemantic?.();
        stopGit?.();
      };
      if (this.runtime.listenPort !== settings.port) {
        // Another program (often another vault's server) holds the port; the runtime took the next free one.
        new Notice(
          `Vault MCP: port ${settings.port} was in use, so the server listens on ${this.runtime.listenPort}. Copy the client configuration again, or choose another port in the settings.`,
          10000,
        );
      }
    } catch (e) {
      await vault.close();
      this.lock?.release();
      this.lock = null;
      const message = startErrorMessage(e, settings.port);
      if (!isPortInUse(e)) console.error("[vault-mcp] the server did not start", e);
      new Notice(message, 10000);
      this.setState({ kind: "error", message });
    }
  }

  /** "MCP: indexing 1234/10000" while the index is first built, then "MCP: listening on :PORT". */
  private showListening(index: IndexStatus): void {
    const indexing = index.state === "building" ? { indexed: index.documents_indexed, total: index.documents_total } : undefined;
    this.showProgress({ indexing, embedding: this.current.kind === "listening" ? this.current.embedding : undefined });
  }

  /** "MCP: embedding 120/31000", "MCP: downloading the model 12/135 MB", "MCP: embeddings unavailable": embeddings_status's words. */
  private showEmbedding(status: EmbeddingsStatus): void {
    const embedding = status.state === "building" || status.state === "unavailable" ? { indexed: status.chunks_embedded, total: status.chunks_total } : undefined;
    this.embeddings = status.state === "ready" || status.state === "loading" ? undefined : { text: shortEmbeddings(status), description: describeEmbeddings(status), state: status.state };
    this.showProgress({ indexing: this.current.kind === "listening" ? this.current.indexing : undefined, embedding });
  }

  /** Stops the built-in model's download under way (what came stays; it resumes when embedding is asked for again). */
  cancelModelDownload(): boolean {
    return this.runtime?.services.semantic?.cancelDownload() ?? false;
  }

  /** Resumes embedding after a cancelled download or a failure (as build_embeddings does). */
  resumeEmbeddings(): void {
    this.runtime?.services.semantic?.rebuild(false);
  }

  /** Shows the state again with the current push failure and download progress. */
  private refresh(): void {
    this.showProgress({ indexing: this.current.kind === "listening" ? this.current.indexing : undefined, embedding: this.current.kind === "listening" ? this.current.embedding : undefined });
  }

  private showProgress(p: { indexing?: IndexProgress; embedding?: IndexProgress }): void {
    const runtime = this.runtime;
    if (!runtime) return;
    const cur = this.current;
    const same = (a?: IndexProgress, b?: IndexProgress) => a?.indexed === b?.indexed && a?.total === b?.total;
    // While a file of the runtime is still coming: the bytes of the files being fetched.
    const files = [...this.downloaded.values()];
    const download = files.some((f) => f.done < f.total) ? { done: files.reduce((n, f) => n + f.done, 0), total: files.reduce((n, f) => n + f.total, 0) } : undefined;
    const emb = this.embeddings;
    if (
      cur.kind === "listening" &&
      cur.listenPort === runtime.listenPort &&
      same(cur.indexing, p.indexing) &&
      same(cur.embedding, p.embedding) &&
      cur.pushError === this.pushError &&
      cur.download?.done === download?.done &&
      cur.embeddings?.description === emb?.description
    )
      return;
    this.setState({
      kind: "listening",
      listenPort: runtime.listenPort,
      url: runtime.url,
      ...(p.indexing ? { indexing: p.indexing } : {}),
      ...(p.embedding ? { embedding: p.embedding } : {}),
      ...(this.pushError ? { pushError: this.pushError } : {}),
      ...(download ? { download } : {}),
      ...(emb ? { embeddings: emb } : {}),
    });
  }

  private async doStop(): Promise<void> {
    const runtime = this.runtime;
    const vault = this.vault;
    this.stopProgress?.();
    this.stopProgress = null;
    this.runtime = null;
    this.vault = null;
    this.pushError = undefined;
    try {
      await runtime?.close();
    } catch (e) {
      console.error("[vault-mcp] stopping the server failed", e);
    } finally {
      await vault?.close();
      this.lock?.release();
      this.lock = null;
    }
    this.setState({ kind: "stopped" });
  }
}

/** Removes our atomic writes' temp files (`.<name>.<hex>.vault-mcp.tmp`) from every folder of the vault. */
async function removeNoteLeftovers(app: App, adapter: FileSystemAdapter): Promise<void> {
  const dirs = app.vault.getAllLoadedFiles().filter((f): f is TFolder => f instanceof TFolder).map((f) => adapter.getFullPath(f.isRoot() ? "" : f.path));
  const removed = await removeFolderLeftovers(dirs);
  if (removed) log("warn", `removed ${removed} temp file${removed === 1 ? "" : "s"} left by an interrupted write of the headless server`);
}

function log(level: LogLevel, message: string): void {
  if (level === "error") console.error(`[vault-mcp] ${message}`);
  else if (level === "warn") console.warn(`[vault-mcp] ${message}`);
}

/** One clear sentence for the notice and the status. */
export function startErrorMessage(e: unknown, port: number): string {
  if (isPortInUse(e) && (e as PortInUseError).fallback === false) {
    return `Vault MCP could not start: port ${port}, chosen in Settings → Vault MCP, is already in use by another program or another vault's server. Choose another port there, or stop what holds it (only the default port, ${DEFAULT_PORT}, moves to the next free one).`;
  }
  if (isPortInUse(e)) {
    return `Vault MCP could not start: port ${port} and the ports after it are already in use by other programs or other vaults. Choose another port in Settings → Vault MCP.`;
  }
  const detail = e instanceof Error ? e.message : String(e);
  return `Vault MCP could not start its server: ${detail}`;
}

function isPortInUse(e: unknown): boolean {
  return e instanceof PortInUseError || (e instanceof Error && e.name === "PortInUseError");
}

/** The embedding provider the settings name (none: semantic search is off). */
export function embedderOf(s: Pick<VaultMcpSettings, "semanticProvider" | "embeddingsUrl" | "embeddingsModel" | "embeddingsApiKey">): Embedder | undefined {
  if (s.semanticProvider === "off" || s.semanticProvider === "builtin") return undefined;
  const d = REMOTE_DEFAULTS[s.semanticProvider];
  const model = s.embeddingsModel || d.model;
  return new RemoteEmbedder({
    kind: s.semanticProvider,
    url: s.embeddingsUrl || d.url,
    model,
    prefixes: knownPrefixes(model),
    apiKey: s.semanticProvider === "openai" && s.embeddingsApiKey ? s.embeddingsApiKey : undefined,
    http: obsidianHttp,
  });
}
