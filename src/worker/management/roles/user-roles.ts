import { unwrap } from "../../../shared/errors";
import { permissionsBody, userRolesBody } from "../../../shared/schemas/roles";
import type { UserPermissionRecord } from "../../../shared/schemas/roles";
import { auditContext } from "../../http/audit";
import { each, relationListRoute, relationWriteRoutes } from "../relation-routes";
import { presentPermission } from "./role-assignments";
import { presentRole } from "./roles";
import { targetTenant } from "../tenant-scoped";

/** A user's permission with where it comes from (`DIRECT`, or `ROLE` with the role's id and name). */
const presentUserPermission = (p: UserPermissionRecord) => ({ ...presentPermission(p), sources: p.sources });

/**
 * A user's roles and permissions (SPEC §4.2 roles; the reference platform's `/users/{id}/roles` and
 * `/users/{id}/permissions`). Offset paging only: these lists ignore from/take and never return `next`.
 * An unknown user is 404 `inexistent_user` on every route.
 */
export const userRoleRoutes = [
  relationListRoute({
    path: "/users/{id}/roles",
    scope: "read:roles",
    summary: "The roles assigned to a user, newest role first (offset paging; include_totals envelope {roles, ...})",
    field: "roles",
    present: each(presentRole),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).userAuthorization().roles(params.id, window)),
  }),
  ...relationWriteRoutes({
    path: "/users/{id}/roles",
    body: userRolesBody,
    assign: {
      scope: "create:role_members",
      summary: "Assign roles to a user (an unknown role is 404 and nothing is assigned)",
      status: 204,
      write: (c, params, body) => targetTenant(c).userAuthorization(auditContext(c)).assignRoles(params.id, body.roles),
    },
    remove: {
      scope: "delete:role_members",
      summary: "Remove roles from a user (roles the user does not hold are ignored)",
      status: 204,
      write: (c, params, body) => targetTenant(c).userAuthorization(auditContext(c)).removeRoles(params.id, body.roles),
    },
  }),
  relationListRoute({
    path: "/users/{id}/permissions",
    scope: "read:users",
    summary: "A user's permissions, direct and through roles, each with its sources (offset paging)",
    field: "permissions",
    present: each(presentUserPermission),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).userAuthorization().permissions(params.id, window)),
  }),
  ...relationWriteRoutes({
    path: "/users/{id}/permissions",
    body: permissionsBody,
    assign: {
      scope: "update:users",
      summary: "Assign permissions to a user directly: each API must exist (404) and define the permission (400)",
      status: 201,
      write: (c, params, body) => targetTenant(c).userAuthorization(auditContext(c)).addPermissions(params.id, body.permissions),
    },
    remove: {
      scope: "update:users",
      summary: "Remove a user's direct permissions (those held through a role stay)",
      status: 204,
      write: (c, params, body) => targetTenant(c).userAuthorization(auditContext(c)).removePermissions(params.id, body.permissions),
    },
  }),
];
