// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, server mode) against
// the headless server, through scripts/token-proxy.mjs (the suite cannot send a bearer token).
// Builds nothing: run `npm run build` first. Node ≥ 22 is fetched from the npm registry when needed.
//
// Writes conformance/results.json and compares it with conformance/baseline.json: exits 1 when a
// check fails that the baseline does not list (or the suite produced no result for a scenario);
// a baseline entry that now passes is printed as a note.
//
//   node scripts/conformance.mjs [--scenario NAME] [--verbose]
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureTools, ROOT, startHeadless, VERSIONS } from "./mcp-tools.mjs";
import { startTokenProxy } from "./token-proxy.mjs";

const argv = process.argv.slice(2);
const verbose = argv.includes("--verbose");
const only = argv.includes("--scenario") ? argv[argv.indexOf("--scenario") + 1] : undefined;
const SUITE = `@modelcontextprotocol/conformance@${VERSIONS.conformance}`;
const baselineFile = path.join(ROOT, "conformance", "baseline.json");
const resultsFile = path.join(ROOT, "conformance", "results.json");

function run(cmd, args, { quiet = false } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (!quiet) process.stdout.write(d);
    });
    child.stderr.on("data", (d) => {
      out += d;
      if (!quiet) process.stderr.write(d);
    });
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, out }));
  });
}

async function main() {
  const { node, dir } = ensureTools([SUITE]);
  const suiteCli = path.join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js");
  const baseline = JSON.parse(readFileSync(baselineFile, "utf8"));
  const server = await startHeadless({ log: verbose ? (l) => process.stderr.write(l) : () => {} });
  const proxy = await startTokenProxy({ upstream: server.url, token: server.token, verbose, log: (l) => process.stderr.write(`[token-proxy] ${l}\n`) });
  const outDir = mkdtempSync(path.join(tmpdir(), "vault-mcp-conformance-"));
  let suite;
  try {
    const args = [suiteCli, "server", "--url", `${proxy.url}/mcp`, "-o", outDir];
    if (only) args.push("--scenario", only);
    console.log(`${SUITE} (Node ${(await run(node, ["--version"], { quiet: true })).out.trim()}) against ${server.url} via ${proxy.url}/mcp`);
    // The suite exits 1 whenever any check fails, including the baselined ones: its code is not ours.
    suite = await run(node, args, { quiet: !verbose });
  } finally {
    await proxy.close();
    await server.stop();
  }

  // Each scenario leaves <outDir>/server-<scenario>-<timestamp>/checks.json.
  const scenarios = {};
  for (const d of readdirSync(outDir).sort()) {
    const m = /^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
    const file = path.join(outDir, d, "checks.json");
    if (!m || !existsSync(file)) continue;
    const checks = JSON.parse(readFileSync(file, "utf8")).map((c) => ({ id: c.id, status: c.status, ...(c.errorMessage ? { error: c.errorMessage } : {}) }));
    const failed = checks.filter((c) => c.status === "FAILURE").map((c) => c.id);
    scenarios[m[1]] = { passed: failed.length === 0, failed, checks };
  }
  rmSync(outDir, { recursive: true, force: true });
  const expectedScenarios = [...suite.out.matchAll(/=== Running scenario: (\S+) ===/g)].map((m) => m[1]);
  if (only && expectedScenarios.length === 0) expectedScenarios.push(only);

  const unexpected = [];
  const notes = [];
  for (const name of expectedScenarios) {
    if (!scenarios[name]) unexpected.push(`${name}: the suite produced no result (it crashed or timed out)`);
  }
  for (const [name, s] of Object.entries(scenarios)) {
    const entry = baseline.expected[name];
    const allowed = entry ? (entry.checks ?? null) : [];
    for (const id of s.failed) {
      if (allowed !== null && !allowed.includes(id)) {
        const c = s.checks.find((x) => x.id === id && x.status === "FAILURE");
        unexpected.push(`${name} / ${id}: ${c?.error ?? "failed"}`);
      }
    }
    if (entry) {
      const stillFailing = allowed === null ? s.failed.length > 0 : allowed.some((id) => s.failed.includes(id));
      if (!stillFailing) notes.push(`${name}${allowed ? ` (${allowed.join(", ")})` : ""} is in the baseline but passes now: remove it from conformance/baseline.json.`);
    }
  }

  const summary = {
    scenarios: Object.keys(scenarios).length,
    passed: Object.values(scenarios).filter((s) => s.passed).length,
    baselined: Object.keys(scenarios).filter((n) => !scenarios[n].passed && baseline.expected[n]).length,
    unexpected: unexpected.length,
  };
  writeFileSync(resultsFile, JSON.stringify({ suite: SUITE, date: new Date().toISOString(), summary, unexpected, notes, scenarios }, null, 2) + "\n");

  for (const [name, s] of Object.entries(scenarios)) {
    const mark = s.passed ? "pass" : baseline.expected[name] ? "fail (baselined)" : "FAIL";
    console.log(`  ${mark.padEnd(17)} ${name}${s.passed ? "" : `  [${s.failed.join(", ")}]`}`);
  }
  for (const n of notes) console.log(`note: ${n}`);
  for (const u of unexpected) console.log(`UNEXPECTED: ${u}`);
  console.log(`Conformance: ${summary.passed}/${summary.scenarios} scenarios pass, ${summary.baselined} baselined, ${summary.unexpected} unexpected failures (details: ${path.relative(ROOT, resultsFile)})`);
  process.exit(unexpected.length > 0 || summary.scenarios === 0 ? 1 : 0);
}

main().catch((e) => {
  console.error(`conformance: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
