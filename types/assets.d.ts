declare module "*.wasm" {
  const bytes: Uint8Array;
  export default bytes;
}

/** The bundled stdio bridge's source (dist/bridge.js), inlined into main.js by esbuild.config.mjs. */
declare module "virtual:bridge-source" {
  const source: string;
  export default source;
}

/** An MCP Apps view (src/mcp/apps/*.html), inlined as text by esbuild (tests: tests/support/text-module.js). */
declare module "*.html" {
  const html: string;
  export default html;
}

/** The built-in model's worker (dist/embed-worker.mjs), inlined into main.js by esbuild.config.mjs. */
declare module "virtual:embed-worker-source" {
  const source: string;
  export default source;
}

/** The git helper (dist/git-helper.js), inlined into main.js by esbuild.config.mjs. */
declare module "virtual:git-helper-source" {
  const source: string;
  export default source;
}
