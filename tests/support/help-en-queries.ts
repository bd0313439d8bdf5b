/**
 * Queries on Obsidian's English help vault (../shared/vaults/help-en), written the way people ask, and
 * the notes that answer them: keyword-style cases (shared by the keyword and semantic relevance
 * suites) and paraphrases that share no content word with the note they must find.
 */
export interface Case {
  q: string;
  /** Any of these notes counts as the right answer. */
  expect: string[];
  k: 1 | 3;
  /** Why the engine misses it today (not asserted). */
  gap?: string;
}

export const EN_CASES: Case[] = [
  { q: "how do I embed a pdf", expect: ["Linking notes and files/Embed files.md"], k: 1 },
  { q: "sync my vault between devices", expect: ["Getting started/Sync your notes across devices.md"], k: 1 },
  { q: "keyboard shortcut to open command palette", expect: ["Plugins/Command palette.md"], k: 3 },
  { q: "change the font size", expect: ["User interface/Settings.md", "User interface/Appearance.md"], k: 3 },
  { q: "how to link to a heading in another note", expect: ["Linking notes and files/Internal links.md"], k: 3 },
  { q: "create a new vault", expect: ["Getting started/Create a vault.md"], k: 3 },
  { q: "install a community plugin", expect: ["Extending Obsidian/Community plugins.md"], k: 1 },
  { q: "add properties to a note", expect: ["Editing and formatting/Properties.md"], k: 1 },
  { q: "recover a deleted note", expect: ["Plugins/File recovery.md"], k: 3 },
  { q: "custom domain for publish", expect: ["Obsidian Publish/Custom domains.md"], k: 1 },
  { q: "import notes from evernote", expect: ["Import notes/Import from Evernote.md"], k: 1 },
  { q: "import from notion", expect: ["Import notes/Import from Notion.md"], k: 1 },
  { q: "make a table in markdown", expect: ["Editing and formatting/Advanced formatting syntax.md", "Editing and formatting/Basic formatting syntax.md"], k: 3 },
  { q: "daily notes template", expect: ["Plugins/Daily notes.md"], k: 1 },
  { q: "graph view filters", expect: ["Plugins/Graph view.md"], k: 1 },
  { q: "split the editor into panes", expect: ["User interface/Tabs.md"], k: 3 },
  { q: "customize the look with css snippets", expect: ["Extending Obsidian/CSS snippets.md"], k: 1 },
  { q: "restore an older version of a note with sync", expect: ["Obsidian Sync/Version history.md"], k: 1 },
  { q: "encryption of synced data", expect: ["Obsidian Sync/Security and privacy.md", "Obsidian Sync/Upgrade Sync encryption.md"], k: 3 },
  { q: "search for a tag", expect: ["Editing and formatting/Tags.md", "Plugins/Search.md", "Plugins/Tags view.md"], k: 3 },
  { q: "rename a file and update links", expect: ["Files and folders/Manage notes.md"], k: 3 },
  { q: "change the theme", expect: ["Extending Obsidian/Themes.md", "User interface/Appearance.md"], k: 3 },
  { q: "open a note in a new tab", expect: ["User interface/Tabs.md"], k: 3 },
  { q: "format text bold and italic", expect: ["Editing and formatting/Basic formatting syntax.md"], k: 1 },
  { q: "footnotes", expect: ["Editing and formatting/Basic formatting syntax.md", "Plugins/Footnotes view.md"], k: 3 },
  { q: "math equations latex", expect: ["Editing and formatting/Advanced formatting syntax.md"], k: 1 },
  { q: "mermaid diagrams", expect: ["Editing and formatting/Advanced formatting syntax.md"], k: 1 },
  { q: "web clipper highlight", expect: ["Obsidian Web Clipper/Highlighter.md"], k: 3 },
  { q: "refund for catalyst", expect: ["Licenses and payment/Refund policy.md"], k: 1 },
  { q: "hotkeys customize", expect: ["User interface/Hotkeys.md"], k: 1 },
  { q: "word count", expect: ["Plugins/Word count.md"], k: 1 },
  { q: "random note", expect: ["Plugins/Random note.md"], k: 3 },
  { q: "backlinks to the current note", expect: ["Plugins/Backlinks.md"], k: 1 },
  { q: "canvas cards", expect: ["Plugins/Canvas.md"], k: 1 },
  { q: "templates variables date", expect: ["Plugins/Templates.md"], k: 1 },
  { q: "bookmark a search", expect: ["Plugins/Bookmarks.md"], k: 1 },
  { q: "pop out window", expect: ["User interface/Pop-out windows.md"], k: 3 },
  { q: "folding headings", expect: ["Editing and formatting/Folding.md"], k: 1 },
  { q: "multiple cursors editing", expect: ["Editing and formatting/Multiple cursors.md"], k: 1 },
  { q: "attachments folder location", expect: ["Editing and formatting/Attachments.md"], k: 3 },
  // Question words are not required terms; a note whose title holds the query is boosted.
  { q: "what are callouts", expect: ["Editing and formatting/Callouts.md"], k: 1 },
  { q: "how do aliases work", expect: ["Linking notes and files/Aliases.md"], k: 3 },
  { q: "what is the configuration folder", expect: ["Files and folders/Configuration folder.md"], k: 1 },
  { q: "where are my settings stored", expect: ["Files and folders/How Obsidian stores data.md", "Files and folders/Configuration folder.md"], k: 3 },
  { q: "publish my notes as a website", expect: ["Obsidian Publish/Introduction to Obsidian Publish.md", "Obsidian Publish/Publish your content.md"], k: 3, gap: "title match not boosted enough" },
  { q: "how much does sync cost", expect: ["Obsidian Sync/Plans and storage limits.md"], k: 3, gap: "vocabulary mismatch (cost/price/plans)" },
  { q: "use obsidian on iphone", expect: ["Obsidian/Obsidian for iOS and iPadOS.md"], k: 3, gap: "vocabulary mismatch (iphone/iOS)" },
  { q: "create a base from notes", expect: ["Bases/Create a base.md"], k: 3 },
  { q: "outline of headings", expect: ["Plugins/Outline.md"], k: 3 },
];

/**
 * Asked by meaning: each shares no content word (after stemming, stop words aside) with its note's
 * text or path; `tests/real/semantic-relevance.test.ts` checks that it stays so.
 */
export const PARAPHRASES: { q: string; expect: string }[] = [
  { q: "surprise me with something I wrote", expect: "Plugins/Random note.md" },
  { q: "practice area to try things", expect: "Getting started/Sandbox vault.md" },
  { q: "definitions of the jargon", expect: "Getting started/Glossary.md" },
  { q: "stable addresses that do not break", expect: "Obsidian Publish/Permalinks.md" },
  { q: "how long is my essay", expect: "Plugins/Word count.md" },
  { q: "shrink a chapter down to its title", expect: "Editing and formatting/Folding.md" },
  { q: "how many people read my pages", expect: "Obsidian Publish/Analytics.md" },
  { q: "boundless whiteboard for brainstorming", expect: "Plugins/Canvas.md" },
  { q: "put a photo in the middle of my writing", expect: "Linking notes and files/Embed files.md" },
  { q: "duplicate everything so nothing disappears", expect: "Getting started/Back up your Obsidian files.md" },
  { q: "newest edition of the program", expect: "Getting started/Update Obsidian.md" },
  { q: "using it on an iphone", expect: "Getting started/Mobile app.md" },
  { q: "are extensions made by strangers dangerous", expect: "Extending Obsidian/Plugin security.md" },
  { q: "where preferences are stored", expect: "Files and folders/Configuration folder.md" },
  { q: "a diary entry for every morning", expect: "Plugins/Daily notes.md" },
  { q: "money returned when unhappy", expect: "Licenses and payment/Refund policy.md" },
  { q: "who points at this page", expect: "Plugins/Backlinks.md" },
  { q: "several carets at once", expect: "Editing and formatting/Multiple cursors.md" },
  { q: "night mode", expect: "User interface/Appearance.md" },
  { q: "cheaper for pupils and charities", expect: "Licenses and payment/Education and non-profit discount.md" },
  { q: "government levy", expect: "Licenses and payment/Sales tax.md" },
  { q: "spreadsheet overview", expect: "Bases/Introduction to Bases.md" },
  { q: "localize the app for my country", expect: "Contributing to Obsidian/Translations.md" },
  { q: "donate", expect: "Contributing to Obsidian/Financial contributions.md" },
  { q: "what does it cost", expect: "Licenses and payment/Introduction to licenses and payment.md" },
  { q: "label pages with hashtags", expect: "Editing and formatting/Tags.md" },
  { q: "bring in my writing from elsewhere", expect: "Getting started/Import notes.md" },
  { q: "a second title for a page", expect: "Linking notes and files/Aliases.md" },
  { q: "my brand on the address bar", expect: "Obsidian Publish/Custom domains.md" },
  { q: "my own stylesheet tweaks", expect: "Extending Obsidian/CSS snippets.md" },
];
