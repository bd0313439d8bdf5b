/**
 * A saved search index kept as a fixture (`tests/fixtures/saved-index.bin.gz`): the files one version
 * saved for a vault generated here, so that a later version's test can load them. The vault is our own
 * generated text (seeded), the same on every run. `npm run fixture:saved-index` writes the fixture
 * again with the current code — only when the index format changes on purpose (SCHEMA_VERSION).
 */
import { mulberry32 } from "../../src/core/random";

export const SAVED_INDEX_FIXTURE = "tests/fixtures/saved-index.bin.gz";

const WORDS = ["kiln", "glaze", "clay", "wheel", "bisque", "slip", "trim", "foot", "rim", "ash", "celadon", "shino", "tenmoku", "wedging", "throwing", "pulling", "handle", "lid", "teapot", "bowl", "mug", "plate", "vase", "jar", "crackle", "crawl", "pinhole", "blister", "cone", "ramp", "hold", "cool", "reduction", "oxidation", "stoneware", "porcelain", "earthenware", "terra", "sigillata", "burnish"];
const NOTES = 120;
const CJK = ["陶芸", "釉薬", "窯", "素焼き", "轆轤", "粘土"];

/** The generated vault: 120 notes with headings, tags, aliases, frontmatter, phrases, links and some Japanese. */
export function savedIndexVault(): Record<string, string> {
  const rnd = mulberry32(19);
  const pick = <T>(a: T[]): T => a[Math.floor(rnd() * a.length)];
  const files: Record<string, string> = {};
  for (let i = 0; i < NOTES; i++) {
    const folder = ["Studio", "Glazes", "Firing", "Journal/2026"][i % 4];
    const title = `${pick(WORDS)} ${pick(WORDS)} ${i}`;
    const lines = ["---", `tags: [craft, t${i % 7}]`, `aliases: [${pick(WORDS)} notes ${i}]`, `rank: ${i % 5}`, "---", `# ${title}`, ""];
    for (let s = 0; s < 1 + (i % 4); s++) {
      lines.push(`## ${pick(WORDS)} section ${s}`, "");
      const n = 12 + Math.floor(rnd() * 50);
      const words: string[] = [];
      for (let w = 0; w < n; w++) words.push(i % 10 === 3 && w % 9 === 0 ? pick(CJK) : pick(WORDS));
      lines.push(words.join(" ") + ` marker${i}x${s} #topic/${pick(WORDS)}`, "");
      if (s === 0) lines.push(`See [[${pick(WORDS)} ${pick(WORDS)} ${(i + 7) % NOTES}]] and "the slow cool".`, "");
    }
    files[`${folder}/${title}.md`] = lines.join("\n");
  }
  return files;
}

/** The queries the fixture's test asks of the loaded index and of a fresh one. */
export const SAVED_INDEX_QUERIES = ["kiln", "glaze celadon", '"slow cool"', "tenm*", "marker17x0", "陶芸", "bowl -mug", "reduction OR oxidation", "notes 42"];

/** The files as one buffer: per file, its name's length (2 bytes) and name (UTF-8), its length (4 bytes) and bytes. */
export function packFiles(files: [string, Uint8Array][]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const [name, bytes] of files) {
    const n = new TextEncoder().encode(name);
    const head = new Uint8Array(6 + n.length);
    const v = new DataView(head.buffer);
    v.setUint16(0, n.length);
    head.set(n, 2);
    v.setUint32(2 + n.length, bytes.length);
    parts.push(head, bytes);
  }
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

export function unpackFiles(buf: Uint8Array): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  const v = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  for (let o = 0; o < buf.length; ) {
    const nl = v.getUint16(o);
    const name = new TextDecoder().decode(buf.subarray(o + 2, o + 2 + nl));
    const len = v.getUint32(o + 2 + nl);
    o += 6 + nl;
    out.set(name, buf.slice(o, o + len));
    o += len;
  }
  return out;
}
