import { unwrap } from "../../../shared/errors";
import { type ListQuery, offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import { permissionsBody, userRolesBody } from "../../../shared/schemas/roles";
import type { UserPermissionRecord } from "../../../shared/schemas/roles";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { defineRoute } from "../define";
import { LIST_QUERY } from "../list-response";
import { presentPermission } from "./role-assignments";
import { presentRole } from "./roles";
import { targetTenant } from "../tenant-scoped";

/** A user's permission with where it comes from (`DIRECT`, or `ROLE` with the role's id and name). */
const presentUserPermission = (p: UserPermissionRecord) => ({ ...presentPermission(p), sources: p.sources });

/** Offset paging only (from/take ignored, SPEC §4.3): parseListQuery never answers checkpoint mode here. */
function offsetQuery(c: AppContext): Extract<ListQuery, { mode: "offset" }> {
  const q = parseListQuery(c.req.query(), { checkpoint: false });
  if (q.mode !== "offset") throw new Error("unreachable: checkpoint mode on an offset-only list");
  return q;
}

/**
 * A user's roles and permissions (SPEC §4.2 roles; the reference platform's `/users/{id}/roles` and
 * `/users/{id}/permissions`). Offset paging only: these lists ignore from/take and never return `next`.
 * An unknown user is 404 `inexistent_user` on every route.
 */
export const userRoleRoutes = [
  defineRoute({
    method: "get",
    path: "/users/{id}/roles",
    scope: "read:roles",
    summary: "The roles assigned to a user, newest role first (offset paging; include_totals envelope {roles, ...})",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const q = offsetQuery(c);
      const page = unwrap(await targetTenant(c).userAuthorization().roles(params.id, { offset: q.page * q.perPage, limit: q.perPage }));
      return c.json(offsetPage("roles", page.items.map(presentRole), q, page.total ?? page.items.length));
    },
  }),
  defineRoute({
    method: "post",
    path: "/users/{id}/roles",
    scope: "create:role_members",
    summary: "Assign roles to a user (an unknown role is 404 and nothing is assigned)",
    body: userRolesBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await targetTenant(c).userAuthorization(auditContext(c)).assignRoles(params.id, body.roles));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}/roles",
    scope: "delete:role_members",
    summary: "Remove roles from a user (roles the user does not hold are ignored)",
    body: userRolesBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await targetTenant(c).userAuthorization(auditContext(c)).removeRoles(params.id, body.roles));
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/users/{id}/permissions",
    scope: "read:users",
    summary: "A user's permissions, direct and through roles, each with its sources (offset paging)",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      const q = offsetQuery(c);
      const page = unwrap(await targetTenant(c).userAuthorization().permissions(params.id, { offset: q.page * q.perPage, limit: q.perPage }));
      return c.json(offsetPage("permissions", page.items.map(presentUserPermission), q, page.total ?? page.items.length));
    },
  }),
  defineRoute({
    method: "post",
    path: "/users/{id}/permissions",
    scope: "update:users",
    summary: "Assign permissions to a user directly: each API must exist (404) and define the permission (400)",
    body: permissionsBody,
    status: 201,
    async handler(c, { params, body }) {
      unwrap(await targetTenant(c).userAuthorization(auditContext(c)).addPermissions(params.id, body.permissions));
      return c.body(null, 201);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/users/{id}/permissions",
    scope: "update:users",
    summary: "Remove a user's direct permissions (those held through a role stay)",
    body: permissionsBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await targetTenant(c).userAuthorization(auditContext(c)).removePermissions(params.id, body.permissions));
      return c.body(null, 204);
    },
  }),
];
