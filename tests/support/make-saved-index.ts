/** Writes tests/fixtures/saved-index.bin.gz (see saved-index-fixture.ts): the files the current code saves for the generated vault. */
import { writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import { createSearchService } from "../../src/core/search";
import { MemoryVault } from "../../src/core/memory-vault";
import { AccessPolicy } from "../../src/core/policy";
import { MemoryStateStore } from "../../src/core/state";
import { useHostTimers } from "../../src/core/timers";
import { nodeTimers } from "../../src/hosts/common/node-timers";
import { packFiles, SAVED_INDEX_FIXTURE, savedIndexVault } from "./saved-index-fixture";

async function main(): Promise<void> {
  useHostTimers(nodeTimers);
  const store = new MemoryStateStore();
  const svc = createSearchService({ port: new MemoryVault(savedIndexVault()), policy: new AccessPolicy({ configDir: ".obsidian" }), store, sqlWasm });
  await svc.start();
  if (!(await svc.waitForIdle(60_000))) throw new Error("the index did not settle");
  await svc.close();
  const files = [...store.files].sort(([a], [b]) => (a < b ? -1 : 1));
  writeFileSync(SAVED_INDEX_FIXTURE, gzipSync(packFiles(files), { level: 9 }));
  console.log(`${SAVED_INDEX_FIXTURE}: ${files.length} files`);
}

void main();
