import { describe, expect, it } from "vitest";
import { egressPolicyFrom, egressRefusal, looseIpv4 } from "../../../src/shared/egress-policy";

/** Issue 25 point 8: the address check of webhooks, log streams and back-channel logout (and later tenant code). */

const production = egressPolicyFrom({ ISSUER: "https://auth.gatehouse.example/" });
const development = egressPolicyFrom({ ISSUER: "http://localhost:8787/", ALLOW_LOOPBACK_EGRESS: "1" });

describe("egressRefusal", () => {
  it("allows public hosts and addresses", () => {
    for (const url of ["https://hooks.example.com/in", "http://93.184.216.34/x", "https://[2606:4700::1111]/", "https://logs.example.org:8443/a?b=c"]) {
      expect(egressRefusal(url, production), url).toBeNull();
    }
  });

  it("refuses loopback in every spelling with loopback off (production's default)", () => {
    const loopback = [
      "http://127.0.0.1/",
      "http://127.9.9.9:3000/",
      "http://2130706433/",
      "http://0177.0.0.1/",
      "http://0x7f.0.0.1/",
      "http://0x7f000001/",
      "http://127.1/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:7f00:1]/",
      "http://[0:0:0:0:0:ffff:7f00:1]/",
      "http://localhost/",
      "http://LOCALHOST./",
      "http://anything.localhost:3000/",
    ];
    for (const url of loopback) expect(egressRefusal(url, production), url).toMatch(/loopback/);
    expect(egressPolicyFrom({}).allowLoopback).toBe(false);
    expect(egressPolicyFrom({ ALLOW_LOOPBACK_EGRESS: "0" }).allowLoopback).toBe(false);
  });

  it("refuses private, shared, link-local, unique-local, unspecified, metadata and reserved addresses, loopback allowed or not", () => {
    const refused = [
      "http://10.0.0.1/",
      "http://167772161/", // 10.0.0.1
      "http://012.0.0.1/", // octal 10.0.0.1
      "http://172.16.5.4/",
      "http://172.31.255.255/",
      "http://192.168.1.1/",
      "http://100.64.0.1/",
      "http://100.100.100.200/",
      "http://169.254.169.254/latest/meta-data/",
      "http://0xa9fea9fe/", // 169.254.169.254
      "http://0.0.0.0/",
      "http://0/",
      "http://224.0.0.1/",
      "http://255.255.255.255/",
      "http://[::]/",
      "http://[fc00::1]/",
      "http://[fd00:ec2::254]/",
      "http://[fe80::1]/",
      "http://[ff02::1]/",
      "http://[::ffff:10.0.0.1]/",
      "http://[::ffff:169.254.169.254]/",
      "http://[64:ff9b::a9fe:a9fe]/",
      "http://[2002:a9fe:a9fe::1]/",
      "http://metadata.google.internal/computeMetadata/v1/",
      "http://metadata/",
      "http://db.internal/",
      "http://printer.local/",
      "http://intranet-host/",
    ];
    for (const url of refused) {
      expect(egressRefusal(url, production), url).not.toBeNull();
      expect(egressRefusal(url, development), url).not.toBeNull();
    }
  });

  it("refuses the service's own host and its tenant subdomains; in development, the issuer's port only", () => {
    expect(egressRefusal("https://auth.gatehouse.example/oauth/token", production)).toMatch(/own host/);
    expect(egressRefusal("https://acme.auth.gatehouse.example/api/v2/users", production)).toMatch(/own host/);
    expect(egressRefusal("https://gatehouse.example/", production)).toBeNull();
    expect(egressRefusal("http://localhost:8787/api/v2/users", development)).toMatch(/own host/);
    expect(egressRefusal("http://acme.localhost:8787/", development)).toMatch(/own host/);
    expect(egressRefusal("http://127.0.0.1:8787/", development)).toMatch(/own host/);
    expect(egressRefusal("http://127.0.0.1:43033/hook/x", development)).toBeNull();
    expect(egressRefusal("http://localhost:3000/hook", development)).toBeNull();
    expect(egressRefusal("http://[::1]:3000/hook", development)).toBeNull();
  });

  it("refuses what is not an http(s) URL, and never repeats the URL's path or query", () => {
    expect(egressRefusal("ftp://example.com/", production)).not.toBeNull();
    expect(egressRefusal("not a url", production)).not.toBeNull();
    expect(egressRefusal("http://10.0.0.1/hook?token=secret-token", production)).not.toContain("secret-token");
  });
});

describe("looseIpv4 (the URL parser's IPv4 forms)", () => {
  it("reads decimal, octal, hex and short forms as the same address", () => {
    for (const form of ["127.0.0.1", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7F000001", "127.1", "127.0.1", "0177.1", "127.0.0.1."]) {
      expect(looseIpv4(form), form).toBe(0x7f000001n);
    }
  });

  it("is null for names and out-of-range parts", () => {
    for (const form of ["example.com", "1.2.3.4.5", "256.0.0.1", "4294967296", "08.0.0.1", ""]) {
      expect(looseIpv4(form), form).toBeNull();
    }
  });
});
