/**
 * What the relevance tools share (`quality.ts`, `analyze-misses.ts`): a vault's notes as plain text
 * (title, aliases, body, words) and the known-item queries drawn from them (seeded).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { rng } from "./generate";

// ---------------------------------------------------------------- the vault as plain text

export interface Note {
  path: string;
  title: string;
  aliases: string[];
  body: string;
  words: Set<string>;
  /** The words in order. */
  list: string[];
}

const STOP = new Set(
  "a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours out over own same she should so some such than that the their theirs them then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours also may use used using like one two new see get set make".split(" "),
);
export const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;
const segmenter = new Intl.Segmenter("und", { granularity: "word" });

/** Word-like segments, lower-cased, line by line (Intl.Segmenter copies its whole input per segment). */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) {
    for (let i = 0; i < line.length; i += 2000) {
      for (const s of segmenter.segment(line.slice(i, i + 2000))) if (s.isWordLike) out.push(s.segment.toLowerCase());
    }
  }
  return out;
}

export function readNotes(root: string): Note[] {
  const notes: Note[] = [];
  const walk = (dir: string, rel: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const abs = path.join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(abs, r);
      else if (e.name.endsWith(".md")) {
        const text = readFileSync(abs, "utf8");
        let body = text;
        let aliases: string[] = [];
        const fm = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
        if (fm) {
          body = text.slice(fm[0].length);
          try {
            const data = YAML.parse(fm[1]) as unknown;
            const a = data && typeof data === "object" ? (data as Record<string, unknown>).aliases : undefined;
            aliases = Array.isArray(a) ? a.filter((x): x is string => typeof x === "string") : typeof a === "string" ? [a] : [];
          } catch {
            /* invalid frontmatter: no aliases */
          }
        }
        const title = e.name.slice(0, -3);
        const list = words(title + "\n" + body);
        notes.push({ path: r, title, aliases, body, words: new Set(list), list });
      }
    }
  };
  walk(root, "");
  return notes.sort((a, b) => (a.path < b.path ? -1 : 1));
}

// ---------------------------------------------------------------- query sets

export interface Query {
  q: string;
  /** Any of these paths is the right answer. */
  answers: string[];
  /** Known-item queries: the query's words and the paragraph they were drawn from. */
  qw?: string[];
  para?: string;
}

export function isContent(w: string, df: Map<string, number>, maxDf: number): boolean {
  if (STOP.has(w) || /^[\d._,:-]+$/.test(w)) return false;
  if (w.length < (CJK.test(w) ? 2 : 3)) return false;
  return (df.get(w) ?? 0) <= maxDf;
}

export function knownItemQueries(notes: Note[], n: number, seed: number): Query[] {
  const r = rng(seed);
  const df = new Map<string, number>();
  for (const note of notes) for (const w of note.words) df.set(w, (df.get(w) ?? 0) + 1);
  const maxDf = Math.max(3, Math.floor(notes.length / 4));
  const out: Query[] = [];
  const seen = new Set<string>();
  for (let attempt = 0; out.length < n && attempt < n * 50; attempt++) {
    const note = notes[Math.floor(r() * notes.length)];
    const paragraphs = note.body.split(/\n\s*\n/).filter((p) => !p.trimStart().startsWith("```"));
    if (!paragraphs.length) continue;
    const para = paragraphs[Math.floor(r() * paragraphs.length)];
    const cjk = CJK.test(para) && (para.match(new RegExp(CJK.source, "g"))?.length ?? 0) > para.length / 4;
    const want = cjk ? 3 : 4;
    const candidates = [...new Set(words(para).filter((w) => isContent(w, df, maxDf)))];
    if (candidates.length < want + 2) continue;
    const picked = new Set<number>();
    while (picked.size < want) picked.add(Math.floor(r() * candidates.length));
    const qw = [...picked].sort((a, b) => a - b).map((i) => candidates[i]);
    const holders = notes.filter((x) => qw.every((w) => x.words.has(w)));
    if (holders.length > 3 || !holders.some((x) => x.path === note.path)) continue;
    const q = qw.join(" ");
    if (seen.has(q)) continue;
    seen.add(q);
    out.push({ q, answers: [note.path], qw, para });
  }
  return out;
}

