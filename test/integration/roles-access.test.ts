import { describe, expect, it } from "vitest";
import { CP, call, createTenant, mgmt } from "../helpers/api";
import { seedClient, tokenForm } from "../helpers/flows";
import { tenantManagementToken } from "../helpers/management";
import { mintWithTenantKey } from "../helpers/mint";
import { createRbacApi, createRole, createUser, expectError, perms, userPath } from "../helpers/roles";

/**
 * Who can reach each role and permission route (issue 9; SPEC §5.2): no token 401; an end user's token,
 * another tenant's token, a revoked token and a token lacking the route's scope 403; the tenant's own M2M
 * token holding the scope succeeds. Refused calls change nothing (each route's success runs after them).
 */

const MANAGEMENT = "urn:gatehouse:management";

interface Route {
  method: string;
  path: string;
  scope: string;
  status: number;
  body?: unknown;
}

/** A client_credentials management token of the tenant's own client, then revoked at /oauth/revoke. */
async function revokedToken(tenant: string, scopes: string[]): Promise<string> {
  const host = `${tenant}.localhost:8787`;
  const client = await seedClient(tenant, { grant_types: ["client_credentials"] });
  const grant = await mgmt("POST", "/client-grants", { headers: { "tenant-id": tenant }, body: { client_id: client.client_id, audience: MANAGEMENT, scope: scopes } });
  expect(grant.status).toBe(201);
  const issued = await tokenForm({ grant_type: "client_credentials", client_id: client.client_id, client_secret: client.client_secret, audience: MANAGEMENT }, {}, host);
  const { access_token } = (await issued.json()) as { access_token: string };
  expect((await mgmt("GET", "/roles", { token: access_token })).status).toBe(200);
  const res = await call("/oauth/revoke", {
    method: "POST",
    host,
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token: access_token, client_id: client.client_id, client_secret: client.client_secret }).toString(),
  });
  expect(res.status).toBe(200);
  return access_token;
}

describe("who can reach the role and permission routes", () => {
  it("no token 401; an end user's, another tenant's, a revoked and a scope-less token 403; the tenant's own scoped token succeeds", async () => {
    const own = await createTenant();
    const other = await createTenant();
    const api = await createRbacApi(own, ["read:x"]);
    const role = await createRole(own, "Guarded");
    const doomed = await createRole(own, "Doomed");
    const user = await createUser(own);
    const permission = { permissions: perms(api.identifier, "read:x") };

    const routes: Route[] = [
      { method: "POST", path: "/roles", scope: "create:roles", status: 201, body: { name: "Created" } },
      { method: "GET", path: "/roles", scope: "read:roles", status: 200 },
      { method: "GET", path: `/roles/${role.id}`, scope: "read:roles", status: 200 },
      { method: "PATCH", path: `/roles/${role.id}`, scope: "update:roles", status: 200, body: { description: "changed" } },
      { method: "POST", path: `/roles/${role.id}/permissions`, scope: "update:roles", status: 201, body: permission },
      { method: "GET", path: `/roles/${role.id}/permissions`, scope: "read:roles", status: 200 },
      { method: "DELETE", path: `/roles/${role.id}/permissions`, scope: "update:roles", status: 204, body: permission },
      { method: "POST", path: `/roles/${role.id}/users`, scope: "create:role_members", status: 200, body: { users: [user.user_id] } },
      { method: "GET", path: `/roles/${role.id}/users`, scope: "read:role_members", status: 200 },
      { method: "GET", path: userPath(user.user_id, "/roles"), scope: "read:roles", status: 200 },
      { method: "DELETE", path: userPath(user.user_id, "/roles"), scope: "delete:role_members", status: 204, body: { roles: [role.id] } },
      { method: "POST", path: userPath(user.user_id, "/roles"), scope: "create:role_members", status: 204, body: { roles: [role.id] } },
      { method: "POST", path: userPath(user.user_id, "/permissions"), scope: "update:users", status: 201, body: permission },
      { method: "GET", path: userPath(user.user_id, "/permissions"), scope: "read:users", status: 200 },
      { method: "DELETE", path: userPath(user.user_id, "/permissions"), scope: "update:users", status: 204, body: permission },
      { method: "DELETE", path: `/roles/${doomed.id}`, scope: "delete:roles", status: 204 },
    ];
    const scopes = [...new Set(routes.map((r) => r.scope))];
    const ownTokens = new Map<string, string>();
    const otherTokens = new Map<string, string>();
    for (const scope of scopes) {
      ownTokens.set(scope, await tenantManagementToken(own, [scope]));
      otherTokens.set(scope, await tenantManagementToken(other, [scope]));
    }
    const scopeless = await tenantManagementToken(own, ["read:clients", "read:resource_servers"]);
    const revoked = await revokedToken(own, scopes);
    // A user's token (even for the user's own id, with every scope written in it) is held to current-user rules.
    const endUser = await mintWithTenantKey(own, {
      iss: `http://${own}.localhost:8787/`,
      aud: CP.audience,
      scope: [...scopes, "read:current_user", "update:current_user_metadata"].join(" "),
      sub: user.user_id,
      gty: "password",
    });

    for (const route of routes) {
      const send = (token: string, headers: Record<string, string> = {}) =>
        mgmt(route.method, route.path, { token, headers, ...(route.body !== undefined ? { body: route.body } : {}) });
      const label = `${route.method} ${route.path}`;
      const none = await send("", { "tenant-id": own });
      expect(none.status, `${label}: no token`).toBe(401);
      await expectError(none, 401, "missing_token");
      await expectError(await send(endUser), 403, "insufficient_scope");
      await expectError(await send(otherTokens.get(route.scope) as string, { "tenant-id": own }), 403, "cross_tenant_forbidden");
      await expectError(await send(revoked), 403, "invalid_token");
      await expectError(await send(scopeless), 403, "insufficient_scope", new RegExp(route.scope));
      const ok = await send(ownTokens.get(route.scope) as string);
      expect(ok.status, `${label}: own token with ${route.scope}: ${await ok.clone().text()}`).toBe(route.status);
    }
  });
});
