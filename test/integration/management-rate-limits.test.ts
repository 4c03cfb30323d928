import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient } from "../helpers/flows";
import { mintWithTenantKey } from "../helpers/mint";
import { createUser, DB } from "../helpers/users";

/**
 * Issue 28 point 4: the management API's rate limits. vitest.config.ts sets MANAGEMENT_RATE_LIMIT_TENANTS so
 * tenants named `rl-*` get 3 requests per client and 5 per tenant in a 3-second window; every other tenant
 * keeps the generous defaults (1000 per client, 5000 per tenant, per 60 s).
 */
const clientToken = (tenant: string, clientId: string) =>
  mintWithTenantKey(tenant, {
    iss: `http://${tenant}.localhost:8787/`,
    aud: CP.audience,
    sub: `${clientId}@clients`,
    azp: clientId,
    gty: "client-credentials",
    scope: "read:clients",
  });

const headersOf = (res: Response) => ({
  limit: Number(res.headers.get("x-ratelimit-limit")),
  remaining: Number(res.headers.get("x-ratelimit-remaining")),
  reset: Number(res.headers.get("x-ratelimit-reset")),
});

describe("management API rate limits", () => {
  it("every answer carries the limit, what remains and the reset as UNIX seconds; over the limit 429 with Retry-After", async () => {
    const tenant = await createTenant(uniqueId("rl"));
    const token = await clientToken(tenant, "client-a");
    const before = Math.floor(Date.now() / 1000);
    const seen = [];
    for (let i = 0; i < 3; i++) {
      const res = await mgmt("GET", "/clients", { token });
      expect(res.status).toBe(200);
      seen.push(headersOf(res));
    }
    expect(seen.map((h) => h.limit)).toEqual([3, 3, 3]);
    expect(seen.map((h) => h.remaining)).toEqual([2, 1, 0]);
    for (const h of seen) {
      expect(Number.isInteger(h.reset)).toBe(true);
      expect(h.reset).toBeGreaterThanOrEqual(before);
      expect(h.reset).toBeLessThanOrEqual(before + 4);
    }
    const refused = await mgmt("GET", "/clients", { token });
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ statusCode: 429, error: "Too Many Requests", errorCode: "too_many_requests", message: expect.stringMatching(/client/) });
    expect(headersOf(refused)).toMatchObject({ limit: 3, remaining: 0, reset: seen[0]?.reset });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3);
  });

  it("the window resets: after x-ratelimit-reset the same client is served again", async () => {
    const tenant = await createTenant(uniqueId("rl"));
    const token = await clientToken(tenant, "client-a");
    for (let i = 0; i < 3; i++) expect((await mgmt("GET", "/clients", { token })).status).toBe(200);
    const refused = await mgmt("GET", "/clients", { token });
    expect(refused.status).toBe(429);
    const reset = Number(refused.headers.get("x-ratelimit-reset"));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, reset * 1000 - Date.now()) + 50));
    const again = await mgmt("GET", "/clients", { token });
    expect(again.status).toBe(200);
    expect(headersOf(again)).toMatchObject({ limit: 3, remaining: 2 });
    expect(headersOf(again).reset).toBeGreaterThan(reset - 1);
  });

  it("limits each client on its own, and all clients of a tenant together; another tenant is unaffected", async () => {
    const tenant = await createTenant(uniqueId("rl"));
    const other = await createTenant(uniqueId("rl"));
    const a = await clientToken(tenant, "client-a");
    const b = await clientToken(tenant, "client-b");
    for (let i = 0; i < 3; i++) expect((await mgmt("GET", "/clients", { token: a })).status).toBe(200);
    expect((await mgmt("GET", "/clients", { token: a })).status).toBe(429);
    // Client b has its own window: served, and its headers show the tighter limit (2 left for the tenant).
    const first = await mgmt("GET", "/clients", { token: b });
    expect(first.status).toBe(200);
    expect(headersOf(first)).toMatchObject({ limit: 5, remaining: 1 });
    expect((await mgmt("GET", "/clients", { token: b })).status).toBe(200);
    // The tenant's 5 are spent: b is refused although its own window has one left.
    const tenantWide = await mgmt("GET", "/clients", { token: b });
    expect(tenantWide.status).toBe(429);
    expect(await tenantWide.json()).toMatchObject({ statusCode: 429, errorCode: "too_many_requests", message: expect.stringMatching(/^Global limit has been reached/) });
    expect(headersOf(tenantWide)).toMatchObject({ limit: 5, remaining: 0 });
    // The other tenant, even through a client of the same name, starts with a full window.
    const elsewhere = await mgmt("GET", "/clients", { token: await clientToken(other, "client-a") });
    expect(elsewhere.status).toBe(200);
    expect(headersOf(elsewhere)).toMatchObject({ limit: 3, remaining: 2 });
  });

  it("a browser on an allowed origin may read the headers (CORS exposes them)", async () => {
    const tenant = await createTenant();
    const origin = "https://admin-console.example.com";
    await seedClient(tenant, { web_origins: [origin] });
    const res = await mgmt("GET", "/clients", { token: await clientToken(tenant, "client-a"), headers: { origin }, host: `${tenant}.localhost:8787` });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    const exposed = (res.headers.get("access-control-expose-headers") ?? "").toLowerCase().split(/,\s*/);
    expect(exposed).toEqual(expect.arrayContaining(["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"]));
  });

  it("a tenant without an override has the generous defaults, on errors as on successes", async () => {
    const tenant = await createTenant();
    const token = await clientToken(tenant, "client-a");
    const ok = await mgmt("GET", "/clients", { token });
    expect(ok.status).toBe(200);
    expect(headersOf(ok)).toMatchObject({ limit: 1000, remaining: 999 });
    const notFound = await mgmt("GET", "/clients/no-such-client", { token });
    expect(notFound.status).toBe(404);
    expect(headersOf(notFound)).toMatchObject({ limit: 1000, remaining: 998 });
  });
  it("an end user's token is limited as that user, not as its application; end users together have a window of their own, never the administrators'", async () => {
    const tenant = await createTenant(uniqueId("rl"));
    const user = (email: string) => createUser(tenant, { connection: DB, email, password: "Sufficient-Pw-1" });
    const [alice, bob] = [await user("alice@example.com"), await user("bob@example.com")];
    // Let the window of the two creations above end, so every count below starts from zero.
    await new Promise((resolve) => setTimeout(resolve, 3100));
    const userToken = (sub: string) =>
      mintWithTenantKey(tenant, { iss: `http://${tenant}.localhost:8787/`, aud: CP.audience, sub, gty: undefined, azp: "the-spa", scope: "read:current_user" });
    const asUser = async (user: { user_id: string }) =>
      mgmt("GET", `/users/${encodeURIComponent(user.user_id)}`, { token: await userToken(user.user_id), host: `${tenant}.localhost:8787` });
    for (let i = 0; i < 3; i++) expect((await asUser(alice)).status).toBe(200);
    const refused = await asUser(alice);
    expect(refused.status).toBe(429);
    expect(await refused.json()).toMatchObject({ errorCode: "too_many_requests", message: expect.stringMatching(/client/) });
    // Bob came through the same application: his own window, not what Alice left of the application's.
    const bobs = [await asUser(bob), await asUser(bob)];
    expect(bobs.map((r) => r.status)).toEqual([200, 200]);
    // Five end-user calls served: the end users' window (the tenant's size, 5) is spent, Bob's own is not.
    const spent = await asUser(bob);
    expect(spent.status).toBe(429);
    expect(await spent.json()).toMatchObject({ errorCode: "too_many_requests", message: expect.stringMatching(/^Global limit has been reached/) });
    // None of it counted against the tenant's own window: an administrator's client is served in full.
    const admin = await mgmt("GET", "/clients", { token: await clientToken(tenant, "client-a") });
    expect(admin.status).toBe(200);
    expect(headersOf(admin)).toMatchObject({ limit: 3, remaining: 2 });
  });
});
