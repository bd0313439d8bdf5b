/**
 * A small line diff (Myers' O(ND) algorithm after trimming the common prefix and suffix) rendered as a
 * compact unified diff. Used to show what an edit did (or would do, with `dry_run`).
 */

export type DiffOp = { kind: "equal" | "delete" | "insert"; line: string };

/**
 * Above this many differing lines the middle part is shown as one delete + insert block instead. The
 * search keeps a frontier per step: time and memory grow with its square (4,000 kept up to 128 MB).
 */
const MAX_EDIT_DISTANCE = 1000;

export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return text.includes("\r") ? lines.map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l)) : lines;
}

/** How many lines `a` and `b` share at their start and, after that, at their end. */
function commonEnds(a: readonly string[], b: readonly string[]): { pre: number; suf: number } {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  return { pre, suf };
}

/** The edit script turning `a` into `b` (line arrays). */
export function diffLines(a: readonly string[], b: readonly string[]): DiffOp[] {
  const { pre, suf } = commonEnds(a, b);
  const midA = a.slice(pre, a.length - suf);
  const midB = b.slice(pre, b.length - suf);
  const out: DiffOp[] = [];
  for (let i = 0; i < pre; i++) out.push({ kind: "equal", line: a[i] });
  for (const op of myers(midA, midB)) out.push(op); // not push(...): hundreds of thousands of lines overflow the stack
  for (let i = a.length - suf; i < a.length; i++) out.push({ kind: "equal", line: a[i] });
  return out;
}

/** Middles longer than this (lines of both sides) are one delete + insert block without a search. */
const MAX_SEARCHED_LINES = 20_000;

function myers(a: readonly string[], b: readonly string[]): DiffOp[] {
  const n = a.length;
  const m = b.length;
  if (n === 0) return b.map((line) => ({ kind: "insert", line }));
  if (m === 0) return a.map((line) => ({ kind: "delete", line }));
  if (n + m > MAX_SEARCHED_LINES) return replaceBlock(a, b);
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = -1;
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x: number;
      if (k === -d || (k !== d && v[offset + k - 1] < v[offset + k + 1])) x = v[offset + k + 1];
      else x = v[offset + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = d;
        break;
      }
    }
    if (found >= 0) break;
  }
  if (found < 0) return replaceBlock(a, b);
  // Backtrack through the saved frontiers.
  const ops: DiffOp[] = [];
  let x = n;
  let y = m;
  for (let d = found; d > 0; d--) {
    const vd = trace[d];
    const k = x - y;
    const prevK = k === -d || (k !== d && vd[offset + k - 1] < vd[offset + k + 1]) ? k + 1 : k - 1;
    const prevX = vd[offset + prevK];
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push({ kind: "equal", line: a[--x] });
      y--;
    }
    if (x === prevX) ops.push({ kind: "insert", line: b[--y] });
    else ops.push({ kind: "delete", line: a[--x] });
  }
  while (x > 0 && y > 0) {
    ops.push({ kind: "equal", line: a[--x] });
    y--;
  }
  return ops.reverse();
}

function replaceBlock(a: readonly string[], b: readonly string[]): DiffOp[] {
  const block: DiffOp[] = a.map((line) => ({ kind: "delete", line }));
  for (const line of b) block.push({ kind: "insert", line });
  return block;
}

/**
 * A unified diff of two texts with `context` lines around each change (`@@ -a,b +c,d @@` hunks).
 * Empty string when the texts have the same lines. Very long outputs are cut at `maxLines`.
 */
export function unifiedDiff(before: string, after: string, opts: DiffOptions = {}): string {
  const a = splitLines(before);
  const b = splitLines(after);
  return renderDiff(a, b, commonEnds(a, b), opts);
}

export interface DiffOptions {
  context?: number;
  path?: string;
  maxLines?: number;
}

/**
 * `unifiedDiff`, yielding (`yieldNow`) between its linear steps — splitting each text, comparing
 * their ends, rendering — for texts up to the 2 MB a change may have, on Obsidian's UI thread.
 */
export async function unifiedDiffInSteps(before: string, after: string, opts: DiffOptions, yieldNow: () => Promise<void>): Promise<string> {
  const a = splitLines(before);
  await yieldNow();
  const b = splitLines(after);
  await yieldNow();
  const ends = commonEnds(a, b);
  await yieldNow();
  return renderDiff(a, b, ends, opts);
}

function renderDiff(a: readonly string[], b: readonly string[], { pre, suf }: { pre: number; suf: number }, opts: DiffOptions): string {
  const context = opts.context ?? 2;
  const maxLines = opts.maxLines ?? 400;
  if (a.length + b.length - 2 * (pre + suf) > MAX_SEARCHED_LINES) return blockDiff(a, b, pre, suf, context, maxLines, opts.path);
  const ops = diffLines(a, b);
  if (!ops.some((o) => o.kind !== "equal")) return "";
  // Positions (1-based line numbers in a and b) before each op.
  const aLine: number[] = [];
  const bLine: number[] = [];
  let ai = 1;
  let bi = 1;
  for (const o of ops) {
    aLine.push(ai);
    bLine.push(bi);
    if (o.kind !== "insert") ai++;
    if (o.kind !== "delete") bi++;
  }
  const out: string[] = [];
  if (opts.path) out.push(`--- a/${opts.path}`, `+++ b/${opts.path}`);
  let cut = 0;
  let i = 0;
  while (i < ops.length) {
    if (ops[i].kind === "equal") {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    // Extend the hunk while the next change is within 2*context equal lines.
    for (;;) {
      while (end < ops.length && ops[end].kind !== "equal") end++;
      let eq = end;
      while (eq < ops.length && ops[eq].kind === "equal") eq++;
      if (eq < ops.length && eq - end <= 2 * context) end = eq;
      else {
        end = Math.min(ops.length, end + context);
        break;
      }
    }
    let aCount = 0;
    let bCount = 0;
    for (let k = start; k < end; k++) {
      if (ops[k].kind !== "insert") aCount++;
      if (ops[k].kind !== "delete") bCount++;
    }
    const aStart = aCount === 0 ? aLine[start] - 1 : aLine[start];
    const bStart = bCount === 0 ? bLine[start] - 1 : bLine[start];
    // Past maxLines lines are only counted (a diff of a whole note can have hundreds of thousands).
    if (out.length < maxLines) out.push(`@@ -${aStart},${aCount} +${bStart},${bCount} @@`);
    else cut++;
    for (let k = start; k < end; k++) {
      if (out.length >= maxLines) {
        cut += end - k;
        break;
      }
      const o = ops[k];
      out.push((o.kind === "equal" ? " " : o.kind === "delete" ? "-" : "+") + o.line);
    }
    i = end;
  }
  if (cut > 0) out.push(`… ${cut} more diff lines not shown`);
  return out.join("\n");
}

/**
 * `unifiedDiff` when the changed middle is one delete + insert block too long to search: the same
 * single hunk, written straight from the line arrays without an op per line (80,000 changed lines
 * took ~160 ms in one step that way), only the first `maxLines` lines of it, and the rest counted.
 */
function blockDiff(a: readonly string[], b: readonly string[], pre: number, suf: number, context: number, maxLines: number, path?: string): string {
  const start = Math.max(0, pre - context);
  const after = Math.min(suf, context);
  const aCount = pre - start + (a.length - suf - pre) + after;
  const bCount = pre - start + (b.length - suf - pre) + after;
  const out: string[] = [];
  if (path) out.push(`--- a/${path}`, `+++ b/${path}`);
  out.push(`@@ -${aCount === 0 ? start : start + 1},${aCount} +${bCount === 0 ? start : start + 1},${bCount} @@`);
  const runs: Array<[string, readonly string[], number, number]> = [
    [" ", a, start, pre],
    ["-", a, pre, a.length - suf],
    ["+", b, pre, b.length - suf],
    [" ", a, a.length - suf, a.length - suf + after],
  ];
  let cut = 0;
  for (const [mark, lines, from, to] of runs) {
    const shown = Math.max(0, Math.min(to - from, maxLines - out.length));
    for (let i = from; i < from + shown; i++) out.push(mark + lines[i]);
    cut += to - from - shown;
  }
  if (cut > 0) out.push(`… ${cut} more diff lines not shown`);
  return out.join("\n");
}
