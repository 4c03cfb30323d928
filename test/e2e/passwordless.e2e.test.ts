import http from "node:http";
import https from "node:https";
import { syncBuiltinESMExports } from "node:module";
import { ManagementClient } from "auth0";
import { AuthenticationClient } from "auth0-v4";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkFetchFor, sdkOptions } from "./helpers/auth0";

/**
 * Issue 12 point 6 end to end: the reference platform's own Node SDK (its 4.x line, the last with an
 * AuthenticationClient; installed as `auth0-v4`) sends a passwordless email code and redeems it with the
 * `passwordless/otp` grant against `wrangler dev`, validating the ID token itself (issuer, audience, RS256
 * signature from our JWKS). The SDK assumes `https://{domain}`, so this server's ISSUER is
 * `https://localhost:PORT/`; its requests go through a `fetch` that maps https to the local http server, and
 * the SDK's JWKS download (jose's `https.get`) is mapped the same way for this host only.
 */
describe("passwordless through the reference platform's SDK", () => {
  let server: RunningServer;
  let port: number;
  let originalGet: typeof https.get;
  let app: { client_id: string; client_secret: string };

  beforeAll(async () => {
    port = await freePort();
    server = await startServer({ port, vars: { ISSUER: `https://localhost:${port}/`, DEV_MESSAGE_SINK: "1" } });
    originalGet = https.get;
    // Only this server's JWKS; any other https request still goes to the real https.get.
    https.get = ((url: string | URL, options: unknown, callback?: unknown) => {
      const target = String(url);
      if (target.startsWith(`https://localhost:${port}/`)) return http.get(target.replace(/^https:/, "http:"), options as http.RequestOptions, callback as () => void);
      return (originalGet as (...args: unknown[]) => http.ClientRequest)(url, options, callback);
    }) as typeof https.get;
    // The SDK's jose may import `get` from "https" as an ES module binding: refresh those bindings too.
    syncBuiltinESMExports();
    const admin = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    await admin.connections.create({ name: "email", strategy: "email" });
    const created = await admin.clients.create({
      name: "Passwordless App",
      app_type: "regular_web",
      grant_types: ["http://auth0.com/oauth/grant-type/passwordless/otp", "refresh_token"],
      token_endpoint_auth_method: "client_secret_post",
    });
    app = { client_id: String(created.client_id), client_secret: String(created.client_secret) };
  }, 120_000);

  afterAll(async () => {
    if (originalGet) {
      https.get = originalGet;
      syncBuiltinESMExports();
    }
    await server?.stop();
  }, 60_000);

  it("sendEmail then loginWithEmail: tokens for a user created on first login, the ID token checked by the SDK", async () => {
    const auth = new AuthenticationClient({ domain: `localhost:${port}`, clientId: app.client_id, clientSecret: app.client_secret, fetch: sdkFetchFor(server) });
    const email = `sdk-${Date.now()}@example.com`;
    await auth.passwordless.sendEmail({ email, send: "code", authParams: { scope: "openid email offline_access" } });
    const { messages } = (await (await fetch(`${server.baseUrl}/__dev/messages?to=${encodeURIComponent(email)}`)).json()) as { messages: { body: string }[] };
    const code = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1] as string;
    expect(code).toMatch(/^\d{6}$/);

    const { data } = await auth.passwordless.loginWithEmail({ email, code, scope: "openid email offline_access" });
    expect(data.token_type).toBe("Bearer");
    expect(data.id_token).toBeTruthy();
    expect(data.refresh_token).toBeTruthy();
    const claims = JSON.parse(Buffer.from(String(data.id_token).split(".")[1] as string, "base64url").toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: `https://localhost:${port}/`, aud: app.client_id, email, email_verified: true, amr: ["otp"] });

    // A used code is refused with the reference platform's error shape.
    const replay = await auth.passwordless.loginWithEmail({ email, code }).catch((e: unknown) => e);
    expect(replay).toMatchObject({ error: "invalid_grant", error_description: "Wrong email or verification code." });
  });
});
