/**
 * Analysis helper (not part of `npm run quality`): the known-item queries of bench/quality.ts (same
 * generation, seed 1, 200 queries) that our search ranks below 1, classified, and the ceiling the
 * vault allows: queries whose paragraph is in 2+ notes, and queries with a "twin" (another note
 * holding the query's words exactly as often, its length within 15%: nothing in the words tells them
 * apart), each counted 1/(1 + twins) as a tie broken at random. -v lists each miss.
 *   npx esbuild bench/analyze-misses.ts --bundle --platform=node --target=node20 --outfile=/tmp/am.js --loader:.wasm=binary
 *   node /tmp/am.js <vault> [-v]
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import YAML from "yaml";
import { AccessPolicy } from "../src/core/policy";
import { createSearchService } from "../src/core/search";
import { MemoryStateStore } from "../src/core/state";
import { useHostTimers } from "../src/core/timers";
import { nodeTimers } from "../src/hosts/common/node-timers";
import { FsVault } from "../src/hosts/node/fs-vault";
import { rng } from "./generate";

interface Note { path: string; title: string; aliases: string[]; body: string; words: Set<string>; list: string[] }
const STOP = new Set(
  "a about above after again against all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other our ours out over own same she should so some such than that the their theirs them then there these they this those through to too under until up very was we were what when where which while who whom why will with would you your yours also may use used using like one two new see get set make".split(" "),
);
const CJK = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/;
const segmenter = new Intl.Segmenter("und", { granularity: "word" });
function words(text: string): string[] {
  const out: string[] = [];
  for (const line of text.split("\n")) for (let i = 0; i < line.length; i += 2000) for (const s of segmenter.segment(line.slice(i, i + 2000))) if (s.isWordLike) out.push(s.segment.toLowerCase());
  return out;
}
function readNotes(root: string): Note[] {
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
function isContent(w: string, df: Map<string, number>, maxDf: number): boolean {
  if (STOP.has(w) || /^[\d._,:-]+$/.test(w)) return false;
  if (w.length < (CJK.test(w) ? 2 : 3)) return false;
  return (df.get(w) ?? 0) <= maxDf;
}
interface Q { q: string; qw: string[]; answer: string; para: string }
function knownItemQueries(notes: Note[], n: number, seed: number): Q[] {
  const r = rng(seed);
  const df = new Map<string, number>();
  for (const note of notes) for (const w of note.words) df.set(w, (df.get(w) ?? 0) + 1);
  const maxDf = Math.max(3, Math.floor(notes.length / 4));
  const out: Q[] = [];
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
    out.push({ q, qw, answer: note.path, para });
  }
  return out;
}
const norm = (s: string) => words(s).join(" ");

async function main(): Promise<void> {
  useHostTimers(nodeTimers);
  const root = process.argv[2];
  const verbose = process.argv.includes("-v");
  const notes = readNotes(root);
  const byPath = new Map(notes.map((n) => [n.path, n]));
  const known = knownItemQueries(notes, 200, 1);
  const vault = await FsVault.open(root, { watch: false });
  const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
  const search = createSearchService({ port: vault, policy, store: new MemoryStateStore(), sqlWasm });
  await search.start();
  await search.waitForIdle(30 * 60_000);
  const kinds = new Map<string, number>();
  let rr = 0;
  let ceiling = 0;
  let ambiguous = 0;
  let twinCeiling = 0;
  let twinQueries = 0;
  for (const q of known) {
    const hits = (await search.search({ query: q.q, limit: 10, chunksPerFile: 1, snippetWords: 18 })).hits;
    const top = hits.map((h) => h.path);
    const i = top.indexOf(q.answer);
    rr += i < 0 ? 0 : 1 / (i + 1);
    const holders = notes.filter((x) => q.qw.every((w) => x.words.has(w)));
    const ans = byPath.get(q.answer)!;
    const np = norm(q.para);
    // Notes holding the source paragraph too (its words, in order), and notes holding the query words as often as the answer.
    const dupPara = holders.filter((h) => h.path !== q.answer && norm(h.title + "\n" + h.body).includes(np));
    const tf = (n: Note) => q.qw.map((w) => n.list.filter((x) => x === w).length).join(",");
    const sameTf = holders.filter((h) => h.path !== q.answer && tf(h) === tf(ans));
    // Twins: holders with the query words exactly as often as the answer and a length within 15%:
    // nothing in the words tells them apart (a copy, a note made from the same template).
    const twins = holders.filter((h) => h.path !== q.answer && tf(h) === tf(ans) && Math.abs(h.list.length - ans.list.length) <= 0.15 * ans.list.length);
    twinCeiling += 1 / (1 + twins.length);
    if (twins.length) twinQueries++;
    const amb = dupPara.length > 0;
    if (amb) ambiguous++;
    ceiling += amb ? 1 / (1 + dupPara.length) : 1;
    if (i === 0) continue;
    const first = byPath.get(top[0] ?? "");
    let kind: string;
    if (i < 0) kind = "not in top 10";
    else if (twins.some((d) => d.path === top[0])) kind = "a twin ranks first (same counts, length within 15%)";
    else if (dupPara.some((d) => d.path === top[0])) kind = "the paragraph is also in the note ranked first";
    else if (sameTf.some((d) => d.path === top[0])) kind = "the note ranked first holds the words as often";
    else if (first && q.qw.every((w) => first.words.has(w))) kind = "another holder of all the words ranks first";
    else kind = "a note holding only some of the words ranks first";
    kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    if (verbose) {
      const d = (n: Note | undefined) => (n ? `${n.path} [${n.list.length} words, tf ${tf(n)}, title hits ${q.qw.filter((w) => words(n.title).includes(w)).length}]` : "-");
      process.stdout.write(`rank ${i < 0 ? "-" : i + 1}: "${q.q}" (${holders.length} holders, ${dupPara.length} with the paragraph)\n   answer ${d(ans)}\n   first  ${d(first)}\n`);
    }
  }
  process.stdout.write(`${path.basename(root)}: ${known.length} queries, MRR@10 ${(rr / known.length).toFixed(3)}; paragraph in 2+ notes: ${ambiguous} (ceiling MRR ${(ceiling / known.length).toFixed(3)} when such ties are broken at random); with a twin: ${twinQueries} (ceiling ${(twinCeiling / known.length).toFixed(3)})\n`);
  for (const [k, v] of kinds) process.stdout.write(`  ${v} ${k}\n`);
  process.exit(0);
}
void main();
