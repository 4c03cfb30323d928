import { ManagementClient } from "auth0";
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";
import { passwordLogin } from "./helpers/login";

/**
 * Refresh tokens end to end against `wrangler dev`: `openid-client` redeems a code with offline_access,
 * rotates the refresh token, sees reuse detection, and revokes; `jose` verifies the refreshed tokens; the
 * `auth0` SDK reads, annotates (refresh_token_metadata) and revokes the user's refresh tokens through the
 * management API.
 */
describe("refresh tokens through openid-client", () => {
  let server: RunningServer;
  let config: oidc.Configuration;
  let admin: ManagementClient;
  let app: { client_id: string; client_secret: string };
  const callback = "https://app.example.com/callback";
  const origin = "https://app.example.com";
  const email = `refresh-${Date.now()}@example.com`;
  const password = `Pw-${crypto.randomUUID()}`;
  let userId: string;

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const created = await admin.clients.create({
      name: "Refreshing app",
      app_type: "regular_web",
      callbacks: [callback],
      web_origins: [origin],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "client_secret_post",
      refresh_token: { rotation_type: "rotating", expiration_type: "expiring", leeway: 0 },
    });
    app = { client_id: String(created.client_id), client_secret: String(created.client_secret) };
    config = await oidc.discovery(new URL(`${server.baseUrl}/`), app.client_id, app.client_secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    const signup = await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ client_id: app.client_id, email, password, connection: "Username-Password-Authentication" }),
    });
    userId = ((await signup.json()) as { id: string }).id;
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
  });

  /** A password login through /co/authenticate, then openid-client's own authorization URL and code exchange. */
  const loginWithOfflineAccess = () =>
    passwordLogin(config, { baseUrl: server.baseUrl, clientId: app.client_id, origin, callback, username: email, password, scope: "openid email offline_access" });

  it("rotates with openid-client; the refreshed tokens verify against the JWKS; reuse revokes the family", async () => {
    const first = await loginWithOfflineAccess();
    expect(first.refresh_token).toBeTruthy();
    const second = await oidc.refreshTokenGrant(config, first.refresh_token as string);
    expect(second.refresh_token).toBeTruthy();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", server.baseUrl));
    const { payload } = await jwtVerify(second.id_token as string, jwks, { issuer: server.issuer, audience: app.client_id });
    expect(payload.sub).toBe(userId);
    expect(second.claims()?.sub).toBe(userId);

    // leeway 0: presenting the first token again is reuse, which revokes the whole family.
    await expect(oidc.refreshTokenGrant(config, first.refresh_token as string)).rejects.toMatchObject({
      error: "invalid_grant",
      error_description: "Refresh token has been revoked",
    });
    await expect(oidc.refreshTokenGrant(config, second.refresh_token as string)).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("revokes a refresh token through openid-client's RFC 7009 call", async () => {
    const tokens = await loginWithOfflineAccess();
    await oidc.tokenRevocation(config, tokens.refresh_token as string);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({
      error: "invalid_grant",
      error_description: "Refresh token has been revoked",
    });
  });

  it("the auth0 SDK lists the user's tokens and deletes one, which ends its family", async () => {
    const tokens = await loginWithOfflineAccess();
    const res = await admin.fetch(`https://localhost:${server.port}/api/v2/users/${encodeURIComponent(userId)}/refresh-tokens`);
    expect(res.status).toBe(200);
    const listed = (await res.json()) as Array<{ id: string; revoked_at?: string; client_id: string }>;
    const live = listed.filter((t) => !t.revoked_at);
    expect(live).toHaveLength(1);
    expect(live[0]?.client_id).toBe(app.client_id);
    await admin.refreshTokens.delete(live[0]?.id as string);
    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("the auth0 SDK's newer calls: refreshTokens.list, update (metadata kept across a rotation), revoke by user and client", async () => {
    const tokens = await loginWithOfflineAccess();
    const live = async () => (await admin.refreshTokens.list({ user_id: userId, client_id: app.client_id })).data.filter((t) => !t.revoked_at);
    const [token] = await live();
    expect(token).toMatchObject({ user_id: userId, client_id: app.client_id, rotating: true, refresh_token_metadata: {} });

    const updated = await admin.refreshTokens.update(token?.id as string, { refresh_token_metadata: { device_name: "e2e laptop" } });
    expect(updated.refresh_token_metadata).toEqual({ device_name: "e2e laptop" });
    await expect(admin.refreshTokens.update(token?.id as string, { refresh_token_metadata: { "bad key": "x" } })).rejects.toMatchObject({ statusCode: 400 });

    // The refresh grant's successor is listed in the token's place and carries its metadata.
    const rotated = await oidc.refreshTokenGrant(config, tokens.refresh_token as string);
    const [successor] = await live();
    expect(successor?.id).not.toBe(token?.id);
    expect(successor?.refresh_token_metadata).toEqual({ device_name: "e2e laptop" });
    expect((await admin.refreshTokens.get(successor?.id as string)).refresh_token_metadata).toEqual({ device_name: "e2e laptop" });

    await admin.refreshTokens.revoke({ user_id: userId, client_id: app.client_id });
    expect(await live()).toEqual([]);
    await expect(oidc.refreshTokenGrant(config, rotated.refresh_token as string)).rejects.toMatchObject({
      error: "invalid_grant",
      error_description: "Refresh token has been revoked",
    });
  });
});
