/**
 * Queries on Obsidian's Japanese help vault (../shared/vaults/help-ja), written the way people ask,
 * and the notes that answer them (keyword-style; see help-en-queries.ts for the shape).
 */
import type { Case } from "./help-en-queries";

export const JA_CASES: Case[] = [
  { q: "PDF 埋め込み", expect: ["ノートとファイルのリンク/ファイルの埋め込み.md"], k: 1 },
  { q: "コマンドパレット", expect: ["プラグイン/コマンドパレット.md"], k: 1 },
  { q: "削除 ノート 復元", expect: ["プラグイン/ファイルリカバリー.md", "ファイルとフォルダ/ノートの管理.md"], k: 3 },
  { q: "Evernote インポート", expect: ["ノートのインポート/Evernote.md"], k: 1 },
  { q: "コールアウト", expect: ["編集と書式設定/コールアウト.md"], k: 1 },
  { q: "ホットキー", expect: ["ユーザーインターフェイス/ホットキー.md"], k: 1 },
  { q: "テーマ 変更", expect: ["Obsidian の拡張/テーマ.md", "ユーザーインターフェイス/外観.md"], k: 3 },
  { q: "デイリーノート テンプレート", expect: ["プラグイン/デイリーノート.md"], k: 1 },
  { q: "同期 デバイス", expect: ["はじめに/デバイス間でノートを同期する.md"], k: 1 },
  { q: "保管庫を作成する", expect: ["はじめに/保管庫の作成.md"], k: 1 },
  { q: "コミュニティプラグインをインストール", expect: ["Obsidian の拡張/コミュニティプラグイン.md"], k: 1 },
  { q: "カスタムドメインを設定", expect: ["Obsidian Publish/カスタムドメイン.md"], k: 1 },
  { q: "バージョン履歴", expect: ["Obsidian Sync/バージョン履歴.md"], k: 1 },
  { q: "暗号化", expect: ["Obsidian Sync/Sync暗号化のアップグレード.md", "Obsidian Sync/セキュリティとプライバシー.md"], k: 3 },
  { q: "ワードカウント", expect: ["プラグイン/ワードカウント.md"], k: 1 },
  { q: "設定フォルダ", expect: ["ファイルとフォルダ/設定フォルダ.md"], k: 1 },
  { q: "エイリアスを追加", expect: ["ノートとファイルのリンク/エイリアス.md"], k: 1 },
  { q: "脚注", expect: ["プラグイン/脚注ビュー.md", "編集と書式設定/基本的な書式構文.md"], k: 3 },
  // Sentences with particles (を, の, で): when no chunk holds the whole run, chunks holding enough
  // of its bigrams match, ranked by BM25.
  { q: "PDFを埋め込む方法", expect: ["ノートとファイルのリンク/ファイルの埋め込み.md"], k: 3 },
  { q: "削除したノートを復元", expect: ["プラグイン/ファイルリカバリー.md"], k: 3, gap: "particles inside a CJK run; no partial-bigram match" },
  { q: "コマンドパレットを開く", expect: ["プラグイン/コマンドパレット.md"], k: 3 },
  { q: "グラフビューのフィルター", expect: ["プラグイン/グラフビュー.md"], k: 3 },
  { q: "ノートの名前を変更", expect: ["ファイルとフォルダ/ノートの管理.md"], k: 3 },
];
