/**
 * Bench rows of issue 30: the admin console's users page against the management API's users page it is
 * built on, at 100,000 users (the users rows' seeded tenant). The console row logs an operator in once the
 * way a browser does (/admin/login, the control plane's /authorize and login form, /admin/callback) and then
 * loads GET /admin/t/{tenant}/users with the session cookie: session lookup, the in-process
 * GET /api/v2/users?page=0&per_page=50&include_totals=true with the operator's token, and the HTML. The API
 * row is that same request with the control-plane client's token.
 */

const PASSWORD = "bench console operator passw0rd";
const USERS_PAGE = "/api/v2/users?page=0&per_page=50&include_totals=true";

/** The cookies of a response, into a jar (name → value); attributes are ignored: every request sends all. */
function keep(jar, res) {
  for (const line of res.headers.getSetCookie()) {
    const [pair = ""] = line.split(";");
    const eq = pair.indexOf("=");
    const name = pair.slice(0, eq).trim();
    const value = pair.slice(eq + 1).trim();
    if (value === "" || /max-age=0/i.test(line)) jar.delete(name);
    else jar.set(name, value);
  }
  return res;
}
const cookieOf = (jar) => [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
const pathOf = (location, baseUrl) => {
  const url = new URL(location, baseUrl);
  return `${url.pathname}${url.search}`;
};

/** A control-plane operator holding the seeded Admin role, logged in to the console: its session cookie. */
async function operatorSession(ctx) {
  const token = await ctx.managementToken();
  const json = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const email = `bench-operator-${Date.now().toString(36)}@example.com`;
  const created = await ctx.fetch("/api/v2/users", { method: "POST", headers: json, body: JSON.stringify({ connection: "Username-Password-Authentication", email, password: PASSWORD }) });
  if (created.status !== 201) throw new Error(`create operator: HTTP ${created.status} ${await created.text()}`);
  const { user_id: userId } = await created.json();
  const roles = await (await ctx.fetch(`/api/v2/roles?name_filter=${encodeURIComponent("Gatehouse Admin")}`, { headers: json })).json();
  const admin = roles.find((r) => r.name === "Gatehouse Admin");
  if (!admin) throw new Error("no Gatehouse Admin role on the control plane");
  const assigned = await ctx.fetch(`/api/v2/users/${encodeURIComponent(userId)}/roles`, { method: "POST", headers: json, body: JSON.stringify({ roles: [admin.id] }) });
  if (assigned.status !== 204) throw new Error(`assign role: HTTP ${assigned.status} ${await assigned.text()}`);

  const jar = new Map();
  const get = async (path) => keep(jar, await ctx.fetch(path, { redirect: "manual", headers: { cookie: cookieOf(jar) } }));
  const follow = async (res, step) => {
    if (res.status !== 302) throw new Error(`console login, ${step}: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`);
    return get(pathOf(res.headers.get("location"), ctx.baseUrl));
  };
  const authorize = await get("/admin/login?return_to=%2Fadmin%2Ftenants");
  const loginPage = await follow(await follow(authorize, "/admin/login"), "/authorize");
  const html = await loginPage.text();
  const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&");
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  if (!action || !csrf) throw new Error(`console login: no login form (HTTP ${loginPage.status})`);
  const posted = keep(
    jar,
    await ctx.fetch(pathOf(action, ctx.baseUrl), {
      method: "POST",
      redirect: "manual",
      headers: { cookie: cookieOf(jar), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf, email, password: PASSWORD }).toString(),
    }),
  );
  await follow(posted, "the login form");
  if (!jar.has("gh_console")) throw new Error("console login: no session cookie after the callback");
  return `gh_console=${jar.get("gh_console")}`;
}

/** The rows, given the users rows' seeded-tenant helper (scenarios.mjs), so the 100,000 users are seeded once. */
export function consoleScenarios({ usersTenant }) {
  return [
    {
      id: "users_page_api",
      label: "users page at 100,000 users, with totals (GET /api/v2/users?page=0&per_page=50&include_totals=true)",
      unit: "req/s",
      kind: "load",
      setup: async (ctx) => {
        const tenant = await usersTenant(ctx, 100_000);
        return { method: "GET", path: USERS_PAGE, headers: { authorization: `Bearer ${tenant.token}`, "tenant-id": tenant.id } };
      },
    },
    {
      id: "users_page_console",
      label: "console users page at 100,000 users (GET /admin/t/{tenant}/users: session, the same API call in-process, HTML)",
      unit: "req/s",
      kind: "load",
      setup: async (ctx) => {
        const tenant = await usersTenant(ctx, 100_000);
        return { method: "GET", path: `/admin/t/${encodeURIComponent(tenant.id)}/users`, headers: { cookie: await operatorSession(ctx) } };
      },
    },
  ];
}

export const CONSOLE_RATIOS = [{ label: "console users page/s ÷ management API users page/s at 100,000 users (issue 30: target ≥ 0.7)", numerator: "users_page_console", denominator: "users_page_api" }];
