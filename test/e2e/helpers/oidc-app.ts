import { ManagementClient } from "auth0";
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import * as oidc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { expect } from "vitest";
import { type RunningServer, startServer } from "../../../scripts/e2e-server.mjs";
import { sdkOptions } from "./auth0";
import { type CallbackServer, launchChromium, newRecordedContext, startCallbackServer } from "./browser";

/**
 * The set-up the Chromium login e2e files share (issue 32: custom-database, actions-redirect): an own
 * `wrangler dev`, the auth0 SDK on it, a regular web application whose callback is a loopback server of
 * the test, its openid-client configuration, and Chromium.
 */
export interface OidcApp {
  server: RunningServer;
  management: ManagementClient;
  callbacks: CallbackServer;
  browser: Browser;
  config: oidc.Configuration;
  redirectUri: string;
  close(): Promise<void>;
}

export async function startOidcApp(name: string): Promise<OidcApp> {
  const server = await startServer();
  const management = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
  const callbacks = await startCallbackServer();
  const redirectUri = `${callbacks.origin}/callback`;
  const app = await management.clients.create({
    name,
    app_type: "regular_web",
    callbacks: [redirectUri],
    grant_types: ["authorization_code"],
    token_endpoint_auth_method: "client_secret_post",
  });
  const config = await oidc.discovery(new URL(`${server.baseUrl}/`), app.client_id ?? "", app.client_secret ?? "", undefined, {
    execute: [oidc.allowInsecureRequests],
  });
  const browser = await launchChromium();
  return {
    server,
    management,
    callbacks,
    browser,
    config,
    redirectUri,
    async close() {
      await browser.close().catch(() => undefined);
      await callbacks.close().catch(() => undefined);
      await server.stop();
    },
  };
}

export interface ChromiumLogin {
  callbackUrl: URL | null;
  codeVerifier: string;
  state: string;
  nonce: string;
  pageText: string;
}

/**
 * Chromium through the login page with a password, then `between` (a page an action sent the browser to);
 * answers where it landed (null: it stayed on an error).
 */
export async function chromiumLogin(
  app: OidcApp,
  user: { email: string; password: string },
  options: { connection?: string; between?: (page: Page) => Promise<void> } = {},
): Promise<ChromiumLogin> {
  const { context, page } = await newRecordedContext(app.browser);
  try {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(app.config, {
      redirect_uri: app.redirectUri,
      scope: "openid profile email",
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
      ...(options.connection ? { connection: options.connection } : {}),
    });
    await page.goto(url.href);
    await page.getByLabel("Email address").fill(user.email);
    await page.getByLabel("Password", { exact: true }).fill(user.password);
    const arrived = app.callbacks.next("/callback");
    await page.getByRole("button", { name: "Continue" }).click();
    if (options.between) await options.between(page);
    const landed = await Promise.race([arrived, page.waitForSelector("[role=alert], .error", { timeout: 15_000 }).then(() => null)]);
    return { callbackUrl: landed, codeVerifier, state, nonce, pageText: landed ? "" : await page.content() };
  } finally {
    await context.close();
  }
}

/** The code exchange of a login that reached the callback, and its ID token verified against the JWKS. */
export async function verifiedIdToken(app: OidcApp, login: ChromiumLogin): Promise<JWTPayload> {
  expect(login.callbackUrl, login.pageText.slice(0, 500)).toBeTruthy();
  const tokens = await oidc.authorizationCodeGrant(app.config, login.callbackUrl as URL, {
    pkceCodeVerifier: login.codeVerifier,
    expectedState: login.state,
    expectedNonce: login.nonce,
    idTokenExpected: true,
  });
  const jwks = createRemoteJWKSet(new URL(`${app.server.baseUrl}/.well-known/jwks.json`));
  return (await jwtVerify(tokens.id_token ?? "", jwks, { issuer: `${app.server.baseUrl}/`, audience: app.config.clientMetadata().client_id })).payload;
}
