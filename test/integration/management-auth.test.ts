import { env } from "cloudflare:test";
import { generateKeyPair, SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/worker/app";
import { BASE, CP, call, createTenant, mgmt, token, uniqueId } from "../helpers/api";
import { mintWithTenantKey } from "../helpers/mint";

async function expectError(res: Response, status: number, message?: RegExp) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String), errorCode: expect.any(String) });
  expect(body.error_description).toBe(body.message);
  if (message) expect(body.message).toMatch(message);
}

async function ccToken(scope?: string): Promise<string> {
  const res = await token({ grant_type: "client_credentials", client_id: CP.clientId, client_secret: CP.clientSecret, audience: CP.audience, scope });
  return ((await res.json()) as { access_token: string }).access_token;
}

const ctx = { waitUntil() {}, passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
const listWith = (app: ReturnType<typeof createApp>, jwt: string) =>
  app.fetch(new Request(`${BASE}/api/v2/tenants`, { headers: { authorization: `Bearer ${jwt}` } }), env, ctx);

const cpClaims = { iss: CP.issuer, aud: CP.audience, scope: "read:tenants" };

describe("management authentication (SPEC §5.1-5.4)", () => {
  it("no bearer token is 401, a malformed header is 401", async () => {
    await expectError(await mgmt("GET", "/tenants", { token: "" }), 401, /Missing authentication/);
    await expectError(await call("/api/v2/tenants", { headers: { authorization: "Basic abc" } }), 401);
    await expectError(await call("/api/v2/tenants", { headers: { authorization: "Bearer" } }), 401);
  });

  it("an invalid, tampered or foreign-signed token is 403", async () => {
    await expectError(await mgmt("GET", "/tenants", { token: "abc.def.ghi" }), 403, /Invalid token/);
    const real = await ccToken("read:tenants");
    const [h, p, s] = real.split(".");
    const claims = JSON.parse(atob((p ?? "").replace(/-/g, "+").replace(/_/g, "/")));
    const body = btoa(JSON.stringify({ ...claims, scope: "read:tenants create:tenants" })).replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_");
    await expectError(await mgmt("POST", "/tenants", { token: `${h}.${body}.${s}`, body: { id: uniqueId() } }), 403, /Invalid token/);
    const { privateKey } = await generateKeyPair("RS256");
    const forged = await new SignJWT({ tenant_id: CP.tenantId, scope: "read:tenants" })
      .setProtectedHeader({ alg: "RS256", kid: "x" })
      .setIssuer(CP.issuer)
      .setAudience(CP.audience)
      .setExpirationTime("1h")
      .sign(privateKey);
    await expectError(await mgmt("GET", "/tenants", { token: forged }), 403);
  });

  it("an expired token, a wrong audience or a wrong issuer is 403", async () => {
    expect((await mgmt("GET", "/tenants", { token: await mintWithTenantKey(CP.tenantId, cpClaims) })).status).toBe(200);
    await expectError(await mgmt("GET", "/tenants", { token: await mintWithTenantKey(CP.tenantId, cpClaims, Math.floor(Date.now() / 1000) - 60) }), 403);
    await expectError(await mgmt("GET", "/tenants", { token: await mintWithTenantKey(CP.tenantId, { ...cpClaims, aud: "https://api.example.com/" }) }), 403);
    await expectError(await mgmt("GET", "/tenants", { token: await mintWithTenantKey(CP.tenantId, { ...cpClaims, iss: "https://evil.example/" }) }), 403);
  });

  it("a missing scope is 403 with the expected scope named", async () => {
    const readOnly = await ccToken("read:tenants");
    await expectError(await mgmt("POST", "/tenants", { token: readOnly, body: { id: uniqueId() } }), 403, /create:tenants/);
    expect((await mgmt("GET", "/tenants", { token: readOnly })).status).toBe(200);
  });

  it("unknown management routes are refused (401 without a token, 404 with one)", async () => {
    expect((await mgmt("GET", "/nothing-here", { token: "" })).status).toBe(401);
    expect((await mgmt("GET", "/nothing-here")).status).toBe(404);
  });

  it("cross-tenant management needs a control-plane token", async () => {
    const child = await createTenant();
    const other = await createTenant();
    // The control plane may act on a child through the tenant-id header or the child's subdomain.
    expect((await mgmt("GET", `/tenants/${child}`, { headers: { "tenant-id": child } })).status).toBe(200);
    expect((await mgmt("GET", `/tenants/${child}`, { host: `${child}.localhost:8787` })).status).toBe(200);
    const childToken = await mintWithTenantKey(child, { iss: `http://${child}.localhost:8787/`, aud: CP.audience, scope: "read:tenants" });
    // The child's own token works on its own tenant ...
    const own = await mgmt("GET", "/tenants", { token: childToken });
    expect(own.status).toBe(200);
    expect(((await own.json()) as { id: string }[]).map((t) => t.id)).toEqual([child]);
    // ... and is refused on any other.
    await expectError(await mgmt("GET", "/tenants", { token: childToken, headers: { "tenant-id": other } }), 403, /^Cross-tenant management requires a control-plane token$/);
    await expectError(await mgmt("GET", `/tenants/${other}`, { token: childToken }), 403, /Cross-tenant/);
  });

  it("an unknown tenant-id header is 404 Tenant not found", async () => {
    await expectError(await mgmt("GET", "/tenants", { headers: { "tenant-id": "no-such-tenant" } }), 404, /^Tenant not found$/);
  });

  it("additionalIssuers / additionalManagementAudiences widen the check only when configured", async () => {
    const legacyIssuer = await mintWithTenantKey(CP.tenantId, { ...cpClaims, iss: "https://legacy.example/" });
    const legacyAudience = await mintWithTenantKey(CP.tenantId, { ...cpClaims, aud: "https://legacy.example/api/v2/" });
    const strict = createApp();
    const refusing = createApp({ additionalIssuers: () => [], additionalManagementAudiences: () => [] });
    const seen: string[] = [];
    const wide = createApp({
      additionalIssuers: (tenantId) => {
        seen.push(tenantId);
        return ["https://legacy.example/"];
      },
      additionalManagementAudiences: () => ["https://legacy.example/api/v2/"],
    });
    expect((await listWith(strict, legacyIssuer)).status).toBe(403);
    expect((await listWith(strict, legacyAudience)).status).toBe(403);
    expect((await listWith(refusing, legacyIssuer)).status).toBe(403);
    expect((await listWith(wide, legacyIssuer)).status).toBe(200);
    expect((await listWith(wide, legacyAudience)).status).toBe(200);
    expect(seen).toContain(CP.tenantId);
  });
});
