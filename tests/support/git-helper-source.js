// Jest stand-in for the esbuild virtual module: the built git helper's source, "" before a build.
const fs = require("node:fs");
const path = require("node:path");
const file = path.join(__dirname, "..", "..", "dist", "git-helper.js");
module.exports = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
