// Jest stand-in for esbuild's `--loader:.wasm=binary`: the sql.js WASM as bytes.
// (Resolve via the package's main file: a `.wasm` specifier would be mapped back to this file.)
const fs = require("node:fs");
const path = require("node:path");
const file = path.join(path.dirname(require.resolve("sql.js")), "sql-wasm.wasm");
module.exports = new Uint8Array(fs.readFileSync(file));
module.exports.default = module.exports;
