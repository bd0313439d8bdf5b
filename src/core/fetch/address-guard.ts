/**
 * Which network addresses `fetch` may reach: public unicast only. Refused: loopback, private
 * (RFC 1918, CGNAT 100.64/10), link-local (cloud metadata 169.254.169.254), unique-local and
 * link-local IPv6, multicast, unspecified, broadcast, documentation/benchmark and reserved ranges,
 * and IPv4 addresses wrapped in IPv6 (mapped, compatible, translated, NAT64, 6to4, ISATAP) when the
 * IPv4 inside is one of those; the local-use NAT64 prefix, Teredo and ORCHID whatever they carry.
 * A network-specific NAT64 prefix (RFC 6052 §2.2, any prefix an operator picks) cannot be told from
 * a public address: the IPv4 inside is not checked there.
 */

/** Parses dotted IPv4 into a 32-bit number, or null. */
export function parseIpv4(s: string): number | null {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return null;
  return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

/** Parses IPv6 (with `::`, an embedded IPv4 tail, a zone id) into eight 16-bit groups, or null. */
export function parseIpv6(input: string): number[] | null {
  let s = input.replace(/^\[|\]$/g, "");
  const zone = s.indexOf("%");
  if (zone >= 0) s = s.slice(0, zone);
  if (!s.includes(":")) return null;
  // An IPv4 tail becomes two hex groups.
  const v4tail = /(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(s);
  if (v4tail) {
    const v4 = parseIpv4(v4tail[1]);
    if (v4 === null) return null;
    s = s.slice(0, v4tail.index) + `${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const toGroups = (h: string) => (h === "" ? [] : h.split(":").map((g) => (/^[0-9a-fA-F]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)));
  const head = toGroups(halves[0]);
  const rest = halves.length === 2 ? toGroups(halves[1]) : [];
  if ([...head, ...rest].some((g) => Number.isNaN(g))) return null;
  if (halves.length === 1) return head.length === 8 ? head : null;
  const missing = 8 - head.length - rest.length;
  if (missing < 1) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...rest];
}

function inRange(ip: number, base: string, bits: number): boolean {
  const b = parseIpv4(base) as number;
  const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
  return ((ip & mask) >>> 0) === ((b & mask) >>> 0);
}

const BLOCKED_V4: [string, number, string][] = [
  ["0.0.0.0", 8, "unspecified"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared (carrier-grade NAT)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "reserved (6to4 relay)"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved or broadcast"],
];

/** Why an IPv4 address is refused, or null when it is public. */
function blockedV4(ip: number): string | null {
  for (const [base, bits, why] of BLOCKED_V4) if (inRange(ip, base, bits)) return why;
  return null;
}

/** Why an address (IPv4 or IPv6 text) may not be reached, or null when it is a public unicast address. */
export function forbiddenAddress(address: string): string | null {
  const v4 = parseIpv4(address);
  if (v4 !== null) return blockedV4(v4);
  const g = parseIpv6(address);
  if (!g) return "not an IP address";
  const v4of = (hi: number, lo: number) => ((hi << 16) >>> 0) + lo;
  if (g.every((x) => x === 0)) return "unspecified";
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return "loopback";
  // IPv4-mapped ::ffff:a.b.c.d (::ffff:0:0/96), IPv4-compatible ::a.b.c.d (::/96), IPv4-translated
  // ::ffff:0:a.b.c.d (::ffff:0:0:0/96, RFC 2765/6145 SIIT), NAT64 64:ff9b::a.b.c.d (64:ff9b::/96,
  // RFC 6052): judge the IPv4 inside.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) return blockedV4(v4of(g[6], g[7]));
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) return blockedV4(v4of(g[6], g[7]));
  if (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0)) return blockedV4(v4of(g[6], g[7]));
  // The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215): a site's own translator, the IPv4 inside at
  // a place the site chooses, so none of it is a public destination.
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return "local-use NAT64";
  // 6to4 2002:AABB:CCDD::/48 carries an IPv4 address.
  if (g[0] === 0x2002) return blockedV4(v4of(g[1], g[2]));
  // Teredo 2001:0::/32 (RFC 4380): a tunnel through a server and a client's NAT, both IPv4 (the
  // client's inverted); not a place to fetch a page from.
  if (g[0] === 0x2001 && g[1] === 0) return "Teredo tunnel";
  // ISATAP interface ids (RFC 5214): prefix::0:5efe:a.b.c.d (also 100:, 200:, 300:) tunnel to the IPv4 inside.
  if ((g[4] & 0xfcff) === 0 && g[5] === 0x5efe) {
    const inner = blockedV4(v4of(g[6], g[7]));
    if (inner) return inner;
  }
  if (g[0] === 0x2001 && g[1] === 0x0002 && g[2] === 0) return "benchmarking";
  // ORCHID (2001:10::/28, deprecated) and ORCHIDv2 (2001:20::/28): identifiers, not routable.
  if (g[0] === 0x2001 && (g[1] & 0xfff0) === 0x0010) return "reserved (ORCHID)";
  if (g[0] === 0x2001 && (g[1] & 0xfff0) === 0x0020) return "reserved (ORCHID)";
  if ((g[0] & 0xfe00) === 0xfc00) return "unique-local";
  if ((g[0] & 0xffc0) === 0xfe80) return "link-local";
  if ((g[0] & 0xffc0) === 0xfec0) return "site-local";
  if ((g[0] & 0xff00) === 0xff00) return "multicast";
  if (g[0] === 0x2001 && g[1] === 0x0db8) return "documentation";
  if (g[0] === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return "discard-only";
  return null;
}
