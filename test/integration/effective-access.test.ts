import { beforeAll, describe, expect, it } from "vitest";
import { createTenant, mgmt, uniqueId } from "../helpers/api";
import { seedUser } from "../helpers/flows";
import { expectRefusals, type ReachKit, reachKit } from "../helpers/route-reach";

/**
 * Issue 28 point 1: a user's effective roles and permissions, an organization role's members, and
 * POST /users/{id}/revoke-access, in the reference platform's shapes (node-auth0 7.1 has all of them).
 */

const json = async <T>(res: Response) => (await res.json()) as T;
const enc = encodeURIComponent;

async function seedAccess(tenant: string) {
  const api = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenant }, ...(body !== undefined ? { body } : {}) });
  const identifier = `https://${uniqueId("api")}.example.com`;
  const rs = await api("POST", "/resource-servers", { identifier, name: "Orders", scopes: [{ value: "read:orders", description: "Read" }, { value: "write:orders", description: "Write" }] });
  expect(rs.status).toBe(201);
  const role = await json<{ id: string }>(await api("POST", "/roles", { name: uniqueId("reader"), description: "Reads orders" }));
  expect((await api("POST", `/roles/${role.id}/permissions`, { permissions: [{ resource_server_identifier: identifier, permission_name: "read:orders" }] })).status).toBe(201);
  const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
  expect((await api("POST", `/users/${enc(user.user_id)}/roles`, { roles: [role.id] })).status).toBe(204);
  expect((await api("POST", `/users/${enc(user.user_id)}/permissions`, { permissions: [{ resource_server_identifier: identifier, permission_name: "read:orders" }, { resource_server_identifier: identifier, permission_name: "write:orders" }] })).status).toBe(201);
  const org = await json<{ id: string }>(await api("POST", "/organizations", { name: uniqueId("org") }));
  expect((await api("POST", `/organizations/${org.id}/members`, { members: [user.user_id] })).status).toBe(204);
  expect((await api("POST", `/organizations/${org.id}/members/${enc(user.user_id)}/roles`, { roles: [role.id] })).status).toBe(204);
  return { api, identifier, role, user, org };
}

describe("effective roles and permissions", () => {
  it("lists the user's roles (source direct) and permissions with their sources, checkpoint-paged", async () => {
    const tenant = await createTenant();
    const { api, identifier, role, user } = await seedAccess(tenant);
    const roles = await json<{ roles: unknown[]; next?: string }>(await api("GET", `/users/${enc(user.user_id)}/effective-roles`));
    expect(roles).toEqual({ roles: [{ id: role.id, name: expect.any(String), description: "Reads orders", sources: ["direct"] }] });
    const perms = await json<{ permissions: { permission_name: string; sources: string[]; resource_server_name: string }[] }>(await api("GET", `/users/${enc(user.user_id)}/effective-permissions`));
    expect(perms.permissions.map((p) => [p.permission_name, p.sources, p.resource_server_name])).toEqual([
      ["read:orders", ["direct", "roles"], "Orders"],
      ["write:orders", ["direct"], "Orders"],
    ]);
    const first = await json<{ permissions: unknown[]; next?: string }>(await api("GET", `/users/${enc(user.user_id)}/effective-permissions?take=1`));
    expect(first.permissions).toHaveLength(1);
    const second = await json<{ permissions: { permission_name: string }[]; next?: string }>(await api("GET", `/users/${enc(user.user_id)}/effective-permissions?take=1&from=${first.next}`));
    expect(second.permissions[0]?.permission_name).toBe("write:orders");
    expect(second.next).toBeUndefined();
    const sources = await api("GET", `/users/${enc(user.user_id)}/effective-permissions/sources/effective-roles?resource_server_identifier=${enc(identifier)}&permission_name=read:orders`);
    expect(await json(sources)).toEqual({ roles: [{ id: role.id, name: expect.any(String), description: "Reads orders", sources: ["direct"] }] });
    expect((await api("GET", `/users/${enc(user.user_id)}/effective-permissions/sources/effective-roles`)).status).toBe(400);
    expect((await api("GET", `/users/${enc(user.user_id)}/effective-roles?take=0`)).status).toBe(400);
    expect((await api("GET", "/users/auth0%7Cnobody/effective-roles")).status).toBe(404);
  });

  it("lists an organization member's effective roles and a role's members in the organization", async () => {
    const tenant = await createTenant();
    const { api, role, user, org } = await seedAccess(tenant);
    const roles = await json(await api("GET", `/organizations/${org.id}/members/${enc(user.user_id)}/effective-roles`));
    expect(roles).toEqual({ roles: [{ id: role.id, name: expect.any(String), description: "Reads orders", sources: ["direct"] }] });
    const members = await json<{ members: { user_id: string; email: string }[] }>(await api("GET", `/organizations/${org.id}/roles/${role.id}/members`));
    expect(members.members).toEqual([expect.objectContaining({ user_id: user.user_id, email: expect.stringContaining("@example.com") })]);
    expect((await api("GET", `/organizations/${org.id}/roles/rol_nothere/members`)).status).toBe(404);
    expect((await api("GET", `/users/${enc(user.user_id)}/effective-roles/sources/groups`)).status).toBe(403);
  });
});

describe("POST /users/{id}/revoke-access", () => {
  it("answers 202 for a user, 404 for an unknown one or someone else's session, 400 for preserve_refresh_tokens", async () => {
    const tenant = await createTenant();
    const api = (method: string, path: string, body?: unknown) => mgmt(method, path, { headers: { "tenant-id": tenant }, ...(body !== undefined ? { body } : {}) });
    const user = await seedUser(tenant, `${uniqueId("u")}@example.com`);
    expect((await api("POST", `/users/${enc(user.user_id)}/revoke-access`, {})).status).toBe(202);
    expect((await api("POST", "/users/auth0%7Cnobody/revoke-access", {})).status).toBe(404);
    expect((await api("POST", `/users/${enc(user.user_id)}/revoke-access`, { session_id: "ses_unknown" })).status).toBe(404);
    const refused = await api("POST", `/users/${enc(user.user_id)}/revoke-access`, { preserve_refresh_tokens: true });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("preserve_refresh_tokens is not supported");
  });
});

describe("who can reach these routes", () => {
  let kit: ReachKit;
  beforeAll(async () => {
    kit = await reachKit(["read:roles", "read:users", "read:organization_member_roles", "delete:sessions"]);
  });

  it("only the tenant's own client with the route's scope", async () => {
    const u = "auth0%7Csomeone";
    await expectRefusals(kit, "GET", `/users/${u}/effective-roles`, "read:roles");
    await expectRefusals(kit, "GET", `/users/${u}/effective-permissions`, "read:users");
    await expectRefusals(kit, "GET", `/users/${u}/effective-permissions/sources/effective-roles?resource_server_identifier=x&permission_name=y`, "read:users");
    await expectRefusals(kit, "GET", `/organizations/org_x/members/${u}/effective-roles`, "read:organization_member_roles");
    await expectRefusals(kit, "GET", "/organizations/org_x/roles/rol_x/members", "read:organization_member_roles");
    await expectRefusals(kit, "POST", `/users/${u}/revoke-access`, "delete:sessions", {});
    const allowed = await mgmt("GET", `/users/${u}/effective-roles`, { token: kit.allowed, headers: { "tenant-id": kit.tenant } });
    expect(allowed.status).toBe(404);
  });
});
