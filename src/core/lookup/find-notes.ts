import MiniSearch from "minisearch";
import { VaultError } from "../errors";
import { frontmatterAliases } from "../metadata";
import type { AccessPolicy } from "../policy";
import { basenameOf, isNotePath, parentOf, type VaultPort } from "../vault";
import { yieldToEventLoop } from "../time-slice";

export interface FindNotesHit {
  path: string;
  title: string;
  /** The alias that matched, when the note was found by one of its aliases rather than its title. */
  matched_alias?: string;
  score: number;
}

interface NameDoc {
  id: number;
  path: string;
  /** The title or one alias. */
  name: string;
  /** The folder path, for `Folder/Note` style queries. */
  folder: string;
  alias?: string;
}

/** What the index stores of a name: its note, and the alias when the name is one (the rest follows from them). */
interface StoredName {
  path: string;
  alias?: string;
}

const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]/;
const CJK_RUN = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]+/g;

/**
 * Words of a title or query: split on anything that is not a letter or digit; runs of CJK script
 * (which has no spaces) also give their bigrams so that part of a Japanese title finds it.
 */
export function nameTokens(text: string): string[] {
  const norm = text.normalize("NFKC").toLowerCase();
  const out: string[] = [];
  for (const word of norm.split(/[^\p{L}\p{N}\p{M}]+/u)) {
    if (!word) continue;
    if (!CJK.test(word)) {
      out.push(word);
      continue;
    }
    // Mixed words: keep the non-CJK parts whole, split CJK runs into bigrams plus the run.
    const rest = word.replace(CJK_RUN, " ").trim();
    if (rest) out.push(...rest.split(/\s+/));
    for (const run of word.match(CJK_RUN) ?? []) {
      out.push(run);
      if (run.length > 2) for (let i = 0; i + 2 <= run.length; i++) out.push(run.slice(i, i + 2));
      else if (run.length === 2) out.push(run[0], run[1]);
      else out.push(run);
    }
  }
  return out;
}

function compact(s: string): string {
  return s.normalize("NFKC").toLowerCase().replace(/\.md$/, "").replace(/[\s_-]+/g, " ").trim();
}

/** A name lookup longer than this is refused: names are short, and each word costs a fuzzy walk of the name index. */
export const MAX_NAME_QUERY_CHARS = 200;
/** Words (other than CJK characters, looked up exactly) a name lookup may have: each is matched fuzzily and as a prefix (~2–8 ms a word at 10k notes). */
export const MAX_NAME_QUERY_WORDS = 12;

/** Throws `invalid_argument` for a name lookup too long to run in bounded time. */
export function checkNameQuery(q: string): void {
  const words = nameTokens(q).filter((t) => !CJK.test(t)).length;
  if (q.length > MAX_NAME_QUERY_CHARS || words > MAX_NAME_QUERY_WORDS) {
    throw new VaultError(
      "invalid_argument",
      `find_notes looks notes up by name: give a few words of a title, alias or path (at most ${MAX_NAME_QUERY_WORDS} words and ${MAX_NAME_QUERY_CHARS} characters; this query has ${words} words and ${q.length} characters). To look for text inside notes, use search.`,
    );
  }
}

/**
 * Typo-tolerant, prefix-aware lookup of notes by title, alias and path (MiniSearch), kept up to date
 * from the vault's change events. Changes are applied lazily, at the next lookup, so a burst of
 * events costs nothing until someone asks.
 */
/** Longest stretch the first build of the name index runs before yielding to the event loop. */
const BUILD_SLICE_MS = 10;

export class NoteFinder {
  private index: MiniSearch<NameDoc> | null = null;
  /** The first build, shared by lookups that arrive while it runs. */
  private building: Promise<MiniSearch<NameDoc>> | null = null;
  /** A note's name ids: one number (its title's) when it has no alias. */
  private readonly idsByPath = new Map<string, number | number[]>();
  private readonly dirty = new Set<string>();
  private nextId = 0;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly port: VaultPort,
    private readonly policy: AccessPolicy,
  ) {
    this.unsubscribe = port.onChange((ev) => {
      if (!this.index) return;
      this.dirty.add(ev.path);
      if (ev.type === "rename") {
        this.dirty.add(ev.oldPath);
        // A folder rename moves every note under it.
        for (const p of this.idsByPath.keys()) if (p.startsWith(ev.oldPath + "/")) this.dirty.add(p);
        if (this.port.isFolder(ev.path)) {
          for (const f of this.port.listFiles()) if (f.path.startsWith(ev.path + "/")) this.dirty.add(f.path);
        }
      } else if (ev.type === "delete") {
        for (const p of this.idsByPath.keys()) if (p.startsWith(ev.path + "/")) this.dirty.add(p);
      }
    });
  }

  /** True when change events arrived that the next lookup will apply first. */
  hasPendingWork(): boolean {
    return this.dirty.size > 0;
  }

  close(): void {
    this.unsubscribe();
    this.index = null;
    this.building = null;
    this.idsByPath.clear();
  }

  /** Marks every note for re-reading (e.g. after metadata settled or settings changed). */
  invalidate(): void {
    this.index = null;
    this.building = null;
    this.idsByPath.clear();
    this.dirty.clear();
  }

  async find(query: string, limit: number): Promise<FindNotesHit[]> {
    const q = query.trim();
    if (!q) return [];
    checkNameQuery(q);
    const ms = await this.ensure();
    const hits = ms.search(q, {
      // One-letter prefixes would expand to most of the vocabulary; CJK characters are words on their own.
      prefix: (term) => term.length >= 2 || CJK.test(term),
      fuzzy: (term) => (CJK.test(term) ? false : term.length > 7 ? 0.25 : term.length > 3 ? 1 : false),
      boost: { name: 3, folder: 1 },
      combineWith: "OR",
      weights: { fuzzy: 0.35, prefix: 0.6 },
    });
    const wanted = compact(q.replace(/^.*\//, ""));
    const wantedPath = compact(q);
    const qTerms = new Set(nameTokens(q));
    const best = new Map<string, FindNotesHit & { rank: number }>();
    for (const h of hits) {
      const stored = h as unknown as StoredName & { score: number };
      const doc = nameDoc(stored);
      if (this.policy.isHidden(doc.path)) continue;
      let score = h.score;
      const name = compact(doc.name);
      // Exact and whole-prefix matches of the name come first; so does the full path.
      if (name === wanted || compact(doc.path) === wantedPath) score *= 4;
      else if (name.startsWith(wanted)) score *= 2;
      // Reward names that contain every query word (AND beats OR).
      const nameTerms = new Set(nameTokens(doc.name + " " + doc.folder));
      let covered = 0;
      for (const t of qTerms) if (nameTerms.has(t)) covered++;
      if (qTerms.size > 1 && covered === qTerms.size) score *= 1.5;
      // Short names that match are more likely what was meant than long ones that mention the word.
      score /= 1 + Math.max(0, nameTokens(doc.name).length - qTerms.size) * 0.05;
      const prev = best.get(doc.path);
      if (!prev || score > prev.rank) {
        best.set(doc.path, {
          path: doc.path,
          title: basenameOf(doc.path),
          ...(doc.alias !== undefined ? { matched_alias: doc.alias } : {}),
          score,
          rank: score,
        });
      }
    }
    return [...best.values()]
      .sort((a, b) => b.rank - a.rank || (a.path < b.path ? -1 : 1))
      .slice(0, limit)
      .map(({ rank: _rank, ...hit }) => ({ ...hit, score: round(hit.score) }));
  }

  /**
   * The name index, up to date. The first build runs in time slices (Obsidian runs plugins on its UI
   * thread: no task may block it for long); later changes are applied at once (they are few).
   */
  private async ensure(): Promise<MiniSearch<NameDoc>> {
    // The index object exists from the build's first slice (so changes arriving meanwhile are
    // recorded), but it is complete only when the build is done.
    while (!this.index || this.building) {
      const build = (this.building ??= this.build());
      await build;
      if (this.building === build) this.building = null;
    }
    const index = this.index;
    if (this.dirty.size > 0) {
      const paths = [...this.dirty];
      this.dirty.clear();
      for (const p of paths) {
        this.remove(p);
        if (isNotePath(p) && !this.policy.isHidden(p) && this.port.stat(p)) this.add(p);
      }
    }
    return index;
  }

  private async build(): Promise<MiniSearch<NameDoc>> {
    const index = new MiniSearch<NameDoc>({
      idField: "id",
      fields: ["name", "folder"],
      // Only the path and the alias (the name and folder follow from them), and numeric ids: at 20k
      // notes the name index took 22.5 MB of heap, now 19.8 MB; most of the rest is MiniSearch's two
      // Maps per distinct word.
      storeFields: ["path", "alias"],
      tokenize: nameTokens,
      processTerm: (t) => t,
      searchOptions: { tokenize: nameTokens, processTerm: (t) => t },
    });
    this.index = index;
    this.idsByPath.clear();
    this.dirty.clear();
    const paths = this.port.listFiles().filter((f) => isNotePath(f.path) && !this.policy.isHidden(f.path)).map((f) => f.path);
    let sliceStart = Date.now();
    for (const p of paths) {
      if (this.index !== index) return index; // closed or invalidated meanwhile
      this.add(p);
      if (Date.now() - sliceStart >= BUILD_SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = Date.now();
      }
    }
    return index;
  }

  private add(path: string): void {
    const ms = this.index!;
    const folder = parentOf(path);
    const docs: NameDoc[] = [{ id: this.nextId++, path, name: basenameOf(path), folder }];
    for (const alias of frontmatterAliases(this.port.getMetadata(path)?.frontmatter)) {
      docs.push({ id: this.nextId++, path, name: alias, folder: "", alias });
    }
    for (const d of docs) ms.add(d);
    this.idsByPath.set(path, docs.length === 1 ? docs[0].id : docs.map((d) => d.id));
  }

  private remove(path: string): void {
    const ids = this.idsByPath.get(path);
    if (!ids) return;
    for (const id of typeof ids === "number" ? [ids] : ids) if (this.index!.has(id)) this.index!.discard(id);
    this.idsByPath.delete(path);
  }
}

/** A stored name as the document it was indexed from. */
function nameDoc(s: StoredName): NameDoc {
  return s.alias !== undefined ? { id: 0, path: s.path, name: s.alias, folder: "", alias: s.alias } : { id: 0, path: s.path, name: basenameOf(s.path), folder: parentOf(s.path) };
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}
