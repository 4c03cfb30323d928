import { ManagementClient } from "auth0";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkFetchFor, sdkOptions } from "./helpers/auth0";

/**
 * Issue 28 point 4 end to end: the unmodified `auth0` SDK (7.x) against `wrangler dev` with the control plane's
 * management rate limit set low (3 requests per client per 3 s: MANAGEMENT_RATE_LIMIT_CLIENT and _PERIOD_SECONDS). The SDK's
 * own retry (requestWithRetries: Retry-After, then x-ratelimit-reset) waits out each 429 and every call
 * succeeds. The `fetch` option only maps the SDK's https URL to the local http server and records each answer.
 */
describe("management rate limits through the auth0 SDK", () => {
  let server: RunningServer;
  const answers: { path: string; status: number; retryAfter: string | null; reset: string | null; at: number }[] = [];

  beforeAll(async () => {
    server = await startServer({ vars: { MANAGEMENT_RATE_LIMIT_CLIENT: "3", MANAGEMENT_RATE_LIMIT_PERIOD_SECONDS: "3" } });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("backs off on 429 as the headers say and then succeeds", async () => {
    const mapped = sdkFetchFor(server);
    const recording = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const res = await mapped(input, init);
      const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
      if (url.pathname.startsWith("/api/v2/")) {
        answers.push({ path: url.pathname, status: res.status, retryAfter: res.headers.get("retry-after"), reset: res.headers.get("x-ratelimit-reset"), at: Date.now() });
      }
      return res;
    }) as typeof fetch;
    const admin = new ManagementClient({ ...sdkOptions(server), fetch: recording, clientId: server.clientId, clientSecret: server.clientSecret });

    const started = Date.now();
    const names: string[] = [];
    for (let i = 0; i < 6; i++) {
      const page = await admin.clients.list({ fields: "client_id,name", include_fields: true });
      names.push(...page.data.map((client) => String(client.name)));
    }
    // Six calls succeeded although only three fit in a window: the SDK met at least one 429 and waited.
    expect(names.length).toBeGreaterThanOrEqual(6);
    const refused = answers.filter((a) => a.status === 429);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(6);
    for (const r of refused) {
      expect(Number(r.retryAfter)).toBeGreaterThanOrEqual(1);
      expect(Number(r.retryAfter)).toBeLessThanOrEqual(3);
      // The retry came no earlier than the reset the 429 announced (seconds, so allow the rounding).
      const next = answers[answers.indexOf(r) + 1];
      expect(next).toBeDefined();
      expect(next?.at ?? 0).toBeGreaterThanOrEqual(Number(r.reset) * 1000 - 1000);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
  });
});
