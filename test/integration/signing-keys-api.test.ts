import { exportJWK, importX509 } from "jose";
import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt } from "../helpers/api";
import { mintWithTenantKey } from "../helpers/mint";
import { issueToken, jwks, type KeyBody, listKeys, m2mClient, onTenant } from "../helpers/keys";

/** Signing-key routes (SPEC §4.2 "Signing keys", §2.9): shapes, certificates, buckets, validation, access. */

const PRIVATE_MARKERS = ['"d"', '"p"', '"q"', '"dp"', '"dq"', '"qi"', "PRIVATE KEY", "private_jwk", "enc:v1:"];

function expectNoPrivateMaterial(text: string) {
  for (const marker of PRIVATE_MARKERS) expect(text).not.toContain(marker);
}

async function expectManagementError(res: Response, status: number, message?: RegExp) {
  const text = await res.text();
  expect(res.status, text).toBe(status);
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body).toMatchObject({ statusCode: status, error: expect.any(String), message: expect.any(String), errorCode: expect.any(String) });
  if (message) expect(body.message).toMatch(message);
}

const der = (pem: string) => Uint8Array.from(atob(pem.replace(/-----[A-Z0-9 ]+-----/g, "").replace(/\s+/g, "")), (c) => c.charCodeAt(0));
const b64url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");

describe("signing keys API", () => {
  it("lists the key with its certificate; the certificate holds the JWKS public key; x5c/x5t match", async () => {
    const tenant = await createTenant();
    const res = await onTenant(tenant, "GET", "/keys/signing");
    const text = await res.text();
    expect(res.status).toBe(200);
    expectNoPrivateMaterial(text);
    const [key] = JSON.parse(text) as KeyBody[];
    expect(key).toMatchObject({ alg: "RS256", current: true, next: false, previous: false, revoked: false, expired: false, inherited: false });
    expect(key?.cert).toMatch(/^-----BEGIN CERTIFICATE-----\r\n[A-Za-z0-9+/=\r\n]+-----END CERTIFICATE-----\r\n$/);
    expect(key?.pkcs7).toMatch(/^-----BEGIN PKCS7-----\r\n[A-Za-z0-9+/=\r\n]+-----END PKCS7-----\r\n$/);
    expect(key?.fingerprint).toMatch(/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/);
    expect(key?.thumbprint).toBe(key?.fingerprint.replace(/:/g, ""));
    // One year by default.
    expect(Date.parse(key?.expires_at ?? "") - Date.now()).toBeGreaterThan(364 * 86_400_000);

    // An independent X.509 parser (jose) reads the certificate; its key is the one the JWKS publishes.
    const fromCert = await exportJWK(await importX509(key?.cert ?? "", "RS256", { extractable: true }));
    const [entry] = (await jwks(tenant)).keys;
    expect(entry).toMatchObject({ kid: key?.kid, kty: "RSA", alg: "RS256", use: "sig", n: fromCert.n, e: fromCert.e });
    const certDer = der(key?.cert ?? "");
    expect(entry?.x5c).toEqual([btoa(String.fromCharCode(...certDer))]);
    // The reference platform's x5t: base64url of the upper-case hex thumbprint (see x509.ts, unit test).
    const sha1Hex = [...new Uint8Array(await crypto.subtle.digest("SHA-1", certDer))].map((b) => b.toString(16).padStart(2, "0")).join("").toUpperCase();
    expect(key?.thumbprint).toBe(sha1Hex);
    expect(entry?.x5t).toBe(b64url(new TextEncoder().encode(sha1Hex)));
    expectNoPrivateMaterial(JSON.stringify(await jwks(tenant)));

    const one = await onTenant(tenant, "GET", `/keys/signing/${key?.kid}`);
    expect(await one.json()).toEqual(key);
    await expectManagementError(await onTenant(tenant, "GET", "/keys/signing/nope"), 404);
  });

  it("rotate is 201 {cert, kid}; the new key's certificate verifies tokens it signs", async () => {
    const tenant = await createTenant();
    const client = await m2mClient(tenant, ["read:signing_keys"]);
    const res = await onTenant(tenant, "POST", "/keys/signing/rotate");
    const text = await res.text();
    expect(res.status).toBe(201);
    expectNoPrivateMaterial(text);
    const rotated = JSON.parse(text) as { kid: string; cert: string };
    expect(Object.keys(rotated).sort()).toEqual(["cert", "kid"]);
    const jwt = await issueToken(tenant, client);
    const { jwtVerify } = await import("jose");
    const { protectedHeader } = await jwtVerify(jwt, await importX509(rotated.cert, "RS256"));
    expect(protectedHeader.kid).toBe(rotated.kid);
  });

  it("renew issues a new certificate over the same key pair: kid and public key survive", async () => {
    const tenant = await createTenant();
    const [before] = await listKeys(tenant);
    const res = await onTenant(tenant, "POST", `/keys/signing/${before?.kid}/renew`, { validity_days: 30 });
    const text = await res.text();
    expect(res.status, text).toBe(201);
    expectNoPrivateMaterial(text);
    const after = JSON.parse(text) as KeyBody;
    expect(after.kid).toBe(before?.kid);
    expect(after.cert).not.toBe(before?.cert);
    expect(after.thumbprint).not.toBe(before?.thumbprint);
    expect(Math.abs(Date.parse(after.expires_at) - Date.now() - 30 * 86_400_000)).toBeLessThan(60_000);
    const pub = async (pem: string) => (await exportJWK(await importX509(pem, "RS256", { extractable: true }))).n;
    expect(await pub(after.cert)).toBe(await pub(before?.cert ?? ""));
    const [entry] = (await jwks(tenant)).keys;
    expect(entry?.x5c).toEqual([after.cert.replace(/-----[A-Z0-9 ]+-----/g, "").replace(/\s+/g, "")]);
    expect(after.current).toBe(true);
  });

  it("buckets by type: saml_encryption keys are separate, five years by default, never in the JWKS", async () => {
    const tenant = await createTenant();
    expect(await listKeys(tenant, "saml_encryption")).toEqual([]);
    const before = (await jwks(tenant)).keys.map((k) => k.kid);
    const res = await onTenant(tenant, "POST", "/keys/signing/rotate?type=saml_encryption");
    expect(res.status).toBe(201);
    const { kid } = (await res.json()) as { kid: string };
    const [saml] = await listKeys(tenant, "saml_encryption");
    expect(saml).toMatchObject({ kid, current: true });
    expect(Date.parse(saml?.expires_at ?? "") - Date.now()).toBeGreaterThan(5 * 365 * 86_400_000 - 60_000);
    expect((await jwks(tenant)).keys.map((k) => k.kid)).toEqual(before);
    expect((await listKeys(tenant)).map((k) => k.kid)).not.toContain(kid);
    // A kid is found only in its own bucket.
    await expectManagementError(await onTenant(tenant, "GET", `/keys/signing/${kid}`), 404);
    expect((await onTenant(tenant, "GET", `/keys/signing/${kid}?type=saml_encryption`)).status).toBe(200);
    await expectManagementError(await onTenant(tenant, "GET", "/keys/signing?type=rsa"), 400, /type must be/);
    await expectManagementError(await onTenant(tenant, "POST", "/keys/signing/rotate?type=x"), 400);
  });

  it("out-of-range or malformed lifecycle parameters are 400 in the management error shape", async () => {
    const tenant = await createTenant();
    const [key] = await listKeys(tenant);
    const bad = [
      { validity_days: 0 },
      { validity_days: 3651 },
      { validity_days: 1.5 },
      { activate_in_days: 366 },
      { activate_in_days: -1 },
      { grace_days: 366 },
      { grace_days: "1" },
      { unknown: 1 },
    ];
    for (const body of bad) {
      await expectManagementError(await onTenant(tenant, "POST", "/keys/signing/rotate", body), 400);
    }
    await expectManagementError(await onTenant(tenant, "POST", "/keys/signing/rotate?grace_days=abc"), 400);
    await expectManagementError(await onTenant(tenant, "POST", "/keys/signing/rotate", "[1]"), 400);
    await expectManagementError(await onTenant(tenant, "POST", `/keys/signing/${key?.kid}/renew`, { validity_days: 0 }), 400);
    await expectManagementError(await onTenant(tenant, "POST", `/keys/signing/${key?.kid}/renew`, { grace_days: 1 }), 400);
    await expectManagementError(await onTenant(tenant, "PUT", `/keys/signing/${key?.kid}/revoke`, { validity_days: 4000 }), 400);
    await expectManagementError(await onTenant(tenant, "PUT", "/keys/signing/nope/revoke"), 404);
    await expectManagementError(await onTenant(tenant, "POST", "/keys/signing/nope/renew"), 404);
    // Nothing changed.
    expect((await listKeys(tenant)).map((k) => k.kid)).toEqual([key?.kid]);
    // Boundaries are accepted.
    expect((await onTenant(tenant, "POST", "/keys/signing/rotate", { validity_days: 3650, activate_in_days: 365, grace_days: 365 })).status).toBe(201);
    expect((await onTenant(tenant, "POST", "/keys/signing/rotate?validity_days=1&activate_in_days=0&grace_days=0")).status).toBe(201);
  });

  it("access: no token 401, missing scope 403, another tenant's token 403, a user's token 403", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const [key] = await listKeys(tenant);
    const routes: [string, string, string][] = [
      ["GET", "/keys/signing", "read:signing_keys"],
      ["GET", `/keys/signing/${key?.kid}`, "read:signing_keys"],
      ["POST", "/keys/signing/rotate", "create:signing_keys"],
      ["PUT", `/keys/signing/${key?.kid}/revoke`, "update:signing_keys"],
      ["POST", `/keys/signing/${key?.kid}/renew`, "create:signing_keys"],
    ];
    const reader = await issueToken(tenant, await m2mClient(tenant, ["read:tenants"]));
    const otherToken = await issueToken(other, await m2mClient(other, ["read:signing_keys", "create:signing_keys", "update:signing_keys"]));
    const userToken = await mintWithTenantKey(tenant, {
      iss: `http://${tenant}.localhost:8787/`,
      aud: CP.audience,
      scope: "read:signing_keys create:signing_keys update:signing_keys",
      sub: "auth0|someone",
      gty: "password",
    });
    for (const [method, path, scope] of routes) {
      await expectManagementError(await mgmt(method, path, { token: "", headers: { "tenant-id": tenant } }), 401);
      await expectManagementError(await mgmt(method, path, { token: reader }), 403, new RegExp(scope));
      await expectManagementError(await mgmt(method, path, { token: otherToken, headers: { "tenant-id": tenant } }), 403);
      await expectManagementError(await mgmt(method, path, { token: userToken }), 403);
    }
    // Nothing was changed by the refused calls.
    expect(await listKeys(tenant)).toEqual([key]);
  });
});

describe("inherited keys", () => {
  it("are listed with inherited: true and refuse revoke and renew with 403; current_until follows the successor", async () => {
    const { env, runInDurableObject } = await import("cloudflare:test");
    const { invalidateTenantConfig } = await import("../../src/worker/tenant/config-cache");
    const tenant = await createTenant();
    const [own] = await listKeys(tenant);
    // Inheritance from a parent tenant comes later; a row marked inherited stands in for one here.
    await runInDurableObject(env.TENANT.getByName(tenant), (_o, state) => {
      state.storage.sql.exec("UPDATE signing_keys SET inherited = 1 WHERE kid = ?", own?.kid);
      state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
    });
    invalidateTenantConfig(tenant);
    expect((await listKeys(tenant))[0]).toMatchObject({ kid: own?.kid, inherited: true });
    await expectManagementError(await onTenant(tenant, "PUT", `/keys/signing/${own?.kid}/revoke`), 403, /Inherited/);
    await expectManagementError(await onTenant(tenant, "POST", `/keys/signing/${own?.kid}/renew`), 403, /Inherited/);
    // Rotation adds a key of the tenant's own and leaves the inherited one as it was (no grace end set).
    const rotated = await onTenant(tenant, "POST", "/keys/signing/rotate", { activate_in_days: 3 });
    expect(rotated.status).toBe(201);
    const { kid } = (await rotated.json()) as { kid: string };
    const keys = await listKeys(tenant);
    const fresh = keys.find((k) => k.kid === kid);
    expect(fresh).toMatchObject({ inherited: false, next: true });
    const inherited = keys.find((k) => k.kid === own?.kid);
    expect(inherited).toMatchObject({ inherited: true, current: true, revoked: false, current_until: fresh?.current_since });
    expect(inherited).not.toHaveProperty("revoked_at");
  });
});
