/**
 * The embedding provider the headless flags ask for (`--embeddings …`): the CLI's and the relevance
 * harness's (`npm run quality -- --embeddings …`). The key comes from the environment.
 */
import * as path from "node:path";
import { knownPrefixes, type Embedder } from "../../core/search/vector/embedder";
import { catalogFiles, catalogModel, catalogNames, DEFAULT_BUILTIN_MODEL, DEFAULT_MODEL_HUB, modelFolderName, testCatalog } from "../../core/search/vector/model-catalog";
import { RemoteEmbedder } from "../../core/search/vector/remote-embedder";
import { BuiltinEmbedder } from "../common/builtin-embedder";
import { nodeHttp } from "../common/http-client";
import { ModelDownloader } from "../common/model-download";
import { EMBEDDING_DEFAULTS, type CliArgs } from "./args";

/** The embedding provider the flags ask for (none: semantic search off). The key comes from the environment. */
export function embedderOf(args: Pick<CliArgs, "embeddings" | "embeddingsModel" | "embeddingsModelDir" | "embeddingsUrl" | "embeddingsKeyEnv">, stateDir: string): Embedder | undefined {
  if (!args.embeddings) return undefined;
  if (args.embeddings === "builtin") {
    if (!args.embeddingsModelDir) {
      // A model of the list, downloaded on first use into the state folder (checked before use).
      const m = catalogModel(args.embeddingsModel ?? DEFAULT_BUILTIN_MODEL, testCatalog(process.env));
      if (!m) throw new Error(`--embeddings-model: "${args.embeddingsModel}" is not a built-in model; choose one of ${catalogNames()}, or give your own model's folder with --embeddings-model-dir.`);
      const modelDir = path.join(stateDir, "models", modelFolderName(m));
      const download = new ModelDownloader({ files: catalogFiles(m, args.embeddingsUrl ?? DEFAULT_MODEL_HUB), dir: modelDir, approxBytes: m.approxBytes });
      return new BuiltinEmbedder({ modelDir, model: m.id, prefixes: knownPrefixes(m.id), dtype: m.dtype, download });
    }
    const modelDir = path.resolve(args.embeddingsModelDir);
    const model = args.embeddingsModel ?? path.basename(modelDir);
    return new BuiltinEmbedder({ modelDir, model, prefixes: knownPrefixes(model) });
  }
  const d = EMBEDDING_DEFAULTS[args.embeddings];
  let apiKey: string | undefined;
  if (args.embeddingsKeyEnv) {
    apiKey = process.env[args.embeddingsKeyEnv];
    if (!apiKey) throw new Error(`The environment variable ${args.embeddingsKeyEnv} (--embeddings-key-env) is not set.`);
  }
  const model = args.embeddingsModel ?? d.model;
  return new RemoteEmbedder({ kind: args.embeddings, url: args.embeddingsUrl ?? d.url, model, apiKey, http: nodeHttp, prefixes: knownPrefixes(model) });
}
