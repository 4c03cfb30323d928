import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, env, mgmt } from "../helpers/api";
import { redirectParams, seedClient, seedUser, type TestClient, tokenForm } from "../helpers/flows";
import { csrfOf, errorCodeOf, locationOf, passwordLogin, setFactors, setPolicy, TestBrowser } from "../helpers/mfa";
import { EMPTY_METHOD_FIELDS } from "../../src/shared/schemas/authentication-methods";
import { attest, newCredential, pageOptions } from "../helpers/soft-authenticator";

/**
 * Issue 25 finding 1: the MFA state machine of a login. A user who has a factor the tenant can challenge must
 * answer it before the login may enroll anything; every page and POST out of order leads back to the step
 * the transaction is at, never to an enrollment or a completed login.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
const TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  await setFactors(tenant, { otp: true, sms: true, "webauthn-roaming": true, "webauthn-platform": true, "recovery-code": true });
  await setPolicy(tenant, ["all-applications"]);
});

const asTenant = () => ({ headers: { "tenant-id": tenant } });
const newEmail = () => `sm-${crypto.randomUUID().slice(0, 8)}@example.com`;
const newPhone = () => `+1415556${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;
const methodsPath = (userId: string) => `/users/${encodeURIComponent(userId)}/authentication-methods`;

/** The methods a user already has, one per factor type the tenant can challenge. */
const EXISTING: Record<string, { body: () => Promise<Record<string, unknown>>; challenge: string }> = {
  otp: { body: async () => ({ type: "totp", totp_secret: TOTP_SECRET }), challenge: "/u2/mfa/totp-challenge" },
  "sms (phone)": { body: async () => ({ type: "phone", phone_number: newPhone() }), challenge: "/u2/mfa/phone-challenge" },
  "webauthn-roaming": { body: async () => ({ type: "webauthn-roaming", key_id: (await newCredential()).id, public_key: (await newCredential()).publicKey }), challenge: "/u2/mfa/webauthn-challenge" },
  "webauthn-platform": { body: async () => ({ type: "webauthn-platform", key_id: (await newCredential()).id, public_key: (await newCredential()).publicKey }), challenge: "/u2/mfa/webauthn-challenge" },
  passkey: { body: async () => ({ type: "passkey", key_id: (await newCredential()).id, public_key: (await newCredential()).publicKey }), challenge: "/u2/mfa/webauthn-challenge" },
};

const totpMethod = async () => ({ type: "totp", totp_secret: TOTP_SECRET });

async function userWith(method: Record<string, unknown> | null) {
  const email = newEmail();
  const user = await seedUser(tenant, email, PASSWORD);
  if (method) {
    const res = await mgmt("POST", methodsPath(user.user_id), { headers: { "tenant-id": tenant }, body: method });
    expect(res.status, await res.clone().text()).toBe(201);
  }
  return { email, userId: user.user_id };
}

async function methodTypes(userId: string): Promise<string[]> {
  const res = await mgmt("GET", methodsPath(userId), asTenant());
  expect(res.status).toBe(200);
  return ((await res.json()) as { type: string }[]).map((m) => m.type).sort();
}

/** Messages the development sink holds for a phone number. */
async function textsTo(phone: string): Promise<{ body: string }[]> {
  const res = await call(`/__dev/messages?to=${encodeURIComponent(phone)}`, { host });
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: { body: string }[] }).messages;
}

/** The password step, up to the redirect into /u2/mfa; `entry` is where /u2/mfa sends the browser. */
async function toMfa(email: string) {
  const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
  expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=/);
  const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
  const entry = await browser.follow(res);
  return { browser, state, entry, q: `?state=${state}` };
}

describe("a user with a factor must answer it before a login may enroll another (issue 25 finding 1)", () => {
  it("the reported bypass: a TOTP user's login cannot enroll the attacker's phone and complete with its SMS code", async () => {
    const { email, userId } = await userWith(await totpMethod());
    const { browser, state, entry, q } = await toMfa(email);
    expect(locationOf(entry)).toBe(`/u2/mfa/totp-challenge${q}`);
    const challengePage = await (await browser.follow(entry)).text();
    const csrf = csrfOf(challengePage);

    const enrollPage = await browser.get(`/u2/mfa/phone-enrollment${q}`);
    expect(locationOf(enrollPage)).toBe(`/u2/mfa/totp-challenge${q}`);
    const attacker = newPhone();
    const submitted = await browser.post(`/u2/mfa/phone-enrollment${q}`, { _csrf: csrf, phone_number: attacker });
    expect(locationOf(submitted)).toBe(`/u2/mfa/totp-challenge${q}`);
    expect(await textsTo(attacker)).toEqual([]);
    // No code was sent, so the phone challenge has nothing to check: it goes back to the TOTP challenge.
    const answered = await browser.post(`/u2/mfa/phone-challenge${q}`, { _csrf: csrf, code: "123456" });
    expect(locationOf(answered)).toBe(`/u2/mfa/totp-challenge${q}`);
    expect(await methodTypes(userId)).toEqual(["totp"]);
    expect(state).toMatch(/^mfa_/);
  });

  for (const [factor, existing] of Object.entries(EXISTING)) {
    it(`with ${factor} enrolled, every enrollment page and post leads to its challenge and stores nothing`, async () => {
      const method = await existing.body();
      const { userId, email } = await userWith(method);
      const before = await methodTypes(userId);
      const { browser, entry, q } = await toMfa(email);
      expect(locationOf(entry)).toBe(`${existing.challenge}${q}`);
      const page = await (await browser.follow(entry)).text();
      const csrf = csrfOf(page);
      expect(csrf).not.toBe("");
      for (const path of ["/u2/mfa/totp-enrollment", "/u2/mfa/phone-enrollment", "/u2/mfa/webauthn-enrollment?factor=webauthn-roaming&", "/u2/mfa/webauthn-enrollment?factor=webauthn-platform&"]) {
        const url = path.endsWith("&") ? `${path}${q.slice(1)}` : `${path}${q}`;
        const shown = await browser.get(url);
        expect(shown.status, `GET ${path}`).toBe(302);
        expect(locationOf(shown), `GET ${path}`).toBe(`${existing.challenge}${q}`);
        const posted = await browser.post(url, { _csrf: csrf, phone_number: newPhone(), code: "123456", credential: "{}" });
        expect(locationOf(posted), `POST ${path}`).toBe(`${existing.challenge}${q}`);
      }
      // "Try another method" lists ways to answer, never a way to enroll.
      const choices = await (await browser.get(`/u2/mfa/factors${q}`)).text();
      expect(choices).not.toMatch(/-enrollment/);
      // Skipping the challenge: continue and the entry both lead back to it; no code reaches the callback.
      const skipped = await browser.post(`/u2/mfa/continue${q}`, { _csrf: csrf });
      expect(locationOf(skipped)).toBe(`${existing.challenge}${q}`);
      expect(await methodTypes(userId)).toEqual(before);
    });
  }

  it("a phone typed before the user had a factor stops counting once they have one: its code completes nothing", async () => {
    const { email, userId } = await userWith(null);
    const { browser, entry, q } = await toMfa(email);
    expect(locationOf(entry)).toBe(`/u2/mfa/factors${q}`);
    const form = await (await browser.get(`/u2/mfa/phone-enrollment${q}`)).text();
    const attacker = newPhone();
    const sent = await browser.post(`/u2/mfa/phone-enrollment${q}`, { _csrf: csrfOf(form), phone_number: attacker });
    expect(locationOf(sent)).toBe(`/u2/mfa/phone-challenge${q}`);
    const code = /(\d{6}) is your verification code/.exec((await textsTo(attacker))[0]?.body ?? "")?.[1] as string;
    expect(code).toMatch(/^\d{6}$/);
    // Meanwhile the account's owner enrolls an authenticator app.
    expect((await mgmt("POST", methodsPath(userId), { headers: { "tenant-id": tenant }, body: { type: "totp", totp_secret: TOTP_SECRET } })).status).toBe(201);
    const answered = await browser.post(`/u2/mfa/phone-challenge${q}`, { _csrf: csrfOf(form), code });
    expect(locationOf(answered)).toBe(`/u2/mfa/totp-challenge${q}`);
    expect(await methodTypes(userId)).toEqual(["totp"]);
  });

  it("a code texted to a phone typed earlier does not answer the challenge of a phone the user has since (review)", async () => {
    const { email, userId } = await userWith(null);
    const { browser, q } = await toMfa(email);
    const form = await (await browser.get(`/u2/mfa/phone-enrollment${q}`)).text();
    const attacker = newPhone();
    await browser.post(`/u2/mfa/phone-enrollment${q}`, { _csrf: csrfOf(form), phone_number: attacker });
    const code = /(\d{6}) is your verification code/.exec((await textsTo(attacker))[0]?.body ?? "")?.[1] as string;
    // Meanwhile the account's owner gets a phone of their own: the transaction now challenges that phone.
    const owner = newPhone();
    expect((await mgmt("POST", methodsPath(userId), { headers: { "tenant-id": tenant }, body: { type: "phone", phone_number: owner } })).status).toBe(201);
    const answered = await browser.post(`/u2/mfa/phone-challenge${q}`, { _csrf: csrfOf(form), code });
    expect(answered.status).toBe(403);
    expect(errorCodeOf(await answered.text())).toBe("INVALID_CODE");
    expect(await methodTypes(userId)).toEqual(["phone"]);
  });

  it("a user without a factor still enrolls one at login (a security key here) and the login completes with mfa", async () => {
    const { email, userId } = await userWith(null);
    const { browser, q } = await toMfa(email);
    const page = await (await browser.get(`/u2/mfa/webauthn-enrollment?factor=webauthn-roaming&${q.slice(1)}`)).text();
    const options = pageOptions(page);
    const credential = await newCredential();
    const response = await attest(credential, { challenge: options.challenge, rpId: `${tenant}.localhost`, origin: `http://${host}` });
    const enrolled = await browser.post(`/u2/mfa/webauthn-enrollment?factor=webauthn-roaming&${q.slice(1)}`, { _csrf: csrfOf(page), credential: JSON.stringify(response), friendly_name: "Key" });
    // Recovery codes are on: they are shown once, then the login completes.
    expect(enrolled.status, (await enrolled.clone().text()).slice(0, 300)).toBe(200);
    const shown = await enrolled.text();
    const done = await browser.post(`/u2/mfa/continue${q}`, { _csrf: csrfOf(shown) });
    expect(done.status).toBe(302);
    const code = redirectParams(done).query.get("code") as string;
    const tokens = (await (await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host)).json()) as { id_token: string };
    expect(decodeJwt(tokens.id_token).amr).toEqual(["pwd", "hwk", "mfa"]);
    expect(await methodTypes(userId)).toEqual(["recovery-code", "webauthn-roaming"]);
  });
});

describe("the tenant object's commit checks the rule again (issue 25 finding 1: no race between check and store)", () => {
  it("enroll refuses a login transaction that has not passed its challenge when the user has a factor, and allows it after", async () => {
    const { email, userId } = await userWith(await totpMethod());
    const { state } = await toMfa(email);
    const mfa = env.TENANT.getByName(tenant).mfa();
    const factors = { otp: true, sms: true, "webauthn-roaming": true, "webauthn-platform": true, "recovery-code": true };
    const phone = { ...EMPTY_METHOD_FIELDS, id: "phone|dev_race", user_id: userId, type: "phone" as const, confirmed: true, name: null, phone_number: newPhone(), preferred_authentication_method: "sms" };
    const refused = await mfa.enroll(state, phone, { satisfied: true, amr: ["pwd", "sms", "mfa"] }, factors);
    expect(refused).toMatchObject({ ok: false, error: { code: "mfa_challenge_required" } });
    expect(await methodTypes(userId)).toEqual(["totp"]);
    // The same factors with otp switched off leave the user nothing to answer: a first enrollment is allowed.
    const allowed = await mfa.enroll(state, phone, { satisfied: true, amr: ["pwd", "sms", "mfa"] }, { ...factors, otp: false });
    expect(allowed.ok).toBe(true);
  });
});

describe("steps out of order or from elsewhere answer the expired page", () => {
  it("MFA pages without a transaction (before the password step) answer 400 INVALID_MFA_SESSION", async () => {
    const browser = new TestBrowser(host);
    for (const path of ["/u2/mfa", "/u2/mfa/recovery-code", "/u2/mfa/totp-challenge", "/u2/mfa/phone-enrollment", "/u2/mfa/factors"]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(400);
      expect(errorCodeOf(await res.text()), path).toBe("INVALID_MFA_SESSION");
    }
    const posted = await browser.post("/u2/mfa/recovery-code?state=mfa_unknown", { _csrf: "x", code: "ABCDE-23456" });
    expect(posted.status).toBe(400);
  });

  it("a state from another login's transaction is refused in this browser, for pages and posts", async () => {
    const a = await userWith(await totpMethod());
    const b = await userWith(await totpMethod());
    const mine = await toMfa(a.email);
    const theirs = await toMfa(b.email);
    const csrf = csrfOf(await (await mine.browser.follow(mine.entry)).text());
    const page = await mine.browser.get(`/u2/mfa/totp-challenge${theirs.q}`);
    expect(page.status).toBe(400);
    expect(errorCodeOf(await page.text())).toBe("INVALID_MFA_SESSION");
    const posted = await mine.browser.post(`/u2/mfa/phone-enrollment${theirs.q}`, { _csrf: csrf, phone_number: newPhone() });
    expect(posted.status).toBe(400);
    expect(await methodTypes(b.userId)).toEqual(["totp"]);
  });

  it("the recovery-code page of a user who has no recovery codes leads to the factor's challenge", async () => {
    const { email } = await userWith(await totpMethod());
    const { browser, q } = await toMfa(email);
    expect(locationOf(await browser.get(`/u2/mfa/recovery-code${q}`))).toBe(`/u2/mfa/totp-challenge${q}`);
  });
});
