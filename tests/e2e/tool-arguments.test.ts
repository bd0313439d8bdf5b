import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { z } from "zod";
import { allTools } from "../../src/mcp/tools";
import { checkToolArgs } from "../../src/mcp/validation";
import { call, makeTempVault, removeTree, startTestServer, textOf, type TestServer } from "../support/harness";

/** Arguments a model got wrong are answered in the tool's own words: which, what it expects, a correct call. */
describe("invalid tool arguments", () => {
  let server: TestServer;
  let client: Client;
  let listed: string[];

  beforeAll(async () => {
    server = await startTestServer(makeTempVault({ "Home.md": "# Home\n" }), { write: true });
    client = await server.connect();
    listed = (await client.listTools()).tools.map((t) => t.name);
  });
  afterAll(async () => {
    await server.close();
    removeTree(server.root);
  });

  test("every tool's example is a valid call", () => {
    for (const def of allTools) expect(() => checkToolArgs(def, def.example)).not.toThrow();
  });

  test("every tool: missing required arguments are named, with the tool's arguments and an example", async () => {
    expect(listed.length).toBeGreaterThan(25);
    for (const name of listed) {
      const def = allTools.find((d) => d.name === name)!;
      const required = Object.entries(def.input).filter(([, s]) => !(s as z.ZodType).safeParse(undefined).success).map(([k]) => k);
      if (!required.length) continue;
      const r = await call(client, name, {});
      const text = textOf(r);
      expect([name, r.isError]).toEqual([name, true]);
      expect(text.startsWith(`Invalid arguments for ${name}:\n`)).toBe(true);
      for (const k of required) expect(text).toContain(`- ${k} is missing: it is required`);
      expect(text).toContain(`\nExample: ${name}(${JSON.stringify(def.example)})`);
      expect(text).not.toMatch(/Input validation error|MCP error/);
    }
  });

  test("every tool: an argument of the wrong type is named with what it expects", async () => {
    for (const name of listed) {
      const def = allTools.find((d) => d.name === name)!;
      const first = Object.keys(def.input)[0];
      if (first === undefined) continue;
      // Nothing any of our arguments takes: a list of lists.
      const r = await call(client, name, { ...def.example, [first]: [[1]] });
      expect([name, r.isError]).toEqual([name, true]);
      expect([name, textOf(r)]).toEqual([name, expect.stringMatching(new RegExp(`^Invalid arguments for ${name}:\\n- ${first}(\\[0\\])? (must be|is too)`))]);
    }
  });

  test("misnamed arguments get the closest name; ranges and choices are spelled out", async () => {
    const del = textOf(await call(client, "delete", { path: "Home.md", confirm: "Home.md" }));
    expect(del).toContain("- confirm_path is missing: it is required, a string");
    expect(del).toContain("- confirm is not an argument of delete; did you mean confirm_path?");
    const grep = textOf(await call(client, "grep", { pattern: "TODO" }));
    expect(grep).toContain("- query is missing: it is required, a string");
    expect(grep).toMatch(/Arguments: query \(required\), regex, case_sensitive, folder, pattern/);
    expect(textOf(await call(client, "search", { query: "x", limit: "ten" }))).toContain('- limit must be a number, not the string "ten"');
    expect(textOf(await call(client, "search", { query: "x", limit: 0 }))).toContain("- limit is too small: at least 1");
    expect(textOf(await call(client, "manage_tags", { path: "Home.md", action: "toggle", tags: ["a"] }))).toContain('- action must be one of "add", "remove"');
    expect(textOf(await call(client, "read_multiple", { paths: ["Home.md", 7] }))).toContain("- paths[1] must be a string, not the number 7");
    // The note is unchanged by any of it.
    expect(textOf(await call(client, "read", { path: "Home.md" }))).toContain("# Home");
  });
});
