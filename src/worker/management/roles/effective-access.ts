import { problem, unwrap } from "../../../shared/errors";
import type { RoleRecord, UserPermissionRecord } from "../../../shared/schemas/roles";
import type { ListPage } from "../../../shared/types";
import type { AppContext } from "../../context";
import { defineRoute } from "../define";
import { targetTenant } from "../tenant-scoped";
import { presentPermission } from "./role-assignments";

/**
 * A user's effective roles and permissions (the reference platform's `/users/{id}/effective-roles`,
 * `/effective-permissions` and `/organizations/{id}/members/{user_id}/effective-roles`): what the user holds
 * directly and, for permissions, through roles. Gatehouse has no groups, so every role's source is `direct`
 * (the `.../sources/groups` routes answer 403 `feature_not_enabled`). Checkpoint paging: `take` (1-100,
 * default 50) and `from`, the `next` of the previous page.
 */

type Window = { offset: number; limit: number };

function checkpoint(c: AppContext): Window {
  const take = c.req.query("take");
  const from = c.req.query("from");
  const limit = take === undefined ? 50 : Number(take);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw problem("invalid_query_string", { detail: "take must be an integer from 1 to 100" });
  const offset = from === undefined || from === "" ? 0 : Number(from);
  if (!Number.isInteger(offset) || offset < 0) throw problem("invalid_cursor");
  return { offset, limit };
}

function page<T>(c: AppContext, key: string, window: Window, list: ListPage<T>, present: (item: T) => unknown) {
  const end = window.offset + list.items.length;
  const more = list.total !== null && end < list.total;
  return c.json({ [key]: list.items.map(present), ...(more ? { next: String(end) } : {}) });
}

const effectiveRole = (r: Pick<RoleRecord, "id" | "name" | "description">) => ({ id: r.id, name: r.name, description: r.description ?? "", sources: ["direct"] });

const effectivePermission = (p: UserPermissionRecord) => ({
  ...presentPermission(p),
  sources: [...new Set(p.sources.map((s) => (s.source_type === "DIRECT" ? "direct" : "roles")))],
});

/** Every role of a user (at most the tenant's role count; a user holds few). */
async function allRoles(c: AppContext, userId: string): Promise<RoleRecord[]> {
  return unwrap(await targetTenant(c).userAuthorization().roles(userId, { offset: 0, limit: 10_000 })).items;
}

export const effectiveAccessRoutes = [
  defineRoute({
    method: "get",
    path: "/users/{id}/effective-roles",
    scope: "read:roles",
    summary: "The user's roles with their sources (always direct: no groups here); checkpoint {roles, next}",
    status: 200,
    async handler(c, { params }) {
      const window = checkpoint(c);
      return page(c, "roles", window, unwrap(await targetTenant(c).userAuthorization().roles(params.id, window)), effectiveRole);
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}/effective-permissions",
    scope: "read:users",
    summary: "Every permission the user holds, directly or through roles, with sources [direct, roles]; checkpoint {permissions, next}",
    status: 200,
    async handler(c, { params }) {
      const window = checkpoint(c);
      return page(c, "permissions", window, unwrap(await targetTenant(c).userAuthorization().permissions(params.id, window)), effectivePermission);
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}/effective-permissions/sources/effective-roles",
    scope: "read:users",
    summary: "The user's roles that grant one permission (?resource_server_identifier=&permission_name=); checkpoint {roles, next}",
    status: 200,
    async handler(c, { params }) {
      const api = c.req.query("resource_server_identifier");
      const name = c.req.query("permission_name");
      if (!api || !name) throw problem("invalid_query_string", { detail: "resource_server_identifier and permission_name are required" });
      const window = checkpoint(c);
      const permissions = unwrap(await targetTenant(c).userAuthorization().permissions(params.id, { offset: 0, limit: 100_000 })).items;
      const held = permissions.find((p) => p.resource_server_identifier === api && p.permission_name === name);
      const ids = new Set((held?.sources ?? []).filter((s) => s.source_type === "ROLE").map((s) => s.source_id));
      const granting = (await allRoles(c, params.id)).filter((r) => ids.has(r.id));
      const slice = granting.slice(window.offset, window.offset + window.limit);
      return page(c, "roles", window, { items: slice, total: granting.length }, effectiveRole);
    },
  }),
  defineRoute({
    method: "get",
    path: "/organizations/{id}/members/{user_id}/effective-roles",
    scope: "read:organization_member_roles",
    summary: "A member's roles in the organization with their sources (always direct); checkpoint {roles, next}",
    status: 200,
    async handler(c, { params }) {
      const window = checkpoint(c);
      return page(c, "roles", window, unwrap(await targetTenant(c).organizations().memberRoles(params.id, params.user_id, window)), effectiveRole);
    },
  }),
  defineRoute({
    method: "get",
    path: "/organizations/{id}/roles/{role_id}/members",
    scope: "read:organization_member_roles",
    summary: "The organization's members holding a role there {user_id, email, picture, name}; checkpoint {members, next}",
    status: 200,
    async handler(c, { params }) {
      const window = checkpoint(c);
      const list = unwrap(await targetTenant(c).organizations().roleMembers(params.id, params.role_id, window));
      return page(c, "members", window, list, (m) => Object.fromEntries(Object.entries(m).filter(([, v]) => v !== null)));
    },
  }),
];
