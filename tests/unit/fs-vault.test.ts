import { afterEach, describe, expect, jest, test } from "@jest/globals";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { VaultEvent } from "../../src/core/vault";
import { applyFrontmatterEdit, FsVault } from "../../src/hosts/node/fs-vault";
import { SyncReads } from "../../src/hosts/node/sync-reads";
import { makeTempRoot, nextEvent, waitUntil } from "../contract/vault-port.contract";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

function tempDir(prefix = "fsvault-"): string {
  const dir = makeTempRoot(prefix);
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function put(root: string, rel: string, data: string | Uint8Array): void {
  const abs = path.join(root, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, data);
}

async function open(root: string, opts: Parameters<typeof FsVault.open>[1] = {}): Promise<FsVault> {
  const v = await FsVault.open(root, { debounceMs: 20, ...opts });
  cleanup.push(() => v.close());
  return v;
}

describe("FsVault: reading", () => {
  test("small notes (read synchronously) and large ones (asynchronously) read whole, also after growing past the limit unseen", async () => {
    const root = tempDir();
    const big = "# Big\n" + "a line of a large note\n".repeat(20000); // ~460 KB, above the synchronous limit
    put(root, "Small.md", "small text");
    put(root, "Big.md", big);
    put(root, "Grows.md", "short");
    const v = await open(root, { watch: false });
    expect(await v.read("Small.md")).toBe("small text");
    expect(await v.read("Big.md")).toBe(big);
    expect(v.getMetadata("Big.md")?.headings.map((h) => h.heading)).toEqual(["Big"]);
    // Listed as 5 bytes; written in place (same file) to ~460 KB with no watcher to tell.
    fs.writeFileSync(path.join(root, "Grows.md"), big);
    expect(await v.read("Grows.md")).toBe(big);
    // Invalid UTF-8 and a BOM, read as text the way TextDecoder does (U+FFFD, BOM kept); bytes exact.
    const bad = new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0xff, 0xfe, 0xe2, 0x82, 0x41, 0x7a]);
    fs.writeFileSync(path.join(root, "Bad.md"), bad);
    const v2 = await open(root, { watch: false });
    expect(await v2.read("Bad.md")).toBe(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bad));
    expect(Buffer.from(await v2.readBinary("Bad.md")).equals(Buffer.from(bad))).toBe(true);
    // Replaced by another file (another inode) since it was listed.
    fs.writeFileSync(path.join(root, "Small.tmp"), "replaced");
    fs.renameSync(path.join(root, "Small.tmp"), path.join(root, "Small.md"));
    expect(await v.read("Small.md")).toBe("replaced");
  });
});

describe("FsVault: a slow disk", () => {
  test("a slow synchronous read switches the vault to asynchronous reads, once; every note reads the same", async () => {
    const root = tempDir();
    const bad = new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0xff, 0xfe, 0xe2, 0x82, 0x41, 0x7a]);
    for (let i = 0; i < 5; i++) put(root, `n${i}.md`, `# Heading ${i}\n\ntext ${i} [[n${(i + 1) % 5}]]\n`);
    put(root, "Bad.md", bad);
    const logs: string[] = [];
    // Every synchronous read counts as slow here.
    const v = await open(root, { watch: false, slowReadMs: -1, log: (level, msg) => logs.push(`${level}: ${msg}`) });
    await v.ready();
    expect(logs.filter((l) => /reading notes asynchronously/.test(l))).toEqual([expect.stringMatching(/^info: A read took \d+ ms \(a slow or busy disk\)/)]);
    for (let i = 0; i < 5; i++) expect(v.getMetadata(`n${i}.md`)?.headings.map((h) => h.heading)).toEqual([`Heading ${i}`]);
    const sync = jest.spyOn(jest.requireActual<typeof fs>("node:fs"), "readFileSync");
    try {
      expect(await v.read("n3.md")).toBe("# Heading 3\n\ntext 3 [[n4]]\n");
      expect(await v.read("Bad.md")).toBe(new TextDecoder("utf-8", { ignoreBOM: true }).decode(bad));
      expect(Buffer.from(await v.readBinary("Bad.md")).equals(Buffer.from(bad))).toBe(true);
      expect(sync).not.toHaveBeenCalled();
    } finally {
      sync.mockRestore();
    }
  });

  test("reads are asynchronous for a while after a slow one, twice as long the next time; then synchronous again", async () => {
    const calls: [number, number][] = [];
    let clock = 1000;
    const r = new SyncReads(-1, (_ms, forMs, nth) => calls.push([forMs, nth]), 40, () => clock);
    expect(r.slow).toBe(false);
    expect(r.run(() => "a")).toBe("a");
    expect(r.slow).toBe(true);
    clock += 39;
    r.run(() => "b"); // while slow, a slow read starts no new window
    expect(calls).toEqual([[40, 1]]);
    expect(r.slow).toBe(true);
    clock += 1;
    expect(r.slow).toBe(false);
    r.run(() => "c");
    expect(r.slow).toBe(true);
    expect(calls).toEqual([[40, 1], [80, 2]]);
    clock += 79;
    expect(r.slow).toBe(true); // the second window is 80
    clock += 1;
    expect(r.slow).toBe(false);

    // The vault: synchronous reads again once the window is over; a second switch is said at debug level.
    const root = tempDir();
    for (let i = 0; i < 3; i++) put(root, `n${i}.md`, `# Heading ${i}\n`);
    const logs: string[] = [];
    const v = await open(root, { watch: false, slowReadMs: -1, slowReadsForMs: 30, log: (level, msg) => logs.push(`${level}: ${msg}`) });
    await v.ready();
    // Past any window opening may have started (30 ms, then 60, 120: a sync read each).
    await new Promise((res) => setTimeout(res, 250));
    const sync = jest.spyOn(jest.requireActual<typeof fs>("node:fs"), "readFileSync");
    try {
      expect(await v.read("n1.md")).toBe("# Heading 1\n"); // synchronously, and slow again
      expect(sync).toHaveBeenCalledTimes(1);
    } finally {
      sync.mockRestore();
    }
    const said = logs.filter((l) => /reading notes asynchronously/.test(l));
    expect(said[0]).toMatch(/^info: A read took \d+ ms \(a slow or busy disk\): reading notes asynchronously for the next 0 s/);
    expect(said.length).toBeGreaterThanOrEqual(2);
    for (const l of said.slice(1)) expect(l).toMatch(/^debug: A read took \d+ ms/);
  });

  test("once reads are asynchronous, opening reads several notes at once (at most 16), each note's metadata its own", async () => {
    const root = tempDir();
    for (let i = 0; i < 60; i++) put(root, `n${i}.md`, `# Heading ${i}\n\ntext ${i} [[n${(i + 1) % 60}]] #tag${i}\n`);
    put(root, "Big.md", "# Big\n" + "a line of a large note\n".repeat(20000)); // above the synchronous limit
    const real = jest.requireActual<typeof fs>("node:fs");
    // A read in flight: from its file's opening to its closing (the reads go through ReadPool).
    const openFile = real.open;
    const closeFile = real.close;
    let inFlight = 0;
    let most = 0;
    let calls = 0;
    const spyOpen = jest.spyOn(real, "open").mockImplementation(((p: fs.PathLike, flags: fs.OpenMode, cb: (e: NodeJS.ErrnoException | null, fd: number) => void) => {
      calls++;
      most = Math.max(most, ++inFlight);
      openFile(p, flags, cb);
    }) as unknown as typeof fs.open);
    const spyClose = jest.spyOn(real, "close").mockImplementation(((fd: number, cb: (e: NodeJS.ErrnoException | null) => void) => {
      inFlight--;
      closeFile(fd, cb);
    }) as unknown as typeof fs.close);
    try {
      // Every synchronous read counts as slow: the first note's switches the vault.
      const v = await open(root, { watch: false, slowReadMs: -1 });
      await v.ready();
      expect(calls).toBe(60); // every note but the one read synchronously
      expect(most).toBeGreaterThan(1);
      expect(most).toBeLessThanOrEqual(16);
      for (let i = 0; i < 60; i++) {
        const m = v.getMetadata(`n${i}.md`);
        expect(m?.headings.map((h) => h.heading)).toEqual([`Heading ${i}`]);
        expect(m?.tags?.map((t) => t.tag)).toEqual([`#tag${i}`]);
      }
      expect(v.getMetadata("Big.md")?.headings.map((h) => h.heading)).toEqual(["Big"]);
      expect(v.resolvedLinks()["n6.md"]).toEqual({ "n7.md": 1 });
      expect(inFlight).toBe(0); // every file opened was closed
    } finally {
      spyOpen.mockRestore();
      spyClose.mockRestore();
    }
  });
});

describe("FsVault: symbolic links", () => {
  test("links leading outside the vault are neither listed nor readable nor writable", async () => {
    const root = tempDir();
    const outside = tempDir("fsvault-outside-");
    put(outside, "secret.md", "top secret");
    put(root, "Real.md", "real [[secret]]");
    fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "leak.md"));
    fs.symlinkSync(outside, path.join(root, "ext"));
    const v = await open(root);
    expect(v.listFiles().map((f) => f.path)).toEqual(["Real.md"]);
    expect(v.listFolders()).toEqual([]);
    expect(v.isFolder("ext")).toBe(false);
    for (const p of ["leak.md", "ext/secret.md"]) {
      const err = await v.read(p).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: "forbidden" });
      expect((err as Error).message).not.toContain(outside);
      expect((err as Error).message).not.toContain(root);
      await expect(v.process(p, () => "pwned")).rejects.toMatchObject({ code: "forbidden" });
    }
    await expect(v.create("ext/new.md", "x")).rejects.toMatchObject({ code: "forbidden" });
    await expect(v.writeBinary("ext/new.bin", new Uint8Array([1]))).rejects.toMatchObject({ code: "forbidden" });
    expect(fs.readFileSync(path.join(outside, "secret.md"), "utf8")).toBe("top secret");
    expect(fs.existsSync(path.join(outside, "new.md"))).toBe(false);
    expect(v.unresolvedLinks()["Real.md"]).toEqual({ secret: 1 });
  });

  test("links inside the vault are followed; links into the config folder are not", async () => {
    const root = tempDir();
    put(root, "Real.md", "real text");
    put(root, "Folder/Inner.md", "inner");
    put(root, ".obsidian/app.json", "{}");
    fs.symlinkSync(path.join(root, "Real.md"), path.join(root, "Alias.md"));
    fs.symlinkSync(path.join(root, "Folder"), path.join(root, "Linked"));
    fs.symlinkSync(path.join(root, ".obsidian", "app.json"), path.join(root, "config.json"));
    const v = await open(root);
    const files = v.listFiles().map((f) => f.path).sort();
    expect(files).toEqual(["Alias.md", "Folder/Inner.md", "Linked/Inner.md", "Real.md"]);
    expect(await v.read("Alias.md")).toBe("real text");
    expect(await v.read("Linked/Inner.md")).toBe("inner");
    await expect(v.read("config.json")).rejects.toMatchObject({ code: "forbidden" });
  });

  test("a listed note or folder replaced by a link to outside is refused, not read through", async () => {
    const root = tempDir();
    const outside = tempDir("fsvault-outside-");
    put(outside, "secret.md", "top secret");
    put(outside, "Inner.md", "outside inner");
    put(root, "Real.md", "real text");
    put(root, "Folder/Inner.md", "inner");
    for (const watch of [true, false]) {
      const v = await open(root, { watch });
      // Reads that fill the folder cache first.
      expect(await v.read("Real.md")).toBe("real text");
      expect(await v.read("Folder/Inner.md")).toBe("inner");
      fs.renameSync(path.join(root, "Real.md"), path.join(root, "Real.bak"));
      fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "Real.md"));
      fs.renameSync(path.join(root, "Folder"), path.join(root, "Folder.bak"));
      fs.symlinkSync(outside, path.join(root, "Folder"));
      // At once, before any watcher event could arrive.
      await expect(v.read("Real.md")).rejects.toMatchObject({ code: "forbidden" });
      await expect(v.read("Folder/Inner.md")).rejects.toMatchObject({ code: "forbidden" });
      await v.close();
      fs.rmSync(path.join(root, "Real.md"));
      fs.rmSync(path.join(root, "Folder"));
      fs.renameSync(path.join(root, "Real.bak"), path.join(root, "Real.md"));
      fs.renameSync(path.join(root, "Folder.bak"), path.join(root, "Folder"));
    }
  });

  test("a symlink cycle does not hang the scan", async () => {
    const root = tempDir();
    put(root, "A/Note.md", "x");
    fs.symlinkSync(path.join(root, "A"), path.join(root, "A", "loop"));
    const v = await open(root);
    expect(v.listFiles().map((f) => f.path)).toEqual(["A/Note.md"]);
  });
});

describe("FsVault: names", () => {
  test("NFD names on disk are listed as NFC and read/written in place", async () => {
    const root = tempDir();
    const nfdFolder = "Re\u0301sume\u0301";
    const nfdFile = "Cafe\u0301.md";
    put(root, `${nfdFolder}/${nfdFile}`, "coffee");
    put(root, "Link.md", "[[Café]]");
    const v = await open(root);
    const p = "Résumé/Café.md";
    expect(p).toBe(p.normalize("NFC"));
    expect(v.listFiles().map((f) => f.path).sort()).toEqual(["Link.md", p]);
    expect(v.isFolder("Résumé")).toBe(true);
    expect(await v.read(p)).toBe("coffee");
    expect(v.resolvedLinks()["Link.md"]).toEqual({ [p]: 1 });
    await v.process(p, (t) => t + " and cake");
    const onDisk = fs.readdirSync(path.join(root, nfdFolder)).filter((n) => !n.startsWith("."));
    expect(onDisk).toEqual([nfdFile]);
    expect(fs.readFileSync(path.join(root, nfdFolder, nfdFile), "utf8")).toBe("coffee and cake");
    await v.create("Résumé/New.md", "new");
    expect(fs.existsSync(path.join(root, nfdFolder, "New.md"))).toBe(true);
    await v.rename(p, "Résumé/Tea.md");
    expect(fs.readdirSync(path.join(root, nfdFolder)).sort()).toEqual(["New.md", "Tea.md"]);
  });

  test("dot-entries and the config folder are skipped; name is the folder name", async () => {
    const root = tempDir();
    put(root, ".git/HEAD", "ref");
    put(root, ".hidden.md", "h");
    put(root, "Config/app.json", "{}");
    put(root, "Note.md", "n");
    put(root, "node_modules/pkg/readme.md", "r");
    const v = await open(root, { configDir: "Config" });
    expect(v.configDir).toBe("Config");
    expect(v.name).toBe(path.basename(root));
    expect(v.listFiles().map((f) => f.path).sort()).toEqual(["Note.md", "node_modules/pkg/readme.md"]);
  });
});

describe("FsVault: excluded files", () => {
  test("reads userIgnoreFilters from app.json and re-reads it when it changes", async () => {
    const root = tempDir();
    put(root, ".obsidian/app.json", JSON.stringify({ userIgnoreFilters: ["Archive/", "/secret/", 3] }));
    put(root, "Note.md", "n");
    const v = await open(root);
    expect(v.excludedFilters()).toEqual(["Archive/", "/secret/"]);
    fs.writeFileSync(path.join(root, ".obsidian/app.json"), JSON.stringify({ userIgnoreFilters: ["Drafts/"] }));
    await waitUntil(() => v.excludedFilters()[0] === "Drafts/");
    expect(v.excludedFilters()).toEqual(["Drafts/"]);
  });

  test("no app.json → no filters", async () => {
    const root = tempDir();
    put(root, "Note.md", "n");
    const v = await open(root, { watch: false });
    expect(v.excludedFilters()).toEqual([]);
  });
});

describe("FsVault: trash", () => {
  test("moves into .trash, numbering names that collide", async () => {
    const root = tempDir();
    put(root, "Beta.md", "one");
    put(root, "Folder/Beta.md", "two");
    put(root, "Folder/x.png", new Uint8Array([1]));
    const v = await open(root, { watch: false });
    expect(await v.trash("Beta.md")).toBe("the vault's .trash folder");
    const second = await v.trash("Folder/Beta.md");
    expect(second).toContain('"Beta 1.md"');
    expect(fs.readFileSync(path.join(root, ".trash", "Beta.md"), "utf8")).toBe("one");
    expect(fs.readFileSync(path.join(root, ".trash", "Beta 1.md"), "utf8")).toBe("two");
    await v.trash("Folder");
    expect(fs.existsSync(path.join(root, ".trash", "Folder", "x.png"))).toBe(true);
    expect(v.listFiles()).toEqual([]);
    expect(v.listFolders()).toEqual([]);
  });
});

describe("FsVault: writes", () => {
  test("atomic writes leave no temp files; unchanged text is not rewritten", async () => {
    const root = tempDir();
    put(root, "Note.md", "same");
    const v = await open(root, { watch: false });
    const events: VaultEvent[] = [];
    v.onChange((e) => events.push(e));
    await v.process("Note.md", (t) => t);
    expect(events).toEqual([]);
    await Promise.all(Array.from({ length: 10 }, (_, i) => v.process("Note.md", (t) => `${t}\n${i}`)));
    expect(fs.readFileSync(path.join(root, "Note.md"), "utf8").split("\n")).toHaveLength(11);
    expect(fs.readdirSync(root)).toEqual(["Note.md"]);
    expect(events.filter((e) => e.type === "modify")).toHaveLength(10);
  });

  test("keeps the file's permission bits", async () => {
    if (process.platform === "win32") return;
    const root = tempDir();
    put(root, "Note.md", "x");
    fs.chmodSync(path.join(root, "Note.md"), 0o600);
    const v = await open(root, { watch: false });
    await v.process("Note.md", () => "y");
    expect(fs.statSync(path.join(root, "Note.md")).mode & 0o777).toBe(0o600);
  });

  test("rename refuses moving a folder into itself; case-only rename works", async () => {
    const root = tempDir();
    put(root, "A/n.md", "x");
    put(root, "note.md", "y");
    const v = await open(root, { watch: false });
    await expect(v.rename("A", "A/B")).rejects.toMatchObject({ code: "invalid_argument" });
    await v.rename("note.md", "Note.md");
    expect(v.stat("Note.md")).not.toBeNull();
    expect(v.stat("note.md")).toBeNull();
  });

  test("our own writes are not echoed back by the watcher", async () => {
    const root = tempDir();
    put(root, "Note.md", "x");
    const v = await open(root);
    const events: VaultEvent[] = [];
    v.onChange((e) => events.push(e));
    await v.process("Note.md", () => "y");
    await v.create("Other.md", "z");
    // An outside change queued after ours: once it is seen, the echoes of ours have been handled too.
    const seen = nextEvent(v, (e) => e.path === "zzz.md");
    fs.writeFileSync(path.join(root, "zzz.md"), "outside");
    await seen;
    await v.settle();
    expect(events).toEqual([
      { type: "modify", path: "Note.md" },
      { type: "create", path: "Other.md" },
      { type: "create", path: "zzz.md" },
    ]);
  });

  test("an outside rename shows as delete + create and links follow", async () => {
    const root = tempDir();
    put(root, "Target.md", "t");
    put(root, "Src.md", "[[Target]] [[Moved]]");
    const v = await open(root);
    const created = nextEvent(v, (e) => e.type === "create" && e.path === "Moved.md");
    fs.renameSync(path.join(root, "Target.md"), path.join(root, "Moved.md"));
    await created;
    await waitUntil(() => v.stat("Target.md") === null);
    expect(v.resolvedLinks()["Src.md"]).toEqual({ "Moved.md": 1 });
    expect(v.unresolvedLinks()["Src.md"]).toEqual({ Target: 1 });
  });

  test("an outside folder delete removes everything under it", async () => {
    const root = tempDir();
    put(root, "D/E/n.md", "x");
    put(root, "keep.md", "[[n]]");
    const v = await open(root);
    expect(v.resolvedLinks()["keep.md"]).toEqual({ "D/E/n.md": 1 });
    const gone = nextEvent(v, (e) => e.type === "delete" && e.path === "D");
    fs.rmSync(path.join(root, "D"), { recursive: true });
    await gone;
    expect(v.listFiles().map((f) => f.path)).toEqual(["keep.md"]);
    expect(v.listFolders()).toEqual([]);
    expect(v.unresolvedLinks()["keep.md"]).toEqual({ n: 1 });
  });
});

/** dist/scan-worker.js, built by `npm test` before the tests run. */
const SCAN_WORKER = path.resolve(__dirname, "../../dist/scan-worker.js");

/** What a listing holds: every file's facts (change signature included), every folder, every file's text. */
async function listing(v: FsVault): Promise<string> {
  const files = v
    .listFiles()
    .map((f) => ({ path: f.path, size: f.size, mtime: f.mtime, ctime: f.ctime, sig: (f as { sig?: number }).sig }))
    .sort((a, b) => (a.path < b.path ? -1 : 1));
  const texts: string[] = [];
  for (const f of files) texts.push(await v.read(f.path));
  return JSON.stringify({ files, folders: v.listFolders().sort(), texts });
}

describe("FsVault: the listing's worker", () => {
  /** A vault with what a walk must get right: links in and out and round, dot-entries, our temp files, odd names. */
  function trickyVault(): string {
    const root = tempDir();
    const outside = tempDir("fsvault-outside-");
    put(outside, "secret.md", "top secret");
    put(root, "Note.md", "[[constructor]] [[Café]]");
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty"]) {
      put(root, `${name}.md`, `# ${name}`);
      put(root, `${name}/${name}.md`, name);
    }
    put(root, "Re\u0301sume\u0301/Cafe\u0301.md", "coffee");
    for (let i = 0; i < 2100; i++) put(root, `Many/n${i}.md`, `note ${i}`); // more than one batch
    put(root, "Deep/a/b/c/d/e.md", "deep");
    put(root, "Deep/a/picture.png", new Uint8Array([1, 2, 3]));
    put(root, ".obsidian/app.json", "{}");
    put(root, ".git/HEAD", "ref");
    put(root, ".hidden.md", "h");
    put(root, "Deep/.Note.md.0123456789ab.vault-mcp.tmp", "half written");
    fs.symlinkSync(path.join(root, "Note.md"), path.join(root, "Alias.md"));
    fs.symlinkSync(path.join(root, "Deep", "a"), path.join(root, "Linked"));
    fs.symlinkSync(path.join(root, "Deep"), path.join(root, "Deep", "a", "b", "up")); // a cycle
    fs.symlinkSync(path.join(outside, "secret.md"), path.join(root, "leak.md"));
    fs.symlinkSync(outside, path.join(root, "Many", "ext"));
    fs.symlinkSync(path.join(root, "gone.md"), path.join(root, "dangling.md"));
    fs.symlinkSync(path.join(root, ".obsidian", "app.json"), path.join(root, "config.json"));
    return root;
  }

  test("lists what listing in this thread lists, our temp files included", async () => {
    expect(fs.existsSync(SCAN_WORKER)).toBe(true);
    const root = trickyVault();
    const here = await open(root, { watch: false });
    const logs: string[] = [];
    const there = await open(root, { watch: false, scanWorkerFile: SCAN_WORKER, log: (level, m) => logs.push(`${level}: ${m}`) });
    expect(there.listingOffThread).toBe(true);
    expect(here.listingOffThread).toBe(false);
    const expected = await listing(here);
    expect(await listing(there)).toBe(expected);
    expect(logs.filter((l) => l.includes("worker"))).toEqual([]);
    const paths = there.listFiles().map((f) => f.path);
    expect(paths).toEqual(expect.arrayContaining(["Alias.md", "Linked/b/c/d/e.md", "Résumé/Café.md", "__proto__/__proto__.md", "Many/n2099.md"]));
    expect(paths.some((p) => p.includes("secret") || p.startsWith("leak") || p.startsWith("dangling") || p.startsWith("config") || p.includes("/up/"))).toBe(false);
    expect(there.listFolders()).toContain("Linked");
    expect(there.resolvedLinks()["Note.md"]).toEqual({ "constructor.md": 1, "Résumé/Café.md": 1 });
    await here.close();
    expect(await there.removeLeftoverTemps()).toBe(1);
    expect(fs.existsSync(path.join(root, "Deep", ".Note.md.0123456789ab.vault-mcp.tmp"))).toBe(false);
  });

  test("a worker that cannot start, or ends part-way, leaves the listing to this thread: nothing twice, nothing of its own", async () => {
    const root = trickyVault();
    const here = await open(root, { watch: false });
    const expected = await listing(here);
    // One batch with a file that is not there and the temp file, then a failure.
    const elsewhere = tempDir("fsvault-worker-");
    const broken = path.join(elsewhere, "broken-worker.js");
    fs.writeFileSync(
      broken,
      `const { parentPort } = require("node:worker_threads");
       parentPort.postMessage({ batch: { files: ["Invented.md", "Note.md"], disk: [null, null], nums: new Float64Array(10), folders: ["Invented", "Invented"], links: [], leftovers: ["Deep/.Note.md.0123456789ab.vault-mcp.tmp"], warnings: [] } });
       setTimeout(() => { throw new Error("the walk broke"); }, 20);`,
    );
    for (const file of [broken, path.join(elsewhere, "no-such-worker.js")]) {
      const logs: string[] = [];
      const v = await open(root, { watch: false, scanWorkerFile: file, log: (level, m) => logs.push(`${level}: ${m}`) });
      expect(await listing(v)).toBe(expected);
      expect(logs.some((l) => l.startsWith("debug: The listing's worker") && l.endsWith("listing in this thread."))).toBe(true);
      expect(logs.join("\n")).not.toContain(root);
      await v.close();
    }
    // The temp file once, not twice.
    const v = await open(root, { watch: false, scanWorkerFile: broken });
    expect(await v.removeLeftoverTemps()).toBe(1);
  });
});

describe("FsVault: opening", () => {
  test("a missing folder is a clear error", async () => {
    await expect(FsVault.open(path.join(os.tmpdir(), "definitely-missing-vault-" + Date.now()))).rejects.toMatchObject({ code: "not_found" });
  });
});

describe("applyFrontmatterEdit", () => {
  test("keeps comments and untouched keys' style", () => {
    const text = "---\n# a comment\ntitle: 'Quoted'   # trailing\nlist: [a, b]\n---\nbody\n";
    const out = applyFrontmatterEdit(text, (fm) => (fm.added = 1), "n.md");
    expect(out).toContain("# a comment");
    expect(out).toContain("title: 'Quoted'");
    expect(out).toMatch(/list: \[ ?a, b ?\]/);
    expect(out.endsWith("added: 1\n---\nbody\n")).toBe(true);
  });

  test("deletes keys; returns the same text when nothing changed; BOM kept", () => {
    const text = "\uFEFF---\na: 1\nb: 2\n---\nbody";
    expect(applyFrontmatterEdit(text, () => {}, "n.md")).toBe(text);
    const out = applyFrontmatterEdit(text, (fm) => delete fm.a, "n.md");
    expect(out).toBe("\uFEFF---\nb: 2\n---\nbody");
  });

  test("closing fence at the end of the file", () => {
    expect(applyFrontmatterEdit("---\na: 1\n---", (fm) => (fm.a = 2), "n.md")).toBe("---\na: 2\n---");
  });

  test("links in values are quoted so they stay strings", () => {
    const out = applyFrontmatterEdit("body\n", (fm) => (fm.related = ["[[One]]"]), "n.md");
    expect(out).toBe('---\nrelated:\n  - "[[One]]"\n---\nbody\n');
  });

  test("non-map frontmatter is refused", () => {
    expect(() => applyFrontmatterEdit("---\n- a\n---\nbody", () => {}, "n.md")).toThrow(/not a list of properties/);
  });
});

describe("FsVault: rename updates links", () => {
  test("links to a renamed note, a moved folder, and a moved note's own relative links", async () => {
    const root = tempDir();
    put(root, "Home.md", "See [[Beta|the beta]], [[Projects/Alpha#Top]] and [x](Projects/Alpha.md).\n");
    put(root, "Beta.md", "beta\n");
    put(root, "Projects/Alpha.md", "# Top\n[up](../Home.md) and [[Beta]]\n");
    const v = await open(root, { watch: false });
    const r1 = await v.rename("Beta.md", "Archive/Gamma.md");
    expect(r1).toEqual({ path: "Archive/Gamma.md", linksUpdated: 2, notesUpdated: 2, updatedPaths: ["Home.md", "Projects/Alpha.md"] });
    expect(fs.readFileSync(path.join(root, "Home.md"), "utf8")).toBe("See [[Gamma|the beta]], [[Projects/Alpha#Top]] and [x](Projects/Alpha.md).\n");
    expect(v.resolvedLinks()["Home.md"]["Archive/Gamma.md"]).toBe(1);
    const r2 = await v.rename("Projects", "Work/Now");
    expect(r2.linksUpdated).toBeGreaterThanOrEqual(2);
    const home = fs.readFileSync(path.join(root, "Home.md"), "utf8");
    expect(home).toContain("[[Work/Now/Alpha#Top]]");
    expect(home).toContain("(Work/Now/Alpha.md)");
    const alpha = fs.readFileSync(path.join(root, "Work/Now/Alpha.md"), "utf8");
    expect(alpha).toContain("(../../Home.md)");
    expect(v.resolvedLinks()["Work/Now/Alpha.md"]).toEqual({ "Home.md": 1, "Archive/Gamma.md": 1 });
    expect(v.unresolvedLinks()["Home.md"]).toEqual({});
  });
});

describe("FsVault: moving symbolic links", () => {
  test("trash and rename move the link, not its target", async () => {
    const root = tempDir();
    put(root, "Real.md", "real");
    fs.symlinkSync(path.join(root, "Real.md"), path.join(root, "Alias.md"));
    fs.symlinkSync(path.join(root, "Real.md"), path.join(root, "Alias2.md"));
    const v = await open(root, { watch: false });
    await v.rename("Alias.md", "Renamed.md");
    expect(fs.lstatSync(path.join(root, "Renamed.md")).isSymbolicLink()).toBe(true);
    expect(fs.readFileSync(path.join(root, "Real.md"), "utf8")).toBe("real");
    await v.trash("Alias2.md");
    expect(fs.existsSync(path.join(root, "Real.md"))).toBe(true);
    expect(fs.lstatSync(path.join(root, ".trash", "Alias2.md")).isSymbolicLink()).toBe(true);
    expect(v.listFiles().map((f) => f.path).sort()).toEqual(["Real.md", "Renamed.md"]);
  });
});
