import html from "./explorer.html";

/**
 * The vault explorer, an MCP Apps view (`ui://` resource, `text/html;profile=mcp-app`): one
 * self-contained page (script and styles inline, no network) that Apps-capable clients render
 * beside the conversation. It gets its data only by calling our own read tools through the host
 * (`tools/call` over postMessage): list_directory, search, read, get_backlinks, get_outlinks,
 * find_notes. `browse_vault` and `show_context` point to it.
 */
export const EXPLORER_URI = "ui://vault-mcp/explorer.html";
export const APP_MIME_TYPE = "text/html;profile=mcp-app";
export const EXPLORER_HTML: string = html;

/** The view's metadata: no network at all (every CSP domain list empty), a border, the host's theme. */
export const EXPLORER_UI_META = {
  ui: {
    csp: { connectDomains: [] as string[], resourceDomains: [] as string[], frameDomains: [] as string[], baseUriDomains: [] as string[] },
    prefersBorder: true,
  },
};

/** What a tool's `_meta` carries to open the view (the current key and the older flat one). */
export const EXPLORER_TOOL_META = { ui: { resourceUri: EXPLORER_URI }, "ui/resourceUri": EXPLORER_URI };
