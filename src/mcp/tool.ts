import type { z } from "zod";
import type { ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { CoreServices } from "../core/services";

/**
 * A tool is data: name, schemas, annotations and a handler. `mcp/server.ts` registers the
 * definitions in `mcp/tools/index.ts` on an `McpServer`; nothing else knows about the SDK.
 *
 * Handlers throw `VaultError` for expected failures (they become `isError` results whose text is the
 * error's message) and return `structured` matching `output` (the SDK validates it).
 */
export interface ToolContext {
  services: CoreServices;
  /** The connected client's name from `initialize`, for the activity log. */
  clientName: string;
  /** Aborted when the client cancels the call or its time limit passes. */
  signal?: AbortSignal;
  /**
   * When (`Date.now()` ms) a long read should stop and answer with what it has (`truncated`), a
   * little before the call's time limit, at which `mcp/server.ts` answers with a timeout error
   * whatever the handler is doing. `Infinity` when there is no limit.
   */
  deadline: number;
  /** Progress of a long call (`notifications/progress`), when the client asked for it with a progress token. */
  progress?: (done: number, total: number | undefined, message: string) => void;
}

export interface ToolResult<O> {
  structured: O;
  /** Text for the model; defaults to the compact JSON of `structured`. */
  text?: string;
  /** `_meta` of the result, e.g. `{ index_stale: true }`. */
  meta?: Record<string, unknown>;
}

export type ToolAccess = "read" | "write";

export interface ToolDef<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  /** One or two sentences: what it does and when to use it. Keep tools/list small. */
  description: string;
  input: I;
  output: O;
  annotations: Required<Pick<ToolAnnotations, "readOnlyHint" | "destructiveHint" | "idempotentHint" | "openWorldHint">>;
  /** Write tools are registered only when the owner enabled write mode. */
  access: ToolAccess;
  /** A correct call, shown when a call's arguments are invalid (a test checks it against `input`). */
  example: Record<string, unknown>;
  /** Tools that need a live Obsidian workspace (active note…) are registered only there. */
  hosts?: ReadonlyArray<"obsidian" | "node">;
  /** `_meta` of the tool in tools/list, e.g. the MCP Apps view it opens (`ui.resourceUri`). */
  meta?: Record<string, unknown>;
  /** Tools that need semantic search (or a git-backed vault) are registered only when it is on. */
  needs?: "semantic" | "git";
  /**
   * The tool answers while the vault is still being opened (see `ServerInfo.opening`); it must then
   * say so itself when its answer may be incomplete. Other tools wait until the vault is open.
   */
  whileOpening?: boolean;
  handler(args: z.infer<z.ZodObject<I>>, ctx: ToolContext): Promise<ToolResult<z.infer<z.ZodObject<O>>>>;
}

/** Identity function that keeps the handler's argument and result types tied to the schemas. */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(def: ToolDef<I, O>): ToolDef<I, O> {
  return def;
}

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false } as const;
