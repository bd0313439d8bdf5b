/**
 * The `.gitignore` both hosts write into the plugin's data folder when it is inside the vault: the
 * search index, embeddings, the model runtime and the helper files are caches (tens of MB), never
 * vault content, so a vault kept in git (Obsidian Git commits \`.obsidian\` too) never commits them;
 * the plugin's own files and settings stay as the owner's git setup has them.
 */
export const PLUGIN_GITIGNORE = `# Written by Vault MCP: its index, embeddings, model runtime and helper files are caches.
*
!.gitignore
!main.js
!manifest.json
!styles.css
!data.json
`;
