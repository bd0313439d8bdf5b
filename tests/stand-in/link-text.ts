/**
 * The stand-in's link rewriting after a rename: rebuilds a link's source text so it points to the
 * file's new place, keeping the `#fragment`, the `|alias` / link text and the embed `!`.
 * Wikilinks use the shortest unambiguous link text (Obsidian's default); markdown links the full path.
 */
interface FileLike {
  path: string;
  extension: string;
}
interface LinktextSource {
  fileToLinktext(file: never, sourcePath: string, omitMdExtension?: boolean): string;
}

export function linkText(original: string, target: FileLike, sourcePath: string, cache: LinktextSource): string {
  const wiki = /^(!?)\[\[([^\]|#]*)(#[^\]|]*)?(\|[^\]]*)?\]\]$/.exec(original);
  if (wiki) {
    const text = cache.fileToLinktext(target as never, sourcePath, true);
    return `${wiki[1]}[[${text}${wiki[3] ?? ""}${wiki[4] ?? ""}]]`;
  }
  const md = /^(!?)\[([^\]]*)\]\((<?)([^)#>]*)(#[^)>]*)?(>?)\)$/.exec(original);
  if (md) {
    const path = md[3] ? target.path : encodeURI(target.path);
    return `${md[1]}[${md[2]}](${md[3]}${path}${md[5] ?? ""}${md[6]})`;
  }
  // A bare frontmatter value such as "[[Note]]" inside quotes is handled by the wikilink case;
  // anything else is left as it was.
  return original;
}
