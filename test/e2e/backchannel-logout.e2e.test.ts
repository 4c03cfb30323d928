import { ManagementClient } from "auth0";
import { createRemoteJWKSet, decodeJwt, jwtVerify } from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { startReceiver } from "../../scripts/webhook-receiver.mjs";
import { sdkOptions } from "./helpers/auth0";
import { passwordLogin } from "./helpers/login";
import { tenantServer } from "./helpers/tenant-server";

/**
 * OIDC Back-Channel Logout 1.0 end to end against `wrangler dev`: the `auth0` SDK registers a client's
 * `oidc_logout` URI (a receiver on a loopback HTTP server in this process), `openid-client` logs in and sees
 * the discovery flags, the SDK revokes the session, and the tenant object's real alarm POSTs a logout token
 * that `jose` verifies against the JWKS, naming the same issuer and `sid` as the ID token. The session's
 * refresh token is revoked by the same cascade. Before the revocation the SDK sets and reads the session's metadata.
 */
describe("back-channel logout through the auth0 SDK, openid-client and jose", () => {
  let server: RunningServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let admin: ManagementClient;
  let config: oidc.Configuration;
  let app: { client_id: string; client_secret: string };
  const callback = "https://app.example.com/callback";
  const origin = "https://app.example.com";
  const email = `bcl-${Date.now()}@example.com`;
  const password = `Pw-${crypto.randomUUID()}`;
  const name = `bcl-${crypto.randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await tenantServer(await startServer({ shareable: true }), "backchannel-logout");
    admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    const created = await admin.clients.create({
      name: "Back-channel app",
      app_type: "regular_web",
      callbacks: [callback],
      web_origins: [origin],
      grant_types: ["authorization_code", "refresh_token"],
      token_endpoint_auth_method: "client_secret_post",
      oidc_logout: {
        backchannel_logout_urls: [`${receiver.url}/hook/${name}`],
        backchannel_logout_initiators: { mode: "custom", selected_initiators: ["rp-logout", "session-revoked"] },
      },
    });
    expect(created.oidc_logout?.backchannel_logout_urls).toEqual([`${receiver.url}/hook/${name}`]);
    app = { client_id: String(created.client_id), client_secret: String(created.client_secret) };
    config = await oidc.discovery(new URL(`${server.baseUrl}/`), app.client_id, app.client_secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    await fetch(`${server.baseUrl}/dbconnections/signup`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ client_id: app.client_id, email, password, connection: "Username-Password-Authentication" }),
    });
  }, 120_000);

  afterAll(async () => {
    await server?.stop();
    await receiver?.close();
  });

  it("revoking the session POSTs a logout token that verifies against the JWKS, and revokes the session's refresh token", async () => {
    const metadata = config.serverMetadata() as Record<string, unknown>;
    expect(metadata.backchannel_logout_supported).toBe(true);
    expect(metadata.backchannel_logout_session_supported).toBe(true);

    const tokens = await passwordLogin(config, { baseUrl: server.baseUrl, clientId: app.client_id, origin, callback, username: email, password, scope: "openid offline_access" });
    const idToken = decodeJwt(tokens.id_token as string);
    expect(typeof idToken.sid).toBe("string");

    // The SDK's sessions.update sets the session's metadata (PATCH /sessions/{id}); sessions.get reads it back.
    const sid = idToken.sid as string;
    expect((await admin.sessions.get(sid)).session_metadata).toEqual({});
    const updated = await admin.sessions.update(sid, { session_metadata: { device_name: "E2E laptop", "login-flow": "pkce" } });
    expect(updated).toMatchObject({ id: sid, user_id: idToken.sub, session_metadata: { device_name: "E2E laptop", "login-flow": "pkce" } });
    expect((await admin.sessions.get(sid)).session_metadata).toEqual({ device_name: "E2E laptop", "login-flow": "pkce" });
    await expect(admin.sessions.update(sid, { session_metadata: { "bad.key": "x" } })).rejects.toMatchObject({ statusCode: 400 });

    await admin.sessions.delete(sid);

    let logoutToken: string | undefined;
    for (let i = 0; i < 100 && !logoutToken; i++) {
      const got = receiver.deliveries.get(name) as Array<{ form: { logout_token?: string } | null; contentType: string }> | undefined;
      logoutToken = got?.[0]?.form?.logout_token;
      if (!logoutToken) await new Promise((r) => setTimeout(r, 100));
    }
    expect(logoutToken).toBeTruthy();
    const jwks = createRemoteJWKSet(new URL("/.well-known/jwks.json", server.baseUrl));
    const { payload, protectedHeader } = await jwtVerify(logoutToken as string, jwks, { issuer: idToken.iss as string, audience: app.client_id, typ: "logout+jwt" });
    expect(protectedHeader.typ).toBe("logout+jwt");
    expect(payload).toMatchObject({ sub: idToken.sub, sid: idToken.sid, events: { "http://schemas.openid.net/event/backchannel-logout": {} } });
    expect(payload).not.toHaveProperty("nonce");
    expect(typeof payload.jti).toBe("string");
    expect(receiver.deliveries.get(name)).toHaveLength(1);

    await expect(oidc.refreshTokenGrant(config, tokens.refresh_token as string)).rejects.toMatchObject({
      error: "invalid_grant",
      error_description: "Refresh token has been revoked",
    });
  });
});
