import { describe, expect, it } from "vitest";
import { allowlisted, DEFAULT_EGRESS_LIMITS, EGRESS_HEADERS, egressLimitsFrom, gatewayFetch } from "../../../../src/shared/actions/egress";

const policy = { allowLoopback: false, ownHosts: ["localhost:8787"] };
const props = { tenantId: "t", mark: "secret-mark", allowlist: null };

describe("the egress gateway (issue 32 point 1)", () => {
  it("refuses a request without the sandbox's mark (a raw socket or WebSocket of tenant code), before any network", async () => {
    for (const mark of [null, "", "secret-marK", "secret-mark-longer"]) {
      const headers: Record<string, string> = mark === null ? {} : { [EGRESS_HEADERS.mark]: mark };
      const res = await gatewayFetch(new Request("http://10.0.0.1/", { headers }), props, policy, DEFAULT_EGRESS_LIMITS);
      expect(res.status).toBe(403);
      expect(res.headers.get(EGRESS_HEADERS.refused)).toBe("Refused by the egress policy: outbound connections go through fetch only");
    }
  });

  it("refuses loopback when the deployment does not allow it, and a request body over the cap", async () => {
    const marked = { [EGRESS_HEADERS.mark]: props.mark };
    const loop = await gatewayFetch(new Request("http://127.0.0.1:9/", { headers: marked }), props, policy, DEFAULT_EGRESS_LIMITS);
    expect(loop.headers.get(EGRESS_HEADERS.refused)).toMatch(/127\.0\.0\.1 is a loopback address/);
    const big = await gatewayFetch(
      new Request("https://api.example.com/", { method: "POST", headers: marked, body: "x".repeat(2000) }),
      props,
      policy,
      { ...DEFAULT_EGRESS_LIMITS, maxRequestBytes: 1000 },
    );
    expect(big.status).toBe(413);
    expect(big.headers.get(EGRESS_HEADERS.refused)).toBe("Refused by the egress policy: the request body is larger than 1000 bytes");
  });

  it("matches allowlist entries exactly or as *. subdomains, never the apex of a wildcard or a lookalike", () => {
    const list = ["api.example.com", "*.partner.example"];
    expect(allowlisted("API.example.com.", list)).toBe(true);
    expect(allowlisted("eu.partner.example", list)).toBe(true);
    expect(allowlisted("partner.example", list)).toBe(false);
    expect(allowlisted("evilpartner.example", list)).toBe(false);
    expect(allowlisted("api.example.com.evil.test", list)).toBe(false);
  });

  it("reads its limits from the deployment's variables; a request never outlasts the run", () => {
    expect(egressLimitsFrom({})).toEqual(DEFAULT_EGRESS_LIMITS);
    expect(egressLimitsFrom({ ACTIONS_EGRESS_MAX_REQUESTS: "5", ACTIONS_EGRESS_MAX_BYTES: "2048" })).toMatchObject({ maxRequests: 5, maxResponseBytes: 2048 });
    expect(egressLimitsFrom({ ACTIONS_TIMEOUT_MS: "1500" }).timeoutMs).toBe(1250);
    expect(egressLimitsFrom({ ACTIONS_EGRESS_MAX_REQUESTS: "-1" }).maxRequests).toBe(20);
  });
});
