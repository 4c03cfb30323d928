import { ManagementClient } from "auth0";
import { createLocalJWKSet, decodeProtectedHeader, importX509, jwtVerify } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { MANAGEMENT_AUDIENCE, sdkApiBase, sdkOptions } from "./helpers/auth0";
import { tenantServer } from "./helpers/tenant-server";

/**
 * Key rotation and revocation driven by the reference platform's SDK (`keys.signing.*`) against a real
 * `wrangler dev`, while openid-client keeps obtaining tokens and jose keeps verifying them against the
 * JWKS as served at each step (issue 14 points 1-2).
 */
describe("signing keys through the auth0 SDK, openid-client and jose", () => {
  let server: RunningServer;
  let config: oidc.Configuration;

  const newManagement = () => new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
  const jwksNow = async () => {
    const res = await fetch(`${server.baseUrl}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    return (await res.json()) as { keys: Array<{ kid: string; x5c?: string[]; x5t?: string }> };
  };
  /** jose against the JWKS fetched now (no cache), for the management audience. */
  const verifyNow = async (jwt: string) => jwtVerify(jwt, createLocalJWKSet((await jwksNow()) as never), { issuer: server.issuer, audience: MANAGEMENT_AUDIENCE });
  const freshToken = async () => (await oidc.clientCredentialsGrant(config, { audience: MANAGEMENT_AUDIENCE })).access_token;

  beforeAll(async () => {
    server = await tenantServer(await startServer({ shareable: true }), "signing-keys");
    config = await oidc.discovery(new URL(server.issuer), server.clientId, server.clientSecret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
  });

  afterAll(async () => {
    await server?.stop();
  });

  it("rotates and revokes while tokens keep verifying", async () => {
    const management = newManagement();
    const keys = await management.keys.signing.list();
    expect(keys).toHaveLength(1);
    const original = keys[0];
    expect(original).toMatchObject({ current: true, next: false, revoked: false });
    expect(original?.cert).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const published = (await jwksNow()).keys;
    expect(published.map((k) => k.kid)).toEqual([original?.kid]);
    expect(published[0]?.x5c).toHaveLength(1);

    // A token from openid-client, signed by the original key.
    const before = await freshToken();
    expect(decodeProtectedHeader(before).kid).toBe(original?.kid);
    await verifyNow(before);

    // Rotate through the SDK: the new key signs at once, the old one stays published (grace).
    const rotated = await management.keys.signing.rotate();
    expect(Object.keys(rotated).sort()).toEqual(["cert", "kid"]);
    expect(rotated.kid).not.toBe(original?.kid);
    const after = await freshToken();
    expect(decodeProtectedHeader(after).kid).toBe(rotated.kid);
    await verifyNow(after);
    await verifyNow(before);
    // The certificate returned by rotate verifies what the new key signs.
    await jwtVerify(after, await importX509(rotated.cert, "RS256"), { issuer: server.issuer });
    expect((await jwksNow()).keys.map((k) => k.kid).sort()).toEqual([original?.kid, rotated.kid].sort());
    // The SDK still holds its token from the original key: the management API still accepts it.
    const listed = await management.keys.signing.list();
    expect(listed.find((k) => k.kid === original?.kid)).toMatchObject({ current: false, previous: true });
    expect(listed.find((k) => k.kid === rotated.kid)).toMatchObject({ current: true });

    // Revoke the original through the SDK: gone from the JWKS, its tokens no longer verify anywhere.
    const revoked = await management.keys.signing.revoke(original?.kid ?? "");
    expect(revoked).toEqual({ kid: original?.kid, cert: original?.cert });
    expect((await jwksNow()).keys.map((k) => k.kid)).toEqual([rotated.kid]);
    await expect(verifyNow(before)).rejects.toThrow();
    await verifyNow(after);
    const refused = await fetch(`${server.baseUrl}/api/v2/keys/signing`, { headers: { authorization: `Bearer ${before}` } });
    expect(refused.status).toBe(403);

    // A new SDK client (new token, new key) reads the key and renews its certificate over the same pair.
    const second = newManagement();
    expect(await second.keys.signing.get(original?.kid ?? "")).toMatchObject({ revoked: true, current: false });
    const renew = await second.fetch(`${sdkApiBase(server)}/keys/signing/${rotated.kid}/renew`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ validity_days: 90 }),
    });
    expect(renew.status).toBe(201);
    const renewed = (await renew.json()) as { kid: string; cert: string; current: boolean };
    expect(renewed).toMatchObject({ kid: rotated.kid, current: true });
    expect(renewed.cert).not.toBe(rotated.cert);
    // Tokens signed before the renewal still verify, with the new certificate too (same key pair).
    await jwtVerify(after, await importX509(renewed.cert, "RS256"), { issuer: server.issuer });
    await verifyNow(await freshToken());
  });
});
