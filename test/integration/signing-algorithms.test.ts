import { jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { createTenant, call } from "../helpers/api";
import { authorize, redirectParams, seedUser, sessionCookie } from "../helpers/flows";
import { createClient, grantClient } from "../helpers/management";
import { hostOf, issueToken, jwks, listKeys, m2mClient, onTenant, verifyWithJwks } from "../helpers/keys";

/** Per-API `signing_alg` (issue 14 point 3): the ring gains a key of each algorithm in use. */

async function apiWith(tenant: string, signing_alg?: string) {
  const identifier = `https://${crypto.randomUUID().slice(0, 8)}.example.com/`;
  const res = await onTenant(tenant, "POST", "/resource-servers", { identifier, scopes: [{ value: "read:x", description: "x" }], ...(signing_alg ? { signing_alg } : {}) });
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as { id: string; identifier: string; signing_alg: string };
}

describe("signing algorithms", () => {
  it("access tokens for an API are signed with its signing_alg and verify against the JWKS", async () => {
    const tenant = await createTenant();
    const client = await m2mClient(tenant, ["read:signing_keys"]);
    const target = { headers: { "tenant-id": tenant } };
    const expected = { RS256: "RSA", RS512: "RSA", PS256: "RSA", ES256: "EC", EdDSA: "OKP" } as const;
    for (const [alg, kty] of Object.entries(expected)) {
      const api = await apiWith(tenant, alg);
      expect(api.signing_alg).toBe(alg);
      await grantClient(client.client_id, api.identifier, ["read:x"], target);
      const jwt = await issueToken(tenant, client, api.identifier);
      const verified = await verifyWithJwks(tenant, jwt);
      expect(verified.alg).toBe(alg);
      expect(verified.payload.aud).toBe(api.identifier);
      const entry = (await jwks(tenant)).keys.find((k) => k.kid === verified.kid);
      expect(entry).toMatchObject({ alg, kty, use: "sig", x5c: [expect.any(String)], x5t: expect.any(String) });
    }
    // One key per algorithm, each with a certificate; the management token still RS256.
    const keys = await listKeys(tenant);
    expect(keys.map((k) => k.alg).sort()).toEqual(["ES256", "EdDSA", "PS256", "RS256", "RS512"]);
    for (const key of keys) expect(key.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    expect((await verifyWithJwks(tenant, await issueToken(tenant, client))).alg).toBe("RS256");
  });

  it("a second API with the same algorithm reuses the key; switching an API's alg adds a key first", async () => {
    const tenant = await createTenant();
    await apiWith(tenant, "ES256");
    await apiWith(tenant, "ES256");
    expect((await listKeys(tenant)).filter((k) => k.alg === "ES256")).toHaveLength(1);
    const api = await apiWith(tenant);
    const res = await onTenant(tenant, "PATCH", `/resource-servers/${api.id}`, { signing_alg: "EdDSA" });
    expect(res.status).toBe(200);
    expect((await listKeys(tenant)).map((k) => k.alg).sort()).toEqual(["ES256", "EdDSA", "RS256"]);
  });

  it("rotation rotates every algorithm in the ring; unsupported algorithms are 400", async () => {
    const tenant = await createTenant();
    await apiWith(tenant, "ES256");
    const before = await listKeys(tenant);
    expect((await onTenant(tenant, "POST", "/keys/signing/rotate", { grace_days: 0 })).status).toBe(201);
    const after = await listKeys(tenant);
    const current = after.filter((k) => k.current);
    expect(current.map((k) => k.alg).sort()).toEqual(["ES256", "RS256"]);
    for (const k of current) expect(before.map((b) => b.kid)).not.toContain(k.kid);
    expect((await jwks(tenant)).keys.map((k) => k.kid).sort()).toEqual(current.map((k) => k.kid).sort());
    // HS256 is an API's own secret (test/integration/hs256-signing.test.ts); these the service does not issue
    // (RS512 it does for APIs, as the reference platform's SigningAlgorithmEnum allows: see the first test).
    for (const alg of ["HS512", "RS384", "ES512", "none"]) {
      expect((await onTenant(tenant, "POST", "/resource-servers", { identifier: `https://${alg}.example.com/`, signing_alg: alg })).status).toBe(400);
    }
  });

  it("discovery lists exactly the ID-token algorithms issued (HS256, RS256, PS256, as the reference platform)", async () => {
    const tenant = await createTenant();
    await apiWith(tenant, "EdDSA");
    const doc = (await (await call("/.well-known/openid-configuration", { host: hostOf(tenant) })).json()) as Record<string, unknown>;
    expect(doc.id_token_signing_alg_values_supported).toEqual(["HS256", "RS256", "PS256"]);
  });

  it("ID tokens follow the client's jwt_configuration.alg (PS256), RS256 by default; RS512 is 400", async () => {
    const tenant = await createTenant();
    const host = hostOf(tenant);
    const user = await seedUser(tenant, `u-${crypto.randomUUID().slice(0, 6)}@example.com`);
    const callback = "https://app.example.com/callback";
    const target = { headers: { "tenant-id": tenant } };
    for (const alg of ["PS256", undefined]) {
      const client = await createClient({ callbacks: [callback], ...(alg ? { jwt_configuration: { alg } } : {}) }, target);
      const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
      const res = await authorize({ client_id: client.client_id, redirect_uri: callback, response_type: "id_token", scope: "openid", nonce: "n", state: "s" }, { host, cookie });
      const idToken = redirectParams(res).fragment.get("id_token");
      expect(idToken, res.headers.get("location") ?? "").toBeTruthy();
      const verified = await verifyWithJwks(tenant, String(idToken));
      expect(verified.alg).toBe(alg ?? "RS256");
      expect(verified.payload).toMatchObject({ aud: client.client_id, sub: user.user_id, nonce: "n" });
    }
    const refused = await onTenant(tenant, "POST", "/clients", { name: "rs512", jwt_configuration: { alg: "RS512" } });
    expect(refused.status).toBe(400);
  });

  it("HS256 ID tokens are signed with the client's own secret (OIDC Core §10.1); a client without one gets RS256", async () => {
    const tenant = await createTenant();
    const host = hostOf(tenant);
    const user = await seedUser(tenant, `u-${crypto.randomUUID().slice(0, 6)}@example.com`);
    const callback = "https://app.example.com/callback";
    const target = { headers: { "tenant-id": tenant } };
    const confidential = await createClient({ callbacks: [callback], jwt_configuration: { alg: "HS256" } }, target);
    const idTokenOf = async (clientId: string) => {
      const cookie = await sessionCookie(tenant, user.user_id, clientId);
      const res = await authorize({ client_id: clientId, redirect_uri: callback, response_type: "id_token", scope: "openid", nonce: "n", state: "s" }, { host, cookie });
      return String(redirectParams(res).fragment.get("id_token"));
    };
    const hs = await idTokenOf(confidential.client_id);
    const { payload, protectedHeader } = await jwtVerify(hs, new TextEncoder().encode(String(confidential.client_secret)), {
      issuer: `http://${host}/`,
      audience: confidential.client_id,
      algorithms: ["HS256"],
    });
    expect(protectedHeader.kid).toBeUndefined();
    expect(payload).toMatchObject({ sub: user.user_id, nonce: "n" });
    // RP-initiated logout accepts it as id_token_hint (verified with the same secret).
    const logout = await call(`/oidc/logout?id_token_hint=${hs}`, { host, redirect: "manual" });
    expect(logout.status).toBe(302);
    const forged = `${hs.slice(0, hs.lastIndexOf(".") + 1)}${"A".repeat(43)}`;
    expect((await call(`/oidc/logout?id_token_hint=${forged}`, { host, redirect: "manual" })).status).toBe(400);

    const spa = await createClient({ app_type: "spa", callbacks: [callback], jwt_configuration: { alg: "HS256" } }, target);
    expect((await verifyWithJwks(tenant, await idTokenOf(spa.client_id))).alg).toBe("RS256");
  });
});
