/**
 * IP addresses and CIDR ranges for attack-protection allowlists (the reference platform accepts an IPv4
 * address, an IPv4 CIDR, an IPv6 address or an IPv6 CIDR). One parser serves both the management API's
 * validation and the login path's matching, so an entry that is accepted is an entry that matches.
 */

/** An address or network: its family, its value as a 32- or 128-bit integer, and its prefix length. */
export interface IpRange {
  family: 4 | 6;
  value: bigint;
  prefix: number;
}

const BITS = { 4: 32, 6: 128 } as const;

/**
 * A dotted-quad IPv4 address as a 32-bit integer, or null. Octets are decimal 0-255 without leading zeros
 * (`010` is octal to some parsers, so it is refused rather than guessed).
 */
export function parseIpv4(text: string): bigint | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0n;
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part) || Number(part) > 255) return null;
    value = (value << 8n) | BigInt(part);
  }
  return value;
}

/** Hex groups of an IPv6 address part (no `::`), the last of which may be an embedded IPv4 address. */
function groups(part: string, allowIpv4Tail: boolean): number[] | null {
  if (part === "") return [];
  const out: number[] = [];
  const pieces = part.split(":");
  for (const [i, piece] of pieces.entries()) {
    if (allowIpv4Tail && i === pieces.length - 1 && piece.includes(".")) {
      const v4 = parseIpv4(piece);
      if (v4 === null) return null;
      out.push(Number(v4 >> 16n), Number(v4 & 0xffffn));
    } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
      out.push(Number.parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return out;
}

/**
 * An IPv6 address (RFC 4291 §2.2: eight hex groups, one `::` for a run of zero groups, optionally an IPv4
 * address in the last 32 bits) as a 128-bit integer, or null. Zone identifiers (`%eth0`) are not addresses.
 */
export function parseIpv6(text: string): bigint | null {
  if (text.length > 45) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  let all: number[];
  if (halves.length === 2) {
    const head = groups(halves[0] as string, false);
    const tail = groups(halves[1] as string, true);
    if (!head || !tail || head.length + tail.length > 7) return null;
    all = [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  } else {
    const only = groups(text, true);
    if (only?.length !== 8) return null;
    all = only;
  }
  return all.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

/** An address of either family, or null. */
export function parseIp(text: string): { family: 4 | 6; value: bigint } | null {
  const v4 = parseIpv4(text);
  if (v4 !== null) return { family: 4, value: v4 };
  const v6 = parseIpv6(text);
  return v6 === null ? null : { family: 6, value: v6 };
}

/**
 * An allowlist entry: an address (a range of one: prefix 32 or 128) or `address/prefix` with a decimal
 * prefix of 0-32 for IPv4 and 0-128 for IPv6. Null when the entry is neither.
 */
export function parseIpRange(entry: string): IpRange | null {
  const slash = entry.indexOf("/");
  const address = parseIp(slash === -1 ? entry : entry.slice(0, slash));
  if (!address) return null;
  if (slash === -1) return { ...address, prefix: BITS[address.family] };
  const prefixText = entry.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  return prefix > BITS[address.family] ? null : { ...address, prefix };
}

/** Whether the text is a valid allowlist entry (address or CIDR range of either family). */
export const isIpOrRange = (entry: string): boolean => parseIpRange(entry) !== null;

/** An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`, RFC 4291 §2.5.5.2) is the IPv4 address it carries. */
function unmapped(address: { family: 4 | 6; value: bigint }): { family: 4 | 6; value: bigint } {
  return address.family === 6 && address.value >> 32n === 0xffffn ? { family: 4, value: address.value & 0xffffffffn } : address;
}

/** Whether an address lies in a range: same family, and equal in the range's first `prefix` bits. */
export function inRange(address: { family: 4 | 6; value: bigint }, range: IpRange): boolean {
  const ip = unmapped(address);
  const net = range.family === 6 && range.prefix >= 96 ? unmappedRange(range) : range;
  if (ip.family !== net.family) return false;
  const shift = BigInt(BITS[net.family] - net.prefix);
  return ip.value >> shift === net.value >> shift;
}

/** A range inside `::ffff:0:0/96` is the IPv4 range it maps. */
function unmappedRange(range: IpRange): IpRange {
  const base = unmapped(range);
  return base.family === 4 ? { family: 4, value: base.value, prefix: range.prefix - 96 } : range;
}

/**
 * Whether a client IP is on an allowlist of addresses and CIDR ranges of either family, compared as
 * numbers (so `2001:db8::1` and `2001:0DB8:0:0:0:0:0:1` are the same address). Entries that do not parse
 * (stored before validation was strict) match nothing.
 */
export function isAllowlisted(ip: string, allowlist: readonly string[]): boolean {
  const address = parseIp(ip);
  if (!address) return false;
  return allowlist.some((entry) => {
    const range = parseIpRange(entry);
    return range !== null && inRange(address, range);
  });
}
