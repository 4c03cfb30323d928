import { afterEach, describe, expect, it } from "vitest";
import { setClock } from "../../src/shared/clock";
import { call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { authorize, pendingLogin, redirectParams, seedClient, seedUser, tokenForm } from "../helpers/flows";
import { expectRefusals, reachKit } from "../helpers/route-reach";

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "p4ssw0rd!";

const settingsOf = (tenant: string) => mgmt("GET", "/tenants/settings", { headers: { "tenant-id": tenant } });
const patch = (tenant: string, body: unknown) => mgmt("PATCH", "/tenants/settings", { headers: { "tenant-id": tenant }, body });

/** A password login through /u2/login on the tenant's host; answers the redirect. */
async function passwordLogin(tenant: string, clientId: string, email: string, request: Record<string, string> = {}) {
  const login = await pendingLogin(tenant, clientId, { redirect_uri: CALLBACK, ...request });
  return call(`/u2/login?state=${login.state}`, {
    method: "POST",
    host: `${tenant}.localhost:8787`,
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie: login.cookie },
    body: new URLSearchParams({ _csrf: login.csrf, email, password: PASSWORD }).toString(),
  });
}

afterEach(() => setClock());

describe("GET/PATCH /api/v2/tenants/settings: the reference platform's shape (issue 15 point 5)", () => {
  it("a new tenant reads the reference platform's defaults", async () => {
    const tenant = await createTenant();
    const res = await settingsOf(tenant);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      session_lifetime: 168,
      idle_session_lifetime: 72,
      sandbox_version: "22",
      sandbox_versions_available: expect.arrayContaining(["22", "18"]),
      enabled_locales: ["en"],
      flags: {},
      default_signing_alg: "RS256",
    });
  });

  it("PATCH stores and returns every documented field; flags merge; null removes; minutes become hours", async () => {
    const tenant = await createTenant();
    const body = {
      friendly_name: "Acme Corp",
      picture_url: "https://acme.example/logo.png",
      support_email: "help@acme.example",
      support_url: "https://acme.example/help",
      session_lifetime: 24,
      idle_session_lifetime: 2,
      sandbox_version: "18",
      enabled_locales: ["en", "pt-BR"],
      flags: { enable_client_connections: false },
      error_page: { url: "https://acme.example/error", show_log_link: false },
      allowed_logout_urls: ["https://acme.example/bye"],
      default_directory: "Username-Password-Authentication",
    };
    const res = await patch(tenant, body);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject(body);
    expect(await (await settingsOf(tenant)).json()).toMatchObject(body);
    const merged = (await (await patch(tenant, { flags: { revoke_refresh_token_grant: true }, friendly_name: null })).json()) as Record<string, unknown>;
    expect(merged.flags).toEqual({ enable_client_connections: false, revoke_refresh_token_grant: true });
    expect(merged).not.toHaveProperty("friendly_name");
    const minutes = (await (await patch(tenant, { session_lifetime_in_minutes: 90, idle_session_lifetime_in_minutes: 30 })).json()) as Record<string, unknown>;
    expect(minutes).toMatchObject({ session_lifetime: 1.5, idle_session_lifetime: 0.5 });
    expect(minutes).not.toHaveProperty("session_lifetime_in_minutes");
  });

  it.each([
    ["a zero session_lifetime", { session_lifetime: 0 }],
    ["a session_lifetime over a year", { session_lifetime: 9000 }],
    ["a string idle_session_lifetime", { idle_session_lifetime: "72" }],
    ["a malformed support_email", { support_email: "not-an-email" }],
    ["a non-http picture_url", { picture_url: "javascript:alert(1)" }],
    ["an empty enabled_locales", { enabled_locales: [] }],
    ["a malformed locale", { enabled_locales: ["english!"] }],
    ["a non-boolean flag", { flags: { enable_sso: "yes" } }],
    ["an unknown sandbox_version", { sandbox_version: "99" }],
    ["an unknown field", { favourite_colour: "blue" }],
    ["an unknown error_page field", { error_page: { colour: "red" } }],
    ["an empty body", {}],
    ["malformed JSON", "{oops"],
  ])("refuses %s with 400 and changes nothing", async (_what, body) => {
    const tenant = await createTenant();
    const before = await (await settingsOf(tenant)).json();
    const res = await patch(tenant, body);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ statusCode: 400, errorCode: "invalid_body" });
    expect(await (await settingsOf(tenant)).json()).toEqual(before);
  });

  it("who can reach: no token 401; lacking scope, another tenant's, an end user's and a revoked token 403", async () => {
    const kit = await reachKit(["read:tenant_settings", "update:tenant_settings"]);
    await expectRefusals(kit, "GET", "/tenants/settings", "read:tenant_settings");
    await expectRefusals(kit, "PATCH", "/tenants/settings", "update:tenant_settings", { friendly_name: "x" });
    expect((await mgmt("PATCH", "/tenants/settings", { token: kit.allowed, body: { friendly_name: "Mine" } })).status).toBe(200);
    expect(await (await mgmt("GET", "/tenants/settings", { token: kit.allowed })).json()).toMatchObject({ friendly_name: "Mine" });
  });
});

describe("tenant settings take effect", () => {
  it("session_lifetime sets the SSO session's lifetime and its cookie's Max-Age", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    await seedUser(tenant, "life@example.com", PASSWORD);
    expect((await patch(tenant, { session_lifetime: 2 })).status).toBe(200);
    const res = await passwordLogin(tenant, client.client_id, "life@example.com");
    expect(res.status).toBe(302);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("gh_session="));
    expect(cookie).toMatch(/Max-Age=7200\b/);
    const sessions = (await (await mgmt("GET", "/sessions", { headers: { "tenant-id": tenant } })).json()) as { sessions?: { expires_at: string; authenticated_at: string }[] } | { expires_at: string; authenticated_at: string }[];
    const list = Array.isArray(sessions) ? sessions : (sessions.sessions ?? []);
    expect(list).toHaveLength(1);
    const first = list[0] as { expires_at: string; authenticated_at: string };
    expect(Date.parse(first.expires_at) - Date.parse(first.authenticated_at)).toBe(7_200_000);
  });

  it("idle_session_lifetime: a session unused for longer no longer signs the user in silently", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    await seedUser(tenant, "idle@example.com", PASSWORD);
    expect((await patch(tenant, { idle_session_lifetime: 1 })).status).toBe(200);
    const login = await passwordLogin(tenant, client.client_id, "idle@example.com");
    const cookie = (login.headers.getSetCookie().find((c) => c.startsWith("gh_session=")) as string).split(";")[0] as string;
    const silent = () =>
      authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", prompt: "none", state: "s" }, { cookie, host: `${tenant}.localhost:8787` });
    expect(redirectParams(await silent()).query.get("code")).toBeTruthy();
    const start = Date.now();
    setClock(() => start + 2 * 3_600_000);
    expect(redirectParams(await silent()).query.get("error")).toBe("login_required");
  });

  it("default_directory: the login page signs users in against the named database connection", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    const name = `Staff-${uniqueId("db").slice(-6)}`;
    const created = await mgmt("POST", "/connections", { headers: { "tenant-id": tenant }, body: { name, strategy: "auth0", enabled_clients: [client.client_id] } });
    expect(created.status).toBe(201);
    const user = await mgmt("POST", "/users", { headers: { "tenant-id": tenant }, body: { connection: name, email: "staff@example.com", password: "Staff-Pa55word!x" } });
    expect(user.status).toBe(201);
    const tryLogin = async () => {
      const login = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK });
      return call(`/u2/login?state=${login.state}`, {
        method: "POST",
        host: `${tenant}.localhost:8787`,
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", cookie: login.cookie },
        body: new URLSearchParams({ _csrf: login.csrf, email: "staff@example.com", password: "Staff-Pa55word!x" }).toString(),
      });
    };
    expect((await tryLogin()).status).not.toBe(302);
    expect((await patch(tenant, { default_directory: name })).status).toBe(200);
    const res = await tryLogin();
    expect(res.status).toBe(302);
    expect(redirectParams(res).query.get("code")).toBeTruthy();
  });

  it("default_audience: /authorize without an audience issues an access token for the default API", async () => {
    const tenant = await createTenant();
    const client = await seedClient(tenant, { callbacks: [CALLBACK] });
    await seedUser(tenant, "aud@example.com", PASSWORD);
    const api = `https://api.${uniqueId()}.example`;
    expect((await mgmt("POST", "/resource-servers", { headers: { "tenant-id": tenant }, body: { identifier: api, name: "Default API" } })).status).toBe(201);
    expect((await patch(tenant, { default_audience: api })).status).toBe(200);
    // Through /authorize itself (no audience parameter), then the login form.
    const host = `${tenant}.localhost:8787`;
    const started = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", state: "s" }, { host });
    expect(started.status).toBe(302);
    const { url, query } = redirectParams(started);
    const state = query.get("state") as string;
    const page = await call(url.pathname + url.search, { host, redirect: "manual" });
    const csrf = ((page.headers.getSetCookie().find((c) => c.startsWith("gh_csrf=")) as string).split(";")[0] as string).slice("gh_csrf=".length);
    const res = await call(`/u2/login?state=${state}`, {
      method: "POST",
      host,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: `gh_csrf=${csrf}` },
      body: new URLSearchParams({ _csrf: csrf, email: "aud@example.com", password: PASSWORD }).toString(),
    });
    const code = redirectParams(res).query.get("code") as string;
    const tokens = await tokenForm(
      { grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret },
      {},
      `${tenant}.localhost:8787`,
    );
    expect(tokens.status).toBe(200);
    const { access_token } = (await tokens.json()) as { access_token: string };
    const payload = JSON.parse(atob((access_token.split(".")[1] as string).replace(/-/g, "+").replace(/_/g, "/"))) as { aud: string | string[] };
    expect([payload.aud].flat()).toContain(api);
  });
});

describe("subdomain routing host options", () => {
  it("a reserved subdomain (host option routing.reservedSubdomains or RESERVED_SUBDOMAINS) is refused as a tenant id", async () => {
    const { createApp } = await import("../../src/worker/app");
    const { createExecutionContext, env } = await import("cloudflare:test");
    const { controlPlaneToken } = await import("../helpers/api");
    const app = createApp({ routing: { reservedSubdomains: ["status"] } });
    const token = await controlPlaneToken();
    const res = await app.fetch(
      new Request("http://localhost:8787/api/v2/tenants", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ id: "status" }),
      }),
      env,
      createExecutionContext(),
    );
    expect(res.status).toBe(400);
    expect(((await res.json()) as { message: string }).message).toContain("reserved subdomain");
    const fromEnv = await app.fetch(
      new Request("http://localhost:8787/api/v2/tenants", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ id: "billing" }),
      }),
      { ...env, RESERVED_SUBDOMAINS: "billing, docs" },
      createExecutionContext(),
    );
    expect(fromEnv.status).toBe(400);
  });
});
