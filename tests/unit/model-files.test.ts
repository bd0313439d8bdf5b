/**
 * Fetching the built-in model's files against a local HTTP server that serves byte ranges: a whole
 * download, an interrupted one resumed from its `.part`, a checksum mismatch, a full disk, and a
 * server without ranges. Nothing half-written or altered may ever become the file.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from "@jest/globals";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { ensureModelFiles, ModelDownloadError, rangeFetchOver, type ModelFile } from "../../src/core/search/vector/model-files";
import { nodeBinaryHttp } from "../../src/hosts/common/http-client";
import { FsModelFolder } from "../../src/hosts/common/model-folder";
import { fullDisk } from "../support/full-disk";

const body = new Uint8Array(100_000).map((_, i) => (i * 7 + (i >> 8)) & 0xff);
const sha = createHash("sha256").update(body).digest("hex");
let server: http.Server;
let base = "";
/** What the server does: honour ranges, drop the connection after some bytes, or alter the bytes. */
const mode = { ranges: true, dropAfterRequests: Infinity, corrupt: false };
const seen: string[] = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    seen.push(req.headers.range ?? "(whole)");
    if (seen.length > mode.dropAfterRequests) {
      req.socket.destroy();
      return;
    }
    const data = mode.corrupt ? body.map((b, i) => (i === 500 ? b ^ 1 : b)) : body;
    const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? "");
    if (m && mode.ranges) {
      const a = Number(m[1]);
      const b = Math.min(Number(m[2]), data.length - 1);
      res.writeHead(206, { "Content-Range": `bytes ${a}-${b}/${data.length}`, "Content-Length": b - a + 1 });
      res.end(Buffer.from(data.subarray(a, b + 1)));
    } else {
      res.writeHead(200, { "Content-Length": data.length });
      res.end(Buffer.from(data));
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "vault-mcp-model-"));
  mode.ranges = true;
  mode.dropAfterRequests = Infinity;
  mode.corrupt = false;
  seen.length = 0;
});

const file = (): ModelFile => ({ name: "onnx/model.onnx", url: `${base}/model.onnx`, bytes: body.length, sha256: sha });
const fetchRange = rangeFetchOver(nodeBinaryHttp, 5000);

describe("model files", () => {
  test("downloads in ranges, checks the checksum, then renames into place; a second call fetches nothing", async () => {
    const progress: number[] = [];
    await ensureModelFiles([file()], new FsModelFolder(dir), fetchRange, (p) => progress.push(p.done), 30_000);
    expect(readFileSync(path.join(dir, "onnx/model.onnx"))).toEqual(Buffer.from(body));
    expect(existsSync(path.join(dir, "onnx/model.onnx.part"))).toBe(false);
    expect(seen).toEqual(["bytes=0-29999", "bytes=30000-59999", "bytes=60000-89999", "bytes=90000-99999"]);
    expect(progress).toEqual([0, 30_000, 60_000, 90_000, 100_000]);
    seen.length = 0;
    await ensureModelFiles([file()], new FsModelFolder(dir), fetchRange, undefined, 30_000);
    expect(seen).toEqual([]);
  });

  test("an interrupted download resumes from its .part", async () => {
    mode.dropAfterRequests = 2;
    const err = await ensureModelFiles([file()], new FsModelFolder(dir), fetchRange, undefined, 30_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelDownloadError);
    expect((err as Error).message).toMatch(/stopped at 60000 of 100000 bytes.*resumes/);
    expect(statSync(path.join(dir, "onnx/model.onnx.part")).size).toBe(60_000);
    expect(existsSync(path.join(dir, "onnx/model.onnx"))).toBe(false);
    mode.dropAfterRequests = Infinity;
    seen.length = 0;
    await ensureModelFiles([file()], new FsModelFolder(dir), fetchRange, undefined, 30_000);
    expect(seen).toEqual(["bytes=60000-89999", "bytes=90000-99999"]);
    expect(readFileSync(path.join(dir, "onnx/model.onnx"))).toEqual(Buffer.from(body));
  });

  test("a checksum mismatch removes the download and never installs it", async () => {
    mode.corrupt = true;
    await expect(ensureModelFiles([file()], new FsModelFolder(dir), fetchRange, undefined, 30_000)).rejects.toThrow(/does not match its pinned SHA-256.*bytes were deleted/);
    expect(existsSync(path.join(dir, "onnx/model.onnx"))).toBe(false);
    expect(existsSync(path.join(dir, "onnx/model.onnx.part"))).toBe(false);
    // A damaged installed file is fetched again.
    mode.corrupt = false;
    await ensureModelFiles([file()], new FsModelFolder(dir), fetchRange, undefined, 30_000);
    expect(readFileSync(path.join(dir, "onnx/model.onnx"))).toEqual(Buffer.from(body));
  });

  test("a full disk stops the download with a clear message; freed, it resumes", async () => {
    const real = new FsModelFolder(dir);
    const disk = fullDisk(real, 45_000);
    const full = disk.folder;
    await expect(ensureModelFiles([file()], full, fetchRange, undefined, 30_000)).rejects.toThrow(/disk is full: onnx\/model.onnx needs 70000 more bytes/);
    expect(existsSync(path.join(dir, "onnx/model.onnx"))).toBe(false);
    disk.free();
    await ensureModelFiles([file()], full, fetchRange, undefined, 30_000);
    expect(readFileSync(path.join(dir, "onnx/model.onnx"))).toEqual(Buffer.from(body));
  });

  test("a server without ranges: the whole file, what is already there skipped", async () => {
    mode.ranges = false;
    await ensureModelFiles([file()], new FsModelFolder(dir), fetchRange, undefined, 30_000);
    expect(readFileSync(path.join(dir, "onnx/model.onnx"))).toEqual(Buffer.from(body));
    // The folder keeps every name inside it.
    await expect(new FsModelFolder(dir).append("../outside", new Uint8Array(1))).rejects.toThrow(/not inside the model folder/);
    expect(existsSync(path.join(dir, "..", "outside"))).toBe(false);
  });
});

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});
