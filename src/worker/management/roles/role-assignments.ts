import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { parseListQuery } from "../../../shared/pagination/list-query";
import { permissionsBody, roleUsersBody } from "../../../shared/schemas/roles";
import type { PermissionRecord, RoleMemberRecord } from "../../../shared/schemas/roles";
import { auditContext } from "../../http/audit";
import { rolesChanged } from "../../tenant/control-plane-sync";
import { LIST_QUERY } from "../list-response";
import { each, relationListRoute, relationWriteRoutes } from "../relation-routes";
import { cursorTime, fixedOrderListQuery } from "./roles";
import { targetTenant } from "../tenant-scoped";

/** A permission in the reference platform's list shape (no description when the scope has none). */
export function presentPermission(p: PermissionRecord) {
  return {
    resource_server_identifier: p.resource_server_identifier,
    permission_name: p.permission_name,
    resource_server_name: p.resource_server_name,
    ...(p.description !== null ? { description: p.description } : {}),
  };
}

/** A role member: `{user_id, email, picture, name}`, fields the user lacks left out. */
const presentMember = (m: RoleMemberRecord) =>
  Object.fromEntries(Object.entries({ user_id: m.user_id, email: m.email, picture: m.picture, name: m.name }).filter(([, v]) => v !== null));

/** SPEC §4.3 rule 4: /roles/{id}/users caps take and per_page at 100 (a larger value gets 100). */
const MEMBERS_PAGE_MAX = 100;
function capped(query: Record<string, string>): Record<string, string> {
  const out = { ...query };
  for (const name of ["take", "per_page"]) {
    const value = out[name];
    if (value !== undefined && /^\d+$/.test(value) && Number(value) > MEMBERS_PAGE_MAX) out[name] = String(MEMBERS_PAGE_MAX);
  }
  return out;
}

const ROLE_PERMISSIONS_QUERY = LIST_QUERY.extend({
  sort: z.string().optional().describe("refused (400) in checkpoint mode; the order is fixed (API identifier, then name)"),
});

/**
 * The order each list's cursors are minted under (SPEC §4.3 rule 3): a cursor of one list replayed on
 * another is a 400, never a page from the wrong position.
 */
const PERMISSIONS_ORDER = { checkpoint: true, sorts: ["resource_server_identifier:1,permission_name:1"] };
const MEMBERS_ORDER = { checkpoint: true, sorts: ["assigned_at:-1"] };

export const roleAssignmentRoutes = [
  relationListRoute({
    path: "/roles/{id}/permissions",
    scope: "read:roles",
    summary: "A role's permissions by API identifier, then name; offset or checkpoint paging ({permissions, next})",
    query: ROLE_PERMISSIONS_QUERY,
    field: "permissions",
    checkpoint: {
      parse: (c) => fixedOrderListQuery(c, PERMISSIONS_ORDER),
      after(cursor) {
        if (typeof cursor.key !== "string") throw problem("invalid_cursor");
        return { resource_server_identifier: cursor.key, permission_name: cursor.id };
      },
      position: (p: PermissionRecord) => ({ key: p.resource_server_identifier, id: p.permission_name }),
    },
    present: each(presentPermission),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).roles().permissions(params.id, window)),
  }),
  ...relationWriteRoutes({
    path: "/roles/{id}/permissions",
    body: permissionsBody,
    // The control plane's roles are kept in step in its children (issue 15 point 2).
    after: rolesChanged,
    assign: {
      scope: "update:roles",
      summary: "Add permissions to a role: each API must exist (404) and define the permission as a scope (400)",
      status: 201,
      write: (c, params, body) => targetTenant(c).roles(auditContext(c)).addPermissions(params.id, body.permissions),
    },
    remove: {
      scope: "update:roles",
      summary: "Remove permissions from a role (permissions it does not hold are ignored)",
      status: 204,
      write: (c, params, body) => targetTenant(c).roles(auditContext(c)).removePermissions(params.id, body.permissions),
    },
  }),
  relationListRoute({
    path: "/roles/{id}/users",
    scope: "read:role_members",
    summary: "Users assigned a role, newest assignment first ({user_id, email, picture, name}); take/per_page capped at 100",
    field: "users",
    checkpoint: {
      parse(c) {
        // A fixed order: sort is ignored (SPEC §4.3 rule 2).
        const { sort: _sort, ...query } = c.req.query();
        return parseListQuery(capped(query), MEMBERS_ORDER);
      },
      after: (cursor) => ({ createdAt: cursorTime(cursor.key), id: cursor.id }),
      position: (m: RoleMemberRecord) => ({ key: Date.parse(m.created_at), id: m.user_id }),
    },
    present: each(presentMember),
    fetch: async (c, params, window) => unwrap(await targetTenant(c).roles().members(params.id, window)),
  }),
  ...relationWriteRoutes({
    path: "/roles/{id}/users",
    body: roleUsersBody,
    assign: {
      scope: "create:role_members",
      summary: "Assign a role to users (an unknown user is 404 and nothing is assigned)",
      status: 200,
      write: (c, params, body) => targetTenant(c).roles(auditContext(c)).assignUsers(params.id, body.users),
    },
  }),
];
