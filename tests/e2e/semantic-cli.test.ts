/**
 * The headless server with the built-in model, as a user starts it (`--embeddings builtin
 * --embeddings-model-dir`): a child process, a real SDK client, the tiny test model through
 * transformers.js in a process of its own.
 */
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startChildServer, type ChildServer } from "../support/child-server";
import { makeTempVault, ok } from "../support/harness";
import { writeTinyBert } from "../support/tiny-bert";

describe("headless server with the built-in model", () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), "vault-mcp-semantic-cli-"));
  let root: string;
  let server: ChildServer;
  let client: Client;

  beforeAll(async () => {
    const modelDir = writeTinyBert(path.join(tmp, "tiny-bert"));
    root = makeTempVault({ "Deploy.md": "# Deploy\n\nthe deploy pipeline and the release script\n", "Garden.md": "# Garden\n\nbasil pesto and tomato\n" });
    server = await startChildServer(root, { stateDir: path.join(tmp, "state"), args: ["--embeddings", "builtin", "--embeddings-model-dir", modelDir] });
    client = await server.connect();
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
    rmSync(tmp, { recursive: true, force: true });
  });

  test("embeds the vault with the model and answers semantic search", async () => {
    let st = await ok(client, "embeddings_status");
    for (let i = 0; i < 200 && !(st.state === "ready" && st.chunks_embedded === 2); i++) {
      await new Promise((r) => setTimeout(r, 50));
      st = await ok(client, "embeddings_status");
    }
    expect(st).toMatchObject({ provider: "builtin", model: "tiny-bert", dimension: 8, state: "ready", chunks_embedded: 2, last_error: null });
    const res = await ok(client, "search", { query: "deploy pipeline", mode: "semantic", limit: 1 });
    expect(res).toMatchObject({ mode: "semantic", hits: [{ path: "Deploy.md", found_by: ["semantic"] }] });
  }, 60_000);
});
