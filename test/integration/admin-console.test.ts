import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { seedClient, seedUser, sessionCookie } from "../helpers/flows";
import { TestBrowser } from "../helpers/mfa";

afterEach(() => setClock());

const PASSWORD = "operator-p4ssw0rd!";

/** The id of one of the seeded operator roles on the control plane. */
async function roleId(name: string): Promise<string> {
  const res = await mgmt("GET", `/roles?name_filter=${encodeURIComponent(name)}`);
  const roles = (await res.json()) as { id: string; name: string }[];
  const role = roles.find((r) => r.name === name);
  if (!role) throw new Error(`no role ${name}`);
  return role.id;
}

/** A control-plane user holding the given operator roles (none: a user with no permission at all). */
async function operator(roles: string[]): Promise<{ email: string; userId: string }> {
  const email = `${uniqueId("op")}@example.com`;
  const user = await seedUser(CP.tenantId, email, PASSWORD);
  if (roles.length) {
    const ids = await Promise.all(roles.map(roleId));
    const res = await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/roles`, { body: { roles: ids } });
    expect(res.status, await res.clone().text()).toBe(204);
  }
  return { email, userId: user.user_id };
}

/** The names of a tenant's applications, through the API with the control-plane client. */
async function applicationNames(tenant: string): Promise<string[]> {
  const res = await mgmt("GET", "/clients?per_page=100", { headers: { "tenant-id": tenant } });
  return ((await res.json()) as { name: string }[]).map((c) => c.name);
}

/** The console's CSRF token for the browser's session (every page's forms carry it). */
async function csrfOf(browser: TestBrowser, path = "/admin/tenants"): Promise<string> {
  const res = await browser.get(path);
  expect(res.status).toBe(200);
  return fieldOf(await res.text(), "csrf");
}

describe("admin console: operator login as a client of our own API (issue 30)", () => {
  it("logs the seeded admin in with the authorization code flow and keeps the tokens on the server", async () => {
    const browser = new TestBrowser("localhost:8787");
    const first = await browser.get("/admin/tenants");
    expect(first.headers.get("location")).toBe("/admin/login?return_to=%2Fadmin%2Ftenants");
    const login = await browser.follow(first);
    const authorize = new URL(login.headers.get("location") ?? "");
    expect(authorize.pathname).toBe("/authorize");
    expect(authorize.searchParams.get("client_id")).toBe("gatehouse-console");
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("audience")).toBe(CP.audience);
    const tx = login.headers.getSetCookie().find((c) => c.startsWith("gh_console_login="));
    expect(tx).toMatch(/HttpOnly/i);
    expect(tx).toMatch(/SameSite=Lax/i);

    // The newest tenant is on the first page whatever other files left in this runtime (tenants list newest first).
    const newest = await createTenant();
    const { browser: signedIn, page } = await consoleLogin(ADMIN.email, ADMIN.password);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain(`/admin/t/${newest}/applications`);
    expect(html).toContain(ADMIN.email);
    // The browser holds only the opaque session cookie: no JWT in any cookie, the login transaction gone.
    const cookie = signedIn.cookies.get("gh_console") ?? "";
    expect(cookie).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{40,}$/);
    expect([...signedIn.cookies.values()].some((v) => v.includes("eyJ"))).toBe(false);
    expect(signedIn.cookies.has("gh_console_login")).toBe(false);
    expect(html).not.toContain("eyJ");
    // Strict CSP with a nonce, no framing.
    expect(page.headers.get("content-security-policy")).toMatch(/default-src 'none'; style-src 'nonce-[^']+'/);
    expect(page.headers.get("x-frame-options")).toBe("DENY");
  });

  it("sets the session cookie HttpOnly and SameSite=Lax (Secure with __Host- over https)", async () => {
    const browser = new TestBrowser("localhost:8787");
    const login = await browser.follow(await browser.get("/admin/tenants"));
    const authorize = await browser.follow(login);
    const form = await browser.follow(authorize);
    const html = await form.text();
    const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
    const posted = await browser.post(action, { _csrf: fieldOf(html, "_csrf"), email: ADMIN.email, password: ADMIN.password });
    const callback = await browser.follow(posted);
    expect(callback.status).toBe(302);
    expect(callback.headers.get("location")).toBe("/admin/tenants");
    const session = callback.headers.getSetCookie().find((c) => c.startsWith("gh_console="));
    expect(session).toMatch(/HttpOnly/i);
    expect(session).toMatch(/SameSite=Lax/i);
    expect(session).toMatch(/Path=\//);
  });

  it("refuses a callback whose state is not this browser's", async () => {
    const browser = new TestBrowser("localhost:8787");
    await browser.follow(await browser.get("/admin/tenants"));
    const res = await browser.get("/admin/callback?code=abc&state=forged");
    expect(res.status).toBe(400);
    expect(browser.cookies.has("gh_console")).toBe(false);
  });

  it("creates an application: the secret is shown once, and the API holds the application", async () => {
    const tenant = await createTenant();
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const csrf = await csrfOf(browser, `/admin/t/${tenant}/applications`);
    const name = uniqueId("app");
    const created = await browser.post(`/admin/t/${tenant}/applications`, { csrf, name, app_type: "regular_web", callbacks: "https://app.example.com/cb" });
    const html = await created.text();
    expect(created.status, html.slice(0, 500)).toBe(201);
    const secret = /class="secret">([^<]+)</.exec(html)?.[1] ?? "";
    expect(secret.length).toBeGreaterThan(20);
    expect(await applicationNames(tenant)).toContain(name);
    const clientId = /Client ID: <code>([^<]+)</.exec(html)?.[1] ?? "";
    const again = await browser.get(`/admin/t/${tenant}/applications/${clientId}`);
    const detail = await again.text();
    expect(again.status).toBe(200);
    expect(detail).toContain(name);
    expect(detail).not.toContain(secret);
    // "Show the API call": the curl of the read, the token redacted.
    expect(detail).toContain(`curl -X GET &#39;http://localhost:8787/api/v2/clients/${clientId}&#39;`);
    expect(detail).toContain("Bearer $TOKEN");
  });

  it("creates a user, blocks it and assigns a role, each through the API", async () => {
    const tenant = await createTenant();
    const role = await mgmt("POST", "/roles", { headers: { "tenant-id": tenant }, body: { name: "Support" } });
    const roleBody = (await role.json()) as { id: string };
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const csrf = await csrfOf(browser, `/admin/t/${tenant}/users`);
    const email = `${uniqueId("u")}@example.com`;
    const created = await browser.post(`/admin/t/${tenant}/users`, { csrf, email, password: "Str0ng-enough-pass!", connection: "Username-Password-Authentication" });
    const html = await created.text();
    expect(created.status, html.slice(0, 800)).toBe(201);
    expect(html).not.toContain("Str0ng-enough-pass!");
    const userId = /<th scope="row">User ID<\/th><td><code>([^<]+)</.exec(html)?.[1] ?? "";
    expect(userId).toMatch(/^auth0\|/);
    const path = `/admin/t/${tenant}/users/${encodeURIComponent(userId)}`;
    expect((await browser.post(`${path}/block`, { csrf })).status).toBe(200);
    expect((await browser.post(`${path}/roles`, { csrf, role: roleBody.id })).status).toBe(200);
    const read = await mgmt("GET", `/users/${encodeURIComponent(userId)}`, { headers: { "tenant-id": tenant } });
    expect(((await read.json()) as { blocked: boolean }).blocked).toBe(true);
    const roles = await mgmt("GET", `/users/${encodeURIComponent(userId)}/roles`, { headers: { "tenant-id": tenant } });
    expect(((await roles.json()) as { id: string }[]).map((r) => r.id)).toEqual([roleBody.id]);
    const search = await browser.get(`/admin/t/${tenant}/users?q=${encodeURIComponent(`email:"${email}"`)}`);
    const found = await search.text();
    expect(found).toContain("1 users");
    expect(found).toContain(email);
  });

  it("shows the API's own error on the page for bad input, and writes nothing", async () => {
    const tenant = await createTenant();
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const csrf = await csrfOf(browser, `/admin/t/${tenant}/users`);
    const bad = await browser.post(`/admin/t/${tenant}/users`, { csrf, email: "not-an-email", password: "x", connection: "Username-Password-Authentication" });
    const html = await bad.text();
    expect(bad.status).toBe(400);
    const api = await mgmt("POST", "/users", { headers: { "tenant-id": tenant }, body: { email: "not-an-email", password: "x", connection: "Username-Password-Authentication" } });
    const message = ((await api.json()) as { message: string }).message;
    expect(html).toContain('role="alert"');
    expect(html).toContain(message.replaceAll('"', "&quot;").replaceAll("'", "&#39;"));
    const users = await mgmt("GET", "/users", { headers: { "tenant-id": tenant } });
    expect(await users.json()).toEqual([]);
    const app = await browser.post(`/admin/t/${tenant}/applications`, { csrf, name: "", app_type: "spa" });
    expect(app.status).toBe(400);
    expect(await app.text()).toContain('role="alert"');
  });

  it("logout ends the console session: the next page asks for a login", async () => {
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const csrf = await csrfOf(browser);
    const out = await browser.post("/admin/logout", { csrf });
    expect(out.status).toBe(302);
    expect(out.headers.get("location")).toMatch(/\/v2\/logout\?client_id=gatehouse-console&returnTo=/);
    expect(browser.cookies.has("gh_console")).toBe(false);
    const next = await browser.get("/admin/tenants");
    expect(next.status).toBe(302);
    expect(next.headers.get("location")).toMatch(/^\/admin\/login/);
  });

  it("an idle session (30 minutes) and an old one (12 hours) send the operator to log in again, back to the page", async () => {
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const start = Date.now();
    setClock(() => start + 29 * 60_000);
    expect((await browser.get("/admin/tenants")).status).toBe(200);
    setClock(() => start + 29 * 60_000 + 31 * 60_000);
    const idle = await browser.get("/admin/tenants?page=0");
    expect(idle.status).toBe(302);
    expect(idle.headers.get("location")).toBe(`/admin/login?return_to=${encodeURIComponent("/admin/tenants?page=0")}`);

    // Never idle, but 12 hours old: over.
    setClock();
    const { browser: busy } = await consoleLogin(ADMIN.email, ADMIN.password);
    const began = Date.now();
    let at = began;
    while (at < began + 12 * 3_600_000 - 29 * 60_000) {
      at += 29 * 60_000;
      setClock(() => at);
      expect((await busy.get("/admin/tenants")).status).toBe(200);
    }
    setClock(() => began + 12 * 3_600_000 + 1_000);
    expect((await busy.get("/admin/tenants")).status).toBe(302);
  });
});

describe("admin console: step-up before destructive actions (issue 30)", () => {
  it("deleting an application needs a login of the last five minutes; an older one logs in again (max_age=0), back to the page", async () => {
    const tenant = await createTenant();
    const app = await mgmt("POST", "/clients", { headers: { "tenant-id": tenant }, body: { name: "doomed", app_type: "spa" } });
    const clientId = ((await app.json()) as { client_id: string }).client_id;
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const page = `/admin/t/${tenant}/applications/${clientId}`;
    const csrf = await csrfOf(browser, page);
    const start = Date.now();
    setClock(() => start + 10 * 60_000);
    const refused = await browser.post(`${page}/delete`, { csrf });
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toBe(`/admin/login?step_up=1&return_to=${encodeURIComponent(page)}`);
    expect(await applicationNames(tenant)).toContain("doomed");
    // The fresh login: /authorize with max_age=0 shows the password form although the SSO session lives.
    const login = await browser.get(refused.headers.get("location") as string);
    const authorize = new URL(login.headers.get("location") ?? "");
    expect(authorize.searchParams.get("max_age")).toBe("0");
    const form = await browser.follow(login);
    const loginPage = await browser.follow(form);
    const html = await loginPage.text();
    expect(loginPage.status).toBe(200);
    const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
    const posted = await browser.post(action, { _csrf: fieldOf(html, "_csrf"), email: ADMIN.email, password: ADMIN.password });
    const callback = await browser.follow(posted);
    expect(callback.headers.get("location")).toBe(page);
    const fresh = await csrfOf(browser, page);
    const deleted = await browser.post(`${page}/delete`, { csrf: fresh });
    expect(deleted.status).toBe(303);
    expect(await applicationNames(tenant)).not.toContain("doomed");
  });
});

describe("admin console: CSRF (issue 30)", () => {
  it("refuses a form without the session's CSRF token, or from another origin, and calls nothing", async () => {
    const tenant = await createTenant();
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const csrf = await csrfOf(browser);
    const name = uniqueId("app");
    const missing = await browser.post(`/admin/t/${tenant}/applications`, { name, app_type: "spa" });
    expect(missing.status).toBe(403);
    const wrong = await browser.post(`/admin/t/${tenant}/applications`, { csrf: `${csrf.slice(0, -2)}xx`, name, app_type: "spa" });
    expect(wrong.status).toBe(403);
    const foreign = await browser.fetchWith(`/admin/t/${tenant}/applications`, { csrf, name, app_type: "spa" }, { origin: "https://evil.example" });
    expect(foreign.status).toBe(403);
    const crossSite = await browser.fetchWith(`/admin/t/${tenant}/applications`, { csrf, name, app_type: "spa" }, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    expect(await applicationNames(tenant)).not.toContain(name);
    // The same form with the token and the console's own origin goes through.
    const ok = await browser.fetchWith(`/admin/t/${tenant}/applications`, { csrf, name, app_type: "spa" }, { origin: "http://localhost:8787" });
    expect(ok.status).toBe(201);
  });
});

describe("admin console: who can reach it (issue 30)", () => {
  it("without a session: every page and every form goes to the login, nothing is called", async () => {
    const tenant = await createTenant();
    const browser = new TestBrowser("localhost:8787");
    for (const path of ["/admin", "/admin/tenants", `/admin/t/${tenant}/users`, `/admin/t/${tenant}/logs`]) {
      const res = await browser.get(path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location"), path).toMatch(/^\/admin\/login\?return_to=/);
    }
    const post = await browser.post(`/admin/t/${tenant}/applications`, { name: "sneaky", app_type: "spa" });
    expect(post.status).toBe(302);
    expect(await applicationNames(tenant)).not.toContain("sneaky");
  });

  it("an end user's login session (the control plane's SSO cookie) is no console session", async () => {
    const user = await seedUser(CP.tenantId, `${uniqueId("end")}@example.com`);
    const app = await seedClient(CP.tenantId, { callbacks: ["https://app.example.com/cb"] });
    const browser = new TestBrowser("localhost:8787");
    const [name, value] = (await sessionCookie(CP.tenantId, user.user_id, app.client_id)).split("=");
    browser.cookies.set(name as string, value as string);
    const res = await browser.get("/admin/tenants");
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toMatch(/^\/admin\/login/);
  });

  it("a control-plane user without operator roles logs in and can read or change nothing", async () => {
    const tenant = await createTenant();
    const nobody = await operator([]);
    const { browser, page } = await consoleLogin(nobody.email, PASSWORD);
    const html = await page.text();
    expect(html).toContain("Insufficient scope");
    expect(html).not.toContain(tenant);
    const csrf = fieldOf(html, "csrf");
    const res = await browser.post(`/admin/t/${tenant}/applications`, { csrf, name: "nope", app_type: "spa" });
    expect(res.status).toBe(403);
    expect(await applicationNames(tenant)).not.toContain("nope");
  });

  it("a Viewer reads but cannot create through the console: the API refuses the missing scope", async () => {
    const tenant = await createTenant();
    const viewer = await operator(["Gatehouse Viewer"]);
    const { browser, page } = await consoleLogin(viewer.email, PASSWORD);
    expect(await page.text()).toContain(tenant);
    const csrf = await csrfOf(browser, `/admin/t/${tenant}/applications`);
    const res = await browser.post(`/admin/t/${tenant}/applications`, { csrf, name: "viewer-app", app_type: "spa" });
    const html = await res.text();
    expect(res.status).toBe(403);
    expect(html).toContain("Insufficient scope, expected any of: create:clients");
    expect(await applicationNames(tenant)).not.toContain("viewer-app");
  });

  it("a role taken away takes its scopes at the next request, without a new login", async () => {
    const tenant = await createTenant();
    const editor = await operator(["Gatehouse Editor"]);
    const { browser } = await consoleLogin(editor.email, PASSWORD);
    const csrf = await csrfOf(browser, `/admin/t/${tenant}/applications`);
    expect((await browser.post(`/admin/t/${tenant}/applications`, { csrf, name: "first", app_type: "spa" })).status).toBe(201);
    const removed = await mgmt("DELETE", `/users/${encodeURIComponent(editor.userId)}/roles`, { body: { roles: [await roleId("Gatehouse Editor")] } });
    expect(removed.status).toBe(204);
    expect((await browser.post(`/admin/t/${tenant}/applications`, { csrf, name: "second", app_type: "spa" })).status).toBe(403);
    expect(await applicationNames(tenant)).toEqual(expect.arrayContaining(["first"]));
    expect(await applicationNames(tenant)).not.toContain("second");
  });

  it("another tenant's user cannot log into the console, and a tampered cookie is no session", async () => {
    const other = await createTenant();
    const email = `${uniqueId("admin")}@example.com`;
    await seedUser(other, email, PASSWORD);
    const browser = new TestBrowser("localhost:8787");
    const login = await browser.follow(await browser.get("/admin/tenants"));
    const authorize = await browser.follow(login);
    const form = await browser.follow(authorize);
    const html = await form.text();
    const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
    const posted = await browser.post(action, { _csrf: fieldOf(html, "_csrf"), email, password: PASSWORD });
    expect(posted.status).not.toBe(302);
    expect(browser.cookies.has("gh_console")).toBe(false);

    // The admin's session cookie carried over to another user's route is nothing.
    const { browser: admin } = await consoleLogin(ADMIN.email, ADMIN.password);
    const viewer = await operator(["Gatehouse Viewer"]);
    const secret = (admin.cookies.get("gh_console") ?? "").split(".")[1] ?? "";
    const forged = new TestBrowser("localhost:8787");
    forged.cookies.set("gh_console", `${btoa(viewer.userId).replaceAll("=", "").replaceAll("+", "-").replaceAll("/", "_")}.${secret}`);
    expect((await forged.get("/admin/tenants")).status).toBe(302);
  });

  it("is served on the apex only: a tenant's host has no console", async () => {
    const tenant = await createTenant();
    const res = await new TestBrowser(`${tenant}.localhost:8787`).get("/admin/tenants");
    expect(res.status).toBe(404);
  });
});

describe("admin console: organizations (issue 30)", () => {
  it("creates an organization and invites someone to it, through the API", async () => {
    const tenant = await createTenant();
    const app = await mgmt("POST", "/clients", { headers: { "tenant-id": tenant }, body: { name: "portal", app_type: "regular_web", initiate_login_uri: "https://portal.example.com/login" } });
    expect(app.status, await app.clone().text()).toBe(201);
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password);
    const csrf = await csrfOf(browser, `/admin/t/${tenant}/organizations`);
    const created = await browser.post(`/admin/t/${tenant}/organizations`, { csrf, name: "acme-corp", display_name: "Acme Corp" });
    expect(created.status).toBe(303);
    const list = await (await browser.get(`/admin/t/${tenant}/organizations`)).text();
    const link = /href="(\/admin\/t\/[^"]+\/organizations\/org_[^"]+)"/.exec(list)?.[1] ?? "";
    expect(link).not.toBe("");
    const invited = await browser.post(`${link}/invitations`, { csrf, invitee: "bob@example.com", inviter: "Ops", client_id: ((await app.json()) as { client_id: string }).client_id });
    const html = await invited.text();
    expect(invited.status, html.slice(0, 600)).toBe(201);
    expect(html).toContain("Invitation sent to bob@example.com.");
    const orgId = decodeURIComponent(link.split("/").pop() as string);
    const invitations = await mgmt("GET", `/organizations/${orgId}/invitations`, { headers: { "tenant-id": tenant } });
    expect(((await invitations.json()) as { invitee: { email: string } }[]).map((i) => i.invitee.email)).toEqual(["bob@example.com"]);
    // Bad input: the API's message on the page.
    const bad = await browser.post(`${link}/invitations`, { csrf, invitee: "not-an-email", inviter: "Ops", client_id: "nope" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("invitee.email must be an email address");
  });
});
