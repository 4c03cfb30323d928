import { describe, expect, it } from "vitest";
import { isAllowedRedirect, matchesRegistered } from "../../../src/worker/oauth/authorize/redirect-uri";

describe("redirect URI matching (SPEC §5.9)", () => {
  it("exact registrations need the same scheme, host, port and path", () => {
    const reg = "https://app.example.com/callback";
    expect(matchesRegistered(reg, "https://app.example.com/callback")).toBe(true);
    expect(matchesRegistered(reg, "http://app.example.com/callback")).toBe(false);
    expect(matchesRegistered(reg, "https://app.example.com:8443/callback")).toBe(false);
    expect(matchesRegistered(reg, "https://evil.example.com/callback")).toBe(false);
    expect(matchesRegistered(reg, "https://app.example.com/callback/extra")).toBe(false);
    expect(matchesRegistered(reg, "https://app.example.com/Callback")).toBe(false);
    expect(matchesRegistered(reg, "https://app.example.com.evil.test/callback")).toBe(false);
  });

  it("exact registrations need the same query: every registered parameter, same value, nothing extra", () => {
    const reg = "https://app.example.com/cb?tenant=a&mode=x";
    expect(matchesRegistered(reg, "https://app.example.com/cb?mode=x&tenant=a")).toBe(true);
    expect(matchesRegistered(reg, "https://app.example.com/cb?tenant=a")).toBe(false);
    expect(matchesRegistered(reg, "https://app.example.com/cb?tenant=a&mode=x&extra=1")).toBe(false);
    expect(matchesRegistered(reg, "https://app.example.com/cb?tenant=b&mode=x")).toBe(false);
    expect(matchesRegistered("https://app.example.com/cb", "https://app.example.com/cb?injected=1")).toBe(false);
  });

  it("a path * matches any path run; the rest stays exact", () => {
    const reg = "https://app.example.com/callbacks/*";
    expect(matchesRegistered(reg, "https://app.example.com/callbacks/one")).toBe(true);
    expect(matchesRegistered(reg, "https://app.example.com/callbacks/a/b")).toBe(true);
    expect(matchesRegistered(reg, "https://app.example.com/other/one")).toBe(false);
    expect(matchesRegistered(reg, "https://other.example.com/callbacks/one")).toBe(false);
  });

  it("*. host wildcards need three labels and http(s), and match exactly one label", () => {
    const reg = "https://*.example.com/cb";
    expect(matchesRegistered(reg, "https://tenant1.example.com/cb")).toBe(true);
    expect(matchesRegistered(reg, "https://a.b.example.com/cb")).toBe(false);
    expect(matchesRegistered(reg, "https://example.com/cb")).toBe(false);
    expect(matchesRegistered(reg, "https://evilexample.com/cb")).toBe(false);
    expect(matchesRegistered("https://*.com/cb", "https://example.com/cb")).toBe(false);
    expect(matchesRegistered("myapp://*.example.com/cb", "myapp://a.example.com/cb")).toBe(false);
  });

  it("registered values cannot inject regular expressions", () => {
    expect(matchesRegistered("https://app.example.com/a.c/*", "https://app.example.com/abc/x")).toBe(false);
    expect(matchesRegistered("https://app.example.com/(x|y)/*", "https://app.example.com/x/z")).toBe(false);
    expect(matchesRegistered("https://app.example.com/(x|y)/*", "https://app.example.com/(x%7Cy)/z")).toBe(true);
  });

  it("fragments are never accepted; native custom schemes match exactly", () => {
    expect(matchesRegistered("https://app.example.com/cb", "https://app.example.com/cb#x")).toBe(false);
    expect(matchesRegistered("com.example.app:/oauth", "com.example.app:/oauth")).toBe(true);
  });

  it("the service's own issuer and login URLs are always accepted", () => {
    const issuer = "http://acme.localhost:8787/";
    expect(isAllowedRedirect([], "http://acme.localhost:8787/u2/info", issuer)).toBe(true);
    expect(isAllowedRedirect([], "http://acme.localhost:8787/", issuer)).toBe(true);
    expect(isAllowedRedirect([], "http://acme.localhost:8787/api/v2/users", issuer)).toBe(false);
    expect(isAllowedRedirect([], "http://other.localhost:8787/u2/info", issuer)).toBe(false);
  });
});
