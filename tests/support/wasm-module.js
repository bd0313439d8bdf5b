// Jest stand-in for esbuild's `--loader:.wasm=binary`: the sql.js WASM as bytes.
const fs = require("node:fs");
module.exports = new Uint8Array(fs.readFileSync(require.resolve("sql.js/dist/sql-wasm.wasm")));
module.exports.default = module.exports;
