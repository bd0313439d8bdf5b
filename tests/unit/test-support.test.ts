import { expect, jest, test } from "@jest/globals";
import sqlWasm from "sql.js/dist/sql-wasm.wasm";

/**
 * The jest stand-ins for esbuild's loaders. An import of a CommonJS module copies each of its own
 * properties onto a new object (esbuild's `__toESM`): when the stand-in's `module.exports` was the
 * WASM's bytes, every file importing it copied ~650k indexes, and `npm test` took twice the CPU.
 */
test("the WASM stand-in imports as the sql.js WASM's bytes, from a module of one export", () => {
  expect(sqlWasm).toBeInstanceOf(Uint8Array);
  expect(Buffer.from(sqlWasm.subarray(0, 4)).toString("latin1")).toBe("\0asm");
  expect(sqlWasm.length).toBeGreaterThan(100_000);
  const mod = jest.requireActual<object>("../support/wasm-module.js");
  expect(Object.getOwnPropertyNames(mod).sort()).toEqual(["__esModule", "default"]);
});
