/**
 * The VaultPort contract: the behaviour every adapter (FsVault headless, the Obsidian adapter over the
 * stand-in) must share. Each test gets a fresh temp folder populated by `writeFixture`, then the
 * adapter under test opens it with `makeVault(root)`.
 *
 * Usage: `describeVaultPortContract("FsVault", (root) => FsVault.open(root), { externalChanges: true })`.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "@jest/globals";
import { backlinks } from "../../src/core/links/backlinks";
import { linkTextsOf } from "../../src/core/metadata";
import type { VaultEvent, VaultPort } from "../../src/core/vault";

export interface ContractOptions {
  /** The adapter notices files changed by other programs (a watcher). */
  externalChanges: boolean;
  /** How long to wait for an event before failing (ms). */
  eventTimeoutMs?: number;
}

export const PNG_BYTES = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 1, 2, 254, 255]);

export const FIXTURE: Record<string, string | Uint8Array> = {
  ".obsidian/app.json": "{}\n",
  "Home.md": [
    "---",
    "aliases: [Start]",
    "tags: [index]",
    'related: "[[Projects/Alpha]]"',
    "---",
    "# Home",
    "",
    "Intro with #inline-tag and a link to [[Projects/Alpha]].",
    "See [[Beta|the beta]] and [Gamma](Notes/Gamma.md).",
    "",
    "## Section",
    "",
    "![[diagram.png]]",
    "A dangling [[Nowhere]] link.",
    "A paragraph with a block id ^blk1",
    "",
  ].join("\n"),
  "Beta.md": "Beta body\n",
  "Projects/Alpha.md": "# Alpha\n\nSee [[Same]] and [[Home#Section]].\n",
  "Projects/Same.md": "Same in Projects\n",
  "Archive/Same.md": "Same in Archive\n",
  "Archive/Old.md": "Old points to [[Same]] and [[Projects/Same]].\n",
  "Notes/Gamma.md": "---\r\ntitle: Gamma\r\n---\r\nLine one\r\nLine two [[Beta]]\r\n",
  "Notes/Bom.md": "\uFEFF# Bom\nText\n",
  "Notes/Bad.md": "---\nkey: [unclosed\n---\nBody of bad\n",
  "diagram.png": PNG_BYTES,
};

export function writeFixture(root: string): void {
  for (const [rel, data] of Object.entries(FIXTURE)) {
    const abs = path.join(root, rel);
    fs.mkdirSync(path.dirname(abs), { recursive: true });
    fs.writeFileSync(abs, data);
  }
  fs.mkdirSync(path.join(root, "Empty"), { recursive: true });
}

export function makeTempRoot(prefix = "vault-contract-"): string {
  return fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
}

/** Resolves with the first event matching `pred` (listening starts now); rejects after `ms`. */
export function nextEvent(vault: VaultPort, pred: (e: VaultEvent) => boolean, ms = 5000): Promise<VaultEvent> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no matching vault event within ${ms} ms`));
    }, ms);
    const off = vault.onChange((e) => {
      if (!pred(e)) return;
      clearTimeout(timer);
      off();
      resolve(e);
    });
  });
}

/** Polls until `check` returns true; rejects after `ms`. */
export async function waitUntil(check: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export function describeVaultPortContract(
  name: string,
  makeVault: (root: string) => Promise<VaultPort>,
  options: ContractOptions = { externalChanges: true },
): void {
  const timeout = options.eventTimeoutMs ?? 5000;

  describe(`VaultPort contract: ${name}`, () => {
    let root: string;
    let vault: VaultPort;
    let events: VaultEvent[];
    let off: () => void;

    beforeEach(async () => {
      root = makeTempRoot();
      writeFixture(root);
      vault = await makeVault(root);
      await vault.ready();
      events = [];
      off = vault.onChange((e) => events.push(e));
    });

    afterEach(async () => {
      off();
      await vault.close();
      fs.rmSync(root, { recursive: true, force: true });
    });

    const paths = () => vault.listFiles().map((f) => f.path).sort();
    const onDisk = (rel: string) => fs.readFileSync(path.join(root, rel), "utf8");

    describe("listing", () => {
      test("lists every file and folder, without the config folder", () => {
        expect(paths()).toEqual(
          [
            "Archive/Old.md",
            "Archive/Same.md",
            "Beta.md",
            "Home.md",
            "Notes/Bad.md",
            "Notes/Bom.md",
            "Notes/Gamma.md",
            "Projects/Alpha.md",
            "Projects/Same.md",
            "diagram.png",
          ].sort(),
        );
        const folders = vault.listFolders();
        for (const f of ["Archive", "Empty", "Notes", "Projects"]) expect(folders).toContain(f);
        expect(folders).not.toContain("");
        expect(folders.some((f) => f === vault.configDir || f.startsWith(vault.configDir + "/"))).toBe(false);
        expect(vault.configDir).toBe(".obsidian");
        expect(vault.name).toBe(path.basename(root));
      });

      test("stat gives the file's facts; null when missing; isFolder", () => {
        const s = vault.stat("Notes/Gamma.md")!;
        expect(s).toMatchObject({ path: "Notes/Gamma.md", basename: "Gamma", extension: "md" });
        expect(s.size).toBe(Buffer.byteLength(FIXTURE["Notes/Gamma.md"]));
        expect(s.mtime).toBeGreaterThan(0);
        expect(s.ctime).toBeGreaterThan(0);
        expect(vault.stat("diagram.png")).toMatchObject({ basename: "diagram", extension: "png", size: PNG_BYTES.length });
        expect(vault.stat("Nope.md")).toBeNull();
        expect(vault.stat("Projects")).toBeNull();
        expect(vault.isFolder("Projects")).toBe(true);
        expect(vault.isFolder("Empty")).toBe(true);
        expect(vault.isFolder("Home.md")).toBe(false);
        expect(vault.isFolder("Nope")).toBe(false);
      });
    });

    describe("reading", () => {
      test("read returns the exact text (CRLF and BOM kept)", async () => {
        expect(await vault.read("Notes/Gamma.md")).toBe(FIXTURE["Notes/Gamma.md"]);
        const bom = await vault.read("Notes/Bom.md");
        expect(bom.charCodeAt(0)).toBe(0xfeff);
        expect(bom).toBe(FIXTURE["Notes/Bom.md"]);
      });

      test("readBinary returns the exact bytes", async () => {
        expect(Array.from(await vault.readBinary("diagram.png"))).toEqual(Array.from(PNG_BYTES));
        const text = await vault.readBinary("Notes/Bom.md");
        expect(Array.from(text.slice(0, 3))).toEqual([0xef, 0xbb, 0xbf]);
      });

      test("reading a missing file fails with not_found", async () => {
        await expect(vault.read("Nope.md")).rejects.toMatchObject({ code: "not_found" });
      });
    });

    describe("metadata", () => {
      test("links, embeds, tags, headings, frontmatter, blocks", () => {
        const m = vault.getMetadata("Home.md")!;
        expect(m).not.toBeNull();
        expect(m.frontmatter).toMatchObject({ aliases: ["Start"], tags: ["index"], related: "[[Projects/Alpha]]" });
        expect(m.frontmatterLinks.map((l) => [l.key, l.link])).toContainEqual(["related", "Projects/Alpha"]);
        const links = m.links.map((l) => l.link);
        expect(links).toEqual(expect.arrayContaining(["Projects/Alpha", "Beta", "Notes/Gamma.md", "Nowhere"]));
        expect(m.links.find((l) => l.link === "Beta")?.displayText).toBe("the beta");
        expect(m.embeds.map((l) => l.link)).toEqual(["diagram.png"]);
        expect(m.tags.map((t) => t.tag)).toContain("#inline-tag");
        expect(m.headings.map((h) => [h.heading, h.level])).toEqual([
          ["Home", 1],
          ["Section", 2],
        ]);
        expect(Object.keys(m.blocks)).toContain("blk1");
      });

      test("linkTexts, where the adapter has it, is linkTextsOf(getMetadata) for every file", () => {
        if (!vault.linkTexts) return; // optional: callers fall back to getMetadata
        for (const f of vault.listFiles()) {
          const m = vault.getMetadata(f.path);
          expect({ path: f.path, texts: vault.linkTexts(f.path) }).toEqual({ path: f.path, texts: m ? linkTextsOf(m) : null });
        }
        expect(vault.linkTexts("Home.md")).toEqual(["Projects/Alpha", "Projects/Alpha", "Beta", "Notes/Gamma.md", "diagram.png", "Nowhere"]);
      });

      test("notes only; invalid frontmatter is reported, not thrown", () => {
        expect(vault.getMetadata("diagram.png")).toBeNull();
        expect(vault.getMetadata("Nope.md")).toBeNull();
        const bad = vault.getMetadata("Notes/Bad.md")!;
        expect(bad).not.toBeNull();
        expect(bad.frontmatter).toBeUndefined();
        expect(bad.frontmatterError).toBeTruthy();
      });
    });

    describe("links", () => {
      test("resolveLink: same folder wins ties, explicit paths, case, attachments", () => {
        expect(vault.resolveLink("Same", "Projects/Alpha.md")).toBe("Projects/Same.md");
        expect(vault.resolveLink("Same", "Archive/Old.md")).toBe("Archive/Same.md");
        expect(vault.resolveLink("Archive/Same", "Projects/Alpha.md")).toBe("Archive/Same.md");
        expect(vault.resolveLink("Projects/Same.md", "Archive/Old.md")).toBe("Projects/Same.md");
        expect(vault.resolveLink("beta", "Home.md")).toBe("Beta.md");
        expect(vault.resolveLink("Gamma", "Home.md")).toBe("Notes/Gamma.md");
        expect(vault.resolveLink("diagram.png", "Notes/Gamma.md")).toBe("diagram.png");
        expect(vault.resolveLink("Nowhere", "Home.md")).toBeNull();
      });

      test("resolvedLinks and unresolvedLinks", () => {
        const r = vault.resolvedLinks();
        expect(r["Home.md"]).toEqual({
          "Projects/Alpha.md": 2,
          "Beta.md": 1,
          "Notes/Gamma.md": 1,
          "diagram.png": 1,
        });
        expect(r["Projects/Alpha.md"]).toEqual({ "Projects/Same.md": 1, "Home.md": 1 });
        expect(r["Archive/Old.md"]).toEqual({ "Archive/Same.md": 1, "Projects/Same.md": 1 });
        expect(r["Beta.md"]).toEqual({});
        expect(vault.unresolvedLinks()["Home.md"]).toEqual({ Nowhere: 1 });
        expect(vault.unresolvedLinks()["Beta.md"] ?? {}).toEqual({});
      });

      test("backlinks: the sources linking to each target, as resolvedLinks has them", async () => {
        const b = await backlinks(vault, ["Projects/Same.md", "Home.md", "Projects/Alpha.md", "Nowhere.md", "Home.md"]);
        expect([...b.keys()]).toEqual(["Projects/Same.md", "Home.md", "Projects/Alpha.md", "Nowhere.md"]);
        expect(Object.fromEntries(b.get("Projects/Same.md")!)).toEqual({ "Projects/Alpha.md": 1, "Archive/Old.md": 1 });
        expect(Object.fromEntries(b.get("Home.md")!)).toEqual({ "Projects/Alpha.md": 1 });
        expect(Object.fromEntries(b.get("Projects/Alpha.md")!)).toEqual({ "Home.md": 2 });
        expect(b.get("Nowhere.md")!.size).toBe(0);
        // The same as scanning the port's own map.
        const r = vault.resolvedLinks();
        for (const [t, sources] of b) expect([...sources.keys()]).toEqual(Object.keys(r).filter((s) => Object.hasOwn(r[s], t)));
      });

      test("creating the missing target resolves the dangling link", async () => {
        await vault.create("Nowhere.md", "Now somewhere\n");
        expect(vault.resolvedLinks()["Home.md"]["Nowhere.md"]).toBe(1);
        expect(vault.unresolvedLinks()["Home.md"] ?? {}).toEqual({});
      });

      test("a new note in the source's folder takes over a name link; deleting it hands it back", async () => {
        await vault.create("Notes/Linker.md", "[[Same]]\n");
        const before = vault.resolveLink("Same", "Notes/Linker.md");
        expect(["Archive/Same.md", "Projects/Same.md"]).toContain(before);
        expect(vault.resolvedLinks()["Notes/Linker.md"]).toEqual({ [before!]: 1 });
        await vault.create("Notes/Same.md", "closer\n");
        expect(vault.resolveLink("Same", "Notes/Linker.md")).toBe("Notes/Same.md");
        expect(vault.resolvedLinks()["Notes/Linker.md"]).toEqual({ "Notes/Same.md": 1 });
        await vault.trash("Notes/Same.md");
        expect(vault.resolvedLinks()["Notes/Linker.md"]).toEqual({ [before!]: 1 });
      });

      test("deleting a link's target re-resolves it to another candidate", async () => {
        await vault.trash("Projects/Same.md");
        expect(vault.resolvedLinks()["Projects/Alpha.md"]).toEqual({ "Archive/Same.md": 1, "Home.md": 1 });
        expect(vault.unresolvedLinks()["Archive/Old.md"]).toEqual({ "Projects/Same": 1 });
      });
    });

    describe("writing", () => {
      test("process replaces the text atomically and returns it; metadata and links follow", async () => {
        const ev = nextEvent(vault, (e) => e.type === "modify" && e.path === "Beta.md", timeout);
        const out = await vault.process("Beta.md", (t) => t + "Now links [[Home]].\n");
        expect(out).toBe("Beta body\nNow links [[Home]].\n");
        expect(onDisk("Beta.md")).toBe(out);
        await ev;
        expect(vault.getMetadata("Beta.md")!.links.map((l) => l.link)).toEqual(["Home"]);
        expect(vault.resolvedLinks()["Beta.md"]).toEqual({ "Home.md": 1 });
        expect(vault.stat("Beta.md")!.size).toBe(Buffer.byteLength(out));
      });

      test("concurrent process calls on one note are serialised (both applied)", async () => {
        await Promise.all([
          vault.process("Beta.md", (t) => t + "one\n"),
          vault.process("Beta.md", (t) => t + "two\n"),
          vault.process("Beta.md", (t) => t + "three\n"),
        ]);
        expect(onDisk("Beta.md")).toBe("Beta body\none\ntwo\nthree\n");
      });

      test("process keeps CRLF and BOM it is given back", async () => {
        await vault.process("Notes/Gamma.md", (t) => t.replace("Line one", "Line 1"));
        expect(onDisk("Notes/Gamma.md")).toBe("---\r\ntitle: Gamma\r\n---\r\nLine 1\r\nLine two [[Beta]]\r\n");
        await vault.process("Notes/Bom.md", (t) => t + "more\n");
        expect(fs.readFileSync(path.join(root, "Notes/Bom.md")).subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
      });

      test("process on a missing note fails with not_found; a throwing fn leaves the file alone", async () => {
        await expect(vault.process("Nope.md", (t) => t)).rejects.toMatchObject({ code: "not_found" });
        await expect(
          vault.process("Beta.md", () => {
            throw new Error("changed my mind");
          }),
        ).rejects.toThrow("changed my mind");
        expect(onDisk("Beta.md")).toBe("Beta body\n");
      });

      test("create makes parents, emits events, refuses an existing path", async () => {
        const ev = nextEvent(vault, (e) => e.type === "create" && e.path === "New/Deep/Note.md", timeout);
        await vault.create("New/Deep/Note.md", "# Fresh\n[[Home]]\n");
        await ev;
        expect(onDisk("New/Deep/Note.md")).toBe("# Fresh\n[[Home]]\n");
        expect(vault.stat("New/Deep/Note.md")).toMatchObject({ basename: "Note", extension: "md" });
        expect(vault.isFolder("New")).toBe(true);
        expect(vault.isFolder("New/Deep")).toBe(true);
        expect(vault.listFolders()).toEqual(expect.arrayContaining(["New", "New/Deep"]));
        expect(vault.getMetadata("New/Deep/Note.md")!.headings[0].heading).toBe("Fresh");
        expect(vault.resolvedLinks()["New/Deep/Note.md"]).toEqual({ "Home.md": 1 });
        await expect(vault.create("Beta.md", "x")).rejects.toMatchObject({ code: "exists" });
        expect(onDisk("Beta.md")).toBe("Beta body\n");
      });

      test("create with bytes, and writeBinary replaces bytes", async () => {
        const bytes = new Uint8Array([1, 2, 3, 0, 255]);
        await vault.create("Assets/blob.bin", bytes);
        expect(Array.from(await vault.readBinary("Assets/blob.bin"))).toEqual([1, 2, 3, 0, 255]);
        const ev = nextEvent(vault, (e) => e.type === "modify" && e.path === "diagram.png", timeout);
        await vault.writeBinary("diagram.png", new Uint8Array([9, 8, 7]));
        await ev;
        expect(Array.from(fs.readFileSync(path.join(root, "diagram.png")))).toEqual([9, 8, 7]);
        expect(vault.stat("diagram.png")!.size).toBe(3);
      });

      test("createFolder", async () => {
        await vault.createFolder("Fresh/Sub");
        expect(vault.isFolder("Fresh")).toBe(true);
        expect(vault.isFolder("Fresh/Sub")).toBe(true);
        expect(fs.statSync(path.join(root, "Fresh/Sub")).isDirectory()).toBe(true);
        await expect(vault.createFolder("Beta.md")).rejects.toMatchObject({ code: "exists" });
      });

      test("trash removes the file from the listing and its links dangle", async () => {
        const ev = nextEvent(vault, (e) => e.type === "delete" && e.path === "Beta.md", timeout);
        const where = await vault.trash("Beta.md");
        expect(typeof where).toBe("string");
        expect(where.length).toBeGreaterThan(0);
        await ev;
        expect(vault.stat("Beta.md")).toBeNull();
        expect(paths()).not.toContain("Beta.md");
        expect(fs.existsSync(path.join(root, "Beta.md"))).toBe(false);
        expect(vault.resolvedLinks()["Home.md"]["Beta.md"]).toBeUndefined();
        expect(vault.unresolvedLinks()["Home.md"]).toMatchObject({ Beta: 1 });
        expect(vault.resolvedLinks()["Beta.md"]).toBeUndefined();
      });

      test("trash a folder", async () => {
        await vault.trash("Archive");
        expect(vault.isFolder("Archive")).toBe(false);
        expect(paths().some((p) => p.startsWith("Archive/"))).toBe(false);
        expect(vault.resolveLink("Same", "Projects/Alpha.md")).toBe("Projects/Same.md");
      });

      test("rename a file: listing, events, links", async () => {
        const ev = nextEvent(vault, (e) => e.type === "rename" && e.path === "Archive/Beta2.md", timeout);
        const res = await vault.rename("Beta.md", "Archive/Beta2.md");
        expect(res.path).toBe("Archive/Beta2.md");
        const e = await ev;
        expect(e).toEqual({ type: "rename", path: "Archive/Beta2.md", oldPath: "Beta.md" });
        expect(vault.stat("Beta.md")).toBeNull();
        expect(vault.stat("Archive/Beta2.md")).toMatchObject({ basename: "Beta2" });
        expect(onDisk("Archive/Beta2.md")).toBe("Beta body\n");
        if (res.linksUpdated > 0) {
          expect(res.notesUpdated).toBeGreaterThan(0);
          // The notes whose links changed, by path (a git commit of the rename holds them too).
          expect(res.updatedPaths).toContain("Home.md");
          expect(res.updatedPaths).toHaveLength(res.notesUpdated);
          expect(vault.resolvedLinks()["Home.md"]["Archive/Beta2.md"]).toBe(1);
          expect(onDisk("Home.md")).not.toContain("[[Beta|");
        } else {
          // Without rewriting, the old links dangle.
          expect(vault.unresolvedLinks()["Home.md"]).toMatchObject({ Beta: 1 });
        }
      });

      test("rename into a new folder; refuses an existing target", async () => {
        await vault.rename("Beta.md", "Made/Here/Beta.md");
        expect(vault.isFolder("Made/Here")).toBe(true);
        expect(vault.stat("Made/Here/Beta.md")).not.toBeNull();
        await expect(vault.rename("Projects/Same.md", "Archive/Same.md")).rejects.toMatchObject({ code: "exists" });
        expect(onDisk("Archive/Same.md")).toBe("Same in Archive\n");
        await expect(vault.rename("Nope.md", "Other.md")).rejects.toMatchObject({ code: "not_found" });
      });

      test("rename a folder moves everything under it", async () => {
        const ev = nextEvent(vault, (e) => e.type === "rename" && e.path === "Work/Alpha.md", timeout);
        await vault.rename("Projects", "Work");
        const e = await ev;
        expect(e).toMatchObject({ oldPath: "Projects/Alpha.md" });
        expect(vault.isFolder("Projects")).toBe(false);
        expect(vault.isFolder("Work")).toBe(true);
        expect(paths()).toEqual(expect.arrayContaining(["Work/Alpha.md", "Work/Same.md"]));
        expect(paths().some((p) => p.startsWith("Projects/"))).toBe(false);
        expect(vault.getMetadata("Work/Alpha.md")!.headings[0].heading).toBe("Alpha");
        expect(vault.getMetadata("Projects/Alpha.md")).toBeNull();
        // The moved note's own links still resolve from its new place.
        expect(vault.resolvedLinks()["Work/Alpha.md"]).toEqual({ "Work/Same.md": 1, "Home.md": 1 });
        expect(vault.resolvedLinks()["Projects/Alpha.md"]).toBeUndefined();
      });

      test("onChange unsubscribe stops delivery", async () => {
        const seen: VaultEvent[] = [];
        const stop = vault.onChange((e) => seen.push(e));
        stop();
        await vault.create("Quiet.md", "x");
        expect(seen).toEqual([]);
        expect(events).toContainEqual({ type: "create", path: "Quiet.md" });
      });
    });

    describe("processFrontMatter", () => {
      test("keeps the body byte for byte and updates metadata", async () => {
        const before = onDisk("Home.md");
        const body = before.slice(before.indexOf("# Home"));
        await vault.processFrontMatter("Home.md", (fm) => {
          fm.status = "done";
          (fm.tags as string[]).push("more");
        });
        const after = onDisk("Home.md");
        expect(after.endsWith(body)).toBe(true);
        expect(after.slice(after.length - body.length)).toBe(body);
        expect(after).toContain("aliases:");
        expect(vault.getMetadata("Home.md")!.frontmatter).toMatchObject({ status: "done", tags: ["index", "more"], aliases: ["Start"] });
      });

      test("CRLF notes stay CRLF", async () => {
        await vault.processFrontMatter("Notes/Gamma.md", (fm) => {
          fm.title = "Gamma 2";
        });
        const after = onDisk("Notes/Gamma.md");
        expect(after.endsWith("\r\nLine one\r\nLine two [[Beta]]\r\n")).toBe(true);
        expect(after.replace(/\r\n/g, "")).not.toContain("\n");
        expect(vault.getMetadata("Notes/Gamma.md")!.frontmatter).toEqual({ title: "Gamma 2" });
      });

      test("adds a block to a note without one", async () => {
        await vault.processFrontMatter("Beta.md", (fm) => {
          fm.created = "2024-01-01";
        });
        const after = onDisk("Beta.md");
        expect(after.startsWith("---\n")).toBe(true);
        expect(after.endsWith("---\nBeta body\n")).toBe(true);
        expect(vault.getMetadata("Beta.md")!.frontmatter).toEqual({ created: "2024-01-01" });
      });

      test("invalid YAML: invalid_argument and the file is untouched", async () => {
        await expect(
          vault.processFrontMatter("Notes/Bad.md", (fm) => {
            fm.x = 1;
          }),
        ).rejects.toMatchObject({ code: "invalid_argument" });
        expect(onDisk("Notes/Bad.md")).toBe(FIXTURE["Notes/Bad.md"]);
      });
    });

    (options.externalChanges ? describe : describe.skip)("changes by other programs", () => {
      test("a new file appears with its metadata", async () => {
        const ev = nextEvent(vault, (e) => e.type === "create" && e.path === "Outside.md", timeout);
        fs.writeFileSync(path.join(root, "Outside.md"), "# Outside\n[[Nowhere]] [[Beta]]\n");
        await ev;
        expect(vault.stat("Outside.md")).not.toBeNull();
        expect(vault.getMetadata("Outside.md")!.headings[0].heading).toBe("Outside");
        expect(vault.resolvedLinks()["Outside.md"]).toEqual({ "Beta.md": 1 });
      });

      test("a modified note's metadata updates", async () => {
        const ev = nextEvent(vault, (e) => e.type === "modify" && e.path === "Beta.md", timeout);
        fs.writeFileSync(path.join(root, "Beta.md"), "Now with [[Home]] and #fresh\n");
        await ev;
        await waitUntil(() => vault.getMetadata("Beta.md")!.tags.some((t) => t.tag === "#fresh"), timeout);
        expect(vault.resolvedLinks()["Beta.md"]).toEqual({ "Home.md": 1 });
        expect(vault.stat("Beta.md")!.size).toBe(Buffer.byteLength("Now with [[Home]] and #fresh\n"));
      });

      test("a deleted file disappears and its links dangle", async () => {
        const ev = nextEvent(vault, (e) => e.type === "delete" && e.path === "Beta.md", timeout);
        fs.rmSync(path.join(root, "Beta.md"));
        await ev;
        expect(vault.stat("Beta.md")).toBeNull();
        expect(vault.unresolvedLinks()["Home.md"]).toMatchObject({ Beta: 1 });
      });

      test("a new folder with notes inside", async () => {
        const ev = nextEvent(vault, (e) => e.type === "create" && e.path === "Dropped/Inner/Deep.md", timeout);
        fs.mkdirSync(path.join(root, "Dropped/Inner"), { recursive: true });
        fs.writeFileSync(path.join(root, "Dropped/Inner/Deep.md"), "[[Nowhere]]\n");
        await ev;
        expect(vault.isFolder("Dropped")).toBe(true);
        expect(vault.isFolder("Dropped/Inner")).toBe(true);
        expect(vault.unresolvedLinks()["Dropped/Inner/Deep.md"]).toEqual({ Nowhere: 1 });
      });
    });
  });
}
