/**
 * Reading a note for indexing, the same way for every engine: the size limit, unreadable files,
 * binary content and invalid UTF-8 each give a reason to skip the note instead of its text. No index state.
 */
import { errText, formatBytes } from "../strings";
import type { VaultPort } from "../vault";

export type NoteRead = { text: string } | { skip: string };

/** `pending`: a read already started (prefetched) for this note. */
export async function readNoteForIndex(port: VaultPort, path: string, size: number, maxNoteBytes: number, pending?: Promise<string>): Promise<NoteRead> {
  if (size > maxNoteBytes) return { skip: `larger than the ${formatBytes(maxNoteBytes)} limit (${formatBytes(size)})` };
  let text: string;
  try {
    text = await (pending ?? port.read(path));
  } catch (e) {
    return { skip: `unreadable: ${errText(e)}` };
  }
  if (text.includes("\0")) return { skip: "binary content (NUL bytes)" };
  if (text.includes("\uFFFD") && !(await validUtf8(port, path))) return { skip: "not valid UTF-8" };
  return { text };
}

async function validUtf8(port: VaultPort, path: string): Promise<boolean> {
  try {
    const bytes = await port.readBinary(path);
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
