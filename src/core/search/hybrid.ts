/**
 * Semantic and hybrid answers in the keyword search's shape: nearest chunks grouped one entry per
 * note, and reciprocal rank fusion (k = 60) of the keyword and semantic chunk rankings, then grouped.
 * Owns the fusion and the grouping; each engine ranks on its own, and this reads notes only for snippets.
 */
import { isNotePath, type VaultPort } from "../vault";
import { positiveTermSet, snippet, type TermSet } from "./keyword/snippet";
import { parseQuery } from "./query";
import type { SearchLanguage, SearchRequest, SearchService } from "./types";
import type { SemanticService } from "./vector/semantic-service";
import type { ChunkScore, ScanFilter } from "./vector/vector-index";

/** The constant of reciprocal rank fusion: a chunk ranked r-th by an engine adds 1 / (RRF_K + r). */
export const RRF_K = 60;
/**
 * Notes are fused by reciprocal rank too, 1 / (NOTE_RRF_K + r), the semantic ranking weighing
 * SEMANTIC_WEIGHT against keyword's 1: keyword's confident top ranks stand (a small constant keeps
 * its first ranks far apart), semantic search reorders close ones and adds what keyword missed.
 * Measured with the deterministic embedder (docs/quality.md): equal weights and k = 60 cost help-en's
 * keyword-style queries 0.17 MRR@10, a semantic weight of 0.2 cost zh 0.017, 0.1 nothing. (Giving
 * semantic full weight whenever no note holds every word cost navigational queries 0.08.)
 */
export const NOTE_RRF_K = 5;
export const SEMANTIC_WEIGHT = 0.1;

export type EngineName = "keyword" | "semantic";

export interface RankedSection {
  heading: string;
  content: string;
  line_start: number;
  line_end: number;
  found_by: EngineName[];
}

export interface RankedHit {
  path: string;
  score: number;
  sections: RankedSection[];
  found_by: EngineName[];
  missing?: string[];
}

export interface RankedResponse {
  hits: RankedHit[];
  total_files: number;
}

/** A chunk as both engines name it: its note and first line (both cut notes the same way). */
interface RankedChunk {
  path: string;
  heading: string;
  lineStart: number;
  lineEnd: number;
  /** The keyword engine's snippet, when it found the chunk. */
  content?: string;
  missing?: string[];
}

/** Chunks the semantic engine ranks for every note asked for (a note's best chunks come from these). */
const SEMANTIC_CHUNKS_PER_HIT = 8;

/** The sections nearest to `vector` that the request's folder and filters allow, a few per note asked for. */
function nearestChunks(semantic: SemanticService, req: SearchRequest, vector: Float32Array): ChunkScore[] {
  const filter: ScanFilter = { folder: req.folder || undefined, filters: req.filters };
  return semantic.nearest(vector, Math.max(req.limit * SEMANTIC_CHUNKS_PER_HIT, 100), filter);
}

function fromVectors(scored: ChunkScore[]): RankedChunk[] {
  return scored.map((c) => {
    const ch = c.doc.chunks[c.ordinal];
    return { path: c.doc.path, heading: ch.heading, lineStart: ch.lineStart, lineEnd: ch.lineEnd };
  });
}

/** The nearest chunks to the query's vector, one entry per note with its best sections. */
export async function semanticSearch(semantic: SemanticService, port: VaultPort, req: SearchRequest, vector: Float32Array, language: SearchLanguage): Promise<RankedResponse> {
  const scored = nearestChunks(semantic, req, vector);
  const chunks = fromVectors(scored);
  const scores = new Map<RankedChunk, { score: number; by: Set<EngineName> }>();
  chunks.forEach((c, i) => scores.set(c, { score: scored[i].score, by: new Set(["semantic"]) }));
  return group(chunks, scores, req, port, language);
}

/**
 * Keyword and semantic rankings of chunks fused by reciprocal rank (each engine ranks a few times
 * more chunks than asked for), then grouped one entry per note, notes ranked by their own fused score
 * (see NOTE_RRF_K).
 */
export async function hybridSearch(keyword: SearchService, semantic: SemanticService, port: VaultPort, req: SearchRequest, vector: Float32Array | null, language: SearchLanguage): Promise<RankedResponse> {
  const depth = Math.max(req.limit * 3, 30);
  const kw = await keyword.search({ ...req, limit: depth, chunksPerFile: Math.max(req.chunksPerFile, 3) });
  // The keyword engine ranks notes, each with its best sections: every note's best section first,
  // in the notes' order, then the second best ones, and so on.
  const kwChunks: RankedChunk[] = [];
  for (let i = 0; kw.hits.some((h) => h.sections.length > i); i++) {
    for (const h of kw.hits) {
      const s = h.sections[i];
      if (s) kwChunks.push({ path: h.path, heading: s.heading, lineStart: s.line_start, lineEnd: s.line_end, content: s.content, missing: h.missing });
    }
  }
  const semChunks = vector ? fromVectors(nearestChunks(semantic, req, vector)) : [];
  const byKey = new Map<string, RankedChunk>();
  const scores = new Map<RankedChunk, { score: number; by: Set<EngineName> }>();
  const add = (list: RankedChunk[], engine: EngineName) => {
    list.forEach((c, rank) => {
      const key = `${c.path}\n${c.lineStart}`;
      let own = byKey.get(key);
      if (!own) {
        own = c;
        byKey.set(key, c);
        scores.set(c, { score: 0, by: new Set() });
      } else if (c.content !== undefined && own.content === undefined) {
        own.content = c.content;
        own.missing = c.missing;
      }
      const s = scores.get(own)!;
      if (s.by.has(engine)) return;
      s.by.add(engine);
      s.score += 1 / (RRF_K + rank + 1);
    });
  };
  add(kwChunks, "keyword");
  add(semChunks, "semantic");
  // Notes rank by their own fused score: reciprocal ranks of the note in each engine's ranking of
  // notes (keyword ranks notes; semantic, by its best chunk), the semantic one weighing SEMANTIC_WEIGHT.
  const noteScore = new Map<string, number>();
  const addNotes = (paths: string[], w: number) => {
    const seen = new Set<string>();
    for (const p of paths) {
      if (seen.has(p)) continue;
      noteScore.set(p, (noteScore.get(p) ?? 0) + w / (NOTE_RRF_K + seen.size + 1));
      seen.add(p);
    }
  };
  addNotes(
    kw.hits.map((h) => h.path),
    1,
  );
  addNotes(
    semChunks.map((c) => c.path),
    SEMANTIC_WEIGHT,
  );
  const fused = [...byKey.values()].sort(
    (a, b) =>
      noteScore.get(b.path)! - noteScore.get(a.path)! ||
      (a.path < b.path ? -1 : a.path > b.path ? 1 : 0) ||
      scores.get(b)!.score - scores.get(a)!.score ||
      a.lineStart - b.lineStart,
  );
  return group(fused, scores, req, port, language, noteScore);
}

/** Chunks (best first) grouped one entry per note, with their sections' snippets. */
async function group(
  chunks: RankedChunk[],
  scores: Map<RankedChunk, { score: number; by: Set<EngineName> }>,
  req: SearchRequest,
  port: VaultPort,
  language: SearchLanguage,
  noteScore?: Map<string, number>,
): Promise<RankedResponse> {
  const notes = new Map<string, RankedChunk[]>();
  for (const c of chunks) {
    const list = notes.get(c.path);
    if (!list) notes.set(c.path, [c]);
    else if (list.length < req.chunksPerFile) list.push(c);
  }
  const want = positiveTermSet(parseQuery(req.query, language), language);
  const hits: RankedHit[] = [];
  for (const [path, list] of notes) {
    if (hits.length >= req.limit) break;
    const text = list.some((c) => c.content === undefined) ? await readText(port, path) : null;
    const by = new Set<EngineName>();
    const sections = list.map((c) => {
      const s = scores.get(c)!;
      for (const e of s.by) by.add(e);
      return {
        heading: c.heading,
        content: c.content ?? sectionSnippet(text ?? "", c.lineStart, c.lineEnd, want, req.snippetWords, language),
        line_start: c.lineStart,
        line_end: c.lineEnd,
        found_by: [...s.by].sort(),
      };
    });
    const missing = list.find((c) => c.missing)?.missing;
    hits.push({ path, score: noteScore?.get(path) ?? scores.get(list[0])!.score, sections, found_by: [...by].sort(), ...(missing && !by.has("semantic") ? { missing } : {}) });
  }
  return { hits, total_files: notes.size };
}

async function readText(port: VaultPort, path: string): Promise<string> {
  if (!isNotePath(path)) return "";
  try {
    return await port.read(path);
  } catch {
    return "";
  }
}

/**
 * A section's snippet cut from the note's text: its lines without the heading line, centred on the
 * query's words when it has any (the start otherwise), `words` long (0: the whole section).
 */
export function sectionSnippet(text: string, lineStart: number, lineEnd: number, want: TermSet, words: number, language: SearchLanguage): string {
  const lines = text.split("\n").slice(Math.max(0, lineStart - 1), lineEnd);
  if (lines.length && /^ {0,3}#{1,6}(\s|$)/.test(lines[0])) lines.shift();
  const body = lines.join("\n").trim();
  return snippet(body, want, words, language);
}
