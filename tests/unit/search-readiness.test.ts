/**
 * The search service's readiness (`ready`, `whenReady`, `status().readiness`): whether the index
 * covers the vault. Until it does an answer may lack notes; after, it stays ready, and later changes
 * are ordinary pending work.
 */
import { describe, expect, test } from "@jest/globals";
import { MemoryVault } from "../../src/core/memory-vault";
import { MemoryStateStore } from "../../src/core/state";
import { GatedStore } from "../support/gated-store";
import { makeSearch, searchPaths } from "../support/search-service";

function notes(n: number, extra: Record<string, string> = {}): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < n; i++) files[`N/${i}.md`] = `# ${i}\n\nwords voke ${i}\n`;
  return { ...files, ...extra };
}

describe("search readiness", () => {
  // Counting the visible notes walks every listed file: up to 20k files at once, a bigger listing in
  // slices (a 25 ms task at 100k notes), the status meanwhile saying what the index holds.
  test("while loading, a listing of over 20k files is counted in slices: the status has the count once they are done", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 25_000; i++) files[`img/${i}.png`] = "";
    for (let i = 0; i < 30; i++) files[`N/${i}.md`] = `# ${i}\n`;
    files["Private/secret.md"] = "hidden\n";
    const big = makeSearch(new MemoryVault(files));
    expect(big.svc.status()).toMatchObject({ readiness: "loading", notes_total: 0 });
    for (let i = 0; i < 50 && big.svc.status().notes_total === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(big.svc.status()).toMatchObject({ readiness: "loading", notes_total: 30 });
    // A smaller listing is counted at once.
    const small = makeSearch(new MemoryVault(notes(40, { "Private/secret.md": "hidden\n" })));
    expect(small.svc.status()).toMatchObject({ readiness: "loading", notes_total: 40 });
    await big.svc.close();
    await small.svc.close();
  });

  test("a first build: not ready (indexing, notes covered of total) until every note is indexed, then ready", async () => {
    const vault = new MemoryVault(notes(200));
    const { svc } = makeSearch(vault);
    await svc.start();
    expect(svc.ready).toBe(false);
    const s = svc.status();
    expect(["checking", "indexing"]).toContain(s.readiness);
    expect(s.notes_total).toBe(200);
    expect(s.notes_covered).toBeLessThan(200);
    expect(await svc.whenReady(30_000)).toBe(true);
    expect(svc.ready).toBe(true);
    // Every note is in by then (not only once the worker is idle).
    expect(await searchPaths(svc, "voke", { limit: 1000 })).toHaveLength(200);
    expect(svc.status()).toMatchObject({ readiness: "ready", notes_covered: 200, notes_total: 200 });
    await svc.close();
  });

  test("a warm start: not ready while the saved index loads (hasPendingWork too), nor until the notes it lacks are indexed", async () => {
    const saved = new MemoryStateStore();
    const first = makeSearch(new MemoryVault(notes(50)), saved).svc;
    await first.start();
    expect(await first.waitForIdle(30_000)).toBe(true);
    await first.close();

    // Restarted with 30 notes the saved index does not hold (written while the server was stopped).
    const more: Record<string, string> = {};
    for (let i = 0; i < 30; i++) more[`New/${i}.md`] = `# new ${i}\n\nvoke fresh ${i}\n`;
    const gated = new GatedStore(saved);
    const { svc } = makeSearch(new MemoryVault(notes(50, more)), gated as unknown as MemoryStateStore);
    const started = svc.start();
    expect(svc.ready).toBe(false);
    expect(svc.status()).toMatchObject({ readiness: "loading", notes_total: 80 });
    // wait_for_pending_writes must wait for a loading index too.
    expect(svc.hasPendingWork()).toBe(true);
    // A caller that gives up (cancellation) is answered at once.
    const ac = new AbortController();
    const gaveUp = svc.whenReady(60_000, ac.signal);
    ac.abort();
    expect(await gaveUp).toBe(false);
    gated.release();
    await started;
    expect(await svc.whenReady(30_000)).toBe(true);
    expect(await searchPaths(svc, "fresh", { limit: 100 })).toHaveLength(30);
    expect(await searchPaths(svc, "voke", { limit: 100 })).toHaveLength(80);
    await svc.close();
  });

  test("once ready it stays ready: a change afterwards is pending work, not loading", async () => {
    const vault = new MemoryVault(notes(20));
    const { svc } = makeSearch(vault);
    await svc.start();
    expect(await svc.whenReady(30_000)).toBe(true);
    expect(await svc.waitForIdle(30_000)).toBe(true);
    vault.write("N/new.md", "# new\n\nvoke again\n");
    expect(svc.hasPendingWork()).toBe(true);
    expect(svc.ready).toBe(true);
    expect(svc.status().readiness).toBe("ready");
    expect(await svc.whenReady(0)).toBe(true);
    await svc.close();
  });
});
