import { normalizePath } from "obsidian";

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
}

export const SETTINGS_VERSION = 1;

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
});

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
  };
  const changed = JSON.stringify(sortKeys(settings)) !== JSON.stringify(sortKeys(data));
  return { settings, changed };
}

function sortKeys(o: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(o).sort()) out[k] = (o as Record<string, unknown>)[k];
  return out;
}

/** Shows only the token's last four characters. */
export function maskToken(token: string): string {
  return token.length <= 4 ? "••••" : `${"•".repeat(8)}${token.slice(-4)}`;
}
