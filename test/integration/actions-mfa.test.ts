import { describe, expect, it } from "vitest";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { call, mgmt } from "../helpers/api";
import { bindAction } from "../helpers/actions";
import { ACTION_CALLBACK, ACTION_PASSWORD, actionLoginSetup, exchangeCode, redirectError } from "../helpers/action-logins";
import { authorize, redirectParams, sessionCookie } from "../helpers/flows";
import { csrfOf, locationOf, passwordLogin, setFactors, setPolicy, TestBrowser } from "../helpers/mfa";
import { tenantSql } from "../helpers/outbox";

/**
 * Issue 32 point 3: the post-login `api.multifactor.enable` and `api.authentication.challengeWith(Any)` /
 * `enrollWith(Any)`, run by the MFA state machine. The pipeline waits for the factor, then resumes after the
 * asking action (never running it twice); the issue 25 rule holds: a user who holds a factor answers it
 * before an action's enrollment adds another.
 */
const NS = "https://gatehouse.test";
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const newPhone = () => `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;

/** After MFA: records what the next action saw (its methods), proving it ran only once the factor was passed. */
const AFTER = `exports.onExecutePostLogin = async (event, api) => {
  api.idToken.setCustomClaim("${NS}/methods_after", event.authentication.methods.map((m) => m.name));
};`;

async function enrollMethod(tenant: string, userId: string, body: Record<string, unknown>) {
  const res = await mgmt("POST", `/users/${encodeURIComponent(userId)}/authentication-methods`, { headers: { "tenant-id": tenant }, body });
  expect(res.status, await res.clone().text()).toBe(201);
}

async function setup(factors: Record<string, boolean>) {
  const s = await actionLoginSetup();
  await setFactors(s.tenant, { "recovery-code": false, ...factors });
  return s;
}

/** A password login that an action sends into MFA: the browser, the transaction state and its first screen. */
async function loginIntoMfa(tenant: string, clientId: string, email: string) {
  const { browser, res } = await passwordLogin(tenant, clientId, email, ACTION_PASSWORD, { redirect_uri: ACTION_CALLBACK });
  expect(res.status, await res.clone().text()).toBe(302);
  expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
  const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
  const entry = await browser.follow(res);
  return { browser, state, entry };
}

/** Answers the TOTP challenge; `stepOffset` picks the next 30-second step (a step's code is spent once used). */
async function answerTotp(browser: TestBrowser, state: string, stepOffset = 0): Promise<Response> {
  const page = await browser.get(`/u2/mfa/totp-challenge?state=${state}`);
  expect(page.status).toBe(200);
  return browser.post(`/u2/mfa/totp-challenge?state=${state}`, { _csrf: csrfOf(await page.text()), code: totpCode(SECRET, Date.now() + stepOffset * 30_000) });
}

async function lastCode(tenant: string, to: string): Promise<string> {
  const res = await call(`/__dev/messages?to=${encodeURIComponent(to)}`, { host: `${tenant}.localhost:8787` });
  const { messages } = (await res.json()) as { messages: { body: string }[] };
  const code = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1];
  if (!code) throw new Error(`no code sent to ${to}`);
  return code;
}

describe("api.multifactor.enable (issue 32 point 3)", () => {
  it("a user without a factor enrolls one at the end of the pipeline; the tokens carry the actions' claims and amr mfa, and no action runs twice", async () => {
    const { tenant, client, email } = await setup({ otp: true });
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => {
      api.idToken.setCustomClaim("${NS}/methods_before", event.authentication.methods.map((m) => m.name));
      api.multifactor.enable("any", { allowRememberBrowser: false });
    };`);
    await bindAction(tenant, "post-login", AFTER);
    const { browser, state, entry } = await loginIntoMfa(tenant, client.client_id, email);
    expect(locationOf(entry)).toBe(`/u2/mfa/totp-enrollment?state=${state}`);
    const page = await browser.get(`/u2/mfa/totp-enrollment?state=${state}`);
    const html = await page.text();
    const secret = (/id="totp-secret"[^>]*>([A-Z2-7 ]+)</.exec(html)?.[1] ?? "").replace(/ /g, "");
    const done = await browser.post(`/u2/mfa/totp-enrollment?state=${state}`, { _csrf: csrfOf(html), code: totpCode(secret, Date.now()) });
    expect(done.status, await done.clone().text()).toBe(302);
    expect(done.headers.get("location")).toMatch(/^https:\/\/app\.example\.com\/callback\?.*code=/);
    const { id } = await exchangeCode(tenant, client, done);
    expect(id.amr).toEqual(expect.arrayContaining(["pwd", "otp", "mfa"]));
    // The pipeline finished before MFA: the first action saw a password login, the second too (enable is deferred to the end).
    expect(id[`${NS}/methods_before`]).toEqual(["pwd"]);
    expect(id[`${NS}/methods_after`]).toEqual(["pwd"]);
    const executions = await tenantSql<{ results: string }>(tenant, "SELECT results FROM action_executions ORDER BY created_at DESC LIMIT 1");
    expect(JSON.parse(executions[0]?.results ?? "[]")).toHaveLength(2);
  });

  it("allowRememberBrowser: an SSO login whose browser session passed MFA answers at once; without it, or on a session without MFA, the login goes through MFA again; prompt=none answers login_required", async () => {
    const { tenant, host, client, user } = await setup({ otp: true });
    await enrollMethod(tenant, user.user_id, { type: "totp", totp_secret: SECRET });
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => {
      api.multifactor.enable("any", { allowRememberBrowser: event.request.query.remember === "yes" });
    };`);
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const ask = (extra: Record<string, string>) =>
      authorize({ client_id: client.client_id, redirect_uri: ACTION_CALLBACK, response_type: "code", scope: "openid", ...extra }, { host, cookie });
    // A session that never passed MFA: remembered or not, MFA comes first.
    expect(locationOf(await ask({ remember: "yes" }))).toMatch(/^\/u2\/mfa\?state=mfa_/);
    expect(redirectError(await ask({ prompt: "none" }))).toMatchObject({ error: "login_required", description: "Multi-factor authentication required" });
    await tenantSql(tenant, "UPDATE sessions SET amr = ? WHERE user_id = ?", JSON.stringify(["pwd", "otp", "mfa"]), user.user_id);
    expect(redirectParams(await ask({ remember: "yes" })).query.get("code")).toBeTruthy();
    expect(redirectParams(await ask({ remember: "yes", prompt: "none" })).query.get("code")).toBeTruthy();
    expect(locationOf(await ask({}))).toMatch(/^\/u2\/mfa\?state=mfa_/);

    // That SSO step completes like any MFA step: the app's code, then the code for the client.
    const browser = new TestBrowser(host);
    const name = cookie.slice(0, cookie.indexOf("="));
    browser.cookies.set(name, cookie.slice(name.length + 1));
    const query = new URLSearchParams({ client_id: client.client_id, redirect_uri: ACTION_CALLBACK, response_type: "code", scope: "openid", state: "s1" });
    const stepUp = await browser.get(`/authorize?${query}`);
    const state = new URL(locationOf(stepUp), "http://x").searchParams.get("state") as string;
    expect(locationOf(await browser.follow(stepUp))).toBe(`/u2/mfa/totp-challenge?state=${state}`);
    const done = await answerTotp(browser, state);
    expect(done.headers.get("location")).toMatch(/^https:\/\/app\.example\.com\/callback\?.*code=/);
    const { id } = await exchangeCode(tenant, client, done);
    expect(id.amr).toEqual(expect.arrayContaining(["otp", "mfa"]));
  });

  it("google-authenticator narrows to the app's code: a user with only a phone answers it, then enrolls the app", async () => {
    const { tenant, client, user, email } = await setup({ otp: true, sms: true });
    const phone = newPhone();
    await enrollMethod(tenant, user.user_id, { type: "phone", phone_number: phone });
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { api.multifactor.enable("google-authenticator"); };`);
    const { browser, state, entry } = await loginIntoMfa(tenant, client.client_id, email);
    expect(locationOf(entry)).toBe(`/u2/mfa/phone-challenge?state=${state}`);
    const challenge = await (await browser.get(`/u2/mfa/phone-challenge?state=${state}`)).text();
    const answered = await browser.post(`/u2/mfa/phone-challenge?state=${state}`, { _csrf: csrfOf(challenge), code: await lastCode(tenant, phone) });
    expect(locationOf(answered)).toBe(`/u2/mfa/totp-enrollment?state=${state}`);
    const html = await (await browser.get(`/u2/mfa/totp-enrollment?state=${state}`)).text();
    const secret = (/id="totp-secret"[^>]*>([A-Z2-7 ]+)</.exec(html)?.[1] ?? "").replace(/ /g, "");
    const done = await browser.post(`/u2/mfa/totp-enrollment?state=${state}`, { _csrf: csrfOf(html), code: totpCode(secret, Date.now()) });
    const { id } = await exchangeCode(tenant, client, done);
    expect(id.amr).toEqual(expect.arrayContaining(["otp", "mfa"]));
    const methods = await tenantSql<{ type: string }>(tenant, "SELECT type FROM authentication_methods WHERE user_id = ? ORDER BY type", user.user_id);
    expect(methods.map((m) => m.type)).toEqual(["phone", "totp"]);
  });

  it("the duo provider and an unknown one are errors inside the action, and the login fails with the message", async () => {
    for (const [code, message] of [
      [`api.multifactor.enable("duo");`, "api.multifactor.enable: the duo provider is not supported by this service"],
      [`api.multifactor.enable("sms");`, "api.multifactor.enable: provider must be one of any, guardian, google-authenticator"],
      [`api.authentication.challengeWith({ type: "push-notification" });`, "api.authentication.challengeWith: the push-notification factor is not available on this service"],
      [`api.authentication.enrollWithAny([{ type: "recovery-code" }]);`, "api.authentication.enrollWithAny: recovery codes are challenged, not enrolled"],
      [`api.authentication.challengeWithAny([]);`, "api.authentication.challengeWithAny needs at least one factor"],
    ] as const) {
      const { tenant, client, email } = await setup({ otp: true });
      await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { ${code} };`);
      const { res } = await passwordLogin(tenant, client.client_id, email, ACTION_PASSWORD, { redirect_uri: ACTION_CALLBACK });
      expect(redirectError(res)).toEqual({ error: "access_denied", description: message, code: null });
    }
  });
});

describe("api.authentication.challengeWith / enrollWith (issue 32 point 3)", () => {
  it("challengeWith waits for the factor: the actions after it run only once it was passed, and see it", async () => {
    const { tenant, client, user, email } = await setup({ otp: true, sms: true });
    await enrollMethod(tenant, user.user_id, { type: "totp", totp_secret: SECRET });
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => {
      api.idToken.setCustomClaim("${NS}/before", true);
      api.authentication.challengeWith({ type: "otp" }, { additionalFactors: [{ type: "phone" }] });
    };`);
    await bindAction(tenant, "post-login", AFTER);
    const { browser, state, entry } = await loginIntoMfa(tenant, client.client_id, email);
    expect(locationOf(entry)).toBe(`/u2/mfa/totp-challenge?state=${state}`);
    const done = await answerTotp(browser, state);
    const { id } = await exchangeCode(tenant, client, done);
    expect(id).toMatchObject({ [`${NS}/before`]: true, [`${NS}/methods_after`]: ["pwd", "mfa"] });
    expect(id.amr).toEqual(expect.arrayContaining(["otp", "mfa"]));
  });

  it("a factor the login already passed (the tenant's policy) meets the challenge at once; a factor the user does not hold refuses the login", async () => {
    const { tenant, client, user, email } = await setup({ otp: true });
    await enrollMethod(tenant, user.user_id, { type: "totp", totp_secret: SECRET });
    await setPolicy(tenant, ["all-applications"]);
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => {
      if (event.user.app_metadata.phone_only) api.authentication.challengeWithAny([{ type: "phone" }]);
      else api.authentication.challengeWith({ type: "otp" });
    };`);
    await bindAction(tenant, "post-login", AFTER);
    const { browser, state } = await loginIntoMfa(tenant, client.client_id, email);
    const done = await answerTotp(browser, state);
    expect(done.headers.get("location")).toMatch(/^https:\/\/app\.example\.com\/callback\?.*code=/);
    const { id } = await exchangeCode(tenant, client, done);
    expect(id[`${NS}/methods_after`]).toEqual(["pwd", "mfa"]);

    const flagged = await mgmt("PATCH", `/users/${encodeURIComponent(user.user_id)}`, { headers: { "tenant-id": tenant }, body: { app_metadata: { phone_only: true } } });
    expect(flagged.status).toBe(200);
    const again = await loginIntoMfa(tenant, client.client_id, email);
    const refused = await answerTotp(again.browser, again.state, 1);
    expect(redirectError(refused)).toMatchObject({ error: "access_denied", description: "The user has no enrolled factor that api.authentication can challenge with (phone)" });
  });

  it("enrollWith: a user who holds a factor answers it before enrolling the new one (issue 25 rule); the enrollment screen is closed until then", async () => {
    const { tenant, client, user, email } = await setup({ otp: true, sms: true });
    await enrollMethod(tenant, user.user_id, { type: "totp", totp_secret: SECRET });
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => {
      if (!event.user.app_metadata.enrolled) api.authentication.enrollWith({ type: "phone" });
      api.user.setAppMetadata("enrolled", true);
    };`);
    await bindAction(tenant, "post-login", AFTER);
    const { browser, state, entry } = await loginIntoMfa(tenant, client.client_id, email);
    expect(locationOf(entry)).toBe(`/u2/mfa/totp-challenge?state=${state}`);
    // Before the challenge, the enrollment screen sends the browser back to it.
    expect(locationOf(await browser.get(`/u2/mfa/phone-enrollment?state=${state}`))).toBe(`/u2/mfa/totp-challenge?state=${state}`);
    const challenged = await answerTotp(browser, state);
    expect(locationOf(challenged)).toBe(`/u2/mfa/phone-enrollment?state=${state}`);
    const form = await (await browser.get(`/u2/mfa/phone-enrollment?state=${state}`)).text();
    const phone = newPhone();
    const sent = await browser.post(`/u2/mfa/phone-enrollment?state=${state}`, { _csrf: csrfOf(form), phone_number: phone });
    expect(locationOf(sent)).toBe(`/u2/mfa/phone-challenge?state=${state}`);
    const challenge = await (await browser.get(`/u2/mfa/phone-challenge?state=${state}`)).text();
    const done = await browser.post(`/u2/mfa/phone-challenge?state=${state}`, { _csrf: csrfOf(challenge), code: await lastCode(tenant, phone) });
    expect(done.headers.get("location")).toMatch(/^https:\/\/app\.example\.com\/callback\?.*code=/);
    const { id } = await exchangeCode(tenant, client, done);
    expect(id[`${NS}/methods_after`]).toEqual(["pwd", "mfa"]);
    const methods = await tenantSql<{ type: string; confirmed: number }>(tenant, "SELECT type, confirmed FROM authentication_methods WHERE user_id = ? ORDER BY type", user.user_id);
    expect(methods.map((m) => [m.type, m.confirmed])).toEqual([["phone", 1], ["totp", 1]]);
    // The metadata the asking action set was applied once the pipeline finished.
    const stored = await mgmt("GET", `/users/${encodeURIComponent(user.user_id)}`, { headers: { "tenant-id": tenant } });
    expect(((await stored.json()) as { app_metadata: Record<string, unknown> }).app_metadata).toMatchObject({ enrolled: true });
  });

  it("enrollWithAny for a user with no factor goes straight to the enrollment of a named one; a factor the tenant does not enable refuses the login", async () => {
    const { tenant, client, email } = await setup({ otp: true });
    await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => {
      api.authentication.enrollWithAny(event.user.app_metadata.phone ? [{ type: "phone" }] : [{ type: "otp" }, { type: "phone" }]);
    };`);
    const { state, entry } = await loginIntoMfa(tenant, client.client_id, email);
    // SMS is off for the tenant: only the app is offered.
    expect(locationOf(entry)).toBe(`/u2/mfa/totp-enrollment?state=${state}`);
    const users = await tenantSql<{ user_id: string }>(tenant, "SELECT user_id FROM users WHERE email = ?", email);
    await mgmt("PATCH", `/users/${encodeURIComponent(users[0]?.user_id ?? "")}`, { headers: { "tenant-id": tenant }, body: { app_metadata: { phone: true } } });
    const { res } = await passwordLogin(tenant, client.client_id, email, ACTION_PASSWORD, { redirect_uri: ACTION_CALLBACK });
    expect(redirectError(res).description).toBe("None of the factors api.authentication asked to enroll (phone) is enabled for the tenant and not already enrolled by the user");
  });
});
