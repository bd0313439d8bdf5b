import { describe, expect, test } from "@jest/globals";
import MiniSearch from "minisearch";
import { compactName, NameIndex, nameTokens, type NameHit } from "../../src/core/lookup/name-index";
import { basenameOf, parentOf } from "../../src/core/vault";

const visible = (): boolean => false;

function indexOf(notes: Record<string, string[]>): NameIndex {
  const ix = new NameIndex();
  for (const [path, aliases] of Object.entries(notes)) ix.add(path, aliases);
  return ix;
}

const paths = (hits: NameHit[]): string[] => hits.map((h) => h.path);

/**
 * The find_notes of before the NameIndex (MiniSearch with the same options, then the same rerank),
 * built fresh from `notes`: the NameIndex must rank as it did, whatever its history of adds, removes and merges.
 */
function oracle(notes: Map<string, string[]>, query: string, limit: number): NameHit[] {
  interface Doc {
    id: number;
    path: string;
    name: string;
    folder: string;
    alias?: string;
  }
  const ms = new MiniSearch<Doc>({
    idField: "id",
    fields: ["name", "folder"],
    storeFields: ["path", "name", "folder", "alias"],
    tokenize: nameTokens,
    processTerm: (t) => t,
    searchOptions: { tokenize: nameTokens, processTerm: (t) => t },
  });
  let id = 0;
  for (const [path, aliases] of notes) {
    ms.add({ id: id++, path, name: basenameOf(path), folder: parentOf(path) });
    for (const alias of aliases) ms.add({ id: id++, path, name: alias, folder: "", alias });
  }
  const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af\uff66-\uff9f]/;
  const hits = ms.search(query, {
    prefix: (term) => term.length >= 2 || CJK.test(term),
    fuzzy: (term) => (CJK.test(term) ? false : term.length > 7 ? 0.25 : term.length > 3 ? 1 : false),
    boost: { name: 3, folder: 1 },
    combineWith: "OR",
    weights: { fuzzy: 0.35, prefix: 0.6 },
  });
  const wanted = compactName(query.replace(/^.*\//, ""));
  const wantedPath = compactName(query);
  const qTerms = new Set(nameTokens(query));
  const best = new Map<string, NameHit & { rank: number }>();
  for (const h of hits) {
    const doc = h as unknown as Doc & { score: number };
    let score = h.score;
    const name = compactName(doc.name);
    if (name === wanted || compactName(doc.path) === wantedPath) score *= 4;
    else if (name.startsWith(wanted)) score *= 2;
    const nameTerms = new Set(nameTokens(doc.name + " " + doc.folder));
    let covered = 0;
    for (const t of qTerms) if (nameTerms.has(t)) covered++;
    if (qTerms.size > 1 && covered === qTerms.size) score *= 1.5;
    score /= 1 + Math.max(0, nameTokens(doc.name).length - qTerms.size) * 0.05;
    const prev = best.get(doc.path);
    if (!prev || score > prev.rank) {
      best.set(doc.path, { path: doc.path, title: basenameOf(doc.path), ...(doc.alias !== undefined ? { matched_alias: doc.alias } : {}), score, rank: score });
    }
  }
  return [...best.values()]
    .sort((a, b) => b.rank - a.rank || (a.path < b.path ? -1 : 1))
    .slice(0, limit)
    .map(({ rank: _rank, ...hit }) => ({ ...hit, score: Math.round(hit.score * 1000) / 1000 }));
}

/** Same ranking: equal scores (to rounding) position by position, and the same notes but for ties at the cut. */
function expectSameRanking(got: NameHit[], want: NameHit[], query: string): void {
  const ctx = `query ${JSON.stringify(query)}:\n got ${JSON.stringify(got)}\nwant ${JSON.stringify(want)}`;
  expect({ ctx, n: got.length }).toEqual({ ctx, n: want.length });
  for (let i = 0; i < got.length; i++) {
    if (Math.abs(got[i].score - want[i].score) > 0.0015) throw new Error(`score ${i} differs, ${ctx}`);
  }
  if (got.length === 0) return;
  const cut = want[want.length - 1].score;
  const strict = (hs: NameHit[]) => hs.filter((h) => Math.abs(h.score - cut) > 0.0015).map((h) => `${h.path}|${h.matched_alias ?? ""}`).sort();
  expect({ ctx, hits: strict(got) }).toEqual({ ctx, hits: strict(want) });
}

describe("NameIndex", () => {
  test("finds by exact word, prefix and typo", () => {
    const ix = indexOf({ "Projects/Garden.md": [], "Projects/Woodworking plan.md": [], "Docs/Keyboard shortcuts.md": [], "Docs/Command palette.md": [], "Gardening tools.md": [] });
    expect(ix.search("Garden", 5, visible)[0].path).toBe("Projects/Garden.md");
    expect(ix.search("garde", 5, visible)[0].path).toBe("Projects/Garden.md");
    expect(paths(ix.search("garde", 5, visible))).toContain("Gardening tools.md");
    expect(ix.search("woodwork", 5, visible)[0].path).toBe("Projects/Woodworking plan.md");
    expect(ix.search("keybord", 5, visible)[0].path).toBe("Docs/Keyboard shortcuts.md");
    expect(ix.search("comand palete", 5, visible)[0].path).toBe("Docs/Command palette.md");
    // Three letters: no typo tolerance; one letter: no prefix expansion.
    expect(ix.search("gxr", 5, visible)).toEqual([]);
    expect(ix.search("g", 5, visible)).toEqual([]);
    expect(ix.search("projects/garden", 5, visible)[0]).toMatchObject({ path: "Projects/Garden.md", score: expect.any(Number) });
  });

  test("Japanese, Chinese and Korean titles by their parts", () => {
    const ix = indexOf({ "日本語/ノートの作成.md": [], "中文/快速入门.md": [], "한국어/노트 만들기.md": [], "Mixed/API設計メモ.md": [] });
    expect(ix.search("作成", 5, visible)[0].path).toBe("日本語/ノートの作成.md");
    expect(ix.search("ノート", 5, visible)[0].path).toBe("日本語/ノートの作成.md");
    expect(ix.search("入门", 5, visible)[0].path).toBe("中文/快速入门.md");
    expect(ix.search("快", 5, visible)[0].path).toBe("中文/快速入门.md");
    expect(ix.search("노트", 5, visible)[0].path).toBe("한국어/노트 만들기.md");
    expect(ix.search("api 設計", 5, visible)[0].path).toBe("Mixed/API設計メモ.md");
  });

  test("aliases: the hit names the alias that matched; the title wins when both match", () => {
    const ix = indexOf({ "Journal/Meeting notes.md": ["Standup", "Weekly sync"], "Home.md": ["Start here"], "Standup guide.md": [] });
    expect(ix.search("standup", 5, visible)[0]).toMatchObject({ path: "Journal/Meeting notes.md", title: "Meeting notes", matched_alias: "Standup" });
    expect(ix.search("start here", 5, visible)[0]).toMatchObject({ path: "Home.md", matched_alias: "Start here" });
    expect(ix.search("meeting", 5, visible)[0].matched_alias).toBeUndefined();
    expect(ix.search("weekly", 5, visible)[0].matched_alias).toBe("Weekly sync");
    // One hit per note.
    expect(paths(ix.search("standup meeting weekly", 5, visible)).filter((p) => p === "Journal/Meeting notes.md")).toHaveLength(1);
  });

  test("renames, deletes and alias changes, before and after merges", () => {
    const ix = indexOf({ "Ideas/Birdhouse.md": ["Nest box"], "Projects/Garden.md": [], "Keep.md": ["Keeper"] });
    ix.merge();
    expect(ix.stats().overlayWords).toBe(0);
    ix.add("Ideas/Birdhouse.md", ["Bird box"]); // re-add replaces
    expect(ix.search("nest box", 5, visible).filter((h) => h.matched_alias === "Nest box")).toEqual([]);
    expect(ix.search("bird box", 5, visible)[0].matched_alias).toBe("Bird box");
    ix.remove("Projects/Garden.md");
    ix.add("Outdoors/Vegetable garden.md", []);
    expect(paths(ix.search("garden", 5, visible))).toEqual(["Outdoors/Vegetable garden.md"]);
    ix.remove("Ideas/Birdhouse.md");
    expect(ix.search("birdhouse", 5, visible)).toEqual([]);
    expect(ix.search("bird box", 5, visible).map((h) => h.matched_alias)).not.toContain("Bird box");
    // The merge drops the removed names and renumbers the rest; aliases follow their notes.
    ix.merge();
    expect(ix.stats()).toMatchObject({ overlayWords: 0, names: 3, liveNames: 3 });
    expect(ix.search("keeper", 5, visible)[0]).toMatchObject({ path: "Keep.md", matched_alias: "Keeper" });
    expect(ix.search("vegetable", 5, visible)[0].path).toBe("Outdoors/Vegetable garden.md");
    expect(ix.search("birdhouse", 5, visible)).toEqual([]);
    ix.remove("Keep.md");
    ix.remove("Outdoors/Vegetable garden.md");
    ix.merge();
    expect(ix.size).toBe(0);
    expect(ix.search("keeper", 5, visible)).toEqual([]);
    ix.add("Keep.md", ["Keeper"]);
    expect(ix.search("keeper", 5, visible)[0].matched_alias).toBe("Keeper");
  });

  test("notes whose title has no word: found by alias or folder, removed by path", () => {
    const ix = indexOf({ "!!!.md": ["Exclaim"], "Misc/---.md": [], "Misc/Real.md": [] });
    for (const merged of [false, true]) {
      if (merged) ix.merge();
      expect(ix.size).toBe(3);
      expect(ix.has("!!!.md") && ix.has("Misc/---.md") && ix.has("Misc/Real.md")).toBe(true);
      expect([...ix.notePaths()].sort()).toEqual(["!!!.md", "Misc/---.md", "Misc/Real.md"]);
      expect(ix.search("exclaim", 5, visible)[0]).toMatchObject({ path: "!!!.md", matched_alias: "Exclaim" });
      expect(paths(ix.search("misc", 5, visible))).toContain("Misc/---.md");
    }
    ix.remove("!!!.md");
    ix.remove("Misc/---.md");
    expect(ix.has("!!!.md") || ix.has("Misc/---.md")).toBe(false);
    expect(ix.search("exclaim", 5, visible)).toEqual([]);
    expect(paths(ix.search("misc", 5, visible))).toEqual(["Misc/Real.md"]);
    ix.merge();
    expect(ix.size).toBe(1);
    expect(ix.has("Misc/Real.md")).toBe(true);
  });

  test("many notes with the same title: each is removed by its own path", () => {
    const ix = new NameIndex();
    for (let i = 0; i < 300; i++) ix.add(`F${i}/README.md`, i % 3 ? [] : ["Read me"], true);
    ix.merge();
    for (let i = 0; i < 300; i += 2) ix.remove(`F${i}/README.md`);
    expect(ix.size).toBe(150);
    const left = paths(ix.search("readme", 300, visible));
    expect(left).toHaveLength(150);
    expect(left.every((p) => Number(p.slice(1, p.indexOf("/"))) % 2 === 1)).toBe(true);
    expect(ix.search("read me", 300, visible).every((h) => Number(h.path.slice(1, h.path.indexOf("/"))) % 2 === 1)).toBe(true);
  });

  test("names that are Object.prototype's properties are ordinary words", () => {
    const names = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf", "prototype"];
    const notes: Record<string, string[]> = {};
    for (const n of names) notes[`${n}/${n}.md`] = [n, `${n} alias`];
    notes["Other.md"] = ["__proto__"];
    const ix = indexOf(notes);
    for (const merged of [false, true]) {
      if (merged) ix.merge();
      for (const n of names) {
        const hits = ix.search(n, 10, visible);
        expect(hits[0]).toMatchObject({ path: `${n}/${n}.md` });
        expect(ix.search(n.slice(0, 4), 10, visible).length).toBeGreaterThan(0);
      }
      expect(paths(ix.search("__proto__", 10, visible))).toContain("Other.md");
      expect(ix.search("constructr", 3, visible)[0].path).toBe("constructor/constructor.md");
    }
    ix.remove("__proto__/__proto__.md");
    expect(paths(ix.search("__proto__", 10, visible))).toContain("Other.md");
    expect(paths(ix.search("__proto__", 10, visible))).not.toContain("__proto__/__proto__.md");
  });

  test("hidden notes never come back, and the limit holds", () => {
    const notes: Record<string, string[]> = {};
    for (let i = 0; i < 50; i++) notes[`Secret/Plan ${i}.md`] = [];
    notes["Plan.md"] = [];
    const ix = indexOf(notes);
    expect(paths(ix.search("plan", 10, (p) => p.startsWith("Secret/")))).toEqual(["Plan.md"]);
    expect(ix.search("plan", 3, visible)).toHaveLength(3);
    expect(ix.search("   ", 3, visible)).toEqual([]);
  });

  test("ranks as MiniSearch did, through random adds, removes and merges", () => {
    let seed = 7;
    const rnd = (): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x80000000;
    };
    const pick = <T>(a: readonly T[]): T => a[Math.floor(rnd() * a.length)];
    const vocab = ["garden", "gardening", "guard", "meeting", "meetings", "notes", "note", "keyboard", "shortcuts", "plan", "planning", "planet",
      "constructor", "__proto__", "tostring", "time", "timeline", "project", "projects", "daily", "2024", "01", "alpha", "alphabet",
      "作成", "ノート", "日本語", "快速", "입문", "노트", "a", "b", "x"];
    const folders = ["", "Projects", "Journal/2024", "Docs", "日本語", "constructor", "Time line"];
    const notes = new Map<string, string[]>();
    const ix = new NameIndex();
    const title = (): string => Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(vocab)).join(pick([" ", "-", "_", " "]));
    for (let step = 0; step < 600; step++) {
      const r = rnd();
      if (r < 0.7 || notes.size === 0) {
        const folder = pick(folders);
        const path = `${folder ? folder + "/" : ""}${title()}.md`;
        const aliases = rnd() < 0.2 ? [title(), ...(rnd() < 0.3 ? [title()] : [])] : [];
        notes.set(path, aliases);
        ix.add(path, aliases);
      } else {
        const path = pick([...notes.keys()]);
        notes.delete(path);
        ix.remove(path);
      }
      if (rnd() < 0.02) ix.merge();
      else ix.maybeMerge(rnd() < 0.5);
      if (step % 50 === 49) {
        for (let q = 0; q < 40; q++) {
          const base = rnd() < 0.5 ? title() : basenameOf(pick([...notes.keys()]));
          let query = base;
          const kind = rnd();
          if (kind < 0.3) query = base.slice(0, Math.max(1, Math.ceil(base.length * rnd())));
          else if (kind < 0.5 && base.length > 4) {
            const i = 1 + Math.floor(rnd() * (base.length - 2));
            query = base.slice(0, i) + base.slice(i + 1);
          } else if (kind < 0.6) query = pick(folders) + "/" + base;
          if (!query.trim()) continue;
          expectSameRanking(ix.search(query, 10, visible), oracle(notes, query, 10), query);
        }
      }
    }
  });
});
