import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage, ListWindow, PermissionWindow } from "../../../shared/types";
import type { NewRole, PermissionRecord, PermissionRef, RoleMemberRecord, RolePatch, RoleRecord } from "../../../shared/schemas/roles";
import { iso, type Sql, type SqlValue } from "../../sql";
import { audited } from "../core/events";
import { checkPermissions, describePermissions, uniquePermissions } from "../oauth/permissions";
import { definedOnly } from "../oauth/rows";
import { TenantRpc } from "../core/rpc";

type Row = Record<string, unknown>;

const toRole = (r: Row): RoleRecord => ({
  id: String(r.id),
  name: String(r.name),
  description: (r.description as string | null) ?? null,
  created_at: iso(r.created_at as number) as string,
  updated_at: iso(r.updated_at as number) as string,
});

const notFound = () => fail("inexistent_role");

export function getRole(sql: Sql, id: string): RoleRecord | null {
  const row = sql.first<Row>`SELECT * FROM roles WHERE id = ${id}`;
  return row ? toRole(row) : null;
}

const nameTaken = (sql: Sql, name: string, except = "") =>
  sql.first`SELECT 1 FROM roles WHERE name = ${name} AND id != ${except}` !== undefined;

/**
 * One page of roles, newest first (SPEC §4.3), optionally only those whose name contains `nameFilter`
 * ignoring case (the reference platform's `name_filter`).
 */
export function listRoles(sql: Sql, window: ListWindow, nameFilter?: string): ListPage<RoleRecord> {
  const where: string[] = [];
  const values: SqlValue[] = [];
  if (nameFilter) {
    where.push("instr(lower(name), lower(?)) > 0");
    values.push(nameFilter);
  }
  const order = " ORDER BY created_at DESC, id DESC LIMIT ?";
  if ("offset" in window) {
    const filtered = where.length ? ` WHERE ${where.join(" AND ")}` : "";
    const rows = sql.exec<Row>(`SELECT * FROM roles${filtered}${order} OFFSET ?`, ...values, window.limit, window.offset);
    const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM roles${filtered}`, ...values)[0]?.n ?? 0;
    return { items: rows.map(toRole), total };
  }
  if (window.after) {
    where.push("(created_at, id) < (?, ?)");
    values.push(window.after.createdAt, window.after.id);
  }
  const filtered = where.length ? ` WHERE ${where.join(" AND ")}` : "";
  return { items: sql.exec<Row>(`SELECT * FROM roles${filtered}${order}`, ...values, window.limit).map(toRole), total: null };
}

export function createRole(sql: Sql, role: NewRole, now: number): Result<RoleRecord> {
  if (nameTaken(sql, role.name)) return fail("role_conflict", { name: role.name });
  sql.run`INSERT INTO roles (id, name, description, created_at, updated_at)
    VALUES (${role.id}, ${role.name}, ${role.description}, ${now}, ${now})`;
  return ok(getRole(sql, role.id) as RoleRecord);
}

export function updateRole(sql: Sql, id: string, patch: RolePatch, now: number): Result<RoleRecord> {
  const current = getRole(sql, id);
  if (!current) return notFound();
  const next = { ...current, ...definedOnly(patch) };
  if (next.name !== current.name && nameTaken(sql, next.name, id)) return fail("role_conflict", { name: next.name });
  sql.run`UPDATE roles SET name = ${next.name}, description = ${next.description}, updated_at = ${now} WHERE id = ${id}`;
  return ok(getRole(sql, id) as RoleRecord);
}

/** Deletes a role with its permissions and every assignment of it to a user. */
export function deleteRole(sql: Sql, id: string): Result<true> {
  if (!getRole(sql, id)) return notFound();
  sql.run`DELETE FROM role_permissions WHERE role_id = ${id}`;
  sql.run`DELETE FROM user_roles WHERE role_id = ${id}`;
  sql.run`DELETE FROM roles WHERE id = ${id}`;
  return ok(true);
}

/** Adds permissions to a role (already held ones are kept as they are); all or nothing. */
export function addRolePermissions(sql: Sql, roleId: string, refs: readonly PermissionRef[], now: number): Result<PermissionRef[]> {
  if (!getRole(sql, roleId)) return notFound();
  const checked = checkPermissions(sql, refs);
  if (!checked.ok) return checked;
  for (const p of checked.value) {
    sql.run`INSERT OR IGNORE INTO role_permissions (role_id, resource_server_identifier, permission_name, created_at)
      VALUES (${roleId}, ${p.resource_server_identifier}, ${p.permission_name}, ${now})`;
  }
  return checked;
}

/** Removes permissions from a role; permissions it does not hold are ignored. */
export function removeRolePermissions(sql: Sql, roleId: string, refs: readonly PermissionRef[]): Result<PermissionRef[]> {
  if (!getRole(sql, roleId)) return notFound();
  const unique = uniquePermissions(refs);
  for (const p of unique) {
    sql.run`DELETE FROM role_permissions
      WHERE role_id = ${roleId} AND resource_server_identifier = ${p.resource_server_identifier} AND permission_name = ${p.permission_name}`;
  }
  return ok(unique);
}

/** A role's permissions ordered by API identifier, then name (SPEC §4.3 rule 2), in either window. */
export function listRolePermissions(sql: Sql, roleId: string, window: PermissionWindow): Result<ListPage<PermissionRecord>> {
  if (!getRole(sql, roleId)) return notFound();
  type Ref = PermissionRef;
  let rows: Ref[];
  let total: number | null = null;
  if ("offset" in window) {
    rows = sql.all<Ref>`SELECT resource_server_identifier, permission_name FROM role_permissions WHERE role_id = ${roleId}
      ORDER BY resource_server_identifier, permission_name LIMIT ${window.limit} OFFSET ${window.offset}`;
    total = sql.first<{ n: number }>`SELECT count(*) AS n FROM role_permissions WHERE role_id = ${roleId}`?.n ?? 0;
  } else {
    const after = window.after ?? { resource_server_identifier: "", permission_name: "" };
    rows = sql.all<Ref>`SELECT resource_server_identifier, permission_name FROM role_permissions
      WHERE role_id = ${roleId} AND (resource_server_identifier, permission_name) > (${after.resource_server_identifier}, ${after.permission_name})
      ORDER BY resource_server_identifier, permission_name LIMIT ${window.limit}`;
  }
  return ok({ items: describePermissions(sql, rows), total });
}

/** Assigns a role to users, all or nothing: an unknown role or user is 404 and nothing is written. */
export function assignRoleUsers(sql: Sql, roleId: string, userIds: readonly string[], now: number): Result<string[]> {
  if (!getRole(sql, roleId)) return notFound();
  const unique = [...new Set(userIds)];
  for (const userId of unique) {
    if (!sql.first`SELECT 1 FROM users WHERE user_id = ${userId}`) return fail("inexistent_user");
  }
  for (const userId of unique) {
    sql.run`INSERT OR IGNORE INTO user_roles (user_id, role_id, created_at) VALUES (${userId}, ${roleId}, ${now})`;
  }
  return ok(unique);
}

const toMember = (r: Row): RoleMemberRecord => ({
  user_id: String(r.user_id),
  email: (r.email as string | null) ?? null,
  picture: (r.picture as string | null) ?? null,
  name: (r.name as string | null) ?? null,
  created_at: iso(r.created_at as number) as string,
});

/** Members of a role, newest assignment first (users read from the users table, never written here). */
export function listRoleMembers(sql: Sql, roleId: string, window: ListWindow): Result<ListPage<RoleMemberRecord>> {
  if (!getRole(sql, roleId)) return notFound();
  if ("offset" in window) {
    const rows = sql.all<Row>`SELECT ur.user_id, u.email, u.picture, u.name, ur.created_at
      FROM user_roles ur JOIN users u ON u.user_id = ur.user_id WHERE ur.role_id = ${roleId}
      ORDER BY ur.created_at DESC, ur.user_id DESC LIMIT ${window.limit} OFFSET ${window.offset}`;
    const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM user_roles ur JOIN users u ON u.user_id = ur.user_id
      WHERE ur.role_id = ${roleId}`?.n ?? 0;
    return ok({ items: rows.map(toMember), total });
  }
  const after = window.after ?? { createdAt: Number.MAX_SAFE_INTEGER, id: "" };
  const rows = sql.all<Row>`SELECT ur.user_id, u.email, u.picture, u.name, ur.created_at
    FROM user_roles ur JOIN users u ON u.user_id = ur.user_id
    WHERE ur.role_id = ${roleId} AND (ur.created_at, ur.user_id) < (${after.createdAt}, ${after.id})
    ORDER BY ur.created_at DESC, ur.user_id DESC LIMIT ${window.limit}`;
  return ok({ items: rows.map(toMember), total: null });
}

/** The roles facade (`stub.roles(audit)`). Roles are not configuration: tokens read them from here. */
export class Roles extends TenantRpc {
  list(window: ListWindow, nameFilter?: string): ListPage<RoleRecord> {
    return this.read((sql) => listRoles(sql, window, nameFilter));
  }

  get(id: string): RoleRecord | null {
    return this.read((sql) => getRole(sql, id));
  }

  create(role: NewRole): Result<RoleRecord> {
    return this.commit((tx) => audited(tx, this.audit, createRole(tx.sql, role, tx.now), { entity: "role", action: "created", id: role.id, after: (r) => r }));
  }

  update(id: string, patch: RolePatch): Result<RoleRecord> {
    return this.commit((tx) => {
      const before = getRole(tx.sql, id);
      return audited(tx, this.audit, updateRole(tx.sql, id, patch, tx.now), { entity: "role", action: "updated", id, before, after: (r) => r });
    });
  }

  delete(id: string): Result<true> {
    return this.commit((tx) => {
      const before = getRole(tx.sql, id);
      return audited(tx, this.audit, deleteRole(tx.sql, id), { entity: "role", action: "deleted", id, before });
    });
  }

  permissions(roleId: string, window: PermissionWindow): Result<ListPage<PermissionRecord>> {
    return this.read((sql) => listRolePermissions(sql, roleId, window));
  }

  addPermissions(roleId: string, refs: PermissionRef[]): Result<PermissionRef[]> {
    return this.commit((tx) =>
      audited(tx, this.audit, addRolePermissions(tx.sql, roleId, refs, tx.now), {
        entity: "role_permissions",
        action: "created",
        id: roleId,
        after: (permissions) => ({ permissions }),
      }),
    );
  }

  removePermissions(roleId: string, refs: PermissionRef[]): Result<PermissionRef[]> {
    return this.commit((tx) =>
      audited(tx, this.audit, removeRolePermissions(tx.sql, roleId, refs), {
        entity: "role_permissions",
        action: "deleted",
        id: roleId,
        before: { permissions: uniquePermissions(refs) },
      }),
    );
  }

  members(roleId: string, window: ListWindow): Result<ListPage<RoleMemberRecord>> {
    return this.read((sql) => listRoleMembers(sql, roleId, window));
  }

  assignUsers(roleId: string, userIds: string[]): Result<string[]> {
    return this.commit((tx) =>
      audited(tx, this.audit, assignRoleUsers(tx.sql, roleId, userIds, tx.now), {
        entity: "role_members",
        action: "created",
        id: roleId,
        after: (users) => ({ users }),
        status: 200,
      }),
    );
  }
}
