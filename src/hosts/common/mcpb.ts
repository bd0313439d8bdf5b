/**
 * The stdio bridge as an MCP Bundle (`.mcpb`: a zip holding `manifest.json` and the server), so a
 * Claude Desktop user installs it by opening one file: Claude Desktop asks for the user
 * configuration below (the server URL, and the access token, which it keeps as a secret) and runs
 * `node server/bridge.js` with them. The release builds it with `@anthropic-ai/mcpb pack`
 * (scripts/build-mcpb.mjs); the settings tab writes the same bundle with `mcpbArchive` (a plain
 * stored zip: the bridge is already inlined in main.js, and nothing here may need a dependency).
 */

export const MCPB_MANIFEST_VERSION = "0.2";
export const MCPB_BRIDGE_PATH = "server/bridge.js";
/** The token reaches the bridge in its environment, not on its command line (process listings). */
export const TOKEN_ENV = "VAULT_MCP_TOKEN";

export interface McpbManifest {
  manifest_version: string;
  name: string;
  display_name: string;
  version: string;
  description: string;
  long_description: string;
  author: { name: string };
  license: string;
  keywords: string[];
  server: { type: "node"; entry_point: string; mcp_config: { command: string; args: string[]; env: Record<string, string> } };
  user_config: Record<string, { type: "string"; title: string; description: string; required: boolean; sensitive?: boolean; default?: string }>;
  compatibility: { platforms: ("darwin" | "win32" | "linux")[]; runtimes: { node: string } };
}

/** The file name the settings tab writes and the release attaches. */
export function mcpbFileName(): string {
  return "vault-mcp.mcpb";
}

export function mcpbManifest(version: string, defaultUrl: string): McpbManifest {
  return {
    manifest_version: MCPB_MANIFEST_VERSION,
    name: "vault-mcp",
    display_name: "Vault MCP",
    version,
    description: "Your Obsidian vault in Claude Desktop, through the Vault MCP server running in Obsidian on this computer.",
    long_description:
      "Connects Claude Desktop to the Vault MCP server that the Vault MCP plugin runs inside Obsidian (or the headless server) on 127.0.0.1. " +
      "It is a small bridge between Claude Desktop's stdio and the server's HTTP endpoint; it reaches nothing but the URL you give. " +
      "Obsidian must be open with the server running. The URL and the access token are in Obsidian → Settings → Vault MCP.",
    author: { name: "Vault MCP contributors" },
    license: "MIT",
    keywords: ["obsidian", "notes", "markdown", "vault", "search"],
    server: {
      type: "node",
      entry_point: MCPB_BRIDGE_PATH,
      mcp_config: {
        command: "node",
        args: ["${__dirname}/" + MCPB_BRIDGE_PATH, "--url", "${user_config.server_url}"],
        env: { [TOKEN_ENV]: "${user_config.access_token}" },
      },
    },
    user_config: {
      server_url: {
        type: "string",
        title: "Server URL",
        description: "The MCP endpoint Obsidian → Settings → Vault MCP shows (http://127.0.0.1:<port>/mcp).",
        required: true,
        default: defaultUrl,
      },
      access_token: {
        type: "string",
        title: "Access token",
        description: "Obsidian → Settings → Vault MCP → Access token → Copy.",
        required: true,
        sensitive: true,
      },
    },
    compatibility: { platforms: ["darwin", "win32", "linux"], runtimes: { node: ">=20.0.0" } },
  };
}

// ---------------------------------------------------------------------------------------------
// A stored (uncompressed) zip: local headers, central directory, end record. Enough for a bundle.

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = CRC_TABLE[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

export function zipStored(files: { name: string; data: Uint8Array }[]): Uint8Array {
  const enc = new TextEncoder();
  const locals: Uint8Array[] = [];
  const centrals: Uint8Array[] = [];
  let offset = 0;
  // 1980-01-01 00:00 in DOS time: stable bytes for the same input.
  const dosTime = 0, dosDate = (0 << 9) | (1 << 5) | 1;
  for (const f of files) {
    const name = enc.encode(f.name);
    const crc = crc32(f.data);
    const local = new Uint8Array(30 + name.length);
    const lv = new DataView(local.buffer);
    lv.setUint32(0, 0x04034b50, true);
    lv.setUint16(4, 20, true);
    lv.setUint16(6, 0x0800, true); // UTF-8 names
    lv.setUint16(8, 0, true); // stored
    lv.setUint16(10, dosTime, true);
    lv.setUint16(12, dosDate, true);
    lv.setUint32(14, crc, true);
    lv.setUint32(18, f.data.length, true);
    lv.setUint32(22, f.data.length, true);
    lv.setUint16(26, name.length, true);
    local.set(name, 30);
    const central = new Uint8Array(46 + name.length);
    const cv = new DataView(central.buffer);
    cv.setUint32(0, 0x02014b50, true);
    cv.setUint16(4, 0x031e, true); // made by: Unix, 3.0
    cv.setUint16(6, 20, true);
    cv.setUint16(8, 0x0800, true);
    cv.setUint16(10, 0, true);
    cv.setUint16(12, dosTime, true);
    cv.setUint16(14, dosDate, true);
    cv.setUint32(16, crc, true);
    cv.setUint32(20, f.data.length, true);
    cv.setUint32(24, f.data.length, true);
    cv.setUint16(28, name.length, true);
    cv.setUint32(38, (0o100644 << 16) >>> 0, true); // -rw-r--r--
    cv.setUint32(42, offset, true);
    central.set(name, 46);
    locals.push(local, f.data);
    centrals.push(central);
    offset += local.length + f.data.length;
  }
  const centralSize = centrals.reduce((n, c) => n + c.length, 0);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, files.length, true);
  ev.setUint16(10, files.length, true);
  ev.setUint32(12, centralSize, true);
  ev.setUint32(16, offset, true);
  const out = new Uint8Array(offset + centralSize + 22);
  let at = 0;
  for (const part of [...locals, ...centrals, end]) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** The bundle: manifest.json and the bridge. */
export function mcpbArchive(version: string, defaultUrl: string, bridgeSource: string): Uint8Array {
  const enc = new TextEncoder();
  return zipStored([
    { name: "manifest.json", data: enc.encode(JSON.stringify(mcpbManifest(version, defaultUrl), null, 2) + "\n") },
    { name: MCPB_BRIDGE_PATH, data: enc.encode(bridgeSource) },
  ]);
}
