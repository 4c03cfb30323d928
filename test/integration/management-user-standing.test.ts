import { createExecutionContext, env } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { call, CP, createTenant, mgmt } from "../helpers/api";
import { seedUser } from "../helpers/flows";
import { codeOf, exchange, hostOf, loginThroughPages, orgClient } from "../helpers/org-login";
import { onTenant } from "../helpers/organizations";
import { CP_HOST, controlPlaneRole, getWith, memberToken } from "../helpers/tenant-members";
import { setClock } from "../../src/shared/clock";

/**
 * Issue 25 finding 5: a user-shaped management token (a control-plane member's organization-bound token,
 * or any current-user token) is only as good as its user is now. Tests run with USER_STANDING_TTL_MS=0
 * (vitest.config.ts), so each request reads the user's standing afresh.
 */

type ErrorBody = { statusCode: number; error: string; message: string; errorCode: string };
const cp = onTenant(CP.tenantId);
const tenantsRole = () => controlPlaneRole(["read:tenants", "update:tenants"]);

/** A member of tenant `a`'s organization holding read:tenants and update:tenants there, and its token working. */
async function workingMember() {
  const a = await createTenant();
  const role = await tenantsRole();
  const member = await memberToken(a, [role]);
  expect((await getWith(member.token, `/tenants/${a}`)).status).toBe(200);
  return { a, role, ...member };
}

/** A child tenant's end user logged in for the management API: a current-user token. */
async function endUser() {
  const tenant = await createTenant();
  const user = await seedUser(tenant, `${crypto.randomUUID().slice(0, 8)}@example.com`);
  const client = await orgClient(tenant);
  const login = await loginThroughPages(hostOf(tenant), client, String(user.email), { audience: CP.audience, scope: "openid read:current_user" });
  const { access_token } = await exchange(hostOf(tenant), client, codeOf(login));
  const readSelf = () => mgmt("GET", `/users/${encodeURIComponent(user.user_id)}`, { token: access_token, host: hostOf(tenant) });
  expect((await readSelf()).status).toBe(200);
  return { tenant, user, token: access_token, readSelf };
}

const expectRefused = async (res: Response, errorCode: string) => {
  expect(res.status).toBe(403);
  const body = (await res.json()) as ErrorBody;
  expect(body).toMatchObject({ statusCode: 403, error: "Forbidden", errorCode });
  expect(body.message).toBeTruthy();
};

describe("an organization-bound control-plane token stops at its user's removal (issue 25 finding 5)", () => {
  it("is refused once its user is removed from the tenant's organization", async () => {
    const { a, token, org, user } = await workingMember();
    await cp.json("DELETE", `/organizations/${org.id}/members`, { members: [user.user_id] }, 204);
    await expectRefused(await getWith(token, `/tenants/${a}`), "insufficient_scope");
    await expectRefused(await getWith(token, "/tenants"), "insufficient_scope");
    expect((await mgmt("PATCH", `/tenants/${a}`, { token, body: { friendly_name: "After removal" } })).status).toBe(403);
  });

  it("loses the tenants scopes its member role gave once the role is taken away, and keeps its current-user scope", async () => {
    const { a, token, org, user, role } = await workingMember();
    await cp.json("DELETE", `/organizations/${org.id}/members/${user.user_id}/roles`, { roles: [role] }, 204);
    await expectRefused(await getWith(token, `/tenants/${a}`), "insufficient_scope");
    expect((await getWith(token, `/users/${encodeURIComponent(user.user_id)}`)).status).toBe(200);
  });

  it("is refused once its user is blocked", async () => {
    const { a, token, user } = await workingMember();
    await cp.json("PATCH", `/users/${encodeURIComponent(user.user_id)}`, { blocked: true });
    await expectRefused(await getWith(token, `/tenants/${a}`), "invalid_token");
    await expectRefused(await mgmt("PATCH", `/tenants/${a}`, { token, body: { friendly_name: "Blocked" } }), "invalid_token");
  });

  it("is refused once its user is deleted", async () => {
    const { a, token, user } = await workingMember();
    await cp.json("DELETE", `/users/${encodeURIComponent(user.user_id)}`, undefined, 204);
    await expectRefused(await getWith(token, `/tenants/${a}`), "invalid_token");
  });

  it("lives minutes, not the management API's 24 hours", async () => {
    const { claims } = await workingMember();
    expect(Number(claims.exp) - Number(claims.iat)).toBe(600);
  });
});

describe("a current-user management token stops at its user's block or deletion (issue 25 finding 5)", () => {
  it("is refused on the user's own record once the user is blocked", async () => {
    const { tenant, user, readSelf } = await endUser();
    await onTenant(tenant).json("PATCH", `/users/${encodeURIComponent(user.user_id)}`, { blocked: true });
    await expectRefused(await readSelf(), "invalid_token");
  });

  it("is refused once the user is deleted", async () => {
    const { tenant, user, readSelf } = await endUser();
    await onTenant(tenant).json("DELETE", `/users/${encodeURIComponent(user.user_id)}`, undefined, 204);
    await expectRefused(await readSelf(), "invalid_token");
  });
});

describe("who can reach a tenant through an organization-bound token", () => {
  it("no token 401; an end user's, another tenant's member's and a revoked token 403; its member 200", async () => {
    const { a, token, client } = await workingMember();
    const res = await mgmt("GET", `/tenants/${a}`, { token: "" });
    expect(res.status).toBe(401);
    expect(((await res.json()) as ErrorBody).errorCode).toBe("missing_token");
    expect((await mgmt("GET", `/tenants/${a}`, { token: (await endUser()).token, host: CP_HOST })).status).toBe(403);
    const other = await memberToken(await createTenant(), [await tenantsRole()]);
    await expectRefused(await getWith(other.token, `/tenants/${a}`), "cross_tenant_forbidden");
    expect((await getWith(token, `/tenants/${a}`)).status).toBe(200);
    const revoked = await call("/oauth/revoke", {
      method: "POST",
      host: CP_HOST,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, client_id: client.client_id, client_secret: client.client_secret as string }).toString(),
    });
    expect(revoked.status).toBe(200);
    await expectRefused(await getWith(token, `/tenants/${a}`), "invalid_token");
  });
});

describe("the standing cache holds for at most USER_STANDING_TTL_MS", () => {
  afterEach(() => setClock());

  it("a removal shows within the cache lifetime (5 s), not at the token's expiry", async () => {
    const { a, token, org, user } = await workingMember();
    const { createApp } = await import("../../src/worker/app");
    const cached = { ...env, USER_STANDING_TTL_MS: "5000" };
    const send = () =>
      createApp().fetch(new Request(`http://localhost:8787/api/v2/tenants/${a}`, { headers: { authorization: `Bearer ${token}` } }), cached, createExecutionContext());
    const start = Date.now();
    setClock(() => start);
    expect((await send()).status).toBe(200);
    await cp.json("DELETE", `/organizations/${org.id}/members`, { members: [user.user_id] }, 204);
    expect((await send()).status).toBe(200);
    setClock(() => start + 5_001);
    expect((await send()).status).toBe(403);
  });
});
