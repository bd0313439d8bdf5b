/**
 * The source's import graph: no circles, inside a layer or across layers (lint keeps the layers'
 * directions; this keeps a layer's own modules from going round). Type-only imports count too: a
 * circle of types is still a circle in the design. Read from the files as they are, no dependency.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";

const SRC = path.join(__dirname, "..", "..", "src");

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (/\.tsx?$/.test(e.name) && !e.name.endsWith(".d.ts")) out.push(p);
  }
  return out;
}

/** The relative modules `file` imports or re-exports, as files (`x`, `x.ts`, `x/index.ts`). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const out: string[] = [];
  // `import … from "…"`, `export … from "…"`, `import "…"`, `import("…")`, over several lines.
  const re = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.{1,2}\/[^"']+)["']/g;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const base = path.resolve(path.dirname(file), m[1]);
    const found = [base, `${base}.ts`, `${base}.tsx`, path.join(base, "index.ts")].find((c) => {
      try {
        return statSync(c).isFile();
      } catch {
        return false;
      }
    });
    if (found && /\.tsx?$/.test(found)) out.push(found);
  }
  return out;
}

/** The strongly connected components of more than one module, or of one importing itself (Tarjan). */
function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || (graph.get(v) ?? []).includes(v)) out.push(c.map((f) => path.relative(SRC, f)).sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out;
}

describe("the import graph", () => {
  test("finds a circle where there is one", () => {
    const g = new Map([
      ["/a.ts", ["/b.ts"]],
      ["/b.ts", ["/c.ts"]],
      ["/c.ts", ["/a.ts", "/d.ts"]],
      ["/d.ts", []],
      ["/e.ts", ["/e.ts"]],
    ]);
    expect(circles(g).map((c) => c.length).sort()).toEqual([1, 3]);
  });

  test("src has no import circles", () => {
    const files = sources(SRC);
    expect(files.length).toBeGreaterThan(100);
    const graph = new Map(files.map((f) => [f, importsOf(f)]));
    // The reader sees the imports that are there (a module importing nothing would make this pass on nothing).
    expect([...graph.values()].reduce((n, l) => n + l.length, 0)).toBeGreaterThan(files.length);
    expect(graph.get(path.join(SRC, "core", "search", "keyword", "inverted-index.ts"))).toContain(path.join(SRC, "core", "search", "keyword", "compaction.ts"));
    expect(circles(graph)).toEqual([]);
  });
});
