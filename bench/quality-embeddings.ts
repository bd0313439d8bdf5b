/**
 * `npm run quality -- --embeddings …`: the relevance harness with a real embedding provider, the
 * headless server's flags (--embeddings ollama|openai|builtin, --embeddings-url, --embeddings-model,
 * --embeddings-model-dir, --embeddings-key-env): the vault is embedded once (saved vectors are not
 * kept), then "ours, semantic" and "ours, hybrid" rank the same queries as the other systems.
 * A built-in model of the list is downloaded once into the user's cache folder (vault-mcp/models).
 */
import path from "node:path";
import type { AccessPolicy } from "../src/core/policy";
import type { SearchService } from "../src/core/search";
import { hybridSearch, semanticSearch } from "../src/core/search/hybrid";
import { describeEmbeddings, SemanticService } from "../src/core/search/vector/semantic-service";
import { MemoryStateStore } from "../src/core/state";
import type { VaultPort } from "../src/core/vault";
import { parseArgs as parseCliArgs } from "../src/hosts/node/args";
import { embedderOf } from "../src/hosts/node/embedder-flags";
import { userCacheDir } from "../src/hosts/node/state-dir";

/** Takes `--embeddings…` flags (and their values) at `argv[i]` into `into`; returns the index of the last one taken, or -1. */
export function takeEmbeddingsFlag(argv: string[], i: number, into: string[]): number {
  const k = argv[i];
  if (!k.startsWith("--embeddings")) return -1;
  into.push(k);
  if (k.includes("=")) return i;
  into.push(argv[i + 1]);
  return i + 1;
}

type Ranker = (q: string) => Promise<string[]>;

/** Embeds the vault with the provider the flags name and returns its two rankers and a close. */
export async function semanticSystems(flags: string[], port: VaultPort, policy: AccessPolicy, search: SearchService, log: (s: string) => void): Promise<{ systems: Record<string, Ranker>; close: () => Promise<void> }> {
  const cli = parseCliArgs(flags);
  const embedder = embedderOf(cli, path.join(userCacheDir(), "vault-mcp"));
  if (!embedder) return { systems: {}, close: async () => undefined };
  const semantic = new SemanticService({ port, policy, store: new MemoryStateStore(), embedder, log: (level, m) => level !== "debug" && log(`  ${m}`) });
  const started = Date.now();
  let last = 0;
  semantic.onProgress((s) => {
    if (Date.now() - last > 10_000) {
      last = Date.now();
      log(`  ${describeEmbeddings(s)}`);
    }
  });
  await semantic.start();
  await semantic.waitForIdle(6 * 60 * 60_000);
  const st = semantic.status();
  const seconds = (Date.now() - started) / 1000;
  log(`  ${describeEmbeddings(st)} ${seconds.toFixed(0)} s, ${(st.chunks_embedded / Math.max(seconds, 0.001)).toFixed(1)} sections/s (download and model loading included).`);
  if (st.state !== "ready") throw new Error(`The embeddings did not get ready: ${describeEmbeddings(st)}`);
  const req = (q: string) => ({ query: q, limit: 10, chunksPerFile: 1, snippetWords: 18 });
  return {
    systems: {
      "ours, semantic": async (q) => (await semanticSearch(semantic, port, req(q), await semantic.embedQuery(q), "en")).hits.map((h) => h.path),
      "ours, hybrid": async (q) => (await hybridSearch(search, semantic, port, req(q), await semantic.embedQuery(q), "en")).hits.map((h) => h.path),
    },
    close: () => semantic.close(),
  };
}
