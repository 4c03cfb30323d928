import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../../src/worker/context";
import { authRateLimit } from "../../../src/worker/middleware/auth-rate-limit";
import { errorSink } from "../../../src/worker/middleware/errors";
import { policyFor } from "../../../src/worker/management/rate-limit";
import { AUTH_DEFAULTS } from "../../../src/worker/middleware/auth-rate-limit";

/** Issue 31 point 4: the authentication endpoints' per-tenant limit and the overload answer (docs/capacity.md). */
describe("authentication overload answers", () => {
  function app(tenant: string, fail?: Error) {
    const router = new Hono<AppEnv>();
    router.onError(errorSink("oauth"));
    router.use("*", async (c, next) => {
      c.set("tenant", { id: tenant } as never);
      await next();
    });
    router.use("*", authRateLimit);
    router.post("/oauth/token", (c) => {
      if (fail) throw fail;
      return c.json({ ok: true });
    });
    return router;
  }

  it("reads its own variables: a generous default, the environment, per-tenant overrides", () => {
    expect(policyFor({}, "acme", "AUTH_RATE_LIMIT", AUTH_DEFAULTS).tenant).toBe(120_000);
    const env = { AUTH_RATE_LIMIT_TENANT: "6000", AUTH_RATE_LIMIT_PERIOD_SECONDS: "10", AUTH_RATE_LIMIT_TENANTS: JSON.stringify({ "big-*": { tenant: 600000 } }) };
    expect(policyFor(env, "acme", "AUTH_RATE_LIMIT", AUTH_DEFAULTS)).toMatchObject({ tenant: 6000, periodSeconds: 10 });
    expect(policyFor(env, "big-one", "AUTH_RATE_LIMIT", AUTH_DEFAULTS)).toMatchObject({ tenant: 600000, periodSeconds: 10 });
    // The management API's own variables do not leak into it.
    expect(policyFor({ MANAGEMENT_RATE_LIMIT_TENANT: "5" }, "acme", "AUTH_RATE_LIMIT", AUTH_DEFAULTS).tenant).toBe(120_000);
  });

  it("refuses with 429 and a whole period's Retry-After when the binding says no although this isolate has room", async () => {
    const keys: string[] = [];
    const limit = async ({ key }: { key: string }) => {
      keys.push(key);
      return { success: false };
    };
    const env = { AUTH_TENANT_LIMITER: { limit } };
    const tenant = `unit-${crypto.randomUUID().slice(0, 8)}`;
    const res = await app(tenant).request("/oauth/token", { method: "POST" }, env);
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ error: "too_many_requests" });
    expect(res.headers.get("retry-after")).toBe("60");
    expect(keys).toEqual([tenant]);
  });

  it("answers an overloaded tenant object with 429 and Retry-After, not a 500", async () => {
    const overloaded = Object.assign(new Error("Durable Object is overloaded. Too many requests queued."), { overloaded: true, retryable: false });
    const res = await app(`unit-${crypto.randomUUID().slice(0, 8)}`, overloaded).request("/oauth/token", { method: "POST" }, {});
    expect(res.status).toBe(429);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(await res.json()).toMatchObject({ error: "too_many_requests" });
    // Anything else unexpected stays a 500 server_error.
    const bug = await app(`unit-${crypto.randomUUID().slice(0, 8)}`, new Error("bug")).request("/oauth/token", { method: "POST" }, {});
    expect(bug.status).toBe(500);
  });
});
