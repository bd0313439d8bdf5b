import { describe, expect, test } from "@jest/globals";
import { computeLinkMaps, LinkResolver } from "../../src/core/links/resolver";
import { parseNote } from "../../src/core/parser";

const vault = [
  "Home.md",
  "Note.md",
  "Projects/Note.md",
  "Projects/Plan.md",
  "Projects/Sub/Plan.md",
  "Archive/Plan.md",
  "Archive/Old/Deep.md",
  "Attachments/image.png",
  "Attachments/diagram.png",
  "Other/diagram.png",
  "v1.2 notes.md",
  "Dr. Who.md",
  "Folder/My Note.md",
];

describe("LinkResolver", () => {
  const r = new LinkResolver(vault);

  test("each file has a number of its own: kept while it stays, never given to another", () => {
    const r = new LinkResolver();
    const a = r.add("constructor.md");
    const b = r.add("toString.png");
    expect(r.add("constructor.md")).toBe(a);
    expect([r.idOf("constructor.md"), r.idOf("toString.png"), r.idOf("__proto__.md")]).toEqual([a, b, undefined]);
    expect(r.pathAt(b)).toBe("toString.png");
    r.remove("constructor.md");
    expect([r.idOf("constructor.md"), r.pathAt(a), r.resolve("constructor", "x.md")]).toEqual([undefined, undefined, null]);
    const again = r.add("constructor.md");
    expect(again).not.toBe(a);
    expect(again).not.toBe(b);
    expect([r.pathAt(again), r.resolve("constructor", "x.md"), [...r.paths()]]).toEqual(["constructor.md", "constructor.md", ["toString.png", "constructor.md"]]);
  });

  test("empty linkpath is the source itself", () => {
    expect(r.resolve("", "Projects/Plan.md")).toBe("Projects/Plan.md");
  });

  test("exact vault path, with or without .md", () => {
    expect(r.resolve("Projects/Plan", "Home.md")).toBe("Projects/Plan.md");
    expect(r.resolve("Projects/Plan.md", "Home.md")).toBe("Projects/Plan.md");
    expect(r.resolve("Attachments/image.png", "Home.md")).toBe("Attachments/image.png");
    expect(r.resolve("v1.2 notes", "Home.md")).toBe("v1.2 notes.md");
    expect(r.resolve("Dr. Who", "Home.md")).toBe("Dr. Who.md");
  });

  test("exact path beats a same-folder note", () => {
    expect(r.resolve("Note", "Projects/Plan.md")).toBe("Note.md");
  });

  test("relative ./ and ../ from the source folder", () => {
    expect(r.resolve("./Plan.md", "Projects/Note.md")).toBe("Projects/Plan.md");
    expect(r.resolve("../Archive/Plan", "Projects/Note.md")).toBe("Archive/Plan.md");
    expect(r.resolve("../Plan.md", "Projects/Sub/Plan.md")).toBe("Projects/Plan.md");
    expect(r.resolve("../../x", "Projects/Note.md")).toBeNull();
  });

  test("by name, case-insensitive, ties: same folder, then shortest, then alphabetical", () => {
    expect(r.resolve("plan", "Projects/Sub/Plan.md")).toBe("Projects/Sub/Plan.md");
    expect(r.resolve("Plan", "Archive/Old/Deep.md")).toBe("Archive/Plan.md"); // same length as Projects/Plan.md: alphabetical
    expect(r.resolve("Plan", "Home.md")).toBe("Archive/Plan.md");
    expect(r.resolve("PLAN", "Projects/Note.md")).toBe("Projects/Plan.md");
    expect(r.resolve("deep", "Home.md")).toBe("Archive/Old/Deep.md");
    expect(r.resolve("diagram.png", "Home.md")).toBe("Other/diagram.png"); // shorter path
    expect(r.resolve("diagram.png", "Attachments/x.md")).toBe("Attachments/diagram.png");
  });

  test("partial trailing paths", () => {
    expect(r.resolve("Sub/Plan", "Home.md")).toBe("Projects/Sub/Plan.md");
    expect(r.resolve("Old/Deep", "Home.md")).toBe("Archive/Old/Deep.md");
    expect(r.resolve("ub/Plan", "Home.md")).toBeNull();
    expect(r.resolve("Nope/Plan", "Home.md")).toBeNull();
  });

  test("attachments need their extension", () => {
    expect(r.resolve("image", "Home.md")).toBeNull();
    expect(r.resolve("image.png", "Home.md")).toBe("Attachments/image.png");
    expect(r.resolve("IMAGE.PNG", "Home.md")).toBe("Attachments/image.png");
  });

  test("decomposed (NFD) link text finds the NFC path", () => {
    const x = new LinkResolver(["People/Tomás Rivera.md"]);
    expect(x.resolve("Tomás Rivera".normalize("NFD"), "Home.md")).toBe("People/Tomás Rivera.md");
  });

  test("names with .md", () => {
    expect(r.resolve("My Note.md", "Home.md")).toBe("Folder/My Note.md");
    expect(r.resolve("my note", "Home.md")).toBe("Folder/My Note.md");
  });

  test("add / remove / has keep the index in step", () => {
    const x = new LinkResolver(["A/Topic.md"]);
    expect(x.resolve("Topic", "B/n.md")).toBe("A/Topic.md");
    x.add("B/Topic.md");
    expect(x.resolve("Topic", "B/n.md")).toBe("B/Topic.md");
    expect(x.filesNamed("topic")).toEqual(["A/Topic.md", "B/Topic.md"]);
    x.remove("B/Topic.md");
    x.remove("A/Topic.md");
    expect(x.has("A/Topic.md")).toBe(false);
    expect(x.resolve("Topic", "B/n.md")).toBeNull();
    expect(x.filesNamed("topic")).toEqual([]);
  });

  test("many links resolve through the name index", () => {
    const paths: string[] = [];
    for (let i = 0; i < 10000; i++) paths.push(`F${i % 50}/Note ${i}.md`);
    const big = new LinkResolver(paths);
    let hits = 0;
    for (let i = 0; i < 100000; i++) if (big.resolve(`note ${i % 12000}`, "F1/Note 1.md")) hits++;
    expect(hits).toBe(Math.floor(100000 / 12000) * 10000 + Math.min(100000 % 12000, 10000));
  });
});

describe("computeLinkMaps", () => {
  test("counts links, embeds and frontmatter links; unresolved keyed without fragment", () => {
    const r = new LinkResolver(["A.md", "B.md", "img.png"]);
    const notes: [string, ReturnType<typeof parseNote>][] = [
      ["A.md", parseNote('---\nup: "[[B]]"\n---\n[[B]] [[B#H]] ![[img.png]] [[Missing#x]] [[Missing]] [[#Self]] [t](B.md)')],
      ["B.md", parseNote("nothing")],
    ];
    const maps = computeLinkMaps(notes, r);
    expect(maps.resolved).toEqual({ "A.md": { "B.md": 4, "img.png": 1, "A.md": 1 }, "B.md": {} });
    expect(maps.unresolved).toEqual({ "A.md": { Missing: 2 }, "B.md": {} });
  });
});

describe("LinkResolver's name index", () => {
  test("names that share a bucket keep apart: a.md beside a.md.md, a note beside an attachment of its basename", () => {
    const r = new LinkResolver(["x/a.md", "y/a.md.md", "z/a", "w/A.png", "v/a.png.md"]);
    expect(r.filesNamed("a")).toEqual(["x/a.md", "z/a"]);
    expect(r.filesNamed("a.md")).toEqual(["x/a.md", "y/a.md.md"]);
    expect(r.filesNamed("a.md.md")).toEqual(["y/a.md.md"]);
    expect(r.filesNamed("A.PNG")).toEqual(["w/A.png", "v/a.png.md"]);
    expect(r.resolve("a.md", "q.md")).toBe("x/a.md");
    expect(r.resolve("y/a.md", "q.md")).toBe("y/a.md.md");
    expect(r.resolve("a.png.md", "q.md")).toBe("v/a.png.md");
    r.remove("x/a.md");
    expect(r.filesNamed("a")).toEqual(["z/a"]);
    expect(r.resolve("a.md", "q.md")).toBe("y/a.md.md");
    r.remove("z/a");
    expect(r.filesNamed("a")).toEqual([]);
    expect(r.resolve("a", "q.md")).toBeNull();
  });
});

describe("LinkResolver's name matching", () => {
  test("case-insensitive names, ASCII and not, and the exact path at the root first", () => {
    const r = new LinkResolver(["Sub/İstanbul.md", "Sub/ÉTÉ.MD", "NOTE.md", "Sub/note.md", "Sub/Mixed.Md", "Root", "Root.md"]);
    expect(r.resolve("i̇stanbul", "x.md")).toBe("Sub/İstanbul.md");
    expect(r.resolve("été", "x.md")).toBe("Sub/ÉTÉ.MD");
    expect(r.resolve("note", "Sub/x.md")).toBe("NOTE.md"); // the exact path ignoring case before the same folder
    expect(r.resolve("Sub/NOTE", "x.md")).toBe("Sub/note.md");
    expect(r.resolve("NOTE", "Sub/x.md")).toBe("NOTE.md");
    expect(r.resolve("mixed", "x.md")).toBe("Sub/Mixed.Md");
    expect(r.resolve("Root", "Sub/x.md")).toBe("Root");
    expect(r.resolve("root", "Sub/x.md")).toBe("Root");
    expect(r.resolve("Root.md", "x.md")).toBe("Root.md");
  });
});
