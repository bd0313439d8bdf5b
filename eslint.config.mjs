// ESLint: Obsidian's recommended rules for all plugin code, plus the layer rules of ARCHITECTURE.md.
import { defineConfig, globalIgnores } from "eslint/config";
import obsidianmd from "eslint-plugin-obsidianmd";
import { builtinModules } from "node:module";
import globals from "globals";
import tseslint from "typescript-eslint";

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const hostOnly = ["obsidian", "express", "electron", ...nodeBuiltins];

export default defineConfig([
  globalIgnores(["main.js", "dist/**", "node_modules/**", "coverage/**", "bench-results/**", "examples/**", "tests/support/*.js", "*.config.js"]),
  ...obsidianmd.configs.recommended,
  {
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ["eslint.config.mjs", "esbuild.config.mjs"] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
  },
  {
    // The directory's manifest rules on manifest.json (`npm run lint` names the file): the TypeScript
    // parser reads a .json file as one object expression, which is what `validate-manifest` walks.
    // eslint-plugin-obsidianmd 0.4.2 (the newest) has no `checkId` option: the rule always checks
    // id, name and description for the forbidden words; scripts/release-check.mjs checks the id's form.
    files: ["manifest.json"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { parser: tseslint.parser, parserOptions: { projectService: false, project: null } },
    plugins: { obsidianmd },
    rules: { "obsidianmd/validate-manifest": "error" },
  },
  {
    // The core is pure: no host, no server framework, no Node built-ins.
    files: ["src/core/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: hostOnly.map((name) => ({ name, message: "src/core must stay pure: pass what you need in through the vault port or a parameter." })), patterns: [{ group: ["**/mcp/**", "**/transport/**", "**/hosts/**"], message: "src/core must not import outer layers." }] }],
    },
  },
  {
    // A record typed `Record<…>` and made from an object literal answers `o["constructor"]` with a
    // function and takes `o["__proto__"] = v` as a new prototype: lookups keyed by text from a vault or
    // a client must not see Object.prototype (issue #29).
    files: ["src/**/*.ts"],
    rules: {
      "no-restricted-syntax": [
        "error",
        ...["VariableDeclarator[id.typeAnnotation.typeAnnotation.typeName.name='Record'][id.typeAnnotation.typeAnnotation.typeArguments.params.0.type='TSStringKeyword'][init.type='ObjectExpression']", "PropertyDefinition[typeAnnotation.typeAnnotation.typeName.name='Record'][typeAnnotation.typeAnnotation.typeArguments.params.0.type='TSStringKeyword'][value.type='ObjectExpression']"].map((selector) => ({
          selector,
          message: "A Record made from an object literal sees Object.prototype (o['constructor'] is a function; o['__proto__'] = v changes the prototype). Use a Map, dict() from src/core/dict.ts, or own()/Object.hasOwn to read it and setOwn() to write it, then disable this rule here saying so.",
        })),
      ],
    },
  },
  {
    // MCP tool definitions are data over the core; no host APIs either.
    files: ["src/mcp/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", { paths: hostOnly.map((name) => ({ name, message: "src/mcp must not depend on a host." })), patterns: [{ group: ["**/transport/**", "**/hosts/**"], message: "src/mcp must not import outer layers." }] }],
    },
  },
  {
    // The transport layer, the Node host, tests and the bench run on Node by design.
    files: ["src/transport/**/*.ts", "src/hosts/node/**/*.ts", "src/hosts/common/**/*.ts", "tests/**/*.ts", "bench/**/*.ts", "*.mjs"],
    rules: { "obsidianmd/no-nodejs-modules": "off", "obsidianmd/prefer-window-timers": "off", "obsidianmd/no-global-this": "off" },
  },
  {
    files: ["tests/**/*.ts", "bench/**/*.ts"],
    languageOptions: { globals: { ...globals.jest, ...globals.node } },
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/require-await": "off",
      "no-console": "off",
      // The Obsidian plugin re-reports no-console under its own name; tests and the bench print measurements.
      "obsidianmd/rule-custom-message": "off",
      "obsidianmd/ui/sentence-case": "off",
      "obsidianmd/hardcoded-config-path": "off",
      "obsidianmd/prefer-file-manager-trash-file": "off",
      // Tests act as HTTP clients of the server (transfer links, fetch's test server): Node's fetch, not Obsidian's requestUrl.
      "no-restricted-globals": "off",
    },
  },
]);
