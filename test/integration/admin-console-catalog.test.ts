import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { seedUser } from "../helpers/flows";
import { createClient } from "../helpers/management";
import { importModeSetup, LEGACY_SCRIPTS, legacyStore, loginThrough } from "../helpers/custom-db";
import { relay } from "../helpers/outbox";

const PASSWORD = "operator-p4ssw0rd!";
const asTenant = (t: string) => ({ headers: { "tenant-id": t } });

async function createApi(tenant: string) {
  const identifier = `https://${uniqueId("api")}.example.com`;
  const res = await mgmt("POST", "/resource-servers", { ...asTenant(tenant), body: { name: "Orders API", identifier, scopes: [{ value: "read:orders", description: "Read orders" }] } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; identifier: string };
}

async function createRole(tenant: string) {
  const res = await mgmt("POST", "/roles", { ...asTenant(tenant), body: { name: uniqueId("role"), description: "Orders clerk" } });
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; name: string };
}

async function viewerEmail(): Promise<string> {
  const email = `${uniqueId("op")}@example.com`;
  const user = await seedUser(CP.tenantId, email, PASSWORD);
  const roles = (await (await mgmt("GET", `/roles?name_filter=${encodeURIComponent("Gatehouse Viewer")}`)).json()) as { id: string; name: string }[];
  expect((await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/roles`, { body: { roles: [roles.find((r) => r.name === "Gatehouse Viewer")?.id] } })).status).toBe(204);
  return email;
}

describe("admin console: an API's and a role's own pages (issue 30)", () => {
  it("an API's page shows its scopes and settings; saving sets the signing algorithm, RBAC and dialect through PATCH /resource-servers", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant);
    const path = `/admin/t/${tenant}/apis/${api.id}`;
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, path);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`<code>${api.identifier}</code>`);
    expect(html).toContain("<code>read:orders</code>");
    expect(html).toContain('<option value="RS256" selected="">');
    const list = await (await browser.get(`/admin/t/${tenant}/apis`)).text();
    expect(list).toContain(`href="${path}"`);
    const csrf = fieldOf(html, "csrf");
    const saved = await browser.post(path, { csrf, signing_alg: "PS256", enforce_policies: "true", token_dialect: "access_token_authz", token_lifetime: "600" });
    expect(saved.status).toBe(200);
    expect(await saved.text()).toContain("Settings saved.");
    const added = await browser.post(`${path}/scopes`, { csrf, value: "write:orders", description: "Write orders" });
    expect(await added.text()).toContain("<code>write:orders</code>");
    const stored = (await (await mgmt("GET", `/resource-servers/${api.id}`, asTenant(tenant))).json()) as Record<string, unknown>;
    expect(stored).toMatchObject({
      signing_alg: "PS256",
      enforce_policies: true,
      token_dialect: "access_token_authz",
      allow_offline_access: false,
      token_lifetime: 600,
      scopes: [
        { value: "read:orders", description: "Read orders" },
        { value: "write:orders", description: "Write orders" },
      ],
    });
    // The API's refusal is shown as the API worded it, and nothing changes.
    const bad = await browser.post(path, { csrf, signing_alg: "none", token_dialect: "access_token" });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain("signing_alg must be one of");
    expect(((await (await mgmt("GET", `/resource-servers/${api.id}`, asTenant(tenant))).json()) as { signing_alg: string }).signing_alg).toBe("PS256");
  });

  it("a role's page lists its permissions; adding and removing go through /roles/{id}/permissions", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant);
    const role = await createRole(tenant);
    const path = `/admin/t/${tenant}/roles/${role.id}`;
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, path);
    const html = await page.text();
    expect(html).toContain("No permission yet.");
    expect(await (await browser.get(`/admin/t/${tenant}/roles`)).text()).toContain(`href="${path}"`);
    const csrf = fieldOf(html, "csrf");
    const added = await browser.post(`${path}/permissions`, { csrf, resource_server_identifier: api.identifier, permission_name: "read:orders" });
    expect(added.status).toBe(200);
    const after = await added.text();
    expect(after).toContain("Permission added.");
    expect(after).toContain("<code>read:orders</code>");
    const held = async () => ((await (await mgmt("GET", `/roles/${role.id}/permissions`, asTenant(tenant))).json()) as { permission_name: string }[]).map((p) => p.permission_name);
    expect(await held()).toEqual(["read:orders"]);
    const unknown = await browser.post(`${path}/permissions`, { csrf, resource_server_identifier: api.identifier, permission_name: "fly:planes" });
    expect(unknown.status).toBe(400);
    expect(await held()).toEqual(["read:orders"]);
    const removed = await browser.post(`${path}/permissions/remove`, { csrf, resource_server_identifier: api.identifier, permission_name: "read:orders" });
    expect(await removed.text()).toContain("Permission removed.");
    expect(await held()).toEqual([]);
  });

  it("a Viewer reads both pages, and a forged POST is refused by the API with nothing changed", async () => {
    const tenant = await createTenant();
    const api = await createApi(tenant);
    const role = await createRole(tenant);
    const { browser, page } = await consoleLogin(await viewerEmail(), PASSWORD, `/admin/t/${tenant}/apis/${api.id}`);
    expect(page.status).toBe(200);
    const csrf = fieldOf(await page.text(), "csrf");
    const patch = await browser.post(`/admin/t/${tenant}/apis/${api.id}`, { csrf, signing_alg: "PS256", token_dialect: "access_token" });
    expect(patch.status).toBe(403);
    expect(await patch.text()).toContain("update:resource_servers");
    expect((await browser.get(`/admin/t/${tenant}/roles/${role.id}`)).status).toBe(200);
    const grant = await browser.post(`/admin/t/${tenant}/roles/${role.id}/permissions`, { csrf, resource_server_identifier: api.identifier, permission_name: "read:orders" });
    expect(grant.status).toBe(403);
    expect(((await (await mgmt("GET", `/resource-servers/${api.id}`, asTenant(tenant))).json()) as { signing_alg: string }).signing_alg).toBe("RS256");
    expect(await (await mgmt("GET", `/roles/${role.id}/permissions`, asTenant(tenant))).json()).toEqual([]);
  });

  it("a database connection's page: sign-ups, password policy and its applications, through /connections/{id} and /clients", async () => {
    const tenant = await createTenant();
    const app = await createClient({ name: "Shop" }, asTenant(tenant));
    const connections = (await (await mgmt("GET", "/connections?strategy=auth0", asTenant(tenant))).json()) as { id: string; name: string }[];
    const connection = connections.find((x) => x.name === "Username-Password-Authentication");
    expect(connection).toBeDefined();
    const path = `/admin/t/${tenant}/connections/${connection?.id}`;
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, path);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("Database settings and password policy");
    expect(html).toContain(`/api/v2/connections/${connection?.id}/clients?take=100`);
    expect(await (await browser.get(`/admin/t/${tenant}/connections`)).text()).toContain(`href="${path}"`);
    const csrf = fieldOf(html, "csrf");
    const saved = await browser.post(path, { csrf, disable_signup: "true", passwordPolicy: "excellent", min_length: "14" });
    expect(await saved.text()).toContain("Settings saved.");
    const stored = (await (await mgmt("GET", `/connections/${connection?.id}`, asTenant(tenant))).json()) as { options: Record<string, unknown> };
    expect(stored.options).toMatchObject({ disable_signup: true, passwordPolicy: "excellent", password_complexity_options: { min_length: 14 } });

    const enabledFor = async () => ((await (await mgmt("GET", `/connections/${connection?.id}/clients`, asTenant(tenant))).json()) as { clients: { client_id: string }[] }).clients.map((x) => x.client_id);
    const wasOn = (await enabledFor()).includes(app.client_id);
    const switched = await browser.post(`${path}/clients`, { csrf, client_id: app.client_id, status: String(!wasOn) });
    expect(switched.status).toBe(200);
    expect((await enabledFor()).includes(app.client_id)).toBe(!wasOn);
    const after = await switched.text();
    expect(after).toContain(`aria-label="${wasOn ? "Enable" : "Disable"} for Shop"`);
  });

  it("a custom database connection's page: the migration report, the scripts in the actions' editor and the configuration by name only, saved through PATCH /connections/{id}", async () => {
    const tenant = await createTenant();
    const who = `${uniqueId("legacy")}@example.com`;
    const second = `${uniqueId("legacy")}@example.com`;
    const store = await legacyStore([
      { email: who, password: "legacy-pass-1" },
      { email: second, password: "legacy-pass-2" },
    ]);
    const { connection, client } = await importModeSetup(tenant, store.base);
    expect((await loginThrough(tenant, client, connection.name, who, "legacy-pass-1")).status).toBe(302);
    await relay(tenant);
    const path = `/admin/t/${tenant}/connections/${connection.id}`;
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, path);
    const html = await page.text();
    expect(html).toContain(`/api/v2/connections/${connection.id}/status`);
    expect(html).toContain("Migration progress");
    expect(html).toMatch(/Users moved: <strong>1<\/strong>/);
    expect(html).toMatch(/in the last 30\s+days: <strong>1<\/strong>/);
    expect(html).toContain('data-editor="javascript"');
    expect(html).toContain("/admin/assets/editor.js");
    expect(html).toContain('name="config_BASE"');
    // Configuration values never reach the page, not even encrypted.
    expect(html).not.toContain(store.base);
    expect(html).not.toContain("enc:v1:");

    const csrf = fieldOf(html, "csrf");
    const login = `// edited in the console\n${LEGACY_SCRIPTS.login}`;
    const form = { csrf, enabledDatabaseCustomization: "true", import_mode: "true", script_login: login, script_get_user: LEGACY_SCRIPTS.get_user, config_BASE: "", new_key_0: "API_TOKEN", new_value_0: "s3cret-token" };
    const saved = await browser.post(`${path}/database`, form);
    expect(saved.status).toBe(200);
    const after = await saved.text();
    expect(after).toContain("Custom database saved.");
    expect(after).not.toContain("s3cret-token");
    const stored = (await (await mgmt("GET", `/connections/${connection.id}`, asTenant(tenant))).json()) as { options: { customScripts: Record<string, string>; configuration: Record<string, string> } };
    expect(stored.options.customScripts.login).toContain("// edited in the console");
    expect(Object.keys(stored.options.configuration).sort()).toEqual(["API_TOKEN", "BASE"]);
    // BASE was left empty: the stored value was kept, so a legacy login still reaches the store.
    expect((await loginThrough(tenant, client, connection.name, second, "legacy-pass-2")).status).toBe(302);
    expect(await store.calls()).toEqual({ login: 2 });

    const refused = await browser.post(`${path}/database`, { ...form, script_login: "function login(email, password, callback) {" });
    expect(refused.status).toBe(400);
    const page400 = await refused.text();
    expect(page400).toContain("customScripts.login");
    expect(page400).toContain("function login(email, password, callback) {</textarea>");
  });
});
