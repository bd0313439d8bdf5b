// Jest stand-in for the esbuild virtual module: the built stdio bridge's source, "" before a build.
const fs = require("node:fs");
const path = require("node:path");
const file = path.join(__dirname, "..", "..", "dist", "bridge.js");
module.exports = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
