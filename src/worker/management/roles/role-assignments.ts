import { z } from "zod";
import { problem, unwrap } from "../../../shared/errors";
import { checkpointPage, offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import { permissionsBody, roleUsersBody } from "../../../shared/schemas/roles";
import type { PermissionRecord, RoleMemberRecord } from "../../../shared/schemas/roles";
import { auditContext } from "../../http/audit";
import { rolesChanged } from "../../tenant/control-plane-sync";
import { defineRoute } from "../define";
import { LIST_QUERY } from "../list-response";
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
  defineRoute({
    method: "get",
    path: "/roles/{id}/permissions",
    scope: "read:roles",
    summary: "A role's permissions by API identifier, then name; offset or checkpoint paging ({permissions, next})",
    query: ROLE_PERMISSIONS_QUERY,
    status: 200,
    async handler(c, { params }) {
      const q = fixedOrderListQuery(c, PERMISSIONS_ORDER);
      const roles = targetTenant(c).roles();
      if (q.mode === "offset") {
        const page = unwrap(await roles.permissions(params.id, { offset: q.page * q.perPage, limit: q.perPage }));
        return c.json(offsetPage("permissions", page.items.map(presentPermission), q, page.total ?? page.items.length));
      }
      const after = q.after ? { resource_server_identifier: String(q.after.key), permission_name: q.after.id } : null;
      if (q.after && typeof q.after.key !== "string") throw problem("invalid_cursor");
      const { items } = unwrap(await roles.permissions(params.id, { after, limit: q.take + 1 }));
      const body = checkpointPage("permissions", items, q, (p) => ({ key: p.resource_server_identifier, id: p.permission_name }));
      return c.json({ ...body, permissions: (body.permissions as PermissionRecord[]).map(presentPermission) });
    },
  }),
  defineRoute({
    method: "post",
    path: "/roles/{id}/permissions",
    scope: "update:roles",
    summary: "Add permissions to a role: each API must exist (404) and define the permission as a scope (400)",
    body: permissionsBody,
    status: 201,
    async handler(c, { params, body }) {
      unwrap(await targetTenant(c).roles(auditContext(c)).addPermissions(params.id, body.permissions));
      await rolesChanged(c);
      return c.body(null, 201);
    },
  }),
  defineRoute({
    method: "delete",
    path: "/roles/{id}/permissions",
    scope: "update:roles",
    summary: "Remove permissions from a role (permissions it does not hold are ignored)",
    body: permissionsBody,
    status: 204,
    async handler(c, { params, body }) {
      unwrap(await targetTenant(c).roles(auditContext(c)).removePermissions(params.id, body.permissions));
      await rolesChanged(c);
      return c.body(null, 204);
    },
  }),
  defineRoute({
    method: "get",
    path: "/roles/{id}/users",
    scope: "read:role_members",
    summary: "Users assigned a role, newest assignment first ({user_id, email, picture, name}); take/per_page capped at 100",
    query: LIST_QUERY,
    status: 200,
    async handler(c, { params }) {
      // A fixed order: sort is ignored (SPEC §4.3 rule 2).
      const { sort: _sort, ...query } = c.req.query();
      const q = parseListQuery(capped(query), MEMBERS_ORDER);
      const roles = targetTenant(c).roles();
      if (q.mode === "offset") {
        const page = unwrap(await roles.members(params.id, { offset: q.page * q.perPage, limit: q.perPage }));
        return c.json(offsetPage("users", page.items.map(presentMember), q, page.total ?? page.items.length));
      }
      const after = q.after ? { createdAt: cursorTime(q.after.key), id: q.after.id } : null;
      const { items } = unwrap(await roles.members(params.id, { after, limit: q.take + 1 }));
      const body = checkpointPage("users", items, q, (m) => ({ key: Date.parse(m.created_at), id: m.user_id }));
      return c.json({ ...body, users: (body.users as RoleMemberRecord[]).map(presentMember) });
    },
  }),
  defineRoute({
    method: "post",
    path: "/roles/{id}/users",
    scope: "create:role_members",
    summary: "Assign a role to users (an unknown user is 404 and nothing is assigned)",
    body: roleUsersBody,
    status: 200,
    async handler(c, { params, body }) {
      unwrap(await targetTenant(c).roles(auditContext(c)).assignUsers(params.id, body.users));
      return c.body(null, 200);
    },
  }),
];
