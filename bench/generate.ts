/**
 * Seeded synthetic vaults for the bench: Zipf-distributed vocabulary, folders, frontmatter (tags,
 * status, dates, some aliases), headings, wikilinks, inline tags, lists and code blocks;
 * ~2.4 KB per note on average. The same seed and size always give the same vault.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { mulberry32 } from "../src/core/random";

/** Seeded PRNG for the synthetic vaults (the core's, so the graph bench draws the same way). */
export const rng = mulberry32;

const STOP = "the of and to a in is that for it as was with be by on not he this are or at from his but have an they which one you were all we her she there would their will when who him been has more if no out do so can what up said about other into than its time only".split(" ");
const ONSETS = ["b", "br", "c", "ch", "cl", "d", "dr", "f", "fl", "g", "gr", "h", "j", "k", "l", "m", "n", "p", "pl", "qu", "r", "s", "sh", "st", "t", "th", "tr", "v", "w", "z"];
const VOWELS = ["a", "e", "i", "o", "u", "ai", "ea", "io", "ou", "y"];
const CODAS = ["", "", "n", "r", "s", "t", "l", "m", "nd", "rk", "st", "ng", "x"];

export interface Vocabulary {
  words: string[];
  /** Draws a word index with Zipf(s) probability. */
  draw(r: () => number): number;
}

/** `size` distinct pseudo-words, the first ones English stop words, drawn with Zipf exponent `s`. */
export function makeVocabulary(size: number, seed: number, s = 1.07): Vocabulary {
  const r = rng(seed);
  const words: string[] = [...STOP];
  const seen = new Set(words);
  while (words.length < size) {
    const syll = 1 + Math.floor(r() * 3.2);
    let w = "";
    for (let i = 0; i < syll; i++) w += pick(ONSETS, r) + pick(VOWELS, r) + (i === syll - 1 || r() < 0.3 ? pick(CODAS, r) : "");
    if (w.length < 3 || seen.has(w)) continue;
    seen.add(w);
    words.push(w);
  }
  const cdf = new Float64Array(size);
  let sum = 0;
  for (let i = 0; i < size; i++) cdf[i] = sum += 1 / Math.pow(i + 1, s);
  for (let i = 0; i < size; i++) cdf[i] /= sum;
  return {
    words,
    draw(rr) {
      const x = rr();
      let lo = 0;
      let hi = size - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cdf[mid] < x) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    },
  };
}

function pick<T>(arr: readonly T[], r: () => number): T {
  return arr[Math.floor(r() * arr.length)];
}

export interface GeneratedVault {
  root: string;
  notes: number;
  bytes: number;
  /** Vault-relative paths of the notes. */
  paths: string[];
  titles: string[];
  vocab: Vocabulary;
}

const TAGS = ["project", "idea", "reading", "journal", "meeting", "craft", "craft/wood", "craft/metal", "health", "travel", "work/planning", "work/review", "someday", "reference", "people"];
const STATUS = ["draft", "active", "done", "archived"];

/** Writes `count` notes under `root` (created). Deterministic for a given seed. */
export function generateVault(root: string, count: number, seed = 42): GeneratedVault {
  const vocab = makeVocabulary(30000, seed);
  const r = rng(seed * 7919 + count);
  const folders: string[] = [];
  const topCount = Math.max(4, Math.round(Math.sqrt(count) / 4));
  for (let i = 0; i < topCount; i++) {
    const top = cap(vocab.words[40 + Math.floor(r() * 400)]) + " " + i;
    folders.push(top);
    if (r() < 0.5) folders.push(`${top}/${cap(vocab.words[100 + Math.floor(r() * 800)])}`);
  }
  folders.push("");
  const word = () => vocab.words[vocab.draw(r)];
  const content = () => vocab.words[vocab.draw(r) + (r() < 0.6 ? 60 : 0)] ?? word();
  const sentence = (min: number, max: number) => {
    const n = min + Math.floor(r() * (max - min + 1));
    const ws: string[] = [];
    for (let i = 0; i < n; i++) ws.push(i % 3 === 1 ? word() : content());
    return cap(ws.join(" ")) + ".";
  };

  const titles: string[] = [];
  const paths: string[] = [];
  const used = new Set<string>();
  for (let i = 0; i < count; i++) {
    let t: string;
    do {
      const n = 1 + Math.floor(r() * 4);
      const ws: string[] = [];
      for (let k = 0; k < n; k++) ws.push(vocab.words[60 + vocab.draw(r)] ?? word());
      t = cap(ws.join(" "));
    } while (used.has(t.toLowerCase()));
    used.add(t.toLowerCase());
    titles.push(t);
    const f = folders[Math.floor(r() * folders.length)];
    paths.push(f ? `${f}/${t}.md` : `${t}.md`);
  }

  mkdirSync(root, { recursive: true });
  for (const f of folders) if (f) mkdirSync(path.join(root, ...f.split("/")), { recursive: true });
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const lines: string[] = [];
    if (r() < 0.8) {
      lines.push("---");
      const tags = new Set<string>();
      const nt = Math.floor(r() * 4);
      for (let k = 0; k < nt; k++) tags.add(pick(TAGS, r));
      if (tags.size) lines.push(`tags: [${[...tags].join(", ")}]`);
      lines.push(`status: ${pick(STATUS, r)}`);
      lines.push(`created: 20${10 + Math.floor(r() * 15)}-0${1 + Math.floor(r() * 9)}-1${Math.floor(r() * 9)}`);
      if (r() < 0.15) lines.push(`aliases: [${cap(content())} ${content()}]`);
      if (r() < 0.3) lines.push(`rating: ${1 + Math.floor(r() * 5)}`);
      lines.push("---");
    }
    lines.push(`# ${titles[i]}`, "");
    const target = 1150 + r() * 1900; // body characters; with front matter and markup ≈ 2.4 KB on average
    let size = 0;
    let section = 0;
    while (size < target) {
      if (section > 0 || r() < 0.5) {
        lines.push(`${r() < 0.7 ? "##" : "###"} ${cap(content())} ${content()}`, "");
      }
      section++;
      const paras = 1 + Math.floor(r() * 3);
      for (let p = 0; p < paras && size < target; p++) {
        const kind = r();
        let block: string;
        if (kind < 0.15) {
          const items: string[] = [];
          const n = 2 + Math.floor(r() * 4);
          for (let k = 0; k < n; k++) items.push(`- ${sentence(3, 9)}`);
          block = items.join("\n");
        } else if (kind < 0.2) {
          block = "```js\nconst " + content() + " = " + JSON.stringify(word()) + ";\n```";
        } else {
          const ss: string[] = [];
          const n = 2 + Math.floor(r() * 4);
          for (let k = 0; k < n; k++) {
            let s = sentence(6, 16);
            if (r() < 0.25) s += ` See [[${titles[Math.floor(r() * count)]}]].`;
            if (r() < 0.08) s += ` #${pick(TAGS, r)}`;
            ss.push(s);
          }
          block = ss.join(" ");
        }
        lines.push(block, "");
        size += block.length + 1;
      }
    }
    const text = lines.join("\n");
    bytes += Buffer.byteLength(text);
    writeFileSync(path.join(root, ...paths[i].split("/")), text);
  }
  return { root, notes: count, bytes, paths, titles, vocab };
}

/**
 * Queries like people type them: 1–3 content words (mid-frequency, the kind that discriminate),
 * some with a common word mixed in, some a note's title words.
 */
export function makeQueries(v: GeneratedVault, n: number, seed = 7): string[] {
  const r = rng(seed);
  const out: string[] = [];
  while (out.length < n) {
    const k = r();
    if (k < 0.2) {
      out.push(v.titles[Math.floor(r() * v.titles.length)].toLowerCase());
      continue;
    }
    const len = k < 0.5 ? 1 : k < 0.85 ? 2 : 3;
    const ws: string[] = [];
    for (let i = 0; i < len; i++) ws.push(v.vocab.words[60 + Math.floor(Math.pow(r(), 2) * 3000)]);
    if (r() < 0.15) ws.splice(1, 0, v.vocab.words[Math.floor(r() * 40)]);
    out.push(ws.join(" "));
  }
  return out;
}

function cap(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
