import { describe, expect, it } from "vitest";
import { halfHash, mergeClaims } from "../../../src/worker/oauth/tokens/claims";

describe("server-computed claims (SPEC §6.2)", () => {
  it("custom claims can never override computed ones; collisions are dropped and reported", () => {
    const { claims, dropped } = mergeClaims(
      { sub: "auth0|real", scope: "openid", tenant_id: "acme", azp: "client-1" },
      { sub: "auth0|forged", tenant_id: "evil", nonce: "x", at_hash: "y", azp: "other", "https://example.com/role": "admin" },
    );
    expect(claims).toEqual({ sub: "auth0|real", scope: "openid", tenant_id: "acme", azp: "client-1", "https://example.com/role": "admin" });
    expect(dropped.sort()).toEqual(["at_hash", "azp", "nonce", "sub", "tenant_id"]);
  });

  it("allowAzp releases only azp", () => {
    const { claims, dropped } = mergeClaims({ sub: "s" }, { azp: "custom", sub: "forged" }, { allowAzp: true });
    expect(claims).toEqual({ sub: "s", azp: "custom" });
    expect(dropped).toEqual(["sub"]);
  });

  it("at_hash is the base64url left half of SHA-256 (OIDC Core §3.1.3.6); vectors computed with Python hashlib", async () => {
    expect(await halfHash("a")).toBe("ypeBEsobvcr6wjGzmiPcTQ");
    expect(await halfHash("jHkWEdUXMU1BwAsC4vtUsZwnNmYWWXn7E3Z9NHw7cSY")).toBe("0hhWmPrZUd4UHA9oiHiOdg");
  });
});
