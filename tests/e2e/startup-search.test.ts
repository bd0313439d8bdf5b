/**
 * Search right after start-up, with the headless server as a child process and the client as the
 * stdio bridge is: it calls as soon as `/health` answers. While the saved index is loading (a warm
 * restart) or the notes are being indexed for the first time, a search must not answer as if the
 * vault had nothing: it waits for the index, and the answer equals the one a second later.
 */
import { afterAll, describe, expect, test } from "@jest/globals";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { mulberry32 } from "../../src/core/random";
import { freePort, startChildServer, type ChildServer } from "../support/child-server";
import { call, eventually, makeTempVault, removeTree, textOf, type FileTree } from "../support/harness";

const cleanup: string[] = [];
const running: ChildServer[] = [];
afterAll(async () => {
  for (const s of running) await s.kill().catch(() => {});
  for (const d of cleanup) removeTree(d);
});

const NOTES = 1500;

/** Our own generated text: made-up words, "voke" in every third note, "quillet" in a few. */
function generatedVault(): FileTree {
  const rnd = mulberry32(29);
  const syll = ["ka", "lo", "mi", "ren", "tsu", "va", "dor", "pel", "ix", "om", "bra", "nu"];
  const vocab: string[] = [];
  for (let i = 0; i < 600; i++) vocab.push(syll[i % 12] + syll[Math.floor(i / 12) % 12] + syll[Math.floor(rnd() * 12)]);
  const files: FileTree = {};
  for (let i = 0; i < NOTES; i++) {
    const words: string[] = [];
    for (let w = 0; w < 120; w++) words.push(vocab[Math.floor(rnd() * vocab.length)]);
    if (i % 3 === 0) words.splice(Math.floor(rnd() * words.length), 0, "voke");
    if (i % 97 === 5) words.splice(Math.floor(rnd() * words.length), 0, "quillet");
    files[`F${i % 20}/Note ${i}.md`] = `# Note ${i}\n\n${words.slice(0, 60).join(" ")}\n\n## Part\n\n${words.slice(60).join(" ")}\n`;
  }
  return files;
}

function tempDir(prefix: string): string {
  const d = mkdtempSync(path.join(tmpdir(), prefix));
  cleanup.push(d);
  return d;
}

/** What a search answers, as compared between two calls: the paths, the count, and whether it said "No notes match". */
async function answer(client: Client, query: string): Promise<{ paths: string[]; total: number; text: string }> {
  const r = await call(client, "search", { query, limit: 20 });
  expect(r.isError).toBeFalsy();
  const s = r.structuredContent as { hits: { path: string }[]; total_files: number };
  return { paths: s.hits.map((h) => h.path), total: s.total_files, text: textOf(r) };
}

async function startUntilHealthy(vault: string, stateDir: string): Promise<ChildServer> {
  const s = await startChildServer(vault, { stateDir, untilHealthy: { port: await freePort() } });
  running.push(s);
  return s;
}

describe("search right after start-up", () => {
  const root = makeTempVault(generatedVault(), "vault-mcp-startup-");
  cleanup.push(root);

  test("first build: a search sent the moment /health answers equals the answer a second later", async () => {
    const stateDir = tempDir("vault-mcp-startup-state-");
    const server = await startUntilHealthy(root, stateDir);
    const client = await server.connect();
    const first = await answer(client, "voke");
    const second = await answer(client, "voke");
    await new Promise((r) => setTimeout(r, 1000));
    const later = await answer(client, "voke");
    expect(later.total).toBe(NOTES / 3);
    expect(first.total).toBe(later.total);
    expect(first.paths).toEqual(later.paths);
    expect(second.paths).toEqual(later.paths);
    expect(first.text).not.toMatch(/No notes match/);
    await server.stop();
  }, 60_000);

  test("warm restart: a search sent the moment /health answers equals the answer a second later", async () => {
    const stateDir = tempDir("vault-mcp-startup-state-");
    // A first run builds the index and saves it when stopped.
    const builder = await startChildServer(root, { stateDir });
    running.push(builder);
    const c = await builder.connect();
    await eventually(async () => expect((await answer(c, "voke")).total).toBe(NOTES / 3), 30_000);
    await builder.stop();
    expect(builder.stderr()).not.toMatch(/Could not save/);

    const server = await startUntilHealthy(root, stateDir);
    const client = await server.connect();
    const first = await answer(client, "voke");
    const rare = await answer(client, "quillet");
    await new Promise((r) => setTimeout(r, 1000));
    const later = await answer(client, "voke");
    expect(later.total).toBe(NOTES / 3);
    expect(first.total).toBe(later.total);
    expect(first.paths).toEqual(later.paths);
    expect(rare.total).toBeGreaterThan(0);
    expect(first.text).not.toMatch(/No notes match/);
    await server.stop();
  }, 60_000);
});
