import TurndownService from "turndown";

/**
 * HTML as Markdown, by Turndown (the most used HTML→Markdown converter on npm, kept up since 2017,
 * no network, no script execution: it parses the page into an inert DOM). Scripts, styles, forms and
 * frames are dropped; the note records where it came from. Our rules on top of Turndown's:
 * - links and images are made absolute against the page's address (its `<base href>` when it has
 *   one, else the URL finally answered): a relative `/other.html` in a note is read by Obsidian as a
 *   vault path; links and images that are not http(s) (`javascript:`, `data:`, `mailto:`…) keep
 *   only their text;
 * - tables become GFM tables (Turndown alone flattens them to one cell per line): the first row is
 *   the header, rows are padded to the widest, a cell's lines are joined and its pipes escaped.
 */

type DomNode = TurndownService.Node;

/** An http(s) address for `ref` read against `base`, or null. */
function absolute(ref: string | null, base: URL): string | null {
  if (ref === null) return null;
  // eslint-disable-next-line no-control-regex -- control characters are what this removes
  const raw = ref.replace(/[\u0000-\u001f]+/g, "").trim();
  if (!raw) return null;
  let u: URL;
  try {
    u = new URL(raw, base);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  return u.href;
}

/** A URL inside Markdown's ( ): parentheses and blanks escaped. */
const mdUrl = (href: string) => href.replace(/[()]/g, (c) => (c === "(" ? "%28" : "%29")).replace(/\s/g, "%20");
const mdTitle = (t: string | null) => (t && t.trim() ? ` "${t.trim().replace(/\s+/g, " ").replace(/"/g, '\\"')}"` : "");

function tableOf(node: DomNode): DomNode | null {
  let p = node.parentNode as DomNode | null;
  while (p && p.nodeName !== "TABLE") p = p.parentNode as DomNode | null;
  return p;
}
function rowsOf(table: DomNode): DomNode[] {
  const rows: DomNode[] = [];
  const walk = (n: DomNode) => {
    for (const c of Array.from(n.childNodes) as DomNode[]) {
      if (c.nodeName === "TR") rows.push(c);
      else if (c.nodeName === "THEAD" || c.nodeName === "TBODY" || c.nodeName === "TFOOT") walk(c);
    }
  };
  walk(table);
  return rows;
}
function cellsOf(tr: DomNode): DomNode[] {
  return (Array.from(tr.childNodes) as DomNode[]).filter((c) => c.nodeName === "TD" || c.nodeName === "TH");
}
const spanOf = (cell: DomNode) => Math.min(Math.max(parseInt((cell as HTMLElement).getAttribute("colspan") ?? "1", 10) || 1, 1), 50);
const widthOf = (tr: DomNode) => cellsOf(tr).reduce((w, c) => w + spanOf(c), 0);

function cell(content: string, node: DomNode): string {
  // A cell is one line: its lines joined (split, not a regex: a long blank run stays linear).
  const text = content
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l)
    .join(" ")
    .replace(/\|/g, "\\|");
  return ` ${text} |${"  |".repeat(spanOf(node) - 1)}`;
}
function row(content: string, node: DomNode): string {
  const table = tableOf(node);
  const rows = table ? rowsOf(table) : [node];
  const width = Math.max(1, ...rows.map(widthOf));
  const line = `|${content}${"  |".repeat(Math.max(0, width - widthOf(node)))}`;
  return rows[0] === node ? `\n${line}\n|${" --- |".repeat(width)}` : `\n${line}`;
}

export function htmlToMarkdown(html: string, sourceUrl: string): string {
  let base = new URL(sourceUrl);
  // In the head: the first 64 KB (a page of "<base " without ">" would make the search quadratic).
  const baseHref = /<base\s[^>]*?href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/i.exec(html.slice(0, 65536));
  const declared = baseHref ? absolute(baseHref[1] ?? baseHref[2] ?? baseHref[3], base) : null;
  if (declared) base = new URL(declared);

  const td = new TurndownService({
    headingStyle: "atx",
    codeBlockStyle: "fenced",
    bulletListMarker: "-",
    emDelimiter: "*",
    // An empty cell or row is "blank" to Turndown, which would drop it and shift the columns.
    blankReplacement: (content, node) => {
      const n = node as DomNode;
      if (n.nodeName === "TD" || n.nodeName === "TH") return tableOf(n) ? cell("", n) : "";
      if (n.nodeName === "TR") return tableOf(n) ? row(cellsOf(n).map((c) => cell("", c)).join(""), n) : "";
      return (node as { isBlock?: boolean }).isBlock ? "\n\n" : "";
    },
  });
  td.remove(["head", "title", "script", "style", "noscript", "iframe", "form", "template", "object", "embed"] as unknown as TurndownService.Filter);
  td.addRule("absoluteLink", {
    filter: (node) => node.nodeName === "A" && node.getAttribute("href") !== null,
    replacement: (content, node) => {
      const href = absolute((node).getAttribute("href"), base);
      if (!href || !content.trim()) return content;
      return `[${content}](${mdUrl(href)}${mdTitle((node).getAttribute("title"))})`;
    },
  });
  td.addRule("absoluteImage", {
    filter: "img",
    replacement: (_content, node) => {
      const src = absolute((node).getAttribute("src"), base);
      if (!src) return "";
      const alt = ((node).getAttribute("alt") ?? "").replace(/\s+/g, " ").replace(/([[\]\\])/g, "\\$1");
      return `![${alt}](${mdUrl(src)}${mdTitle((node).getAttribute("title"))})`;
    },
  });
  td.addRule("tableCell", { filter: (node) => (node.nodeName === "TD" || node.nodeName === "TH") && tableOf(node) !== null, replacement: (content, node) => cell(content, node) });
  td.addRule("tableRow", { filter: (node) => node.nodeName === "TR" && tableOf(node) !== null, replacement: (content, node) => row(content, node) });
  td.addRule("tableSection", { filter: ["thead", "tbody", "tfoot"], replacement: (content) => content });
  td.addRule("tableCaption", { filter: "caption", replacement: (content) => `${content.trim()}\n\n` });
  td.addRule("table", { filter: "table", replacement: (content) => `\n\n${content.replace(/^\n+/, "").replace(/\n+$/, "")}\n\n` });

  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1]?.trim();
  const body = td.turndown(html).trim();
  const heading = title && !body.startsWith("# ") ? `# ${title.replace(/\s+/g, " ")}\n\n` : "";
  return `---\nsource: ${JSON.stringify(sourceUrl)}\n---\n\n${heading}${body}\n`;
}
