import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { seedUser } from "../helpers/flows";
import { relay } from "../helpers/outbox";
import { loginOffline, refreshSetup } from "../helpers/refresh";

afterEach(() => setClock());

const PASSWORD = "operator-p4ssw0rd!";
const asTenant = (t: string) => ({ headers: { "tenant-id": t } });
const enc = encodeURIComponent;

async function viewerEmail(): Promise<string> {
  const email = `${uniqueId("op")}@example.com`;
  const user = await seedUser(CP.tenantId, email, PASSWORD);
  const roles = (await (await mgmt("GET", `/roles?name_filter=${enc("Gatehouse Viewer")}`)).json()) as { id: string; name: string }[];
  expect((await mgmt("POST", `/users/${enc(user.user_id)}/roles`, { body: { roles: [roles.find((r) => r.name === "Gatehouse Viewer")?.id] } })).status).toBe(204);
  return email;
}

/**
 * A tenant user with everything the page shows: a live session and a refresh token (a real code flow with
 * offline_access), a TOTP enrollment, a linked second account, an organization and a direct permission.
 */
async function richUser() {
  const tenant = await createTenant();
  const setup = await refreshSetup(tenant);
  const tokens = await loginOffline(setup);
  expect(tokens.refresh_token).toBeTruthy();
  const userId = setup.user.user_id;
  const totp = await mgmt("POST", `/users/${enc(userId)}/authentication-methods`, { ...asTenant(tenant), body: { type: "totp", totp_secret: "JBSWY3DPEHPK3PXP" } });
  expect(totp.status, await totp.clone().text()).toBe(201);
  const other = await seedUser(tenant, `${uniqueId("second")}@example.com`);
  const link = await mgmt("POST", `/users/${enc(userId)}/identities`, { ...asTenant(tenant), body: { provider: "auth0", user_id: other.user_id.replace(/^auth0\|/, "") } });
  expect(link.status, await link.clone().text()).toBe(201);
  const org = (await (await mgmt("POST", "/organizations", { ...asTenant(tenant), body: { name: uniqueId("org") } })).json()) as { id: string; name: string };
  expect((await mgmt("POST", `/organizations/${org.id}/members`, { ...asTenant(tenant), body: { members: [userId] } })).status).toBe(204);
  const identifier = `https://${uniqueId("api")}.example.com`;
  expect((await mgmt("POST", "/resource-servers", { ...asTenant(tenant), body: { name: "Orders", identifier, scopes: [{ value: "read:orders" }] } })).status).toBe(201);
  const grant = await mgmt("POST", `/users/${enc(userId)}/permissions`, { ...asTenant(tenant), body: { permissions: [{ resource_server_identifier: identifier, permission_name: "read:orders" }] } });
  expect(grant.status).toBe(201);
  return { tenant, userId, secondId: other.user_id, org, refreshToken: tokens.refresh_token as string, clientId: setup.client.client_id };
}

const read = async (tenant: string, path: string) => (await mgmt("GET", path, asTenant(tenant))).json() as Promise<unknown>;
const listOf = (body: unknown, key: string): unknown[] => (Array.isArray(body) ? body : ((body as Record<string, unknown[]>)[key] ?? []));

describe("admin console: a user's sessions, refresh tokens, MFA, identities, organizations and permissions (issue 30)", () => {
  it("shows each through its API route, and revokes, resets and unlinks through the API; no secret reaches the page", async () => {
    const u = await richUser();
    const page = `/admin/t/${u.tenant}/users/${enc(u.userId)}`;
    const { browser, page: first } = await consoleLogin(ADMIN.email, ADMIN.password, page);
    const html = await first.text();
    expect(first.status).toBe(200);
    for (const heading of ["Sessions", "Refresh tokens", "Multi-factor authentication", "Linked identities", "Organizations", "Permissions", "Change history", "Raw JSON"]) {
      expect(html).toContain(`>${heading}</h2>`);
    }
    const sessions = listOf(await read(u.tenant, `/users/${enc(u.userId)}/sessions`), "sessions") as { id: string }[];
    expect(sessions).toHaveLength(1);
    expect(html).toContain(`<code>${sessions[0]?.id}</code>`);
    expect(html).toContain(`<code>${u.clientId}</code>`);
    expect(html).toContain("<td>authenticator</td>");
    expect(html).toContain(`<code>${u.secondId.replace(/^auth0\|/, "")}</code>`);
    expect(html).toContain(`/admin/t/${u.tenant}/organizations/${u.org.id}`);
    expect(html).toContain("<code>read:orders</code>");
    expect(html).toContain(`/admin/t/${u.tenant}/logs?user_id=${enc(u.userId)}`);
    // No token, no secret: the refresh token's value, a JWT, the TOTP secret never appear.
    expect(html).not.toContain(u.refreshToken);
    expect(html).not.toContain("eyJ");
    expect(html).not.toContain("JBSWY3DPEHPK3PXP");
    expect(html).not.toContain("password_hash");

    const csrf = fieldOf(html, "csrf");
    const tokens = listOf(await read(u.tenant, `/users/${enc(u.userId)}/refresh-tokens`), "tokens") as { id: string; revoked_at?: string }[];
    const revokedToken = await browser.post(`${page}/refresh-tokens/revoke`, { csrf, token: tokens[0]?.id ?? "" });
    expect(revokedToken.status).toBe(200);
    expect(await revokedToken.text()).toContain("Refresh token revoked.");
    // DELETE /refresh-tokens/{id} revokes the family and deletes the token: it is gone.
    expect((await mgmt("GET", `/refresh-tokens/${tokens[0]?.id}`, asTenant(u.tenant))).status).toBe(404);

    const revokedSession = await browser.post(`${page}/sessions/revoke`, { csrf, session: sessions[0]?.id ?? "" });
    expect(await revokedSession.text()).toContain("Session revoked");
    expect(listOf(await read(u.tenant, `/users/${enc(u.userId)}/sessions`), "sessions")).toEqual([]);

    const reset = await browser.post(`${page}/mfa/reset`, { csrf });
    expect(await reset.text()).toContain("MFA reset");
    expect(await read(u.tenant, `/users/${enc(u.userId)}/enrollments`)).toEqual([]);

    const unlinked = await browser.post(`${page}/identities/unlink`, { csrf, provider: "auth0", identity: u.secondId.replace(/^auth0\|/, "") });
    expect(await unlinked.text()).toContain("Identity unlinked");
    expect(((await read(u.tenant, `/users/${enc(u.userId)}`)) as { identities: unknown[] }).identities).toHaveLength(1);
    expect((await mgmt("GET", `/users/${enc(u.secondId)}`, asTenant(u.tenant))).status).toBe(200);

    // The API's refusal is shown as the API worded it.
    const unknown = await browser.post(`${page}/sessions/revoke`, { csrf, session: "ses_nobody" });
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toContain('role="alert"');
  });

  it("a Viewer sees every section but no write control, and a forged POST is refused by the API with nothing changed", async () => {
    const u = await richUser();
    const page = `/admin/t/${u.tenant}/users/${enc(u.userId)}`;
    const { browser, page: first } = await consoleLogin(await viewerEmail(), PASSWORD, page);
    const html = await first.text();
    expect(first.status).toBe(200);
    expect(html).toContain(">Refresh tokens</h2>");
    // The only form that posts is the log-out button.
    const posts = [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]);
    expect(posts).toEqual(["/admin/logout"]);
    expect(html).not.toContain("Revoke");
    expect(html).not.toContain("Block user");
    const csrf = fieldOf(html, "csrf");
    const sessions = listOf(await read(u.tenant, `/users/${enc(u.userId)}/sessions`), "sessions") as { id: string }[];
    const forged = await browser.post(`${page}/sessions/revoke`, { csrf, session: sessions[0]?.id ?? "" });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("delete:sessions");
    expect((await browser.post(`${page}/mfa/reset`, { csrf })).status).toBe(403);
    expect((await browser.post(`${page}/block`, { csrf })).status).toBe(403);
    expect(listOf(await read(u.tenant, `/users/${enc(u.userId)}/sessions`), "sessions")).toHaveLength(1);
    expect(await read(u.tenant, `/users/${enc(u.userId)}/enrollments`)).toHaveLength(1);
    // Also the users list: no create form.
    expect(await (await browser.get(`/admin/t/${u.tenant}/users`)).text()).not.toContain("Create a user");
  });

  it("a revocation needs a recent login: an older one is sent to log in again (step-up), back to the user's page", async () => {
    const u = await richUser();
    const page = `/admin/t/${u.tenant}/users/${enc(u.userId)}`;
    const { browser, page: first } = await consoleLogin(ADMIN.email, ADMIN.password, page);
    const csrf = fieldOf(await first.text(), "csrf");
    const start = Date.now();
    setClock(() => start + 10 * 60_000);
    const refused = await browser.post(`${page}/mfa/reset`, { csrf });
    expect(refused.status).toBe(303);
    expect(refused.headers.get("location")).toBe(`/admin/login?step_up=1&return_to=${enc(page)}`);
    expect(await read(u.tenant, `/users/${enc(u.userId)}/enrollments`)).toHaveLength(1);
  });

  it("without a console session the writes send to the login, and a CSRF-less or foreign-origin POST is refused", async () => {
    const u = await richUser();
    const page = `/admin/t/${u.tenant}/users/${enc(u.userId)}`;
    const { browser, page: first } = await consoleLogin(ADMIN.email, ADMIN.password, page);
    const csrf = fieldOf(await first.text(), "csrf");
    expect((await browser.post(`${page}/mfa/reset`, {})).status).toBe(403);
    expect((await browser.fetchWith(`${page}/mfa/reset`, { csrf }, { origin: "https://evil.example" })).status).toBe(403);
    browser.cookies.clear();
    const anonymous = await browser.post(`${page}/mfa/reset`, { csrf });
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get("location")).toBe("/admin/login?return_to=%2Fadmin");
    expect(await read(u.tenant, `/users/${enc(u.userId)}/enrollments`)).toHaveLength(1);
  });
});

describe("admin console: change history from the audit log (issue 30)", () => {
  it("a role's, an API's, an application's, a connection's and a user's pages show who changed what, with the diff", async () => {
    const tenant = await createTenant();
    const { browser, page: first } = await consoleLogin(ADMIN.email, ADMIN.password, `/admin/t/${tenant}/users`);
    const csrf = fieldOf(await first.text(), "csrf");
    const admin = ((await (await mgmt("GET", `/users-by-email?email=${enc(ADMIN.email)}`)).json()) as { user_id: string }[])[0]?.user_id ?? "";
    const role = (await (await mgmt("POST", "/roles", { ...asTenant(tenant), body: { name: "Clerk", description: "before" } })).json()) as { id: string };
    const api = (await (await mgmt("POST", "/resource-servers", { ...asTenant(tenant), body: { name: "Orders", identifier: `https://${uniqueId("api")}.example.com` } })).json()) as { id: string };
    const app = (await (await mgmt("POST", "/clients", { ...asTenant(tenant), body: { name: "Shop", app_type: "spa" } })).json()) as { client_id: string };
    const connection = ((await (await mgmt("GET", "/connections?strategy=auth0", asTenant(tenant))).json()) as { id: string }[])[0]?.id ?? "";
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);

    // Changes through the console, with the operator's token.
    expect((await browser.post(`/admin/t/${tenant}/apis/${api.id}`, { csrf, signing_alg: "PS256", token_dialect: "access_token" })).status).toBe(200);
    expect((await browser.post(`/admin/t/${tenant}/applications/${app.client_id}`, { csrf, name: "Shop 2", callbacks: "https://shop.example.com/cb" })).status).toBe(200);
    expect((await browser.post(`/admin/t/${tenant}/connections/${connection}`, { csrf, passwordPolicy: "excellent" })).status).toBe(200);
    expect((await browser.post(`/admin/t/${tenant}/users/${enc(user.user_id)}/block`, { csrf })).status).toBe(200);
    expect((await mgmt("PATCH", `/roles/${role.id}`, { ...asTenant(tenant), body: { description: "after" } })).status).toBe(200);
    const rotated = await browser.post(`/admin/t/${tenant}/applications/${app.client_id}/rotate-secret`, { csrf });
    const secret = /class="secret">([^<]+)</.exec(await rotated.text())?.[1] ?? "";
    expect(secret.length).toBeGreaterThan(20);
    await relay(tenant);

    const history = async (path: string) => {
      const html = await (await browser.get(path)).text();
      return html.slice(html.indexOf('id="h-history"'));
    };
    const rolePage = await history(`/admin/t/${tenant}/roles/${role.id}`);
    expect(rolePage).toContain("<strong>role.updated</strong>");
    expect(rolePage).toContain("<strong>role.created</strong>");
    expect(rolePage).toMatch(/<code>description<\/code><\/th><td><code>&quot;before&quot;<\/code><\/td><td><code>&quot;after&quot;<\/code>/);
    const apiPage = await history(`/admin/t/${tenant}/apis/${api.id}`);
    expect(apiPage).toContain("<strong>resource_server.updated</strong>");
    expect(apiPage).toMatch(/<code>signing_alg<\/code><\/th><td><code>&quot;RS256&quot;<\/code><\/td><td><code>&quot;PS256&quot;<\/code>/);
    // The console's change names the operator (through the console application).
    expect(apiPage).toContain(`<code>${admin} (via gatehouse-console)</code>`);
    const appPage = await history(`/admin/t/${tenant}/applications/${app.client_id}`);
    expect(appPage).toMatch(/<code>name<\/code><\/th><td><code>&quot;Shop&quot;<\/code><\/td><td><code>&quot;Shop 2&quot;<\/code>/);
    // The rotation is in the history, its secret is not (the audit event redacts it).
    expect(appPage).toContain("POST /api/v2/clients/");
    expect(appPage).not.toContain(secret);
    expect(await history(`/admin/t/${tenant}/connections/${connection}`)).toContain("<strong>connection.updated</strong>");
    const userPage = await history(`/admin/t/${tenant}/users/${enc(user.user_id)}`);
    expect(userPage).toMatch(/<code>blocked<\/code><\/th><td><code>(false|null)<\/code><\/td><td><code>true<\/code>/);
    // Another resource's changes are not listed.
    expect(rolePage).not.toContain("resource_server.updated");
  });

  it("GET /logs finds a resource's writes with details.target.id, and a bad path is a 400", async () => {
    const tenant = await createTenant();
    const role = (await (await mgmt("POST", "/roles", { ...asTenant(tenant), body: { name: "Clerk" } })).json()) as { id: string };
    await mgmt("POST", "/roles", { ...asTenant(tenant), body: { name: "Other" } });
    await relay(tenant);
    const found = (await read(tenant, `/logs?q=${enc(`type:sapi AND details.target.id:"${role.id}"`)}`)) as { details: { target: { id: string } } }[];
    expect(found.map((l) => l.details.target.id)).toEqual([role.id]);
    const bad = await mgmt("GET", `/logs?q=${enc('details.a"b:1')}`, asTenant(tenant));
    expect(bad.status).toBe(400);
  });
});
