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
  const files = savedIndexVault();
  // 32 segments, the layout of the earlier fixtures (a vault this small would get one now).
  const notes = Object.keys(files).filter((p) => p.endsWith(".md")).length;
  const svc = createSearchService({ port: new MemoryVault(files), policy: new AccessPolicy({ configDir: ".obsidian" }), store, sqlWasm, options: { notesPerSegment: Math.ceil(notes / 32) } });
  await svc.start();
  if (!(await svc.waitForIdle(60_000))) throw new Error("the index did not settle");
  await svc.close();
  const saved = [...store.files].sort(([a], [b]) => (a < b ? -1 : 1));
  writeFileSync(SAVED_INDEX_FIXTURE, gzipSync(packFiles(saved), { level: 9 }));
  console.log(`${SAVED_INDEX_FIXTURE}: ${saved.length} files`);
}

void main();
