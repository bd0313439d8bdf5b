// Builds dist/vault-mcp.mcpb, the stdio bridge as an MCP Bundle for Claude Desktop, with
// @anthropic-ai/mcpb's pack (which validates the manifest against the bundle schema first).
// The manifest comes from src/hosts/common/mcpb.ts, the same one the settings tab writes.
// Needs dist/bridge.js (npm run build). Usage: node scripts/build-mcpb.mjs [out.mcpb]
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { packExtension } from "@anthropic-ai/mcpb";
import { loadTs } from "./load-ts.mjs";

export async function buildMcpb(out = "dist/vault-mcp.mcpb", { silent = false } = {}) {
  if (!existsSync("dist/bridge.js")) throw new Error("dist/bridge.js is missing: run npm run build first.");
  const { mcpbManifest, MCPB_BRIDGE_PATH } = await loadTs("src/hosts/common/mcpb.ts");
  const { DEFAULT_PORT } = await loadTs("src/hosts/node/args.ts");
  const version = JSON.parse(readFileSync("manifest.json", "utf8")).version;
  const stage = resolve("dist/mcpb");
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(join(stage, "server"), { recursive: true });
  writeFileSync(join(stage, "manifest.json"), JSON.stringify(mcpbManifest(version, `http://127.0.0.1:${DEFAULT_PORT}/mcp`), null, 2) + "\n");
  copyFileSync("dist/bridge.js", join(stage, MCPB_BRIDGE_PATH));
  rmSync(out, { force: true });
  if (!(await packExtension({ extensionPath: stage, outputPath: out, silent }))) throw new Error("mcpb pack failed (see above).");
  return resolve(out);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  buildMcpb(process.argv[2]).then(
    (p) => console.log(`built ${p}`),
    (e) => {
      console.error(e.message);
      process.exit(1);
    },
  );
}
