import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage, ManagementStanding, TokenSubject } from "../../../shared/types";
import type { PermissionRef, PermissionSource, RoleRecord, UserPermissionRecord } from "../../../shared/schemas/roles";
import { binaryOrder, type Sql } from "../../sql";
import { audited } from "../core/events";
import { isMember } from "../organizations/organization-members";
import { byIdentifierThenName, checkPermissions, describePermissions, uniquePermissions } from "../oauth/permissions";
import { getRole } from "./roles";
import { TenantRpc } from "../core/rpc";
import { getUser, getUserWithoutIdentities } from "../users/users";

/**
 * What a user may do (SPEC §4.2 `/users/{id}/roles`, `/users/{id}/permissions`): the roles assigned to the
 * user, permissions assigned directly, and their union as access tokens see it. The users table is only
 * read here; the user's record belongs to the users module.
 */

type OffsetWindow = { offset: number; limit: number };

const userExists = (sql: Sql, userId: string) => sql.first`SELECT 1 FROM users WHERE user_id = ${userId}` !== undefined;
const noUser = () => fail("inexistent_user");

/** The user's roles, newest role first. */
export function listUserRoles(sql: Sql, userId: string, window: OffsetWindow): Result<ListPage<RoleRecord>> {
  if (!userExists(sql, userId)) return noUser();
  const ids = sql.all<{ id: string }>`SELECT r.id FROM user_roles ur JOIN roles r ON r.id = ur.role_id WHERE ur.user_id = ${userId}
    ORDER BY r.created_at DESC, r.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`;
  const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM user_roles WHERE user_id = ${userId}`?.n ?? 0;
  return ok({ items: ids.map((r) => getRole(sql, r.id) as RoleRecord), total });
}

/** Assigns roles to a user, all or nothing (unknown user or role: 404). */
export function assignUserRoles(sql: Sql, userId: string, roleIds: readonly string[], now: number): Result<string[]> {
  if (!userExists(sql, userId)) return noUser();
  const unique = [...new Set(roleIds)];
  if (unique.some((id) => !getRole(sql, id))) return fail("inexistent_role");
  for (const roleId of unique) {
    sql.run`INSERT OR IGNORE INTO user_roles (user_id, role_id, created_at) VALUES (${userId}, ${roleId}, ${now})`;
  }
  return ok(unique);
}

/** Removes roles from a user; roles the user does not hold are ignored. */
export function removeUserRoles(sql: Sql, userId: string, roleIds: readonly string[]): Result<string[]> {
  if (!userExists(sql, userId)) return noUser();
  const unique = [...new Set(roleIds)];
  for (const roleId of unique) sql.run`DELETE FROM user_roles WHERE user_id = ${userId} AND role_id = ${roleId}`;
  return ok(unique);
}

export function addUserPermissions(sql: Sql, userId: string, refs: readonly PermissionRef[], now: number): Result<PermissionRef[]> {
  if (!userExists(sql, userId)) return noUser();
  const checked = checkPermissions(sql, refs);
  if (!checked.ok) return checked;
  for (const p of checked.value) {
    sql.run`INSERT OR IGNORE INTO user_permissions (user_id, resource_server_identifier, permission_name, created_at)
      VALUES (${userId}, ${p.resource_server_identifier}, ${p.permission_name}, ${now})`;
  }
  return checked;
}

/** Removes direct permissions (a permission held through a role stays until the role goes). */
export function removeUserPermissions(sql: Sql, userId: string, refs: readonly PermissionRef[]): Result<PermissionRef[]> {
  if (!userExists(sql, userId)) return noUser();
  const unique = uniquePermissions(refs);
  for (const p of unique) {
    sql.run`DELETE FROM user_permissions
      WHERE user_id = ${userId} AND resource_server_identifier = ${p.resource_server_identifier} AND permission_name = ${p.permission_name}`;
  }
  return ok(unique);
}

type SourcedRow = PermissionRef & PermissionSource;

/**
 * Every permission the user holds, directly and through roles, each once with all of its sources
 * (`DIRECT` with empty id and name, `ROLE` with the role's), ordered by API identifier, then name.
 */
export function listUserPermissions(sql: Sql, userId: string, window: OffsetWindow): Result<ListPage<UserPermissionRecord>> {
  if (!userExists(sql, userId)) return noUser();
  const rows = sql.all<SourcedRow>`
    SELECT resource_server_identifier, permission_name, '' AS source_id, '' AS source_name, 'DIRECT' AS source_type
      FROM user_permissions WHERE user_id = ${userId}
    UNION ALL
    SELECT rp.resource_server_identifier, rp.permission_name, r.id, r.name, 'ROLE'
      FROM user_roles ur JOIN roles r ON r.id = ur.role_id JOIN role_permissions rp ON rp.role_id = r.id
      WHERE ur.user_id = ${userId}`;
  const merged = new Map<string, PermissionRef & { sources: PermissionSource[] }>();
  for (const row of rows) {
    const key = JSON.stringify([row.resource_server_identifier, row.permission_name]);
    const entry = merged.get(key) ?? { resource_server_identifier: row.resource_server_identifier, permission_name: row.permission_name, sources: [] };
    entry.sources.push({ source_id: row.source_id, source_name: row.source_name, source_type: row.source_type });
    merged.set(key, entry);
  }
  const all = [...merged.values()].sort(byIdentifierThenName);
  for (const p of all) p.sources.sort((a, b) => (a.source_type === b.source_type ? a.source_name.localeCompare(b.source_name) : a.source_type === "DIRECT" ? -1 : 1));
  const page = all.slice(window.offset, window.offset + window.limit);
  return ok({ items: describePermissions(sql, page), total: all.length });
}

/**
 * The names of the permissions a user holds on one API, directly or through roles, sorted. In a login in an
 * organization, the roles the user holds as its member count too (issue 11: member roles apply when the
 * user logs in through the organization).
 */
export function permissionNames(sql: Sql, userId: string, identifier: string, organizationId: string | null = null): string[] {
  return sql
    .all<{ name: string }>`
      SELECT permission_name AS name FROM user_permissions WHERE user_id = ${userId} AND resource_server_identifier = ${identifier}
      UNION
      SELECT rp.permission_name FROM user_roles ur JOIN role_permissions rp ON rp.role_id = ur.role_id
        WHERE ur.user_id = ${userId} AND rp.resource_server_identifier = ${identifier}
      UNION
      SELECT rp.permission_name FROM organization_member_roles mr JOIN role_permissions rp ON rp.role_id = mr.role_id
        WHERE mr.organization_id = ${organizationId} AND mr.user_id = ${userId} AND rp.resource_server_identifier = ${identifier}
      ORDER BY name`
    .map((r) => r.name);
}

/**
 * Where a user stands behind its management token (issue 25 finding 5): blocked or missing users stand
 * nowhere; in an organization, membership and the permissions held on `identifier` there, read as the
 * login read them (permissionNames), so a token keeps only what the user would get by logging in now.
 */
export function managementStanding(sql: Sql, userId: string, organizationId: string | null, identifier: string): ManagementStanding {
  const row = sql.first<{ blocked: number }>`SELECT blocked FROM users WHERE user_id = ${userId}`;
  if (!row) return { user: "missing", member: false, permissions: [] };
  if (row.blocked) return { user: "blocked", member: false, permissions: [] };
  if (!organizationId || !isMember(sql, organizationId, userId)) return { user: "active", member: false, permissions: [] };
  return { user: "active", member: true, permissions: permissionNames(sql, userId, identifier, organizationId) };
}

/**
 * The user and its permissions on every API that enforces RBAC: what a token needs, in one read. Single-table
 * statements, merged, deduplicated and sorted here: in a Durable Object each join, UNION or ORDER BY costs
 * tens of microseconds even over no rows (measured: the one-statement UNION of joins took 110 µs for four
 * permissions, these take about a quarter of it), and the refresh grant makes this read on every rotation.
 * `withIdentities` false: the user's `identities` are left empty (see getUserWithoutIdentities). `withPermissions`
 * false (the caller's snapshot has no API that enforces RBAC, so it would use none): `permissions` is empty and
 * neither the user's permissions nor its roles are read.
 */
export function tokenSubject(sql: Sql, userId: string, withIdentities = true, withPermissions = true): TokenSubject {
  const user = withIdentities ? getUser(sql, userId) : getUserWithoutIdentities(sql, userId);
  if (!withPermissions) return { user, permissions: {} };
  const rows = sql.all<{ api: string; name: string }>`SELECT resource_server_identifier AS api, permission_name AS name
    FROM user_permissions WHERE user_id = ${userId}`;
  for (const { role_id } of sql.all<{ role_id: string }>`SELECT role_id FROM user_roles WHERE user_id = ${userId}`) {
    rows.push(...sql.all<{ api: string; name: string }>`SELECT resource_server_identifier AS api, permission_name AS name
      FROM role_permissions WHERE role_id = ${role_id}`);
  }
  const permissions: Record<string, string[]> = {};
  if (rows.length > 0) {
    const enforced = new Set(sql.all<{ identifier: string }>`SELECT identifier FROM resource_servers WHERE enforce_policies = 1`.map((r) => r.identifier));
    const byApi = new Map<string, Set<string>>();
    for (const row of rows) {
      if (!enforced.has(row.api)) continue;
      const names = byApi.get(row.api) ?? new Set<string>();
      names.add(row.name);
      byApi.set(row.api, names);
    }
    for (const api of [...byApi.keys()].sort(binaryOrder)) permissions[api] = [...(byApi.get(api) ?? [])].sort(binaryOrder);
  }
  return { user, permissions };
}


/** A user's roles and direct permissions (`stub.userAuthorization(audit)`); reads for tokens too. */
export class UserAuthorization extends TenantRpc {
  roles(userId: string, window: OffsetWindow): Result<ListPage<RoleRecord>> {
    return this.read((sql) => listUserRoles(sql, userId, window));
  }

  assignRoles(userId: string, roleIds: string[]): Result<string[]> {
    return this.commit((tx) =>
      audited(tx, this.audit, assignUserRoles(tx.sql, userId, roleIds, tx.now), {
        entity: "user_roles",
        action: "created",
        id: userId,
        after: (roles) => ({ roles }),
        status: 204,
      }),
    );
  }

  removeRoles(userId: string, roleIds: string[]): Result<string[]> {
    return this.commit((tx) =>
      audited(tx, this.audit, removeUserRoles(tx.sql, userId, roleIds), {
        entity: "user_roles",
        action: "deleted",
        id: userId,
        before: { roles: [...new Set(roleIds)] },
      }),
    );
  }

  permissions(userId: string, window: OffsetWindow): Result<ListPage<UserPermissionRecord>> {
    return this.read((sql) => listUserPermissions(sql, userId, window));
  }

  addPermissions(userId: string, refs: PermissionRef[]): Result<PermissionRef[]> {
    return this.commit((tx) =>
      audited(tx, this.audit, addUserPermissions(tx.sql, userId, refs, tx.now), {
        entity: "user_permissions",
        action: "created",
        id: userId,
        after: (permissions) => ({ permissions }),
      }),
    );
  }

  removePermissions(userId: string, refs: PermissionRef[]): Result<PermissionRef[]> {
    return this.commit((tx) =>
      audited(tx, this.audit, removeUserPermissions(tx.sql, userId, refs), {
        entity: "user_permissions",
        action: "deleted",
        id: userId,
        before: { permissions: uniquePermissions(refs) },
      }),
    );
  }

  /** The permission names the user holds on one API (implicit and hybrid responses, token exchange). */
  permissionNames(userId: string, identifier: string, organizationId: string | null = null): string[] {
    return this.read((sql) => permissionNames(sql, userId, identifier, organizationId));
  }

  /**
   * Management auth's read of an operator's console token (issue 30): the user and its permissions on the
   * management API through its roles outside any organization and its direct permissions.
   */
  operatorStanding(userId: string, identifier: string): ManagementStanding {
    return this.read((sql) => {
      const row = sql.first<{ blocked: number }>`SELECT blocked FROM users WHERE user_id = ${userId}`;
      if (!row) return { user: "missing", member: false, permissions: [] };
      if (row.blocked) return { user: "blocked", member: false, permissions: [] };
      return { user: "active", member: false, permissions: permissionNames(sql, userId, identifier, null) };
    });
  }

  /** Management auth's read of a user-shaped token's user, at each request (see {@link managementStanding}). */
  managementStanding(userId: string, organizationId: string | null, identifier: string): ManagementStanding {
    return this.read((sql) => managementStanding(sql, userId, organizationId, identifier));
  }
}
