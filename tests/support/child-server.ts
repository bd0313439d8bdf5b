/**
 * The headless server in a child process (`node dist/cli.js`, as `npm start` runs it), for tests
 * that must survive what the server does to its own process: a blocked event loop shows as a client
 * timeout instead of hanging the test runner, and a SIGKILL is a real one.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { connectClient } from "./harness";

export const CLI = path.resolve(__dirname, "../../dist/cli.js");

export interface ChildServer {
  url: string;
  token: string;
  child: ChildProcess;
  /** Everything the child wrote to stderr so far (its log). */
  stderr(): string;
  connect(): Promise<Client>;
  /** SIGTERM and wait for the exit (SIGKILL after 5 s). */
  stop(): Promise<void>;
  /** SIGKILL at once; resolves when the process is gone. */
  kill(): Promise<void>;
}

/** A port that was free a moment ago (for a test that must know the port before the server says it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

/** True when `GET /health` on the port answers 200. */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: "127.0.0.1", port, path: "/health" }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on("error", () => resolve(false));
  });
}

/**
 * Starts the server. By default it resolves once the server printed its endpoint (start-up done);
 * with `untilHealthy`, on that fixed port, as soon as `/health` answers — what the stdio bridge
 * waits for — which may be before the server has finished starting (the search index loading).
 */
export async function startChildServer(
  vault: string,
  opts: { stateDir: string; write?: boolean; toolTimeoutS?: number; token?: string; args?: string[]; untilHealthy?: { port: number }; env?: NodeJS.ProcessEnv },
): Promise<ChildServer> {
  const token = opts.token ?? randomBytes(24).toString("base64url");
  // `--token=…`: a random token may begin with "--", which would read as the next flag.
  const port = opts.untilHealthy ? String(opts.untilHealthy.port) : "0";
  const args = [CLI, vault, "--port", port, `--token=${token}`, "--state-dir", opts.stateDir];
  if (opts.write) args.push("--write");
  if (opts.toolTimeoutS !== undefined) args.push("--tool-timeout", String(opts.toolTimeoutS));
  args.push(...(opts.args ?? []));
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}) });
  let out = "";
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (d: string) => (err += d));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let settled = false;
    const timer = setTimeout(() => settle(new Error(`the server did not start within 60 s:\n${err.slice(-2000)}`)), 60_000);
    const settle = (r: string | Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (typeof r === "string") resolve(r);
      else reject(r);
    };
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      out += d;
      const m = /Endpoint: (\S+)/.exec(out);
      if (m && !opts.untilHealthy) settle(m[1]);
    });
    child.once("exit", (code) => settle(new Error(`the server exited (${code}) before it listened:\n${err.slice(-2000)}`)));
    if (opts.untilHealthy) {
      const p = opts.untilHealthy.port;
      const poll = async () => {
        while (!settled) {
          if (await healthy(p)) return settle(`http://127.0.0.1:${p}/mcp`);
          await new Promise((r) => setTimeout(r, 2));
        }
      };
      void poll();
    }
  });
  const clients: Client[] = [];
  const closeClients = async () => {
    for (const c of clients.splice(0)) await c.close().catch(() => {});
  };
  return {
    url,
    token,
    child,
    stderr: () => err,
    connect: async () => {
      const c = await connectClient(url, token);
      clients.push(c);
      return c;
    },
    stop: async () => {
      await closeClients();
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
      await closeClients();
    },
  };
}
