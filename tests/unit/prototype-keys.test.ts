/**
 * Lookups keyed by text from a vault or a client must not see `Object.prototype`: `o["constructor"]`
 * on a plain `{}` is `Object`, `o["toString"]` a function, and `o["__proto__"] = v` replaces the
 * prototype instead of adding a key. Each lookup that had this flaw, with the words that broke it.
 */
import { describe, expect, test } from "@jest/globals";
import { dict, own, setOwn } from "../../src/core/dict";
import { computeLinkMaps, LinkResolver } from "../../src/core/links/resolver";
import { parseFrontmatterSlow, parseFrontmatterText, parseNote } from "../../src/core/parser";
import { mimeTypeOf } from "../../src/core/read/attachment";
import { matchesFilters } from "../../src/core/search/keyword/score";
import { stemEnglish } from "../../src/core/search/stemmer";
import { tokenize } from "../../src/core/search/tokenize";
import { contentTypeOf } from "../../src/core/transfer/links";
import { applyFrontmatterEdit } from "../../src/hosts/node/frontmatter-edit";
import { pack, unpack } from "../../src/hosts/node/packed-metadata";

/** Every property name of Object.prototype, and lower-cased (the tokenizer folds case). */
const PROTO_KEYS = Object.getOwnPropertyNames(Object.prototype);
const WORDS = [...new Set([...PROTO_KEYS, ...PROTO_KEYS.map((k) => k.toLowerCase()), "prototype"])];

describe("the stemmer and the tokenizer", () => {
  test("every word stems to a string (\"constructor\" stemmed to the function Object)", () => {
    for (const w of WORDS) expect([w, typeof stemEnglish(w)]).toEqual([w, "string"]);
    expect(stemEnglish("constructor")).toBe("constructor");
    expect(stemEnglish("constructors")).toBe("constructor");
    // The exceptions still apply.
    expect(stemEnglish("skies")).toBe("sky");
    expect(stemEnglish("news")).toBe("news");
  });

  test("every token of a text made of such words is a string", () => {
    const tokens = tokenize(`The constructor of the class. ${WORDS.join(" ")}`);
    expect(tokens.filter((t) => typeof t !== "string")).toEqual([]);
    expect(tokens.slice(0, 6)).toEqual(["the", "constructor", "of", "the", "class", "constructor"]);
  });
});

describe("link maps", () => {
  test("targets and unresolved link texts named like Object.prototype's properties are counted", () => {
    const files = ["constructor.md", "__proto__.md", "toString.md", "Hub.md", "file.valueOf"];
    const hub = parseNote("[[constructor]] [[constructor]] [[__proto__]] [[toString]] ![[file.valueOf]] [[hasOwnProperty]] [[__proto__x]] [[isPrototypeOf]] [[isPrototypeOf]]\n");
    const { resolved, unresolved } = computeLinkMaps([["Hub.md", hub]], new LinkResolver(files));
    expect(Object.entries(resolved["Hub.md"]).sort()).toEqual([
      ["__proto__.md", 1],
      ["constructor.md", 2],
      ["file.valueOf", 1],
      ["toString.md", 1],
    ]);
    expect(Object.entries(unresolved["Hub.md"]).sort()).toEqual([
      ["__proto__x", 1],
      ["hasOwnProperty", 1],
      ["isPrototypeOf", 2],
    ]);
    // A source that is not a note, or a target never linked, is absent (not a function).
    expect(own(resolved, "constructor")).toBeUndefined();
    expect(own(resolved["Hub.md"], "valueOf")).toBeUndefined();
  });

  test("an unresolved link to __proto__ is a key, not the map's prototype", () => {
    const note = parseNote("[[__proto__]] and [[constructor]]\n");
    const { unresolved } = computeLinkMaps([["A.md", note]], new LinkResolver(["A.md"]));
    expect(Object.entries(unresolved["A.md"])).toEqual([
      ["__proto__", 1],
      ["constructor", 1],
    ]);
  });
});

describe("the parser", () => {
  test("block ids named like Object.prototype's properties are found", () => {
    const m = parseNote("One. ^constructor\n\nTwo. ^toString\n\nThree. ^valueOf\n\nFour. ^hasOwnProperty\n");
    expect(Object.keys(m.blocks).sort()).toEqual(["constructor", "hasownproperty", "tostring", "valueof"]);
    expect(m.blocks["constructor"].id).toBe("constructor");
    // And the packed copy the headless host keeps is the same (not toStrictEqual: Jest compares two
    // objects' `constructor` properties to tell their types, and here that is a block).
    const back = unpack(pack(m));
    expect(back).toEqual(m);
    expect(JSON.stringify(back)).toBe(JSON.stringify(m));
    expect(Object.getPrototypeOf(back.blocks)).toBe(null);
  });

  test("a frontmatter key __proto__ is an own key, on the fast path and the full parser alike", () => {
    const yaml = "__proto__: polluted\nconstructor: c\ntoString: [a, b]\nnested:\n  __proto__: deep\n";
    for (const parse of [parseFrontmatterText, parseFrontmatterSlow]) {
      const fm = parse(yaml).frontmatter!;
      expect(Object.getPrototypeOf(fm)).toBe(Object.prototype);
      expect(Object.entries(fm)).toEqual([
        ["__proto__", "polluted"],
        ["constructor", "c"],
        ["toString", ["a", "b"]],
        ["nested", JSON.parse('{"__proto__": "deep"}')],
      ]);
      expect(Object.getPrototypeOf(fm.nested)).toBe(Object.prototype);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const note = parseNote("---\n__proto__: x\nvalueOf: 1\n---\nBody\n");
    expect(Object.keys(note.frontmatter!)).toEqual(["__proto__", "valueOf"]);
    expect(JSON.stringify(unpack(pack(note)).frontmatter)).toBe('{"__proto__":"x","valueOf":1}');
  });
});

describe("the headless frontmatter edit (processFrontMatter)", () => {
  test("keeps a __proto__ key when another changes, sets and removes keys of such names", () => {
    const text = "---\n__proto__: keep\nstatus: draft\n---\nBody\n";
    const out = applyFrontmatterEdit(text, (fm) => (fm.status = "done"), "A.md");
    expect(out).toBe("---\n__proto__: keep\nstatus: done\n---\nBody\n");
    const set = applyFrontmatterEdit(text, (fm) => {
      setOwn(fm, "constructor", "c");
      fm.toString = "t" as unknown as () => string;
    }, "A.md");
    expect(set).toBe("---\n__proto__: keep\nstatus: draft\nconstructor: c\ntoString: t\n---\nBody\n");
    const removed = applyFrontmatterEdit(text, (fm) => delete fm["__proto__"], "A.md");
    expect(removed).toBe("---\nstatus: draft\n---\nBody\n");
  });

  test("a change from {other: {}} to {__proto__: {}} is a change", () => {
    const text = "---\nother: {}\n---\nBody\n";
    const out = applyFrontmatterEdit(
      text,
      (fm) => {
        delete fm.other;
        setOwn(fm, "__proto__", {});
      },
      "A.md",
    );
    expect(out).toBe("---\n__proto__: {}\n---\nBody\n");
  });
});

describe("lookups by extension, content type and frontmatter key", () => {
  test("an extension named like a property of Object.prototype is an unknown type", () => {
    for (const w of WORDS) {
      expect([w, mimeTypeOf(`a/file.${w}`)]).toEqual([w, "application/octet-stream"]);
      expect([w, contentTypeOf(`a/file.${w}`)]).toEqual([w, "application/octet-stream"]);
    }
    expect(mimeTypeOf("x.png")).toBe("image/png");
    expect(contentTypeOf("x.md")).toBe("text/markdown; charset=utf-8");
  });

  test("a search filter on a key the note does not have matches nothing", () => {
    const doc = { tags: [], frontmatter: JSON.parse('{"__proto__": "p", "status": "done"}') as Record<string, unknown> };
    for (const key of ["constructor", "toString", "valueOf", "hasOwnProperty"]) {
      expect([key, matchesFilters(doc, { [key]: "function Object() { [native code] }" })]).toEqual([key, false]);
    }
    expect(matchesFilters(doc, JSON.parse('{"__proto__": "p"}'))).toBe(true);
    expect(matchesFilters(doc, { status: "done" })).toBe(true);
  });

  test("dict, own and setOwn", () => {
    const d = dict<number>();
    expect(d["constructor"]).toBeUndefined();
    setOwn(d, "__proto__", 1);
    expect(Object.entries(d)).toEqual([["__proto__", 1]]);
    const plain: Record<string, number> = {};
    setOwn(plain, "__proto__", 2);
    expect(Object.getPrototypeOf(plain)).toBe(Object.prototype);
    expect(own(plain, "__proto__")).toBe(2);
    expect(own(plain, "constructor")).toBeUndefined();
    expect(own(undefined, "x")).toBeUndefined();
  });
});
