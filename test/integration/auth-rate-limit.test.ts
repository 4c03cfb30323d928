import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, uniqueId } from "../helpers/api";
import { seedClient, type TestClient, tokenForm } from "../helpers/flows";

/**
 * Issue 31 point 4: past its capacity a tenant answers its authentication endpoints with 429
 * `too_many_requests` and `Retry-After`, never a timeout. vitest.config.ts gives tenants named `arl-*` 4
 * requests per 3 s (AUTH_RATE_LIMIT_TENANTS); the default elsewhere is 120,000 per minute.
 */

let limited: string;
let other: string;
let client: TestClient;

const host = (tenant: string) => `${tenant}.localhost:8787`;
const badToken = (tenant: string, clientId: string) => tokenForm({ grant_type: "client_credentials", client_id: clientId, client_secret: "wrong" }, {}, host(tenant));

beforeAll(async () => {
  limited = await createTenant(uniqueId("arl"));
  other = await createTenant(uniqueId("t"));
  client = await seedClient(limited, { grant_types: ["client_credentials"] });
});

describe("authentication endpoints: per-tenant limit", () => {
  it("answers 429 too_many_requests with Retry-After past the limit, counting every authentication request; discovery and JWKS are not counted", async () => {
    // Not counted: the well-known documents (they never reach the tenant's object).
    for (let i = 0; i < 6; i++) expect((await call("/.well-known/openid-configuration", { host: host(limited) })).status).toBe(200);
    // Counted whatever their answer: a refused client authentication is work for the tenant too.
    for (let i = 0; i < 4; i++) expect((await badToken(limited, client.client_id)).status).toBe(401);
    const refused = await badToken(limited, client.client_id);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(3);
    const body = (await refused.json()) as { error: string; error_description: string };
    expect(body.error).toBe("too_many_requests");
    expect(body.error_description).toContain("4 per 3 s");
    // The login pages share the tenant's window.
    const page = await call(`/authorize?client_id=${client.client_id}&response_type=code&redirect_uri=https://app.example.com/callback`, { host: host(limited), redirect: "manual" });
    expect(page.status).toBe(429);
    expect(page.headers.get("retry-after")).not.toBeNull();
    // JWKS still answers: the limit protects the object, not the cacheable documents.
    expect((await call("/.well-known/jwks.json", { host: host(limited) })).status).toBe(200);
  });

  it("limits one tenant without touching another", async () => {
    const otherClient = await seedClient(other, { grant_types: ["client_credentials"] });
    for (let i = 0; i < 8; i++) expect((await badToken(other, otherClient.client_id)).status).toBe(401);
  });

  it("opens again once the window has passed", async () => {
    await new Promise((resolve) => setTimeout(resolve, 3_100));
    expect((await badToken(limited, client.client_id)).status).toBe(401);
  });
});
