import { env, runInDurableObject } from "cloudflare:test";
import { decodeJwt } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { randomToken } from "../../src/shared/crypto/random";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";
import { call, createTenant, mgmt } from "../helpers/api";
import { authorize, pendingLogin, redirectParams, seedClient, seedUser, type TestClient, tokenForm } from "../helpers/flows";

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "correct-horse-9";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
});

/** A pending login session as /authorize creates it; returns its id (the `state` of /u2 pages) and CSRF token. */
const newLogin = (extra: Record<string, string> = {}, options: { tenantId?: string; clientId?: string; ttlMs?: number } = {}) =>
  pendingLogin(options.tenantId ?? tenant, options.clientId ?? client.client_id, { redirect_uri: CALLBACK, ...extra }, options.ttlMs);

type Login = Awaited<ReturnType<typeof newLogin>>;

const getPage = (path: string, h = host) => call(path, { host: h, redirect: "manual" });

function postLogin(login: Login, fields: Record<string, string>, options: { cookie?: string; csrf?: string; h?: string } = {}) {
  return call(`/u2/login?state=${login.state}`, {
    method: "POST",
    host: options.h ?? host,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: options.cookie ?? login.cookie },
    body: new URLSearchParams({ _csrf: options.csrf ?? login.csrf, ...fields }).toString(),
  });
}

const errorCode = (html: string) => /data-error-code="([A-Z_]+)"/.exec(html)?.[1];

const cookieNamed = (res: Response, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));

describe("GET /u2/login", () => {
  it("focuses the email field when nothing is prefilled", async () => {
    const login = await newLogin();
    const html = await (await getPage(`/u2/login?state=${login.state}`)).text();
    expect(html).toMatch(/<input id="email" name="email" type="email"[^>]* autofocus/);
    expect(html).not.toMatch(/<input id="password"[^>]* autofocus/);
  });

  it("renders an accessible form with a CSRF field and cookie, the app's name, and no-framing headers", async () => {
    const login = await newLogin({ login_hint: "Hinted@Example.com" });
    const res = await getPage(`/u2/login?state=${login.state}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/html/);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("cache-control")).toBe("no-store");
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html><html lang="en" dir="ltr">/);
    expect(html).toContain('<label for="email">');
    expect(html).toContain('<label for="password">');
    // The hinted email is prefilled, so focus starts on the password.
    expect(html).toMatch(/<input id="password"[^>]* autofocus/);
    expect(html).toContain(`name="_csrf" value="${login.csrf}"`);
    expect(html).toContain("Test app");
    expect(html).toContain('value="hinted@example.com"');
    expect(html).toContain(`href="/u2/signup?state=${login.state}"`);
    const csrfCookie = cookieNamed(res, "gh_csrf");
    expect(csrfCookie).toContain(`gh_csrf=${login.csrf}`);
    expect(csrfCookie).toMatch(/HttpOnly/);
    expect(csrfCookie).toMatch(/SameSite=Strict/);
    expect(csrfCookie).toMatch(/Path=\/u2/);
  });

  it("an unknown or expired login session is a 400 error page", async () => {
    for (const path of ["/u2/login?state=ls_nope", "/u2/login"]) {
      const res = await getPage(path);
      expect(res.status).toBe(400);
      expect(await res.text()).toContain("This login link has expired or is invalid");
    }
    const expired = await newLogin({}, { ttlMs: -1000 });
    expect((await getPage(`/u2/login?state=${expired.state}`)).status).toBe(400);
  });

  it("applies the tenant's branding, and drops colours and logos that are not safe", async () => {
    const branded = await createTenant();
    const brandedClient = await seedClient(branded, { callbacks: [CALLBACK] });
    const setBranding = async (branding: unknown) => {
      await runInDurableObject(env.TENANT.getByName(branded), (_o, state) => {
        state.storage.sql.exec(
          "INSERT INTO _settings (key, value) VALUES ('branding', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
          JSON.stringify(branding),
        );
        state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
      });
      invalidateTenantConfig(branded);
    };
    const page = async () => {
      const login = await newLogin({}, { tenantId: branded, clientId: brandedClient.client_id });
      return (await getPage(`/u2/login?state=${login.state}`, `${branded}.localhost:8787`)).text();
    };

    await setBranding({ logo_url: "https://cdn.example.com/logo.png", colors: { primary: "#FF6600", page_background: "#0a0" } });
    const html = await page();
    expect(html).toContain("--gh-primary:#ff6600");
    expect(html).toContain("--gh-page-bg:#0a0");
    expect(html).toContain('<img class="logo" src="https://cdn.example.com/logo.png" alt="Test app logo"');

    await setBranding({ logo_url: "javascript:alert(1)", colors: { primary: "red;}</style><script>alert(1)</script>", page_background: "url(x)" } });
    const unsafe = await page();
    expect(unsafe).not.toContain("<script>");
    expect(unsafe).not.toContain("javascript:");
    expect(unsafe).not.toContain("url(x)");
    expect(unsafe).toContain("--gh-primary:#3451b2");
    expect(unsafe).not.toContain('class="logo"');
  });
});

describe("POST /u2/login", () => {
  it("a correct password redirects to the redirect_uri with a code and state, and starts an HttpOnly session", async () => {
    const user = await seedUser(tenant, "ok-login@example.com", PASSWORD);
    const login = await newLogin();
    const res = await postLogin(login, { email: "ok-login@example.com", password: PASSWORD });
    expect(res.status).toBe(302);
    const { url, query } = redirectParams(res);
    expect(url.origin + url.pathname).toBe(CALLBACK);
    expect(query.get("state")).toBe("xyz");
    const code = query.get("code") as string;
    expect(code).toBeTruthy();
    const session = cookieNamed(res, "gh_session");
    expect(session).toMatch(/HttpOnly/);
    // SameSite=None; Secure: the SPA SDK's silent authentication sends it from a cross-site iframe (issue 10).
    expect(session).toMatch(/SameSite=None/);
    expect(session).toMatch(/Secure/);
    const tokens = await tokenForm(
      { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      host,
    );
    expect(tokens.status).toBe(200);
    expect(decodeJwt(((await tokens.json()) as { id_token: string }).id_token).sub).toBe(user.user_id);
  });

  it("the whole browser flow works from /authorize, and the session then gives SSO", async () => {
    await seedUser(tenant, "flow@example.com", PASSWORD);
    const start = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "s-9" }, { host });
    const loginUrl = redirectParams(start).url;
    expect(loginUrl.pathname).toBe("/u2/login");
    const form = await getPage(loginUrl.pathname + loginUrl.search);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] as string;
    const cookie = (cookieNamed(form, "gh_csrf") as string).split(";")[0] as string;
    const login = { state: loginUrl.searchParams.get("state") as string, csrf, cookie };
    const done = await postLogin(login, { email: "flow@example.com", password: PASSWORD });
    expect(redirectParams(done).query.get("state")).toBe("s-9");
    const session = (cookieNamed(done, "gh_session") as string).split(";")[0] as string;
    const sso = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" }, { host, cookie: session });
    expect(redirectParams(sso).query.get("code")).toBeTruthy();
  });

  it("trims and lowercases the email", async () => {
    await seedUser(tenant, "casey@example.com", PASSWORD);
    const res = await postLogin(await newLogin(), { email: "  Casey@Example.COM ", password: PASSWORD });
    expect(res.status).toBe(302);
  });

  it("a wrong password re-renders the form with 403 INVALID_PASSWORD; an unknown user reads the same", async () => {
    await seedUser(tenant, "wrong-pw@example.com", PASSWORD);
    const wrong = await postLogin(await newLogin(), { email: "wrong-pw@example.com", password: "not-it-at-all" });
    expect(wrong.status).toBe(403);
    const html = await wrong.text();
    expect(errorCode(html)).toBe("INVALID_PASSWORD");
    expect(html).toContain('role="alert"');
    expect(html).toContain("Wrong email or password.");
    expect(html).toMatch(/<input id="email"[^>]*aria-describedby="form-error"/);
    expect(html).toContain('value="wrong-pw@example.com"');
    // The kept email means the password is next: focus goes there, not back to the email field.
    expect(html).toMatch(/<input id="password"[^>]* autofocus/);
    expect(html).not.toMatch(/<input id="email"[^>]* autofocus/);

    const unknown = await postLogin(await newLogin(), { email: "nobody@example.com", password: "whatever-1" });
    expect(unknown.status).toBe(403);
    const unknownHtml = await unknown.text();
    expect(errorCode(unknownHtml)).toBe("INVALID_PASSWORD");
    expect(unknownHtml).toContain("Wrong email or password.");
  });

  it("locks the user after three failures in five minutes: the 4th attempt fails even with the right password", async () => {
    await seedUser(tenant, "locked@example.com", PASSWORD);
    const codes: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await postLogin(await newLogin(), { email: "locked@example.com", password: `wrong-${i}-password` });
      expect(res.status).toBe(403);
      codes.push(errorCode(await res.text()));
    }
    expect(codes.slice(0, 2)).toEqual(["INVALID_PASSWORD", "INVALID_PASSWORD"]);
    expect(codes[2]).toBe("TOO_MANY_FAILED_LOGINS");
    const fourth = await postLogin(await newLogin(), { email: "locked@example.com", password: PASSWORD });
    expect(fourth.status).toBe(403);
    expect(errorCode(await fourth.text())).toBe("TOO_MANY_FAILED_LOGINS");
  });

  it("a burst of parallel wrong guesses locks the account like sequential ones", async () => {
    await seedUser(tenant, "burst@example.com", PASSWORD);
    const attempts = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => postLogin(await newLogin(), { email: "burst@example.com", password: `guess-${i}-wrong` })),
    );
    expect(attempts.every((r) => r.status === 403)).toBe(true);
    const right = await postLogin(await newLogin(), { email: "burst@example.com", password: PASSWORD });
    expect(errorCode(await right.text())).toBe("TOO_MANY_FAILED_LOGINS");
  });

  it("a blocked user gets USER_BLOCKED (only after proving the password)", async () => {
    await seedUser(tenant, "blocked@example.com", PASSWORD, { blocked: true });
    const res = await postLogin(await newLogin(), { email: "blocked@example.com", password: PASSWORD });
    expect(res.status).toBe(403);
    expect(errorCode(await res.text())).toBe("USER_BLOCKED");
    const wrong = await postLogin(await newLogin(), { email: "blocked@example.com", password: "wrong-password-1" });
    expect(errorCode(await wrong.text())).toBe("INVALID_PASSWORD");
  });

  it("EMAIL_NOT_VERIFIED when the connection sets requires_verified_email and the email is unverified", async () => {
    const strict = await createTenant();
    const strictClient = await seedClient(strict, { callbacks: [CALLBACK] });
    await runInDurableObject(env.TENANT.getByName(strict), (_o, state) => {
      state.storage.sql.exec(
        "UPDATE connections SET options = ? WHERE name = 'Username-Password-Authentication'",
        JSON.stringify({ requires_verified_email: true }),
      );
      state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
    });
    invalidateTenantConfig(strict);
    const user = await seedUser(strict, "unverified@example.com", PASSWORD);
    await runInDurableObject(env.TENANT.getByName(strict), (_o, state) => {
      state.storage.sql.exec("UPDATE users SET email_verified = 0 WHERE user_id = ?", user.user_id);
    });
    const login = await newLogin({}, { tenantId: strict, clientId: strictClient.client_id });
    const res = await postLogin(login, { email: "unverified@example.com", password: PASSWORD }, { h: `${strict}.localhost:8787` });
    expect(res.status).toBe(403);
    expect(errorCode(await res.text())).toBe("EMAIL_NOT_VERIFIED");
  });

  it("refuses with a 403 page when the CSRF field, cookie and login session token are not all equal", async () => {
    await seedUser(tenant, "csrf@example.com", PASSWORD);
    const login = await newLogin();
    const fields = { email: "csrf@example.com", password: PASSWORD };
    const forged = randomToken(24);
    for (const attempt of [
      postLogin(login, fields, { cookie: "" }),
      postLogin(login, fields, { csrf: "wrong" }),
      postLogin(login, fields, { cookie: `gh_csrf=${forged}`, csrf: forged }),
    ]) {
      const res = await attempt;
      expect(res.status).toBe(403);
      expect(res.headers.get("location")).toBeNull();
      expect(errorCode(await res.text())).toBe("INVALID_CSRF");
    }
    // the transaction is untouched: the genuine form still works
    expect((await postLogin(login, fields)).status).toBe(302);
  });

  it("replaying a completed form shows the error page and issues no second code", async () => {
    await seedUser(tenant, "replay@example.com", PASSWORD);
    const login = await newLogin();
    const fields = { email: "replay@example.com", password: PASSWORD };
    expect((await postLogin(login, fields)).status).toBe(302);
    const replay = await postLogin(login, fields);
    expect(replay.status).toBe(400);
    expect(replay.headers.get("location")).toBeNull();
    expect(await replay.text()).toContain("This login link has expired or is invalid");
  });

  it("two simultaneous submissions of one form complete the login once", async () => {
    await seedUser(tenant, "double@example.com", PASSWORD);
    const login = await newLogin();
    const results = await Promise.all([0, 1, 2].map(() => postLogin(login, { email: "double@example.com", password: PASSWORD })));
    expect(results.filter((r) => r.status === 302)).toHaveLength(1);
  });

  it("a body that is not a form is a 400 page", async () => {
    const login = await newLogin();
    const res = await call(`/u2/login?state=${login.state}`, {
      method: "POST",
      host,
      headers: { "content-type": "application/json", cookie: login.cookie },
      body: JSON.stringify({ _csrf: login.csrf }),
    });
    expect(res.status).toBe(400);
    expect(errorCode(await res.text())).toBe("INVALID_REQUEST");
  });
});

describe("the login page rendered once and filled in (issue 29 point 1)", () => {
  const nonceOf = (res: Response) => /style-src 'nonce-([^']+)'/.exec(res.headers.get("content-security-policy") ?? "")?.[1];

  it("each display carries its own login's state, CSRF token and a fresh nonce, the same in the CSP and the page", async () => {
    const [a, b] = [await newLogin(), await newLogin()];
    const pages = [];
    for (const login of [a, b, a]) {
      const res = await getPage(`/u2/login?state=${login.state}`);
      expect(res.status).toBe(200);
      const html = await res.text();
      const nonce = nonceOf(res);
      expect(nonce).toMatch(/^[A-Za-z0-9_-]{16,}$/);
      expect(html).toContain(`<style nonce="${nonce}">`);
      expect(html).toContain(`name="_csrf" value="${login.csrf}"`);
      expect(html).toContain(`action="/u2/login?state=${login.state}"`);
      expect(html).toContain(`href="/u2/signup?state=${login.state}"`);
      expect(cookieNamed(res, "gh_csrf")).toContain(`gh_csrf=${login.csrf}`);
      pages.push({ html, nonce });
    }
    // Two displays of one login differ only by their nonce; nothing of the other login leaks in.
    expect(pages[0]?.nonce).not.toBe(pages[2]?.nonce);
    expect(pages[0]?.html.replaceAll(pages[0]?.nonce ?? "", "N")).toBe(pages[2]?.html.replaceAll(pages[2]?.nonce ?? "", "N"));
    expect(pages[0]?.html).not.toContain(b.csrf);
    expect(pages[1]?.html).not.toContain(a.state);
  });

  it("a configuration change shows on the next display", async () => {
    const own = await createTenant();
    const ownClient = await seedClient(own, { callbacks: [CALLBACK] });
    const ownHost = `${own}.localhost:8787`;
    const show = async () => {
      const login = await newLogin({}, { tenantId: own, clientId: ownClient.client_id });
      return (await getPage(`/u2/login?state=${login.state}`, ownHost)).text();
    };
    expect(await show()).toContain("Test app");
    const renamed = await mgmt("PATCH", `/clients/${ownClient.client_id}`, { headers: { "tenant-id": own }, body: { name: "Renamed app" } });
    expect(renamed.status).toBe(200);
    const html = await show();
    expect(html).toContain("Renamed app");
    expect(html).not.toContain("Test app");
  });

  it("a login completed by its form is the expired page when shown again, though it was shown moments before", async () => {
    await seedUser(tenant, "shown-again@example.com", PASSWORD);
    const res = await call(`/authorize?${new URLSearchParams({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid" })}`, { host, redirect: "manual" });
    const location = res.headers.get("location") ?? "";
    const state = new URL(location, "https://x").searchParams.get("state") ?? "";
    const first = await getPage(location);
    expect(first.status).toBe(200);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await first.text())?.[1] ?? "";
    const login = { state, csrf, cookie: `gh_csrf=${csrf}` };
    expect((await postLogin(login, { email: "shown-again@example.com", password: PASSWORD })).status).toBe(302);
    const again = await getPage(location);
    expect(again.status).toBe(400);
    expect(await again.text()).toContain("This login link has expired or is invalid");
  });
});

describe("GET /u2/logged-out", () => {
  it("is where logout lands without a returnTo", async () => {
    const logout = await getPage("/v2/logout");
    expect(logout.headers.get("location")).toBe("/u2/logged-out");
    const page = await getPage("/u2/logged-out");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain("You are logged out");
  });
});
