import { env, runInDurableObject } from "cloudflare:test";
import { beforeAll, describe, expect, it } from "vitest";
import { invalidateTenantConfig } from "../../src/worker/tenant/config-cache";
import { call, createTenant } from "../helpers/api";
import { pendingLogin, redirectParams, seedClient, type TestClient } from "../helpers/flows";

const CALLBACK = "https://app.example.com/callback";
const APP_ORIGIN = "https://app.example.com";
const DB = "Username-Password-Authentication";
let tenant: string;
let host: string;
let client: TestClient;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK], web_origins: [APP_ORIGIN] });
});

/** A pending login session as /authorize creates it (screen_hint=signup). */
const newLogin = (tenantId = tenant, clientId = client.client_id) =>
  pendingLogin(tenantId, clientId, { redirect_uri: CALLBACK, scope: "openid email", screen_hint: "signup" });

type Login = Awaited<ReturnType<typeof newLogin>>;

function postForm(page: "signup" | "login", login: Login, fields: Record<string, string>, options: { h?: string; csrf?: string } = {}) {
  return call(`/u2/${page}?state=${login.state}`, {
    method: "POST",
    host: options.h ?? host,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: login.cookie },
    body: new URLSearchParams({ _csrf: options.csrf ?? login.csrf, ...fields }).toString(),
  });
}

const errorCode = (html: string) => /data-error-code="([A-Z_]+)"/.exec(html)?.[1];

/** Sets connection options on a tenant's database connection (directly, as the connections API may not exist). */
async function setConnectionOptions(tenantId: string, options: Record<string, unknown>) {
  await runInDurableObject(env.TENANT.getByName(tenantId), (_o, state) => {
    state.storage.sql.exec("UPDATE connections SET options = ? WHERE name = ?", JSON.stringify(options), DB);
    state.storage.sql.exec("UPDATE _settings SET value = CAST(value AS INTEGER) + 1 WHERE key = 'config_version'");
  });
  invalidateTenantConfig(tenantId);
}

describe("/u2/signup", () => {
  it("renders the form with labels, the password rule linked to its field, a CSRF field and cookie", async () => {
    const login = await newLogin();
    const res = await call(`/u2/signup?state=${login.state}`, { host });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await res.text();
    expect(html).toContain('<html lang="en" dir="ltr">');
    expect(html).toContain('<label for="email">');
    expect(html).toContain('<label for="password">');
    expect(html).toMatch(/<input id="password"[^>]*aria-describedby="password-hint"/);
    expect(html).toContain("At least 8 characters.");
    expect(html).toContain(`name="_csrf" value="${login.csrf}"`);
    expect(res.headers.getSetCookie().find((c) => c.startsWith("gh_csrf="))).toMatch(/SameSite=Strict/);
  });

  it("creates an unverified user (email normalized) and completes the login with a code", async () => {
    const login = await newLogin();
    const res = await postForm("signup", login, { email: "  New.User@Example.COM ", password: "longenough1" });
    expect(res.status).toBe(302);
    const { query } = redirectParams(res);
    expect(query.get("code")).toBeTruthy();
    expect(query.get("state")).toBe("xyz");
    expect(res.headers.getSetCookie().some((c) => c.startsWith("gh_session=") && /HttpOnly/.test(c))).toBe(true);
    const user = await env.TENANT.getByName(tenant).users().findByEmail(DB, "new.user@example.com");
    expect(user).toMatchObject({ email: "new.user@example.com", email_verified: false, connection: DB });
    expect(user?.user_id).toMatch(/^auth0\|[A-Za-z0-9]{22}$/);
    expect(user?.password_hash).toMatch(/^\$2[aby]\$10\$/);
  });

  it("the new user can then log in with the same password", async () => {
    expect((await postForm("signup", await newLogin(), { email: "later@example.com", password: "my-password-1" })).status).toBe(302);
    const res = await postForm("login", await newLogin(), { email: "LATER@example.com", password: "my-password-1" });
    expect(res.status).toBe(302);
    expect(redirectParams(res).query.get("code")).toBeTruthy();
  });

  it("a short password is refused with a clear message and no user is created", async () => {
    const res = await postForm("signup", await newLogin(), { email: "short@example.com", password: "short" });
    expect(res.status).toBe(400);
    const html = await res.text();
    expect(errorCode(html)).toBe("PASSWORD_TOO_SHORT");
    expect(html).toContain("Password must be at least 8 characters long.");
    expect(html).toMatch(/<input id="password"[^>]*aria-describedby="form-error password-hint"/);
    expect(await env.TENANT.getByName(tenant).users().findByEmail(DB, "short@example.com")).toBeNull();
  });

  it("an already registered email (any case) is refused on the form", async () => {
    expect((await postForm("signup", await newLogin(), { email: "taken@example.com", password: "password-123" })).status).toBe(302);
    const res = await postForm("signup", await newLogin(), { email: "Taken@Example.com", password: "password-456" });
    expect(res.status).toBe(409);
    const html = await res.text();
    expect(errorCode(html)).toBe("USER_EXISTS");
    expect(html).toContain("This email is already registered.");
  });

  it("an invalid email is refused", async () => {
    const res = await postForm("signup", await newLogin(), { email: "not-an-email", password: "password-123" });
    expect(res.status).toBe(400);
    expect(errorCode(await res.text())).toBe("INVALID_EMAIL");
  });

  it("a CSRF mismatch is a 403 page and creates nothing", async () => {
    const res = await postForm("signup", await newLogin(), { email: "csrf-signup@example.com", password: "password-123" }, { csrf: "forged" });
    expect(res.status).toBe(403);
    expect(errorCode(await res.text())).toBe("INVALID_CSRF");
    expect(await env.TENANT.getByName(tenant).users().findByEmail(DB, "csrf-signup@example.com")).toBeNull();
  });

  it("is unavailable when the connection sets disable_signup (and the login page hides the link)", async () => {
    const closed = await createTenant();
    const closedClient = await seedClient(closed, { callbacks: [CALLBACK] });
    await setConnectionOptions(closed, { disable_signup: true });
    const h = `${closed}.localhost:8787`;
    const login = await newLogin(closed, closedClient.client_id);
    const page = await call(`/u2/signup?state=${login.state}`, { host: h });
    expect(page.status).toBe(403);
    expect(errorCode(await page.text())).toBe("SIGNUP_DISABLED");
    const post = await postForm("signup", login, { email: "closed@example.com", password: "password-123" }, { h });
    expect(post.status).toBe(403);
    const loginPage = await (await call(`/u2/login?state=${login.state}`, { host: h })).text();
    expect(loginPage).not.toContain("/u2/signup");
  });

  it("with requires_verified_email the account is created but the user must verify before logging in", async () => {
    const strict = await createTenant();
    const strictClient = await seedClient(strict, { callbacks: [CALLBACK] });
    await setConnectionOptions(strict, { requires_verified_email: true });
    const h = `${strict}.localhost:8787`;
    const res = await postForm("signup", await newLogin(strict, strictClient.client_id), { email: "verify@example.com", password: "password-123" }, { h });
    expect(res.status).toBe(200);
    expect(res.headers.get("location")).toBeNull();
    expect(await res.text()).toContain("Verify your email");
    const login = await postForm("login", await newLogin(strict, strictClient.client_id), { email: "verify@example.com", password: "password-123" }, { h });
    expect(errorCode(await login.text())).toBe("EMAIL_NOT_VERIFIED");
  });
});

describe("POST /dbconnections/signup", () => {
  const signup = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call("/dbconnections/signup", {
      method: "POST",
      host,
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ client_id: client.client_id, connection: DB, ...body }),
    });

  it("creates the user and answers its id, email and timestamps, with CORS for the app's origin", async () => {
    const res = await signup({ email: " API.User@Example.com", password: "password-123", user_metadata: { plan: "pro" } }, { origin: APP_ORIGIN });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(res.headers.get("vary")).toBe("Origin");
    const body = (await res.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ email: "api.user@example.com", email_verified: false, user_metadata: { plan: "pro" } });
    expect(body.id).toBe(`auth0|${body._id}`);
    expect(body.created_at).toEqual(expect.any(String));
    expect(body.updated_at).toEqual(expect.any(String));
    const stored = await env.TENANT.getByName(tenant).users().get(body.id as string);
    expect(stored?.user_metadata).toEqual({ plan: "pro" });
  });

  it("accepts a form body too", async () => {
    const res = await call("/dbconnections/signup", {
      method: "POST",
      host,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ client_id: client.client_id, connection: DB, email: "form@example.com", password: "password-123" }).toString(),
    });
    expect(res.status).toBe(200);
  });

  it("a duplicate is 400 invalid_signup, without saying the account exists", async () => {
    expect((await signup({ email: "dup@example.com", password: "password-123" })).status).toBe(200);
    const res = await signup({ email: "DUP@example.com", password: "password-456" });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ name: "BadRequestError", code: "invalid_signup", description: "Invalid sign up", statusCode: 400 });
  });

  it("a weak password is 400 invalid_password", async () => {
    const res = await signup({ email: "weak@example.com", password: "abc" });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { name: string; code: string; description: string; statusCode: number };
    expect(body).toMatchObject({ name: "BadRequestError", code: "invalid_password", statusCode: 400 });
    expect(body.description).toContain("at least 8 characters");
  });

  it("an unknown client or connection, or a malformed body, is 400 invalid_request", async () => {
    const unknownClient = await signup({ client_id: "nobody", email: "a@example.com", password: "password-123" });
    expect(unknownClient.status).toBe(400);
    expect(((await unknownClient.json()) as { error: string }).error).toBe("invalid_request");
    const unknownConnection = await signup({ connection: "Nope", email: "a@example.com", password: "password-123" });
    expect(unknownConnection.status).toBe(400);
    expect(await unknownConnection.json()).toEqual({ error: "invalid_request", error_description: "connection not found" });
    const missing = await signup({ password: "password-123" });
    expect(missing.status).toBe(400);
    const metadata = await signup({ email: "meta@example.com", password: "password-123", user_metadata: { nested: { no: 1 } } });
    expect(metadata.status).toBe(400);
    const broken = await call("/dbconnections/signup", { method: "POST", host, headers: { "content-type": "application/json" }, body: "{nope" });
    expect(broken.status).toBe(400);
  });

  it("refuses a browser origin that is not the application's", async () => {
    const res = await signup({ email: "evil@example.com", password: "password-123" }, { origin: "https://evil.example.com" });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(await env.TENANT.getByName(tenant).users().findByEmail(DB, "evil@example.com")).toBeNull();
  });

  it("answers preflights for the tenant's web origins", async () => {
    const res = await call("/dbconnections/signup", {
      method: "OPTIONS",
      host,
      headers: { origin: APP_ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "content-type" },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get("access-control-allow-origin")).toBe(APP_ORIGIN);
    expect(res.headers.get("access-control-allow-credentials")).toBeNull();
  });
});
