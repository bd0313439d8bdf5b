import { frontmatterTags, linkSyntax } from "../metadata";
import type { AccessPolicy } from "../policy";
import { basenameOf, isNotePath, parentOf, type VaultPort } from "../vault";

export interface VaultConventions {
  notes: number;
  link_style: { wikilinks: number; markdown_links: number; embeds: number; preferred: "wikilink" | "markdown" | "none" };
  frontmatter_fields: { field: string; notes: number; common_values: string[] }[];
  tags: { tag: string; notes: number }[];
  folders: { folder: string; notes: number }[];
  date_named_notes: number;
  templates_folder: string | null;
}

const DATE_NAME = /^\d{4}-\d{2}-\d{2}/;

/** What the vault itself says about how its owner writes: link style, properties, tags, folders. */
export function describeConventions(port: VaultPort, policy: AccessPolicy): VaultConventions {
  let wikilinks = 0;
  let markdown = 0;
  let embeds = 0;
  let notes = 0;
  let dated = 0;
  const fields = new Map<string, { notes: number; values: Map<string, number> }>();
  const tags = new Map<string, number>();
  const folders = new Map<string, number>();
  for (const f of port.listFiles()) {
    if (!isNotePath(f.path) || policy.isHidden(f.path)) continue;
    notes++;
    if (DATE_NAME.test(basenameOf(f.path))) dated++;
    const top = parentOf(f.path).split("/")[0] ?? "";
    folders.set(top, (folders.get(top) ?? 0) + 1);
    const meta = port.getMetadata(f.path);
    if (!meta) continue;
    for (const l of meta.links) if (linkSyntax(l.original) === "wikilink") wikilinks++; else markdown++;
    embeds += meta.embeds.length;
    const noteTags = new Set<string>();
    for (const t of meta.tags) noteTags.add(t.tag.slice(1).toLowerCase());
    for (const t of frontmatterTags(meta.frontmatter)) noteTags.add(t.slice(1).toLowerCase());
    for (const t of noteTags) tags.set(t, (tags.get(t) ?? 0) + 1);
    for (const [key, value] of Object.entries(meta.frontmatter ?? {})) {
      const entry = fields.get(key) ?? { notes: 0, values: new Map<string, number>() };
      entry.notes++;
      for (const v of Array.isArray(value) ? value : [value]) {
        if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") {
          const s = String(v).slice(0, 60);
          entry.values.set(s, (entry.values.get(s) ?? 0) + 1);
        }
      }
      fields.set(key, entry);
    }
  }
  const top = <K,>(m: Map<K, number>, n: number) => [...m.entries()].sort((a, b) => b[1] - a[1] || String(a[0]).localeCompare(String(b[0]))).slice(0, n);
  const templates = port.listFolders().find((f) => /^(templates?|_templates?)$/i.test(f) && !policy.isHidden(f)) ?? null;
  return {
    notes,
    link_style: {
      wikilinks,
      markdown_links: markdown,
      embeds,
      preferred: wikilinks === 0 && markdown === 0 ? "none" : wikilinks >= markdown ? "wikilink" : "markdown",
    },
    frontmatter_fields: [...fields.entries()]
      .sort((a, b) => b[1].notes - a[1].notes)
      .slice(0, 15)
      .map(([field, e]) => ({
        field,
        notes: e.notes,
        // Values shared by several notes are conventions; one-off values (titles, dates) are not.
        common_values: top(e.values, 8).filter(([, n]) => n > 1).map(([v]) => v),
      })),
    tags: top(tags, 30).map(([tag, n]) => ({ tag, notes: n })),
    folders: top(folders, 20).map(([folder, n]) => ({ folder, notes: n })),
    date_named_notes: dated,
    templates_folder: templates,
  };
}

export function conventionsText(c: VaultConventions): string {
  const lines = [
    `The vault has ${c.notes} notes.`,
    c.link_style.preferred === "none"
      ? "Links: none yet."
      : `Links: ${c.link_style.preferred === "wikilink" ? "wikilinks [[Note]]" : "markdown links [text](Note.md)"} are the house style (${c.link_style.wikilinks} wikilinks, ${c.link_style.markdown_links} markdown links, ${c.link_style.embeds} embeds).`,
    c.folders.length ? `Folders (top level, notes): ${c.folders.map((f) => `${f.folder || "(root)"} ${f.notes}`).join(", ")}.` : "",
    c.frontmatter_fields.length
      ? `Properties in use: ${c.frontmatter_fields.map((f) => `${f.field} (${f.notes} notes${f.common_values.length ? `; e.g. ${f.common_values.slice(0, 5).join(", ")}` : ""})`).join("; ")}.`
      : "No frontmatter properties in use.",
    c.tags.length ? `Tags: ${c.tags.map((t) => `#${t.tag} (${t.notes})`).join(", ")}.` : "No tags in use.",
    c.date_named_notes ? `${c.date_named_notes} notes are named by date (YYYY-MM-DD…).` : "",
    c.templates_folder ? `Templates live in "${c.templates_folder}".` : "",
  ];
  return lines.filter(Boolean).join("\n");
}
