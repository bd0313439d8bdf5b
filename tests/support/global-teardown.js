// Removes the run's temp folder made by global-setup.js (see there).
const fs = require("node:fs");

module.exports = async () => {
  const dir = process.env.VAULT_MCP_JEST_TMP;
  if (dir) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
};
