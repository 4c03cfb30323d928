import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { userHandle } from "../../src/worker/login/mfa/webauthn";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { bindAction } from "../helpers/actions";
import { pendingLogin, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { csrfOf, locationOf, passwordLogin, setFactors, setPolicy, TestBrowser } from "../helpers/mfa";
import { orgClient } from "../helpers/org-login";
import { onTenant, orgWithMembers } from "../helpers/organizations";
import { tenantSql } from "../helpers/outbox";
import { ACS, authnRequest, deflated, postedForm, readResponse } from "../helpers/saml";
import { assert, newCredential, pageOptions } from "../helpers/soft-authenticator";

/**
 * The steps every login completion runs, in this order (issues 11, 12 and 13 together): account linking, the
 * MFA gate on the linked primary, the organization gate, the post-login actions, then the session and the
 * code. Password, passkey, after MFA and SSO step-up: each path is seen from the browser and the tokens.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const METHODS_ACTION = `exports.onExecutePostLogin = async (event, api) => {
  api.idToken.setCustomClaim("https://example.com/methods", event.authentication.methods.map((m) => m.name).join(","));
};`;

/** A tenant whose MFA policy asks every login for TOTP. */
async function mfaTenant() {
  const tenant = await createTenant();
  await setFactors(tenant, { otp: true });
  await setPolicy(tenant, ["all-applications"]);
  return { tenant, host: `${tenant}.localhost:8787` };
}

async function withTotp(tenant: string, userId: string) {
  const res = await mgmt("POST", `/users/${encodeURIComponent(userId)}/authentication-methods`, { headers: { "tenant-id": tenant }, body: { type: "totp", totp_secret: SECRET } });
  expect(res.status, await res.clone().text()).toBe(201);
}

/** From a redirect into /u2/mfa: the TOTP challenge answered with the current code. */
async function passTotp(browser: TestBrowser, intoMfa: Response): Promise<Response> {
  expect(locationOf(intoMfa)).toMatch(/^\/u2\/mfa\?state=mfa_/);
  const state = new URL(locationOf(intoMfa), "http://x").searchParams.get("state") as string;
  const step = await browser.follow(intoMfa);
  expect(locationOf(step)).toBe(`/u2/mfa/totp-challenge?state=${state}`);
  const html = await (await browser.follow(step)).text();
  return browser.post(`/u2/mfa/totp-challenge?state=${state}`, { _csrf: csrfOf(html), code: totpCode(SECRET, Date.now()) });
}

async function tokensOf(host: string, client: TestClient, res: Response) {
  expect(res.status, await res.clone().text()).toBe(302);
  const { query } = redirectParams(res);
  expect(query.get("error"), query.get("error_description") ?? "").toBeNull();
  const tokens = await tokenForm(
    { grant_type: "authorization_code", code: query.get("code") as string, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
    {},
    host,
  );
  expect(tokens.status, await tokens.clone().text()).toBe(200);
  const body = (await tokens.json()) as { id_token: string; access_token: string };
  return { id: decodeJwt(body.id_token), access: decodeJwt(body.access_token) };
}

/** Passkeys on the tenant's database connection, and a passkey of the user stored through the API. */
async function passkeyUser(tenant: string, userId: string) {
  const [connection] = (await (await mgmt("GET", "/connections?name=Username-Password-Authentication", { headers: { "tenant-id": tenant } })).json()) as { id: string }[];
  const patched = await mgmt("PATCH", `/connections/${connection?.id}`, {
    headers: { "tenant-id": tenant },
    body: { options: { authentication_methods: { passkey: { enabled: true }, password: { enabled: true } }, passkey_options: { challenge_ui: "both" } } },
  });
  expect(patched.status, await patched.clone().text()).toBe(200);
  const passkey = await newCredential(await userHandle(tenant, userId));
  const created = await mgmt("POST", `/users/${encodeURIComponent(userId)}/authentication-methods`, {
    headers: { "tenant-id": tenant },
    body: { type: "passkey", credential_id: passkey.id, public_key: passkey.publicKey, user_handle: passkey.userHandle, transports: ["internal"] },
  });
  expect(created.status).toBe(201);
  return passkey;
}

/** A passkey login on the login page of a fresh browser; answers the browser, the login and the response. */
async function passkeyLogin(tenant: string, client: TestClient, passkey: Awaited<ReturnType<typeof passkeyUser>>) {
  const host = `${tenant}.localhost:8787`;
  const browser = new TestBrowser(host);
  const login = await pendingLogin(tenant, client.client_id);
  const html = await (await browser.get(`/u2/login?state=${login.state}`)).text();
  const answer = await assert(passkey, { challenge: pageOptions(html).challenge, rpId: `${tenant}.localhost`, origin: `http://${host}` });
  const res = await browser.post(`/u2/login/passkey?state=${login.state}`, { _csrf: login.csrf, credential: JSON.stringify(answer) });
  return { browser, login, res };
}

describe("MFA, then the post-login actions", () => {
  it("the actions run after the second factor: event.authentication.methods names pwd and mfa, and their claims reach the tokens beside amr", async () => {
    const { tenant, host } = await mfaTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    const email = `${uniqueId("u")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    await withTotp(tenant, user.user_id);
    await bindAction(tenant, "post-login", METHODS_ACTION);
    const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
    const { id } = await tokensOf(host, client, await passTotp(browser, res));
    expect(id).toMatchObject({ sub: user.user_id, amr: ["pwd", "otp", "mfa"], "https://example.com/methods": "pwd,mfa" });
  });

  it("an action that denies is reached only after the second factor, and then nothing is issued", async () => {
    const { tenant } = await mfaTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    const email = `${uniqueId("u")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    await withTotp(tenant, user.user_id);
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.access.deny("Not today"); };`);
    const { browser, res, login } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
    // The password alone does not reach the action: the browser goes to the second factor first.
    expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const denied = await passTotp(browser, res);
    expect(denied.status).toBe(302);
    const { query } = redirectParams(denied);
    expect({ error: query.get("error"), description: query.get("error_description"), code: query.get("code") }).toEqual({ error: "access_denied", description: "Not today", code: null });
    expect(await tenantSql(tenant, "SELECT id FROM sessions WHERE user_id = ?", user.user_id)).toEqual([]);
    const [session] = await tenantSql<{ state: string }>(tenant, "SELECT state FROM login_sessions WHERE id = ?", login.state);
    expect(session?.state).toBe("awaiting_mfa");
  });

  it("a passkey login runs the actions too, with event.authentication.methods passkey, and commits their metadata with the login", async () => {
    const tenant = await createTenant();
    const host = `${tenant}.localhost:8787`;
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    const user = await seedUser(tenant, `${uniqueId("pk")}@example.com`, PASSWORD);
    const passkey = await passkeyUser(tenant, user.user_id);
    await bindAction(
      tenant,
      "post-login",
      `exports.onExecutePostLogin = async (event, api) => {
        api.user.setAppMetadata("last_method", event.authentication.methods[0].name);
        api.idToken.setCustomClaim("https://example.com/methods", event.authentication.methods.map((m) => m.name).join(","));
      };`,
    );
    const { res } = await passkeyLogin(tenant, client, passkey);
    const { id } = await tokensOf(host, client, res);
    expect(id).toMatchObject({ sub: user.user_id, amr: ["hwk", "user", "mfa"], "https://example.com/methods": "passkey" });
    const stored = (await (await onTenant(tenant).call("GET", `/users/${encodeURIComponent(user.user_id)}`)).json()) as { app_metadata?: Record<string, unknown> };
    expect(stored.app_metadata).toMatchObject({ last_method: "passkey" });
  });

  it("an SSO session that never passed MFA steps up first; the actions and the organization gate follow the second factor", async () => {
    const { tenant, host } = await mfaTenant();
    const client = await orgClient(tenant);
    const { org, users } = await orgWithMembers(tenant, 1);
    const member = users[0] as { user_id: string };
    await withTotp(tenant, member.user_id);
    await bindAction(tenant, "post-login", METHODS_ACTION);
    const browser = new TestBrowser(host);
    const [name, value] = (await sessionCookie(tenant, member.user_id, client.client_id)).split("=") as [string, string];
    browser.cookies.set(name, value);
    const query = new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "st", organization: org.id });
    const silent = await browser.get(`/authorize?${query}&prompt=none`);
    expect(redirectParams(silent).query.get("error")).toBe("login_required");
    const stepUp = await browser.get(`/authorize?${query}`);
    const { id } = await tokensOf(host, client, await passTotp(browser, stepUp));
    expect(id).toMatchObject({ sub: member.user_id, org_id: org.id, amr: ["pwd", "otp", "mfa"], "https://example.com/methods": "pwd,mfa" });
  });
});

describe("MFA before a SAML assertion", () => {
  it("a SAML SSO session that never passed MFA steps up first (a passive request gets NoPassive); the assertion comes after the second factor", async () => {
    const { tenant, host } = await mfaTenant();
    const created = await mgmt("POST", "/clients", { headers: { "tenant-id": tenant }, body: { name: "SP app", callbacks: [ACS], addons: { samlp: {} } } });
    expect(created.status, await created.clone().text()).toBe(201);
    const app = (await created.json()) as { client_id: string };
    const email = `${uniqueId("saml")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    await withTotp(tenant, user.user_id);
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.user.setAppMetadata("saml_methods", event.authentication.methods.map((m) => m.name)); };`);
    const browser = new TestBrowser(host);
    const [name, value] = (await sessionCookie(tenant, user.user_id, app.client_id)).split("=") as [string, string];
    browser.cookies.set(name, value);

    const passive = await browser.get(`/samlp/${app.client_id}?${new URLSearchParams({ SAMLRequest: await deflated(authnRequest({ id: "_passive", extra: ' IsPassive="true"' })) })}`);
    expect(passive.status).toBe(200);
    const refused = readResponse(postedForm(await passive.text()).fields.SAMLResponse ?? "");
    expect(refused.find("Assertion")).toBeUndefined();
    expect(refused.xml).toContain("urn:oasis:names:tc:SAML:2.0:status:NoPassive");

    const stepUp = await browser.get(`/samlp/${app.client_id}?${new URLSearchParams({ SAMLRequest: await deflated(authnRequest({ id: "_stepup" })), RelayState: "rs" })}`);
    const answered = await passTotp(browser, stepUp);
    expect(answered.status, await answered.clone().text()).toBe(200);
    const { action, fields } = postedForm(await answered.text());
    expect(action).toBe(ACS);
    expect(fields.RelayState).toBe("rs");
    const saml = readResponse(fields.SAMLResponse ?? "");
    expect(saml.attr(saml.root, "InResponseTo")).toBe("_stepup");
    expect(saml.text("NameID")).toBe(user.user_id);
    const stored = (await (await onTenant(tenant).call("GET", `/users/${encodeURIComponent(user.user_id)}`)).json()) as { app_metadata?: Record<string, unknown> };
    expect(stored.app_metadata).toMatchObject({ saml_methods: ["pwd", "mfa"] });
  });
});

describe("MFA, then the organization gate", () => {
  it("the post-login organization prompt comes after the second factor, only in the browser that passed it, and the login completes in the chosen organization", async () => {
    const { tenant, host } = await mfaTenant();
    const client = await orgClient(tenant, { organization_usage: "require", organization_require_behavior: "post_login_prompt" });
    const { org, users } = await orgWithMembers(tenant, 1);
    const member = users[0] as { user_id: string; email: string };
    await withTotp(tenant, member.user_id);
    const { browser, res, login } = await passwordLogin(tenant, client.client_id, member.email, PASSWORD);
    // Not the organization prompt yet: the second factor comes first.
    expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const mfaState = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
    const afterMfa = await passTotp(browser, res);
    expect(locationOf(afterMfa)).toBe(`/u2/organization?state=${login.state}`);
    // Another browser holding the same URL (no MFA cookie) is not shown the user's organizations.
    const stranger = await call(`/u2/organization?state=${login.state}`, { host, redirect: "manual" });
    expect(stranger.status).toBe(400);
    expect(await stranger.text()).not.toContain(org.id);
    const picker = await browser.follow(afterMfa);
    const html = await picker.text();
    expect(picker.status, html).toBe(200);
    expect(html).toContain(`value="${org.id}"`);
    const chosen = await browser.post(`/u2/organization?state=${login.state}`, { _csrf: csrfOf(html), organization: org.id });
    expect(locationOf(chosen)).toBe(`/u2/mfa?state=${mfaState}`);
    const { id, access } = await tokensOf(host, client, await browser.follow(chosen));
    expect(id).toMatchObject({ sub: member.user_id, org_id: org.id, amr: ["pwd", "otp", "mfa"] });
    expect(access.org_id).toBe(org.id);
    expect(browser.cookies.has("gh_mfa")).toBe(false);
  });

  it("after a passkey login the post-login organization prompt keeps the passkey's amr, and the login completes in the chosen organization", async () => {
    const tenant = await createTenant();
    const host = `${tenant}.localhost:8787`;
    const client = await orgClient(tenant, { organization_usage: "require", organization_require_behavior: "post_login_prompt" });
    const { org, users } = await orgWithMembers(tenant, 1);
    const member = users[0] as { user_id: string };
    const passkey = await passkeyUser(tenant, member.user_id);
    const { browser, login, res } = await passkeyLogin(tenant, client, passkey);
    expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const toPicker = await browser.follow(res);
    expect(locationOf(toPicker)).toBe(`/u2/organization?state=${login.state}`);
    const html = await (await browser.follow(toPicker)).text();
    expect(html).toContain(`value="${org.id}"`);
    const chosen = await browser.post(`/u2/organization?state=${login.state}`, { _csrf: csrfOf(html), organization: org.id });
    const { id } = await tokensOf(host, client, await browser.follow(chosen));
    expect(id).toMatchObject({ sub: member.user_id, org_id: org.id, amr: ["hwk", "user", "mfa"] });
  });

  it("a user outside the organization passes MFA, then the organization refuses: access_denied and no session", async () => {
    const { tenant } = await mfaTenant();
    const client = await orgClient(tenant);
    const { org } = await orgWithMembers(tenant, 0);
    const email = `${uniqueId("outsider")}@example.com`;
    const outsider = await seedUser(tenant, email, PASSWORD);
    await withTotp(tenant, outsider.user_id);
    const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD, { organization: org.id });
    expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const refused = await passTotp(browser, res);
    expect(redirectParams(refused).query.get("error")).toBe("access_denied");
    expect(redirectParams(refused).query.get("error_description")).toContain("is not part of");
    expect(await tenantSql(tenant, "SELECT id FROM sessions WHERE user_id = ?", outsider.user_id)).toEqual([]);
  });
});

describe("account linking, then MFA", () => {
  it("the MFA gate runs on the primary the login was linked into: its factor is asked for, and the tokens are the primary's", async () => {
    const { tenant, host } = await mfaTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    const legacy = await mgmt("POST", "/connections", { headers: { "tenant-id": tenant }, body: { name: "legacy-db", strategy: "auth0" } });
    expect(legacy.status, await legacy.clone().text()).toBe(201);
    const email = `${uniqueId("linked")}@example.com`;
    const primaryRes = await mgmt("POST", "/users", { headers: { "tenant-id": tenant }, body: { connection: "legacy-db", email, password: "Legacy-pass-123", email_verified: true } });
    expect(primaryRes.status, await primaryRes.clone().text()).toBe(201);
    const primary = ((await primaryRes.json()) as { user_id: string }).user_id;
    await withTotp(tenant, primary);
    // The newer account has no factor: were the gate to run on it, the login would go to enrollment instead.
    const newer = await seedUser(tenant, email, PASSWORD);
    const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
    const { id } = await tokensOf(host, client, await passTotp(browser, res));
    expect(id).toMatchObject({ sub: primary, amr: ["pwd", "otp", "mfa"] });
    const [row] = await tenantSql<{ linked_to: string | null }>(tenant, "SELECT linked_to FROM users WHERE user_id = ?", newer.user_id);
    expect(row?.linked_to).toBe(primary);
  });
});
