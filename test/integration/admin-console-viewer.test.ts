import { describe, expect, it } from "vitest";
import { TestBrowser } from "../helpers/mfa";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { createAction } from "../helpers/actions";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { createApi, createClient } from "../helpers/management";
import { createOrg } from "../helpers/organizations";
import { operatorWith as operatorUser } from "../helpers/operators";

/**
 * Issue 30 "a Viewer cannot change anything (no button, and a forged POST is refused by the API)": every
 * console screen hides the forms of writes the operator's scopes do not allow; the API still refuses them.
 */
const PASSWORD = "operator-p4ssw0rd!";
const asTenant = (t: string) => ({ headers: { "tenant-id": t } });

const operatorWith = (roleName: string | null) => operatorUser(roleName, PASSWORD);

/** A tenant holding one of everything a screen shows, and the console paths of those screens. */
async function furnishedTenant() {
  const tenant = await createTenant();
  const app = await createClient({ name: "Shop", app_type: "regular_web", callbacks: ["https://shop.example.com/cb"] }, asTenant(tenant));
  const api = await createApi(["read:orders"], asTenant(tenant));
  const role = (await (await mgmt("POST", "/roles", { ...asTenant(tenant), body: { name: uniqueId("role") } })).json()) as { id: string };
  const org = await createOrg(tenant);
  const action = await createAction(tenant, "post-login", "exports.onExecutePostLogin = async () => {};");
  const hook = (await (await mgmt("POST", "/hooks", { ...asTenant(tenant), body: { trigger_id: "post-user-login", url: "https://hooks.example.com/a" } })).json()) as { id: string };
  const domain = (await (await mgmt("POST", "/custom-domains", { ...asTenant(tenant), body: { domain: `id.${uniqueId("v")}.example.test`, type: "self_managed_certs" } })).json()) as { custom_domain_id: string };
  const connections = (await (await mgmt("GET", "/connections?strategy=auth0", asTenant(tenant))).json()) as { id: string }[];
  const database = connections[0]?.id as string;
  const t = `/admin/t/${tenant}`;
  const screens = [
    "/admin/tenants",
    `${t}/applications`,
    `${t}/applications/${app.client_id}`,
    `${t}/apis`,
    `${t}/apis/${api.id}`,
    `${t}/roles`,
    `${t}/roles/${role.id}`,
    `${t}/organizations`,
    `${t}/organizations/${org.id}`,
    `${t}/connections`,
    `${t}/connections/${database}`,
    `${t}/actions`,
    `${t}/actions/${action.id}`,
    `${t}/keys`,
    `${t}/domains`,
    `${t}/domains/${domain.custom_domain_id}`,
    `${t}/protection`,
    `${t}/settings`,
    `${t}/webhooks`,
    `${t}/branding`,
  ];
  return { tenant, app, hook, domain, database, screens };
}

/** The page's forms that write (method="post"), the logout's excepted. */
const writeForms = (html: string) => [...html.matchAll(/<form method="post" action="([^"]+)"/g)].map((m) => m[1]).filter((a) => a !== "/admin/logout");

describe("admin console: write controls follow the operator's scopes (issue 30)", () => {
  it("a Viewer reads every screen with no write form or button; an Admin sees them; no secret reaches a page", async () => {
    const { screens } = await furnishedTenant();
    const viewer = await consoleLogin(await operatorWith("Gatehouse Viewer"), PASSWORD, screens[0]);
    const admin = await consoleLogin(ADMIN.email, ADMIN.password, screens[0]);
    for (const path of screens) {
      const seen = await viewer.browser.get(path);
      const html = await seen.text();
      expect(seen.status, path).toBe(200);
      expect(writeForms(html), path).toEqual([]);
      // The only button outside the search and filter forms (GET) is Log out.
      const withoutSearch = html.replace(/<form method="get"[\s\S]*?<\/form>/g, "");
      expect(withoutSearch.match(/<button/g) ?? [], path).toHaveLength(1);
      expect(html, path).not.toMatch(/PRIVATE KEY|client_secret|signing_secret/);
      const adminHtml = await (await admin.browser.get(path)).text();
      if (path !== `${screens[0]}` && !path.endsWith("/connections")) expect(writeForms(adminHtml).length, path).toBeGreaterThan(0);
    }
  });

  it("an Editor (no delete scopes) sees create and update forms but no delete button", async () => {
    const { tenant, app, domain } = await furnishedTenant();
    const t = `/admin/t/${tenant}`;
    const { browser } = await consoleLogin(await operatorWith("Gatehouse Editor"), PASSWORD, `${t}/settings`);
    const forms = async (path: string) => writeForms(await (await browser.get(path)).text());
    expect(await forms(`${t}/settings`)).toEqual([`${t}/settings`]);
    expect(await forms(`${t}/applications/${app.client_id}`)).not.toContain(`${t}/applications/${app.client_id}/delete`);
    expect(await forms(`${t}/applications/${app.client_id}`)).toContain(`${t}/applications/${app.client_id}`);
    expect(await forms(`${t}/domains/${domain.custom_domain_id}`)).toEqual([`${t}/domains/${domain.custom_domain_id}/verify`]);
    const [hook] = (await (await mgmt("GET", "/hooks", asTenant(tenant))).json()) as { id: string }[];
    expect(await forms(`${t}/webhooks`)).toEqual([`${t}/webhooks/${hook?.id}/enabled`, `${t}/webhooks`]);
    expect(await forms(`${t}/keys`)).toContain(`${t}/keys/rotate`);
  });

  it("a Viewer's forged POSTs to every new screen are refused by the API (403) and change nothing", async () => {
    const { tenant, hook, domain, database, app } = await furnishedTenant();
    const t = `/admin/t/${tenant}`;
    const { browser, page } = await consoleLogin(await operatorWith("Gatehouse Viewer"), PASSWORD, `${t}/keys`);
    const csrf = fieldOf(await page.text(), "csrf");
    const keysBefore = await (await mgmt("GET", "/keys/signing", asTenant(tenant))).json();
    const settingsBefore = await (await mgmt("GET", "/tenants/settings", asTenant(tenant))).json();
    const bruteBefore = await (await mgmt("GET", "/attack-protection/brute-force-protection", asTenant(tenant))).json();
    const [kid] = (keysBefore as { kid: string }[]).map((k) => k.kid);
    const forged: [string, Record<string, string>][] = [
      [`${t}/keys/rotate`, {}],
      [`${t}/keys/${kid}/revoke`, {}],
      [`${t}/domains`, { domain: `x.${uniqueId("f")}.example.test`, type: "self_managed_certs" }],
      [`${t}/domains/${domain.custom_domain_id}/verify`, {}],
      [`${t}/domains/${domain.custom_domain_id}/delete`, {}],
      [`${t}/protection/brute-force`, { enabled: "true", max_attempts: "9", mode: "count_per_identifier", allowlist: "" }],
      [`${t}/protection/suspicious-ip`, { enabled: "true", allowlist: "" }],
      [`${t}/protection/breached-password`, { enabled: "true" }],
      [`${t}/settings`, { friendly_name: "Forged" }],
      [`${t}/webhooks`, { trigger_id: "post-user-login", url: "https://evil.example.com/" }],
      [`${t}/webhooks/${hook.id}/delete`, {}],
      [`${t}/webhooks/${hook.id}/enabled`, { enabled: "false" }],
      [`${t}/branding/theme`, { "colors.primary_button": "#000000" }],
      [`${t}/connections/${database}`, { passwordPolicy: "none", disable_signup: "true" }],
      [`${t}/connections/${database}/database`, { enabledDatabaseCustomization: "true", script_login: "function login(e, p, cb) { cb(null, { email: e }); }" }],
      [`${t}/connections/${database}/clients`, { client_id: app.client_id, status: "false" }],
      [`${t}/branding/template`, { template: "<html><head>{%- auth0:head -%}</head><body>{%- auth0:widget -%}</body></html>" }],
    ];
    for (const [path, fields] of forged) {
      const res = await browser.post(path, { csrf, ...fields });
      expect(res.status, path).toBe(403);
    }
    expect(await (await mgmt("GET", "/keys/signing", asTenant(tenant))).json()).toEqual(keysBefore);
    expect(await (await mgmt("GET", "/tenants/settings", asTenant(tenant))).json()).toEqual(settingsBefore);
    expect(await (await mgmt("GET", "/attack-protection/brute-force-protection", asTenant(tenant))).json()).toEqual(bruteBefore);
    expect(((await (await mgmt("GET", "/attack-protection/breached-password-detection", asTenant(tenant))).json()) as { enabled: boolean }).enabled).toBe(false);
    expect(((await (await mgmt("GET", "/custom-domains", asTenant(tenant))).json()) as unknown[]).length).toBe(1);
    expect(await (await mgmt("GET", "/hooks", asTenant(tenant))).json()).toMatchObject([{ id: hook.id, enabled: true }]);
    expect((await mgmt("GET", "/branding/templates/universal-login", asTenant(tenant))).status).toBe(404);
    const connection = (await (await mgmt("GET", `/connections/${database}`, asTenant(tenant))).json()) as { options: Record<string, unknown> };
    expect(connection.options.disable_signup).not.toBe(true);
    expect(connection.options.enabledDatabaseCustomization).not.toBe(true);
    expect((await mgmt("GET", "/branding/themes/default", asTenant(tenant))).status).toBe(404);
  });

  it("who reaches the new screens: without a session every page and form goes to the login; without operator roles the API refuses (403)", async () => {
    const { tenant, hook } = await furnishedTenant();
    const t = `/admin/t/${tenant}`;
    const pages = ["keys", "domains", "protection", "settings", "webhooks", "branding"].map((p) => `${t}/${p}`);
    const anonymous = new TestBrowser("localhost:8787");
    for (const path of pages) {
      const res = await anonymous.get(path);
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location"), path).toBe(`/admin/login?return_to=${encodeURIComponent(path)}`);
    }
    for (const path of [`${t}/settings`, `${t}/keys/rotate`, `${t}/webhooks/${hook.id}/delete`]) {
      const res = await anonymous.post(path, { friendly_name: "Anonymous" });
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location"), path).toMatch(/^\/admin\/login\?return_to=/);
    }
    const nobody = await consoleLogin(await operatorWith(null), PASSWORD, pages[0]);
    expect(nobody.page.status).toBe(403);
    expect(await nobody.page.text()).toContain("Insufficient scope");
    for (const path of pages.slice(1)) {
      const res = await nobody.browser.get(path);
      expect(res.status, path).toBe(403);
      const html = await res.text();
      expect(html, path).toContain("Insufficient scope");
      expect(writeForms(html), path).toEqual([]);
    }
    expect(((await (await mgmt("GET", "/tenants/settings", asTenant(tenant))).json()) as { friendly_name?: string }).friendly_name).toBeUndefined();
    expect(((await (await mgmt("GET", "/hooks", asTenant(tenant))).json()) as unknown[]).length).toBe(1);
  });
  it("without operator roles every list and detail screen answers the API's refusal as its own status (403), with its text", async () => {
    const { tenant, screens } = await furnishedTenant();
    const t = `/admin/t/${tenant}`;
    const pages = [...screens.filter((p) => p.startsWith(t)), `${t}/users`, `${t}/logs`, `${t}/home`];
    const nobody = await consoleLogin(await operatorWith(null), PASSWORD, pages[0]);
    const statuses: Record<string, number> = { [pages[0] as string]: nobody.page.status };
    for (const path of pages.slice(1)) statuses[path] = (await nobody.browser.get(path)).status;
    expect(statuses).toEqual(Object.fromEntries(pages.map((p) => [p, 403])));
    expect(await (await nobody.browser.get(`${t}/applications`)).text()).toContain("Insufficient scope");
  });
});
