/**
 * The hits' sections' contents, cut from their notes as they are now: the index holds no chunk texts
 * (at 100k notes they were 226 MB of memory, and more than half of the saved index). A search ranks
 * from the index alone (score.ts leaves each section's `content` empty and lists it as pending), then
 * reads only its hits' notes, in parallel, and cuts each section out of its note by the lines the
 * index stored. Owns the reading and the cutting; it never changes the index.
 */
import { hash53 } from "../../hash";
import { chunkNote } from "../chunk";
import type { Chunk, SearchLanguage, SearchResponse, SearchSection } from "../types";
import type { ChunkReader } from "./chunk-reader";
import { LINE_A, LINE_B, span, type DocEntry } from "./doc";
import type { WantedIds } from "./snippet";

/** A hit's section whose `content` is still to be cut from its note. */
export interface PendingSection {
  section: SearchSection;
  doc: DocEntry;
  /** The chunk's place in its note. */
  o: number;
}

/** A search's answer before its sections' contents are filled in (see `fillSections`). */
export interface KeywordAnswer {
  res: SearchResponse;
  pending: PendingSection[];
  /** The query's terms (null when there is nothing pending). */
  want: WantedIds | null;
}

/** A note's text as it is now, or null when it cannot be read (gone, grown past the size limit, unreadable). */
export type NoteTextReader = (path: string) => Promise<string | null>;

export interface SectionOptions {
  /** Words per snippet (0: the whole section). */
  words: number;
  language: SearchLanguage;
  /** The chunker's soft cap of words per chunk (as the index was built). */
  chunkWords: number;
}

/** The longest note (in UTF-16 units) hashed to tell whether its snippets may stop at their window's end. */
const HASH_FOR_SNIPPETS_MAX = 16_384;

/**
 * Fills the pending sections' contents from their notes, each note read once, all at once. A note
 * changed since it was indexed gives the current text of the section's stored lines (the index
 * catches up with the change on its own); one that cannot be read leaves its sections empty.
 */
export async function fillSections(reader: ChunkReader, a: KeywordAnswer, read: NoteTextReader, opts: SectionOptions): Promise<SearchResponse> {
  if (!a.pending.length || !a.want) return a.res;
  const byDoc = new Map<DocEntry, PendingSection[]>();
  for (const p of a.pending) {
    const list = byDoc.get(p.doc);
    if (list) list.push(p);
    else byDoc.set(p.doc, [p]);
  }
  const docs = [...byDoc.keys()];
  const texts = await Promise.all(docs.map((d) => read(d.path).catch(() => null)));
  for (let i = 0; i < docs.length; i++) {
    const text = texts[i];
    if (text === null) continue;
    const doc = docs[i];
    // Unchanged since it was indexed: a snippet then reads its section only up to its window. Hashing
    // a note of a few KB takes a few µs, tokenizing the rest of a long section tens; a longer note
    // is not hashed for this (its sections are tokenized whole, as a changed note's are).
    let same: boolean | undefined;
    const unchanged = (): boolean => (same ??= hash53(text) === doc.hash);
    const asIndexed = text.length <= HASH_FOR_SNIPPETS_MAX && unchanged();
    let chunks: Chunk[] | null | undefined;
    // The note cut again exactly as it was indexed, when it is unchanged (only for a piece of a long line).
    const rechunk = (): Chunk[] | null => {
      if (chunks === undefined) {
        chunks = unchanged() ? chunkNote(doc.path, text, null, { maxWords: opts.chunkWords }) : null;
        if (chunks && chunks.length !== doc.chunks) chunks = null;
      }
      return chunks;
    };
    for (const p of byDoc.get(doc)!) {
      p.section.content = reader.sectionSnippet(doc, p.o, sectionText(doc, p.o, text, rechunk), a.want, opts.words, opts.language, asIndexed);
    }
  }
  return a.res;
}

/**
 * Chunk `o`'s text in `text` (its note as read now): its stored lines, as chunk.ts joins them. A
 * chunk sharing its one line with a neighbour is a piece of a line too long for one chunk: it is
 * found by cutting the note again when the note is unchanged, else it is the whole line.
 */
export function sectionText(doc: DocEntry, o: number, text: string, rechunk: () => Chunk[] | null): string {
  const a = span(doc, o, LINE_A);
  const b = span(doc, o, LINE_B);
  if (a === b) {
    const n = doc.chunks;
    const piece = (o > 0 && span(doc, o - 1, LINE_B) === a) || (o + 1 < n && span(doc, o + 1, LINE_A) === a);
    if (piece) {
      const c = rechunk();
      if (c) return c[o].text;
    }
  }
  return linesOf(text, a, b);
}

/** Lines `a`..`b` (1-based, inclusive) of `text`, without their line ends or a leading BOM. */
export function linesOf(text: string, a: number, b: number): string {
  let s = 0;
  for (let l = 1; l < a; l++) {
    const j = text.indexOf("\n", s);
    if (j < 0) return "";
    s = j + 1;
  }
  let e = s;
  for (let l = a; ; l++) {
    const j = text.indexOf("\n", e);
    if (j < 0) {
      e = text.length;
      break;
    }
    if (l >= b) {
      e = j;
      break;
    }
    e = j + 1;
  }
  if (s === 0 && text.charCodeAt(0) === 0xfeff) s = 1;
  const out = text.slice(s, e);
  return out.includes("\r") ? out.replace(/\r(?=\n|$)/g, "") : out;
}
