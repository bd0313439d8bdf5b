/**
 * The built-in models the owner chooses from (Settings → Semantic search → Built-in model; headless
 * `--embeddings builtin --embeddings-model NAME`): which files transformers.js reads for each, from
 * the Hugging Face hub, and what each file must be. Sizes and SHA-256 we could establish are pinned;
 * the rest is checked against the hub's stated SHA-256 (`X-Linked-Etag`, large files) or git blob
 * SHA-1 (`ETag`, small files kept in git) and the pinned size or a size cap (model-files.ts).
 */
import { knownPrefixes } from "./embedder";
import type { ModelFile } from "./model-files";

export interface CatalogFile {
  name: string;
  bytes?: number;
  sha256?: string;
  maxBytes?: number;
}

export interface CatalogModel {
  /** The hub's repository, also the model's name in status and saved vectors. */
  id: string;
  label: string;
  /** Vector length. */
  dimension: number;
  /** About how many bytes are downloaded (for the settings tab and the README). */
  approxBytes: number;
  /** transformers.js's dtype: "q8" reads onnx/model_quantized.onnx. */
  dtype: "q8";
  files: readonly CatalogFile[];
}

/** Small JSON files: config and tokenizer config are a few KB; a cap, since their size is not pinned. */
const SMALL = 1024 * 1024;

export const MODEL_CATALOG: readonly CatalogModel[] = [
  {
    id: "Xenova/multilingual-e5-small",
    label: "Multilingual E5 small: about 100 languages, 384 dimensions (≈ 135 MB)",
    dimension: 384,
    approxBytes: 118_308_185 + 17_082_730,
    dtype: "q8",
    files: [
      { name: "config.json", maxBytes: SMALL },
      { name: "tokenizer_config.json", maxBytes: SMALL },
      { name: "tokenizer.json", bytes: 17_082_730 },
      { name: "onnx/model_quantized.onnx", bytes: 118_308_185 },
    ],
  },
  {
    id: "Xenova/all-MiniLM-L6-v2",
    label: "all-MiniLM-L6-v2: English only, 384 dimensions (≈ 23 MB)",
    dimension: 384,
    approxBytes: 22_868_510 + 700_000,
    dtype: "q8",
    files: [
      { name: "config.json", maxBytes: SMALL },
      { name: "tokenizer_config.json", maxBytes: SMALL },
      { name: "tokenizer.json", maxBytes: 8 * SMALL },
      { name: "onnx/model_quantized.onnx", bytes: 22_868_510, sha256: "2f9a2cd8a5955f62908d5087be47516e9d91849f50579c3e47c73fd2c563b224" },
    ],
  },
];

/**
 * The default: multilingual. Obsidian's users write in many languages (our own help-vault tests are
 * English, Japanese, Chinese and Korean), and an English-only model ranks other languages barely
 * better than chance; the price is the download (≈ 135 MB against ≈ 23 MB) and slower embedding.
 */
export const DEFAULT_BUILTIN_MODEL = "Xenova/multilingual-e5-small";

/** The hub the files come from (or a mirror of its `/<repo>/resolve/<revision>/<file>` paths). */
export const DEFAULT_MODEL_HUB = "https://huggingface.co/";

export function catalogModel(id: string, catalog: readonly CatalogModel[] = MODEL_CATALOG): CatalogModel | undefined {
  const want = id.trim().toLowerCase();
  return catalog.find((m) => m.id.toLowerCase() === want || m.id.split("/")[1].toLowerCase() === want);
}

/** The catalog's names, for messages. */
export function catalogNames(): string {
  return MODEL_CATALOG.map((m) => m.id).join(", ");
}

/** The model's files at `hub` (its `resolve/main` URLs). */
export function catalogFiles(model: CatalogModel, hub = DEFAULT_MODEL_HUB): ModelFile[] {
  const base = hub.endsWith("/") ? hub : `${hub}/`;
  return model.files.map((f) => ({ ...f, url: `${base}${model.id}/resolve/main/${f.name}` }));
}

/** The folder name a model goes to, inside `models/` of the state or data folder. */
export function modelFolderName(model: CatalogModel): string {
  return model.id.replace(/\//g, "--");
}

export function catalogPrefixes(model: CatalogModel): { query: string; passage: string } | undefined {
  return knownPrefixes(model.id);
}

/**
 * Tests only: the headless CLI reads `VAULT_MCP_TEST_MODEL_CATALOG` (JSON: a list of catalog models)
 * so that a test can serve its tiny model under a real model's file names without that model's pins.
 * The plugin never reads it.
 */
export function testCatalog(env: Record<string, string | undefined>): readonly CatalogModel[] {
  const raw = env.VAULT_MCP_TEST_MODEL_CATALOG;
  if (!raw) return MODEL_CATALOG;
  return JSON.parse(raw) as CatalogModel[];
}
