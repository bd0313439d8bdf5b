/**
 * Notes related by meaning: the notes closest to a note (or one of its sections), and link
 * suggestions — close notes not yet linked either way, each with the sentence of this note where a
 * link would fit. Reads vectors, link maps and the note's text; changes nothing.
 */
import { own } from "../../dict";
import { backlinks } from "../../links/backlinks";
import { frontmatterAliases } from "../../metadata";
import { basenameOf, type VaultPort } from "../../vault";
import { sectionSnippet } from "../hybrid";
import type { SearchLanguage } from "../types";
import type { SemanticService } from "./semantic-service";

export interface SimilarNote {
  path: string;
  score: number;
  sections: { heading: string; content: string; line_start: number; line_end: number }[];
}

export interface LinkSuggestion {
  path: string;
  score: number;
  /** The sentence of the source note where a link would fit, and its line (1-based). */
  sentence: string;
  line: number;
  /** The words in that sentence that name the other note (its title or an alias), when it has such a mention. */
  mention?: string;
}

/** Chunks scanned for every note asked for. */
const CHUNKS_PER_NOTE = 8;
const NO_TERMS = { exact: new Set<string>(), prefixes: [] as string[] };

/**
 * The notes nearest in meaning to `path` (to its section `ordinal` when given), itself left out, each
 * with its `sectionsPerNote` closest sections. Null when the note has no vector yet.
 */
export async function similarNotes(semantic: SemanticService, port: VaultPort, path: string, limit: number, opts: { ordinal?: number; sectionsPerNote?: number; snippetWords?: number; language: SearchLanguage; exclude?: (p: string) => boolean }): Promise<SimilarNote[] | null> {
  const vector = semantic.noteVector(path, opts.ordinal);
  if (!vector) return null;
  const per = opts.sectionsPerNote ?? 1;
  const scored = semantic.nearest(vector, Math.max(limit * CHUNKS_PER_NOTE, 80), { excludePath: path });
  const notes = new Map<string, { score: number; chunks: number[] }>();
  for (const c of scored) {
    if (opts.exclude?.(c.doc.path)) continue;
    const n = notes.get(c.doc.path);
    if (!n) {
      if (notes.size >= limit) continue;
      notes.set(c.doc.path, { score: c.score, chunks: [c.ordinal] });
    } else if (n.chunks.length < per) n.chunks.push(c.ordinal);
  }
  const out: SimilarNote[] = [];
  for (const [p, n] of notes) {
    const chunks = semantic.chunksOf(p) ?? [];
    let text = "";
    try {
      text = await port.read(p);
    } catch {
      // Gone since: sections without text.
    }
    out.push({
      path: p,
      score: n.score,
      sections: n.chunks.map((o) => {
        const c = chunks[o];
        return { heading: c.heading, content: sectionSnippet(text, c.lineStart, c.lineEnd, NO_TERMS, opts.snippetWords ?? 40, opts.language), line_start: c.lineStart, line_end: c.lineEnd };
      }),
    });
  }
  return out;
}

/**
 * Notes `path` should probably link to and does not: the nearest notes not linked from it nor to it,
 * each with the sentence where a link would fit — the first plain mention of the other note's title
 * or an alias (outside links, code and frontmatter) when there is one, else the first sentence of
 * this note's section closest to the other note. Null when the note has no vector yet.
 */
export async function suggestLinks(semantic: SemanticService, port: VaultPort, path: string, limit: number, language: SearchLanguage, visible: (p: string) => boolean): Promise<LinkSuggestion[] | null> {
  const linked = new Set<string>(Object.keys(own(port.resolvedLinks(), path) ?? {}));
  for (const src of (await backlinks(port, [path])).get(path)?.keys() ?? []) linked.add(src);
  const similar = await similarNotes(semantic, port, path, limit, { language, exclude: (p) => linked.has(p) || !visible(p), snippetWords: 0 });
  if (!similar) return null;
  let text = "";
  try {
    text = await port.read(path);
  } catch {
    return [];
  }
  const lines = proseLines(text);
  const chunks = semantic.chunksOf(path) ?? [];
  const out: LinkSuggestion[] = [];
  for (const s of similar) {
    const names = [basenameOf(s.path), ...frontmatterAliases(port.getMetadata(s.path)?.frontmatter)].filter((n) => n.trim().length >= 3);
    const found = findMention(lines, names);
    if (found) {
      out.push({ path: s.path, score: round(s.score), sentence: found.sentence, line: found.line, mention: found.mention });
      continue;
    }
    // The section of this note closest to the other note: its first sentence.
    const target = semantic.noteVector(s.path);
    let best = { ordinal: 0, score: -Infinity };
    if (target) {
      for (const [o] of chunks.entries()) {
        const v = semantic.noteVector(path, o);
        if (!v) continue;
        let dot = 0;
        for (let i = 0; i < v.length; i++) dot += v[i] * target[i];
        if (dot > best.score) best = { ordinal: o, score: dot };
      }
    }
    const c = chunks[best.ordinal];
    const first = c ? lines.find((l) => l.line >= c.lineStart && l.line <= c.lineEnd) : lines[0];
    out.push({ path: s.path, score: round(s.score), sentence: first ? firstSentence(first.text) : "", line: first?.line ?? 1 });
  }
  return out;
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}

interface ProseLine {
  line: number;
  text: string;
}

/** The note's lines of prose: no frontmatter, code blocks, headings, or blank lines. */
function proseLines(text: string): ProseLine[] {
  const out: ProseLine[] = [];
  const lines = text.split(/\r?\n/);
  let i = 0;
  if (lines[0] === "---") {
    const end = lines.findIndex((l, j) => j > 0 && (l === "---" || l === "..."));
    if (end > 0) i = end + 1;
  }
  let fence: string | null = null;
  for (; i < lines.length; i++) {
    const l = lines[i];
    const f = /^ {0,3}(`{3,}|~{3,})/.exec(l);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null || !l.trim() || /^ {0,3}#{1,6}(\s|$)/.test(l)) continue;
    out.push({ line: i + 1, text: l });
  }
  return out;
}

/** The first mention of one of `names` (whole words, any case) outside links and inline code. */
function findMention(lines: ProseLine[], names: string[]): { line: number; sentence: string; mention: string } | null {
  const sorted = [...new Set(names)].sort((a, b) => b.length - a.length);
  if (!sorted.length) return null;
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(${sorted.map(escapeRegExp).join("|")})(?![\\p{L}\\p{N}])`, "iu");
  for (const l of lines) {
    // Links, embeds and inline code blanked out (same length, so offsets hold).
    const plain = l.text.replace(/!?\[\[[^\]]*\]\]|!?\[[^\]]*\]\([^)]*\)|`[^`]*`|<[^>]+>/g, (m) => " ".repeat(m.length));
    const m = pattern.exec(plain);
    if (m) return { line: l.line, sentence: sentenceAround(l.text, m.index), mention: l.text.slice(m.index, m.index + m[0].length) };
  }
  return null;
}

/** The sentence of `text` holding offset `at`. */
function sentenceAround(text: string, at: number): string {
  let a = at;
  while (a > 0 && !/[.!?\u3002\uff01\uff1f]/.test(text[a - 1])) a--;
  let b = at;
  while (b < text.length && !/[.!?\u3002\uff01\uff1f]/.test(text[b])) b++;
  return text
    .slice(a, Math.min(text.length, b + 1))
    .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, "")
    .trim();
}

function firstSentence(text: string): string {
  return sentenceAround(text, 0);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
