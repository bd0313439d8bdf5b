/** SHA-256 of text (as UTF-8) or bytes, hex. WebCrypto is available in Obsidian (Electron) and Node ≥ 19. */
export async function sha256Hex(data: string | Uint8Array): Promise<string> {
  return digestHex("SHA-256", typeof data === "string" ? new TextEncoder().encode(data) : data);
}

/**
 * The blob id git gives these exact bytes (SHA-1 of `blob <size>\0<bytes>`, no attributes applied):
 * what a commit compares with HEAD, and the hub's `ETag` of a small file kept in git.
 */
export async function gitBlobId(data: string | Uint8Array): Promise<string> {
  const body = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const head = new TextEncoder().encode(`blob ${body.byteLength}\0`);
  const all = new Uint8Array(head.byteLength + body.byteLength);
  all.set(head, 0);
  all.set(body, head.byteLength);
  return digestHex("SHA-1", all);
}

async function digestHex(algorithm: "SHA-1" | "SHA-256", bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest(algorithm, bytes as Uint8Array<ArrayBuffer>);
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

/**
 * FNV-1a over a string's UTF-16 code units, unsigned 32 bits: the small hash the segments, link
 * keys, resolver names, accent buckets and the deterministic embedder share (its values are kept
 * in saved files: the segment a note is saved in).
 */
export function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** `fnv1a` cut to 30 bits: a small integer in every V8 build, kept in a `Map` without a box (names the resolver and the link graph look up). */
export function fnv1a30(s: string): number {
  return fnv1a(s) & 0x3fffffff;
}

/** cyrb53's two 32-bit lanes of `str` (low, high), in `lanes`. */
const lanes = new Int32Array(2);
function cyrb53(str: string): void {
  let h1 = 0xdeadbeef ^ str.length;
  let h2 = 0x41c6ce57 ^ str.length;
  for (let i = 0; i < str.length; i++) {
    const ch = str.charCodeAt(i);
    h1 = Math.imul(h1 ^ ch, 2654435761);
    h2 = Math.imul(h2 ^ ch, 1597334677);
  }
  cyrb53Finish(h1, h2);
}

/** cyrb53's final mixing of its two lanes, into `lanes`. */
function cyrb53Finish(h1: number, h2: number): void {
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  lanes[0] = h1;
  lanes[1] = h2;
}

/** `lanes` as one exact number below 2^53. */
function lanes53(): number {
  return (lanes[1] & 0x1fffff) * 4294967296 + (lanes[0] >>> 0);
}

/** cyrb53 over 32-bit words instead of a string's code units, as one exact number (53 bits). Not for security. */
export function hash53OfWords(words: Int32Array): number {
  let h1 = 0xdeadbeef ^ words.length;
  let h2 = 0x41c6ce57 ^ words.length;
  for (let i = 0; i < words.length; i++) {
    h1 = Math.imul(h1 ^ words[i], 2654435761);
    h2 = Math.imul(h2 ^ words[i], 1597334677);
  }
  cyrb53Finish(h1, h2);
  return lanes53();
}

/** A fast 53-bit string hash (cyrb53), hex. Used to skip unchanged notes, not for security. */
export function hashText(str: string): string {
  cyrb53(str);
  return (lanes[1] >>> 0).toString(16).padStart(8, "0") + (lanes[0] >>> 0).toString(16).padStart(8, "0") + str.length.toString(16);
}

/** cyrb53 as one exact number (53 bits): a string's hash kept without a string. Not for security. */
export function hash53(str: string): number {
  cyrb53(str);
  return lanes53();
}

/**
 * The `hash53` of the text whose `hashText` is `hex` (its lanes are in it); another string (not a
 * `hashText`) gets its own `hash53`, which no text's is likely to equal.
 */
export function hash53OfHashText(hex: string): number {
  if (!/^[0-9a-f]{17,}$/.test(hex)) return hash53(hex);
  return (parseInt(hex.slice(0, 8), 16) & 0x1fffff) * 4294967296 + parseInt(hex.slice(8, 16), 16);
}
