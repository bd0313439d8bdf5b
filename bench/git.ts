/**
 * The bench's git section: a seeded repository of 10k notes and 20k commits (written with
 * `git fast-import`, a few seconds), then, side by side in one run, our `get_history` of one note
 * against `git log --follow --name-status -- <path>` timed the same way (a child process, start to
 * exit), `get_recent_changes` over the last 100 commits, the time a commit adds to a write, and the
 * longest event-loop block throughout. `--vault <dir>` that is a repository is measured too
 * (reads only: nothing is committed there).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import { detectGitRepo, GitService } from "../src/core/git/service";
import { AccessPolicy } from "../src/core/policy";
import { MemoryStateStore } from "../src/core/state";
import { createWriteService } from "../src/core/write";
import { isNotePath } from "../src/core/vault";
import { createGitRunner } from "../src/hosts/common/git-process";
import { FsVault } from "../src/hosts/node/fs-vault";
import { rng } from "./generate";

export interface GitBenchResult {
  label: string;
  notes: number;
  commits: number;
  /** Building the history index from one `git log` (cold, in-process wall time). */
  indexBuildMs: number;
  historyP50Ms: number;
  gitLogFollowP50Ms: number;
  /** get_recent_changes, last 100 commits plus the working tree's status. */
  recentP50Ms: number;
  /** p50 of (write + commit) minus p50 of write alone; null on a --vault (no writes there). */
  commitAddsP50Ms: number | null;
  writeP50Ms: number | null;
  writeCommitP50Ms: number | null;
  maxEventLoopBlockMs: number;
  samples: number;
}

const p50 = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : NaN;
};

function runGit(cwd: string, args: string[], input?: (w: NodeJS.WritableStream) => void): Promise<number> {
  return new Promise((resolve, reject) => {
    const p = spawn("git", args, { cwd, stdio: [input ? "pipe" : "ignore", "ignore", "pipe"] });
    let err = "";
    p.stderr?.on("data", (b: Buffer) => (err += b.toString()));
    if (input && p.stdin) input(p.stdin);
    p.on("error", reject);
    p.on("close", (code) => (code === 0 ? resolve(code) : reject(new Error(`git ${args[0]} failed: ${err.slice(0, 300)}`))));
  });
}

/**
 * 10k notes in 50 folders, then 20k commits of 1–3 edits each (notes chosen with a skew: a few are
 * edited often), 1% of them renaming a note into `Archive/`; two authors; a fixed seed.
 */
export async function generateRepo(dir: string, notes: number, commits: number, seed = 7): Promise<void> {
  const marker = path.join(dir, ".git", "vault-mcp-bench");
  const tag = `${notes}/${commits}/${seed}`;
  if (existsSync(marker)) {
    // Made by an earlier run: back to the generated tip (the commit test added commits).
    const [madeTag, tip] = readFileSync(marker, "utf8").split(" ");
    if (madeTag === tag && tip) {
      await runGit(dir, ["reset", "-q", "--hard", tip]);
      await runGit(dir, ["clean", "-fdq"]);
      return;
    }
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await runGit(dir, ["init", "-q", "-b", "main"]);
  await runGit(dir, ["config", "user.name", "Bench"]);
  await runGit(dir, ["config", "user.email", "bench@example.com"]);
  const rand = rng(seed);
  await runGit(dir, ["fast-import", "--quiet"], (w) => {
    const data = (t: string) => {
      const b = Buffer.from(t);
      w.write(`data ${b.length}\n`);
      w.write(b);
      w.write("\n");
    };
    const paths = Array.from({ length: notes }, (_, i) => `Folder ${i % 50}/Note ${i}.md`);
    let t = 1_700_000_000;
    w.write(`commit refs/heads/main\nmark :1\nauthor Ann <ann@example.com> ${t} +0000\ncommitter Ann <ann@example.com> ${t} +0000\n`);
    data("Initial notes");
    for (let i = 0; i < notes; i++) {
      w.write(`M 100644 inline ${paths[i]}\n`);
      data(`# Note ${i}\n\nAbout topic ${i % 97}. See [[Note ${(i * 7) % notes}]].\n`);
    }
    w.write("\n");
    for (let c = 2; c <= commits; c++) {
      t += 600 + Math.floor(rand() * 3000);
      const who = rand() < 0.5 ? "Ann <ann@example.com>" : "Bob <bob@example.com>";
      w.write(`commit refs/heads/main\nmark :${c}\nauthor ${who} ${t} +0000\ncommitter ${who} ${t} +0000\n`);
      data(`Change ${c}`);
      w.write(`from :${c - 1}\n`);
      const k = 1 + Math.floor(rand() * 3);
      for (let j = 0; j < k; j++) {
        const i = Math.floor(Math.pow(rand(), 2) * notes);
        w.write(`M 100644 inline ${paths[i]}\n`);
        data(`# Note ${i}\n\nAbout topic ${i % 97}, revision ${c}.\n` + "A line of text.\n".repeat(1 + (c % 20)));
      }
      if (rand() < 0.01) {
        const i = Math.floor(rand() * notes);
        const np = `Archive/Note ${i} (${c}).md`;
        w.write(`R "${paths[i]}" "${np}"\n`);
        paths[i] = np;
      }
      w.write("\n");
    }
    w.end();
  });
  await runGit(dir, ["reset", "-q", "--hard", "main"]);
  const tip = await new Promise<string>((resolve) => {
    const p = spawn("git", ["rev-parse", "HEAD"], { cwd: dir });
    let out = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.on("close", () => resolve(out.trim()));
  });
  writeFileSync(marker, `${tag} ${tip}`);
}

/** Times `git log --follow --name-status -- <path>` as a child process, start to exit. */
async function timeGitLogFollow(cwd: string, p: string): Promise<number> {
  const t = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn("git", ["log", "--follow", "--name-status", "-z", "--format=%H%x1f%at%x1f%an%x1f%s", "--", p], { cwd, stdio: ["ignore", "pipe", "ignore"] });
    child.stdout.on("data", () => undefined);
    child.on("error", reject);
    child.on("close", () => resolve());
  });
  return performance.now() - t;
}

export async function benchGit(root: string, label: string, opts: { writes: boolean; samples?: number; log: (m: string) => void }): Promise<GitBenchResult | null> {
  const log = opts.log;
  // As both hosts run it: git started from the small helper process (dist/git-helper.js, built by npm run bench).
  const helper = path.resolve(__dirname, "git-helper.js");
  const runner = createGitRunner({ cwd: root, helperFile: existsSync(helper) ? helper : undefined });
  const detection = await detectGitRepo(runner);
  if (detection.kind !== "repo") {
    log(`  git: ${label} is not a git-backed vault (${detection.message})`);
    return null;
  }
  const vault = await FsVault.open(root, { watch: false });
  const policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
  const h = monitorEventLoopDelay({ resolution: 1 });
  h.enable();
  try {
    const svc = new GitService(detection.git, detection.prefix, { port: vault, policy, identity: detection.identity }, { commitChanges: opts.writes, pushAfterCommit: false });
    let t = performance.now();
    await svc.history.refresh();
    const indexBuildMs = performance.now() - t;
    const commits = svc.history.size;
    const notes = vault.listFiles().filter((f) => isNotePath(f.path) && !policy.isHidden(f.path)).map((f) => f.path);
    log(`  git: ${label}: ${notes.length} notes, ${commits} commits; history index built in ${indexBuildMs.toFixed(0)} ms`);

    // The same notes for both: a seeded sample, half of them among the most edited (low numbers).
    const rand = rng(11);
    const samples = opts.samples ?? 31;
    const picks: string[] = [];
    for (let i = 0; i < samples; i++) picks.push(notes[Math.floor((i % 2 ? rand() : Math.pow(rand(), 3)) * notes.length)]);
    const ours: number[] = [];
    const theirs: number[] = [];
    for (const p of picks) {
      // Alternate which goes first, so neither always runs on a warmer cache.
      const a = async () => {
        const s = performance.now();
        await svc.getHistory({ path: p, limit: 500 });
        ours.push(performance.now() - s);
      };
      const b = async () => theirs.push(await timeGitLogFollow(root, p));
      if (ours.length % 2) {
        await a();
        await b();
      } else {
        await b();
        await a();
      }
    }
    const recent: number[] = [];
    for (let i = 0; i < 15; i++) {
      t = performance.now();
      await svc.recentChanges({ limit: 100 });
      recent.push(performance.now() - t);
    }

    let writeP50: number | null = null;
    let writeCommitP50: number | null = null;
    if (opts.writes) {
      const plain = createWriteService({ port: vault, policy, stateStore: new MemoryStateStore() });
      const committing = createWriteService({ port: vault, policy, stateStore: new MemoryStateStore(), committer: svc });
      const w0: number[] = [];
      const w1: number[] = [];
      for (let i = 0; i < 20; i++) {
        const p = notes[(i * 37) % notes.length];
        const q = notes[(i * 37 + 11) % notes.length];
        t = performance.now();
        await plain.write({ path: p, content: `\nappended ${i}\n`, mode: "append" }, { client: "bench" });
        w0.push(performance.now() - t);
        t = performance.now();
        const r = await committing.write({ path: q, content: `\nappended ${i}\n`, mode: "append" }, { client: "bench" });
        w1.push(performance.now() - t);
        if (!r.commit?.committed) throw new Error(`the bench's commit failed: ${r.commit?.error ?? r.commit?.skipped ?? "no outcome"}`);
      }
      writeP50 = p50(w0);
      writeCommitP50 = p50(w1);
    }
    await new Promise((r) => setTimeout(r, 5));
    h.disable();
    return {
      label,
      notes: notes.length,
      commits,
      indexBuildMs,
      historyP50Ms: p50(ours),
      gitLogFollowP50Ms: p50(theirs),
      recentP50Ms: p50(recent),
      commitAddsP50Ms: writeP50 !== null && writeCommitP50 !== null ? writeCommitP50 - writeP50 : null,
      writeP50Ms: writeP50,
      writeCommitP50Ms: writeCommitP50,
      maxEventLoopBlockMs: h.max / 1e6,
      samples,
    };
  } finally {
    runner.close?.();
    await vault.close();
  }
}

export function gitTable(results: GitBenchResult[]): string {
  const f = (n: number | null, d = 1) => (n === null || !Number.isFinite(n) ? "n/a" : n.toFixed(d));
  const rows: [string, (r: GitBenchResult) => string][] = [
    ["notes / commits", (r) => `${r.notes} / ${r.commits}`],
    ["history index: built from one git log (ms)", (r) => f(r.indexBuildMs, 0)],
    ["get_history of one note p50 (ms)", (r) => f(r.historyP50Ms, 1)],
    ["git log --follow -- <note> p50, same notes (ms)", (r) => f(r.gitLogFollowP50Ms, 1)],
    ["get_history / git log --follow", (r) => `${(r.historyP50Ms / r.gitLogFollowP50Ms).toFixed(2)}×`],
    ["get_recent_changes, last 100 commits + status, p50 (ms)", (r) => f(r.recentP50Ms, 1)],
    ["write p50 / write + commit p50 (ms)", (r) => `${f(r.writeP50Ms, 1)} / ${f(r.writeCommitP50Ms, 1)}`],
    ["a commit adds to a write, p50 (ms)", (r) => f(r.commitAddsP50Ms, 1)],
    ["longest event-loop block (ms)", (r) => f(r.maxEventLoopBlockMs, 1)],
  ];
  const out = [`| git | ${results.map((r) => r.label).join(" | ")} |`, `|---|${results.map(() => "---").join("|")}|`];
  for (const [name, fn] of rows) out.push(`| ${name} | ${results.map(fn).join(" | ")} |`);
  return out.join("\n");
}

export const GIT_TARGETS: { name: string; limit: number; value: (r: GitBenchResult) => number | null }[] = [
  { name: "get_history of one note p50", limit: 100, value: (r) => r.historyP50Ms },
  { name: "get_history within 2× of git log --follow (ratio)", limit: 2, value: (r) => r.historyP50Ms / r.gitLogFollowP50Ms },
  { name: "get_recent_changes over the last 100 commits p50", limit: 200, value: (r) => r.recentP50Ms },
  { name: "a commit per write adds (p50)", limit: 50, value: (r) => r.commitAddsP50Ms },
  { name: "longest event-loop block (git section)", limit: 50, value: (r) => r.maxEventLoopBlockMs },
];
