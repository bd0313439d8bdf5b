import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { releaseGarbage } from "../../src/core/memory";

/**
 * releaseGarbage relies on how V8 schedules collections: dead ArrayBuffers are freed only by a full
 * collection, which an idle process never starts by itself. Run in a fresh process (no `--expose-gc`,
 * nothing else allocating), the way the server's background work leaves its old buffers behind.
 */
describe("releaseGarbage", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "vmcp-memory-"));
    buildSync({ entryPoints: [join(__dirname, "../../src/core/memory.ts")], bundle: true, platform: "node", format: "cjs", outfile: join(dir, "memory.js"), logLevel: "silent" });
    writeFileSync(
      join(dir, "child.js"),
      `const { releaseGarbage } = require("./memory.js");
const nudge = process.argv[2] === "nudge";
let slabs = [];
// Long-lived buffers (they outlive young-generation collections), written so their pages are real.
for (let i = 0; i < 6; i++) { const b = new Uint8Array(32 << 20); b.fill(1); slabs.push(b); }
let keep = []; for (let i = 0; i < 300000; i++) keep.push({ i });
setTimeout(() => {
  slabs = null;
  const hinted = nudge ? releaseGarbage() : false;
  setTimeout(() => {
    const mb = Math.round(process.memoryUsage().arrayBuffers / 1048576);
    process.stdout.write(JSON.stringify({ hinted, mb, kept: keep.length }));
  }, 1500);
}, 200);
`,
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = (arg: string): { hinted: boolean; mb: number } => JSON.parse(execFileSync(process.execPath, [join(dir, "child.js"), arg], { encoding: "utf8" })) as { hinted: boolean; mb: number };

  test("an idle process keeps dead buffers; after the hint V8 collects them", () => {
    const idle = run("none");
    expect(idle.mb).toBeGreaterThanOrEqual(180);
    const hinted = run("nudge");
    expect(hinted.hinted).toBe(true);
    expect(hinted.mb).toBeLessThan(20);
  });

  test("at most one hint a second", () => {
    const t = 1e12;
    expect(releaseGarbage(t)).toBe(true);
    expect(releaseGarbage(t + 500)).toBe(false);
    expect(releaseGarbage(t + 1000)).toBe(true);
  });
});
