// Entry of dist/bridge.js: a small self-contained file that stdio-only clients (Claude Desktop) run
// with `node bridge.js --url … --token-file …`. Nothing but JSON-RPC is ever written to stdout.
import { bridgeMain } from "./bridge";

bridgeMain(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`vault-mcp bridge failed: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exit(1);
  },
);
