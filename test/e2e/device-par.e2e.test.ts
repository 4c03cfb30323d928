import { randomBytes } from "node:crypto";
import * as oidc from "openid-client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { managementToken as fetchManagementToken, managementCall } from "./helpers/auth0";
import { type CallbackServer, launchChromium, newRecordedContext, screenshot, startCallbackServer } from "./helpers/browser";

/**
 * Issue 33 end to end, with openid-client 6 as the client against a running `wrangler dev`:
 * - the device authorization grant (RFC 8628): openid-client starts it and polls while headless Chromium
 *   enters the code at /activate, confirms the application and logs in through the normal login page;
 * - pushed authorization requests (RFC 9126): openid-client pushes the request, the browser carries only
 *   client_id and request_uri, and openid-client checks the response's `iss` (RFC 9207) at the exchange.
 */

const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const random = () => randomBytes(6).toString("hex");

describe("device flow and PAR through openid-client", () => {
  let server: RunningServer;
  let callbacks: CallbackServer;
  let browser: Browser;
  let issuer: string;
  let failed = false;
  const user = { email: `device-${random()}@example.com`, password: `Correct-Horse-${random()}` };

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });

  const api = <T>(token: string, path: string, body: unknown) => managementCall<T>(server, token, "POST", path, body);
  const managementToken = () => fetchManagementToken(server);

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    issuer = `${server.baseUrl}/`;
    callbacks = await startCallbackServer();
    const token = await managementToken();
    await api(token, "/users", { connection: "Username-Password-Authentication", email: user.email, password: user.password, email_verified: true });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await callbacks?.close().catch(() => undefined);
    if (failed && server) process.stderr.write(`\n--- wrangler output (device-par.e2e) ---\n${server.log()}\n`);
    await server?.stop();
  }, 60_000);

  it("completes the device flow: openid-client polls while Chromium approves at /activate", async () => {
    const token = await managementToken();
    const tv = await api<{ client_id: string }>(token, "/clients", {
      name: "E2E TV",
      app_type: "native",
      token_endpoint_auth_method: "none",
      grant_types: [DEVICE_GRANT, "refresh_token"],
    });
    const config = await oidc.discovery(new URL(issuer), tv.client_id, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    expect(config.serverMetadata().device_authorization_endpoint).toBe(`${server.baseUrl}/oauth/device/code`);

    const started = await oidc.initiateDeviceAuthorization(config, { scope: "openid email offline_access" });
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    const polling = oidc.pollDeviceAuthorizationGrant(config, started);

    const { context, page } = await newRecordedContext(browser);
    try {
      await page.goto(started.verification_uri_complete as string);
      expect(await page.getByLabel("Code").inputValue()).toBe(started.user_code);
      await page.getByRole("button", { name: "Continue" }).click();
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Activate E2E TV?");
      expect(await page.locator("#device-scopes").textContent()).toContain("offline_access");
      await screenshot(page, "device-confirm.png");
      await page.getByRole("button", { name: "Confirm and log in" }).click();
      await page.waitForURL((url) => url.pathname === "/u2/login");
      await page.getByLabel("Email address").fill(user.email);
      await page.getByLabel("Password", { exact: true }).fill(user.password);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.waitForURL((url) => url.pathname === "/activate/callback");
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Device connected");
    } finally {
      await context.close();
    }

    const tokens = await polling;
    expect(tokens.claims()?.email).toBe(user.email);
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const info = await oidc.fetchUserInfo(config, tokens.access_token, tokens.claims()?.sub as string);
    expect(info.email).toBe(user.email);
  });

  it("runs a pushed authorization request for a client that requires it, the response's iss checked by openid-client", async () => {
    const token = await managementToken();
    const redirectUri = `${callbacks.origin}/callback`;
    const web = await api<{ client_id: string; client_secret: string }>(token, "/clients", {
      name: "E2E PAR App",
      app_type: "regular_web",
      callbacks: [redirectUri],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_post",
      require_pushed_authorization_requests: true,
    });
    const config = await oidc.discovery(new URL(issuer), web.client_id, web.client_secret, undefined, { execute: [oidc.allowInsecureRequests] });
    const metadata = config.serverMetadata();
    expect(metadata.pushed_authorization_request_endpoint).toBe(`${server.baseUrl}/oauth/par`);
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);

    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const request = { redirect_uri: redirectUri, scope: "openid email", code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state, nonce };
    // Not pushed: refused outright, since the client requires PAR.
    const plain = await fetch(oidc.buildAuthorizationUrl(config, request), { redirect: "manual" });
    expect(plain.status).toBe(400);

    const url = await oidc.buildAuthorizationUrlWithPAR(config, request);
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
    const { context, page } = await newRecordedContext(browser);
    try {
      await page.goto(url.href);
      expect(new URL(page.url()).pathname).toBe("/u2/login");
      await page.getByLabel("Email address").fill(user.email);
      await page.getByLabel("Password", { exact: true }).fill(user.password);
      const arrived = callbacks.next("/callback");
      await page.getByRole("button", { name: "Continue" }).click();
      const callbackUrl = await arrived;
      expect(callbackUrl.searchParams.get("iss")).toBe(issuer);
      const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      expect(tokens.claims()?.email).toBe(user.email);
    } finally {
      await context.close();
    }
    // The request_uri was single use: the same URL is now refused.
    const replay = await fetch(url, { redirect: "manual" });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { error: string }).error).toBe("invalid_request_uri");
  });
});
