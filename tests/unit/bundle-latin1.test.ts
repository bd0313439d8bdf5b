/**
 * The built bundles hold no character above U+00FF. V8 keeps a script's source for its lazily
 * compiled functions, one byte a character when every character fits in Latin-1 and two bytes a
 * character otherwise: 14 literal characters (`’`, `…`, `。` and a few more in regular expressions,
 * which esbuild prints as written) made `dist/cli.js`'s 3.7 MB source a 7.2 MB string in a heap
 * snapshot. Write such characters as `\u` escapes.
 */
import fs from "node:fs";
import path from "node:path";

const ROOT = path.resolve(__dirname, "../..");

describe.each(["main.js", "dist/cli.js"])("%s", (file) => {
  test("has no character above U+00FF", () => {
    const text = fs.readFileSync(path.join(ROOT, file), "utf8");
    const wide: string[] = [];
    for (let i = 0; i < text.length && wide.length < 5; i++) {
      if (text.charCodeAt(i) > 0xff) wide.push(JSON.stringify(text.slice(Math.max(0, i - 40), i + 10)));
    }
    expect(wide).toEqual([]);
  });
});
