import { randomBytes } from "node:crypto";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import * as oidc from "openid-client";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { managementToken as fetchManagementToken, MANAGEMENT_AUDIENCE, managementCall } from "./helpers/auth0";
import {
  type CallbackServer,
  type ContextLog,
  isLoopbackUrl,
  launchChromium,
  newRecordedContext,
  screenshot,
  startCallbackServer,
} from "./helpers/browser";

/**
 * Universal login end to end, driven by real third-party clients against a running `wrangler dev`:
 * - `openid-client` 6 (panva) is the relying party: discovery, PKCE authorization URL, code exchange with its
 *   own ID token validation, userinfo, revocation, client_credentials and the RP-initiated logout URL;
 * - headless Debian Chromium (playwright-core) is the user: it signs up and logs in through the /u2 pages
 *   and follows every redirect to a small callback server on 127.0.0.1, which records what it receives;
 * - `jose` verifies every token we issue against the published JWKS, independently of openid-client.
 *
 * The tests share one server, one application and one user and run in order (signup first).
 */

const SCOPE = "openid profile email";
const API_SCOPE = "read:things";

const random = () => randomBytes(6).toString("hex");

/** What one authorization request needs to be checked and redeemed later. */
interface PendingAuthorization {
  url: URL;
  state: string;
  nonce: string;
  codeVerifier: string;
}

describe("universal login through openid-client and headless Chromium", () => {
  let server: RunningServer;
  let callbacks: CallbackServer;
  let browser: Browser;
  let config: oidc.Configuration;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  let issuer: string;
  let userinfoAudience: string;
  let app: { client_id: string; client_secret: string };
  let apiIdentifier: string;
  let redirectUri: string;
  let logoutUri: string;

  const user = { email: `e2e-${random()}@example.com`, password: `Correct-Horse-${random()}` };
  /** Every browser context's record, checked at the end: nothing may leave loopback. */
  const contextLogs: Array<{ name: string; log: ContextLog }> = [];
  /** Set by the login test, used by revocation and logout. */
  let loggedIn: { page: Page; idToken: string; accessToken: string; sub: string } | undefined;
  let failed = false;

  beforeEach(({ onTestFailed }) => {
    onTestFailed(() => {
      failed = true;
    });
  });

  const managementToken = () => fetchManagementToken(server);
  const create = <T>(token: string, path: string, body: unknown) => managementCall<T>(server, token, "POST", path, body);

  /** An authorization URL built by openid-client: code flow, PKCE S256, state and nonce. */
  async function authorization(extra: Record<string, string> = {}): Promise<PendingAuthorization> {
    const codeVerifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      response_type: "code",
      scope: SCOPE,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: "S256",
      state,
      nonce,
      ...extra,
    });
    return { url, state, nonce, codeVerifier };
  }

  /** openid-client's code exchange (validates state, PKCE, the ID token and its nonce itself). */
  function redeem(callbackUrl: URL, pending: PendingAuthorization) {
    return oidc.authorizationCodeGrant(config, callbackUrl, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
  }

  async function verifyIdToken(idToken: string, nonce: string) {
    const { payload, protectedHeader } = await jwtVerify(idToken, jwks, { issuer, audience: app.client_id, algorithms: ["RS256"] });
    expect(protectedHeader.kid).toEqual(expect.any(String));
    expect(payload.nonce).toBe(nonce);
    return payload;
  }

  async function verifyAccessToken(accessToken: string, audience: string) {
    const { payload } = await jwtVerify(accessToken, jwks, { issuer, audience, algorithms: ["RS256"], typ: "at+jwt" });
    return payload;
  }

  async function fillLogin(page: Page, email: string, password: string) {
    await page.getByLabel("Email address").fill(email);
    await page.getByLabel("Password", { exact: true }).fill(password);
  }

  beforeAll(async () => {
    server = await startServer({ shareable: true });
    try {
      issuer = `${server.baseUrl}/`;
      userinfoAudience = `${server.baseUrl}/userinfo`;
      jwks = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
      callbacks = await startCallbackServer();
      redirectUri = `${callbacks.origin}/callback`;
      logoutUri = `${callbacks.origin}/logged-out`;

      const token = await managementToken();
      apiIdentifier = `urn:e2e:things:${random()}`;
      await create(token, "/resource-servers", {
        identifier: apiIdentifier,
        name: "E2E Things API",
        scopes: [{ value: API_SCOPE, description: "Read things" }],
      });
      app = await create(token, "/clients", {
        name: "E2E Web App",
        app_type: "regular_web",
        callbacks: [redirectUri],
        allowed_logout_urls: [logoutUri],
        grant_types: ["authorization_code", "client_credentials"],
        token_endpoint_auth_method: "client_secret_post",
      });
      expect(app.client_secret).toEqual(expect.any(String));
      await create(token, "/client-grants", { client_id: app.client_id, audience: apiIdentifier, scope: [API_SCOPE] });

      config = await oidc.discovery(new URL(issuer), app.client_id, app.client_secret, undefined, {
        execute: [oidc.allowInsecureRequests],
      });
      browser = await launchChromium();
    } catch (error) {
      failed = true;
      throw error;
    }
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await callbacks?.close().catch(() => undefined);
    if (failed && server) {
      process.stderr.write(`\n--- wrangler output (login.e2e) ---\n${server.log()}\n`);
      for (const { name, log } of contextLogs) {
        process.stderr.write(`\n--- browser context "${name}" ---\nrequests:\n  ${log.requests.join("\n  ")}\n`);
        if (log.consoleErrors.length) process.stderr.write(`console errors:\n  ${log.consoleErrors.join("\n  ")}\n`);
        if (log.pageErrors.length) process.stderr.write(`page errors:\n  ${log.pageErrors.join("\n  ")}\n`);
      }
    }
    await server?.stop();
  }, 60_000);

  it("discovers the issuer with openid-client", () => {
    const metadata = config.serverMetadata();
    expect(metadata.issuer).toBe(issuer);
    expect(metadata.authorization_endpoint).toBe(`${server.baseUrl}/authorize`);
    expect(metadata.end_session_endpoint).toBe(`${server.baseUrl}/oidc/logout`);
    expect(metadata.revocation_endpoint).toBe(`${server.baseUrl}/oauth/revoke`);
    expect(metadata.code_challenge_methods_supported).toContain("S256");
  });

  it("signs a new user up through the signup page and returns a code to the callback", async () => {
    const { context, page, log } = await newRecordedContext(browser);
    contextLogs.push({ name: "signup", log });
    try {
      const pending = await authorization({ screen_hint: "signup" });
      await page.goto(pending.url.href);
      expect(new URL(page.url()).pathname).toBe("/u2/signup");
      await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Create your account");
      expect(await page.title()).toBe("Sign up | E2E Web App");
      await screenshot(page, "signup.png");

      await page.getByLabel("Email address").fill(user.email);
      await page.getByLabel("Password", { exact: true }).fill(user.password);
      const arrived = callbacks.next("/callback");
      await page.getByRole("button", { name: "Sign up" }).click();
      const callbackUrl = await arrived;
      await page.waitForURL((url) => url.origin === callbacks.origin);

      expect(callbackUrl.searchParams.get("state")).toBe(pending.state);
      expect(callbackUrl.searchParams.get("code")).toEqual(expect.any(String));
      expect(callbackUrl.searchParams.get("error")).toBeNull();
      expect(await page.locator("body").textContent()).toBe("ok");

      // The code is real: openid-client redeems it and the ID token names the new user.
      const tokens = await redeem(callbackUrl, pending);
      const claims = tokens.claims();
      expect(claims?.email).toBe(user.email);
      expect(claims?.email_verified).toBe(false);
    } finally {
      await context.close();
    }
  });

  it("shows a wrong password as an error on the login page, without reaching the callback", async () => {
    const { context, page, log } = await newRecordedContext(browser);
    contextLogs.push({ name: "wrong-password", log });
    try {
      const pending = await authorization();
      await page.goto(pending.url.href);
      expect(new URL(page.url()).pathname).toBe("/u2/login");
      const before = callbacks.received.length;

      await fillLogin(page, user.email, `${user.password}-wrong`);
      const [response] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === "POST" && new URL(r.url()).pathname === "/u2/login"),
        page.getByRole("button", { name: "Continue" }).click(),
      ]);
      expect(response.status()).toBe(403);
      await page.waitForLoadState("load");

      const alert = page.getByRole("alert");
      await alert.waitFor({ state: "visible" });
      expect(await alert.isVisible()).toBe(true);
      expect((await alert.textContent())?.trim()).toBe("Wrong email or password.");
      expect(await alert.getAttribute("data-error-code")).toBe("INVALID_PASSWORD");
      // The error is tied to the fields for assistive technology, and the email is kept; the password is not.
      const emailInput = page.getByLabel("Email address");
      expect(await emailInput.getAttribute("aria-invalid")).toBe("true");
      expect(await emailInput.getAttribute("aria-describedby")).toBe("form-error");
      expect(await emailInput.inputValue()).toBe(user.email);
      expect(await page.getByLabel("Password", { exact: true }).inputValue()).toBe("");
      expect(new URL(page.url()).pathname).toBe("/u2/login");
      await screenshot(page, "login-error.png");

      expect(callbacks.received.length).toBe(before);
    } finally {
      await context.close();
    }
  });

  it("logs the user in with the authorization code flow (PKCE) and openid-client validates the tokens", async () => {
    // This context stays open: it holds the SSO session used by the silent, revocation and logout tests.
    const { page, log } = await newRecordedContext(browser);
    contextLogs.push({ name: "login", log });
    const pending = await authorization();
    expect(pending.url.searchParams.get("code_challenge_method")).toBe("S256");

    await page.goto(pending.url.href);
    const loginUrl = new URL(page.url());
    expect(loginUrl.pathname).toBe("/u2/login");
    expect(loginUrl.searchParams.get("state")).toEqual(expect.any(String));
    await expect(page.getByRole("heading", { level: 1 }).textContent()).resolves.toBe("Welcome");
    expect(await page.getByText("Log in to continue to E2E Web App.").isVisible()).toBe(true);
    expect(await page.getByRole("link", { name: "Sign up" }).isVisible()).toBe(true);
    await screenshot(page, "login.png");

    await fillLogin(page, user.email, user.password);
    const arrived = callbacks.next("/callback");
    await page.getByRole("button", { name: "Continue" }).click();
    const callbackUrl = await arrived;
    await page.waitForURL((url) => url.origin === callbacks.origin);
    expect(callbackUrl.searchParams.get("state")).toBe(pending.state);
    expect(callbackUrl.searchParams.get("code")).toEqual(expect.any(String));

    const tokens = await redeem(callbackUrl, pending);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.id_token).toEqual(expect.any(String));
    const claims = tokens.claims();
    if (!claims) throw new Error("no ID token claims");
    expect(claims.iss).toBe(issuer);
    expect(claims.aud).toBe(app.client_id);
    expect(claims.nonce).toBe(pending.nonce);
    expect(claims.email).toBe(user.email);

    // Independently of openid-client: both tokens verify against the published JWKS.
    const idPayload = await verifyIdToken(tokens.id_token as string, pending.nonce);
    expect(idPayload.sub).toBe(claims.sub);
    expect(typeof idPayload.auth_time).toBe("number");
    expect(decodeProtectedHeader(tokens.access_token).typ?.toLowerCase()).toBe("at+jwt");
    const atPayload = await verifyAccessToken(tokens.access_token, userinfoAudience);
    expect(atPayload.sub).toBe(claims.sub);
    expect(atPayload.azp).toBe(app.client_id);
    expect(String(atPayload.scope).split(" ")).toEqual(expect.arrayContaining(["openid", "profile", "email"]));

    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo.sub).toBe(claims.sub);
    expect(userinfo.email).toBe(user.email);

    loggedIn = { page, idToken: tokens.id_token as string, accessToken: tokens.access_token, sub: claims.sub };
  });

  it("answers prompt=none from the live session with a code, and an API audience adds the API to the token", async () => {
    if (!loggedIn) throw new Error("the login test did not complete");
    const pending = await authorization({ prompt: "none", audience: apiIdentifier, scope: `${SCOPE} ${API_SCOPE}` });
    const arrived = callbacks.next("/callback");
    await loggedIn.page.goto(pending.url.href);
    const callbackUrl = await arrived;
    expect(callbackUrl.searchParams.get("error")).toBeNull();
    expect(callbackUrl.searchParams.get("state")).toBe(pending.state);

    const tokens = await redeem(callbackUrl, pending);
    expect(tokens.claims()?.sub).toBe(loggedIn.sub);
    const atPayload = await verifyAccessToken(tokens.access_token, apiIdentifier);
    expect(atPayload.aud).toEqual(expect.arrayContaining([apiIdentifier, userinfoAudience]));
    expect(String(atPayload.scope).split(" ")).toContain(API_SCOPE);
    // Still a userinfo token too.
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, loggedIn.sub);
    expect(userinfo.email).toBe(user.email);
  });

  it("revokes the access token through openid-client, after which /userinfo answers 401", async () => {
    if (!loggedIn) throw new Error("the login test did not complete");
    const before = await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${loggedIn.accessToken}` } });
    expect(before.status).toBe(200);

    await oidc.tokenRevocation(config, loggedIn.accessToken);

    const after = await fetch(`${server.baseUrl}/userinfo`, { headers: { authorization: `Bearer ${loggedIn.accessToken}` } });
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate") ?? "").toMatch(/^Bearer\b/i);
    await expect(oidc.fetchUserInfo(config, loggedIn.accessToken, loggedIn.sub)).rejects.toThrow();
  });

  it("issues a client_credentials token for the granted API through openid-client", async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { audience: apiIdentifier });
    expect(tokens.id_token).toBeUndefined();
    expect(decodeProtectedHeader(tokens.access_token).typ?.toLowerCase()).toBe("at+jwt");
    const payload = await verifyAccessToken(tokens.access_token, apiIdentifier);
    expect(payload.aud).toBe(apiIdentifier);
    expect(payload.sub).toBe(`${app.client_id}@clients`);
    expect(payload.azp).toBe(app.client_id);
    expect(payload.scope).toBe(API_SCOPE);

    // No grant, no token: the management API is not this application's to call.
    await expect(oidc.clientCredentialsGrant(config, { audience: MANAGEMENT_AUDIENCE })).rejects.toMatchObject({ error: "access_denied" });
  });

  it("logs out through the RP-initiated logout URL, after which prompt=none answers login_required", async () => {
    if (!loggedIn) throw new Error("the login test did not complete");
    const logoutState = oidc.randomState();
    const endSession = oidc.buildEndSessionUrl(config, {
      id_token_hint: loggedIn.idToken,
      post_logout_redirect_uri: logoutUri,
      state: logoutState,
    });
    expect(endSession.href.startsWith(`${server.baseUrl}/oidc/logout?`)).toBe(true);

    const loggedOut = callbacks.next("/logged-out");
    await loggedIn.page.goto(endSession.href);
    const landed = await loggedOut;
    expect(`${landed.origin}${landed.pathname}`).toBe(logoutUri);
    expect(landed.searchParams.get("state")).toBe(logoutState);
    await loggedIn.page.waitForURL((url) => url.origin === callbacks.origin && url.pathname === "/logged-out");

    const cookies = await loggedIn.page.context().cookies(server.baseUrl);
    expect(cookies.find((c) => c.name === "gh_session")).toBeUndefined();

    const pending = await authorization({ prompt: "none" });
    const arrived = callbacks.next("/callback");
    await loggedIn.page.goto(pending.url.href);
    const callbackUrl = await arrived;
    expect(callbackUrl.searchParams.get("error")).toBe("login_required");
    expect(callbackUrl.searchParams.get("state")).toBe(pending.state);
    expect(callbackUrl.searchParams.get("code")).toBeNull();
    // openid-client reads the same callback as the authorization server's error.
    await expect(redeem(callbackUrl, pending)).rejects.toMatchObject({ error: "login_required" });
    await loggedIn.page.context().close();
  });

  it("kept every browser request on loopback", () => {
    const all = contextLogs.flatMap(({ log }) => log.requests);
    expect(all.length).toBeGreaterThan(0);
    expect(all.filter((url) => !isLoopbackUrl(url) && !url.startsWith("data:") && !url.startsWith("about:"))).toEqual([]);
  });
});
