/** Ready-to-paste client configurations for a running server (settings tab, CLI banner, README). */
export interface ClientConfig {
  id: string;
  label: string;
  text: string;
}

export function serverKey(vaultName: string): string {
  const slug = vaultName.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
  return `vault-${slug || "obsidian"}`;
}

export interface ClientConfigOptions {
  /** Absolute path of the stdio bridge (`bridge.js`), for Claude Desktop and other stdio-only clients. */
  bridgePath?: string | null;
}

export function clientConfigs(url: string, token: string, vaultName: string, opts: ClientConfigOptions = {}): ClientConfig[] {
  const key = serverKey(vaultName);
  const headers = { Authorization: `Bearer ${token}` };
  const desktop: ClientConfig[] = opts.bridgePath
    ? [
        {
          id: "claude-desktop",
          label: "Claude Desktop (claude_desktop_config.json)",
          text: JSON.stringify({ mcpServers: { [key]: { command: "node", args: [opts.bridgePath, "--url", url, "--token", token] } } }, null, 2),
        },
      ]
    : [];
  return [
    {
      id: "claude-code",
      label: "Claude Code",
      text: `claude mcp add --transport http ${key} ${url} --header "Authorization: Bearer ${token}"`,
    },
    {
      id: "cursor",
      label: "Cursor (~/.cursor/mcp.json)",
      text: JSON.stringify({ mcpServers: { [key]: { url, headers } } }, null, 2),
    },
    {
      id: "vscode",
      label: "VS Code (.vscode/mcp.json)",
      text: JSON.stringify({ servers: { [key]: { type: "http", url, headers } } }, null, 2),
    },
    {
      id: "http",
      label: "Any Streamable HTTP client",
      text: JSON.stringify({ mcpServers: { [key]: { type: "streamable-http", url, headers } } }, null, 2),
    },
    ...desktop,
  ];
}
