/**
 * What of a snippet is text to show: Obsidian renders neither `%% comments %%` nor HTML comments, and
 * a line of only images or badges (`![alt](url)`, `![[embed]]`, `[![badge](img)](link)`) is no prose.
 * A comment the snippet's window cut in two loses its cut-off side too: `inside` says whether the
 * window began inside one (see `commentsOpenAt`). When nothing is left, the snippet is shown as it was.
 */
export function showable(snippet: string, inside: OpenComments = NONE): string {
  let s = snippet;
  if (s.includes("%%")) s = dropComments(s, "%%", "%%", inside.percent);
  if (s.includes("<!--") || s.includes("-->")) s = dropComments(s, "<!--", "-->", inside.html);
  if (s.includes("![")) s = s.split("\n").filter((l) => !IMAGES_ONLY.test(l)).join("\n");
  s = s.replace(/\n[ \t]*\n(?:[ \t]*\n)+/g, "\n\n").trim();
  // Only the window's "…" marks left: nothing to show.
  return s.replace(/\u2026/g, "").trim() ? s : snippet;
}

export interface OpenComments {
  percent: boolean;
  html: boolean;
}

const NONE: OpenComments = { percent: false, html: false };

/** Whether offset `at` of `text` is inside a `%%` comment or an HTML comment. */
export function commentsOpenAt(text: string, at: number): OpenComments {
  if (at <= 0) return NONE;
  let markers = 0;
  for (let i = text.indexOf("%%"); i >= 0 && i + 2 <= at; i = text.indexOf("%%", i + 2)) markers++;
  const open = at >= 4 ? text.lastIndexOf("<!--", at - 4) : -1;
  return { percent: markers % 2 === 1, html: open >= 0 && text.lastIndexOf("-->", at - 3) < open };
}

/** A line of images, embeds and linked images only (badges), with spaces between. */
const IMAGES_ONLY = /^\s*(?:(?:\[!\[[^\]\n]*\]\([^)\n]*\)\]\([^)\n]*\)|!\[[^\]\n]*\]\([^)\n]*\)|!\[\[[^\]\n]*\]\])\s*)+$/;

function dropComments(s: string, open: string, close: string, startsInside: boolean): string {
  if (open === close) {
    // Text and comments alternate between the markers, from a comment when the window began in one.
    const parts = s.split(open);
    if (startsInside) parts.unshift("");
    return parts.filter((_, k) => k % 2 === 0).join("");
  }
  let out = "";
  let i = 0;
  if (startsInside) {
    const c = s.indexOf(close);
    if (c < 0) return "";
    i = c + close.length;
  }
  for (;;) {
    const a = s.indexOf(open, i);
    if (a < 0) return out + s.slice(i);
    out += s.slice(i, a);
    const b = s.indexOf(close, a + open.length);
    if (b < 0) return out; // the window's end cut it
    i = b + close.length;
  }
}
