import { randomBytes } from "node:crypto";
import { ManagementClient } from "auth0";
import { createRemoteJWKSet, jwtVerify } from "jose";
import * as oidc from "openid-client";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../scripts/e2e-server.mjs";
import { sdkOptions } from "./helpers/auth0";
import { type CallbackServer, launchChromium, newRecordedContext, startCallbackServer } from "./helpers/browser";
import { tenantServer } from "./helpers/tenant-server";

/**
 * Actions end to end (issue 13): the reference platform's Node SDK (`auth0` 7.1.0) creates, deploys and binds
 * a post-login action on a running `wrangler dev`, where it runs in a Worker Loader isolate; headless Chromium
 * signs up and logs in through the login pages; `jose` verifies the custom claims against the published JWKS.
 */
const random = () => randomBytes(6).toString("hex");
const CLAIM = "https://gatehouse.example/plan";

describe("actions through the auth0 SDK and a Chromium login", () => {
  let server: RunningServer;
  let management: ManagementClient;
  let callbacks: CallbackServer;
  let browser: Browser;
  let config: oidc.Configuration;
  let redirectUri: string;
  const user = { email: `actions-${random()}@example.com`, password: `Correct-Horse-${random()}` };

  beforeAll(async () => {
    server = await tenantServer(await startServer({ shareable: true }), "actions");
    management = new ManagementClient({ ...sdkOptions(server), clientId: server.clientId, clientSecret: server.clientSecret });
    callbacks = await startCallbackServer();
    redirectUri = `${callbacks.origin}/callback`;
    const app = await management.clients.create({
      name: "Actions E2E App",
      app_type: "regular_web",
      callbacks: [redirectUri],
      grant_types: ["authorization_code"],
      token_endpoint_auth_method: "client_secret_post",
    });
    config = await oidc.discovery(new URL(`${server.baseUrl}/`), app.client_id ?? "", app.client_secret ?? "", undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close().catch(() => undefined);
    await callbacks?.close().catch(() => undefined);
    await server?.stop();
  }, 60_000);

  /** Drives Chromium through the login (or sign-up) page to the callback; answers what arrived. */
  async function browserLogin(signup: boolean) {
    const { context, page } = await newRecordedContext(browser);
    try {
      const codeVerifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: "openid profile email",
        code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: "S256",
        state,
        nonce,
        ...(signup ? { screen_hint: "signup" } : {}),
      });
      await page.goto(url.href);
      await page.getByLabel("Email address").fill(user.email);
      await page.getByLabel("Password", { exact: true }).fill(user.password);
      const arrived = callbacks.next("/callback");
      await page.getByRole("button", { name: signup ? "Sign up" : "Continue" }).click();
      return { callbackUrl: await arrived, codeVerifier, state, nonce };
    } finally {
      await context.close();
    }
  }

  it("the SDK creates, deploys and binds a post-login action; a Chromium login gets its custom claim, verified with jose", async () => {
    const created = await management.actions.create({
      name: `plan-claim-${random()}`,
      supported_triggers: [{ id: "post-login", version: "v3" }],
      code: `exports.onExecutePostLogin = async (event, api) => {
        console.log("login of", event.user.email);
        api.idToken.setCustomClaim(${JSON.stringify(CLAIM)}, event.secrets.PLAN);
        api.accessToken.setCustomClaim(${JSON.stringify(CLAIM)}, event.secrets.PLAN);
        api.idToken.setCustomClaim("sub", "not-the-user");
      };`,
      secrets: [{ name: "PLAN", value: "gold" }],
    });
    expect(created.secrets?.map((s) => s.name)).toEqual(["PLAN"]);
    const version = await management.actions.deploy(created.id ?? "");
    expect(version).toMatchObject({ number: 1, deployed: true, status: "built" });
    const bound = await management.actions.triggers.bindings.updateMany("post-login", { bindings: [{ ref: { type: "action_id", value: created.id ?? "" } }] });
    expect(bound.bindings?.map((b) => b.action?.id)).toEqual([created.id]);
    const listed = await management.actions.triggers.bindings.list("post-login");
    expect(listed.data.map((b) => b.action?.name)).toEqual([created.name]);

    const { callbackUrl, codeVerifier, state, nonce } = await browserLogin(true);
    expect(callbackUrl.searchParams.get("error")).toBeNull();
    const tokens = await oidc.authorizationCodeGrant(config, callbackUrl, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const jwks = createRemoteJWKSet(new URL(`${server.baseUrl}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(tokens.id_token ?? "", jwks, { issuer: `${server.baseUrl}/`, audience: config.clientMetadata().client_id });
    expect(payload[CLAIM]).toBe("gold");
    expect(payload.sub).toMatch(/^auth0\|/);
    const access = await jwtVerify(tokens.access_token, jwks, { issuer: `${server.baseUrl}/`, typ: "at+jwt" });
    expect(access.payload[CLAIM]).toBe("gold");
  });

  it("an action the SDK deploys as a new version that denies the login sends access_denied to the callback", async () => {
    const [action] = (await management.actions.list({ triggerId: "post-login" })).data;
    await management.actions.update(action?.id ?? "", { code: `exports.onExecutePostLogin = async (event, api) => { api.access.deny("Closed for maintenance"); };` });
    const v2 = await management.actions.deploy(action?.id ?? "");
    expect(v2.number).toBe(2);
    const { callbackUrl } = await browserLogin(false);
    expect(callbackUrl.searchParams.get("error")).toBe("access_denied");
    expect(callbackUrl.searchParams.get("error_description")).toBe("Closed for maintenance");
    expect(callbackUrl.searchParams.get("code")).toBeNull();
  });
});
