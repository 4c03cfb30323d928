import { CP, mgmt, uniqueId } from "./api";
import { seedUser } from "./flows";
import { codeOf, exchange, loginThroughPages, orgClient } from "./org-login";
import { databaseConnectionId, onTenant, type OrgBody } from "./organizations";

/** The control plane's own host (the apex). */
export const CP_HOST = "localhost:8787";

/** Every tenants scope and one scope no organization member may ever get. */
export const ASKED_SCOPES = "openid read:tenants update:tenants create:tenants delete:tenants read:clients read:current_user";

/** The control-plane organization of a tenant (named after it). */
export async function tenantOrganization(tenantId: string): Promise<OrgBody> {
  return onTenant(CP.tenantId).json<OrgBody>("GET", `/organizations/name/${tenantId}`);
}

/** A control-plane role holding `permissions` on the management API. */
export async function controlPlaneRole(permissions: string[]): Promise<string> {
  const cp = onTenant(CP.tenantId);
  const role = await cp.json<{ id: string }>("POST", "/roles", { name: uniqueId("tenant-role") });
  if (permissions.length) {
    const refs = permissions.map((permission_name) => ({ resource_server_identifier: CP.audience, permission_name }));
    await cp.json("POST", `/roles/${role.id}/permissions`, { permissions: refs }, 201);
  }
  return role.id;
}

/**
 * A control-plane user who is a member of `tenantId`'s organization, holding `roleIds` there, and logs in on
 * the control plane through that organization for the management API: its access token.
 */
export async function memberToken(tenantId: string, roleIds: string[], scope = ASKED_SCOPES) {
  const cp = onTenant(CP.tenantId);
  const org = await tenantOrganization(tenantId);
  const connectionId = await databaseConnectionId(CP.tenantId);
  const enabled = await cp.call("POST", `/organizations/${org.id}/enabled_connections`, { connection_id: connectionId });
  if (enabled.status !== 201 && enabled.status !== 409) throw new Error(`enable connection: ${enabled.status} ${await enabled.text()}`);
  const email = `${uniqueId("operator")}@example.com`;
  const user = await seedUser(CP.tenantId, email);
  await cp.json("POST", `/organizations/${org.id}/members`, { members: [user.user_id] }, 204);
  if (roleIds.length) await cp.json("POST", `/organizations/${org.id}/members/${user.user_id}/roles`, { roles: roleIds }, 204);
  const client = await orgClient(CP.tenantId);
  const res = await loginThroughPages(CP_HOST, client, email, { organization: org.id, audience: CP.audience, scope });
  const tokens = await exchange(CP_HOST, client, codeOf(res));
  return { token: tokens.access_token, claims: tokens.accessClaims, user, org, client, refreshToken: tokens.refresh_token };
}

/** GET with a bearer token. */
export const getWith = (token: string, path: string, headers: Record<string, string> = {}) => mgmt("GET", path, { token, headers });
