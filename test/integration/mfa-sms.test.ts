import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { redirectParams, seedClient, seedUser, type TestClient, tokenForm } from "../helpers/flows";
import { csrfOf, errorCodeOf, locationOf, passwordLogin, recoveryCodesOf, setFactors, setPolicy } from "../helpers/mfa";

/** Issue 12 point 4: SMS enrollment and challenge through the selected provider (the development sink here). */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
let tenant: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  await setFactors(tenant, { sms: true, "recovery-code": false });
  await setPolicy(tenant, ["all-applications"]);
});

const newEmail = () => `sms-${crypto.randomUUID().slice(0, 8)}@example.com`;
const newPhone = () => `+1415555${String(Math.floor(Math.random() * 10_000)).padStart(4, "0")}`;

/** The newest code the development sink holds for a phone number. */
async function lastCode(tenantId: string, to: string): Promise<string> {
  const res = await call(`/__dev/messages?to=${encodeURIComponent(to)}`, { host: `${tenantId}.localhost:8787` });
  expect(res.status).toBe(200);
  const { messages } = (await res.json()) as { messages: { body: string; channel: string }[] };
  const code = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1];
  if (!code) throw new Error(`no code sent to ${to}`);
  return code;
}

async function exchange(res: Response) {
  expect(res.status, await res.clone().text()).toBe(302);
  const code = redirectParams(res).query.get("code") as string;
  const tokens = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, `${tenant}.localhost:8787`);
  return (await tokens.json()) as { id_token: string };
}

async function toMfa(email: string) {
  const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
  const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
  return { browser, state, entry: await browser.follow(res) };
}

describe("SMS as the second factor", () => {
  it("enrolls a phone at login with a code read from the development sink, then challenges it at the next login", async () => {
    const email = newEmail();
    const phone = newPhone();
    const user = await seedUser(tenant, email, PASSWORD);
    const first = await toMfa(email);
    expect(locationOf(first.entry)).toBe(`/u2/mfa/phone-enrollment?state=${first.state}`);
    const form = await (await first.browser.follow(first.entry)).text();
    expect(form).toContain('<label for="phone_number">Phone number</label>');
    const bad = await first.browser.post(`/u2/mfa/phone-enrollment?state=${first.state}`, { _csrf: csrfOf(form), phone_number: "12345" });
    expect(bad.status).toBe(400);
    expect(errorCodeOf(await bad.text())).toBe("INVALID_PHONE");
    const sent = await first.browser.post(`/u2/mfa/phone-enrollment?state=${first.state}`, { _csrf: csrfOf(form), phone_number: phone.replace(/^(\+1)(\d{3})/, "$1 ($2) ") });
    expect(locationOf(sent)).toBe(`/u2/mfa/phone-challenge?state=${first.state}`);
    const challenge = await (await first.browser.follow(sent)).text();
    expect(challenge).toContain(`to +•••••••${phone.slice(-4)}`);
    const wrong = await first.browser.post(`/u2/mfa/phone-challenge?state=${first.state}`, { _csrf: csrfOf(challenge), code: "000000" });
    expect(wrong.status).toBe(403);
    const code = await lastCode(tenant, phone);
    const tokens = await exchange(await first.browser.post(`/u2/mfa/phone-challenge?state=${first.state}`, { _csrf: csrfOf(challenge), code }));
    expect(decodeJwt(tokens.id_token).amr).toEqual(["pwd", "sms", "mfa"]);
    const methods = (await (await mgmt("GET", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`, { headers: { "tenant-id": tenant } })).json()) as Record<string, unknown>[];
    expect(methods).toMatchObject([{ type: "phone", phone_number: phone, confirmed: true }]);

    const second = await toMfa(email);
    expect(locationOf(second.entry)).toBe(`/u2/mfa/phone-challenge?state=${second.state}`);
    const page = await (await second.browser.follow(second.entry)).text();
    const next = await lastCode(tenant, phone);
    expect(next).not.toBe("");
    const done = await second.browser.post(`/u2/mfa/phone-challenge?state=${second.state}`, { _csrf: csrfOf(page), code: next });
    expect(done.status).toBe(302);
    // The code was consumed: it cannot complete another login.
    const third = await toMfa(email);
    const page3 = await (await third.browser.follow(third.entry)).text();
    expect((await third.browser.post(`/u2/mfa/phone-challenge?state=${third.state}`, { _csrf: csrfOf(page3), code: next })).status).toBe(403);
  });

  it("a code dies after 3 wrong guesses; resend sends a new one; at most 5 codes per transaction", async () => {
    const email = newEmail();
    const phone = newPhone();
    const user = await seedUser(tenant, email, PASSWORD);
    await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`, { headers: { "tenant-id": tenant }, body: { type: "phone", phone_number: phone } });
    const flow = await toMfa(email);
    const page = await (await flow.browser.follow(flow.entry)).text();
    const csrf = csrfOf(page);
    const code = await lastCode(tenant, phone);
    for (let i = 0; i < 3; i++) expect((await flow.browser.post(`/u2/mfa/phone-challenge?state=${flow.state}`, { _csrf: csrf, code: code === "111111" ? "222222" : "111111" })).status).toBe(403);
    expect((await flow.browser.post(`/u2/mfa/phone-challenge?state=${flow.state}`, { _csrf: csrf, code })).status).toBe(403);
    const resent = await flow.browser.post(`/u2/mfa/phone-challenge?state=${flow.state}`, { _csrf: csrf, action: "resend" });
    expect(resent.status).toBe(200);
    const fresh = await lastCode(tenant, phone);
    expect((await flow.browser.post(`/u2/mfa/phone-challenge?state=${flow.state}`, { _csrf: csrf, code: fresh })).status).toBe(302);

    const spam = await toMfa(email);
    const spamCsrf = csrfOf(await (await spam.browser.follow(spam.entry)).text());
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await spam.browser.post(`/u2/mfa/phone-challenge?state=${spam.state}`, { _csrf: spamCsrf, action: "resend" })).status);
    expect(statuses.slice(0, 4)).toEqual([200, 200, 200, 200]);
    expect(statuses[4]).toBe(429);
  });

  it("with twilio selected but not configured, the screen says SMS is unavailable instead of failing", async () => {
    const other = await createTenant();
    const app = await seedClient(other, { callbacks: [CALLBACK] });
    await setFactors(other, { sms: true });
    await setPolicy(other, ["all-applications"]);
    await mgmt("PUT", "/guardian/factors/sms/selected-provider", { headers: { "tenant-id": other }, body: { provider: "twilio" } });
    const email = newEmail();
    await seedUser(other, email, PASSWORD);
    const { browser, res } = await passwordLogin(other, app.client_id, email, PASSWORD);
    const state = new URL(locationOf(res), "http://x").searchParams.get("state") as string;
    const form = await (await browser.follow(await browser.follow(res))).text();
    const refused = await browser.post(`/u2/mfa/phone-enrollment?state=${state}`, { _csrf: csrfOf(form), phone_number: newPhone() });
    expect(refused.status).toBe(503);
    expect(errorCodeOf(await refused.text())).toBe("SMS_UNAVAILABLE");
  });

  it("recovery codes follow the factor switch: none are shown when the tenant turns them off", async () => {
    const email = newEmail();
    await seedUser(tenant, email, PASSWORD);
    const flow = await toMfa(email);
    const form = await (await flow.browser.follow(flow.entry)).text();
    const phone = newPhone();
    await flow.browser.post(`/u2/mfa/phone-enrollment?state=${flow.state}`, { _csrf: csrfOf(form), phone_number: phone });
    const done = await flow.browser.post(`/u2/mfa/phone-challenge?state=${flow.state}`, { _csrf: csrfOf(form), code: await lastCode(tenant, phone) });
    expect(done.status).toBe(302);
    expect(recoveryCodesOf(await done.text())).toEqual([]);
  });
});
