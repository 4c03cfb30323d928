import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage, ListWindow } from "../../../shared/types";
import type { OrganizationMemberRecord, OrganizationRecord, OrganizationRoleRecord } from "../../../shared/schemas/organizations";
import { iso, type Sql, type SqlValue } from "../../sql";
import { getOrganization, toOrganization } from "./organizations";

/**
 * Organization members and their roles (SPEC §4.2 "Organizations"). Members are users of the tenant: the
 * users table is only read here (its profile columns); deleting a user removes its memberships by the
 * trigger of migration 0010 on users.
 */

type Row = Record<string, unknown>;
const text = (v: unknown) => (v === null || v === undefined ? null : String(v));

function toMember(r: Row): OrganizationMemberRecord {
  return {
    user_id: String(r.user_id),
    email: text(r.email),
    name: text(r.name),
    picture: text(r.picture),
    created_at: iso(r.created_at as number) as string,
  };
}

export const isMember = (sql: Sql, orgId: string, userId: string) =>
  Boolean(sql.first`SELECT 1 FROM organization_members WHERE organization_id = ${orgId} AND user_id = ${userId}`);

/** Users among `userIds` that do not exist (none: all do). */
function missingUsers(sql: Sql, userIds: readonly string[]): string[] {
  return userIds.filter((id) => !sql.first`SELECT 1 FROM users WHERE user_id = ${id}`);
}

/** Adds members (idempotent for existing ones); every user must exist. Returns the ids newly added. */
export function addMembers(sql: Sql, orgId: string, userIds: readonly string[], now: number): Result<string[]> {
  if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
  if (missingUsers(sql, userIds).length) return fail("inexistent_user");
  const added: string[] = [];
  for (const userId of new Set(userIds)) {
    const wrote = sql.run`INSERT INTO organization_members (organization_id, user_id, created_at)
      VALUES (${orgId}, ${userId}, ${now}) ON CONFLICT DO NOTHING`;
    if (wrote) added.push(userId);
  }
  return ok(added);
}

/** Removes members (and their roles in the organization); users that are not members are ignored. */
export function removeMembers(sql: Sql, orgId: string, userIds: readonly string[]): Result<string[]> {
  if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
  const removed: string[] = [];
  for (const userId of new Set(userIds)) {
    sql.run`DELETE FROM organization_member_roles WHERE organization_id = ${orgId} AND user_id = ${userId}`;
    if (sql.run`DELETE FROM organization_members WHERE organization_id = ${orgId} AND user_id = ${userId}`) removed.push(userId);
  }
  return ok(removed);
}

/** Members newest first (membership created_at, then user_id): an offset window or a keyset page. */
export function listMembers(sql: Sql, orgId: string, window: ListWindow): Result<ListPage<OrganizationMemberRecord>> {
  if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
  const base = `SELECT m.user_id, m.created_at, u.email, u.name, u.picture FROM organization_members m
    JOIN users u ON u.user_id = m.user_id WHERE m.organization_id = ?`;
  const order = " ORDER BY m.created_at DESC, m.user_id DESC LIMIT ?";
  if ("offset" in window) {
    const rows = sql.exec<Row>(`${base}${order} OFFSET ?`, orgId, window.limit, window.offset);
    const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM organization_members m JOIN users u ON u.user_id = m.user_id
      WHERE m.organization_id = ${orgId}`?.n ?? 0;
    return ok({ items: rows.map(toMember), total });
  }
  const values: SqlValue[] = [orgId];
  let after = "";
  if (window.after) {
    after = " AND (m.created_at, m.user_id) < (?, ?)";
    values.push(window.after.createdAt, window.after.id);
  }
  return ok({ items: sql.exec<Row>(`${base}${after}${order}`, ...values, window.limit).map(toMember), total: null });
}

/** The organizations a user belongs to, newest organization first. Null when the user does not exist. */
export function listUserOrganizations(sql: Sql, userId: string, window: { offset: number; limit: number }): ListPage<OrganizationRecord> | null {
  if (!sql.first`SELECT 1 FROM users WHERE user_id = ${userId}`) return null;
  const rows = sql.all<Row>`SELECT o.* FROM organizations o JOIN organization_members m ON m.organization_id = o.id
    WHERE m.user_id = ${userId} ORDER BY o.created_at DESC, o.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`;
  const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM organization_members WHERE user_id = ${userId}`?.n ?? 0;
  return { items: rows.map(toOrganization), total };
}

/** Role ids among `roleIds` that do not exist. */
export function missingRoles(sql: Sql, roleIds: readonly string[]): string[] {
  if (!roleIds.length) return [];
  return roleIds.filter((id) => !sql.first`SELECT 1 FROM roles WHERE id = ${id}`);
}

/** Gives a member roles in the organization (idempotent); the caller checked that they exist. */
export function grantMemberRoles(sql: Sql, orgId: string, userId: string, roleIds: readonly string[], now: number): void {
  for (const roleId of new Set(roleIds)) {
    sql.run`INSERT INTO organization_member_roles (organization_id, user_id, role_id, created_at)
      VALUES (${orgId}, ${userId}, ${roleId}, ${now}) ON CONFLICT DO NOTHING`;
  }
}

/** Checks that the organization exists and the user is its member. */
function memberCheck(sql: Sql, orgId: string, userId: string): Result<true> {
  if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
  if (!isMember(sql, orgId, userId)) return fail("inexistent_organization_member");
  return ok(true);
}

export function assignMemberRoles(sql: Sql, orgId: string, userId: string, roleIds: readonly string[], now: number): Result<true> {
  const check = memberCheck(sql, orgId, userId);
  if (!check.ok) return check;
  if (missingRoles(sql, roleIds).length) return fail("inexistent_role");
  grantMemberRoles(sql, orgId, userId, roleIds, now);
  return ok(true);
}

export function removeMemberRoles(sql: Sql, orgId: string, userId: string, roleIds: readonly string[]): Result<true> {
  const check = memberCheck(sql, orgId, userId);
  if (!check.ok) return check;
  for (const roleId of new Set(roleIds)) {
    sql.run`DELETE FROM organization_member_roles WHERE organization_id = ${orgId} AND user_id = ${userId} AND role_id = ${roleId}`;
  }
  return ok(true);
}

/** A member's roles in the organization, by name. */
export function listMemberRoles(sql: Sql, orgId: string, userId: string, window: { offset: number; limit: number }): Result<ListPage<OrganizationRoleRecord>> {
  const check = memberCheck(sql, orgId, userId);
  if (!check.ok) return check;
  const rows = sql.all<Row>`SELECT r.id, r.name, r.description FROM organization_member_roles mr JOIN roles r ON r.id = mr.role_id
    WHERE mr.organization_id = ${orgId} AND mr.user_id = ${userId} ORDER BY r.name, r.id LIMIT ${window.limit} OFFSET ${window.offset}`;
  const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM organization_member_roles mr JOIN roles r ON r.id = mr.role_id
    WHERE mr.organization_id = ${orgId} AND mr.user_id = ${userId}`?.n ?? 0;
  return ok({ items: rows.map((r) => ({ id: String(r.id), name: String(r.name), description: text(r.description) })), total });
}

/** The roles of several members in one organization (for `fields=roles` on the members list). */
export function rolesOfMembers(sql: Sql, orgId: string, userIds: readonly string[]): Record<string, OrganizationRoleRecord[]> {
  const out: Record<string, OrganizationRoleRecord[]> = {};
  if (!userIds.length) return out;
  for (const userId of userIds) {
    out[userId] = sql
      .all<Row>`SELECT r.id, r.name, r.description FROM organization_member_roles mr JOIN roles r ON r.id = mr.role_id
        WHERE mr.organization_id = ${orgId} AND mr.user_id = ${userId} ORDER BY r.name, r.id`
      .map((r) => ({ id: String(r.id), name: String(r.name), description: text(r.description) }));
  }
  return out;
}

/** The organization's members holding a role there, by user id (GET /organizations/{id}/roles/{role_id}/members). */
export function listRoleMembers(
  sql: Sql,
  orgId: string,
  roleId: string,
  window: { offset: number; limit: number },
): Result<ListPage<{ user_id: string; email: string | null; picture: string | null; name: string | null }>> {
  if (!getOrganization(sql, orgId)) return fail("inexistent_organization");
  if (!sql.first`SELECT 1 FROM roles WHERE id = ${roleId}`) return fail("inexistent_role");
  const rows = sql.all<Row>`SELECT u.user_id, u.email, u.picture, u.name FROM organization_member_roles mr JOIN users u ON u.user_id = mr.user_id
    WHERE mr.organization_id = ${orgId} AND mr.role_id = ${roleId} ORDER BY u.user_id LIMIT ${window.limit} OFFSET ${window.offset}`;
  const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM organization_member_roles WHERE organization_id = ${orgId} AND role_id = ${roleId}`?.n ?? 0;
  return ok({ items: rows.map((r) => ({ user_id: String(r.user_id), email: text(r.email), picture: text(r.picture), name: text(r.name) })), total });
}
