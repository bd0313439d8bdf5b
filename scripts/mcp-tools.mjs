// Shared by scripts/conformance.mjs and scripts/inspector.mjs: fetches Node 22 and the official MCP
// test tools from the npm registry into a cache folder (no root, no global install), and starts the
// headless server on a temp copy of the example vault.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Pinned: a new suite version may add scenarios, which must be reviewed before the baseline changes. */
export const VERSIONS = { node: "22", conformance: "0.1.16", inspector: "2.12.0" };

/** The npm package holding a plain Node binary for this platform (what the `node` package's preinstall fetches). */
function nodeBinaryPackage() {
  const platform = process.platform === "win32" ? "win" : process.platform;
  const prefix = process.platform === "darwin" && process.arch === "arm64" ? "node-bin" : "node";
  return `${prefix}-${platform}-${process.arch}`;
}

/**
 * Installs (once) Node 22 and the given packages into `VAULT_MCP_TOOLS_DIR` or
 * node_modules/.cache/vault-mcp-tools, and returns the path of a Node ≥ 22 binary and the folder.
 * Uses the running Node when it is already ≥ 22.
 */
export function ensureTools(packages) {
  const dir = process.env.VAULT_MCP_TOOLS_DIR ?? path.join(ROOT, "node_modules", ".cache", "vault-mcp-tools");
  const nodePkg = nodeBinaryPackage();
  const useOwnNode = Number(process.versions.node.split(".")[0]) >= 22;
  const wanted = useOwnNode ? packages : [`${nodePkg}@${VERSIONS.node}`, ...packages];
  const missing = wanted.filter((spec) => {
    const name = spec.slice(0, spec.lastIndexOf("@") > 0 ? spec.lastIndexOf("@") : spec.length);
    const pj = path.join(dir, "node_modules", ...name.split("/"), "package.json");
    if (!existsSync(pj)) return true;
    const version = spec.slice(name.length + 1);
    const installed = JSON.parse(readFileSync(pj, "utf8")).version;
    return version && !(installed === version || installed.startsWith(version + "."));
  });
  if (missing.length > 0) {
    mkdirSync(dir, { recursive: true });
    if (!existsSync(path.join(dir, "package.json"))) writeFileSync(path.join(dir, "package.json"), '{ "private": true }\n');
    process.stderr.write(`Installing ${missing.join(", ")} into ${path.relative(ROOT, dir) || dir} …\n`);
    // --ignore-scripts: nothing here needs an install script (the Node binary comes from its platform package).
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = spawnSync(npm, ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", ...missing], { cwd: dir, stdio: ["ignore", "inherit", "inherit"] });
    if (r.status !== 0) throw new Error(`npm install of ${missing.join(", ")} failed (exit ${r.status}).`);
  }
  const node = useOwnNode ? process.execPath : path.join(dir, "node_modules", nodePkg, "bin", process.platform === "win32" ? "node.exe" : "node");
  if (!existsSync(node)) throw new Error(`No Node binary at ${node}.`);
  return { node, dir };
}

/** A free TCP port on 127.0.0.1 (bind 0, read it, release it). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * Starts `node dist/cli.js` on a temp copy of examples/vault with a random token, and waits for
 * /health. Returns { url, port, token, stop() }.
 */
export async function startHeadless({ write = false, log = (l) => process.stderr.write(l) } = {}) {
  const cli = path.join(ROOT, "dist", "cli.js");
  if (!existsSync(cli)) throw new Error("dist/cli.js is missing: run `npm run build` first.");
  const work = mkdtempSync(path.join(tmpdir(), "vault-mcp-suite-"));
  const vault = path.join(work, "vault");
  cpSync(path.join(ROOT, "examples", "vault"), vault, { recursive: true });
  const token = randomBytes(32).toString("base64url");
  const tokenFile = path.join(work, "token");
  writeFileSync(tokenFile, token + "\n", { mode: 0o600 });
  const port = await freePort();
  const args = [cli, vault, "--port", String(port), "--token-file", tokenFile, "--state-dir", path.join(work, "state")];
  if (write) args.push("--write");
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout.on("data", (d) => (output += d));
  child.stderr.on("data", (d) => {
    output += d;
    log(String(d));
  });
  const exited = new Promise((resolve) => child.once("exit", (code) => resolve(code)));

  const deadline = Date.now() + 60_000;
  for (;;) {
    const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r(undefined), 200))]);
    if (code !== undefined) throw new Error(`The server exited (code ${code}) before it was ready:\n${output}`);
    const healthy = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
    if (healthy) break;
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`The server did not answer /health within 60 s:\n${output}`);
    }
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    token,
    tokenFile,
    stop: async () => {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        const t = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(t);
      }
      rmSync(work, { recursive: true, force: true });
    },
  };
}
