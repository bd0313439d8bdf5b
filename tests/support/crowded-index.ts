/**
 * Keyword indexes whose scores crowd together (many candidates, a small vocabulary, titles and
 * phrases holding the query's words) and queries over them, for the tests that hold the scorer's
 * shortcuts (lazy proximity, searching in slices) to its plain answers.
 */
import { chunkNote } from "../../src/core/search/chunk";
import { InvertedIndex } from "../../src/core/search/keyword/inverted-index";

export function rng(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x * 1664525 + 1013904223) >>> 0;
    return x / 0x100000000;
  };
}

const VOCAB = ["kiln", "glaze", "clay", "wheel", "fire", "ash", "slip", "trim", "bisque", "oxide", "cone", "raku"];
const FILLER = ["the", "of", "and", "in", "a", "to", "is", "on"];

/** `n` notes of short sections mixing the vocabulary with filler; every fourth title holds vocabulary words. */
export function crowdedIndex(n: number, seed: number): InvertedIndex {
  const r = rng(seed);
  const pick = (a: string[]) => a[Math.floor(r() * a.length)];
  const ix = new InvertedIndex();
  for (let i = 0; i < n; i++) {
    const title = i % 4 === 0 ? `${pick(VOCAB)} ${pick(VOCAB)}` : `note ${i}`;
    const parts: string[] = [];
    const sections = 1 + Math.floor(r() * 4);
    for (let k = 0; k < sections; k++) {
      const words: string[] = [];
      const len = 5 + Math.floor(r() * 60);
      for (let w = 0; w < len; w++) words.push(r() < 0.25 ? pick(VOCAB) : pick(FILLER) + (r() < 0.3 ? String(Math.floor(r() * 50)) : ""));
      parts.push(`## ${pick(VOCAB)} part ${k}\n\n${words.join(" ")}\n`);
    }
    addNote(ix, `F${i % 3}/${title} ${i}.md`, parts.join("\n"));
  }
  return ix;
}

/** Adds (or replaces) a note, in sections of at most 20 words. */
export function addNote(ix: InvertedIndex, path: string, text: string): void {
  const chunks = chunkNote(path, text, null, { maxWords: 20 });
  const b = ix.docBuilder();
  for (const c of chunks) b.addChunk(c, "en");
  ix.addDoc({ seg: 0, path, mtime: 0, size: text.length, hash: 0, frontmatter: {}, tags: [] }, chunks, b);
}

export function crowdedQueries(seed: number, count: number): string[] {
  const r = rng(seed);
  const pick = () => VOCAB[Math.floor(r() * VOCAB.length)];
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const k = i % 9;
    if (k === 0) out.push(`${pick()} ${pick()}`);
    else if (k === 1) out.push(`${pick()} ${pick()} ${pick()}`);
    else if (k === 2) out.push(`"${pick()} ${pick()}" ${pick()}`);
    else if (k === 3) out.push(`${pick().slice(0, 2)}* ${pick()}`);
    else if (k === 4) out.push(`${pick()} OR ${pick()} ${pick()}`);
    else if (k === 5) out.push(`${pick()} ${pick()} ${pick()} ${pick()} -${pick()}`);
    else if (k === 6) out.push(`${pick()} ${pick()} zebra`);
    else if (k === 7) {
      // A word typed twice: its two clauses are one for proximity.
      const w = pick();
      out.push(`${w} ${w}`);
    } else {
      const [a, b] = [pick(), pick()];
      out.push(`${a} ${b} ${a} ${b} ${a}`);
    }
  }
  return out;
}

