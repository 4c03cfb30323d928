import { env } from "cloudflare:test";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { pendingLogin, redirectParams, seedClient, seedUser, type TestClient, tokenForm } from "../helpers/flows";
import { csrfOf, errorCodeOf, locationOf, passwordLogin, recoveryCodesOf, setFactors, setPolicy, TestBrowser } from "../helpers/mfa";
import { userHandle } from "../../src/worker/login/mfa/webauthn";
import { assert, attest, FLAGS, newCredential, pageOptions, type SoftCredential } from "../helpers/soft-authenticator";

/**
 * Issue 12 point 5: security keys and platform authenticators as second factors, passkeys as the first
 * factor and the enrollment offer. The browser side is a software authenticator (test/helpers), the server
 * side the real @simplewebauthn/server verification in the worker.
 */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";
const newEmail = () => `wa-${crypto.randomUUID().slice(0, 8)}@example.com`;

async function exchange(tenant: string, client: TestClient, res: Response) {
  expect(res.status, await res.clone().text()).toBe(302);
  const code = redirectParams(res).query.get("code") as string;
  const tokens = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, `${tenant}.localhost:8787`);
  expect(tokens.status).toBe(200);
  return (await tokens.json()) as { id_token: string };
}

/** The tenant's database connection options (replaced whole, as PATCH /connections does). */
async function setConnectionOptions(tenant: string, options: Record<string, unknown>) {
  const [connection] = (await (await mgmt("GET", "/connections?name=Username-Password-Authentication", { headers: { "tenant-id": tenant } })).json()) as { id: string }[];
  const res = await mgmt("PATCH", `/connections/${connection?.id}`, { headers: { "tenant-id": tenant }, body: { options } });
  expect(res.status, await res.clone().text()).toBe(200);
}

describe("security keys as the second factor", () => {
  let tenant: string;
  let origin: string;
  let rpId: string;
  let client: TestClient;
  beforeAll(async () => {
    tenant = await createTenant();
    rpId = `${tenant}.localhost`;
    origin = `http://${tenant}.localhost:8787`;
    client = await seedClient(tenant, { callbacks: [CALLBACK] });
    await setFactors(tenant, { "webauthn-roaming": true });
    await setPolicy(tenant, ["all-applications"]);
  });

  async function mfaStep(email: string) {
    const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
    const state = new URL(locationOf(res), origin).searchParams.get("state") as string;
    return { browser, state, entry: await browser.follow(res) };
  }

  async function enrollKey(email: string): Promise<SoftCredential> {
    const { browser, state, entry } = await mfaStep(email);
    expect(locationOf(entry)).toBe(`/u2/mfa/webauthn-enrollment?factor=webauthn-roaming&state=${state}`);
    const page = await browser.follow(entry);
    const html = await page.text();
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'nonce-[A-Za-z0-9_-]+'/);
    const options = pageOptions(html);
    expect(options.rp?.id).toBe(rpId);
    expect(options.authenticatorSelection).toMatchObject({ authenticatorAttachment: "cross-platform" });
    const key = await newCredential();
    const response = await attest(key, { challenge: options.challenge, rpId, origin, transports: ["usb", "nfc"] });
    const done = await browser.post(`/u2/mfa/webauthn-enrollment?factor=webauthn-roaming&state=${state}`, { _csrf: csrfOf(html), credential: JSON.stringify(response), friendly_name: "Blue key" });
    expect(done.status).toBe(200);
    const codesPage = await done.text();
    expect(recoveryCodesOf(codesPage)).toHaveLength(10);
    await exchange(tenant, client, await browser.post(`/u2/mfa/continue?state=${state}`, { _csrf: csrfOf(codesPage) }));
    return key;
  }

  it("enrolls a key at login: attestation verified, public data stored, shown through the management API", async () => {
    const email = newEmail();
    const user = await seedUser(tenant, email, PASSWORD);
    const key = await enrollKey(email);
    const methods = (await (await mgmt("GET", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`, { headers: { "tenant-id": tenant } })).json()) as Record<string, unknown>[];
    expect(methods.map((m) => m.type)).toEqual(["webauthn-roaming", "recovery-code"]);
    expect(methods).toMatchObject([{ type: "webauthn-roaming", credential_id: key.id, public_key: key.publicKey, sign_count: 0, transports: ["usb", "nfc"], friendly_name: "Blue key", relying_party_identifier: rpId, confirmed: true }, { type: "recovery-code" }]);
  });

  it("asks for the key at the next login; a replayed assertion, a stale counter and a foreign origin are refused", async () => {
    const email = newEmail();
    await seedUser(tenant, email, PASSWORD);
    const key = await enrollKey(email);

    const { browser, state, entry } = await mfaStep(email);
    expect(locationOf(entry)).toBe(`/u2/mfa/webauthn-challenge?state=${state}`);
    let html = await (await browser.follow(entry)).text();
    let options = pageOptions(html);
    expect(options.allowCredentials?.map((c) => c.id)).toEqual([key.id]);
    const good = await assert(key, { challenge: options.challenge, rpId, origin });

    const foreign = await assert(key, { challenge: options.challenge, rpId, origin: "http://evil.localhost:8787" });
    const refused = await browser.post(`/u2/mfa/webauthn-challenge?state=${state}`, { _csrf: csrfOf(html), credential: JSON.stringify(foreign) });
    expect(refused.status).toBe(403);
    expect(errorCodeOf(await refused.text())).toBe("WEBAUTHN_FAILED");

    // The foreign attempt consumed that challenge: the good answer to it is refused too (single use).
    const replay = await browser.post(`/u2/mfa/webauthn-challenge?state=${state}`, { _csrf: csrfOf(html), credential: JSON.stringify(good) });
    expect(replay.status).toBe(403);

    html = await (await browser.get(`/u2/mfa/webauthn-challenge?state=${state}`)).text();
    options = pageOptions(html);
    const fresh = await assert(key, { challenge: options.challenge, rpId, origin, counter: 5 });
    const tokens = await exchange(tenant, client, await browser.post(`/u2/mfa/webauthn-challenge?state=${state}`, { _csrf: csrfOf(html), credential: JSON.stringify(fresh) }));
    expect(decodeJwt(tokens.id_token).amr).toEqual(["pwd", "hwk", "mfa"]);

    // Clone detection: once the stored counter is 5, an assertion carrying 5 (or less) is refused.
    const next = await mfaStep(email);
    html = await (await next.browser.follow(next.entry)).text();
    const stale = await assert(key, { challenge: pageOptions(html).challenge, rpId, origin, counter: 5 });
    expect((await next.browser.post(`/u2/mfa/webauthn-challenge?state=${next.state}`, { _csrf: csrfOf(html), credential: JSON.stringify(stale) })).status).toBe(403);
    html = await (await next.browser.get(`/u2/mfa/webauthn-challenge?state=${next.state}`)).text();
    const moved = await assert(key, { challenge: pageOptions(html).challenge, rpId, origin, counter: 6 });
    expect((await next.browser.post(`/u2/mfa/webauthn-challenge?state=${next.state}`, { _csrf: csrfOf(html), credential: JSON.stringify(moved) })).status).toBe(302);
  });

  it("moves a counter once when two assertions with the same counter race (clone detection in the object)", async () => {
    const user = await seedUser(tenant, newEmail(), PASSWORD);
    const key = await newCredential();
    const created = await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`, {
      headers: { "tenant-id": tenant },
      body: { type: "webauthn-roaming", credential_id: key.id, public_key: key.publicKey, sign_count: 3 },
    });
    const { id } = (await created.json()) as { id: string };
    const stub = env.TENANT.getByName(tenant);
    const results = await Promise.all(Array.from({ length: 6 }, () => stub.mfa().recordAssertion(id, 7)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await stub.mfa().recordAssertion(id, 6)).toBe(false);
    expect(await stub.mfa().recordAssertion(id, 8)).toBe(true);
  });

  it("a key of another user does not pass this user's challenge", async () => {
    const alice = newEmail();
    const bob = newEmail();
    await seedUser(tenant, alice, PASSWORD);
    await seedUser(tenant, bob, PASSWORD);
    await enrollKey(alice);
    const bobKey = await enrollKey(bob);
    const { browser, state, entry } = await mfaStep(alice);
    const html = await (await browser.follow(entry)).text();
    const answer = await assert(bobKey, { challenge: pageOptions(html).challenge, rpId, origin });
    expect((await browser.post(`/u2/mfa/webauthn-challenge?state=${state}`, { _csrf: csrfOf(html), credential: JSON.stringify(answer) })).status).toBe(403);
  });
});

describe("passkeys", () => {
  let tenant: string;
  let origin: string;
  let rpId: string;
  let client: TestClient;
  beforeAll(async () => {
    tenant = await createTenant();
    rpId = `${tenant}.localhost`;
    origin = `http://${tenant}.localhost:8787`;
    client = await seedClient(tenant, { callbacks: [CALLBACK] });
    await setConnectionOptions(tenant, { authentication_methods: { passkey: { enabled: true }, password: { enabled: true } }, passkey_options: { challenge_ui: "both", progressive_enrollment_enabled: true } });
  });

  async function loginPage() {
    const browser = new TestBrowser(`${tenant}.localhost:8787`);
    const login = await pendingLogin(tenant, client.client_id);
    const page = await browser.get(`/u2/login?state=${login.state}`);
    return { browser, login, page, html: await page.clone().text() };
  }

  it("the login page offers passkeys: conditional UI autofill on the email field, a button, scripts by nonce only", async () => {
    const { page, html } = await loginPage();
    expect(html).toMatch(/<input id="email"[^>]*autocomplete="username webauthn"/);
    expect(html).toContain('data-mode="autofill"');
    expect(html).toMatch(/<button type="button" id="webauthn-start">Sign in with a passkey<\/button>/);
    const nonce = /script-src 'nonce-([A-Za-z0-9_-]+)'/.exec(page.headers.get("content-security-policy") ?? "")?.[1];
    expect(nonce).toBeTruthy();
    expect(html).toContain(`<script nonce="${nonce}" src="/u2/assets/webauthn-browser.js">`);
    const options = pageOptions(html);
    expect(options.rpId).toBe(rpId);
    expect(options.allowCredentials).toEqual([]);
    expect(options.userVerification).toBe("required");
    const asset = await call("/u2/assets/webauthn-browser.js");
    expect(asset.headers.get("content-type")).toMatch(/^text\/javascript/);
    expect(await asset.text()).toContain("SimpleWebAuthnBrowser");
  });

  it("logs in with a passkey as the only factor, even under the MFA policy, with amr mfa", async () => {
    const email = newEmail();
    const user = await seedUser(tenant, email, PASSWORD);
    const passkey = await newCredential(await userHandle(tenant, user.user_id));
    const created = await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`, {
      headers: { "tenant-id": tenant },
      body: { type: "passkey", credential_id: passkey.id, public_key: passkey.publicKey, user_handle: passkey.userHandle, credential_backed_up: true, transports: ["internal"] },
    });
    expect(created.status).toBe(201);
    await setPolicy(tenant, ["all-applications"]);
    try {
      const { browser, login, html } = await loginPage();
      const noUv = await assert(passkey, { challenge: pageOptions(html).challenge, rpId, origin, flags: FLAGS.UP });
      const refused = await browser.post(`/u2/login/passkey?state=${login.state}`, { _csrf: login.csrf, credential: JSON.stringify(noUv) });
      expect(refused.status).toBe(403);
      expect(errorCodeOf(await refused.text())).toBe("PASSKEY_FAILED");

      const again = await loginPage();
      const answer = await assert(passkey, { challenge: pageOptions(again.html).challenge, rpId, origin });
      const res = await again.browser.post(`/u2/login/passkey?state=${again.login.state}`, { _csrf: again.login.csrf, credential: JSON.stringify(answer) });
      const tokens = await exchange(tenant, client, res);
      expect(decodeJwt(tokens.id_token)).toMatchObject({ sub: user.user_id, amr: ["hwk", "user", "mfa"] });
      // The same assertion cannot log in twice (its challenge is spent).
      const third = await loginPage();
      expect((await third.browser.post(`/u2/login/passkey?state=${third.login.state}`, { _csrf: third.login.csrf, credential: JSON.stringify(answer) })).status).toBe(403);
    } finally {
      await setPolicy(tenant, []);
    }
  });

  it("offers a passkey after a password login; creating one stores a discoverable credential, Not now skips", async () => {
    const email = newEmail();
    const user = await seedUser(tenant, email, PASSWORD);
    const { browser, res } = await passwordLogin(tenant, client.client_id, email, PASSWORD);
    const entry = await browser.follow(res);
    expect(locationOf(entry)).toMatch(/^\/u2\/passkey\/enrollment\?state=mfa_/);
    const page = await browser.follow(entry);
    const html = await page.text();
    expect(html).toContain("Log in faster with a passkey");
    const options = pageOptions(html);
    expect(options.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    const passkey = await newCredential(options.user?.id ?? null);
    const response = await attest(passkey, { challenge: options.challenge, rpId, origin, flags: FLAGS.UP | FLAGS.UV | FLAGS.BE | FLAGS.BS, transports: ["internal", "hybrid"] });
    const state = new URL(locationOf(entry), origin).searchParams.get("state");
    await exchange(tenant, client, await browser.post(`/u2/passkey/enrollment?state=${state}`, { _csrf: csrfOf(html), credential: JSON.stringify(response) }));
    const methods = (await (await mgmt("GET", `/users/${encodeURIComponent(user.user_id)}/authentication-methods`, { headers: { "tenant-id": tenant } })).json()) as Record<string, unknown>[];
    expect(methods).toMatchObject([{ type: "passkey", credential_id: passkey.id, credential_backed_up: true, credential_device_type: "multi_device", transports: ["internal", "hybrid"] }]);

    // With a passkey, no more offer; another user says Not now and the login completes without one.
    const again = await passwordLogin(tenant, client.client_id, email, PASSWORD);
    expect(redirectParams(again.res).url.origin).toBe("https://app.example.com");
    const other = newEmail();
    await seedUser(tenant, other, PASSWORD);
    const skip = await passwordLogin(tenant, client.client_id, other, PASSWORD);
    expect(locationOf(await skip.browser.follow(skip.res))).toMatch(/^\/u2\/passkey\/enrollment/);
    const skipState = new URL(locationOf(skip.res), origin).searchParams.get("state");
    await exchange(tenant, client, await skip.browser.post(`/u2/mfa/continue?state=${skipState}`, { _csrf: skip.login.csrf, action: "skip-passkey" }));
  });
});
