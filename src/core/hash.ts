/** SHA-256 of text (as UTF-8) or bytes, hex. WebCrypto is available in Obsidian (Electron) and Node ≥ 19. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const digest = await crypto.subtle.digest("SHA-256", bytes as Uint8Array<ArrayBuffer>);
  let hex = "";
  for (const b of new Uint8Array(digest)) hex += b.toString(16).padStart(2, "0");
  return hex;
}

/**
 * The etag of a file's content: a short, stable hash of its bytes, as a plain token (in JSON an
 * HTTP-style quoted etag came out as "\"8b11…\""). `if_match` takes it either way.
 */
export async function etagOf(data: string | Uint8Array): Promise<string> {
  return (await sha256Hex(data)).slice(0, 20);
}
