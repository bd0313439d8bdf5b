// Jest stand-in for esbuild's `--loader:.wasm=binary`: the sql.js WASM as bytes, the default export.
// (Resolve via the package's main file: a `.wasm` specifier would be mapped back to this file.)
// An ES module's shape, not the bytes as `module.exports`: an import of a CommonJS module copies
// each of its own properties (esbuild's `__toESM`), and the bytes' ~650k indexes took ~0.8 s of
// every test file that imported the harness.
const fs = require("node:fs");
const path = require("node:path");
const file = path.join(path.dirname(require.resolve("sql.js")), "sql-wasm.wasm");
module.exports = { __esModule: true, default: new Uint8Array(fs.readFileSync(file)) };
