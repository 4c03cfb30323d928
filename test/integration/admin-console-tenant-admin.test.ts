import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { fieldOf } from "../helpers/console";
import { seedUser } from "../helpers/flows";
import { TestBrowser } from "../helpers/mfa";
import { databaseConnectionId, onTenant } from "../helpers/organizations";
import { controlPlaneRole, tenantOrganization } from "../helpers/tenant-members";

/**
 * Issue 30: "an organization-bound tenant admin (issue 15) sees only their tenant". A control-plane user who is
 * a member of tenant A's organization with read:tenants and update:tenants there logs into the console through
 * that organization (/admin/login?organization=); the tenants list holds A only, A opens on its details
 * (names and sender), which it may change, and every other tenant or screen is refused by the API.
 */

const PASSWORD = "tenant-admin-p4ssw0rd!";

async function tenantAdminOf(tenant: string): Promise<string> {
  const cp = onTenant(CP.tenantId);
  const org = await tenantOrganization(tenant);
  const enabled = await cp.call("POST", `/organizations/${org.id}/enabled_connections`, { connection_id: await databaseConnectionId(CP.tenantId) });
  expect([201, 409]).toContain(enabled.status);
  const email = `${uniqueId("tadmin")}@example.com`;
  const user = await seedUser(CP.tenantId, email, PASSWORD);
  await cp.json("POST", `/organizations/${org.id}/members`, { members: [user.user_id] }, 204);
  await cp.json("POST", `/organizations/${org.id}/members/${user.user_id}/roles`, { roles: [await controlPlaneRole(["read:tenants", "update:tenants"])] }, 204);
  return email;
}

/** The console login through an organization: /admin/login?organization= → /authorize → the password form → back. */
async function consoleLoginThrough(organization: string, email: string): Promise<{ browser: TestBrowser; page: Response }> {
  const browser = new TestBrowser("localhost:8787");
  const start = await browser.get(`/admin/login?${new URLSearchParams({ organization, return_to: "/admin/tenants" })}`);
  expect(start.status).toBe(302);
  expect(new URL(String(start.headers.get("location")), "http://localhost:8787").searchParams.get("organization")).toBe(organization);
  const form = await browser.follow(await browser.follow(start));
  expect(form.status, (await form.clone().text()).slice(0, 400)).toBe(200);
  const html = await form.text();
  const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
  const posted = await browser.post(action, { _csrf: fieldOf(html, "_csrf"), email, password: PASSWORD });
  const page = await browser.follow(await browser.follow(posted));
  return { browser, page };
}

describe("a tenant admin in the console (issue 30, issue 15 point 3)", () => {
  it("sees only their tenant, opens it on its details and changes its names; other tenants and screens are refused", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const org = await tenantOrganization(a);
    const { browser, page } = await consoleLoginThrough(org.id, await tenantAdminOf(a));
    expect(page.status).toBe(200);
    const list = await page.text();
    expect(list).toContain(`href="/admin/t/${a}/details"`);
    expect(list).not.toContain(`/admin/t/${b}/`);
    expect(list).not.toContain(`/admin/t/${CP.tenantId}/`);
    // No tenant creation for a tenant admin.
    expect(list).not.toContain('<form method="post" action="/admin/tenants"');
    expect(list).not.toContain("Create a tenant");

    const details = await browser.get(`/admin/t/${a}/details`);
    expect(details.status).toBe(200);
    const html = await details.text();
    // The side navigation offers only the details: every other screen needs scopes this token does not hold.
    expect(html).toContain(`href="/admin/t/${a}/details"`);
    expect(html).not.toContain(`href="/admin/t/${a}/applications"`);
    const saved = await browser.post(`/admin/t/${a}/details`, { csrf: fieldOf(html, "csrf"), friendly_name: "Renamed by its admin" });
    expect(saved.status).toBe(200);
    expect(await saved.text()).toContain("Details saved.");
    expect(((await (await mgmt("GET", `/tenants/${a}`)).json()) as { friendly_name: string }).friendly_name).toBe("Renamed by its admin");

    // Another tenant: the API refuses, and nothing changes.
    const other = await browser.get(`/admin/t/${b}/details`);
    expect(other.status).toBe(403);
    expect(await other.text()).toContain("it is not the tenant of the token");
    const forged = await browser.post(`/admin/t/${b}/details`, { csrf: fieldOf(html, "csrf"), friendly_name: "Taken" });
    expect(forged.status).toBe(403);
    expect(((await (await mgmt("GET", `/tenants/${b}`)).json()) as { friendly_name?: string }).friendly_name).not.toBe("Taken");
    // Its own tenant's applications, users and settings are not a tenant admin's (403 from the API).
    for (const screen of ["applications", "users", "settings"]) {
      const refused = await (await browser.get(`/admin/t/${a}/${screen}`)).text();
      expect(refused, screen).toMatch(/Cross-tenant management requires a control-plane token|Insufficient scope/);
      expect(refused, screen).not.toContain("<tbody><tr>");
    }
  });

  it("an Admin opens any tenant's details and changes them", async () => {
    const a = await createTenant();
    const { consoleLogin, ADMIN } = await import("../helpers/console");
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, `/admin/t/${a}/details`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`action="/admin/t/${a}/details"`);
    const saved = await browser.post(`/admin/t/${a}/details`, { csrf: fieldOf(html, "csrf"), sender_name: "Acme Support" });
    expect(saved.status).toBe(200);
    expect(((await (await mgmt("GET", `/tenants/${a}`)).json()) as { sender_name: string }).sender_name).toBe("Acme Support");
  });
});
