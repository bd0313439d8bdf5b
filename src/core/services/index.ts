import { createGraphService, type GraphService } from "../graph";
import { createLookupService, type LookupService } from "../lookup";
import { createReadService, type ReadService } from "../read";
import { DEFAULT_ATTACHMENT_CAP_BYTES, DEFAULT_NOTE_CAP_BYTES } from "../read/format";
import { createWriteService, type Confirmer, type WriteService } from "../write";

import { AccessPolicy, type PolicyOptions } from "../policy";
import { createSearchService, DEFAULT_SEARCH_OPTIONS, type SearchLanguage, type SearchOptions, type SearchService } from "../search";
import type { Embedder } from "../search/vector/embedder";
import { SemanticService, type SemanticOptions } from "../search/vector/semantic-service";
import type { StateStore } from "../state";
import type { WorkspacePort } from "../workspace";
import type { VaultPort } from "../vault";
import { VaultService, type ReadLimits } from "./vault-service";
import { GitService, type GitDetection, type GitOptions } from "../git/service";
import { DEFAULT_TRANSFER_OPTIONS, TransferLinks, type TransferOptions } from "../transfer/links";
import { DEFAULT_FETCH_OPTIONS, FetchService, type FetchOptions, type NetPort } from "../fetch/fetch-service";

export type HostKind = "obsidian" | "node";

export interface CoreOptions {
  host: HostKind;
  writeMode: boolean;
  hiddenFolders?: readonly string[];
  protectedFolders?: readonly string[];
  /** Where services keep state (search index, activity log). */
  stateStore: StateStore;
  /** sql.js WASM bytes: the search index reads a file with sql.js only when its own reader declines it. */
  sqlWasm: Uint8Array;
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /** Search index settings (size limit, stemming language, slices). */
  search?: Partial<SearchOptions>;
  /** Semantic search: the embedding provider (absent: semantic search is off) and its index's settings. */
  embedder?: Embedder;
  semantic?: Partial<SemanticOptions>;
  /** Size caps of read. */
  readLimits?: Partial<ReadLimits>;
  /** Asks the owner before delete, rename and overwrite (Obsidian: a modal); default: approve. */
  confirmer?: Confirmer;
  /** The live editor (Obsidian only): active note, open notes, open a note. */
  workspace?: WorkspacePort;
  /** What `detectGitRepo` found (absent: git features off), and the owner's commit settings. */
  git?: { detection: GitDetection; options: GitOptions };
  /** Transfer links: lifetime and upload size cap. */
  transfer?: Partial<TransferOptions>;
  /** The network for `fetch` (absent: no fetch tool), and its limits and allow-list. */
  net?: NetPort;
  fetch?: Partial<FetchOptions>;
}

/**
 * Everything the MCP tools may use. Built once per running server by `createCoreServices`;
 * each feature (search, graph, writes…) adds its service here.
 */
export interface CoreServices {
  readonly host: HostKind;
  readonly writeMode: boolean;
  readonly port: VaultPort;
  readonly policy: AccessPolicy;
  readonly vault: VaultService;
  /** find_notes, grep, list_tags. */
  readonly lookup: LookupService;
  /** The keyword index (search, get_index_status, reindex). */
  readonly search: SearchService;
  /** The stemming language of search (snippets of semantic answers use it too). */
  readonly searchLanguage: SearchLanguage;
  /** The vector index (semantic and hybrid search, similar notes, link suggestions); null when semantic search is off. */
  readonly semantic: SemanticService | null;
  /** Changes (write mode) and the activity log (always: get_activity_log is a read tool). */
  readonly writer: WriteService;
  /** read_multiple, get_notes_info, get_outline, list_directory. */
  readonly reader: ReadService;
  /** The in-memory link graph: backlinks, outlinks, mentions, paths, context dossiers. */
  readonly graph: GraphService;
  /** Obsidian's workspace; absent headless. */
  readonly workspace?: WorkspacePort;
  /** History, diffs, commits per change and sync; null when the vault is not git-backed. */
  readonly git: GitService | null;
  /** Why the git features are off although they were asked for (e.g. the git program is missing). */
  readonly gitUnavailable?: string;
  /** One-time download and upload links on the server's port. */
  readonly transfer: TransferLinks;
  /** `fetch` into the vault; null without a network port. */
  readonly fetcher: FetchService | null;
  /** The owner's read-only folders (shown to clients so they do not try). */
  readonly protectedFolders: readonly string[];
  /** True while any index (search, names, graph) has work queued: answers may be stale. */
  pendingWork(): boolean;
  /** Search modes the running server can answer (`keyword` once the index exists). */
  searchModes(): string[];
  /** Starts background work (index build); returns without waiting for it. */
  start(): Promise<void>;
  /** Stops background work (indexers, watchers owned by services). */
  close(): Promise<void>;
}

export function createCoreServices(port: VaultPort, opts: CoreOptions): CoreServices {
  const policyOpts: PolicyOptions = {
    configDir: port.configDir,
    hiddenFolders: opts.hiddenFolders,
    protectedFolders: opts.protectedFolders,
    excludedFilters: () => port.excludedFilters(),
  };
  const policy = new AccessPolicy(policyOpts);
  const vault = new VaultService(port, policy, {
    maxNoteBytes: opts.readLimits?.maxNoteBytes ?? DEFAULT_NOTE_CAP_BYTES,
    maxAttachmentBytes: opts.readLimits?.maxAttachmentBytes ?? DEFAULT_ATTACHMENT_CAP_BYTES,
  });
  const lookup = createLookupService({ port, policy });
  const detection = opts.git?.detection;
  const git = detection?.kind === "repo" && opts.git ? new GitService(detection.git, detection.prefix, { port, policy, identity: detection.identity, store: opts.stateStore }, { log: opts.log, ...opts.git.options }) : null;
  const writer = createWriteService({ port, policy, stateStore: opts.stateStore, confirmer: opts.confirmer, log: opts.log, ...(git ? { committer: git } : {}) });
  // A sync that rebases our commits gives them new shas: the activity log follows.
  git?.onRewrite((map) => writer.remapCommits(map));
  git?.onPendingCommitted((tool, path, sha) => writer.commitMade(tool, path, sha));
  const reader = createReadService({ port, policy, vault, noteCapBytes: () => vault.limits.maxNoteBytes });
  const search = createSearchService({ port, policy, store: opts.stateStore, sqlWasm: opts.sqlWasm, log: opts.log, options: opts.search });
  const graph = createGraphService({ port, policy, search });
  const semantic = opts.embedder
    ? new SemanticService({
        port,
        policy,
        store: opts.stateStore,
        embedder: opts.embedder,
        log: opts.log,
        // Both engines cut notes the same way: hybrid search fuses their rankings chunk by chunk.
        options: {
          ...(opts.search?.chunkWords !== undefined ? { chunkWords: opts.search.chunkWords } : {}),
          ...(opts.search?.maxNoteBytes !== undefined ? { maxNoteBytes: opts.search.maxNoteBytes } : {}),
          ...opts.semantic,
        },
      })
    : null;
  return {
    host: opts.host,
    writeMode: opts.writeMode,
    port,
    policy,
    vault,
    lookup,
    search,
    searchLanguage: opts.search?.language ?? DEFAULT_SEARCH_OPTIONS.language,
    semantic,
    writer,
    reader,
    graph,
    workspace: opts.workspace,
    git,
    transfer: new TransferLinks({ port, policy, writer }, { ...DEFAULT_TRANSFER_OPTIONS, ...opts.transfer }),
    fetcher: opts.net ? new FetchService({ net: opts.net, writer }, { ...DEFAULT_FETCH_OPTIONS, ...opts.fetch }) : null,
    ...(detection?.kind === "none" && detection.reason === "git_missing" ? { gitUnavailable: detection.message } : {}),
    protectedFolders: opts.protectedFolders ?? [],
    pendingWork: () => lookup.hasPendingWork() || search.hasPendingWork() || graph.hasPendingWork(),
    searchModes: () => [...(search.status().state === "failed" ? [] : ["keyword"]), ...(semantic ? ["semantic", "hybrid"] : [])],
    start: async () => {
      graph.start();
      git?.start();
      await search.start();
      await semantic?.start();
    },
    close: async () => {
      graph.close();
      git?.close();
      lookup.close();
      await Promise.all([search.close(), semantic?.close()]);
    },
  };
}
