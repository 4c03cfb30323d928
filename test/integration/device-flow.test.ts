import { decodeJwt } from "jose";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant } from "../helpers/api";
import { seedClient, seedUser, type TestClient } from "../helpers/flows";
import { totpCode } from "../../src/worker/login/mfa/totp";
import { csrfOf, errorCodeOf, locationOf, setFactors, setPolicy, TestBrowser, totpSecretOf } from "../helpers/mfa";

/**
 * Issue 33 point 1: the device authorization grant (RFC 8628). A device asks POST /oauth/device/code for a
 * code, the user enters it at /activate, confirms the application and its scopes, logs in through the normal
 * login pages, and the device's polling of /oauth/token turns into tokens exactly once.
 */

const DEVICE = "urn:ietf:params:oauth:grant-type:device_code";
const PASSWORD = "p4ssw0rd!";
let tenant: string;
let host: string;
let device: TestClient;
let confidential: TestClient;
let otherDevice: TestClient;
let noGrant: TestClient;
let email: string;
let userId: string;
let ipCounter = 0;
const nextIp = () => `203.0.113.${(ipCounter++ % 250) + 1}`;

afterEach(() => setClock());

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  device = await seedClient(tenant, { token_endpoint_auth_method: "none", grant_types: [DEVICE, "refresh_token"] });
  confidential = await seedClient(tenant, { grant_types: [DEVICE] });
  otherDevice = await seedClient(tenant, { token_endpoint_auth_method: "none", grant_types: [DEVICE] });
  noGrant = await seedClient(tenant, { token_endpoint_auth_method: "none" });
  email = `device-${crypto.randomUUID().slice(0, 8)}@example.com`;
  userId = (await seedUser(tenant, email, PASSWORD)).user_id;
});

const form = (path: string, params: Record<string, string>, at = host) =>
  call(path, { method: "POST", host: at, headers: { "content-type": "application/x-www-form-urlencoded" }, body: new URLSearchParams(params).toString() });

interface DeviceAuthorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

async function startDevice(who: TestClient = device, scope = "openid profile email offline_access", at = host): Promise<DeviceAuthorization> {
  const res = await form("/oauth/device/code", { client_id: who.client_id, scope }, at);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as DeviceAuthorization;
}

const poll = (deviceCode: string, who: TestClient = device, at = host) => form("/oauth/token", { grant_type: DEVICE, device_code: deviceCode, client_id: who.client_id }, at);

/** Polls after the interval has passed (the clock moved forward), so no poll is `slow_down` by accident. */
let clockOffsetMs = 0;
async function pollLater(deviceCode: string, who: TestClient = device, at = host) {
  clockOffsetMs += 6_000;
  const base = Date.now();
  setClock(() => base + clockOffsetMs);
  return poll(deviceCode, who, at);
}

/** The user's side in a fresh browser: code entry, the confirmation screen, then `action` on it. */
async function enterCode(userCode: string, ip = nextIp(), at = host) {
  const browser = new TestBrowser(at);
  const entry = await browser.get(`/activate?user_code=${encodeURIComponent(userCode)}`);
  expect(entry.status).toBe(200);
  const csrf = csrfOf(await entry.text());
  const confirm = await call("/activate", {
    method: "POST",
    host: at,
    redirect: "manual",
    headers: { cookie: browser.cookieHeader(), "content-type": "application/x-www-form-urlencoded", "cf-connecting-ip": ip },
    body: new URLSearchParams({ _csrf: csrf, user_code: userCode }).toString(),
  });
  return { browser, csrf, confirm };
}

/** Enters the code, confirms, and posts the password on the login page; returns the browser and the answer. */
async function confirmAndLogIn(userCode: string, at = host, who = email) {
  const { browser, csrf, confirm } = await enterCode(userCode, nextIp(), at);
  expect(confirm.status).toBe(200);
  const toLogin = await browser.post("/activate/confirm", { _csrf: csrf, user_code: userCode, action: "confirm" });
  expect(toLogin.headers.get("location")).toMatch(/^\/u2\/login\?state=ls_/);
  const loginPage = await browser.follow(toLogin);
  expect(loginPage.status).toBe(200);
  const state = new URL(toLogin.headers.get("location") ?? "", "http://x").searchParams.get("state") ?? "";
  const loggedIn = await browser.post(`/u2/login?state=${state}`, { _csrf: csrfOf(await loginPage.text()), email: who, password: PASSWORD });
  return { browser, loggedIn };
}

/** The whole approval without MFA; returns the final page. */
async function approve(userCode: string) {
  const { browser, loggedIn } = await confirmAndLogIn(userCode);
  expect(loggedIn.headers.get("location")).toMatch(new RegExp(`^http://${host.replace(/\./g, "\\.")}/activate/callback\\?device=dc_\\w+&code=`));
  return browser.follow(loggedIn);
}

describe("POST /oauth/device/code", () => {
  it("answers the RFC 8628 §3.2 fields with a user code from the unambiguous alphabet, and discovery names the endpoint", async () => {
    const started = await startDevice();
    expect(started.user_code).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(started.device_code.length).toBeGreaterThanOrEqual(43);
    expect(started.verification_uri).toBe(`http://${host}/activate`);
    expect(started.verification_uri_complete).toBe(`http://${host}/activate?user_code=${started.user_code}`);
    expect(started).toMatchObject({ expires_in: 900, interval: 5 });
    const discovery = (await (await call("/.well-known/openid-configuration", { host })).json()) as Record<string, unknown>;
    expect(discovery.device_authorization_endpoint).toBe(`http://${host}/oauth/device/code`);
    expect(discovery.grant_types_supported).toContain(DEVICE);
  });

  it("refuses a client whose grant_types do not name the device grant (an empty list included)", async () => {
    const res = await form("/oauth/device/code", { client_id: noGrant.client_id });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "unauthorized_client" });
    const polled = await poll("anything", noGrant);
    expect(await polled.json()).toMatchObject({ error: "unauthorized_client" });
  });

  it("authenticates confidential clients, and answers bad input with invalid_request, never a 5xx", async () => {
    const anonymous = await form("/oauth/device/code", { client_id: confidential.client_id });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ error: "invalid_client" });
    const wrong = await form("/oauth/device/code", { client_id: confidential.client_id, client_secret: "nope" });
    expect(wrong.status).toBe(401);
    const right = await form("/oauth/device/code", { client_id: confidential.client_id, client_secret: confidential.client_secret });
    expect(right.status).toBe(200);
    for (const body of [{}, { client_id: device.client_id, scope: "x".repeat(9000) }] as Record<string, string>[]) {
      const res = await form("/oauth/device/code", body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: "invalid_request" });
    }
    const unknownApi = await form("/oauth/device/code", { client_id: device.client_id, audience: "https://nowhere.example.com" });
    expect(unknownApi.status).toBe(403);
    const missing = await form("/oauth/token", { grant_type: DEVICE, client_id: device.client_id });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: "invalid_request" });
  });
});

describe("the device flow", () => {
  it("polls authorization_pending, then slow_down when too fast, then gets the approved login's tokens exactly once", async () => {
    const started = await startDevice();
    const pending = await pollLater(started.device_code);
    expect(pending.status).toBe(400);
    expect(await pending.json()).toMatchObject({ error: "authorization_pending" });
    const tooFast = await poll(started.device_code);
    expect(tooFast.status).toBe(400);
    expect(await tooFast.json()).toMatchObject({ error: "slow_down" });

    const done = await approve(started.user_code);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain("Device connected");

    // slow_down added 5 s to the interval: the next poll waits 10 s.
    clockOffsetMs += 5_000;
    const tokens = await pollLater(started.device_code);
    expect(tokens.status, await tokens.clone().text()).toBe(200);
    const body = (await tokens.json()) as Record<string, string>;
    expect(body).toMatchObject({ token_type: "Bearer" });
    expect(body.refresh_token).toBeTruthy();
    const idToken = decodeJwt(body.id_token as string);
    expect(idToken).toMatchObject({ sub: userId, aud: device.client_id, email });
    expect(idToken.sid).toBeTruthy();
    expect(decodeJwt(body.access_token as string).sub).toBe(userId);

    const reused = await pollLater(started.device_code);
    expect(reused.status).toBe(403);
    expect(await reused.json()).toMatchObject({ error: "invalid_grant" });
  });

  it("shows the application's name and the scopes on the confirmation screen", async () => {
    const started = await startDevice(device, "openid email offline_access");
    const { confirm } = await enterCode(started.user_code.toLowerCase().replace("-", " "));
    expect(confirm.status).toBe(200);
    const html = await confirm.text();
    expect(html).toContain("Activate Test app?");
    expect(html).toContain(started.user_code);
    for (const scope of ["openid", "email", "offline_access"]) expect(html).toContain(`<code>${scope}</code>`);
  });

  it("answers access_denied once the user cancels on the confirmation screen", async () => {
    const started = await startDevice();
    const { browser, csrf } = await enterCode(started.user_code);
    const denied = await browser.post("/activate/confirm", { _csrf: csrf, user_code: started.user_code, action: "deny" });
    expect(denied.status).toBe(200);
    const res = await pollLater(started.device_code);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "access_denied" });
    // A refused code is no longer offered at /activate.
    const again = await enterCode(started.user_code);
    expect(again.confirm.status).toBe(400);
    expect(errorCodeOf(await again.confirm.text())).toBe("INVALID_USER_CODE");
  });

  it("answers expired_token after expires_in, and /activate no longer knows the code", async () => {
    const started = await startDevice();
    const later = Date.now() + 901_000;
    setClock(() => later);
    const res = await poll(started.device_code);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: "expired_token" });
    const { confirm } = await enterCode(started.user_code);
    expect(confirm.status).toBe(400);
  });

  it("refuses another client's device_code without consuming it", async () => {
    const started = await startDevice();
    const foreign = await pollLater(started.device_code, otherDevice);
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ error: "invalid_grant" });
    await approve(started.user_code);
    const own = await pollLater(started.device_code);
    expect(own.status).toBe(200);
  });

  it("lets a code approve its device only once: a second confirmation of the same code is refused", async () => {
    const started = await startDevice();
    await approve(started.user_code);
    const { confirm } = await enterCode(started.user_code);
    expect(confirm.status).toBe(400);
    expect(errorCodeOf(await confirm.text())).toBe("INVALID_USER_CODE");
  });

  it("issues a login code that only the device's callback can use, never /oauth/token", async () => {
    const both = await seedClient(tenant, { token_endpoint_auth_method: "none", grant_types: [DEVICE, "authorization_code"] });
    const started = await startDevice(both, "openid");
    const { browser, loggedIn } = await confirmAndLogIn(started.user_code);
    const callback = new URL(loggedIn.headers.get("location") ?? "");
    const code = callback.searchParams.get("code") ?? "";
    const redirectUri = `${callback.origin}${callback.pathname}?device=${callback.searchParams.get("device")}`;
    const stolen = await form("/oauth/token", { grant_type: "authorization_code", code, redirect_uri: redirectUri, client_id: both.client_id });
    expect(stolen.status).toBe(403);
    expect(await stolen.json()).toMatchObject({ error: "invalid_grant" });
    expect((await browser.follow(loggedIn)).status).toBe(200);
    expect((await pollLater(started.device_code, both)).status).toBe(200);
  });

  it("refuses an /activate post without the browser's CSRF cookie", async () => {
    const started = await startDevice();
    const res = await call("/activate", {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: "forged", user_code: started.user_code }).toString(),
    });
    expect(res.status).toBe(403);
    expect(errorCodeOf(await res.text())).toBe("INVALID_CSRF");
  });
});

describe("the device flow under an MFA policy", () => {
  it("asks for the second factor in the login, and the device's tokens carry amr mfa", async () => {
    const mfaTenant = await createTenant();
    const at = `${mfaTenant}.localhost:8787`;
    const tv = await seedClient(mfaTenant, { token_endpoint_auth_method: "none", grant_types: [DEVICE] });
    const who = `device-mfa-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await seedUser(mfaTenant, who, PASSWORD);
    await setFactors(mfaTenant, { otp: true });
    await setPolicy(mfaTenant, ["all-applications"]);

    const started = await startDevice(tv, "openid", at);
    const { browser, loggedIn } = await confirmAndLogIn(started.user_code, at, who);
    expect(locationOf(loggedIn)).toMatch(/^\/u2\/mfa\?state=mfa_/);
    const state = new URL(locationOf(loggedIn), "http://x").searchParams.get("state") as string;
    const enrollment = await browser.get(`/u2/mfa/totp-enrollment?state=${state}`);
    const html = await enrollment.text();
    const enrolled = await browser.post(`/u2/mfa/totp-enrollment?state=${state}`, { _csrf: csrfOf(html), code: totpCode(totpSecretOf(html), Date.now()) });
    expect(enrolled.status).toBe(200);
    // Not approved before the second factor.
    expect(await (await pollLater(started.device_code, tv, at)).json()).toMatchObject({ error: "authorization_pending" });
    const finished = await browser.post(`/u2/mfa/continue?state=${state}`, { _csrf: csrfOf(await enrolled.text()) });
    const done = await browser.follow(finished);
    expect(done.status).toBe(200);
    const tokens = await pollLater(started.device_code, tv, at);
    expect(tokens.status).toBe(200);
    expect(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).amr).toEqual(["pwd", "otp", "mfa"]);
  });
});

describe("user code throttling (RFC 8628 §5.1)", () => {
  it("throttles an IP after 10 unknown codes, even for a valid code, while other IPs go on", async () => {
    const started = await startDevice();
    const ip = nextIp();
    for (let i = 0; i < 10; i++) {
      const { confirm } = await enterCode("BBBB-BBBB", ip);
      expect(confirm.status).toBe(400);
    }
    const throttled = await enterCode(started.user_code, ip);
    expect(throttled.confirm.status).toBe(429);
    expect(errorCodeOf(await throttled.confirm.text())).toBe("TOO_MANY_ATTEMPTS");
    const elsewhere = await enterCode(started.user_code);
    expect(elsewhere.confirm.status).toBe(200);
  });

  it("throttles one code entered too often, from any IP", async () => {
    const started = await startDevice();
    for (let i = 0; i < 10; i++) expect((await enterCode(started.user_code)).confirm.status).toBe(200);
    const throttled = await enterCode(started.user_code);
    expect(throttled.confirm.status).toBe(429);
  });
});
