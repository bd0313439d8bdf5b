/**
 * Base64 without Node's Buffer (the core runs in Obsidian too). An attachment can be megabytes, and
 * the core runs on Obsidian's UI thread: the `InSteps` forms work a megabyte at a time and yield
 * (`yieldNow`) between steps; the plain forms are one step.
 */
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const PAD = "=".charCodeAt(0);
const LOOKUP = new Int16Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) LOOKUP[ALPHABET.charCodeAt(i)] = i;
LOOKUP["-".charCodeAt(0)] = 62;
LOOKUP["_".charCodeAt(0)] = 63;

/** Bytes encoded per step (a multiple of 3, so steps join without padding): 1 MB of base64. */
const ENCODE_STEP_BYTES = 3 << 18;
/** Characters decoded per step. */
const DECODE_STEP_CHARS = 1 << 20;
const ASCII = new TextDecoder();

export function encodeBase64(bytes: Uint8Array): string {
  return encodeRange(bytes, 0, bytes.length);
}

export async function encodeBase64InSteps(bytes: Uint8Array, yieldNow: () => Promise<void>): Promise<string> {
  const parts: string[] = [];
  for (let from = 0; from < bytes.length; from += ENCODE_STEP_BYTES) {
    if (from > 0) await yieldNow();
    parts.push(encodeRange(bytes, from, Math.min(bytes.length, from + ENCODE_STEP_BYTES)));
  }
  return parts.join("");
}

/** Base64 of `bytes[from, to)`: the characters written as bytes, then read back as one string. */
function encodeRange(bytes: Uint8Array, from: number, to: number): string {
  const out = new Uint8Array(Math.ceil((to - from) / 3) * 4);
  let o = 0;
  let i = from;
  for (; i + 2 < to; i += 3) {
    const n = (bytes[i] << 16) | (bytes[i + 1] << 8) | bytes[i + 2];
    out[o++] = CODES[n >> 18];
    out[o++] = CODES[(n >> 12) & 63];
    out[o++] = CODES[(n >> 6) & 63];
    out[o++] = CODES[n & 63];
  }
  if (i < to) {
    const n = (bytes[i] << 16) | (i + 1 < to ? bytes[i + 1] << 8 : 0);
    out[o++] = CODES[n >> 18];
    out[o++] = CODES[(n >> 12) & 63];
    out[o++] = i + 1 < to ? CODES[(n >> 6) & 63] : PAD;
    out[o++] = PAD;
  }
  return ASCII.decode(out);
}

/** Decodes standard or URL-safe base64 (whitespace ignored, padding optional); null when invalid. */
export function decodeBase64(text: string): Uint8Array | null {
  const d = new Base64Decoder(text);
  d.step(d.end);
  return d.result();
}

/** `decodeBase64`, a megabyte of text at a time with `yieldNow` between steps. */
export async function decodeBase64InSteps(text: string, yieldNow: () => Promise<void>): Promise<Uint8Array | null> {
  const d = new Base64Decoder(text);
  while (d.step(DECODE_STEP_CHARS)) await yieldNow();
  return d.result();
}

class Base64Decoder {
  /** Where the data ends: trailing whitespace and padding are not part of it. */
  readonly end: number;
  private readonly out: Uint8Array;
  private i = 0;
  private o = 0;
  private chars = 0;
  private bits = 0;
  private acc = 0;
  private invalid = false;

  constructor(private readonly text: string) {
    let end = text.length;
    while (end > 0 && (text.charCodeAt(end - 1) === PAD || isSpace(text.charCodeAt(end - 1)))) end--;
    this.end = end;
    this.out = new Uint8Array(Math.floor((end * 3) / 4));
  }

  /** Decodes up to `count` more characters; true while there are more to decode. */
  step(count: number): boolean {
    const { text, out, end } = this;
    const stop = Math.min(end, this.i + count);
    let { i, o, bits, acc, chars } = this;
    for (; i < stop; i++) {
      const c = text.charCodeAt(i);
      const v = c < 128 ? LOOKUP[c] : -1;
      if (v < 0) {
        if (isSpace(c)) continue;
        this.invalid = true;
        this.i = end;
        return false;
      }
      chars++;
      acc = ((acc << 6) | v) & 0xffffff;
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out[o++] = (acc >> bits) & 0xff;
      }
    }
    this.i = i;
    this.o = o;
    this.bits = bits;
    this.acc = acc;
    this.chars = chars;
    return i < end;
  }

  result(): Uint8Array | null {
    // One character left over cannot make a byte: the text was cut.
    return this.invalid || this.chars % 4 === 1 ? null : this.out.subarray(0, this.o);
  }
}

/** What JavaScript's `\s` matches. */
function isSpace(c: number): boolean {
  if (c < 128) return c === 32 || (c >= 9 && c <= 13);
  return /\s/.test(String.fromCharCode(c));
}
