import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { ADMIN, consoleLogin } from "../helpers/console";
import { seedUser } from "../helpers/flows";
import { tenantSql } from "../helpers/outbox";

const DAY = 86_400_000;
const PASSWORD = "operator-p4ssw0rd!";

/** A log row of the past (the API cannot make events in the past): only the date, type and user matter here. */
const pastLog = (tenant: string, date: number, type: string, userId: string) =>
  tenantSql(tenant, "INSERT INTO logs (log_id, date, type, event_type, user_id) VALUES (?, ?, ?, 'test', ?)", uniqueId("log"), date, type, userId);

/** A control-plane user holding only the Viewer operator role. */
async function viewer(): Promise<string> {
  const email = `${uniqueId("op")}@example.com`;
  const user = await seedUser(CP.tenantId, email, PASSWORD);
  const roles = (await (await mgmt("GET", `/roles?name_filter=${encodeURIComponent("Gatehouse Viewer")}`)).json()) as { id: string; name: string }[];
  const role = roles.find((r) => r.name === "Gatehouse Viewer");
  expect((await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/roles`, { body: { roles: [role?.id] } })).status).toBe(204);
  return email;
}

describe("admin console home: charts from /api/v2/stats (issue 30)", () => {
  it("shows active users and per-day charts of logins, sign-ups and failed logins, with a table of the same figures", async () => {
    const tenant = await createTenant();
    const midnight = Math.floor(Date.now() / DAY) * DAY;
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    await pastLog(tenant, midnight - 2 * DAY + 10, "s", "auth0|a");
    await pastLog(tenant, midnight - 2 * DAY + 20, "s", "auth0|b");
    await pastLog(tenant, midnight - 2 * DAY + 30, "s", "auth0|a");
    await pastLog(tenant, midnight - 1 * DAY + 10, "ss", "auth0|c");
    await pastLog(tenant, midnight - 1 * DAY + 20, "fp", "auth0|a");
    await pastLog(tenant, midnight - 40 * DAY, "s", "auth0|old");
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, `/admin/t/${tenant}/home`);
    expect(page.status).toBe(200);
    // The tenant's own address opens its home.
    expect((await browser.get(`/admin/t/${tenant}`)).headers.get("location")).toBe(`/admin/t/${tenant}/home`);
    const html = await page.text();
    expect(html).toMatch(/<span class="figure">2<\/span> active users/);
    // Three accessible SVG charts: role img, labelled by their title and description.
    expect(html.match(/<svg[^>]+role="img"[^>]+aria-labelledby="chart-(logins|signups|failed)-title chart-\1-desc"/g)).toHaveLength(3);
    expect(html).toContain("<title id=\"chart-logins-title\">Logins per day, last 30 days</title>");
    expect(html).toContain(`3 in all from ${day(midnight - 29 * DAY)} to ${day(midnight)}; the busiest day was ${day(midnight - 2 * DAY)} with 3.`);
    expect(html).toContain(`<title>${day(midnight - 1 * DAY)}: 1</title>`);
    // The table fallback: every day of the range, zero where nothing happened.
    const row = (d: number) => new RegExp(`<th scope="row">${day(d)}</th><td>(\\d+)</td><td>(\\d+)</td><td>(\\d+)</td>`).exec(html)?.slice(1);
    expect(row(midnight - 2 * DAY)).toEqual(["3", "0", "0"]);
    expect(row(midnight - 1 * DAY)).toEqual(["0", "1", "1"]);
    expect(row(midnight - 10 * DAY)).toEqual(["0", "0", "0"]);
    expect(html.match(/<th scope="row">/g)).toHaveLength(30);
    // The page shows the calls it made, token redacted.
    expect(html).toContain(`/api/v2/stats/daily?from=${day(midnight - 29 * DAY).replaceAll("-", "")}&amp;to=${day(midnight).replaceAll("-", "")}`);
    expect(html).toContain("/api/v2/stats/active-users");
    expect(html).toContain("Bearer $TOKEN");
    expect(html).not.toContain("eyJ");
    // Another range: 7 days, a row per day.
    const week = await (await browser.get(`/admin/t/${tenant}/home?days=7`)).text();
    expect(week.match(/<th scope="row">/g)).toHaveLength(7);
  });

  it("a Viewer reads the home (read:stats is a read scope)", async () => {
    const tenant = await createTenant();
    const { page } = await consoleLogin(await viewer(), PASSWORD, `/admin/t/${tenant}/home`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain("active users");
    expect(html).not.toContain('role="alert"');
  });
});

describe("admin console tenant switcher (issue 30)", () => {
  it("searches tenants on the server (name_filter) with paging, and remembers the session's recent tenants", async () => {
    const marker = uniqueId("sw").replace("-", "");
    const mine = [await createTenant(`${marker}-alpha`), await createTenant(`${marker}-beta`), await createTenant(`${marker}-gamma`)];
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password);
    expect(await page.text()).not.toContain("Recent tenants");
    const found = await (await browser.get(`/admin/tenants?q=${marker.toUpperCase()}-BE`)).text();
    expect(found).toContain(`Tenants matching “${marker.toUpperCase()}-BE”`);
    expect(found).toContain(`/admin/t/${mine[1]}/applications`);
    expect(found).not.toContain(`/admin/t/${mine[0]}/applications`);
    expect(found).toContain("(1 in all)");
    expect(found).toContain(`name_filter=${marker.toUpperCase()}-BE`);
    const none = await (await browser.get(`/admin/tenants?q=${marker}-nothing`)).text();
    expect(none).toContain("No tenant matches this search.");

    // Opening two tenants puts them first in "Recent tenants", most recent first.
    expect((await browser.get(`/admin/t/${mine[0]}/home`)).status).toBe(200);
    expect((await browser.get(`/admin/t/${mine[2]}/users`)).status).toBe(200);
    expect((await browser.get(`/admin/t/${mine[0]}/logs`)).status).toBe(200);
    const list = await (await browser.get("/admin/tenants")).text();
    const recent = /<h2 id="recent-tenants">Recent tenants<\/h2>([\s\S]*?)<\/nav>/.exec(list)?.[1] ?? "";
    expect([...recent.matchAll(/\/admin\/t\/([^/]+)\/home/g)].map((m) => m[1])).toEqual([mine[0], mine[2]]);
    // A page that did not answer 200 (a tenant that does not exist) is not remembered.
    expect((await browser.get(`/admin/t/${marker}-missing/home`)).status).toBe(404);
    expect(await (await browser.get("/admin/tenants")).text()).not.toContain(`${marker}-missing`);
  });

  it("GET /api/v2/tenants?name_filter pages the matching tenants with their total", async () => {
    const marker = uniqueId("nf").replace("-", "");
    for (const n of [1, 2, 3]) await createTenant(`${marker}-${n}`);
    const res = await mgmt("GET", `/tenants?name_filter=${marker}&per_page=2&page=1&include_totals=true`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { tenants: { id: string }[]; total: number };
    expect(body.total).toBe(3);
    expect(body.tenants.map((t) => t.id)).toEqual([`${marker}-1`]);
    const checkpoint = (await (await mgmt("GET", `/tenants?name_filter=${marker}&take=5`)).json()) as { tenants: { id: string }[] };
    expect(checkpoint.tenants.map((t) => t.id)).toEqual([`${marker}-3`, `${marker}-2`, `${marker}-1`]);
  });
});
