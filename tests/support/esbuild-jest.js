// Jest transform: TypeScript → CommonJS with esbuild (already our bundler; no native
// dependency of its own beyond esbuild's). Type errors are `npm run typecheck`'s job.
const { transformSync } = require("esbuild");
const { createHash } = require("node:crypto");

module.exports = {
  process(source, filename) {
    const r = transformSync(source, {
      loader: "ts",
      format: "cjs",
      target: "node20",
      sourcemap: "inline",
      sourcefile: filename,
    });
    return { code: r.code };
  },
  getCacheKey(source, filename) {
    return createHash("sha256").update("esbuild-jest-1\0").update(filename).update("\0").update(source).digest("hex");
  },
};
