/**
 * Analysis helper (not part of `npm run quality`): the known-item queries of bench/quality.ts (same
 * generation, seed 1, 200 queries) that our search ranks below 1, classified, and the ceiling the
 * vault allows: queries whose paragraph is in 2+ notes, and queries with a "twin" (another note
 * holding the query's words exactly as often, its length within 15%: nothing in the words tells them
 * apart), each counted 1/(1 + twins) as a tie broken at random. -v lists each miss.
 *   npx esbuild bench/analyze-misses.ts --bundle --platform=node --target=node20 --outfile=/tmp/am.js --loader:.wasm=binary
 *   node /tmp/am.js <vault> [-v]
 */
import path from "node:path";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { AccessPolicy } from "../src/core/policy";
import { createSearchService } from "../src/core/search";
import { MemoryStateStore } from "../src/core/state";
import { useHostTimers } from "../src/core/timers";
import { nodeTimers } from "../src/hosts/common/node-timers";
import { FsVault } from "../src/hosts/node/fs-vault";
import { knownItemQueries, readNotes, words, type Note } from "./vault-text";

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
  for (const k of known) {
    // Known-item queries carry their words and paragraph.
    const q = { q: k.q, answer: k.answers[0], qw: k.qw!, para: k.para! };
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
