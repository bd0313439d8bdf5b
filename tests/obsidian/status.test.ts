import { describe, expect, test } from "@jest/globals";
import { statusDescription, statusText } from "../../src/hosts/obsidian/status";

describe("status bar", () => {
  const listening = { kind: "listening" as const, listenPort: 28765, url: "http://127.0.0.1:28765/mcp" };

  test("the built-in model's runtime download shows its progress in MB", () => {
    const base = { kind: "listening" as const, listenPort: 28765, url: "http://127.0.0.1:28765/mcp" };
    expect(statusText({ ...base, download: { done: 5 * 1024 * 1024, total: 27.5 * 1024 * 1024 } })).toBe("MCP: downloading the model runtime 5.0/28 MB");
    expect(statusDescription({ ...base, download: { done: 0, total: 1 } })).toMatch(/runtime is being downloaded \(once\)/);
  });

  test("a failed push shows until a push succeeds (after indexing and embedding progress)", () => {
    const base = { kind: "listening" as const, listenPort: 28765, url: "http://127.0.0.1:28765/mcp" };
    expect(statusText({ ...base, pushError: "the remote moved" })).toBe("MCP: push failed");
    expect(statusDescription({ ...base, pushError: "the remote moved" })).toMatch(/was not pushed: the remote moved/);
    expect(statusText({ ...base, pushError: "x", indexing: { indexed: 1, total: 2 } })).toBe("MCP: indexing 1/2");
    expect(statusText(base)).toBe("MCP: listening on :28765");
  });

  test("indexing comes first, then embedding progress, then listening", () => {
    expect(statusText({ ...listening, indexing: { indexed: 5, total: 10 }, embedding: { indexed: 1, total: 40 } })).toBe("MCP: indexing 5/10");
    expect(statusText({ ...listening, embedding: { indexed: 12, total: 40 } })).toBe("MCP: embedding 12/40");
    expect(statusDescription({ ...listening, embedding: { indexed: 12, total: 40 } })).toMatch(/embedded for semantic search \(12 of 40\)/);
    // Before any section is counted, the port is shown.
    expect(statusText({ ...listening, embedding: { indexed: 0, total: 0 } })).toBe("MCP: listening on :28765");
    expect(statusText(listening)).toBe("MCP: listening on :28765");
  });
});
