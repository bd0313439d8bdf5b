import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { isVaultError } from "../core/errors";
import type { CoreServices } from "../core/services";
import { registerPrompts } from "./prompts";
import { registerResources } from "./resources";
import type { ToolContext, ToolDef } from "./tool";

export interface ServerInfo {
  name: string;
  version: string;
  instructions: string;
  /** Which tools to offer (default: all). */
  tools?: ToolProfile;
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

/**
 * Tool profiles, so a client's context is not eaten by tools it will not use:
 * `core` (the everyday set), `full` (everything), `custom` (the owner's per-tool switches).
 */
export type ToolProfile = { profile: "core" | "full" } | { profile: "custom"; enabled: readonly string[] };

export const CORE_TOOLS: readonly string[] = [
  "stats", "list_documents", "read", "search", "find_notes", "grep", "get_context", "get_backlinks", "get_outlinks",
  "get_folder_instructions", "get_active_note", "write", "edit", "update_frontmatter",
];

/** The tools a server offers: by profile; write tools only in write mode; host-specific tools only on their host. */
export function selectTools(all: readonly ToolDef[], services: Pick<CoreServices, "writeMode" | "host">, profile: ToolProfile = { profile: "full" }): ToolDef[] {
  const inProfile = (name: string): boolean => {
    if (profile.profile === "custom") return profile.enabled.includes(name);
    return profile.profile === "full" || CORE_TOOLS.includes(name);
  };
  return all.filter((t) => (t.access === "read" || services.writeMode) && (!t.hosts || t.hosts.includes(services.host)) && inProfile(t.name));
}

/**
 * Builds one `McpServer` (one per client session) over the shared core services.
 * Tool handlers' `VaultError`s become `isError` results with their message; anything else is
 * logged and reported as an internal error without machine paths.
 */
export function createMcpServer(services: CoreServices, tools: readonly ToolDef[], info: ServerInfo): McpServer {
  const server = new McpServer(
    { name: info.name, version: info.version },
    { instructions: info.instructions, capabilities: { logging: {} } },
  );
  const stopResources = registerResources(server, services);
  registerPrompts(server, services);
  server.server.onclose = () => stopResources();
  for (const def of selectTools(tools, services, info.tools)) {
    server.registerTool(
      def.name,
      {
        title: def.title,
        description: def.description,
        inputSchema: def.input,
        outputSchema: def.output,
        annotations: { title: def.title, ...def.annotations },
      },
      async (args: Record<string, unknown>, extra): Promise<CallToolResult> => {
        const ctx: ToolContext = {
          services,
          clientName: server.server.getClientVersion()?.name ?? "unknown client",
          signal: extra.signal,
        };
        try {
          const result = await def.handler(args, ctx);
          return {
            content: [{ type: "text", text: result.text ?? JSON.stringify(result.structured) }],
            structuredContent: result.structured,
            ...(result.meta ? { _meta: result.meta } : {}),
          };
        } catch (e) {
          if (isVaultError(e)) return { content: [{ type: "text", text: e.message }], isError: true };
          const message = redactPaths(e instanceof Error ? e.message : String(e));
          info.log?.("error", `tool ${def.name} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
          return {
            content: [{ type: "text", text: `Internal error in ${def.name}: ${message}. Nothing was changed by the failed step; try again, and report it if it persists.` }],
            isError: true,
          };
        }
      },
    );
  }
  return server;
}

/** Unexpected errors may carry absolute machine paths (ENOENT …); never show them to a client. */
export function redactPaths(message: string): string {
  return message.replace(/(?:[A-Za-z]:)?(?:[\\/][^\s'"`,:;)]+){2,}/g, "<path>");
}
