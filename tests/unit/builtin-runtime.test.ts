import { describe, expect, test } from "@jest/globals";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { ONNXRUNTIME_WEB_VERSION, RUNTIME_FILES, TRANSFORMERS_VERSION } from "../../src/hosts/common/builtin-runtime";

/** The plugin's pinned runtime is exactly the npm files we build and test with: a dependency update that changes them fails here. */
describe("the built-in model's runtime pins", () => {
  const root = path.resolve(__dirname, "../../node_modules");
  test("versions are the installed ones, and the web build names that onnxruntime-web", () => {
    expect(JSON.parse(readFileSync(path.join(root, "@huggingface/transformers/package.json"), "utf8")).version).toBe(TRANSFORMERS_VERSION);
    expect(JSON.parse(readFileSync(path.join(root, "onnxruntime-web/package.json"), "utf8")).version).toBe(ONNXRUNTIME_WEB_VERSION);
    expect(readFileSync(path.join(root, "@huggingface/transformers/dist/transformers.min.js"), "utf8")).toContain(ONNXRUNTIME_WEB_VERSION);
  });
  test.each(RUNTIME_FILES.map((f) => [f.name, f] as const))("%s: size and SHA-256 of the npm file", (_name, f) => {
    const local = path.join(root, f.path.replace(/@(\d[^/]*)\//, "/").replace(/^(@huggingface\/transformers)@[^/]+/, "$1"));
    const bytes = readFileSync(local);
    expect(bytes.length).toBe(f.bytes);
    expect(createHash("sha256").update(bytes).digest("hex")).toBe(f.sha256);
  });
});
