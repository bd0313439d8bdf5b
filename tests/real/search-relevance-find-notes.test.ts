/**
 * find_notes on Obsidian's help vaults: titles with typos and prefixes, aliases, paths, Japanese
 * titles. Skips when the vaults are absent.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { createLookupService, type LookupService } from "../../src/core/lookup";
import { AccessPolicy } from "../../src/core/policy";
import { FsVault } from "../../src/hosts/node/fs-vault";

interface Case {
  q: string;
  expect: string;
  k: 1 | 3;
  alias?: string;
}

const EN: Case[] = [
  { q: "command palette", expect: "Plugins/Command palette.md", k: 1 },
  { q: "comand palete", expect: "Plugins/Command palette.md", k: 1 },
  { q: "quick swit", expect: "Plugins/Quick switcher.md", k: 1 },
  { q: "hotkey", expect: "User interface/Hotkeys.md", k: 1 },
  { q: "imprt evernote", expect: "Import notes/Import from Evernote.md", k: 1 },
  { q: "web clipper templates", expect: "Obsidian Web Clipper/Templates.md", k: 1 },
  { q: "Obsidian Sync/Version history", expect: "Obsidian Sync/Version history.md", k: 1 },
  { q: "troubleshoot sync", expect: "Obsidian Sync/Troubleshoot Obsidian Sync.md", k: 1 },
  { q: "catalyst", expect: "Licenses and payment/Catalyst license.md", k: 1 },
  { q: "2-factor", expect: "Obsidian/2-factor authentication.md", k: 1 },
  { q: "graph", expect: "Plugins/Graph view.md", k: 1 },
  { q: "start here", expect: "Home.md", k: 1, alias: "Start here" },
  { q: "obsidian settings", expect: "User interface/Settings.md", k: 1, alias: "Obsidian settings" },
  { q: "interface language", expect: "User interface/Language settings.md", k: 1, alias: "Concepts/Interface language" },
  { q: "embedding files", expect: "Linking notes and files/Embed files.md", k: 1, alias: "Linking notes and files/Embedding files" },
];

const JA: Case[] = [
  { q: "コマンドパレット", expect: "プラグイン/コマンドパレット.md", k: 1 },
  { q: "保管庫", expect: "はじめに/保管庫の作成.md", k: 3 },
  { q: "バージョン", expect: "Obsidian Sync/バージョン履歴.md", k: 1 },
  { q: "設定", expect: "ユーザーインターフェイス/設定.md", k: 1 },
  { q: "クイック", expect: "プラグイン/クイックスイッチャー.md", k: 1 },
  { q: "エイリアス", expect: "ノートとファイルのリンク/エイリアス.md", k: 1 },
  { q: "デイリー", expect: "プラグイン/デイリーノート.md", k: 1 },
  { q: "同期", expect: "はじめに/デバイス間でノートを同期する.md", k: 3 },
];

function suite(dir: string, cases: Case[]) {
  const root = path.resolve(__dirname, "../../../shared/vaults", dir);
  (existsSync(root) ? describe : describe.skip)(`find_notes on ${dir}`, () => {
    let vault: FsVault;
    let lookup: LookupService;
    beforeAll(async () => {
      vault = await FsVault.open(root, { watch: false });
      lookup = createLookupService({ port: vault, policy: new AccessPolicy({ configDir: vault.configDir }) });
    });
    afterAll(async () => {
      lookup?.close();
      await vault?.close();
    });

    test("each lookup finds its note at the required rank, reporting the alias that matched", async () => {
      const problems: string[] = [];
      let rr = 0;
      for (const c of cases) {
        const hits = await lookup.findNotes(c.q, 10);
        const i = hits.findIndex((h) => h.path === c.expect);
        rr += i < 0 ? 0 : 1 / (i + 1);
        if (i < 0 || i + 1 > c.k) problems.push(`${c.q} → #${i < 0 ? "-" : i + 1} (need ≤${c.k}); got ${hits.slice(0, 3).map((h) => h.path).join(" | ")}`);
        else if (c.alias && hits[i].matched_alias !== c.alias) problems.push(`${c.q} → matched_alias ${hits[i].matched_alias ?? "(none)"}, want ${c.alias}`);
      }
      process.stdout.write(`find_notes ${dir}: MRR ${(rr / cases.length).toFixed(3)} over ${cases.length} lookups\n`);
      expect(problems).toEqual([]);
    });
  });
}

suite("help-en", EN);
suite("help-ja", JA);
