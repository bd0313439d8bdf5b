import { afterAll, describe, expect, test } from "@jest/globals";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation";
import { MemoryVault } from "../../src/core/memory-vault";
import { createCoreServices } from "../../src/core/services";
import { MemoryStateStore } from "../../src/core/state";
import { createMcpServer } from "../../src/mcp/server";

/**
 * Every session's server shares one JSON Schema validator, made on first use: the SDK's default is
 * an Ajv instance per server (meta-schemas compiled for each session), for elicitation answers only.
 */
describe("the sessions' JSON Schema validator", () => {
  const core = createCoreServices(new MemoryVault({ "A.md": "a\n" }), { host: "node", writeMode: false, stateStore: new MemoryStateStore(), sqlWasm });
  afterAll(() => core.close());
  const validatorOf = (s: ReturnType<typeof createMcpServer>) => (s.server as unknown as { _jsonSchemaValidator: jsonSchemaValidator })._jsonSchemaValidator;

  test("is one object for every session's server, and validates like the SDK's own", () => {
    const a = validatorOf(createMcpServer(core, [], { name: "t", version: "0", instructions: "" }));
    const b = validatorOf(createMcpServer(core, [], { name: "t", version: "0", instructions: "" }));
    expect(a).toBe(b);
    const check = a.getValidator<{ n: number }>({ type: "object", properties: { n: { type: "number" } }, required: ["n"] });
    expect(check({ n: 1 })).toEqual({ valid: true, data: { n: 1 }, errorMessage: undefined });
    const bad = check({ n: "one" });
    expect(bad.valid).toBe(false);
    expect(bad.errorMessage).toMatch(/number/);
  });
});
