import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolDef } from "./tool";
import { inputSchemaOf } from "./validation";

/**
 * A tool as `tools/list` shows it. Every conversation pays for this list in its context, so it says
 * what a model needs to choose and call a tool, once: the input schema with its descriptions and
 * defaults; the output schema as shapes only (a model reads the answer, not its documentation);
 * no `$schema` keys, no title repeated in the annotations. The SDK's own listing converts the same
 * zod shapes the same way (`z.toJSONSchema`, draft 7) and keeps all of that.
 */
export function listedTool(def: ToolDef): Tool {
  let tool = listed.get(def);
  if (!tool) listed.set(def, (tool = listing(def)));
  return tool;
}

/** Each definition's listing, made once (every session asks for it). */
const listed = new WeakMap<ToolDef, Tool>();

function listing(def: ToolDef): Tool {
  const input = singleTypes(jsonSchema(inputSchemaOf(def), "input"));
  const output = singleTypes(stripForOutput(jsonSchema(z.object(def.output), "output")));
  return {
    name: def.name,
    title: def.title,
    description: def.description,
    inputSchema: input as Tool["inputSchema"],
    outputSchema: output as Tool["outputSchema"],
    annotations: hints(def),
    ...(def.meta ? { _meta: def.meta } : {}),
  };
}

/**
 * The idempotent hint means something only for a tool that is not read-only (spec). The destructive
 * one does too, but it defaults to true, and a client that reads it alone would take a read tool
 * for a destructive one: it stays.
 */
function hints(def: ToolDef): Tool["annotations"] {
  const { readOnlyHint, destructiveHint, idempotentHint, openWorldHint } = def.annotations;
  return readOnlyHint ? { readOnlyHint, destructiveHint, openWorldHint } : { readOnlyHint, destructiveHint, idempotentHint, openWorldHint };
}

type Json = Record<string, unknown>;

function jsonSchema(schema: z.ZodType, io: "input" | "output"): Json {
  const s = z.toJSONSchema(schema, { target: "draft-7", io }) as Json;
  delete s.$schema;
  // A whole number's implied bounds (±2^53-1) say nothing.
  for (const p of Object.values((s.properties ?? {}) as Record<string, Json>)) {
    if (p.maximum === Number.MAX_SAFE_INTEGER) delete p.maximum;
    if (p.minimum === Number.MIN_SAFE_INTEGER) delete p.minimum;
  }
  return s;
}

/**
 * An output schema's shape, one level deep: the answer's fields with their types (a list's items
 * and an object's fields are in the answer itself). Descriptions, `required` lists and
 * `additionalProperties: false` are dropped. (The full schemas cost ~2.5x the bytes; the answer
 * itself shows the rest, and the server validates every answer against the full schema.)
 */
function stripForOutput(node: unknown, depth = 0): Json {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return {};
  const n = node as Json;
  const out: Json = {};
  for (const key of ["type", "enum", "anyOf"] as const) if (n[key] !== undefined) out[key] = key === "anyOf" ? (n[key] as unknown[]).map((x) => stripForOutput(x, depth + 1)) : n[key];
  // Our recursive shapes (a folder tree) are objects.
  if (n.$ref !== undefined) out.type = "object";
  if (depth >= 1) return out;
  if (n.properties && typeof n.properties === "object") {
    out.properties = Object.fromEntries(Object.entries(n.properties as Json).map(([f, fs]) => [f, stripForOutput(fs, depth + 1)]));
  }
  if (n.items && typeof n.items === "object") out.items = stripForOutput(n.items, depth + 1);
  return out;
}

/**
 * `type: ["number", "null"]` as `anyOf` branches of one type each: legal either way, but clients
 * that map schemas onto a single-type dialect (Gemini's function declarations) reject the array.
 */
function singleTypes(node: Json): Json {
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== "object") return v;
    const out: Json = {};
    for (const [k, x] of Object.entries(v as Json)) out[k] = walk(x);
    if (Array.isArray(out.type)) {
      const types = out.type as unknown[];
      delete out.type;
      out.anyOf = types.map((t) => ({ type: t }));
    }
    return out;
  };
  return walk(node) as Json;
}
