import TurndownService from "turndown";

/**
 * HTML as Markdown, by Turndown (the most used HTML→Markdown converter on npm, kept up since 2017,
 * no network, no script execution: it parses the page into an inert DOM). Scripts, styles, forms and
 * frames are dropped; the note records where it came from.
 */
export function htmlToMarkdown(html: string, sourceUrl: string): string {
  const td = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-", emDelimiter: "*" });
  td.remove(["head", "title", "script", "style", "noscript", "iframe", "form", "template", "object", "embed"] as unknown as TurndownService.Filter);
  const title = /<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1]?.trim();
  const body = td.turndown(html).trim();
  const heading = title && !body.startsWith("# ") ? `# ${title.replace(/\s+/g, " ")}\n\n` : "";
  return `---\nsource: ${JSON.stringify(sourceUrl)}\n---\n\n${heading}${body}\n`;
}
