import { describe, expect, test } from "@jest/globals";
import { sanitizeMarkup } from "../../src/core/fetch/sanitize";

describe("sanitizeMarkup (fetch's saved HTML and SVG)", () => {
  test("keeps ordinary markup; drops scripts, handlers, frames and script addresses however they are written", () => {
    expect(sanitizeMarkup('<p class="a">x <b>y</b><br/></p>')).toBe('<p class="a">x <b>y</b><br/></p>');
    expect(sanitizeMarkup("<svg><rect width=1 /></svg>")).toBe('<svg><rect width="1"/></svg>');
    const cases = [
      "<script>alert(1)</script>",
      "<SCRIPT SRC=//x/y.js></SCRIPT>",
      "<img src=x onerror=alert(1)>",
      "<img\tonerror='alert(1)' src=x>",
      '<a href="&#106;avascript:alert(1)">a</a>',
      '<a href="jav&#x09;ascript:alert(1)">a</a>',
      '<a href=" javascript:alert(1)">a</a>',
      '<iframe srcdoc="<script>alert(1)</script>"></iframe>',
      "<scr<script>x</script>ipt>alert(1)</script>",
      '<meta http-equiv="refresh" content="0;url=javascript:alert(1)">',
      '<svg><animate attributeName="href" values="javascript:alert(1)"/></svg>',
      '<object data="data:text/html,<script>alert(1)</script>"></object>',
      "<!DOCTYPE svg [<!ENTITY e '<script>alert(1)</script>'>]><svg>&e;</svg>",
      "<script>never closed alert(1)",
    ];
    for (const c of cases) expect([c, sanitizeMarkup(c)]).toEqual([c, expect.not.stringMatching(/<script|\son[a-z]+\s*=|javascript|<iframe|<object|http-equiv|<!ENTITY/i)]);
  });

  test("a tag it cannot read is text; markup built to backtrack is read in one pass", () => {
    expect(sanitizeMarkup("a < b and <3")).toBe("a &lt; b and &lt;3");
    // Without ">", each "/" could end a value or start an attribute: 2^n ways to fail (26 took 2 s).
    for (const hostile of [`<a x=${"a/".repeat(20000)}`, `<a ${"x=a/".repeat(5000)}`]) {
      const out = sanitizeMarkup(hostile);
      expect(out.startsWith("&lt;a ")).toBe(true);
      expect(out).toHaveLength(hostile.length + 3);
    }
  });
});
