import { lookup } from "node:dns/promises";
import { isIP } from "node:net";

/**
 * SSRF guard for URLs that users hand us and that we later call (Web Push endpoints):
 * https only, no credentials, optionally an allow-list of hosts, and no address that
 * reaches into the cluster or the cloud's metadata service. Addresses are checked after
 * DNS resolution; callers that connect later should connect to the returned addresses,
 * so that a second resolution cannot swap in a private one (DNS rebinding).
 */
export interface EndpointPolicy {
  /** Permits http and loopback/private addresses: dev mode and tests only. */
  allowPrivate: boolean;
  /** When non-empty, the host must be one of these; ".example.com" admits its subdomains. */
  allowedHosts?: readonly string[];
}

/** On success, the addresses that passed; empty when allowPrivate skipped resolution. */
export type EndpointCheck = { ok: true; addresses: string[] } | { ok: false; reason: string };

export type AddressClass =
  | "public"
  | "loopback"
  | "private"
  | "link-local"
  | "unspecified"
  | "shared"
  | "multicast"
  | "reserved";

/** Resolves a host name to all of its addresses; injectable so tests need no DNS. */
export type Resolver = (host: string) => Promise<string[]>;

const systemResolver: Resolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

export async function checkPushEndpoint(
  rawUrl: string,
  policy: EndpointPolicy,
  resolve: Resolver = systemResolver,
): Promise<EndpointCheck> {
  const parsed = checkEndpointUrl(rawUrl, policy);
  if (!parsed.ok) return parsed;
  if (policy.allowPrivate) return { ok: true, addresses: [] };
  let addresses: string[];
  if (isIP(parsed.host)) {
    addresses = [parsed.host];
  } else {
    try {
      addresses = await resolve(parsed.host);
    } catch {
      return { ok: false, reason: "host does not resolve" };
    }
    if (addresses.length === 0) return { ok: false, reason: "host does not resolve" };
  }
  for (const address of addresses) {
    const kind = classifyAddress(address);
    if (kind !== "public") return { ok: false, reason: `host resolves to a ${kind} address` };
  }
  return { ok: true, addresses };
}

/**
 * The checks that need no DNS: scheme, credentials, allow-list. Returns the bare host. A
 * URL already parsed is not parsed again.
 */
export function checkEndpointUrl(
  rawUrl: string | URL,
  policy: EndpointPolicy,
): { ok: true; host: string } | { ok: false; reason: string } {
  let url: URL;
  try {
    url = typeof rawUrl === "string" ? new URL(rawUrl) : rawUrl;
  } catch {
    return { ok: false, reason: "not a valid URL" };
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && policy.allowPrivate)) {
    return { ok: false, reason: "must be an https URL" };
  }
  if (url.username || url.password) return { ok: false, reason: "must not contain credentials" };
  // WHATWG URL has already normalised the host (lowercase, IPv4 in dotted form, IPv6 in brackets).
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  if (!host) return { ok: false, reason: "must have a host" };
  const allowed = policy.allowedHosts?.filter((h) => h.length > 0) ?? [];
  if (allowed.length > 0 && !allowed.some((entry) => hostMatches(host, entry))) {
    return { ok: false, reason: "host is not an allowed push service" };
  }
  return { ok: true, host };
}

function hostMatches(host: string, entry: string): boolean {
  const e = entry
    .trim()
    .toLowerCase()
    .replace(/^\*(?=\.)/, "");
  return e.startsWith(".") ? host.endsWith(e) && host.length > e.length : host === e;
}

// [first address, prefix length, class]; the first matching row wins.
const V4_RANGES: [string, number, AddressClass][] = [
  ["0.0.0.0", 32, "unspecified"],
  ["0.0.0.0", 8, "reserved"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "shared"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "reserved"],
  ["192.0.2.0", 24, "reserved"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "reserved"],
  ["198.51.100.0", 24, "reserved"],
  ["203.0.113.0", 24, "reserved"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

const V6_RANGES: [string, number, AddressClass][] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["100::", 64, "reserved"],
  ["2001:db8::", 32, "reserved"],
  ["fc00::", 7, "private"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "private"],
  ["ff00::", 8, "multicast"],
];

/** Classifies an IPv4 or IPv6 address literal; anything unparsable is "reserved". */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/%.*$/, "");
  const family = isIP(bare);
  if (family === 4) return classifyBits(v4Bits(bare), 32, V4_RANGES, v4Bits);
  if (family !== 6) return "reserved";
  const bits = v6Bits(bare);
  const embedded = embeddedV4(bits);
  if (embedded !== undefined) return classifyBits(embedded, 32, V4_RANGES, v4Bits);
  return classifyBits(bits, 128, V6_RANGES, v6Bits);
}

function classifyBits(
  bits: bigint,
  width: number,
  ranges: [string, number, AddressClass][],
  parse: (a: string) => bigint,
): AddressClass {
  for (const [start, prefix, kind] of ranges) {
    const shift = BigInt(width - prefix);
    if (bits >> shift === parse(start) >> shift) return kind;
  }
  return "public";
}

/**
 * IPv6 forms that carry an IPv4 address a host may end up connecting to: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedV4(bits: bigint): bigint | undefined {
  const low32 = bits & 0xffffffffn;
  const high96 = bits >> 32n;
  if (high96 === 0xffffn || high96 === 0x64ff9b0000000000000000n) return low32;
  if (high96 === 0n && low32 > 1n) return low32;
  if (bits >> 112n === 0x2002n) return (bits >> 80n) & 0xffffffffn;
  return undefined;
}

function v4Bits(address: string): bigint {
  return address.split(".").reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

function v6Bits(address: string): bigint {
  let text = address;
  // A trailing dotted quad stands for the last two groups.
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const v4 = v4Bits(dotted[1]);
    text = `${text.slice(0, dotted.index)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const headGroups = head ? head.split(":") : [];
  const tailGroups = tail ? tail.split(":") : [];
  const zeros = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill("0");
  return [...headGroups, ...zeros, ...tailGroups].reduce((acc, g) => (acc << 16n) | BigInt(parseInt(g, 16)), 0n);
}
