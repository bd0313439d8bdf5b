import { isUnder } from "../paths";
import type { AccessPolicy } from "../policy";
import type { VaultPort } from "../vault";

/** File names an assistant's instructions are read from, in order of preference. */
export const INSTRUCTION_FILES = ["AGENTS.md", "CLAUDE.md"] as const;
/** Cap on instructions sent at initialize (they cost context in every conversation). */
export const MAX_INSTRUCTIONS_CHARS = 8000;

export interface InstructionFile {
  path: string;
  folder: string;
  content: string;
}

/**
 * The AGENTS.md / CLAUDE.md files found along the path from the vault root to `folder`
 * (root first), at most one per folder (AGENTS.md preferred). Hidden files are never read.
 */
export async function instructionFilesAlong(port: VaultPort, policy: AccessPolicy, folder: string): Promise<InstructionFile[]> {
  const folders = [""];
  const segs = folder ? folder.split("/") : [];
  for (let i = 1; i <= segs.length; i++) folders.push(segs.slice(0, i).join("/"));
  const out: InstructionFile[] = [];
  for (const f of folders) {
    for (const name of INSTRUCTION_FILES) {
      const path = f ? `${f}/${name}` : name;
      if (policy.isHidden(path) || !port.stat(path)) continue;
      out.push({ path, folder: f, content: await port.read(path) });
      break;
    }
  }
  return out.filter((f) => isUnder(folder, f.folder));
}

/** The server's `instructions`: the vault's root AGENTS.md/CLAUDE.md when present, else a generated guide. */
export async function serverInstructions(port: VaultPort, policy: AccessPolicy, writeMode: boolean): Promise<string> {
  const guide = generatedGuide(port.name, writeMode);
  const [root] = await instructionFilesAlong(port, policy, "");
  if (!root) return guide;
  let text = root.content.replace(/^\uFEFF/, "").trim();
  if (text.length > MAX_INSTRUCTIONS_CHARS) {
    text = `${text.slice(0, MAX_INSTRUCTIONS_CHARS)}\n… (cut; read ${root.path} for the rest)`;
  }
  return `${guide}\n\nThe vault owner's instructions (${root.path}):\n\n${text}`;
}

export function generatedGuide(vaultName: string, writeMode: boolean): string {
  return [
    `You are connected to the Obsidian vault "${vaultName}". Paths are relative to the vault root and include ".md".`,
    "Use search to find notes by content, find_notes to find a note by its title or alias, read to open one (section= reads one heading), get_context for a note's links and neighbours.",
    "Folders may hold AGENTS.md files with local conventions: get_folder_instructions returns them.",
    writeMode
      ? "Write mode is on: read a note first and pass its etag as if_match when you change it; prefer edit over write for small changes."
      : "The vault is read-only for you: write tools are not available.",
  ].join(" ");
}
