import { setOwn } from "../../core/dict";
import { normalizePath } from "obsidian";
import { DEFAULT_BUILTIN_MODEL, MODEL_CATALOG } from "../../core/search/vector/model-catalog";
import type { ToolProfile } from "../../mcp/server";

/** The plugin's settings as stored in `data.json`. */
export interface VaultMcpSettings {
  /** Schema version of the stored settings; `migrateSettings` upgrades older ones. */
  version: number;
  /** Run the MCP server while Obsidian is open. */
  enabled: boolean;
  /** TCP port on 127.0.0.1. */
  port: number;
  /** The bearer token clients must send (base64url of 32 random bytes). */
  token: string;
  /** Allow tools that change the vault. */
  writeMode: boolean;
  /** Browser origins allowed to call the server (none by default). */
  allowedOrigins: string[];
  /** Folders invisible to every tool. */
  hiddenFolders: string[];
  /** Folders that can be read but never changed. */
  protectedFolders: string[];
  /** Ask the owner (a modal) before an assistant deletes, moves or overwrites; off: changes go through. */
  confirmDestructive: boolean;
  /** Which tools clients see: the everyday set, all of them, or the owner's own choice. */
  toolProfile: ToolProfileName;
  /** The tools offered with the `custom` profile. */
  enabledTools: string[];
  /** Largest note returned whole by read, in KB. */
  maxReadKB: number;
  /** Largest attachment returned by read, in KB. */
  maxAttachmentKB: number;
  /** Word stemming of the search index ("en": English; "none": exact words, any language). */
  searchLanguage: SearchLanguage;
  /** Seconds one read tool call may take before it is answered with a timeout error. */
  toolTimeoutSeconds: number;
  /** Semantic search's embedding provider ("off": semantic search is off). */
  semanticProvider: SemanticProvider;
  /** The provider's URL and model ("": the provider's default). */
  embeddingsUrl: string;
  embeddingsModel: string;
  /** The API key of an OpenAI-compatible endpoint (kept here only; never logged or sent to a client). */
  embeddingsApiKey: string;
  /** The built-in model: the folder holding its files (absolute), and where its runtime is fetched from. */
  embeddingsModelDir: string;
  embeddingsRuntimeUrl: string;
  /** The built-in model: a model of the list (downloaded on first use into the plugin's folder), or "folder" (the owner's own, `embeddingsModelDir`). */
  builtinModel: string;
  /** Where a model of the list is downloaded from ("": the Hugging Face hub), or a mirror of its paths. */
  embeddingsHubUrl: string;
  /** Git tools (history, diffs, sync) when the vault is in a git repository. */
  gitEnabled: boolean;
  /** Commit each change made through the server (git-backed vaults). */
  gitCommit: boolean;
  /** Push after each of those commits. */
  gitPush: boolean;
  /** The git program ("": `git` on the PATH). */
  gitProgram: string;
  /** Let the repository's hooks run on our commits. */
  gitHooks: boolean;
  /** Minutes a transfer link lives. */
  transferTtlMinutes: number;
  /** Largest upload through an upload link, in MB. */
  uploadMaxMB: number;
  /** Largest download of fetch, in MB. */
  fetchMaxMB: number;
  /** Hosts (or host:port) fetch may reach even on a private address (none by default). */
  fetchAllowHosts: string[];
  /** Content types fetch saves (`type/*` allowed). */
  fetchContentTypes: string[];
}

export type SemanticProvider = "off" | "ollama" | "openai" | "builtin";

export type ToolProfileName = "full" | "core" | "custom";
export type SearchLanguage = "en" | "none";

/** 1: the first release. 2: confirmations, tool profiles, read limits, search language. 3: tool call time limit. 4: semantic search. 5: git, transfer links, fetch, the built-in model. */
export const SETTINGS_VERSION = 5;

/**
 * 28765: no well-known Obsidian plugin uses it (Local REST API uses 27123/27124; others 3000/3001/22360/8080).
 */
export const DEFAULT_PORT = 28765;
export const MIN_PORT = 1024;
export const MAX_PORT = 65535;

export const DEFAULT_SETTINGS: Readonly<VaultMcpSettings> = Object.freeze({
  version: SETTINGS_VERSION,
  enabled: true,
  port: DEFAULT_PORT,
  token: "",
  writeMode: false,
  allowedOrigins: Object.freeze([]) as unknown as string[],
  hiddenFolders: Object.freeze([]) as unknown as string[],
  protectedFolders: Object.freeze([]) as unknown as string[],
  confirmDestructive: true,
  toolProfile: "full",
  enabledTools: Object.freeze([]) as unknown as string[],
  maxReadKB: 256,
  maxAttachmentKB: 1024,
  searchLanguage: "en",
  toolTimeoutSeconds: 10,
  semanticProvider: "off",
  embeddingsUrl: "",
  embeddingsModel: "",
  embeddingsApiKey: "",
  embeddingsModelDir: "",
  embeddingsRuntimeUrl: "",
  builtinModel: DEFAULT_BUILTIN_MODEL,
  embeddingsHubUrl: "",
  gitEnabled: true,
  gitCommit: false,
  gitPush: false,
  gitProgram: "",
  gitHooks: false,
  transferTtlMinutes: 10,
  uploadMaxMB: 50,
  fetchMaxMB: 20,
  fetchAllowHosts: Object.freeze([]) as unknown as string[],
  fetchContentTypes: Object.freeze(["text/*", "application/pdf", "application/json", "application/xml", "application/xhtml+xml", "image/*", "audio/*", "video/*"]) as unknown as string[],
});

/** Bounds of the transfer and fetch settings. */
export const TRANSFER_TTL_RANGE = { min: 1, max: 1440 } as const;
export const TRANSFER_MB_RANGE = { min: 1, max: 4096 } as const;

/** Bounds of the size settings (KB). */
export const READ_KB_RANGE = { min: 1, max: 10 * 1024 } as const;
export const ATTACHMENT_KB_RANGE = { min: 1, max: 100 * 1024 } as const;
/** Bounds of the tool call time limit (seconds). */
export const TOOL_TIMEOUT_RANGE = { min: 1, max: 600 } as const;

/** A size or time typed by the user (a whole number within `range`), or null. */
export function parseKB(input: unknown, range: { min: number; max: number }): number | null {
  const n = typeof input === "number" ? input : typeof input === "string" && /^\s*\d+\s*$/.test(input) ? Number(input) : NaN;
  return Number.isInteger(n) && n >= range.min && n <= range.max ? n : null;
}

/** What the runtime's `tools` option should be for these settings. */
export function toolProfileOf(s: Pick<VaultMcpSettings, "toolProfile" | "enabledTools">): ToolProfile {
  return s.toolProfile === "custom" ? { profile: "custom", enabled: [...s.enabledTools] } : { profile: s.toolProfile };
}

function parseToolNames(input: unknown): string[] {
  if (!Array.isArray(input)) return [];
  const out: string[] = [];
  for (const item of input) if (typeof item === "string" && /^[a-z_]+$/.test(item) && !out.includes(item)) out.push(item);
  return out;
}

function oneOf<T extends string>(v: unknown, allowed: readonly T[], fallback: T): T {
  return typeof v === "string" && (allowed as readonly string[]).includes(v) ? (v as T) : fallback;
}

/** 32 random bytes from `crypto.getRandomValues`, base64url without padding (43 characters). */
export function generateToken(): string {
  const bytes = new Uint8Array(32);
  crypto.getRandomValues(bytes);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** A port typed by the user, or null when it is not a whole number in 1024–65535. */
export function parsePort(input: unknown): number | null {
  const n = typeof input === "number" ? input : typeof input === "string" && /^\s*\d+\s*$/.test(input) ? Number(input) : NaN;
  return Number.isInteger(n) && n >= MIN_PORT && n <= MAX_PORT ? n : null;
}

/** One folder per line (commas accepted too): trimmed, normalised, empty lines and duplicates dropped. */
export function parseFolderList(input: unknown): string[] {
  const items = Array.isArray(input) ? input : typeof input === "string" ? input.split(/[\n,]/) : [];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== "string" || !item.trim()) continue;
    const p = normalizePath(item.trim());
    if (p === "/" || out.includes(p)) continue;
    out.push(p);
  }
  return out;
}

/** One origin per line (`https://example.com`), trimmed, without a trailing slash. */
export function parseOriginList(input: unknown): string[] {
  const items = Array.isArray(input) ? input : typeof input === "string" ? input.split(/[\n,\s]+/) : [];
  const out: string[] = [];
  for (const item of items) {
    if (typeof item !== "string") continue;
    const o = item.trim().replace(/\/+$/, "");
    if (o && !out.includes(o)) out.push(o);
  }
  return out;
}

/** An http(s) URL typed by the user, trimmed; "" for anything else (the provider's default then). */
export function parseHttpUrl(v: unknown): string {
  if (typeof v !== "string") return "";
  const t = v.trim();
  return /^https?:\/\/[^\s/]+/.test(t) ? t : "";
}

/** A list typed one per line (commas and spaces accepted), each item cleaned by `clean` (null drops it), no duplicates. */
function parseTokens(input: unknown, clean: (item: string) => string | null): string[] {
  const items = Array.isArray(input) ? input : typeof input === "string" ? input.split(/[\n,\s]+/) : [];
  const out: string[] = [];
  for (const item of items) {
    const c = typeof item === "string" ? clean(item.trim().toLowerCase()) : null;
    if (c && !out.includes(c)) out.push(c);
  }
  return out;
}

/** Host names or `host:port` (a scheme or path typed with them is dropped). */
export function parseHostList(input: unknown): string[] {
  return parseTokens(input, (t) => {
    const h = t.replace(/^[a-z]+:\/\//, "").replace(/\/.*$/, "");
    return /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(:\d{1,5})?$/.test(h) ? h : null;
  });
}

/** Content types: `type/subtype` or `type/*`. */
export function parseContentTypes(input: unknown): string[] {
  return parseTokens(input, (t) => (/^[a-z0-9.+-]+\/(\*|[a-z0-9.+-]+)$/.test(t) ? t : null));
}

function parseBool(v: unknown, fallback: boolean): boolean {
  if (typeof v === "boolean") return v;
  if (v === "true") return true;
  if (v === "false") return false;
  return fallback;
}

const TOKEN_RE = /^[A-Za-z0-9_-]{32,}$/;

/**
 * Turns whatever `loadData()` returned (null on first run, an older or partial object, hand-edited
 * JSON) into complete, valid settings. `changed` is true when the result differs from what was
 * stored, so the caller saves it (a first run therefore persists its new token).
 */
export function migrateSettings(raw: unknown): { settings: VaultMcpSettings; changed: boolean } {
  const data: Record<string, unknown> = raw !== null && typeof raw === "object" && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>) } : {};
  // Version 0 (before the `version` field): the same keys, possibly with strings for numbers and lists.
  // Version 1 → 2 → 3: the new keys get their defaults; the old ones keep their values.
  const token = typeof data.token === "string" && TOKEN_RE.test(data.token) ? data.token : generateToken();
  const settings: VaultMcpSettings = {
    version: SETTINGS_VERSION,
    enabled: parseBool(data.enabled, DEFAULT_SETTINGS.enabled),
    port: parsePort(data.port) ?? DEFAULT_SETTINGS.port,
    token,
    writeMode: parseBool(data.writeMode, DEFAULT_SETTINGS.writeMode),
    allowedOrigins: parseOriginList(data.allowedOrigins),
    hiddenFolders: parseFolderList(data.hiddenFolders),
    protectedFolders: parseFolderList(data.protectedFolders),
    confirmDestructive: parseBool(data.confirmDestructive, DEFAULT_SETTINGS.confirmDestructive),
    toolProfile: oneOf(data.toolProfile, ["full", "core", "custom"], DEFAULT_SETTINGS.toolProfile),
    enabledTools: parseToolNames(data.enabledTools),
    maxReadKB: parseKB(data.maxReadKB, READ_KB_RANGE) ?? DEFAULT_SETTINGS.maxReadKB,
    maxAttachmentKB: parseKB(data.maxAttachmentKB, ATTACHMENT_KB_RANGE) ?? DEFAULT_SETTINGS.maxAttachmentKB,
    searchLanguage: oneOf(data.searchLanguage, ["en", "none"], DEFAULT_SETTINGS.searchLanguage),
    toolTimeoutSeconds: parseKB(data.toolTimeoutSeconds, TOOL_TIMEOUT_RANGE) ?? DEFAULT_SETTINGS.toolTimeoutSeconds,
    semanticProvider: oneOf(data.semanticProvider, ["off", "ollama", "openai", "builtin"], DEFAULT_SETTINGS.semanticProvider),
    embeddingsUrl: parseHttpUrl(data.embeddingsUrl),
    embeddingsModel: typeof data.embeddingsModel === "string" ? data.embeddingsModel.trim() : "",
    embeddingsApiKey: typeof data.embeddingsApiKey === "string" ? data.embeddingsApiKey.trim() : "",
    embeddingsModelDir: typeof data.embeddingsModelDir === "string" ? data.embeddingsModelDir.trim() : "",
    embeddingsRuntimeUrl: parseHttpUrl(data.embeddingsRuntimeUrl),
    // Settings from before the list: a model folder chosen means the owner's own model.
    builtinModel: oneOf(data.builtinModel, [...MODEL_CATALOG.map((m) => m.id), "folder"], typeof data.embeddingsModelDir === "string" && data.embeddingsModelDir.trim() ? "folder" : DEFAULT_BUILTIN_MODEL),
    embeddingsHubUrl: parseHttpUrl(data.embeddingsHubUrl),
    gitEnabled: parseBool(data.gitEnabled, DEFAULT_SETTINGS.gitEnabled),
    gitCommit: parseBool(data.gitCommit, DEFAULT_SETTINGS.gitCommit),
    gitPush: parseBool(data.gitPush, DEFAULT_SETTINGS.gitPush),
    gitProgram: typeof data.gitProgram === "string" ? data.gitProgram.trim() : "",
    gitHooks: parseBool(data.gitHooks, DEFAULT_SETTINGS.gitHooks),
    transferTtlMinutes: parseKB(data.transferTtlMinutes, TRANSFER_TTL_RANGE) ?? DEFAULT_SETTINGS.transferTtlMinutes,
    uploadMaxMB: parseKB(data.uploadMaxMB, TRANSFER_MB_RANGE) ?? DEFAULT_SETTINGS.uploadMaxMB,
    fetchMaxMB: parseKB(data.fetchMaxMB, TRANSFER_MB_RANGE) ?? DEFAULT_SETTINGS.fetchMaxMB,
    fetchAllowHosts: parseHostList(data.fetchAllowHosts),
    fetchContentTypes: data.fetchContentTypes === undefined ? [...DEFAULT_SETTINGS.fetchContentTypes] : parseContentTypes(data.fetchContentTypes),
  };
  const changed = JSON.stringify(sortKeys(settings)) !== JSON.stringify(sortKeys(data));
  return { settings, changed };
}

function sortKeys(o: object): Record<string, unknown> {
  // eslint-disable-next-line no-restricted-syntax -- written with setOwn
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) setOwn(out, k, (o as Record<string, unknown>)[k]);
  return out;
}

/** Shows only the token's last four characters. */
export function maskToken(token: string): string {
  return token.length <= 4 ? "••••" : `${"•".repeat(8)}${token.slice(-4)}`;
}
