// The Obsidian APIs src/hosts/obsidian uses, each with its `@since` tag from the `obsidian` package's
// types: the newest of them is the lowest minAppVersion the plugin can declare. The TypeScript
// checker resolves every identifier and property access in the plugin's sources; those declared in
// node_modules/obsidian/obsidian.d.ts are collected with their @since (APIs without the tag predate
// the tags, 0.9.x–0.12.x). APIs newer than minAppVersion must be in GUARDED: used only where Obsidian
// itself calls them on versions that have them (an overridden method) or behind a check.
import ts from "typescript";
import { readdirSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * Newer than minAppVersion on purpose: the settings tab calls update() only behind
 * requireApiVersion("1.13.0") (eslint's obsidianmd/no-unsupported-api checks that guard).
 */
export const GUARDED = new Set(["SettingTab.update"]);

export function compareVersions(a, b) {
  const pa = a.split(".").map(Number), pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}

function files(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));
}

/** Map of "Owner.member" (or "name") → @since ("" when untagged), for every obsidian API src/hosts/obsidian uses. */
export function obsidianApisUsed(root = process.cwd()) {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  const rootNames = files(join(root, "src/hosts/obsidian"));
  const program = ts.createProgram({ rootNames, options: { ...config.options, noEmit: true } });
  const checker = program.getTypeChecker();
  const obsidianDts = resolve(root, "node_modules/obsidian/obsidian.d.ts");
  const used = new Map();
  const note = (node) => {
    let symbol = checker.getSymbolAtLocation(node);
    if (symbol && symbol.flags & ts.SymbolFlags.Alias) symbol = checker.getAliasedSymbol(symbol);
    for (const decl of symbol?.declarations ?? []) {
      if (resolve(decl.getSourceFile().fileName) !== obsidianDts) continue;
      const owner = decl.parent && (ts.isClassDeclaration(decl.parent) || ts.isInterfaceDeclaration(decl.parent)) && decl.parent.name ? `${decl.parent.name.text}.` : "";
      const since = ts.getJSDocTags(decl).find((t) => t.tagName.text === "since");
      const text = typeof since?.comment === "string" ? since.comment.trim() : "";
      used.set(owner + symbol.name, text);
    }
  };
  for (const sf of program.getSourceFiles()) {
    if (!rootNames.includes(resolve(sf.fileName)) && !rootNames.includes(sf.fileName)) continue;
    // Runtime uses only: types, imports (their uses count) and the property names of object
    // literals (contextually typed by an API's interface, but data) are skipped.
    const visit = (node) => {
      if (ts.isTypeNode(node) || ts.isImportDeclaration(node) || ts.isInterfaceDeclaration(node) || ts.isTypeAliasDeclaration(node)) return;
      if (ts.isIdentifier(node) && !((ts.isPropertyAssignment(node.parent) || ts.isShorthandPropertyAssignment(node.parent) || ts.isMethodDeclaration(node.parent)) && node.parent.name === node)) note(node);
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return used;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const used = obsidianApisUsed();
  const rows = [...used].sort((a, b) => compareVersions(b[1] || "0", a[1] || "0"));
  for (const [name, since] of rows) console.log(`${(since || "-").padEnd(8)} ${name}${GUARDED.has(name) ? "  (guarded)" : ""}`);
}
