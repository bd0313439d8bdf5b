// npm run release:check — what the release workflow ships, checked where it can run (CI, no network
// but the npm registry): from a clean checkout of HEAD (git archive into a temp folder, this
// checkout's node_modules linked in) it builds main.js, manifest.json and styles.css and the MCP
// Bundle, then checks:
//   - the version lockstep: package.json, package-lock.json, manifest.json, versions.json (and the
//     tag, with --tag X or GITHUB_REF_NAME on a tag build);
//   - the directory's manifest rules: eslint-plugin-obsidianmd's validate-manifest, the id's form,
//     isDesktopOnly, authorUrl, minAppVersion not below the newest obsidian API the plugin uses;
//   - the size of main.js (printed);
//   - that main.js loads under the Obsidian stand-in (tests/stand-in/obsidian.ts) and its server
//     answers /health, and an MCP initialize through the bundle's bridge run as Claude Desktop would;
//   - the .mcpb: its manifest against @anthropic-ai/mcpb's schema, its version, its user_config.
// Options: --here (use the working tree instead of a clean checkout), --tag X.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const here = args.includes("--here");
const tagArg = args.includes("--tag") ? args[args.indexOf("--tag") + 1] : process.env.GITHUB_REF_TYPE === "tag" ? process.env.GITHUB_REF_NAME : undefined;

const repo = resolve(import.meta.dirname, "..");
const failures = [];
const ok = (msg) => console.log(`  ok   ${msg}`);
const fail = (msg) => {
  failures.push(msg);
  console.log(`  FAIL ${msg}`);
};
const check = (cond, msg, why = "") => (cond ? ok(msg) : fail(why ? `${msg}: ${why}` : msg));
const temps = [];

function checkout() {
  if (here) return repo;
  try {
    execFileSync("git", ["-C", repo, "rev-parse", "--verify", "HEAD"], { stdio: "ignore" });
  } catch {
    console.log("not a git checkout: checking the working tree instead of a clean checkout of HEAD");
    return repo;
  }
  const dir = mkdtempSync(join(tmpdir(), "vault-mcp-release-"));
  temps.push(dir);
  execFileSync("sh", ["-c", `git -C "${repo}" archive --format=tar HEAD | tar -x -C "${dir}"`], { stdio: "inherit" });
  symlinkSync(join(repo, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

function run(cwd, cmd, cmdArgs) {
  execFileSync(cmd, cmdArgs, { cwd, stdio: "inherit", env: { ...process.env, npm_config_update_notifier: "false" } });
}

function semverCmp(a, b) {
  const pa = a.split(".").map(Number), pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

async function until(check, what, ms = 30000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Loads main.js with `obsidian` resolved to the stand-in, starts the plugin on a temp vault, asks /health. */
async function smokeTest(dir, manifest) {
  const esbuild = (await import("esbuild")).default;
  const standIn = join(dir, "dist", "release-stand-in.cjs");
  await esbuild.build({ entryPoints: [join(dir, "tests/stand-in/obsidian.ts")], bundle: true, platform: "node", format: "cjs", target: "node20", outfile: standIn, logLevel: "warning", packages: "external" });
  const require = createRequire(join(dir, "package.json"));
  const Module = require("node:module");
  const obsidian = require(standIn);
  const load = Module._load;
  Module._load = function (request, ...rest) {
    return request === "obsidian" ? obsidian : load.call(this, request, ...rest);
  };
  const vault = mkdtempSync(join(tmpdir(), "vault-mcp-release-vault-"));
  temps.push(vault);
  writeFileSync(join(vault, "Hello.md"), "# Hello\n\nA note for the release check.\n");
  const port = await freePort();
  const token = "release-check-token-0123456789abcdefghijklmnop";
  mkdirSync(join(vault, ".obsidian/plugins", manifest.id), { recursive: true });
  writeFileSync(join(vault, ".obsidian/plugins", manifest.id, "data.json"), JSON.stringify({ port, token }));
  const PluginClass = require(join(dir, "main.js")).default;
  ok("main.js loads under the Obsidian stand-in");
  const { createPlugin } = obsidian.createTestApp(vault);
  const plugin = createPlugin(PluginClass, manifest);
  await plugin.load();
  const status = () => plugin.statusBarItems[0]?.getText() ?? "";
  try {
    await until(() => status() === `MCP: listening on :${port}`, `the server to listen (status bar: "${status()}")`);
    const health = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json());
    check(health.status === "ok", `the plugin's server answers /health on 127.0.0.1:${port}`, JSON.stringify(health));
    return { port, token, stop: async () => { void plugin.unload(); await plugin.shutdown(); } };
  } catch (e) {
    void plugin.unload();
    await plugin.shutdown();
    throw e;
  }
}

/** Runs the bundle's bridge as Claude Desktop would (its mcp_config, user_config filled in) and initializes. */
async function bridgeInitialize(unpacked, mcpbManifest, url, token) {
  const fill = (s) => s.replaceAll("${__dirname}", unpacked).replaceAll("${user_config.server_url}", url).replaceAll("${user_config.access_token}", token);
  const cfg = mcpbManifest.server.mcp_config;
  const env = { ...process.env };
  for (const [k, v] of Object.entries(cfg.env ?? {})) env[k] = fill(v);
  const child = spawn(cfg.command === "node" ? process.execPath : cfg.command, (cfg.args ?? []).map(fill), { env, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  child.stdout.on("data", (d) => (out += d));
  child.stdin.write(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "release-check", version: "1" } } }) + "\n");
  try {
    await until(() => out.includes("\n"), "the bridge's answer to initialize", 20000);
    const reply = JSON.parse(out.split("\n")[0]);
    check(reply.result?.serverInfo !== undefined, "the bundle's bridge, run with its mcp_config and user_config, initializes a session", out.slice(0, 300));
  } finally {
    child.stdin.end();
    child.kill();
  }
}

async function main() {
  const dir = checkout();
  console.log(`release:check in ${here ? "the working tree" : `a clean checkout of HEAD (${dir})`}`);

  console.log("\n::: build");
  run(dir, process.execPath, ["esbuild.config.mjs", "production"]);
  for (const f of ["main.js", "manifest.json", "styles.css"]) check(existsSync(join(dir, f)), `${f} is there`);
  const { buildMcpb } = await import(join(dir, "scripts/build-mcpb.mjs"));
  const cwd = process.cwd();
  process.chdir(dir);
  let mcpbPath;
  try {
    mcpbPath = await buildMcpb("dist/vault-mcp.mcpb", { silent: true });
  } finally {
    process.chdir(cwd);
  }
  check(existsSync(mcpbPath), "dist/vault-mcp.mcpb is built (mcpb pack)");

  console.log("\n::: versions");
  const json = (f) => JSON.parse(readFileSync(join(dir, f), "utf8"));
  const manifest = json("manifest.json");
  const pkg = json("package.json");
  const lock = json("package-lock.json");
  const versions = json("versions.json");
  const v = manifest.version;
  check(/^\d+\.\d+\.\d+$/.test(v), `manifest version ${v} is x.y.z (no "v")`);
  check(pkg.version === v, "package.json has the manifest's version", pkg.version);
  check(lock.version === v && lock.packages?.[""]?.version === v, "package-lock.json has the manifest's version", `${lock.version} / ${lock.packages?.[""]?.version}`);
  check(versions[v] === manifest.minAppVersion, `versions.json maps ${v} to minAppVersion ${manifest.minAppVersion}`, String(versions[v]));
  const npmrc = existsSync(join(dir, ".npmrc")) ? readFileSync(join(dir, ".npmrc"), "utf8") : "";
  check(/^tag-version-prefix=""$/m.test(npmrc), '.npmrc sets tag-version-prefix="" (npm version tags x.y.z)');
  if (tagArg !== undefined) check(tagArg === v, `the tag equals the manifest version`, `tag ${tagArg}, manifest ${v}`);

  console.log("\n::: manifest rules");
  try {
    run(dir, process.execPath, [join(dir, "node_modules/eslint/bin/eslint.js"), "--no-warn-ignored", "--max-warnings=0", "manifest.json"]);
    ok("eslint-plugin-obsidianmd validate-manifest passes");
  } catch {
    fail("eslint-plugin-obsidianmd validate-manifest reports problems (above)");
  }
  check(/^[a-z0-9]+(-[a-z0-9]+)*$/.test(manifest.id) && !manifest.id.includes("obsidian") && !manifest.id.endsWith("plugin"), `id "${manifest.id}": lowercase letters, digits and dashes, no "obsidian", not ending in "plugin"`);
  check(manifest.isDesktopOnly === true, "isDesktopOnly is true (the plugin uses Node and Electron APIs)");
  check(typeof manifest.authorUrl === "string" && /^https:\/\//.test(manifest.authorUrl) && !/obsidian\.md/.test(manifest.authorUrl), "authorUrl is an https URL of the author's");
  const { obsidianApisUsed, GUARDED, compareVersions } = await import(join(dir, "scripts/obsidian-api-since.mjs"));
  const used = [...obsidianApisUsed(dir)].filter(([name, since]) => since && !GUARDED.has(name)).sort((a, b) => compareVersions(b[1], a[1]));
  const [newestName, newestSince] = used[0] ?? ["-", "0.0.0"];
  check(compareVersions(manifest.minAppVersion, newestSince) >= 0, `minAppVersion ${manifest.minAppVersion} ≥ ${newestSince}, the newest obsidian API the plugin uses (${newestName})`);

  console.log("\n::: main.js");
  const size = statSync(join(dir, "main.js")).size;
  console.log(`  main.js is ${size} bytes (${(size / 1024 / 1024).toFixed(2)} MB); styles.css ${statSync(join(dir, "styles.css")).size} bytes`);

  console.log("\n::: the .mcpb");
  const { unpackExtension, McpbManifestSchema } = await import(createRequire(join(dir, "package.json")).resolve("@anthropic-ai/mcpb"));
  const unpacked = mkdtempSync(join(tmpdir(), "vault-mcp-release-mcpb-"));
  temps.push(unpacked);
  await unpackExtension({ mcpbPath, outputDir: unpacked, silent: true });
  const bundle = JSON.parse(readFileSync(join(unpacked, "manifest.json"), "utf8"));
  const { MANIFEST_SCHEMAS } = await import(createRequire(join(dir, "package.json")).resolve("@anthropic-ai/mcpb"));
  const schema = (MANIFEST_SCHEMAS ?? {})[bundle.manifest_version] ?? McpbManifestSchema;
  const parsed = schema.safeParse(bundle);
  check(parsed.success, `its manifest.json passes @anthropic-ai/mcpb's manifest schema ${bundle.manifest_version}`, parsed.success ? "" : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  check(bundle.version === v, `its version is ${v}`, bundle.version);
  check(existsSync(join(unpacked, bundle.server?.entry_point ?? "-")), `its entry point ${bundle.server?.entry_point} is in the bundle`);
  const uc = bundle.user_config ?? {};
  check(uc.server_url?.type === "string" && uc.server_url.required === true, "its user_config asks for the server URL");
  check(uc.access_token?.sensitive === true && uc.access_token.required === true, "its user_config asks for the access token, stored as a secret (sensitive)");
  check(!JSON.stringify(bundle.server.mcp_config.args).includes("access_token"), "the token goes to the bridge in its environment, not on its command line");

  console.log("\n::: main.js under the Obsidian stand-in");
  const server = await smokeTest(dir, manifest);
  try {
    await bridgeInitialize(unpacked, bundle, `http://127.0.0.1:${server.port}/mcp`, server.token);
  } finally {
    await server.stop();
  }
}

try {
  await main();
} catch (e) {
  fail(e instanceof Error ? e.stack ?? e.message : String(e));
} finally {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
}
console.log(failures.length === 0 ? "\nrelease:check passed" : `\nrelease:check FAILED (${failures.length}):\n${failures.map((f) => `  - ${f}`).join("\n")}`);
process.exit(failures.length === 0 ? 0 : 1);
