import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../../src/worker/context";
import { managementRateLimit, policyFor } from "../../../src/worker/management/rate-limit";
import { errorSink } from "../../../src/worker/middleware/errors";

/** The management rate limit's configuration and its binding as the cross-isolate authority (issue 28 point 4). */
describe("management rate limit", () => {
  it("reads the defaults, the variables and the longest matching per-tenant override; bad values fall back", () => {
    expect(policyFor({}, "acme")).toEqual({ client: 1000, tenant: 5000, periodSeconds: 60 });
    const env = {
      MANAGEMENT_RATE_LIMIT_CLIENT: "200",
      MANAGEMENT_RATE_LIMIT_TENANT: "not a number",
      MANAGEMENT_RATE_LIMIT_PERIOD_SECONDS: "10",
      MANAGEMENT_RATE_LIMIT_TENANTS: JSON.stringify({ "big-*": { client: 5000 }, "big-one": { tenant: 9000, period: -1 } }),
    };
    expect(policyFor(env, "acme")).toEqual({ client: 200, tenant: 5000, periodSeconds: 10 });
    expect(policyFor(env, "big-two")).toEqual({ client: 5000, tenant: 5000, periodSeconds: 10 });
    expect(policyFor(env, "big-one")).toEqual({ client: 200, tenant: 9000, periodSeconds: 10 });
    expect(policyFor({ MANAGEMENT_RATE_LIMIT_TENANTS: "{not json" }, "big-one")).toEqual({ client: 1000, tenant: 5000, periodSeconds: 60 });
  });

  /** A router with the middleware behind a stand-in for authentication. */
  function app(tenant: string) {
    const router = new Hono<AppEnv>();
    router.onError(errorSink("management"));
    router.use("*", async (c, next) => {
      c.set("tenant", { id: tenant } as never);
      c.set("auth", { clientId: "client-a", subject: "client-a@clients" } as never);
      await next();
    });
    router.use("*", managementRateLimit);
    router.get("/x", (c) => c.json({ ok: true }));
    return router;
  }

  it("refuses when the binding says no although this isolate still has room: 429, nothing left, a whole period to wait", async () => {
    const keys: string[] = [];
    const limiter = (success: boolean) => ({
      limit: async ({ key }: { key: string }) => {
        keys.push(key);
        return { success };
      },
    });
    const env = { MANAGEMENT_CLIENT_LIMITER: limiter(false), MANAGEMENT_TENANT_LIMITER: limiter(true) };
    const tenant = `unit-${crypto.randomUUID().slice(0, 8)}`;
    const res = await app(tenant).request("/x", {}, env);
    expect(res.status).toBe(429);
    expect(await res.json()).toMatchObject({ statusCode: 429, error: "Too Many Requests", errorCode: "too_many_requests" });
    expect(res.headers.get("x-ratelimit-limit")).toBe("1000");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(Number(res.headers.get("retry-after"))).toBe(60);
    expect(keys.sort()).toEqual([tenant, `${tenant}:client-a`].sort());
  });

  it("serves when the bindings agree, and a failing binding never refuses on its own", async () => {
    const tenant = `unit-${crypto.randomUUID().slice(0, 8)}`;
    const agree = { MANAGEMENT_CLIENT_LIMITER: { limit: async () => ({ success: true }) } };
    const ok = await app(tenant).request("/x", {}, agree);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-ratelimit-remaining")).toBe("999");
    const broken = { MANAGEMENT_CLIENT_LIMITER: { limit: async () => Promise.reject(new Error("binding unavailable")) } };
    const still = await app(tenant).request("/x", {}, broken);
    expect(still.status).toBe(200);
    expect(still.headers.get("x-ratelimit-remaining")).toBe("998");
  });
});
