// A loopback reverse proxy that adds `Authorization: Bearer <token>` to every request, for test
// clients that cannot send a header (the official conformance suite). Everything else is forwarded
// as is: method, path, body, streamed responses (SSE), and the Origin header.
//
// Host: a request addressed to the proxy itself (Host = 127.0.0.1|localhost|[::1] with the proxy's
// port) has its port rewritten to the upstream's, exactly as a reverse proxy maps its own address to
// the backend. Any other Host (e.g. "evil.example.com") is passed through untouched, so the server's
// DNS-rebinding check still sees, and refuses, it. Nothing in the server is relaxed for the proxy.
//
//   node scripts/token-proxy.mjs --upstream http://127.0.0.1:28765 --token-file F [--port N]
import http from "node:http";
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "upgrade", "te", "trailer"]);
const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * @param {{ upstream: string, token: string, port?: number, log?: (line: string) => void, verbose?: boolean }} opts
 * @returns {Promise<{ url: string, port: number, close: () => Promise<void> }>} url = http://127.0.0.1:<port>
 */
export async function startTokenProxy({ upstream, token, port = 0, log = () => {}, verbose = false }) {
  const up = new URL(upstream);
  if (up.protocol !== "http:" || !LOOPBACK.has(up.hostname)) throw new Error(`The upstream must be http:// on loopback, got ${upstream}`);
  const upPort = Number(up.port || 80);
  let ownPort = port;

  const server = http.createServer((req, res) => {
    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v;
    const m = /^(\[::1\]|[^:]+)(?::(\d+))?$/.exec((req.headers.host ?? "").toLowerCase());
    if (m && LOOPBACK.has(m[1]) && Number(m[2] ?? 80) === ownPort) headers.host = `${m[1]}:${upPort}`;
    headers.authorization = `Bearer ${token}`;

    const upReq = http.request({ host: up.hostname.replace(/^\[|\]$/g, ""), port: upPort, method: req.method, path: req.url, headers, setHost: false }, (upRes) => {
      if (verbose) log(`${req.method} ${req.url} (Host ${req.headers.host} -> ${headers.host}) -> ${upRes.statusCode} ${upRes.headers["content-type"] ?? ""}`);
      const out = {};
      for (const [k, v] of Object.entries(upRes.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v;
      res.writeHead(upRes.statusCode ?? 502, upRes.statusMessage, out);
      res.flushHeaders();
      upRes.pipe(res);
      upRes.on("error", () => res.destroy());
    });
    upReq.on("error", (e) => {
      log(`upstream error for ${req.method} ${req.url}: ${e.message}`);
      if (!res.headersSent) {
        res.writeHead(502, { "content-type": "application/json" });
        res.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32603, message: `Proxy: upstream unreachable (${e.message})` }, id: null }));
      } else res.destroy();
    });
    // The client went away (e.g. closed an SSE stream): close the upstream request too.
    res.on("close", () => {
      if (!res.writableFinished) upReq.destroy();
    });
    req.pipe(upReq);
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve(undefined));
  });
  ownPort = /** @type {import("node:net").AddressInfo} */ (server.address()).port;
  const sockets = new Set();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  return {
    url: `http://127.0.0.1:${ownPort}`,
    port: ownPort,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

async function main() {
  const argv = process.argv.slice(2);
  const get = (flag) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const upstream = get("--upstream");
  const tokenFile = get("--token-file");
  const token = get("--token") ?? (tokenFile ? readFileSync(tokenFile, "utf8").trim() : undefined);
  if (!upstream || !token) {
    process.stderr.write("Usage: node scripts/token-proxy.mjs --upstream http://127.0.0.1:<port> (--token T | --token-file F) [--port N]\n");
    process.exit(2);
  }
  const proxy = await startTokenProxy({ upstream, token, port: Number(get("--port") ?? 0), log: (l) => process.stderr.write(`[token-proxy] ${l}\n`) });
  process.stdout.write(`${proxy.url}/mcp -> ${upstream}\n`);
  const stop = () => void proxy.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
