// Drives the headless server with the official MCP Inspector in CLI mode
// (@modelcontextprotocol/inspector --cli, Streamable HTTP, bearer token as a header) and checks
// the answers: tools/list, search "dovetail", list_documents, then read of a listed note.
// Builds nothing: run `npm run build` first. Node ≥ 22 is fetched from the npm registry when needed.
//
//   node scripts/inspector.mjs [--verbose]
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { ensureTools, startHeadless, VERSIONS } from "./mcp-tools.mjs";

const verbose = process.argv.includes("--verbose");
const PKG = `@modelcontextprotocol/inspector@${VERSIONS.inspector}`;
let failures = 0;

function check(ok, what, detail = "") {
  console.log(`  ${ok ? "ok  " : "FAIL"} ${what}${ok || !detail ? "" : `\n       ${detail}`}`);
  if (!ok) failures++;
  return ok;
}

/** Every string in a JSON value that looks like a vault note path. */
function notePaths(v, out = []) {
  if (typeof v === "string" && /\.md$/.test(v)) out.push(v);
  else if (Array.isArray(v)) for (const x of v) notePaths(x, out);
  else if (v && typeof v === "object") for (const x of Object.values(v)) notePaths(x, out);
  return out;
}

const textOf = (result) => (result?.content ?? []).map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("\n");

async function main() {
  const { node, dir } = ensureTools([PKG]);
  const cli = path.join(dir, "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js");
  // The inspector keeps a catalog and client config under ~/.mcp-inspector: give it a throwaway home.
  const home = mkdtempSync(path.join(tmpdir(), "vault-mcp-inspector-home-"));
  const server = await startHeadless({ log: verbose ? (l) => process.stderr.write(l) : () => {} });

  const inspect = (args) =>
    new Promise((resolve, reject) => {
      const argv = [cli, "--cli", server.url, "--transport", "http", "--header", `Authorization: Bearer ${server.token}`, "--format", "json", "--stored-auth-only", ...args];
      const child = spawn(node, argv, { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, HOME: home, USERPROFILE: home } });
      let out = "";
      let err = "";
      child.stdout.on("data", (d) => (out += d));
      child.stderr.on("data", (d) => (err += d));
      child.once("error", reject);
      child.once("exit", (code) => {
        if (verbose) process.stderr.write(`[inspector ${args.join(" ")}] exit ${code}\n${err}`);
        let json;
        try {
          json = JSON.parse(out);
        } catch {
          json = undefined;
        }
        resolve({ code, json, out, err });
      });
    });

  try {
    console.log(`${PKG} --cli against ${server.url}`);
    const list = await inspect(["--method", "tools/list", "--strict"]);
    const tools = list.json?.result?.tools ?? [];
    const names = tools.map((t) => t.name);
    check(list.code === 0, "tools/list exits 0 (with --strict: no error-severity schema portability problems)", `exit ${list.code}: ${list.err.trim().slice(0, 2000)}`);
    if (list.err.trim()) console.log(`       inspector says: ${list.err.trim().split("\n").join("\n       ")}`);
    check(!/Warning: tool/.test(list.err), "tools/list has no schema portability warnings", list.err.trim().slice(0, 2000));
    check(["list_documents", "read"].every((n) => names.includes(n)), "tools/list has list_documents and read", `got: ${names.join(", ")}`);
    check(tools.length > 0 && tools.every((t) => t.description && t.inputSchema?.type === "object"), "every tool has a description and an object input schema");
    check(!names.includes("write"), "read-only server lists no write tool", `got: ${names.join(", ")}`);

    if (names.includes("search")) {
      const s = await inspect(["--method", "tools/call", "--tool-name", "search", "--tool-args-json", JSON.stringify({ query: "dovetail" })]);
      const r = s.json?.result;
      check(s.code === 0 && r && !r.isError, 'search "dovetail" succeeds', `exit ${s.code}: ${(textOf(r) || s.err).slice(0, 500)}`);
      check(notePaths(r?.structuredContent ?? textOf(r)).includes("Reference/Dovetail Joint.md") || textOf(r).includes("Reference/Dovetail Joint.md"), 'search "dovetail" finds Reference/Dovetail Joint.md', textOf(r).slice(0, 500));
    } else {
      console.log("  skip search: the server has no search tool");
    }

    const ls = await inspect(["--method", "tools/call", "--tool-name", "list_documents", "--tool-args-json", "{}"]);
    const listed = notePaths(ls.json?.result?.structuredContent);
    check(ls.code === 0 && !ls.json?.result?.isError && listed.length > 0, "list_documents lists notes", `exit ${ls.code}: ${(textOf(ls.json?.result) || ls.err).slice(0, 500)}`);
    const note = listed.includes("Home.md") ? "Home.md" : listed[0];
    if (note) {
      const rd = await inspect(["--method", "tools/call", "--tool-name", "read", "--tool-args-json", JSON.stringify({ path: note })]);
      const r = rd.json?.result;
      check(rd.code === 0 && r && !r.isError, `read ${note} succeeds`, `exit ${rd.code}: ${(textOf(r) || rd.err).slice(0, 500)}`);
      check(r?.structuredContent?.path === note && textOf(r).length > 20, `read ${note} returns the note (path and text)`, JSON.stringify(r?.structuredContent ?? {}).slice(0, 300));
    }

    const missing = await inspect(["--method", "tools/call", "--tool-name", "read", "--tool-args-json", JSON.stringify({ path: "No such note.md" })]);
    check(missing.json?.result?.isError === true && /No such note/i.test(textOf(missing.json?.result)), "read of a missing note is a tool error naming the path", textOf(missing.json?.result).slice(0, 300) || missing.err.slice(0, 300));
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
  console.log(failures === 0 ? "Inspector: all checks passed" : `Inspector: ${failures} check(s) failed`);
  process.exit(failures === 0 ? 0 : 1);
}

main().catch((e) => {
  console.error(`inspector: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
