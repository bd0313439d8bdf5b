import { describe, expect, test } from "@jest/globals";
import * as fs from "node:fs";
import * as path from "node:path";
import { computeLinkMaps, LinkResolver } from "../../src/core/links/resolver";
import { splitLinkpath, type NoteMetadata } from "../../src/core/metadata";
import { parseNote } from "../../src/core/parser";
import { describeFastFrontmatter, vaultFiles } from "../support/vault-files";

const VAULT = path.resolve(__dirname, "../../../shared/vaults/help-ja");
const present = fs.existsSync(VAULT);
/** The suite reports the vault's numbers (console.* is linted out of the project). */
const report = (line: string): void => void process.stdout.write(line + "\n");


// The Japanese help vault ships without its attachments, so only links to notes are expected to resolve.
const ATTACHMENT = /\.(png|jpe?g|gif|svg|webp|mp4|webm|mov|pdf|mp3|ico)$/i;

(present ? describe : describe.skip)("help-ja vault: parse and resolve every note", () => {
  test("every note parses and links to notes resolve", () => {
    const files = vaultFiles(VAULT);
    const notes: [string, NoteMetadata][] = [];
    for (const f of files.filter((x) => x.endsWith(".md"))) {
      const text = fs.readFileSync(path.join(VAULT, f), "utf8");
      expect(() => parseNote(text)).not.toThrow();
      notes.push([f, parseNote(text)]);
    }
    const resolver = new LinkResolver(files);
    const maps = computeLinkMaps(notes, resolver);
    let noteLinks = 0, noteResolved = 0, headings = 0, tags = 0, fmErrors = 0;
    for (const [p, m] of notes) {
      headings += m.headings.length;
      tags += m.tags.length;
      if (m.frontmatterError) fmErrors++;
      for (const l of [...m.links, ...m.embeds]) {
        const lp = splitLinkpath(l.link).path;
        if (ATTACHMENT.test(lp)) continue;
        noteLinks++;
        if (resolver.resolve(lp, p) !== null) noteResolved++;
      }
    }
    let resolved = 0;
    for (const r of Object.values(maps.resolved)) for (const n of Object.values(r)) resolved += n;
    report(`help-ja: notes=${notes.length} noteLinks=${noteResolved}/${noteLinks} resolvedTotal=${resolved} headings=${headings} tags=${tags} frontmatterErrors=${fmErrors}`);
    expect(notes.length).toBeGreaterThan(150);
    expect(noteResolved / noteLinks).toBeGreaterThan(0.97);
    expect(headings).toBeGreaterThan(500);
    // Japanese headings come through intact.
    const settings = notes.find(([p]) => p.endsWith("/設定.md"));
    expect(settings).toBeDefined();
    const backlinks = Object.values(maps.resolved).filter((r) => (r[settings![0]] ?? 0) > 0).length;
    expect(backlinks).toBeGreaterThan(40);
  });
});

describeFastFrontmatter("help-ja", VAULT, report);
