import { beforeAll, describe, expect, it } from "vitest";
import { CP, call, createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedClient, seedUser, tokenForm } from "../helpers/flows";
import { mintWithTenantKey } from "../helpers/mint";
import { createOrg, databaseConnectionId, onTenant } from "../helpers/organizations";

/**
 * Who can reach each organization route (issue 11 "Proof"): no token 401; an end user's token, another
 * tenant's token, a revoked token and a token without the route's scope 403; the tenant's own client
 * token with exactly that scope reaches the handler.
 */

const host = (tenantId: string) => `${tenantId}.localhost:8787`;

/** A client_credentials token of the tenant's own M2M client with `scopes`, and a way to revoke it. */
async function clientToken(tenantId: string, scopes: string[]) {
  const client = await seedClient(tenantId, { grant_types: ["client_credentials"] });
  await onTenant(tenantId).json("POST", "/client-grants", { client_id: client.client_id, audience: CP.audience, scope: scopes });
  const res = await tokenForm({ grant_type: "client_credentials", ...client, audience: CP.audience }, {}, host(tenantId));
  expect(res.status).toBe(200);
  const token = ((await res.json()) as { access_token: string }).access_token;
  const revoke = async () => {
    const answer = await call("/oauth/revoke", {
      method: "POST",
      host: host(tenantId),
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token, ...client }).toString(),
    });
    expect(answer.status).toBe(200);
  };
  return { token, revoke };
}

interface Fixture {
  tenantId: string;
  orgId: string;
  userId: string;
  connectionId: string;
  clientId: string;
  invitationId: string;
  roleId: string;
}

interface RouteCase {
  method: string;
  path: (f: Fixture) => string | Promise<string>;
  scope: string;
  body?: (f: Fixture) => unknown;
  expected: number;
}

const org = (f: Fixture) => `/organizations/${f.orgId}`;
const member = (f: Fixture) => `${org(f)}/members/${encodeURIComponent(f.userId)}`;

const ROUTES: RouteCase[] = [
  { method: "GET", path: () => "/organizations", scope: "read:organizations", expected: 200 },
  { method: "POST", path: () => "/organizations", scope: "create:organizations", body: () => ({ name: uniqueId("r").toLowerCase() }), expected: 201 },
  { method: "GET", path: org, scope: "read:organizations", expected: 200 },
  { method: "GET", path: async (f) => `/organizations/name/${(await onTenant(f.tenantId).json<{ name: string }>("GET", org(f))).name}`, scope: "read:organizations", expected: 200 },
  { method: "PATCH", path: org, scope: "update:organizations", body: () => ({ display_name: "Reached" }), expected: 200 },
  { method: "DELETE", path: async (f) => `/organizations/${(await createOrg(f.tenantId)).id}`, scope: "delete:organizations", expected: 204 },
  { method: "GET", path: (f) => `${org(f)}/enabled_connections`, scope: "read:organization_connections", expected: 200 },
  {
    method: "POST",
    path: async (f) => `/organizations/${(await createOrg(f.tenantId)).id}/enabled_connections`,
    scope: "create:organization_connections",
    body: (f) => ({ connection_id: f.connectionId }),
    expected: 201,
  },
  { method: "GET", path: (f) => `${org(f)}/enabled_connections/${f.connectionId}`, scope: "read:organization_connections", expected: 200 },
  { method: "PATCH", path: (f) => `${org(f)}/enabled_connections/${f.connectionId}`, scope: "update:organization_connections", body: () => ({ show_as_button: false }), expected: 200 },
  {
    method: "DELETE",
    path: async (f) => {
      const other = await createOrg(f.tenantId, { enabled_connections: [{ connection_id: f.connectionId }] });
      return `/organizations/${other.id}/enabled_connections/${f.connectionId}`;
    },
    scope: "delete:organization_connections",
    expected: 204,
  },
  { method: "GET", path: (f) => `${org(f)}/members`, scope: "read:organization_members", expected: 200 },
  { method: "POST", path: (f) => `${org(f)}/members`, scope: "create:organization_members", body: (f) => ({ members: [f.userId] }), expected: 204 },
  {
    method: "DELETE",
    path: (f) => `${org(f)}/members`,
    scope: "delete:organization_members",
    body: () => ({ members: ["auth0|not-a-member"] }),
    expected: 204,
  },
  { method: "GET", path: (f) => `${member(f)}/roles`, scope: "read:organization_member_roles", expected: 200 },
  { method: "POST", path: (f) => `${member(f)}/roles`, scope: "create:organization_member_roles", body: (f) => ({ roles: [f.roleId] }), expected: 204 },
  { method: "DELETE", path: (f) => `${member(f)}/roles`, scope: "delete:organization_member_roles", body: (f) => ({ roles: [f.roleId] }), expected: 204 },
  { method: "GET", path: (f) => `/users/${encodeURIComponent(f.userId)}/organizations`, scope: "read:users", expected: 200 },
  { method: "GET", path: (f) => `${org(f)}/invitations`, scope: "read:organization_invitations", expected: 200 },
  {
    method: "POST",
    path: (f) => `${org(f)}/invitations`,
    scope: "create:organization_invitations",
    body: (f) => ({ inviter: { name: "A" }, invitee: { email: "reach@example.com" }, client_id: f.clientId, send_invitation_email: false }),
    expected: 201,
  },
  { method: "GET", path: (f) => `${org(f)}/invitations/${f.invitationId}`, scope: "read:organization_invitations", expected: 200 },
  {
    method: "DELETE",
    path: async (f) => {
      const body = { inviter: { name: "A" }, invitee: { email: "gone@example.com" }, client_id: f.clientId, send_invitation_email: false };
      const invitation = await onTenant(f.tenantId).json<{ id: string }>("POST", `${org(f)}/invitations`, body);
      return `${org(f)}/invitations/${invitation.id}`;
    },
    scope: "delete:organization_invitations",
    expected: 204,
  },
];

let fixture: Fixture;
let other: string;

beforeAll(async () => {
  const tenantId = await createTenant();
  other = await createTenant();
  const connectionId = await databaseConnectionId(tenantId);
  const created = await createOrg(tenantId, { enabled_connections: [{ connection_id: connectionId }] });
  const user = await seedUser(tenantId, `${uniqueId("reach")}@example.com`);
  await onTenant(tenantId).json("POST", `/organizations/${created.id}/members`, { members: [user.user_id] }, 204);
  const client = await seedClient(tenantId);
  const invitation = await onTenant(tenantId).json<{ id: string }>("POST", `/organizations/${created.id}/invitations`, {
    inviter: { name: "A" },
    invitee: { email: "fixture@example.com" },
    client_id: client.client_id,
    send_invitation_email: false,
  });
  const role = await onTenant(tenantId).json<{ id: string }>("POST", "/roles", { name: "reach-role" });
  fixture = { tenantId, orgId: created.id, userId: user.user_id, connectionId, clientId: client.client_id, invitationId: invitation.id, roleId: role.id };
});

describe("who can reach the organization routes", () => {
  it("every organization route is in the API description with its scope", async () => {
    const spec = (await (await call("/api/v2/spec")).json()) as { paths: Record<string, Record<string, { "x-scope": string }>> };
    for (const route of ROUTES) {
      const path = (await route.path(fixture))
        .replace(fixture.orgId, "{id}")
        .replace(/\/organizations\/org_[A-Za-z0-9]{16}/, "/organizations/{id}")
        .replace(encodeURIComponent(fixture.userId), "{user_id}")
        .replace(/\/users\/\{user_id\}/, "/users/{id}")
        .replace(fixture.connectionId, "{connection_id}")
        .replace(/\/invitations\/uinv_[A-Za-z0-9]+/, "/invitations/{invitation_id}")
        .replace(/\/name\/[a-z0-9_-]+$/, "/name/{name}");
      expect(spec.paths[path]?.[route.method.toLowerCase()]?.["x-scope"], `${route.method} ${path}`).toBe(route.scope);
    }
  });

  for (const [index, route] of ROUTES.entries()) {
    it(`route ${index + 1}, ${route.method} with ${route.scope}: no token 401; user, foreign, scopeless and revoked tokens 403; own token ${route.expected}`, async () => {
      const f = fixture;
      const path = await route.path(f);
      const payload = route.body?.(f);
      const send = (token: string, headers: Record<string, string> = {}) =>
        mgmt(route.method, path, { token, headers, ...(payload !== undefined ? { body: payload } : {}) });

      expect((await send("", { "tenant-id": f.tenantId })).status, "no token").toBe(401);
      const userToken = await mintWithTenantKey(f.tenantId, {
        iss: `http://${host(f.tenantId)}/`,
        aud: CP.audience,
        sub: f.userId,
        gty: undefined,
        scope: `${route.scope} read:current_user`,
      });
      expect((await send(userToken, { host: host(f.tenantId) })).status, "end user's token").toBe(403);
      const foreign = await clientToken(other, [route.scope]);
      expect((await send(foreign.token, { "tenant-id": f.tenantId })).status, "another tenant's token").toBe(403);
      const lacking = await clientToken(f.tenantId, ["read:branding"]);
      expect((await send(lacking.token)).status, "token without the scope").toBe(403);
      const revoked = await clientToken(f.tenantId, [route.scope]);
      await revoked.revoke();
      expect((await send(revoked.token)).status, "revoked token").toBe(403);
      const own = await clientToken(f.tenantId, [route.scope]);
      const res = await send(own.token);
      expect(res.status, await res.clone().text()).toBe(route.expected);
    });
  }
});
