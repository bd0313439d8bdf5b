/**
 * An expected failure: bad input, a missing note, a conflict. The MCP layer turns it into an
 * `isError` tool result whose text is `message` (which must say what was wrong and how to recover,
 * with vault-relative paths only). Anything else thrown is a bug and is reported as an internal error.
 */
export type ErrorCode =
  | "invalid_path"
  | "not_found"
  | "forbidden"
  | "conflict"
  | "exists"
  | "invalid_argument"
  | "too_large"
  | "read_only"
  | "declined"
  | "cancelled"
  | "unavailable";

export class VaultError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "VaultError";
  }
}

export function isVaultError(e: unknown): e is VaultError {
  return e instanceof VaultError || (typeof e === "object" && e !== null && (e as { name?: unknown }).name === "VaultError");
}

/** The error of a write call cancelled (the client stopped waiting for it) before its change began. */
export function cancelledError(): VaultError {
  return new VaultError("cancelled", "The call was cancelled (the client stopped waiting for it) before its change began; nothing was changed. Read the file again before calling again.");
}
