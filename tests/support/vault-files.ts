import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, test } from "@jest/globals";
import { splitFrontmatter } from "../../src/core/frontmatter";
import { parseFrontmatterSlow } from "../../src/core/parser";
import { fastYaml } from "../../src/core/parser/fast-yaml";

/** Every file under `root` as sorted vault paths (`/`-separated, NFC), dot-files and dot-folders skipped. */
export function vaultFiles(root: string): string[] {
  const out: string[] = [];
  const rec = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith(".")) continue;
      const p = path.join(dir, e.name);
      if (e.isDirectory()) rec(p);
      else out.push(path.relative(root, p).split(path.sep).join("/").normalize("NFC"));
    }
  };
  rec(root);
  return out.sort();
}

/** The parser's fast frontmatter path must give exactly what the full YAML parser gives, on every note of a real vault. */
export function describeFastFrontmatter(label: string, vault: string, report: (line: string) => void): void {
  (fs.existsSync(vault) ? describe : describe.skip)(`${label} vault: fast frontmatter path agrees with the YAML parser`, () => {
    test("every frontmatter block", () => {
      let fast = 0;
      let slow = 0;
      for (const f of vaultFiles(vault).filter((x) => x.endsWith(".md"))) {
        const yaml = splitFrontmatter(fs.readFileSync(path.join(vault, f), "utf8")).yaml;
        if (yaml === null) continue;
        const quick = fastYaml(yaml);
        if (quick === undefined) {
          slow++;
          continue;
        }
        fast++;
        expect([f, quick]).toEqual([f, parseFrontmatterSlow(yaml).frontmatter]);
      }
      report(`${label}: frontmatter fast path ${fast}, full parser ${slow}`);
      expect(fast).toBeGreaterThan(100);
    });
  });
}
