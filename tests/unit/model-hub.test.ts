/**
 * The built-in model's one-click download against a local server that behaves like the Hugging Face
 * hub (tests/support/hub-server.ts): the tiny test model served under multilingual-e5-small's file
 * names, large files redirected to a CDN host with their SHA-256 in `X-Linked-Etag`, small files with
 * their git SHA-1 as `ETag`, ranges. Then the faults: a wrong stated hash, no hash, a size that
 * differs from the pin, an interruption, a full disk, a cancel. Nothing unverified is ever installed,
 * and the downloaded model is what the built-in embedder then loads.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { catalogFiles, catalogModel, DEFAULT_BUILTIN_MODEL, MODEL_CATALOG, type CatalogModel } from "../../src/core/search/vector/model-catalog";
import { ensureModelFiles, ModelDownloadError, modelFilesPresent, rangeFetchOver } from "../../src/core/search/vector/model-files";
import { BuiltinEmbedder } from "../../src/hosts/common/builtin-embedder";
import { nodeBinaryHttp } from "../../src/hosts/common/http-client";
import { FsModelFolder } from "../../src/hosts/common/model-folder";
import { fullDisk } from "../support/full-disk";
import { ModelDownloader } from "../../src/hosts/common/model-download";
import { startHub, type HubFile, type HubServer } from "../support/hub-server";
import { writeTinyBert } from "../support/tiny-bert";

const tmp = mkdtempSync(path.join(os.tmpdir(), "vault-mcp-hub-"));
const tiny = writeTinyBert(path.join(tmp, "tiny"));
const E5 = catalogModel(DEFAULT_BUILTIN_MODEL)!;
/** multilingual-e5-small's file names, without its pins (the tiny model is another file). */
const testModel: CatalogModel = { ...E5, files: E5.files.map((f) => ({ name: f.name, maxBytes: 200 * 1024 * 1024 })) };
const repo = E5.id;
const tinyFile = (name: string) => new Uint8Array(readFileSync(path.join(tiny, name === "onnx/model_quantized.onnx" ? "onnx/model.onnx" : name)));
const hubFiles = new Map<string, HubFile>(
  E5.files.map((f) => [`${repo}/${f.name}`, { bytes: tinyFile(f.name), lfs: f.name === "tokenizer.json" || f.name.endsWith(".onnx") }]),
);
// all-MiniLM-L6-v2 under its real names, but the tiny model's bytes: its pinned size and SHA-256 refuse it.
const MINI = catalogModel("all-MiniLM-L6-v2")!;
for (const f of MINI.files) hubFiles.set(`${MINI.id}/${f.name}`, { bytes: tinyFile(f.name), lfs: f.name.endsWith(".onnx") });

let hub: HubServer;
let dir: string;
const fetchRange = rangeFetchOver(nodeBinaryHttp, 5000);
const workerFile = path.resolve(__dirname, "../../dist/embed-worker.mjs");

beforeAll(async () => {
  hub = await startHub(hubFiles);
});
afterAll(async () => {
  await hub.close();
  rmSync(tmp, { recursive: true, force: true });
});
beforeEach(() => {
  dir = mkdtempSync(path.join(tmp, "model-"));
  hub.seen.length = 0;
  hub.faults.wrongHash.clear();
  hub.faults.noHash.clear();
  hub.faults.corrupt.clear();
  hub.faults.cdnDropAfter = Infinity;
  hub.faults.cdnRequests = 0;
});

const onnxSize = tinyFile("onnx/model_quantized.onnx").length;

describe("the model list", () => {
  test("the default is multilingual; every model names the files transformers.js reads, with the pins the issue gives", () => {
    expect(DEFAULT_BUILTIN_MODEL).toBe("Xenova/multilingual-e5-small");
    for (const m of MODEL_CATALOG) expect(m.files.map((f) => f.name).sort()).toEqual(["config.json", "onnx/model_quantized.onnx", "tokenizer.json", "tokenizer_config.json"]);
    expect(E5.files.find((f) => f.name === "onnx/model_quantized.onnx")).toMatchObject({ bytes: 118_308_185 });
    expect(E5.files.find((f) => f.name === "tokenizer.json")).toMatchObject({ bytes: 17_082_730 });
    expect(MINI.files.find((f) => f.name === "onnx/model_quantized.onnx")).toEqual({ name: "onnx/model_quantized.onnx", bytes: 22_868_510, sha256: "2f9a2cd8a5955f62908d5087be47516e9d91849f50579c3e47c73fd2c563b224" });
    // Every file is pinned by size or capped; none is taken without a hash (pinned, or the hub's).
    for (const m of MODEL_CATALOG) for (const f of m.files) expect(f.bytes !== undefined || f.maxBytes !== undefined).toBe(true);
    expect(catalogFiles(MINI)[3].url).toBe("https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/main/onnx/model_quantized.onnx");
  });
});

describe("downloading a model from a hub", () => {
  test("large files through the CDN redirect checked against X-Linked-Etag, small ones against their git ETag; then the embedder loads it", async () => {
    const d = new ModelDownloader({ files: catalogFiles(testModel, hub.url), dir, rangeBytes: 1000, approxBytes: 1 });
    const seenProgress: number[] = [];
    d.watch(() => {
      const p = d.progress();
      if (p) seenProgress.push(p.bytes_done);
    });
    await d.run();
    for (const f of E5.files) expect(new Uint8Array(readFileSync(path.join(dir, f.name)))).toEqual(tinyFile(f.name));
    expect(existsSync(path.join(dir, "onnx/model_quantized.onnx.part"))).toBe(false);
    // The large file went to the CDN in ranges after a 1-byte probe that read the hub's headers.
    expect(hub.seen.filter((s) => s.includes("model_quantized"))[0]).toBe(`hub GET /${repo}/resolve/main/onnx/model_quantized.onnx bytes=0-0`);
    expect(hub.seen.filter((s) => s.startsWith("cdn") && s.includes("model_quantized")).length).toBe(1 + Math.ceil(onnxSize / 1000));
    expect(seenProgress.length).toBeGreaterThan(3);
    expect([...seenProgress].sort((a, b) => a - b)).toEqual(seenProgress);
    expect(d.progress()).toBeNull();
    // What was checked is recorded; a second start checks the files on disk and asks the hub nothing.
    expect(Object.keys(JSON.parse(readFileSync(path.join(dir, "verified.json"), "utf8"))).sort()).toEqual(E5.files.map((f) => f.name).sort());
    hub.seen.length = 0;
    await new ModelDownloader({ files: catalogFiles(testModel, hub.url), dir }).run();
    expect(hub.seen).toEqual([]);
    expect(await modelFilesPresent(catalogFiles(testModel, hub.url), new FsModelFolder(dir))).toBe(true);
    // The built-in model runs on what was downloaded (dtype q8: onnx/model_quantized.onnx).
    const e = new BuiltinEmbedder({ modelDir: dir, workerFile, model: E5.id, dtype: "q8", download: new ModelDownloader({ files: catalogFiles(testModel, hub.url), dir }) });
    try {
      const [v] = await e.embed(["the deploy pipeline"], "passage");
      expect(v).toHaveLength(8);
    } finally {
      await e.close();
    }
  }, 60_000);

  test("a stated hash the bytes do not match: the bytes are deleted, nothing is installed, and the error says why", async () => {
    hub.faults.wrongHash.add(`${repo}/onnx/model_quantized.onnx`);
    hub.faults.wrongHash.add(`${repo}/config.json`);
    const files = catalogFiles(testModel, hub.url);
    await expect(ensureModelFiles(files, new FsModelFolder(dir), fetchRange, undefined, 1000)).rejects.toThrow(/config.json does not match the git SHA-1 the hub states for it.*deleted/);
    await expect(ensureModelFiles(files.slice(3), new FsModelFolder(dir), fetchRange, undefined, 1000)).rejects.toThrow(/onnx\/model_quantized.onnx does not match the SHA-256 the hub states for it.*deleted/);
    expect(existsSync(path.join(dir, "config.json"))).toBe(false);
    expect(existsSync(path.join(dir, "config.json.part"))).toBe(false);
    expect(existsSync(path.join(dir, "onnx/model_quantized.onnx"))).toBe(false);
    expect(existsSync(path.join(dir, "onnx/model_quantized.onnx.part"))).toBe(false);
    expect(await modelFilesPresent(files, new FsModelFolder(dir))).toBe(false);
    // Bytes altered on the way, the hub's hash right: the same.
    hub.faults.wrongHash.clear();
    hub.faults.corrupt.add(`${repo}/tokenizer.json`);
    await expect(ensureModelFiles(files.slice(2, 3), new FsModelFolder(dir), fetchRange, undefined, 1000)).rejects.toThrow(/tokenizer.json does not match the SHA-256 the hub states/);
    expect(existsSync(path.join(dir, "tokenizer.json"))).toBe(false);
  });

  test("a renamed repository: the hub's own redirect to the new path, whose answer states the hashes", async () => {
    const renamed: CatalogModel = { ...testModel, id: "renamed/multilingual-e5-small" };
    await ensureModelFiles(catalogFiles(renamed, hub.url), new FsModelFolder(dir), fetchRange);
    for (const f of E5.files) expect(new Uint8Array(readFileSync(path.join(dir, f.name)))).toEqual(tinyFile(f.name));
    expect(hub.seen[0]).toBe("hub GET /renamed/multilingual-e5-small/resolve/main/config.json bytes=0-0");
    expect(hub.seen[1]).toBe(`hub GET /${repo}/resolve/main/config.json bytes=0-0`);
  });

  test("a hub that states no hash: not downloaded", async () => {
    hub.faults.noHash.add(`${repo}/onnx/model_quantized.onnx`);
    await expect(ensureModelFiles(catalogFiles(testModel, hub.url).slice(3), new FsModelFolder(dir), fetchRange, undefined, 1000)).rejects.toThrow(/stated no checksum.*not downloaded/);
    expect(hub.seen.filter((s) => s.startsWith("cdn"))).toHaveLength(1);
    expect(existsSync(path.join(dir, "onnx/model_quantized.onnx"))).toBe(false);
  });

  test("the real list's pins: a file of another size than pinned is refused before its bytes are fetched", async () => {
    await expect(ensureModelFiles(catalogFiles(MINI, hub.url).slice(3), new FsModelFolder(dir), fetchRange)).rejects.toThrow(
      new RegExp(`now serves onnx/model_quantized.onnx with ${onnxSize} bytes where 22868510 are pinned.*not downloaded`),
    );
    expect(existsSync(path.join(dir, "onnx/model_quantized.onnx"))).toBe(false);
    expect(existsSync(path.join(dir, "onnx/model_quantized.onnx.part"))).toBe(false);
  });

  test("an interruption: the error says where it stopped, and the next run resumes from the .part", async () => {
    const files = catalogFiles(testModel, hub.url).slice(3);
    hub.faults.cdnDropAfter = 3; // the probe, then two ranges
    await expect(ensureModelFiles(files, new FsModelFolder(dir), fetchRange, undefined, 100)).rejects.toThrow(/stopped at 200 of \d+ bytes.*resumes/);
    expect(statSync(path.join(dir, "onnx/model_quantized.onnx.part")).size).toBe(200);
    hub.faults.cdnDropAfter = Infinity;
    hub.seen.length = 0;
    await ensureModelFiles(files, new FsModelFolder(dir), fetchRange, undefined, 100);
    expect(hub.seen.filter((s) => s.startsWith("cdn"))[1]).toMatch(/bytes=200-299$/);
    expect(new Uint8Array(readFileSync(path.join(dir, "onnx/model_quantized.onnx")))).toEqual(tinyFile("onnx/model_quantized.onnx"));
  });

  test("a full disk: a clear message, nothing installed; with room again it resumes", async () => {
    const real = new FsModelFolder(dir);
    const disk = fullDisk(real, 250);
    const full = disk.folder;
    const d = new ModelDownloader({ files: catalogFiles(testModel, hub.url).slice(3), dir: full, rangeBytes: 100 });
    await expect(d.run()).rejects.toThrow(new RegExp(`disk is full: onnx/model_quantized.onnx needs ${onnxSize - 200} more bytes`));
    expect(existsSync(path.join(dir, "onnx/model_quantized.onnx"))).toBe(false);
    expect(d.progress()).toBeNull();
    disk.free();
    await d.run();
    expect(new Uint8Array(readFileSync(path.join(dir, "onnx/model_quantized.onnx")))).toEqual(tinyFile("onnx/model_quantized.onnx"));
  });

  test("cancelled: stops between two ranges, keeps the .part, says so; run again, it resumes", async () => {
    const d = new ModelDownloader({ files: catalogFiles(testModel, hub.url).slice(3), dir, rangeBytes: 100 });
    const off = d.watch(() => {
      if ((d.progress()?.bytes_done ?? 0) >= 100) d.cancel();
    });
    const err = await d.run().catch((e: unknown) => e);
    off();
    expect(err).toBeInstanceOf(ModelDownloadError);
    expect((err as ModelDownloadError).cancelled).toBe(true);
    expect((err as Error).message).toMatch(/cancelled.*resumes/);
    expect(statSync(path.join(dir, "onnx/model_quantized.onnx.part")).size).toBe(100);
    await d.run();
    expect(new Uint8Array(readFileSync(path.join(dir, "onnx/model_quantized.onnx")))).toEqual(tinyFile("onnx/model_quantized.onnx"));
  });

  test("a file changed on disk after it was checked is fetched again, never loaded", async () => {
    const files = catalogFiles(testModel, hub.url);
    await ensureModelFiles(files, new FsModelFolder(dir), fetchRange);
    const cfg = path.join(dir, "config.json");
    writeFileSync(cfg, "{}");
    expect(await modelFilesPresent(files, new FsModelFolder(dir))).toBe(false);
    hub.seen.length = 0;
    await ensureModelFiles(files, new FsModelFolder(dir), fetchRange);
    expect(hub.seen.some((s) => s.includes("config.json"))).toBe(true);
    expect(new Uint8Array(readFileSync(cfg))).toEqual(tinyFile("config.json"));
  });
});
