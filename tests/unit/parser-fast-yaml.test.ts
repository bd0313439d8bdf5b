import { describe, expect, test } from "@jest/globals";
import { fastYaml } from "../../src/core/parser/fast-yaml";
import { parseFrontmatterSlow } from "../../src/core/parser";

/** The fast path must either decline (undefined) or agree exactly with the full YAML parser. */
function agrees(src: string): "fast" | "slow" {
  const fast = fastYaml(src);
  if (fast === undefined) return "slow";
  expect([src, fast]).toEqual([src, parseFrontmatterSlow(src).frontmatter]);
  return "fast";
}

const cases = [
  "title: Hello\n",
  "title: Hello world  \ncount: 12\nneg: -3\nplus: +7\nzero: 007\n",
  "date: 2024-01-05\ntime: 2024-01-05T10:00:00\n",
  "a: true\nb: False\nc: NULL\nd: ~\ne:\nf: yes\ng: no\nh: on\n",
  'q: "double [[Link]]"\nr: \'single it\'\'s\'\n',
  "tags: [a, b, c]\nempty: []\n",
  "tags:\n  - one\n  - two\n\n  - three\nnext: x\n",
  "tags:\n- one\n- \"[[Two]]\"\n-\n",
  "aliases:\n  - Ada\n  - \"Ada O.\"\nrole: Head of Insights\n",
  "url: https://example.com/a#b\n",
  "weird: a#b\nhash: '#tag'\n",
  "ver: 1.2\n",
  "x: 1e3\ny: .5\nz: 0x1F\nw: 0o17\nv: .inf\nu: 1_000\n",
  "big: 123456789012345678901234567890\n",
  "comment: value # trailing\n",
  "# a comment line\nkey: v\n",
  "nested:\n  a: 1\n",
  "multi: first\n  second line\n",
  "block: |\n  text\n",
  "dup: 1\ndup: 2\n",
  "list: [a, [b]]\n",
  "k: [a, b,]\n",
  "\"quoted key\": v\n",
  "日本語: 値\nタグ:\n  - 一\n",
  "crlf: yes\r\nlist:\r\n  - a\r\n",
  "escaped: \"a\\tb\"\n",
  "colon: a: b\n",
  "key:value\n",
  "__proto__: x\n",
  "anchor: &a x\nref: *a\n",
  "spaces in key: v\n",
  "- top level list\n",
  "",
  "\n\n",
];

describe("fastYaml", () => {
  test.each(cases.map((c) => [JSON.stringify(c), c]))("%s agrees with the full parser", (_name, src) => {
    agrees(src);
  });

  test("handles the common shapes itself", () => {
    expect(agrees("title: Hello\ndate: 2024-01-05\ntags:\n  - a\n  - b\nrelated: \"[[X]]\"\n")).toBe("fast");
    expect(agrees("tags: [a, b]\npublish: true\n")).toBe("fast");
    expect(agrees("nested:\n  a: 1\n")).toBe("slow");
    expect(agrees("dup: 1\ndup: 2\n")).toBe("slow");
  });
});
