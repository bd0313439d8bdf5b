/**
 * A varied vault for memory and speed at scale (not part of `npm run bench`): the bench's generated
 * vaults have a small vocabulary (~30k terms at 100k notes), where a real vault's dictionary is
 * mostly rare terms. This one has skewed note sizes (most short, 2% of 40–120 paragraphs, 0.2% of
 * 400–1,200), numbers, hex ids, URLs, code blocks, block ids, CJK notes (6%), emoji, folders up to
 * five deep, 10k attachments, varied frontmatter, and names a plain object would trip on
 * (`constructor`, `__proto__`). At 100k notes: 359 MB of Markdown, 4.65M terms. Seeded: the same
 * arguments always give the same vault. `npm run bench -- --server 100k --server-only --varied`
 * spawns the headless server on it (`--keep` keeps it).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { rng } from "./generate";

export function generateVariedVault(root: string, notes: number, seed = 12345): void {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)];
  const syl = ["ka", "lo", "mi", "ren", "tas", "vor", "quil", "bra", "sen", "dor", "ix", "ul", "fen", "gar", "po", "zy", "the", "and", "mar", "tol"];
  const vocab: string[] = [];
  const seen = new Set<string>();
  while (vocab.length < 60_000) {
    let w = "";
    const n = 1 + Math.floor(r() * 4);
    for (let i = 0; i < n; i++) w += pick(syl);
    if (!seen.has(w)) {
      seen.add(w);
      vocab.push(w);
    }
  }
  const common = "the of and to a in is that for it as was with be by on not this are or at from but have an which one you were all we there would their will".split(" ");
  const rare = () => vocab[Math.floor(Math.pow(r(), 3) * vocab.length)];
  const word = () => (r() < 0.4 ? pick(common) : rare());
  const hex = (n: number) => {
    let h = "";
    for (let i = 0; i < n; i++) h += "0123456789abcdef"[Math.floor(r() * 16)];
    return h;
  };
  const cjk = (n: number) => {
    let t = "";
    for (let i = 0; i < n; i++) t += String.fromCharCode(0x4e00 + Math.floor(Math.pow(r(), 2) * 3000));
    return t;
  };
  const folders: string[] = [];
  for (let i = 0; i < 1500; i++) {
    const parts: string[] = [];
    for (let j = 0, d = 1 + Math.floor(r() * 5); j < d; j++) parts.push(pick(["Projects", "Areas", "Archive", "Daily", "Clips", "Ref", "日記", "Zettel", "constructor", "__proto__"]) + (r() < 0.7 ? " " + rare() : ""));
    folders.push(parts.join("/"));
  }
  const titles: string[] = [];
  for (let i = 0; i < notes; i++) titles.push((r() < 0.05 ? cjk(2 + Math.floor(r() * 4)) : [rare(), word(), rare()].slice(0, 1 + Math.floor(r() * 3)).join(" ")) + " " + i.toString(36));
  ["constructor", "__proto__", "toString", "hasOwnProperty"].forEach((t, k) => k < notes && (titles[k] = t));
  const attachments: string[] = [];
  mkdirSync(path.join(root, "Attachments"), { recursive: true });
  for (let i = 0; i < 10_000; i++) {
    const a = `att-${hex(8)}.${pick(["png", "pdf", "jpg"])}`;
    attachments.push(a);
    writeFileSync(path.join(root, "Attachments", a), Buffer.alloc(64 + Math.floor(r() * 512), 7));
  }
  const paragraph = (inCjk: boolean): string => {
    if (inCjk) return cjk(40 + Math.floor(r() * 120)) + "。";
    const out: string[] = [];
    for (let i = 0, n = 15 + Math.floor(r() * 60); i < n; i++) {
      const x = r();
      out.push(
        x < 0.01 ? `https://example.${pick(["com", "org", "io"])}/${rare()}/${hex(10)}?id=${Math.floor(r() * 1e6)}`
        : x < 0.03 ? String(Math.floor(r() * 1e7))
        : x < 0.035 ? hex(40)
        : x < 0.05 ? `[[${pick(titles)}${r() < 0.2 ? "#" + rare() : ""}${r() < 0.2 ? "|" + rare() : ""}]]`
        : x < 0.052 ? `![[${pick(attachments)}]]`
        : x < 0.06 ? `#${rare()}`
        : x < 0.062 ? "🚀"
        : word(),
      );
    }
    return out.join(" ") + ".";
  };
  const keys = ["tags", "aliases", "status", "created", "updated", "source", "rating", "project", "constructor", "__proto__", "author", "url", "done", "priority"];
  for (let i = 0; i < notes; i++) {
    const dir = r() < 0.1 ? "" : pick(folders);
    const inCjk = r() < 0.06;
    const u = r();
    const paras = u < 0.002 ? 400 + Math.floor(r() * 800) : u < 0.02 ? 40 + Math.floor(r() * 80) : 1 + Math.floor(-Math.log(r()) * 5);
    let t = "---\n";
    for (let k = 0, nk = Math.floor(r() * 8); k < nk; k++) t += `${pick(keys)}: ${r() < 0.3 ? `[${rare()}, ${rare()}]` : r() < 0.5 ? Math.floor(r() * 100) : rare()}\n`;
    t += "---\n# " + titles[i] + "\n\n";
    for (let p = 0; p < paras; p++) {
      if (r() < 0.15) t += `${"#".repeat(2 + Math.floor(r() * 3))} ${inCjk ? cjk(4) : rare() + " " + word()}\n\n`;
      if (r() < 0.05) t += '```js\nconst x = "' + hex(32) + '"; // ' + rare() + "\n```\n\n";
      if (r() < 0.1) t += `- [ ] ${paragraph(false).slice(0, 80)}\n- ${rare()} ${word()}\n\n`;
      t += paragraph(inCjk) + (r() < 0.05 ? ` ^${hex(6)}` : "") + "\n\n";
    }
    const file = path.join(root, dir, titles[i].replace(/[\\/:*?"<>|#^[\]]/g, "_") + ".md");
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, t);
  }
}

/** The varied vault's search queries: 1–3 words (cut to 6 characters) of random notes, seeded. */
export function variedQueries(root: string, n: number, seed = 7): string[] {
  const files: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (p.endsWith(".md")) files.push(p);
    }
  };
  walk(root);
  files.sort();
  const r = rng(seed);
  const out: string[] = [];
  for (let tries = 0; out.length < n && tries < n * 50; tries++) {
    const words = readFileSync(files[Math.floor(r() * files.length)], "utf8").match(/[\p{L}\p{N}]{2,}/gu) ?? [];
    if (words.length < 4) continue;
    const k = 1 + Math.floor(r() * 3);
    const i = Math.floor(r() * (words.length - k));
    out.push(words.slice(i, i + k).map((w) => w.slice(0, 6)).join(" "));
  }
  return out;
}
