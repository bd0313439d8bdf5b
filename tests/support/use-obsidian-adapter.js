process.env.VAULT_MCP_TEST_ADAPTER = "obsidian";
