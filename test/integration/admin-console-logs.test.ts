import { describe, expect, it } from "vitest";
import { call, createTenant, uniqueId } from "../helpers/api";
import { ADMIN, consoleLogin } from "../helpers/console";
import { pendingLogin, seedClient, seedUser } from "../helpers/flows";
import { relay, tenantSql } from "../helpers/outbox";

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "correct-horse-9";

async function login(tenant: string, clientId: string, email: string, password: string, ip: string): Promise<Response> {
  const pending = await pendingLogin(tenant, clientId, { redirect_uri: CALLBACK });
  return call(`/u2/login?state=${pending.state}`, {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: pending.cookie, "x-forwarded-for": ip },
    body: new URLSearchParams({ _csrf: pending.csrf, email, password }).toString(),
  });
}

/** The log ids a logs page lists (its date cells link to each entry). */
const listed = (html: string, tenant: string) => [...html.matchAll(new RegExp(`/admin/t/${tenant}/logs/([A-Za-z0-9_-]+)"`, "g"))].map((m) => m[1]);

describe("admin console logs (issue 30): filters through the API's q, an entry's page, deep links", () => {
  it("filters by type, user, client, IP and day; shows an entry; users and applications link to their logs", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    const other = await seedClient(tenant, { callbacks: [CALLBACK] });
    const email = `${uniqueId("u")}@example.com`;
    const user = await seedUser(tenant, email, PASSWORD);
    expect((await login(tenant, client.client_id, email, PASSWORD, "203.0.113.7")).status).toBe(302);
    expect((await login(tenant, client.client_id, email, "wrong", "203.0.113.8")).status).toBe(403);
    expect((await login(tenant, other.client_id, email, PASSWORD, "198.51.100.1")).status).toBe(302);
    await relay(tenant);
    const rows = await tenantSql<{ log_id: string; type: string; client_id: string | null; ip: string | null }>(
      tenant,
      "SELECT log_id, type, client_id, ip FROM logs WHERE user_id = ? ORDER BY date",
      user.user_id,
    );
    const [signup, first, failed, second] = rows;
    expect(rows.map((r) => r.type)).toEqual(["ss", "s", "fp", "s"]);

    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, `/admin/t/${tenant}/logs?type=fp`);
    expect(page.status).toBe(200);
    const byType = await page.text();
    expect(listed(byType, tenant)).toEqual([failed?.log_id]);
    expect(byType).toContain("<code>type:&quot;fp&quot;</code>");
    expect(byType).toContain('<option value="fp" selected="">');

    const byClient = await (await browser.get(`/admin/t/${tenant}/logs?client_id=${other.client_id}`)).text();
    expect(listed(byClient, tenant)).toEqual([second?.log_id]);
    const byIp = await (await browser.get(`/admin/t/${tenant}/logs?ip=203.0.113.7`)).text();
    expect(listed(byIp, tenant)).toEqual([first?.log_id]);
    const byUser = await (await browser.get(`/admin/t/${tenant}/logs?${new URLSearchParams({ user_id: user.user_id, type: "s" })}`)).text();
    expect(listed(byUser, tenant)).toEqual([second?.log_id, first?.log_id]);
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await (await browser.get(`/admin/t/${tenant}/logs?from=${today}&to=${today}&user_id=${encodeURIComponent(user.user_id)}`)).text();
    expect(listed(byDay, tenant)).toHaveLength(4);
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    const none = await (await browser.get(`/admin/t/${tenant}/logs?to=${yesterday}`)).text();
    expect(none).toContain("No log event matches.");
    // A value with Lucene syntax in it is a quoted value, never syntax: nothing matches, no error.
    const quoted = await browser.get(`/admin/t/${tenant}/logs?${new URLSearchParams({ user_id: '" OR type:s OR "' })}`);
    expect(quoted.status).toBe(200);
    expect(await quoted.text()).toContain("No log event matches.");

    // An entry's page: GET /logs/{id}, with links to its user, application and their logs.
    const entry = await browser.get(`/admin/t/${tenant}/logs/${failed?.log_id}`);
    expect(entry.status).toBe(200);
    const detail = await entry.text();
    expect(detail).toContain(`/api/v2/logs/${failed?.log_id}`);
    expect(detail).toContain(`href="/admin/t/${tenant}/users/${encodeURIComponent(user.user_id)}"`);
    expect(detail).toContain(`href="/admin/t/${tenant}/applications/${client.client_id}"`);
    expect(detail).toContain(`href="/admin/t/${tenant}/logs?client_id=${client.client_id}"`);
    expect(detail).toContain("203.0.113.8");
    expect(detail).toContain("fp (Failed login (wrong password))");
    expect((await browser.get(`/admin/t/${tenant}/logs/nope`)).status).toBe(404);

    // Deep links: the user's page lists its recent logs and links to all of them; the application's page too.
    const userPage = await (await browser.get(`/admin/t/${tenant}/users/${encodeURIComponent(user.user_id)}`)).text();
    expect(listed(userPage, tenant)).toEqual([second?.log_id, failed?.log_id, first?.log_id, signup?.log_id]);
    expect(userPage).toContain(`href="/admin/t/${tenant}/logs?${new URLSearchParams({ user_id: user.user_id }).toString().replaceAll("&", "&amp;")}"`);
    const appPage = await (await browser.get(`/admin/t/${tenant}/applications/${client.client_id}`)).text();
    expect(appPage).toContain(`href="/admin/t/${tenant}/logs?client_id=${client.client_id}"`);
  });
});
