import { env, runInDurableObject } from "cloudflare:test";
import { decodeProtectedHeader, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { CP, call, createTenant, mgmt, token } from "../helpers/api";
import { authorize, redirectParams, seedUser, sessionCookie } from "../helpers/flows";
import { createClient, grantClient } from "../helpers/management";
import { mintWithTenantKey } from "../helpers/mint";
import { relay } from "../helpers/outbox";
import { expectReachability } from "../helpers/reach";
import { hostOf, issueToken, issuerOf, jwks, listKeys, m2mClient, onTenant, verifyWithJwks } from "../helpers/keys";

/**
 * HS256 per API and the tenant's default signing algorithm (issue 14 point 3): an HS256 API has its own
 * signing secret (generated or given, encrypted at rest, returned with the API as the reference platform
 * does); its access tokens are HMAC-signed with it and verify with jose; APIs created without signing_alg
 * take the tenant's default_signing_alg.
 */

type Api = { id: string; identifier: string; signing_alg: string; signing_secret?: string };

async function createApi(tenant: string, body: Record<string, unknown> = {}): Promise<Api> {
  const identifier = `https://${crypto.randomUUID().slice(0, 8)}.example.com/`;
  const res = await onTenant(tenant, "POST", "/resource-servers", { identifier, scopes: [{ value: "read:x", description: "x" }], ...body });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as Api;
}

const hmacKey = (secret: string) => new TextEncoder().encode(secret);

describe("HS256 APIs", () => {
  it("an HS256 API gets a generated secret, returned with it; its client_credentials tokens are HS256 with that secret", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant, { signing_alg: "HS256" });
    expect(api.signing_alg).toBe("HS256");
    expect(api.signing_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const read = (await (await onTenant(tenant, "GET", `/resource-servers/${api.id}`)).json()) as Api;
    expect(read.signing_secret).toBe(api.signing_secret);
    const list = (await (await onTenant(tenant, "GET", "/resource-servers")).json()) as Api[];
    expect(list.find((a) => a.id === api.id)?.signing_secret).toBe(api.signing_secret);
    expect(JSON.stringify(list)).not.toContain("signing_secret_enc");

    const client = await m2mClient(tenant, []);
    await grantClient(client.client_id, api.identifier, ["read:x"], { headers: { "tenant-id": tenant } });
    const jwt = await issueToken(tenant, client, api.identifier);
    const header = decodeProtectedHeader(jwt);
    expect(header.alg).toBe("HS256");
    expect(header.kid).toBeUndefined();
    const { payload } = await jwtVerify(jwt, hmacKey(api.signing_secret ?? ""), { issuer: issuerOf(tenant), audience: api.identifier, algorithms: ["HS256"] });
    expect(payload).toMatchObject({ sub: `${client.client_id}@clients`, scope: "read:x", gty: "client-credentials" });
    await expect(jwtVerify(jwt, hmacKey("another-secret-of-enough-length"), { algorithms: ["HS256"] })).rejects.toThrow();
    // No key ring entry for HS256: the JWKS publishes only asymmetric keys, and none verifies this token.
    expect((await jwks(tenant)).keys.every((k) => k.alg !== "HS256" && k.kty !== "oct")).toBe(true);
    await expect(verifyWithJwks(tenant, jwt)).rejects.toThrow();
    expect((await listKeys(tenant)).map((k) => k.alg)).toEqual(["RS256"]);
  });

  it("the secret is stored encrypted, never in plain text", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant, { signing_alg: "HS256", signing_secret: "my-own-signing-secret-1234" });
    expect(api.signing_secret).toBe("my-own-signing-secret-1234");
    const stored = await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) =>
      state.storage.sql.exec<{ s: string }>("SELECT signing_secret_enc AS s FROM resource_servers WHERE id = ?", api.id).one().s,
    );
    expect(stored).toBeTruthy();
    expect(stored).not.toContain("my-own-signing-secret");
    // Nor in the audit trail: the write's log event (request body and target) is redacted.
    await onTenant(tenant, "PATCH", `/resource-servers/${api.id}`, { signing_secret: "second-own-signing-secret-99" });
    await relay(tenant);
    const logs = await (await onTenant(tenant, "GET", "/logs?per_page=100")).text();
    expect(logs).toContain(api.id);
    expect(logs).not.toContain("my-own-signing-secret");
    expect(logs).not.toContain("second-own-signing-secret");
  });

  it("PATCH signing_secret rotates it: new tokens verify with the new secret only", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant, { signing_alg: "HS256" });
    const client = await m2mClient(tenant, []);
    await grantClient(client.client_id, api.identifier, ["read:x"], { headers: { "tenant-id": tenant } });
    const res = await onTenant(tenant, "PATCH", `/resource-servers/${api.id}`, { signing_secret: "rotated-secret-0123456789" });
    expect(res.status).toBe(200);
    expect(((await res.json()) as Api).signing_secret).toBe("rotated-secret-0123456789");
    const jwt = await issueToken(tenant, client, api.identifier);
    await expect(jwtVerify(jwt, hmacKey("rotated-secret-0123456789"), { algorithms: ["HS256"] })).resolves.toBeTruthy();
    await expect(jwtVerify(jwt, hmacKey(api.signing_secret ?? ""), { algorithms: ["HS256"] })).rejects.toThrow();
  });

  it("switching an RS256 API to HS256 generates its secret; switching back signs with the ring again", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant);
    expect(api.signing_secret).toBeUndefined();
    const client = await m2mClient(tenant, []);
    await grantClient(client.client_id, api.identifier, ["read:x"], { headers: { "tenant-id": tenant } });
    const switched = (await (await onTenant(tenant, "PATCH", `/resource-servers/${api.id}`, { signing_alg: "HS256" })).json()) as Api;
    expect(switched.signing_secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const hs = await issueToken(tenant, client, api.identifier);
    await expect(jwtVerify(hs, hmacKey(switched.signing_secret ?? ""), { algorithms: ["HS256"] })).resolves.toBeTruthy();
    await onTenant(tenant, "PATCH", `/resource-servers/${api.id}`, { signing_alg: "RS256" });
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client, api.identifier))).alg).toBe("RS256");
  });

  it("a signing_secret that is too short or has spaces is 400", async () => {
    const tenant = await createTenant();
    for (const signing_secret of ["short", "has spaces in the secret value", 42]) {
      const res = await onTenant(tenant, "POST", "/resource-servers", { identifier: `https://${crypto.randomUUID().slice(0, 8)}.example.com/`, signing_alg: "HS256", signing_secret });
      expect(res.status, String(signing_secret)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, errorCode: expect.any(String) });
    }
  });

  it("a user's access token for an HS256 API names only that API: /userinfo refuses it", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant, { signing_alg: "HS256" });
    const user = await seedUser(tenant, `u-${crypto.randomUUID().slice(0, 6)}@example.com`);
    const callback = "https://app.example.com/callback";
    const client = await createClient({ callbacks: [callback] }, { headers: { "tenant-id": tenant } });
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const res = await authorize(
      { client_id: client.client_id, redirect_uri: callback, response_type: "token id_token", scope: "openid", audience: api.identifier, nonce: "n", state: "s" },
      { host: hostOf(tenant), cookie },
    );
    const accessToken = redirectParams(res).fragment.get("access_token") ?? "";
    expect(decodeProtectedHeader(accessToken).alg).toBe("HS256");
    const { payload } = await jwtVerify(accessToken, hmacKey(api.signing_secret ?? ""), { issuer: issuerOf(tenant), algorithms: ["HS256"] });
    expect(payload.aud).toBe(api.identifier);
    expect(payload.sub).toBe(user.user_id);
    const userinfo = await call("/userinfo", { host: hostOf(tenant), headers: { authorization: `Bearer ${accessToken}` } });
    expect(userinfo.status).toBe(401);
    // The ID token of the same response stays asymmetric.
    expect((await verifyWithJwks(tenant, redirectParams(res).fragment.get("id_token") ?? "")).alg).toBe("RS256");
  });
});

describe("the tenant's default signing algorithm", () => {
  it("APIs created without signing_alg take default_signing_alg; its key is in the ring first", async () => {
    const tenant = await createTenant();
    const before = (await (await onTenant(tenant, "GET", "/tenants/settings")).json()) as Record<string, unknown>;
    expect(before.default_signing_alg).toBe("RS256");
    const res = await onTenant(tenant, "PATCH", "/tenants/settings", { default_signing_alg: "ES256" });
    expect(res.status, await res.clone().text()).toBe(200);
    expect(await res.json()).toMatchObject({ default_signing_alg: "ES256" });
    expect((await listKeys(tenant)).map((k) => k.alg).sort()).toEqual(["ES256", "RS256"]);
    const api = await createApi(tenant);
    expect(api.signing_alg).toBe("ES256");
    const explicit = await createApi(tenant, { signing_alg: "PS256" });
    expect(explicit.signing_alg).toBe("PS256");
    const client = await m2mClient(tenant, []);
    await grantClient(client.client_id, api.identifier, ["read:x"], { headers: { "tenant-id": tenant } });
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client, api.identifier))).alg).toBe("ES256");
    // Removing the setting goes back to RS256 for new APIs.
    await onTenant(tenant, "PATCH", "/tenants/settings", { default_signing_alg: null });
    expect((await createApi(tenant)).signing_alg).toBe("RS256");
  });

  it("user access tokens for no API follow the default; ID tokens keep the client's algorithm", async () => {
    const tenant = await createTenant();
    await onTenant(tenant, "PATCH", "/tenants/settings", { default_signing_alg: "EdDSA" });
    const user = await seedUser(tenant, `u-${crypto.randomUUID().slice(0, 6)}@example.com`);
    const callback = "https://app.example.com/callback";
    const client = await createClient({ callbacks: [callback] }, { headers: { "tenant-id": tenant } });
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const res = await authorize(
      { client_id: client.client_id, redirect_uri: callback, response_type: "token id_token", scope: "openid", nonce: "n", state: "s" },
      { host: hostOf(tenant), cookie },
    );
    const fragment = redirectParams(res).fragment;
    expect((await verifyWithJwks(tenant, fragment.get("access_token") ?? "")).alg).toBe("EdDSA");
    expect((await verifyWithJwks(tenant, fragment.get("id_token") ?? "")).alg).toBe("RS256");
    const userinfo = await call("/userinfo", { host: hostOf(tenant), headers: { authorization: `Bearer ${fragment.get("access_token")}` } });
    expect(userinfo.status).toBe(200);
  });

  it("HS256, unknown algorithms and unknown fields are 400; an empty patch is 400", async () => {
    const tenant = await createTenant();
    for (const body of [{ default_signing_alg: "HS256" }, { default_signing_alg: "RS512" }, { color: "red" }, {}]) {
      const res = await onTenant(tenant, "PATCH", "/tenants/settings", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(await res.json()).toMatchObject({ statusCode: 400, errorCode: expect.any(String) });
    }
  });

  it("who can reach GET and PATCH /tenants/settings", async () => {
    await expectReachability("GET", () => "/tenants/settings", "read:tenant_settings", 200);
    await expectReachability("PATCH", () => "/tenants/settings", "update:tenant_settings", 200, () => ({ default_audience: "https://api.example.com/" }));
    // An end user's token with the scopes, and a revoked token, are refused too.
    const tenant = await createTenant();
    const scope = "read:tenant_settings update:tenant_settings";
    const userToken = await mintWithTenantKey(tenant, { iss: issuerOf(tenant), aud: CP.audience, scope, sub: "auth0|someone", gty: "password" });
    for (const [method, body] of [["GET", undefined], ["PATCH", { default_signing_alg: "ES256" }]] as const) {
      expect((await mgmt(method, "/tenants/settings", { token: userToken, ...(body ? { body } : {}) })).status).toBe(403);
    }
    const jti = crypto.randomUUID();
    const revoked = await mintWithTenantKey(tenant, { iss: issuerOf(tenant), aud: CP.audience, scope, jti });
    expect((await mgmt("GET", "/tenants/settings", { token: revoked })).status).toBe(200);
    await env.TENANT.getByName(tenant).revocations().revoke(jti, Date.now() + 300_000);
    const refused = await mgmt("GET", "/tenants/settings", { token: revoked });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ errorCode: "invalid_token", message: "The access token has been revoked" });
    // Nothing was written: the tenant still reads the defaults only (issue 15: the reference platform's shape).
    expect(await (await onTenant(tenant, "GET", "/tenants/settings")).json()).toEqual({
      session_lifetime: 168,
      idle_session_lifetime: 72,
      sandbox_version: "22",
      sandbox_versions_available: ["22", "18", "16", "12"],
      enabled_locales: ["en"],
      flags: {},
      default_signing_alg: "RS256",
    });
  });

  it("default_audience serves client_credentials requests that name no audience", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant);
    const client = await m2mClient(tenant, []);
    await grantClient(client.client_id, api.identifier, ["read:x"], { headers: { "tenant-id": tenant } });
    const ask = () => token({ grant_type: "client_credentials", ...client }, { host: hostOf(tenant) });
    expect((await ask()).status).toBe(403);
    await onTenant(tenant, "PATCH", "/tenants/settings", { default_audience: api.identifier });
    const res = await ask();
    expect(res.status, await res.clone().text()).toBe(200);
    expect((await verifyWithJwks(tenant, ((await res.json()) as { access_token: string }).access_token)).payload.aud).toBe(api.identifier);
  });
});
