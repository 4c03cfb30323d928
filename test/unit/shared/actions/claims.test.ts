import { describe, expect, it } from "vitest";
import { customClaims } from "../../../../src/shared/actions/claims";
import type { ActionCommand } from "../../../../src/shared/actions/sandbox";

const set = (target: "id_token" | "access_token", name: string, value: unknown): ActionCommand => ({ type: "claim", target, name, value: value as never });

describe("custom-claim rules (SPEC §6.2, the reference platform's restrictions)", () => {
  it("drops computed and restricted claims, keeps the rest, later values winning", () => {
    const { claims, dropped } = customClaims([set("access_token", "a", 1), set("access_token", "a", 2), set("access_token", "sub", "x"), set("access_token", "permissions", []), set("access_token", "roles", [])], "access_token");
    expect(claims).toEqual({ a: 2 });
    expect(dropped.map((d) => [d.claim, d.reason])).toEqual([["sub", "restricted"], ["permissions", "restricted"], ["roles", "restricted"]]);
  });

  it("releases azp only under unsafeAllowAzpCustomClaim", () => {
    const commands = [set("id_token", "azp", "x"), set("id_token", "aud", "y")];
    expect(customClaims(commands, "id_token").claims).toEqual({});
    const allowed = customClaims(commands, "id_token", { allowAzp: true });
    expect(allowed.claims).toEqual({ azp: "x" });
    expect(allowed.dropped.map((d) => d.claim)).toEqual(["aud"]);
  });

  it("refuses reserved namespaces, and non-namespaced claims on tokens for the management API", () => {
    const commands = [set("access_token", "https://auth0.com/x", 1), set("access_token", "https://tenant.webtask.run/y", 1), set("access_token", "plain", 1), set("access_token", "https://example.com/ok", 1)];
    expect(customClaims(commands, "access_token").claims).toEqual({ plain: 1, "https://example.com/ok": 1 });
    const system = customClaims(commands, "access_token", { systemAudience: true });
    expect(system.claims).toEqual({ "https://example.com/ok": 1 });
    expect(system.dropped.map((d) => d.reason)).toEqual(["reserved_namespace", "reserved_namespace", "not_namespaced"]);
  });

  it("stops at 100 KB of custom claims", () => {
    const big = "x".repeat(60 * 1024);
    const { claims, dropped } = customClaims([set("id_token", "https://e.com/a", big), set("id_token", "https://e.com/b", big)], "id_token");
    expect(Object.keys(claims)).toEqual(["https://e.com/a"]);
    expect(dropped).toEqual([{ claim: "https://e.com/b", target: "id_token", reason: "too_large" }]);
  });
});
