import { describe, expect, it } from "vitest";
import { uniqueId } from "../helpers/api";
import { decodeJwt } from "jose";
import { seedUser, tokenForm } from "../helpers/flows";
import { codeOf, exchange, hostOf, openPage, orgClient, PASSWORD, pageLocation, startLogin, submit } from "../helpers/org-login";
import { freshTenant, orgWithMembers } from "../helpers/organizations";
import { tenantSql } from "../helpers/outbox";

type Role = { id: string; name: string; description?: string };

/** A tenant with an organization, one member and two roles. */
async function setup() {
  const { tenantId, api } = await freshTenant();
  const { org, users } = await orgWithMembers(tenantId, 1);
  const member = users[0] as { user_id: string; email: string };
  const admin = await api.json<Role>("POST", "/roles", { name: "org-admin", description: "Administers" });
  const viewer = await api.json<Role>("POST", "/roles", { name: "org-viewer" });
  const rolesPath = `/organizations/${org.id}/members/${encodeURIComponent(member.user_id)}/roles`;
  return { tenantId, api, org, member, admin, viewer, rolesPath };
}

describe("organization member roles (issue 11 point 2)", () => {
  it("assigns, lists (by name, with totals), and removes a member's roles in the organization", async () => {
    const { api, admin, viewer, rolesPath } = await setup();
    expect((await api.call("POST", rolesPath, { roles: [viewer.id, admin.id] })).status).toBe(204);
    // Assigning again is not an error.
    expect((await api.call("POST", rolesPath, { roles: [admin.id] })).status).toBe(204);
    expect(await api.json("GET", rolesPath)).toEqual([
      { id: admin.id, name: "org-admin", description: "Administers" },
      { id: viewer.id, name: "org-viewer" },
    ]);
    expect(await api.json("GET", `${rolesPath}?include_totals=true&per_page=1&page=1`)).toEqual({
      roles: [{ id: viewer.id, name: "org-viewer" }],
      start: 1,
      limit: 1,
      length: 1,
      total: 2,
    });
    expect((await api.call("DELETE", rolesPath, { roles: [admin.id] })).status).toBe(204);
    expect((await api.json<Role[]>("GET", rolesPath)).map((r) => r.id)).toEqual([viewer.id]);
  });

  it("refuses an unknown role (nothing assigned) and a user who is not a member", async () => {
    const { tenantId, api, org, admin, rolesPath } = await setup();
    const res = await api.call("POST", rolesPath, { roles: [admin.id, "rol_missing"] });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { errorCode: string }).errorCode).toBe("inexistent_role");
    expect(await api.json("GET", rolesPath)).toEqual([]);
    const outsider = await seedUser(tenantId, `${uniqueId("x")}@example.com`);
    const outsiderPath = `/organizations/${org.id}/members/${encodeURIComponent(outsider.user_id)}/roles`;
    expect((await api.call("POST", outsiderPath, { roles: [admin.id] })).status).toBe(404);
  });

  it("roles are per organization and do not become the user's tenant roles", async () => {
    const { tenantId, api, member, admin, rolesPath } = await setup();
    const other = await api.json<{ id: string }>("POST", "/organizations", { name: uniqueId("other").toLowerCase() });
    await api.json("POST", `/organizations/${other.id}/members`, { members: [member.user_id] }, 204);
    await api.json("POST", rolesPath, { roles: [admin.id] }, 204);
    expect(await api.json("GET", `/organizations/${other.id}/members/${encodeURIComponent(member.user_id)}/roles`)).toEqual([]);
    expect(await api.json("GET", `/users/${encodeURIComponent(member.user_id)}/roles`)).toEqual([]);
    expect(tenantId).toBeTruthy();
  });

  it("members list shows roles with fields=roles", async () => {
    const { api, org, member, admin, rolesPath } = await setup();
    await api.json("POST", rolesPath, { roles: [admin.id] }, 204);
    expect(await api.json("GET", `/organizations/${org.id}/members?fields=user_id,roles`)).toEqual([
      { user_id: member.user_id, roles: [{ id: admin.id, name: "org-admin" }] },
    ]);
  });

  it("deleting the role, removing the member or deleting the user takes the member's roles away", async () => {
    const { tenantId, api, org, member, admin, viewer, rolesPath } = await setup();
    await api.json("POST", rolesPath, { roles: [admin.id, viewer.id] }, 204);
    expect((await api.call("DELETE", `/roles/${admin.id}`)).status).toBe(204);
    expect((await api.json<Role[]>("GET", rolesPath)).map((r) => r.id)).toEqual([viewer.id]);
    await api.json("DELETE", `/organizations/${org.id}/members`, { members: [member.user_id] }, 204);
    await api.json("POST", `/organizations/${org.id}/members`, { members: [member.user_id] }, 204);
    expect(await api.json("GET", rolesPath)).toEqual([]);
    await api.json("POST", rolesPath, { roles: [viewer.id] }, 204);
    await tenantSql(tenantId, "DELETE FROM users WHERE user_id = ?", member.user_id);
    expect(await tenantSql(tenantId, "SELECT * FROM organization_member_roles")).toEqual([]);
  });

  it("an accepted invitation gives the member the invitation's roles", async () => {
    const { tenantId, api, org, admin } = await setup();
    const host = hostOf(tenantId);
    const client = await orgClient(tenantId, { organization_usage: "allow" });
    const invitee = await seedUser(tenantId, `${uniqueId("inv")}@example.com`);
    const invitation = await api.json<{ ticket_id: string }>("POST", `/organizations/${org.id}/invitations`, {
      inviter: { name: "Ann" },
      invitee: { email: invitee.email },
      client_id: client.client_id,
      roles: [admin.id],
      send_invitation_email: false,
    });
    const page = await openPage(host, pageLocation(await startLogin(host, client, { invitation: invitation.ticket_id, organization: org.id })));
    const tokens = await exchange(host, client, codeOf(await submit(host, page, { email: invitee.email as string, password: PASSWORD })));
    expect(tokens.idClaims.org_id).toBe(org.id);
    expect(await api.json("GET", `/organizations/${org.id}/members/${encodeURIComponent(invitee.user_id)}/roles`)).toEqual([
      { id: admin.id, name: "org-admin", description: "Administers" },
    ]);
  });

  it("in a login through the organization, the member's roles there add their permissions to the access token (RBAC)", async () => {
    const { tenantId, api, org, member, admin, rolesPath } = await setup();
    const host = hostOf(tenantId);
    const identifier = `https://${uniqueId("api")}.example.com/`;
    await api.json("POST", "/resource-servers", {
      identifier,
      name: "Org API",
      scopes: [{ value: "read:reports", description: "r" }, { value: "write:reports", description: "w" }],
      enforce_policies: true,
      token_dialect: "access_token_authz",
      allow_offline_access: true,
    });
    await api.json("POST", `/roles/${admin.id}/permissions`, { permissions: [{ resource_server_identifier: identifier, permission_name: "write:reports" }] }, 201);
    await api.json("POST", rolesPath, { roles: [admin.id] }, 204);
    const client = await orgClient(tenantId, { organization_usage: "allow" });
    const login = async (params: Record<string, string>) => {
      const page = await openPage(host, pageLocation(await startLogin(host, client, { audience: identifier, scope: "openid write:reports offline_access", ...params })));
      return exchange(host, client, codeOf(await submit(host, page, { email: member.email, password: PASSWORD })));
    };
    const inOrg = await login({ organization: org.id });
    expect(inOrg.accessClaims.permissions).toEqual(["write:reports"]);
    expect(String(inOrg.accessClaims.scope).split(" ")).toContain("write:reports");
    // Outside the organization the member's roles there do not apply.
    const plain = await login({});
    expect(plain.accessClaims.permissions).toEqual([]);
    expect(String(plain.accessClaims.scope).split(" ")).not.toContain("write:reports");
    // A refresh in the organization keeps them.
    const refreshed = await tokenForm({ grant_type: "refresh_token", refresh_token: inOrg.refresh_token as string, client_id: client.client_id, client_secret: client.client_secret }, {}, host);
    const body = (await refreshed.json()) as { access_token: string };
    expect(refreshed.status, JSON.stringify(body)).toBe(200);
    expect(decodeJwt(body.access_token).permissions).toEqual(["write:reports"]);
  });
});
