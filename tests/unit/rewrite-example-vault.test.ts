import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { LinkResolver } from "../../src/core/links/resolver";
import { renameContext, rewriteLinks } from "../../src/core/links/rewrite";
import { splitLinkpath, type NoteMetadata } from "../../src/core/metadata";
import { parseNote } from "../../src/core/parser";
import { vaultFiles } from "../support/vault-files";

const VAULT = path.resolve(__dirname, "../../examples/vault");


/** Every link of every note as (source, target-or-unresolved-text), in document order. */
function targets(notes: Map<string, string>, resolver: LinkResolver): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [p, text] of notes) {
    const m: NoteMetadata = parseNote(text);
    const refs = [...m.frontmatterLinks.map((l) => l.link), ...[...m.links, ...m.embeds].sort((a, b) => a.position.start.offset - b.position.start.offset).map((l) => l.link)];
    out.set(p, refs.map((l) => {
      const { path: lp, fragment } = splitLinkpath(l);
      return `${resolver.resolve(lp, p) ?? "?" + lp}#${fragment ?? ""}`;
    }));
  }
  return out;
}

function renameAll(renames: Map<string, string>) {
  const files = vaultFiles(VAULT);
  const before = new LinkResolver(files);
  const texts = new Map(files.filter((f) => f.endsWith(".md")).map((f) => [f, fs.readFileSync(path.join(VAULT, f), "utf8")]));
  const expected = targets(texts, before);
  const ctx = renameContext(before, renames);
  const after = new Map<string, string>();
  let count = 0;
  for (const [p, text] of texts) {
    const np = renames.get(p) ?? p;
    const r = rewriteLinks(text, parseNote(text), p, np, renames, ctx.resolveOld, ctx.resolveNewShortest);
    count += r.count;
    after.set(np, r.text);
  }
  const actual = targets(after, ctx.after);
  return { expected, actual, count, texts, after };
}

const mapTarget = (renames: Map<string, string>) => (t: string) => {
  const i = t.indexOf("#");
  const p = t.slice(0, i);
  return (renames.get(p) ?? p) + t.slice(i);
};

describe("rewriteLinks over the example vault", () => {
  test("renaming a well-linked note keeps every link on its target", () => {
    const renames = new Map([["Reference/Dovetail Joint.md", "Reference/Joinery/Dovetails.md"]]);
    const { expected, actual, count, after } = renameAll(renames);
    expect(count).toBe(8);
    for (const [p, list] of expected) expect([p, actual.get(renames.get(p) ?? p)]).toEqual([p, list.map(mapTarget(renames))]);
    expect(after.get("Projects/Shaker Side Table.md")).toContain("![[Dovetails#Cutting the tails]]");
    expect(after.get("Reference/Wood Species.md")).toContain("[dovetail](Dovetails.md#Marking%20out)");
  });

  test("renaming a folder (every file in it) keeps every link on its target, relative links included", () => {
    const files = vaultFiles(VAULT);
    const renames = new Map(files.filter((f) => f.startsWith("Projects/")).map((f) => [f, "Work/" + f.slice("Projects/".length)]));
    const { expected, actual, count, texts, after } = renameAll(renames);
    expect(count).toBeGreaterThan(3);
    for (const [p, list] of expected) expect([p, actual.get(renames.get(p) ?? p)]).toEqual([p, list.map(mapTarget(renames))]);
    // Untouched notes keep their bytes.
    expect(after.get("People/Tomás Rivera.md")).toBe(texts.get("People/Tomás Rivera.md"));
  });

  test("moving a note deeper keeps its relative links working", () => {
    const renames = new Map([["Reference/Wood Species.md", "Reference/Materials/Timber/Wood Species.md"]]);
    const { expected, actual, after } = renameAll(renames);
    for (const [p, list] of expected) expect([p, actual.get(renames.get(p) ?? p)]).toEqual([p, list.map(mapTarget(renames))]);
    expect(after.get("Reference/Materials/Timber/Wood Species.md")).toContain("(<../../../Projects/Workbench Build.md>)");
  });
});
