import { beforeAll, describe, expect, it } from "vitest";
import { call, CP, mgmt } from "../helpers/api";
import { authorize, pendingLogin, redirectParams, seedClient, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { tenantManagementToken } from "../helpers/management";
import { mintWithTenantKey } from "../helpers/mint";
import { expectReachability } from "../helpers/reach";
import { api, createUser, DB, emailUser, path, type UserBody, usersTenant } from "../helpers/users";

/** Issue 9 points 5 and 9: who reaches the users routes, with which scope; blocked users cannot log in. */

const CALLBACK = "https://app.example.com/callback";
const PASSWORD = "Sufficient-Pw-1";
const MANAGEMENT = CP.audience;
const unique = (name: string) => `${name}-${crypto.randomUUID().slice(0, 8)}@example.com`;

describe("who can reach the users routes (no token 401, no scope 403, another tenant 403, the scope passes)", () => {
  const routes: Array<[string, string, string, number, unknown?]> = [
    ["GET", "/users", "read:users", 200],
    ["GET", "/users-by-email?email=a%40example.com", "read:users", 200],
    ["POST", "/users", "create:users", 201, { connection: DB, email: "reach@example.com", password: PASSWORD }],
    ["GET", "/users/auth0%7Cnobody", "read:users", 404],
    ["PATCH", "/users/auth0%7Cnobody", "update:users", 404, { name: "x" }],
    ["DELETE", "/users/auth0%7Cnobody", "delete:users", 404],
    ["POST", "/users/auth0%7Cnobody/identities", "update:users", 404, { provider: "auth0", user_id: "x" }],
    ["DELETE", "/users/auth0%7Cnobody/identities/auth0/x", "update:users", 404],
  ];
  for (const [method, route, scope, expected, body] of routes) {
    it(`${method} ${route} needs ${scope}`, async () => {
      await expectReachability(method, () => route, scope, expected, body === undefined ? undefined : () => body);
    });
  }

  it("the OpenAPI document lists every users route with its scope", async () => {
    const spec = (await (await call("/api/v2/spec")).json()) as { paths: Record<string, Record<string, { "x-scope": string; "x-also-scopes"?: string[]; "x-current-user-scope"?: string }>> };
    expect(spec.paths["/users"]?.get?.["x-scope"]).toBe("read:users");
    expect(spec.paths["/users"]?.post?.["x-scope"]).toBe("create:users");
    expect(spec.paths["/users-by-email"]?.get?.["x-scope"]).toBe("read:users");
    expect(spec.paths["/users/{id}"]?.get).toMatchObject({ "x-scope": "read:users", "x-current-user-scope": "read:current_user" });
    expect(spec.paths["/users/{id}"]?.patch).toMatchObject({ "x-scope": "update:users", "x-also-scopes": ["update:users_app_metadata"], "x-current-user-scope": "update:current_user_metadata" });
    expect(spec.paths["/users/{id}"]?.delete?.["x-scope"]).toBe("delete:users");
    expect(spec.paths["/users/{id}/identities"]?.post).toMatchObject({ "x-scope": "update:users", "x-current-user-scope": "update:current_user_identities" });
    expect(spec.paths["/users/{id}/identities/{provider}/{user_id}"]?.delete?.["x-scope"]).toBe("update:users");
  });
});

describe("narrower scopes and users' own tokens", () => {
  let tenant: string;
  let me: UserBody;
  let someoneElse: UserBody;
  /** A token issued to an end user (not client_credentials), as /authorize would mint it. */
  const userToken = (sub: string, scope: string) => mintWithTenantKey(tenant, { iss: `http://${tenant}.localhost:8787/`, aud: MANAGEMENT, sub, gty: undefined, azp: "some-app", scope });
  const asToken = (token: string, method: string, route: string, body?: unknown) => mgmt(method, route, { token, host: `${tenant}.localhost:8787`, ...(body !== undefined ? { body } : {}) });

  beforeAll(async () => {
    tenant = await usersTenant();
    me = await emailUser(tenant, unique("me"));
    someoneElse = await emailUser(tenant, unique("else"));
  });

  it("an end user's token never lists, creates or deletes users, whatever scopes it carries", async () => {
    const token = await userToken(me.user_id, "read:users create:users delete:users update:users read:current_user");
    expect((await asToken(token, "GET", "/users")).status).toBe(403);
    expect((await asToken(token, "GET", "/users-by-email?email=x%40example.com")).status).toBe(403);
    expect((await asToken(token, "POST", "/users", { connection: "email", email: unique("x") })).status).toBe(403);
    expect((await asToken(token, "DELETE", path(me.user_id))).status).toBe(403);
    expect((await asToken(token, "PATCH", path(me.user_id), { blocked: false })).status).toBe(403);
    expect((await asToken(token, "GET", path(me.user_id))).status).toBe(200);
    expect((await asToken(token, "GET", path(someoneElse.user_id))).status).toBe(403);
  });

  it("update:current_user_metadata changes the own user_metadata only", async () => {
    const token = await userToken(me.user_id, "update:current_user_metadata");
    const own = await asToken(token, "PATCH", path(me.user_id), { user_metadata: { theme: "dark" } });
    expect(own.status).toBe(200);
    expect(((await own.json()) as UserBody).user_metadata).toEqual({ theme: "dark" });
    expect((await asToken(token, "PATCH", path(me.user_id), { app_metadata: { role: "admin" } })).status).toBe(403);
    expect((await asToken(token, "PATCH", path(me.user_id), { user_metadata: {}, email_verified: true })).status).toBe(403);
    expect((await asToken(token, "PATCH", path(someoneElse.user_id), { user_metadata: { theme: "x" } })).status).toBe(403);
  });

  it("update:users_app_metadata changes app_metadata only", async () => {
    const token = await tenantManagementToken(tenant, ["update:users_app_metadata"]);
    const res = await asToken(token, "PATCH", path(someoneElse.user_id), { app_metadata: { tier: 2 } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ app_metadata: { tier: 2 } });
    expect((await asToken(token, "PATCH", path(someoneElse.user_id), { app_metadata: { tier: 3 }, user_metadata: { a: 1 } })).status).toBe(403);
    expect((await asToken(token, "PATCH", path(someoneElse.user_id), { blocked: true })).status).toBe(403);
    expect((await asToken(token, "GET", path(someoneElse.user_id))).status).toBe(403);
  });

  it("a revoked token is refused", async () => {
    const app = await seedClient(tenant, { callbacks: [CALLBACK] });
    const res = await authorize(
      { client_id: app.client_id, redirect_uri: CALLBACK, audience: MANAGEMENT, scope: "openid update:current_user_metadata", response_type: "token" },
      { host: `${tenant}.localhost:8787`, cookie: await sessionCookie(tenant, me.user_id, app.client_id) },
    );
    const token = redirectParams(res).fragment.get("access_token") as string;
    expect((await asToken(token, "PATCH", path(me.user_id), { user_metadata: { n: 1 } })).status).toBe(200);
    await call("/oauth/revoke", {
      method: "POST",
      host: `${tenant}.localhost:8787`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, client_id: app.client_id, client_secret: app.client_secret }).toString(),
    });
    expect((await asToken(token, "PATCH", path(me.user_id), { user_metadata: { n: 2 } })).status).toBe(403);
  });

  it("a user id of another tenant is not found with this tenant's token", async () => {
    const other = await usersTenant();
    const theirs = await emailUser(other, unique("theirs"));
    const token = await tenantManagementToken(tenant, ["read:users", "update:users", "delete:users"]);
    expect((await asToken(token, "GET", path(theirs.user_id))).status).toBe(404);
    expect((await asToken(token, "DELETE", path(theirs.user_id))).status).toBe(404);
    expect((await api(other, "GET", path(theirs.user_id))).status).toBe(200);
  });
});

describe("blocked users cannot log in (SPEC §7)", () => {
  let tenant: string;
  let host: string;
  let client: TestClient;

  beforeAll(async () => {
    tenant = await usersTenant();
    host = `${tenant}.localhost:8787`;
    client = await seedClient(tenant, { callbacks: [CALLBACK] });
  });

  const block = async (userId: string) => expect((await api(tenant, "PATCH", path(userId), { blocked: true })).status).toBe(200);

  it("the login page answers USER_BLOCKED with its message", async () => {
    const email = unique("page");
    const user = await createUser(tenant, { connection: DB, email, password: PASSWORD });
    await block(user.user_id);
    const login = await pendingLogin(tenant, client.client_id, { redirect_uri: CALLBACK });
    const res = await call(`/u2/login?state=${login.state}`, {
      method: "POST",
      host,
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", cookie: login.cookie },
      body: new URLSearchParams({ _csrf: login.csrf, email, password: PASSWORD }).toString(),
    });
    expect(res.status).toBe(403);
    const html = await res.text();
    expect(html).toContain('data-error-code="USER_BLOCKED"');
    expect(html).toContain("This account is blocked.");
  });

  it("grants acting for a blocked user answer invalid_grant (user is blocked): refresh token, authorization code", async () => {
    const user = await emailUser(tenant, unique("grants"));
    const cookie = await sessionCookie(tenant, user.user_id, client.client_id);
    const code = async () => redirectParams(await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid offline_access" }, { host, cookie })).query.get("code") as string;
    const exchange = (c: string) => tokenForm({ grant_type: "authorization_code", code: c, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    const tokens = (await (await exchange(await code())).json()) as { refresh_token: string };
    expect(tokens.refresh_token).toBeTruthy();
    const pending = await code();
    await block(user.user_id);
    const refreshed = await tokenForm({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(refreshed.status).toBe(403);
    expect(await refreshed.json()).toEqual({ error: "invalid_grant", error_description: "user is blocked" });
    // A token that is not genuine learns nothing about the user it names: the same refusal as for anyone.
    const [version, tenantPart, userPart] = tokens.refresh_token.split(".");
    const forged = `${version}.${tenantPart}.${userPart}.rt_${"A".repeat(22)}.${"B".repeat(43)}`;
    const probe = await tokenForm({ grant_type: "refresh_token", refresh_token: forged, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    expect(await probe.json()).toEqual({ error: "invalid_grant", error_description: "Invalid refresh token" });
    const redeemed = await exchange(pending);
    expect(await redeemed.json()).toEqual({ error: "invalid_grant", error_description: "user is blocked" });
    // The browser session no longer logs them in silently either.
    const again = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope: "openid", prompt: "none" }, { host, cookie });
    expect(redirectParams(again).query.get("error")).toBe("login_required");
  });
});
