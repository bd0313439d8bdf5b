import { VaultError } from "../../src/core/errors";
import { globToRegExp, makePathMatcher } from "../../src/core/glob";
import { isUnder, normalizeVaultPath } from "../../src/core/paths";
import { AccessPolicy } from "../../src/core/policy";
import { redactPaths } from "../../src/mcp/server";
import { parseArgs, usage } from "../../src/hosts/node/args";
import { clientConfigs } from "../../src/hosts/common/client-config";

describe("normalizeVaultPath", () => {
  test.each([
    ["Notes/a.md", "Notes/a.md"],
    ["Notes//a.md", "Notes/a.md"],
    ["Notes\\a.md", "Notes/a.md"],
    ["./Notes/./a.md", "Notes/a.md"],
    ["Notes/a.md/", "Notes/a.md"],
    ["", ""],
    ["/", ""],
    ["Cafe\u0301.md", "Café.md"], // NFD → NFC
    ["a\u00a0b.md", "a b.md"],
    ["%2e%2e/x.md", "%2e%2e/x.md"], // not decoded: a literal (harmless) name
    ["...md", "...md"],
  ])("%j → %j", (input, out) => {
    expect(normalizeVaultPath(input)).toBe(out);
  });

  test.each([
    ["../x", /leaves the vault/],
    ["a/../../x", /leaves the vault/],
    ["a/..", /leaves the vault/],
    ["..\\x", /leaves the vault/],
    ["/etc/passwd", /absolute/],
    ["C:/x", /absolute/],
    ["c:x", /absolute/],
    ["\\\\srv\\x", /absolute/],
    ["~", /absolute/],
    ["~/x", /absolute/],
    ["file:///x", /absolute/],
    ["a\u0000b", /NUL/],
    ["a\nb", /control/],
  ])("refuses %j", (input, re) => {
    expect(() => normalizeVaultPath(input)).toThrow(VaultError);
    expect(() => normalizeVaultPath(input)).toThrow(re);
  });

  test("refuses non-strings", () => {
    expect(() => normalizeVaultPath(42)).toThrow(/must be a string/);
  });

  test("isUnder", () => {
    expect(isUnder("a/b.md", "a")).toBe(true);
    expect(isUnder("ab/c.md", "a")).toBe(false);
    expect(isUnder("a", "a")).toBe(true);
    expect(isUnder("x", "")).toBe(true);
  });
});

describe("glob", () => {
  test.each([
    ["*.md", "Note.md", true],
    ["*.md", "Folder/Note.md", true], // no slash: matches the name at any depth
    ["Folder/*.md", "Folder/Note.md", true],
    ["Folder/*.md", "Folder/Sub/Note.md", false],
    ["Folder/**/*.md", "Folder/Note.md", true],
    ["Folder/**/*.md", "Folder/a/b/Note.md", true],
    ["**", "anything/at/all.png", true],
    ["{Projects,People}/*.md", "People/Ada.md", true],
    ["{Projects,People}/*.md", "Journal/Day.md", false],
    ["Note?.md", "Note1.md", true],
    ["[ab]*.md", "alpha.md", true],
    ["[!ab]*.md", "alpha.md", false],
    ["NOTE.MD", "note.md", true],
    ["a+b(c).md", "a+b(c).md", true],
  ])("%j on %j → %j", (glob, path, expected) => {
    expect(makePathMatcher(glob)(path)).toBe(expected);
  });

  test("unbalanced brackets and braces do not throw", () => {
    expect(() => globToRegExp("[abc")).not.toThrow();
    expect(() => globToRegExp("{a,b")).not.toThrow();
  });

  test("globs run on the linear-time engine: patterns that backtrack for ever in V8 answer at once", () => {
    // As a V8 RegExp, this glob on this path did not finish (nested `(?:[^/]*/)*` and `[^/]*a` repeats).
    const path = `${"a/".repeat(30)}${"a".repeat(60)}.md`;
    expect(makePathMatcher("**/**/**/**/**/**/**/*a*a*a*a*a*a*a*a*b")(path)).toBe(false);
    expect(makePathMatcher("**/**/**/**/**/**/**/*a*a*a*a*a*a*a*a*.md")(path)).toBe(true);
    expect(makePathMatcher("{a,{b,{c,{d,{e,x}}}}}/**")("x/y.md")).toBe(true);
  });

  test("over-long or invalid globs are refused with a message that shows the syntax", () => {
    expect(() => globToRegExp("*".repeat(501))).toThrow(/path pattern is 501 characters long; keep it under 500/);
    expect(() => globToRegExp("[z-a]")).toThrow(/path pattern "\[z-a\]" is not valid .*Globs take \*/);
  });
});

describe("AccessPolicy", () => {
  const policy = new AccessPolicy({
    configDir: ".obsidian",
    hiddenFolders: ["Private"],
    protectedFolders: ["Archive"],
    excludedFilters: () => ["Templates/", "/^Daily\\/2019/", "Scratch", "/[invalid/"],
  });
  test.each([
    [".obsidian/app.json", true],
    [".git/config", true],
    [".trash/x.md", true],
    ["Notes/.hidden.md", true],
    ["Private/x.md", true],
    ["Private", true],
    ["PrivateNot/x.md", false],
    ["Templates/t.md", true],
    ["Daily/2019-01-01.md", true],
    ["Daily/2020-01-01.md", false],
    ["Scratch/x.md", true],
    ["Scratchpad.md", true], // Obsidian's plain filters match by prefix
    ["Notes/a.md", false],
    ["", false],
  ])("isHidden(%j) = %j", (path, hidden) => {
    expect(policy.isHidden(path)).toBe(hidden);
  });

  test("hidden paths look missing; protected ones are read-only", () => {
    expect(() => policy.assertVisible("Private/x.md")).toThrow(/No note or file/);
    expect(() => policy.assertWritable("Archive/old.md")).toThrow(/protected/);
    expect(() => policy.assertWritable("Notes/a.md")).not.toThrow();
  });
});

describe("error redaction", () => {
  test("absolute paths in unexpected errors are removed", () => {
    expect(redactPaths("ENOENT: no such file or directory, open '/home/ada/vault/x.md'")).toBe("ENOENT: no such file or directory, open '<path>'");
    expect(redactPaths("EACCES C:\\Users\\ada\\vault\\x.md")).toBe("EACCES <path>");
  });
});

describe("CLI arguments", () => {
  test("parses the documented flags", () => {
    const a = parseArgs(["my vault", "--port", "1234", "--write", "--token=abcdefghijklmnop", "--hidden", "Private", "--allow-origin", "https://x"]);
    expect(a).toMatchObject({ vault: "my vault", port: 1234, write: true, token: "abcdefghijklmnop", hidden: ["Private"], allowOrigins: ["https://x"] });
  });
  test("fetch flags: --fetch-content-type (repeatable) replaces the default list, as the plugin's setting does", () => {
    expect(parseArgs(["--fetch-content-type", "text/html", "--fetch-content-type=Image/*"])).toMatchObject({ fetchContentTypes: ["text/html", "image/*"] });
    expect(parseArgs([]).fetchContentTypes).toBeUndefined();
    expect(() => parseArgs(["--fetch-content-type", "html"])).toThrow(/content type such as text\/html/);
    expect(usage()).toContain("--fetch-content-type");
  });
  test("session limits: --session-idle minutes (0 = never), --max-sessions", () => {
    expect(parseArgs(["--session-idle", "0", "--max-sessions", "5"])).toMatchObject({ sessionIdleMinutes: 0, maxSessions: 5 });
    expect(parseArgs([]).sessionIdleMinutes).toBeUndefined();
  });
  test.each([[["--port", "x"]], [["--port"]], [["--bogus"]], [["a", "b"]], [["--token", "short"]], [["--max-sessions", "0"]], [["--session-idle", "-1"]]])("refuses %j", (argv) => {
    expect(() => parseArgs(argv)).toThrow();
  });
  test("semantic search flags: a provider, its URL, model, key variable or model folder", () => {
    expect(parseArgs(["--embeddings", "ollama", "--embeddings-model", "bge-m3"])).toMatchObject({ embeddings: "ollama", embeddingsModel: "bge-m3" });
    expect(parseArgs(["--embeddings=openai", "--embeddings-url", "http://localhost:1234/v1", "--embeddings-key-env", "MY_KEY"])).toMatchObject({ embeddings: "openai", embeddingsUrl: "http://localhost:1234/v1", embeddingsKeyEnv: "MY_KEY" });
    expect(parseArgs(["--embeddings", "builtin", "--embeddings-model-dir", "models/e5"])).toMatchObject({ embeddings: "builtin", embeddingsModelDir: "models/e5" });
    expect(() => parseArgs(["--embeddings", "gpt"])).toThrow(/ollama, openai or builtin/);
    expect(() => parseArgs(["--embeddings-model", "x"])).toThrow(/need --embeddings/);
    // The built-in model alone: the default model of the list, downloaded on first use; or one named.
    expect(parseArgs(["--embeddings", "builtin"])).toMatchObject({ embeddings: "builtin" });
    expect(parseArgs(["--embeddings", "builtin", "--embeddings-model", "Xenova/all-MiniLM-L6-v2"])).toMatchObject({ embeddings: "builtin", embeddingsModel: "Xenova/all-MiniLM-L6-v2" });
    expect(() => parseArgs(["--embeddings", "builtin", "--embeddings-key-env", "K"])).toThrow(/needs no key/);
    expect(() => parseArgs(["--embeddings", "ollama", "--embeddings-url", "localhost:11434"])).toThrow(/http:\/\//);
  });
  test("read cap flags, as the plugin's settings: --max-read-kb and --max-attachment-kb, in --help", () => {
    expect(parseArgs(["--max-read-kb", "512", "--max-attachment-kb=2048"])).toMatchObject({ maxReadKB: 512, maxAttachmentKB: 2048 });
    expect(parseArgs([])).not.toHaveProperty("maxReadKB");
    expect(() => parseArgs(["--max-read-kb", "0"])).toThrow(/--max-read-kb takes a whole number from 1 to 10240/);
    expect(() => parseArgs(["--max-attachment-kb", "1.5"])).toThrow(/--max-attachment-kb takes a whole number from 1 to 102400/);
    expect(usage()).toMatch(/--max-read-kb N +the largest text a read returns/);
    expect(usage()).toMatch(/--max-attachment-kb N +the largest attachment read returns as base64/);
  });
  test("git flags: commits need write mode, a push needs commits, --no-git excludes the rest", () => {
    expect(parseArgs([])).toMatchObject({ gitCommit: false, gitPush: false, noGit: false, gitHooks: false });
    expect(parseArgs(["--write", "--git-commit", "--git-push", "--git-hooks", "--git-program", "/usr/local/bin/git"])).toMatchObject({ gitCommit: true, gitPush: true, gitHooks: true, gitProgram: "/usr/local/bin/git" });
    expect(parseArgs(["--no-git"])).toMatchObject({ noGit: true });
    expect(() => parseArgs(["--git-commit"])).toThrow(/add --write/);
    expect(() => parseArgs(["--write", "--git-push"])).toThrow(/give both/);
    expect(() => parseArgs(["--no-git", "--write", "--git-commit"])).toThrow(/--no-git turns git off/);
  });
});

describe("client configurations", () => {
  test("carry the URL and the token for each client", () => {
    const configs = clientConfigs("http://127.0.0.1:28765/mcp", "tok123", "My Vault");
    expect(configs.map((c) => c.id)).toEqual(["claude-code", "cursor", "vscode", "http"]);
    for (const c of configs) {
      expect(c.text).toContain("http://127.0.0.1:28765/mcp");
      expect(c.text).toContain("Bearer tok123");
    }
    expect(configs[0].text).toBe('claude mcp add --transport http vault-my-vault http://127.0.0.1:28765/mcp --header "Authorization: Bearer tok123"');
    expect(JSON.parse(configs[1].text).mcpServers["vault-my-vault"].url).toBe("http://127.0.0.1:28765/mcp");
  });

  test("Claude Desktop runs the stdio bridge with node when its path is known", () => {
    const configs = clientConfigs("http://127.0.0.1:28765/mcp", "tok123", "My Vault", { bridgePath: "/plugins/vault-mcp/bridge.js" });
    const desktop = JSON.parse(configs.find((c) => c.id === "claude-desktop")!.text);
    expect(desktop.mcpServers["vault-my-vault"]).toEqual({
      command: "node",
      args: ["/plugins/vault-mcp/bridge.js", "--url", "http://127.0.0.1:28765/mcp", "--token", "tok123"],
    });
  });
});
