import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant, mgmt } from "../helpers/api";
import { pendingLogin, redirectParams, seedClient, type TestClient, tokenForm } from "../helpers/flows";
import { csrfOf, errorCodeOf, locationOf, setFactors, setPolicy, TestBrowser } from "../helpers/mfa";
import { logsOf, relay } from "../helpers/outbox";

/**
 * Issue 29 point 0: the passwordless connections enabled for an application on the universal login pages:
 * "Continue with email code", the code through the development sink, the code checked once and only for
 * its login transaction, and the login completed as a password login is (tokens, MFA policy, logs).
 */

const CALLBACK = "https://app.example.com/callback";
let tenant: string;
let host: string;
let emailConnection: string;
let databaseConnection: string;

const asTenant = () => ({ headers: { "tenant-id": tenant } });
const newEmail = () => `pwl-page-${crypto.randomUUID().slice(0, 8)}@example.com`;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  const res = await mgmt("POST", "/connections", { ...asTenant(), body: { name: "email", strategy: "email" } });
  expect(res.status).toBe(201);
  emailConnection = ((await res.json()) as { id: string }).id;
  const [db] = (await (await mgmt("GET", "/connections?name=Username-Password-Authentication", asTenant())).json()) as { id: string }[];
  databaseConnection = db?.id as string;
});

async function clientWith(connectionIds: string[] | null): Promise<TestClient> {
  const client = await seedClient(tenant);
  if (connectionIds) {
    const res = await mgmt("PATCH", `/clients/${client.client_id}/connections`, { ...asTenant(), body: connectionIds });
    expect(res.status, await res.clone().text()).toBe(200);
  }
  return client;
}

async function sentCode(to: string): Promise<string> {
  const { messages } = (await (await call(`/__dev/messages?to=${encodeURIComponent(to)}`, { host })).json()) as { messages: { body: string }[] };
  const code = /(\d{6}) is your verification code/.exec(messages[0]?.body ?? "")?.[1];
  if (!code) throw new Error(`no code for ${to}`);
  return code;
}

/** A browser on a fresh login transaction of the client; answers the browser and the login page. */
async function openLogin(client: TestClient, request: Record<string, string> = {}) {
  const browser = new TestBrowser(host);
  const login = await pendingLogin(tenant, client.client_id, request);
  const page = await browser.get(`/u2/login?state=${login.state}`);
  return { browser, login, page };
}

/** Asks for a code for `email` on the passwordless form; answers the code page. */
async function askCode(browser: TestBrowser, state: string, email: string) {
  const form = await browser.get(`/u2/passwordless?state=${state}&connection=email`);
  expect(form.status).toBe(200);
  const html = await form.text();
  const res = await browser.post(`/u2/passwordless?state=${state}&connection=email`, { _csrf: csrfOf(html), email });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.text();
}

const submitCode = (browser: TestBrowser, state: string, html: string, email: string, code: string) =>
  browser.post(`/u2/passwordless/code?state=${state}&connection=email`, { _csrf: csrfOf(html), identifier: email, code });

describe("passwordless email on the login page", () => {
  it("offers 'Continue with email code' beside the password form, sends a code to the sink and logs in with it", async () => {
    const client = await clientWith([databaseConnection, emailConnection]);
    const { browser, login, page } = await openLogin(client);
    const html = await page.text();
    expect(html).toContain('name="password"');
    expect(html).toContain(`href="/u2/passwordless?state=${login.state}&amp;connection=email"`);
    expect(html).toContain("Continue with email code");

    const email = newEmail();
    const codePage = await askCode(browser, login.state, email.toUpperCase());
    expect(codePage).toContain(`We sent a code to ${email}`);
    const code = await sentCode(email);

    const wrong = await submitCode(browser, login.state, codePage, email, code === "000000" ? "111111" : "000000");
    expect(wrong.status).toBe(403);
    const wrongHtml = await wrong.text();
    expect(errorCodeOf(wrongHtml)).toBe("INVALID_CODE");
    expect(wrongHtml).toContain('role="alert"');
    expect(wrongHtml).toMatch(/id="code"[^>]*aria-invalid="true"[^>]*aria-describedby="form-error"/);

    const done = await submitCode(browser, login.state, codePage, email, code);
    expect(done.status, await done.clone().text()).toBe(302);
    const { url, query } = redirectParams(done);
    expect(`${url.origin}${url.pathname}`).toBe(CALLBACK);
    const tokens = await tokenForm(
      { grant_type: "authorization_code", code: query.get("code") as string, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      host,
    );
    expect(tokens.status, await tokens.clone().text()).toBe(200);
    const idToken = decodeJwt(((await tokens.json()) as { id_token: string }).id_token);
    expect(idToken.sub).toMatch(/^email\|/);
    expect(idToken.email).toBe(email);
    expect(idToken.email_verified).toBe(true);

    // The code was consumed: the same code again is refused (the transaction is completed, too).
    const replay = await submitCode(browser, login.state, codePage, email, code);
    expect(replay.status).toBe(400);

    await relay(tenant);
    const types = (await logsOf(tenant, `?q=${encodeURIComponent(`client_id:"${client.client_id}"`)}`)).map((l) => l.type);
    expect(types).toEqual(expect.arrayContaining(["cs", "f", "ss", "s"]));
  });

  it("is the login page itself when it is the application's only connection, and connection=email goes straight to it", async () => {
    const only = await clientWith([emailConnection]);
    const { page } = await openLogin(only);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).not.toContain('name="password"');
    expect(html).toContain('action="/u2/passwordless?state=');
    expect(html).not.toContain("Other ways to log in");

    const both = await clientWith([databaseConnection, emailConnection]);
    const named = await openLogin(both, { connection: "email", login_hint: "Hint@Example.com" });
    const namedHtml = await named.page.text();
    expect(namedHtml).not.toContain('name="password"');
    expect(namedHtml).toContain('value="hint@example.com"');
    expect(namedHtml).toContain("Other ways to log in");

    // In the page's language (issue 29 point 3): the button, the form and the code page's error.
    const french = await openLogin(both, { ui_locales: "fr" });
    expect(await french.page.text()).toContain("Continuer avec un code par e-mail");
    const frenchForm = await (await french.browser.get(`/u2/passwordless?state=${french.login.state}&connection=email`)).text();
    expect(frenchForm).toContain("Envoyer le code");
    const frenchBad = await french.browser.post(`/u2/passwordless?state=${french.login.state}&connection=email`, { _csrf: csrfOf(frenchForm), email: "nope" });
    expect(await frenchBad.text()).toContain("Saisissez une adresse e-mail valide");

    // Not enabled for the application: not offered, and the passwordless pages refuse it.
    const databaseOnly = await clientWith([databaseConnection]);
    const plain = await openLogin(databaseOnly);
    expect(await plain.page.text()).not.toContain("Continue with email code");
    const refused = await plain.browser.get(`/u2/passwordless?state=${plain.login.state}&connection=email`);
    expect(refused.status).toBe(400);
    expect(errorCodeOf(await refused.text())).toBe("CONNECTION_NOT_FOUND");
  });

  it("binds the code to its login transaction, kills it after three wrong guesses, and refuses a bad address", async () => {
    const client = await clientWith([emailConnection]);
    const email = newEmail();
    const first = await openLogin(client);
    const firstCodePage = await askCode(first.browser, first.login.state, email);
    const code = await sentCode(email);

    // The right code on another transaction of the same client does not complete it.
    const other = await openLogin(client);
    const otherHtml = await other.page.text();
    const elsewhere = await submitCode(other.browser, other.login.state, otherHtml, email, code);
    expect(elsewhere.status).toBe(403);

    // The code was consumed by that attempt or dies after three wrong guesses: either way it no longer logs in.
    for (const guess of ["000001", "000002"]) expect((await submitCode(first.browser, first.login.state, firstCodePage, email, guess)).status).toBe(403);
    expect((await submitCode(first.browser, first.login.state, firstCodePage, email, code)).status).toBe(403);

    const bad = await first.browser.post(`/u2/passwordless?state=${first.login.state}&connection=email`, { _csrf: csrfOf(firstCodePage), email: "not-an-address" });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(errorCodeOf(badHtml)).toBe("INVALID_EMAIL");
    expect(badHtml).toMatch(/id="email"[^>]*aria-invalid="true"/);

    // Without the CSRF cookie the form is refused.
    const stranger = new TestBrowser(host);
    const forged = await stranger.post(`/u2/passwordless?state=${first.login.state}&connection=email`, { _csrf: csrfOf(firstCodePage), email });
    expect(forged.status).toBe(403);
  });

  it("still applies the tenant's MFA policy after the code", async () => {
    const mfaTenant = await createTenant();
    const created = await mgmt("POST", "/connections", { headers: { "tenant-id": mfaTenant }, body: { name: "email", strategy: "email" } });
    expect(created.status).toBe(201);
    await setFactors(mfaTenant, { otp: true });
    await setPolicy(mfaTenant, ["all-applications"]);
    const client = await seedClient(mfaTenant);
    const browser = new TestBrowser(`${mfaTenant}.localhost:8787`);
    const login = await pendingLogin(mfaTenant, client.client_id, { connection: "email" });
    const html = await (await browser.get(`/u2/login?state=${login.state}`)).text();
    const email = newEmail();
    const codePage = await (await browser.post(`/u2/passwordless?state=${login.state}&connection=email`, { _csrf: csrfOf(html), email })).text();
    const { messages } = (await (await call(`/__dev/messages?to=${encodeURIComponent(email)}`, { host: `${mfaTenant}.localhost:8787` })).json()) as { messages: { body: string }[] };
    const code = /(\d{6}) is your/.exec(messages[0]?.body ?? "")?.[1] as string;
    const res = await browser.post(`/u2/passwordless/code?state=${login.state}&connection=email`, { _csrf: csrfOf(codePage), identifier: email, code });
    expect(res.status).toBe(302);
    expect(locationOf(res)).toMatch(/^\/u2\/mfa\?state=mfa_/);
  });
});
