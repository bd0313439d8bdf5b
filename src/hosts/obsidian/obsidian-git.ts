import { normalizePath, type App } from "obsidian";

/** What we know of the Obsidian Git plugin (id `obsidian-git`) in this vault. */
export interface ObsidianGitInfo {
  enabled: boolean;
  /** Its "Vault commit interval" in minutes (0: no timed commits). */
  autoCommitMinutes: number;
  /** It commits after every file change. */
  commitsOnChange: boolean;
  /** Its custom git program ("" when none). */
  gitPath: string;
}

/** Reads Obsidian Git's settings (`autoSaveInterval`, `autoBackupAfterFileChange`, `gitPath`), when it is enabled. */
export async function obsidianGitInfo(app: App): Promise<ObsidianGitInfo> {
  const none: ObsidianGitInfo = { enabled: false, autoCommitMinutes: 0, commitsOnChange: false, gitPath: "" };
  const plugins = (app as unknown as { plugins?: { enabledPlugins?: Set<string> } }).plugins;
  if (!plugins?.enabledPlugins?.has("obsidian-git")) return none;
  try {
    const raw = await app.vault.adapter.read(normalizePath(`${app.vault.configDir}/plugins/obsidian-git/data.json`));
    const data = JSON.parse(raw) as { autoSaveInterval?: unknown; autoBackupAfterFileChange?: unknown; gitPath?: unknown };
    const minutes = Number(data.autoSaveInterval);
    return {
      enabled: true,
      autoCommitMinutes: Number.isFinite(minutes) && minutes > 0 ? minutes : 0,
      commitsOnChange: data.autoBackupAfterFileChange === true,
      gitPath: typeof data.gitPath === "string" ? data.gitPath.trim() : "",
    };
  } catch {
    return { ...none, enabled: true };
  }
}

/** True when Obsidian Git commits by itself (on a timer or after changes). */
export function autoCommits(info: ObsidianGitInfo): boolean {
  return info.enabled && (info.autoCommitMinutes > 0 || info.commitsOnChange);
}
