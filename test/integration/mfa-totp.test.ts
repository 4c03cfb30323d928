import { decodeJwt } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, redirectParams, seedClient, seedUser, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { csrfOf, errorCodeOf, locationOf, passwordLogin, recoveryCodesOf, setFactors, setPolicy, type TestBrowser, totpSecretOf } from "../helpers/mfa";
import { tenantSql } from "../helpers/outbox";

/** Issue 12 points 3 and 7: TOTP at login under the all-applications policy, enrollment, lock, recovery codes. */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  await setFactors(tenant, { otp: true });
  await setPolicy(tenant, ["all-applications"]);
});

afterEach(() => setClock());

const newEmail = () => `mfa-${crypto.randomUUID().slice(0, 8)}@example.com`;
const mfaPath = (res: Response) => locationOf(res);

/** Password login, redirected into MFA, then to the first MFA screen. */
async function loginToMfa(email: string, request: Record<string, string> = {}) {
  const { browser, res, login } = await passwordLogin(tenant, client.client_id, email, PASSWORD, request);
  expect(res.status).toBe(302);
  expect(mfaPath(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
  const state = new URL(mfaPath(res), "http://x").searchParams.get("state") as string;
  const step = await browser.follow(res);
  return { browser, state, step, login };
}

/** Enrolls TOTP on the enrollment page; answers the secret and the page after the code (recovery codes). */
async function enrollTotp(browser: TestBrowser, state: string, page: Response) {
  expect(page.status).toBe(200);
  const html = await page.text();
  const secret = totpSecretOf(html);
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  const done = await browser.post(`/u2/mfa/totp-enrollment?state=${state}`, { _csrf: csrfOf(html), code: totpCode(secret, Date.now()) });
  return { secret, done };
}

async function exchange(res: Response) {
  expect(res.status).toBe(302);
  const code = redirectParams(res).query.get("code") as string;
  const tokens = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
  expect(tokens.status).toBe(200);
  return (await tokens.json()) as { id_token: string; access_token: string };
}

describe("forced enrollment at login", () => {
  it("a user without a factor enrolls TOTP (QR code and key), saves recovery codes, and the login completes with amr mfa", async () => {
    const email = newEmail();
    await seedUser(tenant, email, PASSWORD);
    const { browser, state, step, login } = await loginToMfa(email);
    expect(locationOf(await call(`/u2/mfa?state=${state}`, { host, redirect: "manual", headers: { cookie: browser.cookieHeader() } }))).toMatch(/totp-enrollment/);
    const [session] = await tenantSql<{ state: string }>(tenant, "SELECT state FROM login_sessions WHERE id = ?", login.state);
    expect(session?.state).toBe("awaiting_mfa");

    const enrollment = await browser.get(`/u2/mfa/totp-enrollment?state=${state}`);
    const html = await enrollment.clone().text();
    expect(html).toMatch(/<svg[^>]+role="img"[^>]+aria-label="QR code to add/);
    expect(html).toContain('<label for="code">6-digit code</label>');
    expect(html).toContain('autocomplete="one-time-code"');
    expect(enrollment.headers.get("content-security-policy")).toContain("default-src 'none'");
    void step;

    const wrong = await browser.post(`/u2/mfa/totp-enrollment?state=${state}`, { _csrf: csrfOf(html), code: "000000" });
    expect(wrong.status).toBe(403);
    const wrongHtml = await wrong.text();
    expect(errorCodeOf(wrongHtml)).toBe("INVALID_CODE");
    expect(wrongHtml).toMatch(/role="alert"/);
    expect(totpSecretOf(wrongHtml)).toBe(totpSecretOf(html));

    const { done } = await enrollTotp(browser, state, await browser.get(`/u2/mfa/totp-enrollment?state=${state}`));
    expect(done.status).toBe(200);
    const codes = recoveryCodesOf(await done.clone().text());
    expect(codes).toHaveLength(10);
    expect(new Set(codes).size).toBe(10);
    const finished = await browser.post(`/u2/mfa/continue?state=${state}`, { _csrf: csrfOf(await done.text()) });
    const tokens = await exchange(finished);
    expect(decodeJwt(tokens.id_token).amr).toEqual(["pwd", "otp", "mfa"]);
    expect(browser.cookies.has("gh_session")).toBe(true);
    expect(browser.cookies.has("gh_mfa")).toBe(false);

    const methods = (await (await mgmt("GET", `/users/${encodeURIComponent(String(decodeJwt(tokens.id_token).sub))}/authentication-methods`, { headers: { "tenant-id": tenant } })).json()) as { type: string; confirmed: boolean }[];
    expect(methods).toMatchObject([{ type: "totp", confirmed: true }, { type: "recovery-code", confirmed: true }]);
    const stored = await tenantSql<{ n: number; code_hash: string }>(tenant, "SELECT count(*) AS n, max(code_hash) AS code_hash FROM recovery_codes WHERE user_id = ?", String(decodeJwt(tokens.id_token).sub));
    expect(stored[0]?.n).toBe(10);
    expect(codes).not.toContain(stored[0]?.code_hash);
    // The MFA transaction cannot complete a second login.
    expect((await browser.post(`/u2/mfa/continue?state=${state}`, { _csrf: "x" })).status).toBe(400);
  });
});

describe("a login challenged for TOTP", () => {
  async function enrolledUser() {
    const email = newEmail();
    const user = await seedUser(tenant, email, PASSWORD);
    const res = await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`, {
      headers: { "tenant-id": tenant },
      body: { type: "totp", totp_secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" },
    });
    expect(res.status).toBe(201);
    return { email, userId: user.user_id, secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP" };
  }

  it("asks for the code of a method created through the management API, accepts it once, refuses it again", async () => {
    const { email, secret } = await enrolledUser();
    const t0 = Date.now();
    setClock(() => t0);
    const first = await loginToMfa(email);
    expect(first.step.status).toBe(302);
    expect(locationOf(first.step)).toMatch(/^\/u2\/mfa\/totp-challenge/);
    const page = await first.browser.follow(first.step);
    const html = await page.text();
    expect(html).toContain("Enter the 6-digit code from your authenticator app.");
    const code = totpCode(secret, t0);
    const ok = await first.browser.post(`/u2/mfa/totp-challenge?state=${first.state}`, { _csrf: csrfOf(html), code });
    const tokens = await exchange(ok);
    expect(decodeJwt(tokens.id_token).amr).toContain("mfa");

    const second = await loginToMfa(email);
    const page2 = await second.browser.follow(second.step);
    const replay = await second.browser.post(`/u2/mfa/totp-challenge?state=${second.state}`, { _csrf: csrfOf(await page2.text()), code });
    expect(replay.status).toBe(403);
    expect(errorCodeOf(await replay.text())).toBe("CODE_ALREADY_USED");
    // The next 30-second step's code works (the device within about 30 s of the server).
    setClock(() => t0 + 30_000);
    const next = await second.browser.post(`/u2/mfa/totp-challenge?state=${second.state}`, { _csrf: second.login.csrf, code: totpCode(secret, t0 + 30_000) });
    expect(next.status).toBe(302);
    expect(redirectParams(next).url.origin).toBe("https://app.example.com");
  });

  it("accepts the previous and next step, not two steps away", async () => {
    const { email, secret } = await enrolledUser();
    const t0 = Date.now();
    for (const [offset, expected] of [[-60_000, 403], [60_000, 403], [-30_000, 302], [30_000, 302]] as const) {
      setClock(() => t0);
      const flow = await loginToMfa(email);
      const page = await flow.browser.follow(flow.step);
      const res = await flow.browser.post(`/u2/mfa/totp-challenge?state=${flow.state}`, { _csrf: csrfOf(await page.text()), code: totpCode(secret, t0 + offset) });
      expect(res.status, `offset ${offset}`).toBe(expected);
    }
  });

  it("locks MFA after 5 wrong codes in 5 minutes (even the right code is refused), and unlocks after the window", async () => {
    const { email, secret } = await enrolledUser();
    const t0 = Date.now();
    setClock(() => t0);
    const flow = await loginToMfa(email);
    const page = await flow.browser.follow(flow.step);
    const csrf = csrfOf(await page.text());
    const post = (code: string) => flow.browser.post(`/u2/mfa/totp-challenge?state=${flow.state}`, { _csrf: csrf, code });
    for (let i = 0; i < 5; i++) expect((await post("000000")).status).toBe(403);
    const locked = await post(totpCode(secret, t0));
    expect(locked.status).toBe(429);
    expect(errorCodeOf(await locked.text())).toBe("TOO_MANY_ATTEMPTS");
    setClock(() => t0 + 5 * 60_000 + 1_000);
    const later = await loginToMfa(email);
    const page2 = await later.browser.follow(later.step);
    const ok = await later.browser.post(`/u2/mfa/totp-challenge?state=${later.state}`, { _csrf: csrfOf(await page2.text()), code: totpCode(secret, t0 + 5 * 60_000 + 1_000) });
    expect(ok.status).toBe(302);
  });

  it("counts parallel wrong guesses: at most 5 of 12 concurrent codes are even checked", async () => {
    const { email } = await enrolledUser();
    const flow = await loginToMfa(email);
    const page = await flow.browser.follow(flow.step);
    const csrf = csrfOf(await page.text());
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => flow.browser.post(`/u2/mfa/totp-challenge?state=${flow.state}`, { _csrf: csrf, code: String(100000 + i) })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 403)).toHaveLength(5);
    expect(statuses.filter((s) => s === 429)).toHaveLength(7);
  });

  it("a method deleted through the management API is no longer asked: the user enrolls again (both ways consistent)", async () => {
    const { email, userId } = await enrolledUser();
    const methodsPath = `/users/${encodeURIComponent(userId)}/authentication-methods`;
    const [totp] = (await (await mgmt("GET", methodsPath, { headers: { "tenant-id": tenant } })).json()) as { id: string }[];
    expect((await mgmt("DELETE", `${methodsPath}/${encodeURIComponent(totp?.id as string)}`, { headers: { "tenant-id": tenant } })).status).toBe(204);
    const flow = await loginToMfa(email);
    expect(locationOf(flow.step)).toMatch(/^\/u2\/mfa\/totp-enrollment/);
  });

  it("recovery codes appear as one recovery-code method; deleting it through the API removes them", async () => {
    const email = newEmail();
    const user = await seedUser(tenant, email, PASSWORD);
    const enroll = await loginToMfa(email);
    await enrollTotp(enroll.browser, enroll.state, await enroll.browser.follow(enroll.step));
    const methodsPath = `/users/${encodeURIComponent(user.user_id)}/authentication-methods`;
    const listed = (await (await mgmt("GET", methodsPath, { headers: { "tenant-id": tenant } })).json()) as { id: string; type: string }[];
    const recovery = listed.find((m) => m.type === "recovery-code");
    expect(recovery?.id).toBe("recovery-code|dev_codes");
    expect((await mgmt("DELETE", `${methodsPath}/${encodeURIComponent(recovery?.id as string)}`, { headers: { "tenant-id": tenant } })).status).toBe(204);
    expect(((await (await mgmt("GET", methodsPath, { headers: { "tenant-id": tenant } })).json()) as { type: string }[]).map((m) => m.type)).toEqual(["totp"]);
    const flow = await loginToMfa(email);
    expect(await (await flow.browser.get(`/u2/mfa/factors?state=${flow.state}`)).text()).not.toContain("/u2/mfa/recovery-code");
  });

  it("a recovery code works once instead of the app", async () => {
    const email = newEmail();
    await seedUser(tenant, email, PASSWORD);
    const enroll = await loginToMfa(email);
    const { done } = await enrollTotp(enroll.browser, enroll.state, await enroll.browser.follow(enroll.step));
    const [code] = recoveryCodesOf(await done.text());

    const flow = await loginToMfa(email);
    const choices = await flow.browser.get(`/u2/mfa/factors?state=${flow.state}`);
    expect(await choices.text()).toContain(`href="/u2/mfa/recovery-code?state=${flow.state}"`);
    const page = await flow.browser.get(`/u2/mfa/recovery-code?state=${flow.state}`);
    const csrf = csrfOf(await page.text());
    const used = await flow.browser.post(`/u2/mfa/recovery-code?state=${flow.state}`, { _csrf: csrf, code: (code as string).toLowerCase() });
    const tokens = await exchange(used);
    expect(decodeJwt(tokens.id_token).amr).toContain("mfa");

    const again = await loginToMfa(email);
    await again.browser.get(`/u2/mfa/recovery-code?state=${again.state}`);
    const refused = await again.browser.post(`/u2/mfa/recovery-code?state=${again.state}`, { _csrf: again.login.csrf, code: code as string });
    expect(refused.status).toBe(403);
  });

  it("the MFA screens refuse another browser holding the same state, and a form without the CSRF token", async () => {
    const { email } = await enrolledUser();
    const flow = await loginToMfa(email);
    const stranger = await call(`/u2/mfa/totp-challenge?state=${flow.state}`, { host, redirect: "manual" });
    expect(stranger.status).toBe(400);
    expect(errorCodeOf(await stranger.text())).toBe("INVALID_MFA_SESSION");
    const noCsrf = await flow.browser.post(`/u2/mfa/totp-challenge?state=${flow.state}`, { code: "123456" });
    expect(noCsrf.status).toBe(403);
  });
});

describe("other ways into a login respect the policy", () => {
  it("SSO reuses a session that passed MFA, but steps up one that did not (prompt=none: login_required)", async () => {
    const email = newEmail();
    const user = await seedUser(tenant, email, PASSWORD);
    const params = { client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "s1" };
    const plain = await sessionCookie(tenant, user.user_id, client.client_id);
    const stepUp = await authorize(params, { host, cookie: plain });
    expect(locationOf(stepUp)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const silent = await authorize({ ...params, prompt: "none" }, { host, cookie: plain });
    expect(redirectParams(silent).query.get("error")).toBe("login_required");

    const flow = await loginToMfa(email);
    const { done } = await enrollTotp(flow.browser, flow.state, await flow.browser.follow(flow.step));
    await exchange(await flow.browser.post(`/u2/mfa/continue?state=${flow.state}`, { _csrf: csrfOf(await done.text()) }));
    const sso = await authorize(params, { host, cookie: `gh_session=${flow.browser.cookies.get("gh_session")}` });
    expect(redirectParams(sso).query.get("code")).toBeTruthy();
  });

  it("a cross-origin login ticket leads to the second factor, not to a session", async () => {
    const email = newEmail();
    await seedUser(tenant, email, PASSWORD);
    const co = await call("/co/authenticate", {
      method: "POST",
      host,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_id: client.client_id, username: email, password: PASSWORD }),
    });
    expect(co.status).toBe(200);
    const { login_ticket } = (await co.json()) as { login_ticket: string };
    const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", login_ticket }, { host });
    expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("gh_session="))).toBe(false);
    expect(res.headers.getSetCookie().some((c) => c.startsWith("gh_mfa="))).toBe(true);
    // The ticket was consumed by that redirect.
    const replay = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", login_ticket }, { host });
    expect(redirectParams(replay).query.get("error")).toBe("access_denied");
  });

  it("without a policy the password alone completes the login (no MFA screen)", async () => {
    const other = await createTenant();
    const app = await seedClient(other, { callbacks: [CALLBACK] });
    await setFactors(other, { otp: true });
    const email = newEmail();
    await seedUser(other, email, PASSWORD);
    const { res } = await passwordLogin(other, app.client_id, email, PASSWORD);
    expect(res.status).toBe(302);
    expect(redirectParams(res).url.origin).toBe("https://app.example.com");
  });
});
