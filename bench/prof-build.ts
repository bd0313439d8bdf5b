/**
 * Profiling helper (not part of `npm run bench`): times the build's stages on a generated vault.
 *   npx esbuild bench/prof-build.ts --bundle --platform=node --outfile=/tmp/prof.js --loader:.wasm=binary && node /tmp/prof.js <dir> [notes]
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { chunkNote, tokenize } from "../src/core/search";
import { generateVault } from "./generate";

function walk(dir: string, out: string[] = []): string[] {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p, out);
    else if (p.endsWith(".md")) out.push(p);
  }
  return out;
}

const root = process.argv[2] ?? "/tmp/h9/vault-10k";
const n = Number(process.argv[3] ?? 10000);
if (!existsSync(root)) generateVault(root, n, 42);
const files = walk(root);
let t = performance.now();
const texts = files.map((f) => readFileSync(f, "utf8"));
const readMs = performance.now() - t;
t = performance.now();
const chunks = texts.map((s, i) => chunkNote(files[i], s, null));
const chunkMs = performance.now() - t;
t = performance.now();
let tokens = 0;
for (const cs of chunks) for (const c of cs) tokens += tokenize(c.text).length;
const tokMs = performance.now() - t;
t = performance.now();
for (const cs of chunks) for (const c of cs) tokens += tokenize(c.text).length;
const tok2Ms = performance.now() - t;
t = performance.now();
for (const cs of chunks) for (const c of cs) tokens += tokenize(c.text).length;
const tok3Ms = performance.now() - t;
process.stdout.write(JSON.stringify({ tok3Ms, files: files.length, MB: texts.reduce((s, x) => s + x.length, 0) / 1e6, readMs, chunkMs, tokMs, tok2Ms, tokens }) + "\n");
