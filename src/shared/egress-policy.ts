/**
 * Where Gatehouse may send requests that a tenant chose the address of (issue 25 point 8): webhooks, log
 * streams and back-channel logout URIs today, tenant code's controlled egress later. One check, run when the
 * URL is saved (400) and again before every delivery (a refused delivery is a recorded failure).
 *
 * Refused: loopback, private, shared (CGNAT), link-local, unique-local, unspecified, multicast and reserved
 * addresses of both families, IPv4 inside IPv6 (mapped, compatible, NAT64, 6to4), every spelling the URL
 * parser accepts for an IPv4 address (`2130706433`, `0177.0.0.1`, `0x7f.1`, `127.1`), the names `localhost`
 * and `*.localhost`, cloud metadata names and the private-use suffixes `.internal`, `.local` and
 * `.home.arpa`, and the service's own hosts (the issuer's host and its tenant subdomains). A deployment may
 * allow loopback for development (`ALLOW_LOOPBACK_EGRESS=1`, set by `npm start` and the tests).
 *
 * A host name is not resolved (a worker cannot see what its fetch will resolve it to), so a public name
 * pointing at a private address is not caught here; on Cloudflare's network such a fetch does not reach
 * the deployment's private network either.
 */
import { inRange, parseIpRange, parseIpv6, type IpRange } from "./ip";

export interface EgressPolicy {
  /** Development only: loopback addresses and the `localhost` names may be reached. @default false */
  allowLoopback: boolean;
  /** The service's own hosts (`host[:port]`, from ISSUER): they and their subdomains are refused. */
  ownHosts: readonly string[];
}

/** The policy a deployment's variables give: ALLOW_LOOPBACK_EGRESS ("1" or "true") and ISSUER. */
export function egressPolicyFrom(env: { ALLOW_LOOPBACK_EGRESS?: string | undefined; ISSUER?: string | undefined }): EgressPolicy {
  const allow = (env.ALLOW_LOOPBACK_EGRESS ?? "").toLowerCase();
  let own: string[] = [];
  try {
    if (env.ISSUER) own = [new URL(env.ISSUER).host.toLowerCase()];
  } catch {
    own = [];
  }
  return { allowLoopback: allow === "1" || allow === "true", ownHosts: own };
}

const ranges = (list: string[]): IpRange[] => list.map((r) => parseIpRange(r) as IpRange);

const LOOPBACK = ranges(["127.0.0.0/8", "::1/128"]);

/** RFC 6890 special-purpose blocks that are not the public Internet (loopback apart). */
const NON_PUBLIC = ranges([
  "0.0.0.0/8", // "this network", unspecified
  "10.0.0.0/8", // RFC 1918
  "100.64.0.0/10", // RFC 6598 shared address space (CGNAT; Alibaba's metadata service)
  "169.254.0.0/16", // link-local, 169.254.169.254 metadata services
  "172.16.0.0/12", // RFC 1918
  "192.0.0.0/24", // IETF protocol assignments
  "192.168.0.0/16", // RFC 1918
  "198.18.0.0/15", // benchmarking
  "224.0.0.0/4", // multicast
  "240.0.0.0/4", // reserved, broadcast
  "::/128", // unspecified
  "100::/64", // discard-only
  "fc00::/7", // unique-local (fd00:ec2::254 is a metadata service)
  "fe80::/10", // link-local
  "fec0::/10", // site-local (deprecated)
  "ff00::/8", // multicast
]);

/** IPv6 blocks that carry an IPv4 address in their low 32 bits (mapped is handled by `inRange`). */
const EMBEDS_IPV4_LOW = ranges(["::/96", "64:ff9b::/96", "64:ff9b:1::/48"]);

/** Names that are never the public Internet (RFC 6761 localhost, RFC 6762 .local, ICANN's .internal). */
const METADATA_NAMES = new Set(["metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal"]);
const PRIVATE_SUFFIXES = [".internal", ".local", ".localdomain", ".home.arpa", ".intranet", ".lan"];

/**
 * The WHATWG URL parser's IPv4 reading (decimal, `0x` hex and `0` octal parts; 1-4 parts, the last filling
 * the remaining bytes), so that every spelling of an address is checked as the address fetch would use.
 */
export function looseIpv4(host: string): bigint | null {
  const parts = host.split(".");
  if (parts[parts.length - 1] === "") parts.pop();
  if (parts.length < 1 || parts.length > 4) return null;
  const numbers: bigint[] = [];
  for (const part of parts) {
    let n: bigint;
    if (/^0[xX][0-9a-fA-F]*$/.test(part)) n = part.length === 2 ? 0n : BigInt(part);
    else if (/^0[0-7]+$/.test(part)) n = BigInt(`0o${part.slice(1)}`);
    else if (/^(0|[1-9]\d*)$/.test(part)) n = BigInt(part);
    else return null;
    numbers.push(n);
  }
  const last = numbers.pop() as bigint;
  if (numbers.some((n) => n > 255n) || last >= 256n ** BigInt(5 - parts.length)) return null;
  return numbers.reduce((value, n, i) => value + n * 256n ** BigInt(3 - i), last);
}

type Address = { family: 4 | 6; value: bigint };

/** The address a URL's hostname names, or null for a name. */
function addressOf(hostname: string): Address | null {
  if (hostname.startsWith("[") && hostname.endsWith("]")) {
    const v6 = parseIpv6(hostname.slice(1, -1));
    return v6 === null ? null : { family: 6, value: v6 };
  }
  const v4 = looseIpv4(hostname);
  return v4 === null ? null : { family: 4, value: v4 };
}

/** The IPv4 address an IPv6 address carries (compatible, NAT64, 6to4), else the address itself. */
function carried(address: Address): Address {
  if (address.family === 4) return address;
  if (EMBEDS_IPV4_LOW.some((r) => inRange(address, r))) return { family: 4, value: address.value & 0xffffffffn };
  if (address.value >> 112n === 0x2002n) return { family: 4, value: (address.value >> 80n) & 0xffffffffn };
  return address;
}

const isLoopbackAddress = (a: Address) => LOOPBACK.some((r) => inRange(a, r) || inRange(carried(a), r));
const isLoopbackName = (name: string) => name === "localhost" || name.endsWith(".localhost");

/** Whether a host (`hostname[:port]`) is one of the service's own, or a tenant subdomain of one. */
function isOwnHost(url: URL, hostname: string, address: Address | null, own: string): boolean {
  const ownUrl = new URL(`http://${own}`);
  const ownName = ownUrl.hostname.replace(/\.+$/, "");
  const ownAddress = addressOf(ownName);
  // A development issuer on a loopback host is told apart by its port (other local services stay reachable).
  if (isLoopbackName(ownName) || (ownAddress && isLoopbackAddress(ownAddress))) {
    const port = url.port || (url.protocol === "https:" ? "443" : "80");
    const loopback = isLoopbackName(hostname) || (address !== null && isLoopbackAddress(address));
    return loopback && port === (ownUrl.port || "80");
  }
  return hostname === ownName || hostname.endsWith(`.${ownName}`);
}

/**
 * Why a URL may not be reached under the policy, or null when it may. The reason names the host, never the
 * URL's path or query (which may carry a credential).
 */
export function egressRefusal(value: string, policy: EgressPolicy): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "it is not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "only http and https URLs can be reached";
  const hostname = url.hostname.toLowerCase().replace(/\.+$/, "");
  const address = addressOf(hostname);
  const refused = (what: string) => `${url.hostname} is ${what}, which this service does not send requests to`;
  if (policy.ownHosts.some((own) => isOwnHost(url, hostname, address, own))) return refused("this service's own host");
  if (address) {
    if (isLoopbackAddress(address)) return policy.allowLoopback ? null : refused("a loopback address");
    const embedded = carried(address);
    if (NON_PUBLIC.some((r) => inRange(address, r) || inRange(embedded, r))) return refused("a private, link-local, metadata or reserved address");
    return null;
  }
  if (isLoopbackName(hostname)) return policy.allowLoopback ? null : refused("a loopback name");
  if (METADATA_NAMES.has(hostname)) return refused("a cloud metadata service");
  if (!hostname.includes(".") || PRIVATE_SUFFIXES.some((s) => hostname.endsWith(s))) return refused("a private network name");
  return null;
}

/** A delivery refused by the policy: never retried into success, so destinations report it as it is. */
export class EgressRefused extends Error {
  override name = "EgressRefused";
}

/** Throws EgressRefused when the policy refuses the URL (the check before every delivery). */
export function assertEgress(value: string, policy: EgressPolicy): void {
  const reason = egressRefusal(value, policy);
  if (reason) throw new EgressRefused(`Refused by the egress policy: ${reason}`);
}
