import { REMOTE_DEFAULTS } from "../../core/search/vector/remote-embedder";
import { DEFAULT_BUILTIN_MODEL, MODEL_CATALOG } from "../../core/search/vector/model-catalog";

export const VERSION = "0.1.0";
/** No well-known Obsidian plugin uses it (Local REST API: 27123/27124; others 3000/3001/22360/8080). */
export const DEFAULT_PORT = 28765;

export interface CliArgs {
  vault?: string;
  port?: number;
  token?: string;
  tokenFile?: string;
  write: boolean;
  stateDir?: string;
  configDir?: string;
  allowOrigins: string[];
  hidden: string[];
  protected: string[];
  verbose: boolean;
  help: boolean;
  /** Time limit of one read tool call, in ms (0 = none). */
  toolTimeoutMs?: number;
  /** Semantic search: the embedding provider (absent: off). */
  embeddings?: "ollama" | "openai" | "builtin";
  /** The built-in model's folder (config.json, tokenizer.json, onnx/model.onnx). */
  embeddingsModelDir?: string;
  embeddingsUrl?: string;
  embeddingsModel?: string;
  /** The environment variable holding the provider's API key (a key is never a command-line argument). */
  embeddingsKeyEnv?: string;
  /** Git-backed vaults: commit each change made through the server, push after each commit. */
  gitCommit: boolean;
  gitPush: boolean;
  /** Turn the git tools off even in a repository. */
  noGit: boolean;
  /** The git program (default: `git` on the PATH). */
  gitProgram?: string;
  /** Let the repository's hooks run on our commits. */
  gitHooks: boolean;
  /** Transfer links: minutes a link lives; largest upload in MB. */
  transferTtlMinutes?: number;
  uploadMaxMB?: number;
  /** fetch: hosts allowed even on a private address; largest download in MB. */
  fetchAllowHosts: string[];
  fetchMaxMB?: number;
  /** fetch: the content types it saves, instead of the default list (as the plugin's setting). */
  fetchContentTypes?: string[];
  /** The read caps, as the plugin's settings: the largest text a read returns, the largest attachment returned as base64 (KB). */
  maxReadKB?: number;
  maxAttachmentKB?: number;
  /** MCP sessions: minutes idle before one is closed (0 = never); most open at once. */
  sessionIdleMinutes?: number;
  maxSessions?: number;
}

/** Each provider's defaults when --embeddings-url / --embeddings-model are not given. */
export const EMBEDDING_DEFAULTS = REMOTE_DEFAULTS;

export function usage(): string {
  return `Usage: npm start -- [vault] [options]      (or: node dist/cli.js [vault] [options])

Serves an Obsidian vault (a folder of notes) over MCP on http://127.0.0.1:<port>/mcp.
With no vault, serves the bundled example vault.

Options:
  --port N            port on 127.0.0.1 (default ${DEFAULT_PORT})
  --token T           bearer token clients must send (default: generated once, kept in the state folder)
  --token-file F      read the token from a file
  --write             enable write tools (off by default)
  --state-dir D       where the index and logs live (default: the plugin's data folder when the vault
                      has an Obsidian config folder, else a per-vault folder in your cache directory)
  --config-dir NAME   the vault's Obsidian config folder name (default .obsidian)
  --allow-origin O    allow browser requests from this origin (repeatable; none by default)
  --hidden FOLDER     hide a folder from every tool (repeatable)
  --protected FOLDER  make a folder read-only (repeatable)
  --max-read-kb N     the largest text a read returns, a whole note or a section (default 256)
  --max-attachment-kb N  the largest attachment read returns as base64 (default 1024)
  --tool-timeout S    seconds one read tool call may take before it is answered with a timeout
                      error (default 10; 0 = no limit)
  --embeddings P      turn on semantic search with embedding provider P: ollama (a local Ollama)
                      or openai (any OpenAI-compatible /v1/embeddings: LM Studio, llama.cpp, OpenAI)
  --embeddings-url U  the provider's URL (default ${EMBEDDING_DEFAULTS.ollama.url} for ollama,
                      ${EMBEDDING_DEFAULTS.openai.url} for openai)
  --embeddings-model M  the model (default ${EMBEDDING_DEFAULTS.ollama.model} / ${EMBEDDING_DEFAULTS.openai.model})
  --embeddings-key-env VAR  the environment variable holding the provider's API key
  --embeddings builtin [--embeddings-model NAME]
                      the built-in model (transformers.js, in a process of its own), downloaded once
                      from the Hugging Face hub into the state folder's models/ on first use, each file
                      checked before use: ${MODEL_CATALOG.map((m) => m.id).join(" or ")} (default
                      ${DEFAULT_BUILTIN_MODEL}); --embeddings-url gives a mirror of the hub
  --embeddings builtin --embeddings-model-dir DIR
                      the built-in model from your own folder holding a sentence-embedding model's
                      config.json, tokenizer.json, onnx/model.onnx (nothing is downloaded)
  --git-commit        git-backed vaults: commit each change made through the server (with --write)
  --git-push          push after each of those commits
  --git-hooks         let the repository's hooks run on those commits (off by default)
  --git-program P     the git program (default: git on the PATH)
  --no-git            no git tools, even when the vault is in a git repository
  --transfer-ttl M    minutes a download/upload link lives (default 10)
  --upload-max-mb N   largest upload through an upload link (default 50)
  --fetch-allow-host H  let fetch reach H (host or host:port) even on a private address (repeatable)
  --fetch-max-mb N    largest download of fetch (default 20)
  --fetch-content-type T  a content type fetch saves, type/subtype or type/* (repeatable); given,
                      these replace the default list (text/*, application/pdf, application/json,
                      application/xml, application/xhtml+xml, image/*, audio/*, video/*)
  --session-idle M    close an MCP session after M minutes without requests or an open stream
                      (default 30; 0 = never); its client starts a new one
  --max-sessions N    at most N MCP sessions at once; a new one closes the one idle the longest
                      (default 100)
  --verbose           debug logging
  -h, --help          this text`;
}

export function parseArgs(argv: string[]): CliArgs {
  const a: CliArgs = { write: false, allowOrigins: [], hidden: [], protected: [], verbose: false, help: false, gitCommit: false, gitPush: false, noGit: false, gitHooks: false, fetchAllowHosts: [] };
  const value = (i: number, flag: string): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new Error(`${flag} needs a value.`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const take = (): string => {
      if (inline !== undefined) return inline;
      const v = value(i, flag);
      i++;
      return v;
    };
    switch (flag) {
      case "--port": {
        const n = Number(take());
        if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error("--port must be a whole number from 0 to 65535.");
        a.port = n;
        break;
      }
      case "--token": a.token = take(); break;
      case "--token-file": a.tokenFile = take(); break;
      case "--write": a.write = true; break;
      case "--state-dir": a.stateDir = take(); break;
      case "--config-dir": a.configDir = take(); break;
      case "--allow-origin": a.allowOrigins.push(take()); break;
      case "--hidden": a.hidden.push(take()); break;
      case "--protected": a.protected.push(take()); break;
      case "--tool-timeout": {
        const s = Number(take());
        if (!Number.isFinite(s) || s < 0 || s > 3600) throw new Error("--tool-timeout takes seconds from 0 (no limit) to 3600.");
        a.toolTimeoutMs = Math.round(s * 1000);
        break;
      }
      case "--embeddings": {
        const p = take();
        if (p !== "ollama" && p !== "openai" && p !== "builtin") throw new Error(`--embeddings takes ollama, openai or builtin (got "${p}").`);
        a.embeddings = p;
        break;
      }
      case "--embeddings-url": a.embeddingsUrl = take(); break;
      case "--embeddings-model": a.embeddingsModel = take(); break;
      case "--embeddings-key-env": a.embeddingsKeyEnv = take(); break;
      case "--embeddings-model-dir": a.embeddingsModelDir = take(); break;
      case "--git-commit": a.gitCommit = true; break;
      case "--git-push": a.gitPush = true; break;
      case "--git-hooks": a.gitHooks = true; break;
      case "--git-program": a.gitProgram = take(); break;
      case "--no-git": a.noGit = true; break;
      case "--transfer-ttl": a.transferTtlMinutes = wholeNumber(flag, take(), 1, 1440); break;
      case "--upload-max-mb": a.uploadMaxMB = wholeNumber(flag, take(), 1, 4096); break;
      case "--fetch-allow-host": a.fetchAllowHosts.push(take()); break;
      case "--fetch-max-mb": a.fetchMaxMB = wholeNumber(flag, take(), 1, 4096); break;
      case "--fetch-content-type": {
        const t = take().trim().toLowerCase();
        if (!/^[a-z0-9.+-]+\/(\*|[a-z0-9.+-]+)$/.test(t)) throw new Error(`${flag} needs a content type such as text/html or image/* (got "${t}").`);
        (a.fetchContentTypes ??= []).push(t);
        break;
      }
      case "--max-read-kb": a.maxReadKB = wholeNumber(flag, take(), 1, 10 * 1024); break;
      case "--max-attachment-kb": a.maxAttachmentKB = wholeNumber(flag, take(), 1, 100 * 1024); break;
      case "--session-idle": a.sessionIdleMinutes = wholeNumber(flag, take(), 0, 10080); break;
      case "--max-sessions": a.maxSessions = wholeNumber(flag, take(), 1, 10000); break;
      case "--verbose": a.verbose = true; break;
      case "-h":
      case "--help": a.help = true; break;
      default:
        if (flag.startsWith("-")) throw new Error(`Unknown option ${flag}.`);
        if (a.vault !== undefined) throw new Error(`Only one vault folder can be given (got "${a.vault}" and "${flag}").`);
        a.vault = flag;
    }
  }
  if (!a.embeddings && (a.embeddingsUrl || a.embeddingsModel || a.embeddingsKeyEnv || a.embeddingsModelDir)) throw new Error("--embeddings-url, --embeddings-model, --embeddings-key-env and --embeddings-model-dir need --embeddings.");
  if (a.embeddings === "builtin" && a.embeddingsKeyEnv) throw new Error("--embeddings-key-env is for ollama and openai; the built-in model needs no key.");
  if (a.embeddingsUrl !== undefined && !/^https?:\/\//.test(a.embeddingsUrl)) throw new Error("--embeddings-url must start with http:// or https://.");
  if (a.gitCommit && !a.write) throw new Error("--git-commit commits the changes --write allows; add --write.");
  if (a.gitPush && !a.gitCommit) throw new Error("--git-push pushes the commits --git-commit makes; give both.");
  if ((a.gitCommit || a.gitHooks || a.gitProgram) && a.noGit) throw new Error("--no-git turns git off; drop it or the other --git options.");
  if (a.token !== undefined && a.token.length < 16) throw new Error("--token must be at least 16 characters; use a long random token.");
  return a;
}

function wholeNumber(flag: string, v: string, min: number, max: number): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${flag} takes a whole number from ${min} to ${max}.`);
  return n;
}
