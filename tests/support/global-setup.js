// One temp folder for a whole `jest` run: every test's temp vaults, model folders, token files and
// the stand-in's "system trash" go under it (os.tmpdir() reads TMPDIR on each call, and the workers
// are started after this with this environment), and global-teardown.js removes it. Without it, each
// `npm test` left ~150 folders in /tmp (2,847 stand-in trash folders after 25 runs here).
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

module.exports = async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "vault-mcp-jest-"));
  process.env.VAULT_MCP_JEST_TMP = dir;
  process.env.TMPDIR = dir;
};
