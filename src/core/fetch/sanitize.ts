/**
 * Active content out of HTML and SVG that fetch saves as they are (`format: "html"`, `image/svg+xml`):
 * a browser opening the file must run nothing of the page. A scanner over the text, tag by tag, that
 * keeps only what it recognises: `script` elements (with their content), frames, objects, embeds and
 * `base` are dropped; event handler attributes (`on…`), `srcdoc`, and any attribute whose value, its
 * character references decoded and blanks removed, holds a `javascript:`, `vbscript:` or
 * `data:text/html` address are dropped; a `<` that does not open a tag this scanner can read is
 * written as `&lt;` (a browser cannot make a tag of it). The result is re-scanned until it no longer
 * changes, so removing one thing cannot assemble another.
 */

/** Elements dropped with everything inside them. */
const DROP_WITH_CONTENT = new Set(["script", "iframe", "frame", "frameset", "object", "applet", "noembed", "noframes"]);
/** Elements whose tags are dropped (their content, if any, kept as it is). */
const DROP_TAG = new Set(["embed", "base", "portal", "plaintext", "xmp"]);

// An unquoted value runs to a blank or ">", as a browser reads it ("x/onerror=y" is one value). It
// is taken whole (a lookahead and its backreference: an atomic group), or "a=b/c/d/…" without a ">"
// could be split at every "/" in turn: exponential backtracking on a page built for it.
const TAG = /<(\/?)([A-Za-z][A-Za-z0-9:_.-]*)((?:[\s/]+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|(?=([^\s"'>][^\s>]*))\4))?)*)[\s/]*>/y;
const ATTR = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>][^\s>]*)))?/g;

const NAMED = new Map<string, string>([
  ["colon", ":"],
  ["tab", "\t"],
  ["newline", "\n"],
  ["lpar", "("],
  ["rpar", ")"],
  ["sol", "/"],
  ["amp", "&"],
  ["quot", '"'],
  ["apos", "'"],
  ["lt", "<"],
  ["gt", ">"],
]);

/** An attribute value as a browser reads it: character references decoded. */
function decodeRefs(v: string): string {
  return v.replace(/&(?:#[xX]([0-9a-fA-F]+)|#(\d+)|([A-Za-z]+));?/g, (m, hex: string | undefined, dec: string | undefined, name: string | undefined) => {
    if (hex !== undefined || dec !== undefined) {
      const n = hex !== undefined ? parseInt(hex, 16) : parseInt(dec!, 10);
      return n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : "";
    }
    return NAMED.get(name!.toLowerCase()) ?? m;
  });
}

function dangerousValue(value: string): boolean {
  // Browsers ignore blanks and control characters inside a URL's scheme.
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  const v = decodeRefs(value).replace(/[\u0000-\u0020\u007f-\u00a0]+/g, "").toLowerCase();
  return v.includes("javascript:") || v.includes("vbscript:") || v.includes("data:text/html") || v.includes("data:image/svg");
}

function cleanTag(closing: string, name: string, attrs: string): string {
  if (closing) return `</${name}>`;
  const kept: string[] = [];
  for (const m of attrs.matchAll(ATTR)) {
    const attr = m[1];
    const lower = attr.toLowerCase();
    const value = m[2] ?? m[3] ?? m[4];
    if (lower.startsWith("on") || lower === "srcdoc" || lower === "formaction" || lower.includes("<")) continue;
    if (value === undefined) {
      kept.push(attr);
      continue;
    }
    if (dangerousValue(value)) continue;
    kept.push(`${attr}="${value.replace(/"/g, "&quot;")}"`);
  }
  return `<${name}${kept.length ? ` ${kept.join(" ")}` : ""}>`;
}

function scanOnce(text: string): string {
  const lower = text.toLowerCase();
  let out = "";
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    if (lt < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, lt);
    i = lt;
    if (text.startsWith("<!--", i)) {
      const end = text.indexOf("-->", i + 4);
      if (end < 0) {
        i = text.length; // an unclosed comment: the rest is comment to a browser too
        continue;
      }
      out += text.slice(i, end + 3);
      i = end + 3;
      continue;
    }
    if (/^<!\[CDATA\[/.test(text.slice(i, i + 9))) {
      const end = text.indexOf("]]>", i);
      const body = end < 0 ? text.slice(i + 9) : text.slice(i + 9, end);
      out += `<![CDATA[${body.replace(/\]\]>/g, "")}]]>`;
      i = end < 0 ? text.length : end + 3;
      continue;
    }
    if (/^<!doctype[\s>]/i.test(text.slice(i, i + 10)) || /^<\?xml[\s?]/i.test(text.slice(i, i + 6))) {
      const end = text.indexOf(">", i);
      const decl = end < 0 ? text.slice(i) : text.slice(i, end + 1);
      // A document type with an internal subset can declare entities (text a parser pastes in).
      if (!decl.includes("[") && end >= 0) out += decl;
      i = end < 0 ? text.length : end + 1;
      continue;
    }
    TAG.lastIndex = i;
    const m = TAG.exec(text);
    if (!m) {
      out += "&lt;";
      i += 1;
      continue;
    }
    const [whole, closing, rawName, attrs] = m;
    const name = rawName.toLowerCase();
    i += whole.length;
    if (DROP_WITH_CONTENT.has(name)) {
      if (closing) continue;
      if (whole.endsWith("/>") && name !== "script") continue;
      const close = lower.indexOf(`</${name}`, i);
      if (close < 0) {
        i = text.length;
        continue;
      }
      const end = text.indexOf(">", close);
      i = end < 0 ? text.length : end + 1;
      continue;
    }
    if (DROP_TAG.has(name)) continue;
    if (name === "meta" && /http-equiv/i.test(attrs)) continue;
    out += cleanTag(closing, rawName, attrs);
    if (whole.endsWith("/>") && !closing) out = `${out.slice(0, -1)}/>`;
  }
  return out;
}

/** HTML or SVG text without active content (see above). */
export function sanitizeMarkup(text: string): string {
  let cur = text;
  for (let n = 0; n < 8; n++) {
    const next = scanOnce(cur);
    if (next === cur) return next;
    cur = next;
  }
  // Still changing after 8 passes: a document built to defeat the scanner; keep none of its markup.
  return cur.replace(/</g, "&lt;");
}
