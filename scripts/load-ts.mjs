// Imports a TypeScript module of src/ from a script: esbuild bundles it to ESM in memory.
import esbuild from "esbuild";

export async function loadTs(entry) {
  const result = await esbuild.build({ entryPoints: [entry], bundle: true, platform: "node", format: "esm", target: "node20", write: false, logLevel: "warning", packages: "external" });
  const code = result.outputFiles[0].text;
  return import(`data:text/javascript;base64,${Buffer.from(code).toString("base64")}`);
}
