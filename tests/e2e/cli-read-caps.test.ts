import { afterAll, beforeAll, expect, test } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { call, fails, makeTempVault, ok, removeTree, textOf } from "../support/harness";
import { startChildServer, type ChildServer } from "../support/child-server";

/** The headless server's read cap flags (the plugin's two settings), on the built dist/cli.js. */

const tmp = mkdtempSync(path.join(os.tmpdir(), "vault-mcp-read-caps-"));
let root: string;
let server: ChildServer;
let client: Client;

beforeAll(async () => {
  root = makeTempVault({ "Two.md": `# Two\n\n${"x".repeat(2000)}\n\n## Small\n\nfits\n`, "pic.png": new Uint8Array(1500).fill(7) });
  server = await startChildServer(root, { stateDir: path.join(tmp, "state"), args: ["--max-read-kb", "1", "--max-attachment-kb", "1"] });
  client = await server.connect();
}, 90_000);
afterAll(async () => {
  await client?.close();
  await server?.stop();
  removeTree(root);
  rmSync(tmp, { recursive: true, force: true });
});

test("--max-read-kb caps a note and a section; --max-attachment-kb an attachment's base64", async () => {
  expect(await fails(client, "read", { path: "Two.md" })).toMatch(/"Two\.md" is 2 KB, over the 1 KB cap/);
  expect(await fails(client, "read", { path: "Two.md", section: "Two" })).toMatch(/over the 1 KB cap on what a read returns.*section "Two > Small"/);
  expect((await ok(client, "read", { path: "Two.md", section: "Small" })).body).toBe("## Small\n\nfits");
  const pic = await call(client, "read", { path: "pic.png" });
  expect(textOf(pic)).toMatch(/over the 1 KB cap/);
  expect(pic.structuredContent).toMatchObject({ size: 1500, etag: expect.any(String) });
  expect(pic.structuredContent).not.toHaveProperty("base64");
});
