import esbuild from "esbuild";
import { builtinModules } from "node:module";
import { readFileSync, statSync, readdirSync } from "node:fs";
import { join } from "node:path";

const mode = process.argv[2] ?? "dev";
const production = mode === "production" || mode === "cli-if-stale";
const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  // An explicit target: without it esbuild 0.28 emits Uint8Array.fromBase64 for inlined WASM, which Node 20 lacks.
  target: "node20",
  // The MCP Apps view (src/mcp/apps/*.html) is inlined as text.
  loader: { ".wasm": "binary", ".html": "text" },
  logLevel: "warning",
  sourcemap: production ? false : "inline",
  minify: production,
  legalComments: "none",
  treeShaking: true,
};

/**
 * `import source from "virtual:bridge-source"` / `"virtual:embed-worker-source"`: dist/bridge.js and
 * dist/embed-worker.mjs as text (built first), for the plugin to write beside itself.
 */
const BUILT_SOURCES = { "bridge-source": "dist/bridge.js", "embed-worker-source": "dist/embed-worker.mjs", "git-helper-source": "dist/git-helper.js" };
const bridgeSource = {
  name: "built-sources",
  setup(build) {
    build.onResolve({ filter: /^virtual:(bridge-source|embed-worker-source|git-helper-source)$/ }, (args) => ({ path: args.path.slice("virtual:".length), namespace: "built-source" }));
    build.onLoad({ filter: /.*/, namespace: "built-source" }, (args) => ({
      contents: exists(BUILT_SOURCES[args.path]) ? readFileSync(BUILT_SOURCES[args.path], "utf8") : "",
      loader: "text",
    }));
  },
};

const plugin = {
  ...common,
  plugins: [bridgeSource],
  entryPoints: ["src/hosts/obsidian/main.ts"],
  outfile: "main.js",
  external: ["obsidian", "electron", "@codemirror/*", "@lezer/*", ...nodeBuiltins],
  // Obsidian (Electron 30+) runs Chrome 124+/Node 20.
  target: ["node20", "chrome120"],
};

const cli = {
  ...common,
  entryPoints: { cli: "src/hosts/node/cli.ts", bridge: "src/hosts/node/bridge-cli.ts", "git-helper": "src/hosts/common/git-helper.ts", "scan-worker": "src/hosts/node/scan-worker.ts" },
  outdir: "dist",
  external: [...nodeBuiltins, "better-sqlite3"],
  banner: { js: "#!/usr/bin/env node" },
};

/**
 * The built-in model's worker (dist/embed-worker.mjs): ESM, because onnxruntime-web finds its WASM
 * glue through `import.meta.url`; `require` given for the CommonJS parts it bundles.
 */
const embedWorker = {
  ...common,
  format: "esm",
  entryPoints: { "embed-worker": "src/hosts/common/embed-worker.ts" },
  outdir: "dist",
  outExtension: { ".js": ".mjs" },
  external: nodeBuiltins,
  banner: { js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);' },
};

function newestMtime(dir) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function exists(p) {
  try { statSync(p); return true; } catch { return false; }
}

const bench = { ...cli, entryPoints: { bench: "bench/bench.ts" }, banner: undefined };
const quality = { ...cli, entryPoints: { quality: "bench/quality.ts" }, banner: undefined };

if (mode === "bench") {
  await esbuild.build(bench);
} else if (mode === "quality") {
  await esbuild.build(quality);
  // --embeddings builtin runs the model's worker from dist/.
  await esbuild.build(embedWorker);
} else if (mode === "cli-if-stale") {
  // `npm start` builds the CLI only when the sources are newer than the last build.
  // (Each of the CLI's files: a build from before dist/scan-worker.js existed lacks it.)
  const built = Math.min(...["dist/cli.js", "dist/scan-worker.js"].map((f) => (exists(f) ? statSync(f).mtimeMs : 0)));
  if (built < newestMtime("src")) {
    await esbuild.build(cli);
    await esbuild.build(embedWorker);
  }
} else if (production) {
  // The CLI (and dist/bridge.js) first: the plugin inlines the bridge.
  await esbuild.build(cli);
  await esbuild.build(embedWorker);
  await esbuild.build(plugin);
} else {
  await esbuild.build({ ...cli, sourcemap: false });
  await esbuild.build(embedWorker);
  const contexts = await Promise.all([esbuild.context(plugin), esbuild.context(cli)]);
  await Promise.all(contexts.map((c) => c.watch()));
  console.log("watching src/ — rebuilding main.js and dist/cli.js on change");
}
