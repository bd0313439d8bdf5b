import net from "node:net";
import { PortInUseError } from "../../src/hosts/common/runtime";
import { makeTempVault, ok, removeTree, startTestServer, type TestServer } from "../support/harness";

/** A port that was free a moment ago, with the next few free too (bounded attempts). */
async function freePortRange(span: number): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const base = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    if (base + span >= 65535) continue;
    const free = await Promise.all(
      Array.from({ length: span }, (_, i) => new Promise<boolean>((resolve) => {
        const s = net.createServer().once("error", () => resolve(false)).listen(base + i, "127.0.0.1", () => s.close(() => resolve(true)));
      })),
    );
    if (free.every(Boolean)) return base;
  }
  throw new Error("no free port range");
}

describe("several vaults at once: port fallback", () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const s of servers) {
      await s.close();
      removeTree(s.root);
    }
  });

  test("a second server on a taken port takes the next free one and reports it; each serves its own vault", async () => {
    const port = await freePortRange(3);
    const a = await startTestServer(makeTempVault({ "A.md": "vault a" }), { listenPort: port });
    servers.push(a);
    const b = await startTestServer(makeTempVault({ "B.md": "vault b" }), { listenPort: port });
    servers.push(b);
    expect(a.port).toBe(port);
    expect(b.port).toBe(port + 1);
    expect(b.url).toBe(`http://127.0.0.1:${port + 1}/mcp`);
    const cb = await b.connect();
    expect((await ok(cb, "read", { path: "B.md" })).body).toBe("vault b");
    const ca = await a.connect();
    expect((await ok(ca, "read", { path: "A.md" })).body).toBe("vault a");
    expect(cb.getServerVersion()?.name).not.toBe(ca.getServerVersion()?.name);
  });

  test("without fallback a taken port is a PortInUseError", async () => {
    const taken = servers[0].port;
    await expect(startTestServer(makeTempVault({ "C.md": "c" }), { listenPort: taken, portFallback: 0 })).rejects.toBeInstanceOf(PortInUseError);
  });
});
