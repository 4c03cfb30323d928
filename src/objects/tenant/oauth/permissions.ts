import { fail, ok, type Result } from "../../../shared/errors";
import type { PermissionRecord, PermissionRef } from "../../../shared/schemas/roles";
import type { ResourceServerRecord } from "../../../shared/schemas/resource-servers";
import type { Sql } from "../../sql";
import { toResourceServer } from "./rows";

/**
 * Permissions (SPEC §4.2 roles): a permission is one scope value of one API, named by the API's identifier.
 * These helpers are shared by roles and by users' direct permissions: validation against the APIs, the
 * listing shape, and pruning when an API or one of its scopes goes away.
 */

function apiByIdentifier(sql: Sql, identifier: string): ResourceServerRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM resource_servers WHERE identifier = ${identifier}`;
  return row ? toResourceServer(row) : null;
}

/** The same permission named twice counts once (order of first appearance kept). */
export function uniquePermissions(refs: readonly PermissionRef[]): PermissionRef[] {
  const seen = new Set<string>();
  const out: PermissionRef[] = [];
  for (const ref of refs) {
    const key = JSON.stringify([ref.resource_server_identifier, ref.permission_name]);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ resource_server_identifier: ref.resource_server_identifier, permission_name: ref.permission_name });
  }
  return out;
}

/**
 * Checks permissions before they are assigned: each API must exist (404, naming it) and define every
 * permission asked of it as one of its scopes (400, naming the missing ones). Nothing is written on failure.
 */
export function checkPermissions(sql: Sql, refs: readonly PermissionRef[]): Result<PermissionRef[]> {
  const unique = uniquePermissions(refs);
  const byApi = new Map<string, string[]>();
  for (const ref of unique) byApi.set(ref.resource_server_identifier, [...(byApi.get(ref.resource_server_identifier) ?? []), ref.permission_name]);
  for (const [identifier, names] of byApi) {
    const api = apiByIdentifier(sql, identifier);
    if (!api) return fail("inexistent_permission_api", { identifier });
    const defined = new Set(api.scopes.map((s) => s.value));
    const missing = names.filter((name) => !defined.has(name));
    if (missing.length) return fail("undefined_permissions", { identifier, permissions: missing.join(", ") });
  }
  return ok(unique);
}

/** Joins each permission's API name and scope description (the listing shape of the reference platform). */
export function describePermissions<T extends PermissionRef>(sql: Sql, refs: readonly T[]): (T & PermissionRecord)[] {
  const apis = new Map<string, ResourceServerRecord | null>();
  return refs.map((ref) => {
    if (!apis.has(ref.resource_server_identifier)) apis.set(ref.resource_server_identifier, apiByIdentifier(sql, ref.resource_server_identifier));
    const api = apis.get(ref.resource_server_identifier) ?? null;
    const scope = api?.scopes.find((s) => s.value === ref.permission_name);
    return { ...ref, resource_server_name: api?.name ?? ref.resource_server_identifier, description: scope?.description ?? null };
  });
}

/**
 * Removes every role and user permission of an API that it no longer defines (all of them when `defined` is
 * empty: the API was deleted), so no token or listing ever shows a permission its API lacks.
 */
export function prunePermissions(sql: Sql, identifier: string, defined: ReadonlySet<string>): void {
  const held = [
    ...sql.all<{ name: string }>`SELECT DISTINCT permission_name AS name FROM role_permissions WHERE resource_server_identifier = ${identifier}`,
    ...sql.all<{ name: string }>`SELECT DISTINCT permission_name AS name FROM user_permissions WHERE resource_server_identifier = ${identifier}`,
  ];
  for (const name of new Set(held.map((h) => h.name))) {
    if (defined.has(name)) continue;
    sql.run`DELETE FROM role_permissions WHERE resource_server_identifier = ${identifier} AND permission_name = ${name}`;
    sql.run`DELETE FROM user_permissions WHERE resource_server_identifier = ${identifier} AND permission_name = ${name}`;
  }
}

/** Orders permissions the way every permission list does: API identifier, then permission name, ascending. */
export const byIdentifierThenName = (a: PermissionRef, b: PermissionRef): number =>
  a.resource_server_identifier < b.resource_server_identifier
    ? -1
    : a.resource_server_identifier > b.resource_server_identifier
      ? 1
      : a.permission_name < b.permission_name
        ? -1
        : a.permission_name > b.permission_name
          ? 1
          : 0;
