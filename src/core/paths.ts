import { VaultError } from "./errors";

/**
 * Normalises and validates a vault-relative path given by a client.
 * Like Obsidian's `normalizePath` (slashes folded, ends trimmed, NFC) but strict: absolute paths,
 * `..` segments, NUL and control bytes are refused with an error that says how to write the path.
 * Returns "" for the vault root.
 */
export function normalizeVaultPath(input: unknown, what = "path"): string {
  if (typeof input !== "string") {
    throw new VaultError("invalid_path", `The ${what} must be a string such as "Folder/Note.md".`);
  }
  if (input.includes("\0")) {
    throw new VaultError("invalid_path", `The ${what} contains a NUL byte; remove it and use a vault-relative path such as "Folder/Note.md".`);
  }
  // eslint-disable-next-line no-control-regex -- control characters are exactly what this rejects
  if (/[\u0001-\u001f\u007f]/.test(input)) {
    throw new VaultError("invalid_path", `The ${what} contains control characters; use a plain vault-relative path such as "Folder/Note.md".`);
  }
  let p = input.replace(/[\u00a0\u202f]/g, " ").normalize("NFC");
  if (/^(?:[A-Za-z]:|[\\/]|~(?:[\\/]|$)|file:)/i.test(p) && p !== "/") {
    throw new VaultError(
      "invalid_path",
      `"${redactAbsolute(input)}" is an absolute path; give a path relative to the vault root, such as "Folder/Note.md".`,
    );
  }
  p = p.replace(/\\/g, "/");
  const out: string[] = [];
  for (const seg of p.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === ".." || /^\.{2,}$/.test(seg.trim())) {
      throw new VaultError("invalid_path", `The ${what} "${input}" leaves the vault ("..") ; give a path inside the vault, relative to its root.`);
    }
    out.push(seg);
  }
  return out.join("/");
}

/** Never echo a machine path back in full: keep only its last two segments. */
function redactAbsolute(p: string): string {
  const segs = p.split(/[\\/]+/).filter(Boolean);
  return segs.length <= 2 ? p : `…/${segs.slice(-2).join("/")}`;
}

export function joinVaultPath(folder: string, name: string): string {
  return folder ? `${folder}/${name}` : name;
}

/** True when `path` is `folder` itself or inside it ("" contains everything). */
export function isUnder(path: string, folder: string): boolean {
  if (folder === "") return true;
  return path === folder || path.startsWith(folder + "/");
}
