import { z } from "zod";
import type { ToolDef } from "./tool";

/**
 * A tool's arguments, checked against its input shape. A failure throws an error whose message is
 * written for a model to fix its call from: each argument that is wrong (missing, of the wrong type,
 * out of range, not one of the allowed values), names that are not arguments (with the closest one),
 * the tool's arguments, and an example of a correct call. The SDK's own message ("Input validation
 * error: … expected string, received undefined at confirm_path") said none of that.
 */
export function checkToolArgs(def: ToolDef, args: unknown): Record<string, unknown> {
  const r = inputSchemaOf(def).safeParse(args ?? {});
  if (r.success) return r.data;
  throw new Error(describeInvalidArgs(def, args, r.error.issues));
}

/** A tool's input shape as one zod object, made once: every call checks it, and the listing shows it. */
export function inputSchemaOf(def: ToolDef): z.ZodObject {
  let schema = schemas.get(def);
  if (!schema) schemas.set(def, (schema = z.object(def.input)));
  return schema;
}

const schemas = new WeakMap<ToolDef, z.ZodObject>();

const MAX_LISTED = 6;

function describeInvalidArgs(def: ToolDef, args: unknown, issues: readonly z.core.$ZodIssue[]): string {
  const known = Object.keys(def.input);
  const lines: string[] = [];
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    lines.push(`the arguments must be an object of named arguments, not ${kindOf(args)}`);
  } else {
    for (const issue of issues.slice(0, MAX_LISTED)) lines.push(describeIssue(def, issue, args as Record<string, unknown> | undefined));
    if (issues.length > MAX_LISTED) lines.push(`and ${issues.length - MAX_LISTED} more`);
    const given = args ? Object.keys(args) : [];
    for (const k of given.filter((g) => !known.includes(g)).slice(0, MAX_LISTED)) {
      const near = closest(k, known);
      lines.push(`${k} is not an argument of ${def.name}${near ? `; did you mean ${near}?` : ""}`);
    }
  }
  return (
    `Invalid arguments for ${def.name}:\n${lines.map((l) => `- ${l}`).join("\n")}\n` +
    `Arguments: ${known.length ? known.map((k) => (isOptional(def.input[k] as z.ZodType) ? k : `${k} (required)`)).join(", ") : "none"}.\n` +
    `Example: ${def.name}(${JSON.stringify(def.example ?? {})})`
  );
}

function describeIssue(def: ToolDef, issue: z.core.$ZodIssue, args: Record<string, unknown> | undefined): string {
  const name = issue.path.length ? issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : i ? `.${String(p)}` : String(p))).join("") : "the arguments";
  const top = issue.path[0];
  const schema = typeof top === "string" && Object.hasOwn(def.input, top) ? (def.input[top] as z.ZodType) : undefined;
  const about = schema?.description && issue.path.length === 1 ? ` (${schema.description.replace(/\.$/, "")})` : "";
  const value = lookup(args, issue.path);
  switch (issue.code) {
    case "invalid_type":
      if (value === undefined) return `${name} is missing: it is required, ${article(issue.expected)}${about}`;
      return `${name} must be ${article(issue.expected)}, not ${kindOf(value)}${about}`;
    case "too_small":
      return `${name} is too small: ${bound(issue.origin, "at least", issue.minimum)}${about}`;
    case "too_big":
      return `${name} is too large: ${bound(issue.origin, "at most", issue.maximum)}${about}`;
    case "invalid_value":
      if (value === undefined) return `${name} is missing: it is required, one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}${about}`;
      return `${name} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}, not ${JSON.stringify(value) ?? "nothing"}`;
    case "unrecognized_keys":
      return `${name} has keys it does not take: ${issue.keys.join(", ")}`;
    default:
      return `${name}: ${issue.message}${about}`;
  }
}

function bound(origin: string, word: string, n: number | bigint): string {
  if (origin === "string") return `${word} ${n} characters`;
  if (origin === "array" || origin === "set") return `${word} ${n} items`;
  return `${word} ${n}`;
}

function article(expected: string): string {
  if (expected === "int") return "a whole number";
  if (expected === "array") return "a list";
  if (expected === "object") return "an object";
  if (expected === "boolean") return "true or false";
  return `a ${expected}`;
}

function kindOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "a list";
  if (typeof v === "number") return Number.isInteger(v) ? `the number ${v}` : `the number ${v} (not whole)`;
  if (typeof v === "string") return v.length > 40 ? "a string" : `the string ${JSON.stringify(v)}`;
  if (typeof v === "boolean") return String(v);
  return `an ${typeof v}`;
}

function lookup(v: unknown, path: readonly PropertyKey[]): unknown {
  let cur = v;
  for (const p of path) {
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, p)) return undefined;
    cur = (cur as Record<PropertyKey, unknown>)[p];
  }
  return cur;
}

function isOptional(s: z.ZodType | undefined): boolean {
  return s === undefined || s.safeParse(undefined).success;
}

/** The known name closest to `k` (a typo or a near synonym), if close enough to be worth saying. */
function closest(k: string, known: readonly string[]): string | null {
  const low = k.toLowerCase();
  let best: string | null = null;
  let bestD = Infinity;
  for (const n of known) {
    if (n.toLowerCase() === low || n.replace(/_/g, "") === low.replace(/[_-]/g, "")) return n;
    // A shortened or lengthened name: confirm for confirm_path.
    if (low.length >= 3 && (n.startsWith(low) || low.startsWith(n))) return n;
    const d = distance(low, n.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = n;
    }
  }
  return best !== null && bestD <= Math.max(2, Math.floor(k.length / 3)) ? best : null;
}

function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}
