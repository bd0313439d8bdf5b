import { existsSync } from "node:fs";
import path from "node:path";
import { createGraphService, type GraphService, type Outlink } from "../../src/core/graph";
import { AccessPolicy } from "../../src/core/policy";
import { isNotePath } from "../../src/core/vault";
import { FsVault } from "../../src/hosts/node/fs-vault";

const root = path.resolve(__dirname, "../../../shared/vaults/help-en");
const maybe = existsSync(root) ? describe : describe.skip;
/** The suite reports the vault's numbers (console.* is linted out of the project). */
const report = (line: string): void => void process.stdout.write(line + "\n");

maybe("link graph over the English help vault", () => {
  let vault: FsVault;
  let policy: AccessPolicy;
  let graph: GraphService;
  let notes: string[];
  const outlinks = new Map<string, Outlink[]>();

  beforeAll(async () => {
    vault = await FsVault.open(root, { watch: false });
    await vault.ready();
    policy = new AccessPolicy({ configDir: vault.configDir, excludedFilters: () => vault.excludedFilters() });
    graph = createGraphService({ port: vault, policy });
    await graph.sync();
    notes = vault
      .listFiles()
      .filter((f) => isNotePath(f.path) && !policy.isHidden(f.path))
      .map((f) => f.path)
      .sort();
    for (const n of notes) outlinks.set(n, (await graph.outlinks(n, { limit: 100_000 })).outlinks);
  });

  afterAll(async () => {
    graph?.close();
    await vault?.close();
  });

  test("every resolved link A → B is among B's backlinks, and every backlink is an outlink", async () => {
    let resolved = 0;
    const expectedBack = new Map<string, string[]>();
    for (const [source, links] of outlinks) {
      for (const o of links) {
        if (o.path === null) continue;
        resolved++;
        const key = `${source}|${o.original}|${o.line}|${o.link_type}`;
        const list = expectedBack.get(o.path);
        if (list) list.push(key);
        else expectedBack.set(o.path, [key]);
      }
    }
    const targets = new Set([...expectedBack.keys()]);
    let backTotal = 0;
    for (const t of targets) {
      const r = await graph.backlinks(t, { limit: 500 });
      expect(r.truncated).toBe(false);
      backTotal += r.total;
      const got = r.backlinks.map((b) => `${b.source}|${b.original}|${b.line}|${b.link_type}`).sort();
      expect(got).toEqual(expectedBack.get(t)!.sort());
    }
    // Files nobody links to have no backlinks.
    for (const n of notes) if (!targets.has(n)) expect((await graph.backlinks(n)).total).toBe(0);
    expect(backTotal).toBe(resolved);
    report(`help-en graph: ${notes.length} notes, ${resolved} resolved links to ${targets.size} files`);
  });

  test("link counts agree with the port's resolvedLinks and unresolvedLinks", () => {
    const resolved = vault.resolvedLinks();
    const unresolved = vault.unresolvedLinks();
    let unresolvedTotal = 0;
    for (const n of notes) {
      const mine: Record<string, number> = {};
      const mineUnresolved: Record<string, number> = {};
      for (const o of outlinks.get(n)!) {
        if (o.path !== null) mine[o.path] = (mine[o.path] ?? 0) + 1;
        else {
          const lp = o.link.split("#")[0];
          mineUnresolved[lp] = (mineUnresolved[lp] ?? 0) + 1;
          unresolvedTotal++;
        }
      }
      const theirs = Object.fromEntries(Object.entries(resolved[n] ?? {}).filter(([t]) => !policy.isHidden(t)));
      expect([n, mine]).toEqual([n, theirs]);
      expect([n, mineUnresolved]).toEqual([n, unresolved[n] ?? {}]);
    }
    report(`help-en graph: ${unresolvedTotal} unresolved links`);
  });

  test("every link type, alias text, heading and block fragment in the metadata is represented", () => {
    const want = { wikilink: 0, markdown: 0, embed: 0, frontmatter: 0, alias: 0, heading: 0, block: 0 };
    const got = { wikilink: 0, markdown: 0, embed: 0, frontmatter: 0, alias: 0, heading: 0, block: 0 };
    for (const n of notes) {
      const meta = vault.getMetadata(n)!;
      for (const l of meta.links) want[l.original.startsWith("[[") ? "wikilink" : "markdown"]++;
      want.embed += meta.embeds.length;
      want.frontmatter += meta.frontmatterLinks.length;
      for (const l of [...meta.links, ...meta.embeds, ...meta.frontmatterLinks]) {
        const hash = l.link.indexOf("#");
        if (hash >= 0 && hash < l.link.length - 1) want[l.link[hash + 1] === "^" ? "block" : "heading"]++;
        if (l.original.startsWith("[[") && l.original.includes("|")) want.alias++;
      }
      for (const o of outlinks.get(n)!) {
        got[o.link_type]++;
        if (o.fragment) got[o.fragment.startsWith("^") ? "block" : "heading"]++;
        if (o.original.startsWith("[[") && o.display_text !== undefined) got.alias++;
      }
    }
    expect(got).toEqual(want);
    expect(got.wikilink).toBeGreaterThan(0);
    expect(got.markdown).toBeGreaterThan(0);
    expect(got.embed).toBeGreaterThan(0);
    expect(got.alias).toBeGreaterThan(0);
    expect(got.heading).toBeGreaterThan(0);
    report(`help-en graph link kinds: ${JSON.stringify(got)}`);
  });

  test("links to headings and blocks mostly exist; the missing ones are listed", async () => {
    const broken = await graph.brokenLinks({ includeFragments: true, limit: 1000 });
    const fragments = broken.links.filter((l) => l.reason !== "missing_file");
    let withFragment = 0;
    for (const links of outlinks.values()) withFragment += links.filter((o) => o.fragment && o.path && isNotePath(o.path)).length;
    report(
      `help-en graph: ${withFragment} links to headings/blocks, ${fragments.length} missing:\n` +
        fragments
          .slice(0, 15)
          .map((l) => `  ${l.source}:${l.line} ${l.original}`)
          .join("\n"),
    );
    expect(fragments.length).toBeLessThan(withFragment / 10);
  });

  test("graph queries answer over the whole vault", async () => {
    const top = await graph.mostLinked({ limit: 5 });
    expect(top.notes.length).toBe(5);
    const orphans = await graph.orphans({ limit: 1000 });
    const path = await graph.connectionPath(notes[0], notes[notes.length - 1]);
    const recent = await graph.recent({ limit: 3 });
    expect(recent.notes).toHaveLength(3);
    const ctx = await graph.context(top.notes[0].path);
    expect(ctx.backlinks_total).toBeGreaterThan(0);
    const mentions = await graph.unlinkedMentions(top.notes[0].path, { limit: 5 });
    report(
      `help-en graph: most linked ${top.notes.map((n) => `${n.title} (${n.linking_notes})`).join(", ")}; ${orphans.total} orphans; ` +
        `${notes[0]} ↔ ${notes[notes.length - 1]}: ${path.found ? `${path.hops} hops` : "not connected"}; ` +
        `unlinked mentions of ${top.notes[0].title}: ${mentions.total ?? "≥" + mentions.mentions.length}`,
    );
  });
});
