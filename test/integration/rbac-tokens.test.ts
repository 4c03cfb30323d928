import { createLocalJWKSet, decodeJwt, type JWTPayload, jwtVerify } from "jose";
import { beforeAll, describe, expect, it } from "vitest";
import { call, createTenant } from "../helpers/api";
import { authorize, redirectParams, seedClient, sessionCookie, type TestClient, tokenForm } from "../helpers/flows";
import { grantClient } from "../helpers/management";
import { createRbacApi, createRole, createUser, on, perms, userPath } from "../helpers/roles";

/**
 * RBAC in user access tokens (the reference platform's "Enable RBAC" and "Add Permissions in the Access
 * Token"): with `enforce_policies` an API's user tokens carry only the requested scopes the user holds
 * through roles or direct permissions (plus OIDC scopes); with `token_dialect: access_token_authz` they also
 * carry every permission the user holds on the API as a `permissions` claim. /userinfo and client tokens
 * are unaffected.
 */

const CALLBACK = "https://app.example.com/callback";
const SCOPES = ["read:docs", "write:docs", "delete:docs", "admin:docs"];

let tenant: string;
let host: string;
let client: TestClient;
let jwks: ReturnType<typeof createLocalJWKSet>;

beforeAll(async () => {
  tenant = await createTenant();
  host = `${tenant}.localhost:8787`;
  client = await seedClient(tenant, { callbacks: [CALLBACK] });
  jwks = createLocalJWKSet((await (await call("/.well-known/jwks.json", { host })).json()) as never);
});

/** A user holding read:docs through a role and write:docs directly, with a browser session. */
async function member(api: { identifier: string }) {
  const t = on(tenant);
  const user = await createUser(tenant, "rbac");
  const role = await createRole(tenant);
  expect((await t.call("POST", `/roles/${role.id}/permissions`, { permissions: perms(api.identifier, "read:docs") })).status).toBe(201);
  expect((await t.call("POST", userPath(user.user_id, "/roles"), { roles: [role.id] })).status).toBe(204);
  expect((await t.call("POST", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "write:docs") })).status).toBe(201);
  return { user, role, cookie: await sessionCookie(tenant, user.user_id, client.client_id) };
}

interface Tokens {
  access_token: string;
  id_token?: string;
  refresh_token?: string;
  scope: string;
}

/** authorization_code through the real token endpoint; the access token is verified against the JWKS. */
async function codeFlow(cookie: string, audience: string, scope: string): Promise<{ body: Tokens; claims: JWTPayload }> {
  const res = await authorize({ client_id: client.client_id, redirect_uri: CALLBACK, response_type: "code", scope, audience }, { host, cookie });
  const code = redirectParams(res).query.get("code") as string;
  const out = await tokenForm({ grant_type: "authorization_code", code, redirect_uri: CALLBACK, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
  expect(out.status, await out.clone().text()).toBe(200);
  const body = (await out.json()) as Tokens;
  const { payload } = await jwtVerify(body.access_token, jwks, { issuer: `http://${tenant}.localhost:8787/`, audience });
  return { body, claims: payload };
}

const ASK_ALL = `openid profile ${SCOPES.join(" ")}`;

describe("user access tokens for an API with RBAC", () => {
  it("access_token_authz: scope is the requested scopes the user holds, permissions every permission the user holds", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz" });
    const { cookie } = await member(api);
    const { body, claims } = await codeFlow(cookie, api.identifier, ASK_ALL);
    expect(body.scope.split(" ").sort()).toEqual(["openid", "profile", "read:docs", "write:docs"]);
    expect(String(claims.scope).split(" ").sort()).toEqual(["openid", "profile", "read:docs", "write:docs"]);
    expect(claims.permissions).toEqual(["read:docs", "write:docs"]);

    // Asking for fewer scopes narrows scope, never the permissions claim.
    const narrow = await codeFlow(cookie, api.identifier, "openid read:docs");
    expect(narrow.claims.scope).toBe("openid read:docs");
    expect(narrow.claims.permissions).toEqual(["read:docs", "write:docs"]);
    // The ID token carries no permissions.
    expect(decodeJwt(narrow.body.id_token as string).permissions).toBeUndefined();
  });

  it("access_token dialect: the same scope rule, and no permissions claim", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true });
    const { cookie } = await member(api);
    const { claims } = await codeFlow(cookie, api.identifier, ASK_ALL);
    expect(String(claims.scope).split(" ").sort()).toEqual(["openid", "profile", "read:docs", "write:docs"]);
    expect(claims).not.toHaveProperty("permissions");
  });

  it("without RBAC the API releases the requested scopes it defines, whatever the user holds, and no permissions claim", async () => {
    const api = await createRbacApi(tenant, SCOPES, { token_dialect: "access_token_authz" });
    const { cookie } = await member(api);
    const { claims } = await codeFlow(cookie, api.identifier, `${ASK_ALL} undefined:scope`);
    expect(String(claims.scope).split(" ").sort()).toEqual(["admin:docs", "delete:docs", "openid", "profile", "read:docs", "write:docs"]);
    expect(claims).not.toHaveProperty("permissions");
  });

  it("a user with no permissions gets only OIDC scopes and an empty permissions claim", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz" });
    const user = await createUser(tenant, "nobody");
    const { claims } = await codeFlow(await sessionCookie(tenant, user.user_id, client.client_id), api.identifier, ASK_ALL);
    expect(claims.scope).toBe("openid profile");
    expect(claims.permissions).toEqual([]);
  });

  it("permissions on other APIs never leak into this API's token", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz" });
    const other = await createRbacApi(tenant, ["read:docs", "admin:docs"], { enforce_policies: true });
    const { user, cookie } = await member(api);
    await on(tenant).call("POST", userPath(user.user_id, "/permissions"), { permissions: perms(other.identifier, "admin:docs") });
    const { claims } = await codeFlow(cookie, api.identifier, ASK_ALL);
    expect(claims.permissions).toEqual(["read:docs", "write:docs"]);
    expect(String(claims.scope)).not.toContain("admin:docs");
  });

  it("the refresh grant re-reads the user's permissions: a removed role is gone from the next access token", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz", allow_offline_access: true });
    const { user, role, cookie } = await member(api);
    const first = await codeFlow(cookie, api.identifier, `${ASK_ALL} offline_access`);
    expect(first.claims.permissions).toEqual(["read:docs", "write:docs"]);
    expect(first.body.refresh_token).toBeTruthy();
    expect((await on(tenant).call("DELETE", userPath(user.user_id, "/roles"), { roles: [role.id] })).status).toBe(204);
    const refreshed = await tokenForm(
      { grant_type: "refresh_token", refresh_token: first.body.refresh_token as string, client_id: client.client_id, client_secret: client.client_secret },
      {},
      host,
    );
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    const { access_token, scope } = (await refreshed.json()) as Tokens;
    const { payload } = await jwtVerify(access_token, jwks, { audience: api.identifier });
    expect(payload.permissions).toEqual(["write:docs"]);
    expect(scope.split(" ")).not.toContain("read:docs");
    expect(scope.split(" ")).toContain("write:docs");
  });

  it("the refresh grant counts a permission held directly and through two roles once, in name order, and none from an API without RBAC", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz", allow_offline_access: true });
    const open = await createRbacApi(tenant, ["admin:docs"], { enforce_policies: false });
    const { user, cookie } = await member(api);
    const t = on(tenant);
    const second = await createRole(tenant);
    // write:docs now also through a second role, which holds admin:docs and a permission of the API without RBAC.
    expect((await t.call("POST", `/roles/${second.id}/permissions`, { permissions: [...perms(api.identifier, "write:docs", "admin:docs"), ...perms(open.identifier, "admin:docs")] })).status).toBe(201);
    expect((await t.call("POST", userPath(user.user_id, "/roles"), { roles: [second.id] })).status).toBe(204);
    const first = await codeFlow(cookie, api.identifier, `${ASK_ALL} offline_access`);
    const refreshed = await tokenForm(
      { grant_type: "refresh_token", refresh_token: first.body.refresh_token as string, client_id: client.client_id, client_secret: client.client_secret },
      {},
      host,
    );
    expect(refreshed.status, await refreshed.clone().text()).toBe(200);
    const { payload } = await jwtVerify(((await refreshed.json()) as Tokens).access_token, jwks, { audience: api.identifier });
    expect(payload.permissions).toEqual(["admin:docs", "read:docs", "write:docs"]);
    expect(String(payload.scope).split(" ").sort()).toEqual(["admin:docs", "offline_access", "openid", "profile", "read:docs", "write:docs"]);
  });

  it("implicit and hybrid responses carry the same scope and permissions", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz" });
    const { cookie } = await member(api);
    for (const responseType of ["token", "code id_token token"]) {
      const res = await authorize(
        { client_id: client.client_id, redirect_uri: CALLBACK, response_type: responseType, scope: ASK_ALL, audience: api.identifier, nonce: "n-1" },
        { host, cookie },
      );
      const accessToken = redirectParams(res).fragment.get("access_token") as string;
      const { payload } = await jwtVerify(accessToken, jwks, { audience: api.identifier });
      expect(payload.permissions, responseType).toEqual(["read:docs", "write:docs"]);
      expect(String(payload.scope).split(" ").sort()).toEqual(["openid", "profile", "read:docs", "write:docs"]);
    }
  });

  it("token exchange keeps the user's current permissions and never copies the subject's claim", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz" });
    const { user, cookie } = await member(api);
    const { body } = await codeFlow(cookie, api.identifier, ASK_ALL);
    await on(tenant).call("DELETE", userPath(user.user_id, "/permissions"), { permissions: perms(api.identifier, "write:docs") });
    const res = await tokenForm(
      {
        grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
        subject_token: body.access_token,
        subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
        client_id: client.client_id,
        client_secret: client.client_secret,
        audience: api.identifier,
      },
      {},
      host,
    );
    expect(res.status, await res.clone().text()).toBe(200);
    const { payload } = await jwtVerify(((await res.json()) as Tokens).access_token, jwks, { audience: api.identifier });
    expect(payload.permissions).toEqual(["read:docs"]);
    expect(String(payload.scope).split(" ").sort()).toEqual(["openid", "profile", "read:docs"]);
  });

  it("/userinfo answers the profile as before, without permissions", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz" });
    const { user, cookie } = await member(api);
    const { body } = await codeFlow(cookie, api.identifier, `openid profile email ${SCOPES.join(" ")}`);
    const info = await call("/userinfo", { host, headers: { authorization: `Bearer ${body.access_token}` } });
    expect(info.status).toBe(200);
    const profile = (await info.json()) as Record<string, unknown>;
    expect(profile).toMatchObject({ sub: user.user_id, email: user.email });
    expect(profile).not.toHaveProperty("permissions");
    expect(profile).not.toHaveProperty("scope");
  });

  it("client_credentials tokens are unchanged: the granted scopes, no permissions claim", async () => {
    const api = await createRbacApi(tenant, SCOPES, { enforce_policies: true, token_dialect: "access_token_authz" });
    const m2m = await seedClient(tenant, { grant_types: ["client_credentials"] });
    await grantClient(m2m.client_id, api.identifier, ["admin:docs"], { headers: { "tenant-id": tenant } });
    const res = await tokenForm({ grant_type: "client_credentials", client_id: m2m.client_id, client_secret: m2m.client_secret, audience: api.identifier }, {}, host);
    expect(res.status).toBe(200);
    const { payload } = await jwtVerify(((await res.json()) as Tokens).access_token, jwks, { audience: api.identifier });
    expect(payload.scope).toBe("admin:docs");
    expect(payload).not.toHaveProperty("permissions");
  });

  it("the management API never releases a role's management permissions to a user", async () => {
    const system = ((await (await on(tenant).call("GET", "/resource-servers")).json()) as { identifier: string; is_system: boolean }[]).find((r) => r.is_system);
    expect(system).toBeTruthy();
    const user = await createUser(tenant, "escalate");
    const role = await createRole(tenant);
    const grant = await on(tenant).call("POST", `/roles/${role.id}/permissions`, { permissions: perms(system?.identifier as string, "read:users") });
    if (grant.status === 201) await on(tenant).call("POST", userPath(user.user_id, "/roles"), { roles: [role.id] });
    const { claims } = await codeFlow(await sessionCookie(tenant, user.user_id, client.client_id), system?.identifier as string, "openid read:users read:current_user");
    expect(String(claims.scope).split(" ").sort()).toEqual(["openid", "read:current_user"]);
    expect(claims).not.toHaveProperty("permissions");
  });
});
