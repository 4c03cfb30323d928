import { describe, expect, it } from "vitest";
import { isAllowlisted, isIpOrRange, parseIpRange, parseIpv4, parseIpv6 } from "../../../src/shared/ip";

describe("parseIpv4", () => {
  it("reads dotted quads with octets 0-255", () => {
    expect(parseIpv4("0.0.0.0")).toBe(0n);
    expect(parseIpv4("255.255.255.255")).toBe(0xffffffffn);
    expect(parseIpv4("192.0.2.1")).toBe(0xc0000201n);
  });

  it("refuses out-of-range octets, wrong counts, leading zeros and signs", () => {
    for (const bad of ["999.999.999.999", "256.0.0.1", "1.2.3", "1.2.3.4.5", "01.2.3.4", "1.2.3.-4", "1.2.3.4 ", "", "a.b.c.d", "1..2.3"]) {
      expect(parseIpv4(bad), bad).toBeNull();
    }
  });
});

describe("parseIpv6", () => {
  it("reads full, compressed and mixed forms as the same number", () => {
    const expected = 0x20010db8000000000000000000000001n;
    expect(parseIpv6("2001:db8::1")).toBe(expected);
    expect(parseIpv6("2001:0DB8:0000:0000:0000:0000:0000:0001")).toBe(expected);
    expect(parseIpv6("2001:db8:0:0:0:0:0:1")).toBe(expected);
    expect(parseIpv6("::")).toBe(0n);
    expect(parseIpv6("::1")).toBe(1n);
    expect(parseIpv6("1:2:3:4:5:6:7::")).toBe(0x00010002000300040005000600070000n);
    expect(parseIpv6("::ffff:192.0.2.1")).toBe(0xffffc0000201n);
    expect(parseIpv6("64:ff9b::192.0.2.33")).toBe(0x0064ff9b0000000000000000c0000221n);
  });

  it("refuses garbage: several ::, too many or too few groups, bad hex, bad embedded IPv4, zones", () => {
    for (const bad of [":::::", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8::", "12345::", "g::1", ":1:2:3:4:5:6:7", "1:2:3:4:5:6:7:", "::1.2.3.999", "1.2.3.4::", "fe80::1%eth0", ""]) {
      expect(parseIpv6(bad), bad).toBeNull();
    }
  });
});

describe("allowlist entries", () => {
  it("accepts the four forms: ipv4, ipv4 cidr, ipv6, ipv6 cidr", () => {
    for (const good of ["198.51.100.7", "192.0.2.0/24", "0.0.0.0/0", "10.0.0.1/32", "2001:db8::/32", "2001:db8::1", "::/0", "::1/128", "::ffff:10.0.0.0/104"]) {
      expect(isIpOrRange(good), good).toBe(true);
    }
    expect(parseIpRange("2001:db8::/32")).toEqual({ family: 6, value: 0x20010db8000000000000000000000000n, prefix: 32 });
    expect(parseIpRange("198.51.100.7")).toEqual({ family: 4, value: 0xc6336407n, prefix: 32 });
  });

  it("refuses bad addresses and prefixes out of range for the family", () => {
    for (const bad of ["999.999.999.999/99", ":::::", "192.0.2.0/33", "2001:db8::/129", "192.0.2.0/", "192.0.2.0/024", "192.0.2.0/-1", "/24", "2001:db8::/3x", "10.0.0.0/8/8", "not an ip"]) {
      expect(isIpOrRange(bad), bad).toBe(false);
    }
  });
});

describe("isAllowlisted", () => {
  it("matches IPv4 addresses and CIDR ranges", () => {
    expect(isAllowlisted("192.0.2.77", ["192.0.2.0/24"])).toBe(true);
    expect(isAllowlisted("192.0.3.1", ["192.0.2.0/24"])).toBe(false);
    expect(isAllowlisted("203.0.113.9", ["0.0.0.0/0"])).toBe(true);
    expect(isAllowlisted("198.51.100.7", ["198.51.100.7"])).toBe(true);
    expect(isAllowlisted("198.51.100.8", ["198.51.100.7"])).toBe(false);
  });

  it("compares IPv6 numerically, whatever the spelling, with CIDR containment", () => {
    expect(isAllowlisted("2001:0db8:0000:0000:0000:0000:0000:0001", ["2001:db8::1"])).toBe(true);
    expect(isAllowlisted("2001:DB8::1", ["2001:db8::1"])).toBe(true);
    expect(isAllowlisted("2001:db8:ffff::42", ["2001:db8::/32"])).toBe(true);
    expect(isAllowlisted("2001:db9::1", ["2001:db8::/32"])).toBe(false);
    expect(isAllowlisted("2001:db8::1", ["::/0"])).toBe(true);
  });

  it("keeps the families apart, except IPv4-mapped IPv6 addresses, which are their IPv4 address", () => {
    expect(isAllowlisted("::1", ["0.0.0.0/0"])).toBe(false);
    expect(isAllowlisted("192.0.2.1", ["2001:db8::/32"])).toBe(false);
    expect(isAllowlisted("::ffff:192.0.2.1", ["192.0.2.0/24"])).toBe(true);
    expect(isAllowlisted("192.0.2.1", ["::ffff:192.0.2.0/120"])).toBe(true);
  });

  it("never matches an unparsable client IP or a stored entry that does not parse", () => {
    expect(isAllowlisted("not-an-ip", ["0.0.0.0/0", "::/0"])).toBe(false);
    expect(isAllowlisted("1.2.3.4", ["999.999.999.999/99", ":::::"])).toBe(false);
  });
});
