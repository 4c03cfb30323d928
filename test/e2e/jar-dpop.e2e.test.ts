import { randomBytes } from "node:crypto";
import { exportJWK, generateKeyPair } from "jose";
import * as oidc from "openid-client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { managementToken as fetchManagementToken, MANAGEMENT_AUDIENCE, managementCall } from "./helpers/auth0";
import { type CallbackServer, launchChromium, newRecordedContext, startCallbackServer } from "./helpers/browser";
import { tenantServer } from "./helpers/tenant-server";

/**
 * Issue 33 points 3 and 4 end to end, with openid-client 6 (a certified client that implements JAR, PAR and
 * DPoP itself) against a running `wrangler dev`:
 * - a code flow whose request is a signed request object (RFC 9101) pushed to /oauth/par (RFC 9126), the
 *   login in headless Chromium, the code exchanged with a DPoP proof (RFC 9449) and the bound token used at
 *   /userinfo with a proof, refused there as a bearer token;
 * - client_credentials with DPoP on a tenant that requires server nonces: openid-client meets use_dpop_nonce,
 *   retries with the DPoP-Nonce it was given, and calls the management API with the bound token.
 */

const random = () => randomBytes(6).toString("hex");

describe("JAR, PAR and DPoP through openid-client", () => {
  let server: RunningServer;
  let callbacks: CallbackServer;
  let browser: Browser;
  let issuer: string;
  let failed = false;
  const user = { email: `jar-${random()}@example.com`, password: `Correct-Horse-${random()}` };

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });

  const api = <T>(token: string, method: string, path: string, body: unknown, expected = 201) => managementCall<T>(server, token, method, path, body, expected);
  const managementToken = () => fetchManagementToken(server);

  beforeAll(async () => {
    server = await tenantServer(await startServer({ shareable: true }), "jar-dpop");
    issuer = `${server.baseUrl}/`;
    callbacks = await startCallbackServer();
    const token = await managementToken();
    await api(token, "POST", "/users", { connection: "Username-Password-Authentication", email: user.email, password: user.password, email_verified: true });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await callbacks?.close().catch(() => undefined);
    if (failed && server) process.stderr.write(`\n--- wrangler output (jar-dpop.e2e) ---\n${server.log()}\n`);
    await server?.stop();
  }, 60_000);

  it("runs a signed, pushed request; the DPoP-bound token works at /userinfo only with a proof", async () => {
    const token = await managementToken();
    const redirectUri = `${callbacks.origin}/callback`;
    const requestKey = await generateKeyPair("RS256", { extractable: true });
    const web = await api<{ client_id: string; client_secret: string }>(token, "POST", "/clients", {
      name: "E2E JAR App",
      app_type: "regular_web",
      callbacks: [redirectUri],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_post",
      jwks: { keys: [{ ...(await exportJWK(requestKey.publicKey)), alg: "RS256", use: "sig" }] },
      signed_request_object: { required: true },
      require_pushed_authorization_requests: true,
    });
    const config = await oidc.discovery(new URL(issuer), web.client_id, web.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
    const metadata = config.serverMetadata();
    expect(metadata.request_parameter_supported).toBe(true);
    expect(metadata.request_object_signing_alg_values_supported).toContain("RS256");
    expect(metadata.dpop_signing_alg_values_supported).toContain("ES256");

    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const request = { redirect_uri: redirectUri, scope: "openid email", code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state, nonce };
    const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair("ES256"));

    // A request pushed without a request object is refused: the client requires signed requests.
    await expect(oidc.buildAuthorizationUrlWithPAR(config, request)).rejects.toThrow();
    const signed = await oidc.buildAuthorizationUrlWithJAR(config, request, requestKey.privateKey);
    const url = await oidc.buildAuthorizationUrlWithPAR(config, signed.searchParams, { DPoP });
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);

    const { context, page } = await newRecordedContext(browser);
    let callbackUrl: URL;
    try {
      await page.goto(url.href);
      expect(new URL(page.url()).pathname).toBe("/u2/login");
      await page.getByLabel("Email address").fill(user.email);
      await page.getByLabel("Password", { exact: true }).fill(user.password);
      const arrived = callbacks.next("/callback");
      await page.getByRole("button", { name: "Continue" }).click();
      callbackUrl = await arrived;
    } finally {
      await context.close();
    }
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true }, undefined, { DPoP });
    expect(tokens.token_type).toBe("dpop");
    const sub = tokens.claims()?.sub as string;
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP });
    expect(info.email).toBe(user.email);

    // Without the key, the token is worth nothing: as a bearer token, and through openid-client without DPoP.
    const stolen = await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(stolen.status).toBe(401);
    expect(stolen.headers.get("www-authenticate")).toMatch(/^DPoP /);
    await expect(oidc.fetchUserInfo(config, tokens.access_token, sub)).rejects.toThrow();
    // Another key's proof is refused too.
    const otherKey = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair("ES256"));
    await expect(oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP: otherKey })).rejects.toThrow();
  });

  it("binds client_credentials tokens under required server nonces, and calls the management API with DPoP", async () => {
    const token = await managementToken();
    const m2m = await api<{ client_id: string; client_secret: string }>(token, "POST", "/clients", {
      name: "E2E DPoP M2M",
      app_type: "non_interactive",
      grant_types: ["client_credentials"],
      token_endpoint_auth_method: "client_secret_post",
    });
    await api(token, "POST", "/client-grants", { client_id: m2m.client_id, audience: MANAGEMENT_AUDIENCE, scope: ["read:clients"] });
    await api(token, "PATCH", "/tenants/settings", { flags: { dpop_require_nonce: true } }, 200);
    try {
      const config = await oidc.discovery(new URL(issuer), m2m.client_id, m2m.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
      const DPoP = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair("ES256"));
      const tokens = await oidc.clientCredentialsGrant(config, { audience: MANAGEMENT_AUDIENCE }, { DPoP });
      expect(tokens.token_type).toBe("dpop");
      const res = await oidc.fetchProtectedResource(config, tokens.access_token, new URL(`${server.baseUrl}/api/v2/clients?per_page=1`), "GET", undefined, undefined, { DPoP });
      expect(res.status).toBe(200);
      const asBearer = await fetch(`${server.baseUrl}/api/v2/clients?per_page=1`, { headers: { authorization: `Bearer ${tokens.access_token}` } });
      expect(asBearer.status).toBe(401);
    } finally {
      await api(token, "PATCH", "/tenants/settings", { flags: { dpop_require_nonce: false } }, 200);
    }
  });
});
