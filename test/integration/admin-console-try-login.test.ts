import { describe, expect, it } from "vitest";
import { CP, createTenant, mgmt, uniqueId } from "../helpers/api";
import { bindAction, createAction } from "../helpers/actions";
import { ADMIN, consoleLogin, fieldOf } from "../helpers/console";
import { seedUser } from "../helpers/flows";
import { TestBrowser } from "../helpers/mfa";
import { relay } from "../helpers/outbox";

const PASSWORD = "operator-p4ssw0rd!";
const USER_PASSWORD = "a tenant user's passw0rd";
const asTenant = (t: string) => ({ headers: { "tenant-id": t } });

async function viewerEmail(): Promise<string> {
  const email = `${uniqueId("op")}@example.com`;
  const user = await seedUser(CP.tenantId, email, PASSWORD);
  const roles = (await (await mgmt("GET", `/roles?name_filter=${encodeURIComponent("Gatehouse Viewer")}`)).json()) as { id: string; name: string }[];
  expect((await mgmt("POST", `/users/${encodeURIComponent(user.user_id)}/roles`, { body: { roles: [roles.find((r) => r.name === "Gatehouse Viewer")?.id] } })).status).toBe(204);
  return email;
}

/** The tenant's login page as a browser on the tenant's host goes through it: /authorize → /u2/login → the callback. */
async function loginAtTenant(tenant: string, authorizeUrl: string, email: string): Promise<URL> {
  const url = new URL(authorizeUrl);
  expect(url.host).toBe(`${tenant}.localhost:8787`);
  const browser = new TestBrowser(url.host);
  const form = await browser.follow(await browser.get(url.pathname + url.search));
  const html = await form.text();
  expect(form.status, html.slice(0, 300)).toBe(200);
  const action = /<form[^>]+action="([^"]+)"/.exec(html)?.[1]?.replaceAll("&amp;", "&") ?? "";
  const posted = await browser.post(action, { _csrf: fieldOf(html, "_csrf"), email, password: USER_PASSWORD });
  expect(posted.status, (await posted.clone().text()).slice(0, 300)).toBe(302);
  return new URL(posted.headers.get("location") ?? "");
}

describe("admin console: try login (issue 30)", () => {
  it("creates the tenant's test application once, runs the tenant's real login and shows both tokens decoded with the actions that ran", async () => {
    const tenant = await createTenant();
    const email = `${uniqueId("ann")}@example.com`;
    const user = await seedUser(tenant, email, USER_PASSWORD);
    const action = await bindAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { console.log("hello " + event.user.email); api.idToken.setCustomClaim("https://example.com/plan", "gold"); };`);
    const page = `/admin/t/${tenant}/try-login`;
    const { browser, page: first } = await consoleLogin(ADMIN.email, ADMIN.password, page);
    const html = await first.text();
    expect(first.status).toBe(200);
    expect(html).toContain("Create the test application");
    const created = await browser.post(page, { csrf: fieldOf(html, "csrf") });
    expect(created.status).toBe(201);
    const clients = (await (await mgmt("GET", "/clients?per_page=100", asTenant(tenant))).json()) as { client_id: string; name: string; app_type: string; callbacks: string[]; token_endpoint_auth_method: string }[];
    const app = clients.find((x) => x.name === "Gatehouse console: try login");
    expect(app).toMatchObject({ app_type: "spa", token_endpoint_auth_method: "none", callbacks: [`http://localhost:8787${page}/callback`] });
    // A second visit reuses it.
    expect(await (await browser.get(page)).text()).toContain(`<code>${app?.client_id}</code>`);

    const start = await browser.get(`${page}/start`);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("location") ?? "");
    expect(authorize.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorize.searchParams.get("client_id")).toBe(app?.client_id);
    expect(authorize.searchParams.get("prompt")).toBe("login");
    const tx = start.headers.getSetCookie().find((c) => c.startsWith("gh_console_try="));
    expect(tx).toMatch(/HttpOnly/i);
    expect(tx).toContain(`Path=${page}`);

    const callback = await loginAtTenant(tenant, authorize.toString(), email);
    expect(callback.origin + callback.pathname).toBe(`http://localhost:8787${page}/callback`);
    await relay(tenant);
    const shown = await browser.get(callback.pathname + callback.search);
    const result = await shown.text();
    expect(shown.status, result.slice(0, 500)).toBe(200);
    expect(result).toContain("ID token verified (signature, issuer, audience, expiry and nonce)");
    expect(result).toContain(`&quot;sub&quot;: &quot;${user.user_id}&quot;`);
    expect(result).toContain(`&quot;iss&quot;: &quot;http://${tenant}.localhost:8787/&quot;`);
    expect(result).toContain("&quot;https://example.com/plan&quot;: &quot;gold&quot;");
    expect(result).toContain("&quot;alg&quot;: &quot;RS256&quot;");
    expect(result).toContain(`<td>${action.name}</td><td>post-login</td><td>Success</td>`);
    expect(result).toContain(`hello ${email}`);
    // No token string, signed or stripped, reaches the page; the transaction cookie is gone.
    expect(result).not.toMatch(/eyJ[A-Za-z0-9_-]+\.eyJ/);
    expect(browser.cookies.has("gh_console_try")).toBe(false);
    // The same callback again (a reload) is refused: the transaction was single-use.
    expect((await browser.get(callback.pathname + callback.search)).status).toBe(400);
  });

  it("refuses a callback whose state is not this browser's, and a Viewer gets no create button and a forged create is refused", async () => {
    const tenant = await createTenant();
    const { browser, page } = await consoleLogin(await viewerEmail(), PASSWORD, `/admin/t/${tenant}/try-login`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).not.toContain("Create the test application");
    expect(html).toContain("needs the create:clients permission");
    const forged = await browser.post(`/admin/t/${tenant}/try-login`, { csrf: fieldOf(html, "csrf") });
    expect(forged.status).toBe(403);
    expect(await forged.text()).toContain("create:clients");
    expect(await (await mgmt("GET", "/clients", asTenant(tenant))).json()).toEqual([]);
    const forgedCallback = await browser.get(`/admin/t/${tenant}/try-login/callback?code=abc&state=forged`);
    expect(forgedCallback.status).toBe(400);
    expect(await forgedCallback.text()).toContain("was not started here");
  });

  it("without a console session every try-login route goes to the login (back to the page asked for), and a start without the test application is refused", async () => {
    const tenant = await createTenant();
    const anonymous = new TestBrowser("localhost:8787");
    for (const path of ["/try-login", "/try-login/start", "/try-login/callback?code=abc&state=xyz"]) {
      const res = await anonymous.get(`/admin/t/${tenant}${path}`);
      expect(res.status, path).toBe(302);
      expect(res.headers.get("location")).toBe(`/admin/login?return_to=${encodeURIComponent(`/admin/t/${tenant}${path}`)}`);
    }
    const posted = await anonymous.post(`/admin/t/${tenant}/try-login`, {});
    expect(posted.status).toBe(302);
    expect(await (await mgmt("GET", "/clients", asTenant(tenant))).json()).toEqual([]);
    const { browser } = await consoleLogin(ADMIN.email, ADMIN.password, `/admin/t/${tenant}/try-login`);
    const early = await browser.get(`/admin/t/${tenant}/try-login/start`);
    expect(early.status).toBe(400);
    expect(await early.text()).toContain("Create the test application first.");
    // A tenant that is no DNS label (so no host) or does not exist: the API's 404, never a redirect.
    for (const other of ["Not_A_Label", "evil.example%2F", "nobody-here"]) {
      const res = await browser.get(`/admin/t/${other}/try-login/start`);
      expect(res.status, other).toBe(404);
      expect(res.headers.get("location")).toBeNull();
    }
  });
});

describe("admin console: an action's test run and a connection's try login (issue 30)", () => {
  it("runs the draft with the event typed in and shows what it asked for and its console output; bad JSON is a 400 with the text kept; a Viewer has no form and a forged run is refused", async () => {
    const tenant = await createTenant();
    const action = await createAction(tenant, "post-login", `exports.onExecutePostLogin = async (event, api) => { console.log("hello " + event.user.email); api.idToken.setCustomClaim("https://example.com/plan", "gold"); };`);
    const page = `/admin/t/${tenant}/actions/${action.id}`;
    const { browser, page: first } = await consoleLogin(ADMIN.email, ADMIN.password, page);
    const html = await first.text();
    expect(html).toContain(`action="${page}/test"`);
    const csrf = fieldOf(html, "csrf");
    const ran = await browser.post(`${page}/test`, { csrf, event: JSON.stringify({ user: { user_id: "auth0|x", email: "zed@example.com" } }) });
    expect(ran.status).toBe(200);
    const result = await ran.text();
    expect(result).toContain("Test result");
    expect(result).toContain("hello zed@example.com");
    expect(result).toContain("https://example.com/plan");
    expect(result).not.toContain("Failed:");

    const bad = await browser.post(`${page}/test`, { csrf, event: "{ not json" });
    expect(bad.status).toBe(400);
    const badHtml = await bad.text();
    expect(badHtml).toContain("The event is not valid JSON");
    expect(badHtml).toContain("{ not json");
    expect((await browser.post(`${page}/test`, { csrf, event: "[1, 2]" })).status).toBe(400);

    const viewer = await consoleLogin(await viewerEmail(), PASSWORD, page);
    const viewerHtml = await viewer.page.text();
    expect(viewerHtml).not.toContain(`action="${page}/test"`);
    const forged = await viewer.browser.post(`${page}/test`, { csrf: fieldOf(viewerHtml, "csrf"), event: "{}" });
    expect(forged.status).toBe(403);
    expect(await forged.text()).not.toContain("Test result");
  });

  it("the connection page links to a try login that names the connection at the tenant's /authorize", async () => {
    const tenant = await createTenant();
    const connections = (await (await mgmt("GET", "/connections?strategy=auth0", asTenant(tenant))).json()) as { id: string; name: string }[];
    const db = connections[0] as { id: string; name: string };
    const { browser, page } = await consoleLogin(ADMIN.email, ADMIN.password, `/admin/t/${tenant}/connections/${db.id}`);
    const html = await page.text();
    const link = `/admin/t/${tenant}/try-login/start?${new URLSearchParams({ connection: db.name })}`;
    expect(html).toContain(`href="${link}"`);
    const tryPage = await browser.get(`/admin/t/${tenant}/try-login`);
    expect((await browser.post(`/admin/t/${tenant}/try-login`, { csrf: fieldOf(await tryPage.text(), "csrf") })).status).toBe(201);
    const start = await browser.get(link);
    expect(start.status).toBe(302);
    const authorize = new URL(start.headers.get("location") ?? "");
    expect(authorize.searchParams.get("connection")).toBe(db.name);
    expect(authorize.searchParams.get("prompt")).toBe("login");
  });
});

describe("admin console: a trigger's bindings in order (issue 30)", () => {
  it("adds deployed actions, moves one up, removes one, each a PATCH the API shows; a Viewer reads the order with no button and a forged change is refused", async () => {
    const tenant = await createTenant();
    const first = await bindAction(tenant, "post-login", "exports.onExecutePostLogin = async () => {};", { name: "first" });
    const second = await createAction(tenant, "post-login", "exports.onExecutePostLogin = async () => {};", { name: "second" });
    expect((await mgmt("POST", `/actions/actions/${second.id}/deploy`, asTenant(tenant))).status).toBe(202);
    const page = `/admin/t/${tenant}/triggers/post-login`;
    const order = async () =>
      ((await (await mgmt("GET", "/actions/triggers/post-login/bindings", asTenant(tenant))).json()) as { bindings: { action: { id: string } }[] }).bindings.map((b) => b.action.id);
    const { browser, page: shown } = await consoleLogin(ADMIN.email, ADMIN.password, page);
    const html = await shown.text();
    expect(html).toContain("Move up: first");
    const csrf = fieldOf(html, "csrf");
    expect((await browser.post(page, { csrf, op: "add", action_id: second.id })).status).toBe(200);
    expect(await order()).toEqual([first.id, second.id]);
    expect((await browser.post(page, { csrf, op: "up", index: "1" })).status).toBe(200);
    expect(await order()).toEqual([second.id, first.id]);
    expect((await browser.post(page, { csrf, op: "remove", index: "1" })).status).toBe(200);
    expect(await order()).toEqual([second.id]);
    expect((await browser.post(page, { csrf, op: "up", index: "7" })).status).toBe(400);
    expect((await browser.post(page, { csrf, op: "add", action_id: "act_nope" })).status).toBe(400);
    expect(await order()).toEqual([second.id]);
    expect((await browser.get(`/admin/t/${tenant}/triggers/no-such-trigger`)).status).toBe(404);

    const viewer = await consoleLogin(await viewerEmail(), PASSWORD, page);
    const viewerHtml = await viewer.page.text();
    expect(viewerHtml).toContain("second");
    expect(viewerHtml).not.toContain("Move up");
    expect(viewerHtml).not.toContain('name="op"');
    expect((await viewer.browser.post(page, { csrf: fieldOf(viewerHtml, "csrf"), op: "remove", index: "0" })).status).toBe(403);
    expect(await order()).toEqual([second.id]);
  });
});
