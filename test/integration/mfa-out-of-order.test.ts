import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { recoveryCodeHash } from "../../src/worker/login/mfa/recovery-codes";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { createTenant, mgmt } from "../helpers/api";
import { pendingLogin, redirectParams, seedClient, seedUser, type TestClient, tokenForm } from "../helpers/flows";
import { csrfOf, errorCodeOf, locationOf, passwordLogin, setFactors, setPolicy, TestBrowser } from "../helpers/mfa";
import { orgClient } from "../helpers/org-login";
import { orgWithMembers } from "../helpers/organizations";
import { tenantSql } from "../helpers/outbox";

/**
 * Issue 25 audit: the MFA state machine of a login, stepped out of order in the ways the issue lists and the
 * first review did not cover: a state of another tenant, a state whose login already completed, the login
 * transaction's own state before the password, the organization prompt before the second factor, a recovery
 * code as the factor answered, an enrollment ticket's state on the login-only steps, and a user blocked
 * between the password and the second factor. Each leads back to the step the transaction is at, or to the
 * expired page; none enrolls a factor, starts a session or issues a code.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
const SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const ALL_FACTORS = { otp: true, sms: true, "webauthn-roaming": true, "webauthn-platform": true, "recovery-code": true };

/** A tenant whose policy asks every login for a second factor, with every factor on, and an application. */
async function mfaTenant(): Promise<{ tenant: string; host: string; client: TestClient }> {
  const tenant = await createTenant();
  const client = await seedClient(tenant, { callbacks: [CALLBACK] });
  await setFactors(tenant, ALL_FACTORS);
  await setPolicy(tenant, ["all-applications"]);
  return { tenant, host: `${tenant}.localhost:8787`, client };
}

let a: Awaited<ReturnType<typeof mfaTenant>>;
beforeAll(async () => {
  a = await mfaTenant();
});

const newEmail = () => `ooo-${crypto.randomUUID().slice(0, 8)}@example.com`;
const methodsPath = (userId: string) => `/users/${encodeURIComponent(userId)}/authentication-methods`;

/** A user of tenant `a` with an authenticator app (and, when asked, unused recovery codes). */
async function totpUser(recoveryCodes: string[] = [], tenant = a.tenant) {
  const email = newEmail();
  const user = await seedUser(tenant, email, PASSWORD);
  const res = await mgmt("POST", methodsPath(user.user_id), { headers: { "tenant-id": tenant }, body: { type: "totp", totp_secret: SECRET } });
  expect(res.status, await res.clone().text()).toBe(201);
  for (const code of recoveryCodes) {
    await tenantSql(tenant, "INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (?, ?, ?)", user.user_id, await recoveryCodeHash(code), Date.now());
  }
  return { email, userId: user.user_id };
}

async function methodTypes(userId: string, tenant = a.tenant): Promise<string[]> {
  const res = await mgmt("GET", methodsPath(userId), { headers: { "tenant-id": tenant } });
  expect(res.status).toBe(200);
  return ((await res.json()) as { type: string }[]).map((m) => m.type).sort();
}

const sessionsOf = (userId: string) => tenantSql<{ id: string }>(a.tenant, "SELECT id FROM sessions WHERE user_id = ?", userId);

/** The password step of tenant `a`'s application, up to the TOTP challenge page (its CSRF token read). */
async function atTotpChallenge(email: string, clientId = a.client.client_id, tenant = a.tenant) {
  const { browser, res, login } = await passwordLogin(tenant, clientId, email, PASSWORD);
  expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
  const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
  const q = `?state=${state}`;
  const entry = await browser.follow(res);
  expect(locationOf(entry)).toBe(`/u2/mfa/totp-challenge${q}`);
  const csrf = csrfOf(await (await browser.follow(entry)).text());
  expect(csrf).not.toBe("");
  return { browser, login, state, q, csrf };
}

/** Expects the page every MFA step answers for a transaction this browser cannot use. */
async function expectExpired(res: Response, what: string) {
  expect(res.status, what).toBe(400);
  expect(errorCodeOf(await res.text()), what).toBe("INVALID_MFA_SESSION");
}

describe("a state from elsewhere is the expired page", () => {
  it("a state of another tenant, its MFA cookie carried over, opens no page and answers no post there; the login goes on at home", async () => {
    const b = await mfaTenant();
    const { email, userId } = await totpUser();
    const { browser, q, csrf, state } = await atTotpChallenge(email);
    const elsewhere = new TestBrowser(b.host);
    for (const [name, value] of browser.cookies) elsewhere.cookies.set(name, value);
    for (const path of ["/u2/mfa", "/u2/mfa/totp-challenge", "/u2/mfa/recovery-code", "/u2/mfa/phone-enrollment", "/u2/mfa/factors"]) {
      await expectExpired(await elsewhere.get(`${path}${q}`), `GET ${path} on another tenant`);
    }
    await expectExpired(await elsewhere.post(`/u2/mfa/totp-challenge${q}`, { _csrf: csrf, code: totpCode(SECRET, Date.now()) }), "POST totp-challenge on another tenant");
    await expectExpired(await elsewhere.post(`/u2/mfa/phone-enrollment${q}`, { _csrf: csrf, phone_number: "+14155550123" }), "POST phone-enrollment on another tenant");
    // Nothing was spent at home: the same code answers the challenge there and the login completes.
    const done = await browser.post(`/u2/mfa/totp-challenge${q}`, { _csrf: csrf, code: totpCode(SECRET, Date.now()) });
    expect(done.status, await done.clone().text()).toBe(302);
    expect(redirectParams(done).query.get("code")).toBeTruthy();
    expect(await methodTypes(userId)).toEqual(["totp"]);
    expect(state).toMatch(/^mfa_/);
  });

  it("the state of a login that completed is spent: with its MFA cookie kept, no page or post answers again and no second code is issued", async () => {
    const { email } = await totpUser();
    const t0 = Date.now();
    const { browser, q, csrf } = await atTotpChallenge(email);
    const kept = new Map(browser.cookies);
    const done = await browser.post(`/u2/mfa/totp-challenge${q}`, { _csrf: csrf, code: totpCode(SECRET, t0) });
    expect(redirectParams(done).query.get("code")).toBeTruthy();
    expect(browser.cookies.has("gh_mfa")).toBe(false);
    const replay = new TestBrowser(a.host);
    for (const [name, value] of kept) replay.cookies.set(name, value);
    expect(replay.cookies.has("gh_mfa")).toBe(true);
    await expectExpired(await replay.get(`/u2/mfa${q}`), "GET /u2/mfa after completion");
    await expectExpired(await replay.post(`/u2/mfa/totp-challenge${q}`, { _csrf: csrf, code: totpCode(SECRET, t0 + 30_000) }), "POST totp-challenge after completion");
    await expectExpired(await replay.post(`/u2/mfa/continue${q}`, { _csrf: csrf }), "POST continue after completion");
  });

  it("before the password: the login transaction's own state opens no MFA page or post, the recovery code included, and the login page still waits", async () => {
    const { userId } = await totpUser(["ABCDE-FGHJK"]);
    const login = await pendingLogin(a.tenant, a.client.client_id);
    const browser = new TestBrowser(a.host);
    browser.cookies.set("gh_csrf", login.csrf);
    const q = `?state=${login.state}`;
    for (const path of ["/u2/mfa", "/u2/mfa/recovery-code", "/u2/mfa/totp-challenge", "/u2/mfa/webauthn-challenge", "/u2/mfa/phone-challenge", "/u2/mfa/factors", "/u2/passkey/enrollment"]) {
      await expectExpired(await browser.get(`${path}${q}`), `GET ${path} before the password`);
    }
    await expectExpired(await browser.post(`/u2/mfa/recovery-code${q}`, { _csrf: login.csrf, code: "ABCDE-FGHJK" }), "POST recovery-code before the password");
    await expectExpired(await browser.post(`/u2/mfa/continue${q}`, { _csrf: login.csrf }), "POST continue before the password");
    expect((await browser.get(`/u2/login${q}`)).status).toBe(200);
    // The recovery code was not spent, and no session started.
    expect(await tenantSql(a.tenant, "SELECT used_at FROM recovery_codes WHERE user_id = ? AND used_at IS NOT NULL", userId)).toEqual([]);
    expect(await sessionsOf(userId)).toEqual([]);
  });
});

describe("every first factor leads into the state machine", () => {
  it("sign-up under the policy: the new user is sent to enroll, skipping it leads back, and no session or code exists before the factor", async () => {
    const login = await pendingLogin(a.tenant, a.client.client_id, { screen_hint: "signup" });
    const browser = new TestBrowser(a.host);
    browser.cookies.set("gh_csrf", login.csrf);
    const email = newEmail();
    const res = await browser.post(`/u2/signup?state=${login.state}`, { _csrf: login.csrf, email, password: `Gh-${crypto.randomUUID()}` });
    expect(res.status, await res.clone().text()).toBe(302);
    expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const q = new URL(locationOf(res), "http://x").search;
    // Several factors are on and the user has none: the choice, and every skip leads back to it.
    const entry = await browser.follow(res);
    expect(locationOf(entry)).toBe(`/u2/mfa/factors${q}`);
    expect((await browser.follow(entry)).status).toBe(200);
    // The choice page holds links only; the MFA step's forms carry the login's CSRF token.
    expect(locationOf(await browser.post(`/u2/mfa/continue${q}`, { _csrf: login.csrf }))).toBe(`/u2/mfa/factors${q}`);
    expect(locationOf(await browser.get(`/u2/mfa/totp-challenge${q}`))).toBe(`/u2/mfa/factors${q}`);
    const [user] = await tenantSql<{ user_id: string }>(a.tenant, "SELECT user_id FROM users WHERE email = ?", email);
    expect(user?.user_id).toBeTruthy();
    expect(await sessionsOf(user?.user_id as string)).toEqual([]);
  });
});

describe("steps that come after the second factor wait for it", () => {
  it("the post-login organization prompt: the browser at its TOTP challenge is shown no organizations and cannot choose one; after the code it can", async () => {
    const client = await orgClient(a.tenant, { organization_usage: "require", organization_require_behavior: "post_login_prompt" });
    const { org, users } = await orgWithMembers(a.tenant, 1);
    const member = users[0] as { user_id: string; email: string };
    const res = await mgmt("POST", methodsPath(member.user_id), { headers: { "tenant-id": a.tenant }, body: { type: "totp", totp_secret: SECRET } });
    expect(res.status).toBe(201);
    const { browser, login, q, csrf } = await atTotpChallenge(member.email, client.client_id);
    const early = await browser.get(`/u2/organization?state=${login.state}`);
    expect(early.status).toBe(400);
    expect(await early.text()).not.toContain(org.id);
    const chosen = await browser.post(`/u2/organization?state=${login.state}`, { _csrf: login.csrf, organization: org.id });
    expect(chosen.status).toBe(400);
    // The login is still at its challenge, and the organization prompt comes after it.
    expect(locationOf(await browser.get(`/u2/mfa${q}`))).toBe(`/u2/mfa/totp-challenge${q}`);
    const passed = await browser.post(`/u2/mfa/totp-challenge${q}`, { _csrf: csrf, code: totpCode(SECRET, Date.now()) });
    expect(locationOf(passed)).toBe(`/u2/organization?state=${login.state}`);
    expect(await sessionsOf(member.user_id)).toEqual([]);
  });

  it("a recovery code is the factor answered: enrollment stays closed before it, and after it the login completes with amr recovery-code and mfa, nothing enrolled", async () => {
    const { email, userId } = await totpUser(["ABCDE-FGHJK", "BCDEF-GHJKL"]);
    const { browser, q, csrf } = await atTotpChallenge(email);
    const page = await browser.get(`/u2/mfa/recovery-code${q}`);
    expect(page.status).toBe(200);
    expect(locationOf(await browser.post(`/u2/mfa/phone-enrollment${q}`, { _csrf: csrf, phone_number: "+14155550199" }))).toBe(`/u2/mfa/totp-challenge${q}`);
    const wrong = await browser.post(`/u2/mfa/recovery-code${q}`, { _csrf: csrf, code: "ZZZZZ-ZZZZZ" });
    expect(wrong.status).toBe(403);
    expect(errorCodeOf(await wrong.text())).toBe("INVALID_CODE");
    const used = await browser.post(`/u2/mfa/recovery-code${q}`, { _csrf: csrf, code: "ABCDE-FGHJK" });
    expect(used.status, await used.clone().text()).toBe(302);
    const code = redirectParams(used).query.get("code") as string;
    const tokens = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: a.client.client_id, client_secret: a.client.client_secret }, {}, a.host);
    expect(tokens.status).toBe(200);
    expect(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).amr).toEqual(["pwd", "recovery-code", "mfa"]);
    expect(await methodTypes(userId)).toEqual(["recovery-code", "totp"]);
  });

  it("the passkey offer: before the TOTP challenge its page and post lead back to the challenge and store nothing; after the code it is offered", async () => {
    const t = await mfaTenant();
    const [connection] = (await (await mgmt("GET", "/connections?name=Username-Password-Authentication", { headers: { "tenant-id": t.tenant } })).json()) as { id: string }[];
    const options = { authentication_methods: { passkey: { enabled: true }, password: { enabled: true } }, passkey_options: { challenge_ui: "both", progressive_enrollment_enabled: true } };
    expect((await mgmt("PATCH", `/connections/${connection?.id}`, { headers: { "tenant-id": t.tenant }, body: { options } })).status).toBe(200);
    const { email, userId } = await totpUser([], t.tenant);
    const { browser, q, csrf } = await atTotpChallenge(email, t.client.client_id, t.tenant);
    expect(locationOf(await browser.get(`/u2/passkey/enrollment${q}`))).toBe(`/u2/mfa/totp-challenge${q}`);
    expect(locationOf(await browser.post(`/u2/passkey/enrollment${q}`, { _csrf: csrf, credential: "{}" }))).toBe(`/u2/mfa/totp-challenge${q}`);
    expect(locationOf(await browser.post(`/u2/mfa/continue${q}`, { _csrf: csrf, action: "skip-passkey" }))).toBe(`/u2/mfa/totp-challenge${q}`);
    const passed = await browser.post(`/u2/mfa/totp-challenge${q}`, { _csrf: csrf, code: totpCode(SECRET, Date.now()) });
    expect(locationOf(passed)).toBe(`/u2/passkey/enrollment${q}`);
    expect(await methodTypes(userId, t.tenant)).toEqual(["totp"]);
  });

  it("a user blocked between the password and the second factor: the MFA pages answer the expired page and the right code completes nothing", async () => {
    const { email, userId } = await totpUser();
    const { browser, q, csrf } = await atTotpChallenge(email);
    const blocked = await mgmt("PATCH", `/users/${encodeURIComponent(userId)}`, { headers: { "tenant-id": a.tenant }, body: { blocked: true } });
    expect(blocked.status).toBe(200);
    await expectExpired(await browser.get(`/u2/mfa${q}`), "GET /u2/mfa for a blocked user");
    await expectExpired(await browser.post(`/u2/mfa/totp-challenge${q}`, { _csrf: csrf, code: totpCode(SECRET, Date.now()) }), "POST totp-challenge for a blocked user");
    expect(await sessionsOf(userId)).toEqual([]);
  });
});

describe("an enrollment ticket's state is not a login", () => {
  it("its challenge, recovery-code, security-key and passkey steps lead to the ticket's enrollment; a right TOTP code there starts no session", async () => {
    const { userId } = await totpUser(["ABCDE-FGHJK"]);
    const ticket = await mgmt("POST", "/guardian/enrollments/ticket", { headers: { "tenant-id": a.tenant }, body: { user_id: userId } });
    expect(ticket.status, await ticket.clone().text()).toBe(200);
    const url = new URL(((await ticket.json()) as { ticket_url: string }).ticket_url);
    const browser = new TestBrowser(url.host);
    const redeemed = await browser.get(url.pathname + url.search);
    expect(locationOf(redeemed)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const query = new URL(locationOf(redeemed), "http://x").search;
    // The user holds an authenticator app: of the ticket's factors (otp, sms) only the phone is left to enroll.
    const entry = await browser.follow(redeemed);
    expect(locationOf(entry)).toBe(`/u2/mfa/phone-enrollment${query}`);
    const csrf = csrfOf(await (await browser.follow(entry)).text());
    for (const path of ["/u2/mfa/totp-challenge", "/u2/mfa/recovery-code", "/u2/mfa/webauthn-challenge", "/u2/passkey/enrollment", `/u2/mfa/webauthn-enrollment?factor=webauthn-roaming&`]) {
      const url = path.endsWith("&") ? `${path}${query.slice(1)}` : `${path}${query}`;
      expect(locationOf(await browser.get(url)), `GET ${path}`).toBe(`/u2/mfa/phone-enrollment${query}`);
    }
    const answered = await browser.post(`/u2/mfa/totp-challenge${query}`, { _csrf: csrf, code: totpCode(SECRET, Date.now()) });
    expect(locationOf(answered)).toBe(`/u2/mfa/phone-enrollment${query}`);
    const recovered = await browser.post(`/u2/mfa/recovery-code${query}`, { _csrf: csrf, code: "ABCDE-FGHJK" });
    expect(locationOf(recovered)).toBe(`/u2/mfa/phone-enrollment${query}`);
    expect(await sessionsOf(userId)).toEqual([]);
    expect(await tenantSql(a.tenant, "SELECT used_at FROM recovery_codes WHERE user_id = ? AND used_at IS NOT NULL", userId)).toEqual([]);
    expect(await methodTypes(userId)).toEqual(["recovery-code", "totp"]);
  });
});

describe("the email factor the issue lists", () => {
  it("is not offered: its factor cannot be switched on, no email method can be stored, and there is no email MFA screen", async () => {
    const factor = await mgmt("PUT", "/guardian/factors/email", { headers: { "tenant-id": a.tenant }, body: { enabled: true } });
    expect(factor.status).toBe(404);
    const listed = (await (await mgmt("GET", "/guardian/factors", { headers: { "tenant-id": a.tenant } })).json()) as { name: string }[];
    expect(listed.map((f) => f.name)).not.toContain("email");
    const { userId, email } = await totpUser();
    const method = await mgmt("POST", methodsPath(userId), { headers: { "tenant-id": a.tenant }, body: { type: "email", email } });
    expect(method.status).toBe(400);
    expect(await methodTypes(userId)).toEqual(["totp"]);
    const { browser, q } = await atTotpChallenge(email);
    for (const path of ["/u2/mfa/email-challenge", "/u2/mfa/email-enrollment"]) expect((await browser.get(`${path}${q}`)).status, path).toBe(404);
  });
});
