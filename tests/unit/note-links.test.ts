/**
 * The headless metadata cache's compact link structures: the maps are read-only views over one
 * record per note, and the key index finds every note a file's arrival or departure affects.
 */
import { describe, expect, test } from "@jest/globals";
import { computeLinkMaps, LinkResolver } from "../../src/core/links/resolver";
import { parseNote } from "../../src/core/parser";
import { NoteLinks } from "../../src/hosts/node/note-links";

function open(notes: Record<string, string>, attachments: string[] = []): NoteLinks {
  const l = new NoteLinks(() => {});
  for (const [p, t] of Object.entries(notes)) l.setMeta(p, t);
  l.resolveAll([...Object.keys(notes), ...attachments]);
  return l;
}

/** The maps computed from scratch, as the port promises them. */
function expected(notes: Record<string, string>, files: string[]) {
  return computeLinkMaps(
    Object.entries(notes).map(([p, t]) => [p, parseNote(t)]),
    new LinkResolver(files),
  );
}

describe("NoteLinks", () => {
  test("the maps are views shaped as Obsidian's, read-only", () => {
    const notes = { "A.md": "[[B]] [[B]] [[Nowhere]] ![[pic.png]] [[2024]] [[__proto__]]", "B.md": "[[A#h]]", "C.md": "no links" };
    const l = open(notes, ["pic.png"]);
    const want = expected(notes, [...Object.keys(notes), "pic.png"]);
    expect(l.resolved).toEqual(want.resolved);
    expect(l.unresolved).toEqual(want.unresolved);
    expect(Object.keys(l.resolved)).toEqual(["A.md", "B.md", "C.md"]);
    expect(Object.entries(l.resolved["A.md"])).toEqual([["B.md", 2], ["pic.png", 1]]);
    expect(Object.keys(l.unresolved["A.md"])).toEqual(["2024", "Nowhere", "__proto__"]);
    expect(Object.getPrototypeOf(l.resolved["A.md"])).toBeNull();
    expect("A.md" in l.resolved).toBe(true);
    expect(Object.hasOwn(l.resolved, "pic.png")).toBe(false);
    expect(l.resolved["pic.png"]).toBeUndefined();
    const seen: string[] = [];
    for (const k in l.resolved) seen.push(k);
    expect(seen).toEqual(["A.md", "B.md", "C.md"]);
    expect(() => {
      "use strict";
      (l.resolved as Record<string, unknown>)["X.md"] = {};
    }).toThrow(TypeError);
  });

  test("a new or removed file re-resolves exactly the notes it affects", () => {
    const notes = {
      "A.md": "[[a.md]] [[Sub/Deep]] [[./rel]] [[..\\up]] [[img.PNG]]",
      "Sub/B.md": "[[../up]] [[./rel]]",
      "Sub/rel.md": "",
    };
    const l = open(notes);
    const files = new Set([...Object.keys(notes)]);
    const check = () => {
      const want = expected(
        Object.fromEntries([...l.notes()].map((p) => [p, notes[p as keyof typeof notes] ?? ""])),
        [...files],
      );
      expect(l.resolved).toEqual(want.resolved);
      expect(l.unresolved).toEqual(want.unresolved);
    };
    for (const f of ["x/a.md.md", "Sub/Deep.md", "rel.md", "up.md", "img.png", "Other/Deep.md"]) {
      l.addFile(f);
      files.add(f);
      l.relink(l.affectedByFile(f));
      check();
    }
    for (const f of ["Sub/Deep.md", "x/a.md.md", "Sub/rel.md", "up.md"]) {
      files.delete(f);
      l.removeFile(f);
      check();
    }
  });

  test("a changed note is re-indexed: its old links no longer make it affected, its new ones do", () => {
    const l = open({ "A.md": "[[Old]]" });
    expect([...l.affectedByFile("Old.md")]).toEqual(["A.md"]);
    l.setMeta("A.md", "[[New]]");
    l.relink(["A.md"]);
    expect([...l.affectedByFile("Old.md")]).toEqual([]);
    expect([...l.affectedByFile("dir/new.md")]).toEqual(["A.md"]);
    const affected = new Set<string>();
    l.moveFile("A.md", "Moved/A.md", affected);
    l.relink(affected);
    expect([...l.affectedByFile("new.md")]).toEqual(["Moved/A.md"]);
    expect(l.sourcesLinkingTo(["Moved/A.md"])).toEqual([]);
    l.addFile("New.md");
    l.relink(l.affectedByFile("New.md"));
    expect(l.sourcesLinkingTo(["New.md"])).toEqual(["Moved/A.md"]);
    expect(l.resolved["Moved/A.md"]).toEqual({ "New.md": 1 });
  });

  test("opened as the headless vault opens (notes read, then fitted, the key index sorted lazily): every note's keys are found", () => {
    for (const count of [0, 1, 1500]) {
      const l = new NoteLinks(() => {});
      const paths = Array.from({ length: count }, (_, i) => `n/${i}.md`);
      for (const p of paths) l.addFile(p);
      // One link a note: past the key index's first 1,024 pairs, so it grew while reading.
      for (let i = 0; i < count; i++) l.setMeta(paths[i], `[[Target ${i % 7}]] [[constructor]]`);
      l.relink(paths);
      l.opened();
      // A note arriving after opening and before any lookup: its keys go after the fitted ones.
      l.addFile("late.md");
      l.setMeta("late.md", "[[Target 3]] [[toString]]");
      l.relink(["late.md"]);
      const want3 = [...paths.filter((_, i) => i % 7 === 3), "late.md"].sort();
      expect([...l.affectedByFile("Target 3.md")].sort()).toEqual(want3);
      expect([...l.affectedByFile("toString.md")]).toEqual(["late.md"]);
      expect([...l.affectedByFile("constructor.md")].sort()).toEqual([...paths].sort());
    }
  });

  test("the key index sorted in steps after opening (runs, then merges): a note arriving mid-way and every note's keys are found", () => {
    const l = new NoteLinks(() => {});
    const count = 40_000; // 80k pairs: three runs of 32k sorted, then merged
    const paths = Array.from({ length: count }, (_, i) => `n/${(i * 7919) % count}.md`);
    for (const p of paths) l.addFile(p);
    for (let i = 0; i < count; i++) l.setMeta(paths[i], `[[Target ${i % 7}]] [[constructor]]`);
    l.relink(paths);
    l.opened();
    let steps = 0;
    while (!l.sortKeysSome(() => true)) {
      steps++;
      if (steps === 2) {
        // Between two steps: a note arrives (its pairs wait for the end of the build).
        l.addFile("late.md");
        l.setMeta("late.md", "[[Target 3]] [[toString]]");
        l.relink(["late.md"]);
      }
    }
    expect(steps).toBeGreaterThanOrEqual(4);
    expect([...l.affectedByFile("Target 3.md")].sort()).toEqual([...paths.filter((_, i) => i % 7 === 3), "late.md"].sort());
    expect([...l.affectedByFile("toString.md")]).toEqual(["late.md"]);
    expect(l.affectedByFile("constructor.md").size).toBe(count);
    expect(l.sortKeysSome(() => true)).toBe(true);
  });

  test("random changes keep the maps equal to maps computed from scratch", () => {
    let seed = 7;
    const rnd = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return Math.floor(seed / 65536) % n;
    };
    const names = ["a", "B", "c.md", "d", "a.md", "Img.png", "img", "e"];
    const folders = ["", "X/", "X/Y/", "Z/"];
    const pick = <T>(xs: readonly T[]): T => xs[rnd(xs.length)];
    const randomText = () => {
      const parts: string[] = [];
      for (let i = rnd(5); i > 0; i--) {
        const n = pick(names);
        parts.push(pick([`[[${n}]]`, `[[${pick(folders)}${n}]]`, `![[${n}]]`, `[[./${n}]]`, `[[../${n}]]`, `[[${n}#h]]`, `[[${n.toUpperCase()}]]`]));
      }
      return parts.join(" ");
    };
    const texts = new Map<string, string>();
    const attachments = new Set<string>();
    const l = new NoteLinks(() => {});
    l.resolveAll([]);
    const check = () => {
      const want = expected(Object.fromEntries(texts), [...texts.keys(), ...attachments]);
      expect(l.resolved).toEqual(want.resolved);
      expect(l.unresolved).toEqual(want.unresolved);
    };
    const done = [0, 0, 0, 0];
    for (let step = 0; step < 300; step++) {
      const path = pick(folders) + pick(names);
      const isNote = path.endsWith(".md") || !path.includes(".");
      const notePath = isNote && !path.endsWith(".md") ? `${path}.md` : path;
      const op = rnd(4);
      const known = texts.has(notePath) || attachments.has(notePath);
      if (op === 0 && !known) {
        l.addFile(notePath);
        if (notePath.endsWith(".md")) {
          const t = randomText();
          texts.set(notePath, t);
          l.setMeta(notePath, t);
        } else attachments.add(notePath);
        l.relink(l.affectedByFile(notePath, notePath.endsWith(".md") ? [notePath] : []));
        done[0]++;
      } else if (op === 1 && known) {
        texts.delete(notePath);
        attachments.delete(notePath);
        l.removeFile(notePath);
        done[1]++;
      } else if (op === 2 && texts.has(notePath)) {
        const t = randomText();
        texts.set(notePath, t);
        l.setMeta(notePath, t);
        l.relink([notePath]);
        done[2]++;
      } else if (op === 3 && texts.has(notePath)) {
        const to = pick(folders) + "moved" + step + ".md";
        const affected = new Set<string>();
        l.moveFile(notePath, to, affected);
        texts.set(to, texts.get(notePath)!);
        texts.delete(notePath);
        affected.delete(notePath);
        l.relink(affected);
        done[3]++;
      }
      check();
    }
    expect(done.every((n) => n >= 10)).toBe(true); // each kind of change happened
  });
});
