import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { EmbedderError, knownPrefixes } from "../../src/core/search/vector/embedder";
import { endpointOf, RemoteEmbedder } from "../../src/core/search/vector/remote-embedder";
import { nodeHttp } from "../../src/hosts/common/http-client";

/** What the fake provider does with the next requests (a queue of behaviours, then "ok"). */
type Behaviour = "ok" | "500" | "404" | "401" | "nan" | "short" | "wrong-dim" | "slow" | "not-json";

const KEY = "sk-test-secret-key-123456";
let server: http.Server;
let base = "";
const plan: Behaviour[] = [];
const seen: { path: string; auth?: string; body: { model: string; input: string[] } }[] = [];

function vec(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  for (let i = 0; i < text.length; i++) v[text.charCodeAt(i) % dim] += 1;
  return v;
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      const body = JSON.parse(raw) as { model: string; input: string[] };
      seen.push({ path: req.url ?? "", auth: req.headers.authorization, body });
      const b = plan.shift() ?? "ok";
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { "Content-Type": "application/json" });
        res.end(typeof json === "string" ? json : JSON.stringify(json));
      };
      if (b === "slow") return void setTimeout(() => send(200, {}), 500);
      if (b === "500") return send(500, { error: "model is loading" });
      if (b === "404") return send(404, { error: `model "${body.model}" not found, try pulling it first` });
      if (b === "401") return send(401, { error: { message: `Incorrect API key provided: ${KEY}` } });
      if (b === "not-json") return send(200, "<html>proxy</html>");
      const dim = b === "wrong-dim" ? 3 : 8;
      let vectors = body.input.map((t) => vec(t, dim));
      if (b === "nan") vectors = vectors.map((v) => v.map(() => NaN));
      if (b === "short") vectors = vectors.slice(1);
      if (req.url === "/api/embed") return send(200, { model: body.model, embeddings: vectors });
      // OpenAI: data in reverse order, ordered by `index`.
      return send(200, { object: "list", data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })).reverse(), model: body.model });
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

const noSleep = () => Promise.resolve();

describe("remote embedding providers", () => {
  test("models trained with prefixes get them: e5 (query/passage), nomic-embed (search_query/search_document)", () => {
    expect(knownPrefixes("multilingual-e5-small")).toEqual({ query: "query: ", passage: "passage: " });
    expect(knownPrefixes("intfloat/e5-base-v2")).toEqual({ query: "query: ", passage: "passage: " });
    expect(knownPrefixes("nomic-embed-text")).toEqual({ query: "search_query: ", passage: "search_document: " });
    expect(knownPrefixes("bge-m3")).toBeUndefined();
    expect(knownPrefixes("text-embedding-3-small")).toBeUndefined();
    expect(knownPrefixes("tiny-bert")).toBeUndefined();
  });

  test("endpoints: Ollama's /api/embed, and /v1/embeddings under an OpenAI-style base", () => {
    expect(endpointOf("ollama", "http://localhost:11434/")).toBe("http://localhost:11434/api/embed");
    expect(endpointOf("openai", "http://localhost:1234")).toBe("http://localhost:1234/v1/embeddings");
    expect(endpointOf("openai", "https://api.openai.com/v1")).toBe("https://api.openai.com/v1/embeddings");
    expect(endpointOf("openai", "http://h/v1/embeddings")).toBe("http://h/v1/embeddings");
  });

  test("Ollama: batches of batchSize, vectors in order, the dimension learnt from the first answer", async () => {
    seen.length = 0;
    const e = new RemoteEmbedder({ kind: "ollama", url: base, model: "nomic-embed-text", http: nodeHttp, batchSize: 2, sleep: noSleep });
    expect(e.dimension()).toBeNull();
    const texts = ["alpha", "bravo", "charlie"];
    const out = await e.embed(texts, "passage");
    expect(out.map((v) => Array.from(v))).toEqual(texts.map((t) => vec(t, 8)));
    expect(e.dimension()).toBe(8);
    expect(seen.map((s) => [s.path, s.body.input.length])).toEqual([
      ["/api/embed", 2],
      ["/api/embed", 1],
    ]);
    expect(seen[0].body.model).toBe("nomic-embed-text");
    expect(seen[0].auth).toBeUndefined();
  });

  test("OpenAI-compatible: the key as a bearer header, data ordered by index, prefixes for e5 models", async () => {
    seen.length = 0;
    const e = new RemoteEmbedder({ kind: "openai", url: `${base}/v1`, model: "e5", apiKey: KEY, http: nodeHttp, prefixes: { query: "query: ", passage: "passage: " }, sleep: noSleep });
    const out = await e.embed(["one", "two"], "query");
    expect(out.map((v) => Array.from(v))).toEqual([vec("query: one", 8), vec("query: two", 8)]);
    expect(seen[0]).toMatchObject({ path: "/v1/embeddings", auth: `Bearer ${KEY}` });
  });

  test("retries a busy provider (5xx), then gives up retryably; 404 says what to do", async () => {
    const e = new RemoteEmbedder({ kind: "ollama", url: base, model: "m", http: nodeHttp, retries: 2, sleep: noSleep });
    plan.push("500", "500");
    expect((await e.embed(["x"], "passage")).length).toBe(1);
    plan.push("500", "500", "500");
    await expect(e.embed(["x"], "passage")).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/HTTP 500: model is loading/) });
    plan.push("404");
    await expect(e.embed(["x"], "passage")).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/ollama pull m/) });
  });

  test("bad answers are refused: NaN, too few vectors, another dimension, not JSON", async () => {
    const e = new RemoteEmbedder({ kind: "openai", url: base, model: "m", http: nodeHttp, sleep: noSleep });
    await e.embed(["x"], "passage");
    for (const [b, msg] of [
      ["nan", /not a finite number/],
      ["short", /returned 1 vectors for 2 texts/],
      ["wrong-dim", /3 numbers where 8 were expected/],
      ["not-json", /not JSON/],
    ] as const) {
      plan.push(b);
      const err = await e.embed(["x", "y"], "passage").catch((x: unknown) => x);
      expect(err).toBeInstanceOf(EmbedderError);
      expect((err as EmbedderError).retryable).toBe(false);
      expect((err as Error).message).toMatch(msg);
    }
  });

  test("a slow provider times out, and a refused connection is retryable; the key never shows", async () => {
    const slow = new RemoteEmbedder({ kind: "openai", url: base, model: "m", apiKey: KEY, http: nodeHttp, timeoutMs: 100, retries: 0, sleep: noSleep });
    plan.push("slow");
    await expect(slow.embed(["x"], "passage")).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/no answer .*timed out/) });
    plan.push("401");
    const err = (await slow.embed(["x"], "passage").catch((x: unknown) => x)) as Error;
    expect(err.message).toMatch(/HTTP 401.*check the API key/);
    expect(err.message).not.toContain(KEY);
    const down = new RemoteEmbedder({ kind: "ollama", url: "http://127.0.0.1:1", model: "m", http: nodeHttp, retries: 1, sleep: noSleep });
    await expect(down.embed(["x"], "passage")).rejects.toMatchObject({ retryable: true, message: expect.stringMatching(/no answer from Ollama at http:\/\/127\.0\.0\.1:1/) });
  });
});
