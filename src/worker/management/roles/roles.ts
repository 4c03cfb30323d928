import { z } from "zod";
import { randomId } from "../../../shared/crypto/random";
import { problem, unwrap } from "../../../shared/errors";
import { checkpointPage, type ListOptions, type ListQuery, offsetPage, parseListQuery } from "../../../shared/pagination/list-query";
import { createRoleBody, updateRoleBody } from "../../../shared/schemas/roles";
import type { RoleRecord } from "../../../shared/schemas/roles";
import type { AppContext } from "../../context";
import { auditContext } from "../../http/audit";
import { rolesChanged } from "../../tenant/control-plane-sync";
import { defineRoute } from "../define";
import { LIST_QUERY } from "../list-response";
import { targetTenant } from "../tenant-scoped";

/** The reference platform's role shape: `{id, name, description}` (no description when none is set). */
export function presentRole(role: RoleRecord) {
  return { id: role.id, name: role.name, ...(role.description !== null ? { description: role.description } : {}) };
}

/**
 * The list query of /roles and /roles/{id}/permissions (SPEC §4.3 rule 2): their order is fixed, so `sort` is
 * ignored in offset mode and refused (400) in checkpoint mode, where it could not be honoured by the cursor.
 */
export function fixedOrderListQuery(c: AppContext, options: ListOptions): ListQuery {
  const { sort, ...query } = c.req.query();
  const q = parseListQuery(query, options);
  if (q.mode === "checkpoint" && sort !== undefined) throw problem("checkpoint_sort");
  return q;
}

/** The creation time a newest-first cursor points after (a cursor of another shape is a 400). */
export function cursorTime(key: string | number): number {
  const ms = Number(key);
  if (typeof key !== "number" || !Number.isSafeInteger(ms)) throw problem("invalid_cursor");
  return ms;
}

const ROLES_QUERY = LIST_QUERY.extend({
  name_filter: z.string().max(200).optional().describe("only roles whose name contains this text (case-insensitive)"),
  sort: z.string().optional().describe("refused (400) in checkpoint mode; the order is fixed (newest first)"),
});

export const roleRoutes = [
  defineRoute({
    method: "post",
    path: "/roles",
    scope: "create:roles",
    summary: "Create a role (id rol_...); the name is unique in the tenant (409)",
    body: createRoleBody,
    status: 201,
    async handler(c, { body }) {
      const role = unwrap(
        await targetTenant(c).roles(auditContext(c)).create({ id: randomId("rol_"), name: body.name, description: body.description ?? null }),
      );
      await rolesChanged(c);
      return c.json(presentRole(role), 201);
    },
  }),
  defineRoute({
    method: "get",
    path: "/roles",
    scope: "read:roles",
    summary: "List roles newest first, optionally by name_filter; offset or checkpoint paging ({roles, next})",
    query: ROLES_QUERY,
    status: 200,
    async handler(c, { query }) {
      const q = fixedOrderListQuery(c, { checkpoint: true });
      const nameFilter = query.name_filter || undefined;
      const roles = targetTenant(c).roles();
      if (q.mode === "offset") {
        const { items, total } = await roles.list({ offset: q.page * q.perPage, limit: q.perPage }, nameFilter);
        return c.json(offsetPage("roles", items.map(presentRole), q, total ?? items.length));
      }
      const after = q.after ? { createdAt: cursorTime(q.after.key), id: q.after.id } : null;
      const { items } = await roles.list({ after, limit: q.take + 1 }, nameFilter);
      const body = checkpointPage("roles", items, q, (role) => ({ key: Date.parse(role.created_at), id: role.id }));
      return c.json({ ...body, roles: (body.roles as RoleRecord[]).map(presentRole) });
    },
  }),
  defineRoute({
    method: "get",
    path: "/roles/{id}",
    scope: "read:roles",
    summary: "Get one role",
    status: 200,
    async handler(c, { params }) {
      const role = await targetTenant(c).roles().get(params.id);
      if (!role) throw problem("inexistent_role");
      return c.json(presentRole(role));
    },
  }),
  defineRoute({
    method: "patch",
    path: "/roles/{id}",
    scope: "update:roles",
    summary: "Update a role's name (unique: 409) or description (null removes it)",
    body: updateRoleBody,
    status: 200,
    async handler(c, { params, body }) {
      const role = unwrap(await targetTenant(c).roles(auditContext(c)).update(params.id, body));
      await rolesChanged(c);
      return c.json(presentRole(role));
    },
  }),
  defineRoute({
    method: "delete",
    path: "/roles/{id}",
    scope: "delete:roles",
    summary: "Delete a role, its permissions and its assignments to users",
    status: 204,
    async handler(c, { params }) {
      unwrap(await targetTenant(c).roles(auditContext(c)).delete(params.id));
      await rolesChanged(c);
      return c.body(null, 204);
    },
  }),
];
