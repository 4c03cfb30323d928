import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage, ListWindow } from "../../../shared/types";
import type { NewUserGrant, UserGrantRecord } from "../../../shared/schemas/client-grants";
import { json, type Sql } from "../../sql";
import { audited } from "../core/events";
import { listRows } from "../core/listing";
import { TenantRpc } from "../core/rpc";

/**
 * User consent (issue 29 point 2): one row per (user, client, audience) holding the scopes the user
 * granted; a later consent adds scopes to it. Deleting a grant makes the consent page come back.
 */

const toGrant = (row: Record<string, unknown>): UserGrantRecord => ({
  id: String(row.id),
  user_id: String(row.user_id),
  client_id: String(row.client_id),
  audience: String(row.audience),
  scope: json<string[]>(row.scope as string, []),
  created_at: new Date(Number(row.created_at)).toISOString(),
  updated_at: new Date(Number(row.updated_at)).toISOString(),
});

export function getUserGrant(sql: Sql, id: string): UserGrantRecord | null {
  const row = sql.first<Record<string, unknown>>`SELECT * FROM user_grants WHERE id = ${id}`;
  return row ? toGrant(row) : null;
}

/** The scopes the user already granted the client for the audience (empty when none). */
export function grantedScopes(sql: Sql, userId: string, clientId: string, audience: string): string[] {
  const row = sql.first<{ scope: string }>`SELECT scope FROM user_grants WHERE user_id = ${userId} AND client_id = ${clientId} AND audience = ${audience}`;
  return json<string[]>(row?.scope, []);
}

/** Adds the scopes to the (user, client, audience) row, creating it; answers the row. */
export function recordUserGrant(sql: Sql, grant: NewUserGrant, now: number): UserGrantRecord {
  const scope = [...new Set([...grantedScopes(sql, grant.user_id, grant.client_id, grant.audience), ...grant.scope])];
  sql.run`INSERT INTO user_grants (id, user_id, client_id, audience, scope, created_at, updated_at)
    VALUES (${grant.id}, ${grant.user_id}, ${grant.client_id}, ${grant.audience}, ${JSON.stringify(scope)}, ${now}, ${now})
    ON CONFLICT (user_id, client_id, audience) DO UPDATE SET scope = excluded.scope, updated_at = excluded.updated_at`;
  const row = sql.first<Record<string, unknown>>`SELECT * FROM user_grants WHERE user_id = ${grant.user_id} AND client_id = ${grant.client_id} AND audience = ${grant.audience}`;
  return toGrant(row as Record<string, unknown>);
}

export type UserGrantFilter = { user_id?: string; client_id?: string; audience?: string };

/** Newest first, optionally for one user, client and/or audience. */
export function listUserGrants(sql: Sql, window: ListWindow, filter: UserGrantFilter): ListPage<UserGrantRecord> {
  const { rows, total } = listRows(sql, "user_grants", window, filter);
  return { items: rows.map(toGrant), total };
}

/** The user-grants facade (`stub.userGrants()`). */
export class UserGrants extends TenantRpc {
  get(id: string): UserGrantRecord | null {
    return this.read((sql) => getUserGrant(sql, id));
  }

  list(window: ListWindow, filter: UserGrantFilter): ListPage<UserGrantRecord> {
    return this.read((sql) => listUserGrants(sql, window, filter));
  }

  granted(userId: string, clientId: string, audience: string): string[] {
    return this.read((sql) => grantedScopes(sql, userId, clientId, audience));
  }

  delete(id: string): Result<true> {
    return this.commit((tx) => {
      const before = getUserGrant(tx.sql, id);
      const result: Result<true> = before && tx.sql.run`DELETE FROM user_grants WHERE id = ${id}` > 0 ? ok(true) : fail("inexistent_grant");
      return audited(tx, this.audit, result, { entity: "grant", action: "deleted", id, before });
    });
  }

  /** Every grant of the user (DELETE /api/v2/grants?user_id=); answers how many went. */
  deleteAllOf(userId: string): number {
    return this.commit((tx) => {
      const ids = tx.sql.exec<{ id: string }>("SELECT id FROM user_grants WHERE user_id = ?", userId).map((r) => r.id);
      for (const id of ids) {
        const before = getUserGrant(tx.sql, id);
        tx.sql.run`DELETE FROM user_grants WHERE id = ${id}`;
        audited(tx, this.audit, ok(true), { entity: "grant", action: "deleted", id, before });
      }
      return ids.length;
    });
  }
}
