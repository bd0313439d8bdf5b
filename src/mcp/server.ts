import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ListToolsRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { cancelledError, isVaultError, VaultError } from "../core/errors";
import type { CoreServices } from "../core/services";
import { registerPrompts } from "./prompts";
import { listedTool } from "./listing";
import { checkToolArgs } from "./validation";
import { registerResources } from "./resources";
import type { ToolContext, ToolDef } from "./tool";
import { clearTimer, setTimer, type TimerHandle } from "../core/timers";

export interface ServerInfo {
  name: string;
  version: string;
  instructions: string;
  /** Which tools to offer (default: all). */
  tools?: ToolProfile;
  log?: (level: "debug" | "info" | "warn" | "error", message: string) => void;
  /** Time limit of one read tool call in ms (default `DEFAULT_TOOL_TIMEOUT_MS`; 0 = none). */
  toolTimeoutMs?: number;
  /**
   * Resolves once the vault is open (listed, every note's metadata read) and renames a crash cut
   * short are finished. The server answers before that (initialize, tools/list); a tool call waits
   * for it, unless its tool says it answers while the vault opens (`whileOpening`).
   */
  opening?: Promise<unknown>;
}

/** How long one read tool call may take before it is answered with a timeout error. */
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;

/** Sliced reads stop this much before the limit, to answer with what they have: a tenth of it, at most 1 s. */
export function readDeadline(start: number, limitMs: number): number {
  return limitMs > 0 ? start + limitMs - Math.min(1000, limitMs / 10) : Infinity;
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

/** The tools a server offers: by profile; write tools only in write mode; host-specific tools only on their host; semantic ones only with semantic search, git ones only in a git-backed vault. */
export function selectTools(all: readonly ToolDef[], services: Pick<CoreServices, "writeMode" | "host"> & { semantic?: unknown; git?: unknown }, profile: ToolProfile = { profile: "full" }): ToolDef[] {
  const inProfile = (name: string): boolean => {
    if (profile.profile === "custom") return profile.enabled.includes(name);
    return profile.profile === "full" || CORE_TOOLS.includes(name);
  };
  return all.filter((t) => (t.access === "read" || services.writeMode) && (!t.hosts || t.hosts.includes(services.host)) && (!t.needs || Boolean(services[t.needs])) && inProfile(t.name));
}

/**
 * The JSON Schema validator every session's server shares, made on first use. The SDK makes an Ajv
 * instance per server by default (its meta-schemas compiled each time) for one purpose: checking a
 * client's answer to an elicitation, which these tools never ask for. A client's first session paid
 * for it while the vault was still being opened (a first `initialize` ~30 ms in a fresh process).
 */
let ajv: AjvJsonSchemaValidator | null = null;
const sharedValidator: jsonSchemaValidator = {
  getValidator: <T>(schema: JsonSchemaType): JsonSchemaValidator<T> => (ajv ??= new AjvJsonSchemaValidator()).getValidator<T>(schema),
};

/**
 * Builds one `McpServer` (one per client session) over the shared core services.
 * Tool handlers' `VaultError`s become `isError` results with their message; anything else is
 * logged and reported as an internal error without machine paths.
 */
export function createMcpServer(services: CoreServices, tools: readonly ToolDef[], info: ServerInfo): McpServer {
  const server = new McpServer(
    { name: info.name, version: info.version },
    { instructions: info.instructions, capabilities: { logging: {} }, jsonSchemaValidator: sharedValidator },
  );
  const stopResources = registerResources(server, services);
  registerPrompts(server, services);
  server.server.onclose = () => stopResources();
  const selected = selectTools(tools, services, info.tools);
  useOwnArgumentCheck(server, new Map(selected.map((d) => [d.name, d])));
  for (const def of selected) {
    server.registerTool(
      def.name,
      {
        title: def.title,
        description: def.description,
        inputSchema: def.input,
        outputSchema: def.output,
        annotations: def.annotations,
        ...(def.meta ? { _meta: def.meta } : {}),
      },
      async (args: Record<string, unknown>, extra): Promise<CallToolResult> => {
        const limitMs = info.toolTimeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
        // One signal for the handler: the client's cancellation or the time limit, whichever comes first.
        const stop = new AbortController();
        const onCancel = () => stop.abort();
        if (extra.signal.aborted) stop.abort();
        else extra.signal.addEventListener("abort", onCancel, { once: true });
        const progressToken = extra._meta?.progressToken;
        const ctx: ToolContext = {
          services,
          clientName: server.server.getClientVersion()?.name ?? "unknown client",
          signal: stop.signal,
          deadline: readDeadline(Date.now(), limitMs),
          progress:
            progressToken === undefined
              ? undefined
              : (done, total, message) => {
                  extra.sendNotification({ method: "notifications/progress", params: { progressToken, progress: done, ...(total !== undefined ? { total } : {}), message } }).catch(() => undefined);
                },
        };
        const work = runHandler(def, args, ctx, info);
        // Write tools are not cut off: a change stopped half-way, or answered "failed" and finished
        // later, would be worse than a slow answer, and Obsidian's confirmation waits for the owner.
        if (def.access === "write" || !(limitMs > 0)) return work.finally(() => extra.signal.removeEventListener("abort", onCancel));
        let timer: TimerHandle | undefined;
        const timedOut = new Promise<CallToolResult>((resolve) => {
          timer = setTimer(() => {
            stop.abort();
            info.log?.("warn", `tool ${def.name} passed its ${limitMs} ms time limit and was answered with a timeout`);
            resolve(errorResult(timeoutMessage(def.name, limitMs)));
          }, limitMs);
        });
        try {
          return await Promise.race([work, timedOut]);
        } finally {
          clearTimer(timer);
          extra.signal.removeEventListener("abort", onCancel);
        }
      },
    );
  }
  // The listing, compacted (see listing.ts), in place of the SDK's.
  if (selected.length) server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: selected.map(listedTool) }));
  return server;
}

/**
 * Arguments are checked by `checkToolArgs` instead of the SDK's own check, whose message a model
 * could not act on. It replaces the SDK's (private) `validateToolInput` on this instance: same
 * place in the call, same parsed arguments (defaults applied); an error it throws becomes the
 * call's `isError` result. tests/e2e/tool-arguments.test.ts fails if an SDK update moves it.
 */
function useOwnArgumentCheck(server: McpServer, defs: ReadonlyMap<string, ToolDef>): void {
  const sdk = server as unknown as { validateToolInput: (tool: unknown, args: unknown, name: string) => Promise<unknown> };
  const own = sdk.validateToolInput.bind(server);
  sdk.validateToolInput = async (tool, args, name) => {
    const def = defs.get(name);
    return def ? checkToolArgs(def, args) : own(tool, args, name);
  };
}

/** Runs a handler; never rejects: failures become `isError` results. */
async function runHandler(def: ToolDef, args: Record<string, unknown>, ctx: ToolContext, info: ServerInfo): Promise<CallToolResult> {
  try {
    if (info.opening && !def.whileOpening) await untilOpen(info.opening, def.access === "write" ? Infinity : ctx.deadline, ctx);
    // A write the client stopped waiting for while the vault opened is not begun (its answer would reach no one).
    if (def.access === "write" && ctx.signal?.aborted) throw cancelledError();
    const result = await def.handler(args, ctx);
    return {
      content: [{ type: "text", text: result.text ?? JSON.stringify(result.structured) }],
      structuredContent: result.structured,
      ...(result.meta ? { _meta: result.meta } : {}),
    };
  } catch (e) {
    if (isVaultError(e)) return errorResult(e.message);
    const message = redactPaths(e instanceof Error ? e.message : String(e));
    info.log?.("error", `tool ${def.name} failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return errorResult(`Internal error in ${def.name}: ${message}. Nothing was changed by the failed step; try again, and report it if it persists.`);
  }
}

/**
 * Waits for the vault to open, at most until the call's deadline (a write waits to the end); past it, an `unavailable` error
 * that says how far opening has come (a read call is not held to its time limit in silence).
 */
async function untilOpen(opening: Promise<unknown>, deadline: number, ctx: ToolContext): Promise<void> {
  let done = false;
  const open = opening.then(
    () => void (done = true),
    () => void (done = true),
  );
  if (deadline === Infinity) {
    // A write waits for the vault to open, or until the call is cancelled.
    const signal = ctx.signal;
    if (!signal) return open;
    if (signal.aborted) return;
    let onAbort: (() => void) | undefined;
    await Promise.race([open, new Promise<void>((r) => signal.addEventListener("abort", (onAbort = () => r()), { once: true }))]);
    if (onAbort) signal.removeEventListener("abort", onAbort);
    return;
  }
  let timer: TimerHandle | undefined;
  await Promise.race([open, new Promise<void>((r) => (timer = setTimer(r, Math.max(0, deadline - Date.now()))))]);
  clearTimer(timer);
  if (done) return;
  const p = ctx.services.port.openingProgress?.();
  const how = p && p.total > 0 ? ` (${p.read} of ${p.total} notes read)` : p ? " (listing its files)" : "";
  throw new VaultError("unavailable", `The vault is still being opened${how}; call again in a few seconds. search already answers (saying when its index is still loading).`);
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

export function timeoutMessage(tool: string, limitMs: number): string {
  const s = limitMs >= 1000 ? `${Math.round(limitMs / 100) / 10} s` : `${limitMs} ms`;
  return (
    `${tool} did not finish within the ${s} time limit of one call and was stopped. ` +
    "Narrow it (a folder, a path pattern, a more specific query or a smaller limit) and call again; " +
    "the vault owner can raise the limit (Obsidian: Settings → Vault MCP → Tool call time limit; headless: --tool-timeout)."
  );
}

/** Unexpected errors may carry absolute machine paths (ENOENT …); never show them to a client. */
export function redactPaths(message: string): string {
  return message.replace(/(?:[A-Za-z]:)?(?:[\\/][^\s'"`,:;)]+){2,}/g, "<path>");
}
