/**
 * Account linking (SPEC §2.12, §4.2 POST/DELETE /users/{id}/identities): a secondary account gets
 * `linked_to`, disappears from listings and shows as an identity of its primary; unlinking makes it a user
 * of its own again. The identities table follows `linked_to` by trigger (migration 0006).
 */
import { fail, ok, type Result } from "../../../shared/errors";
import type { IdentityRef, UserIdentity, UserRecord } from "../../../shared/schemas/users";
import type { Sql } from "../../sql";
import { getUser, type UserRow } from "./user-rows";

/** What a link or unlink changed: the primary before and after, and its identities after. */
export interface LinkOutcome {
  before: UserRecord;
  after: UserRecord;
  identities: UserIdentity[];
  /** The secondary account linked or unlinked. */
  account: string;
}

/**
 * The account an identity reference names. The id may be bare (`abc`, pipes kept: `corp|123`) or carry its
 * provider prefix (`auth0|abc`); the bare reading is tried first, so an id that itself starts with the
 * provider's name is still found.
 */
function findAccount(sql: Sql, ref: IdentityRef): UserRow | undefined {
  const prefix = `${ref.provider}|`;
  const candidates = [ref.user_id, ...(ref.user_id.startsWith(prefix) ? [ref.user_id.slice(prefix.length)] : [])];
  for (const bare of candidates) {
    const row = sql.first<UserRow>`SELECT u.*, c.id AS connection_id FROM identities i
      JOIN users u ON u.user_id = i.source_user_id LEFT JOIN connections c ON c.name = u.connection
      WHERE i.provider = ${ref.provider} AND i.identity_user_id = ${bare}`;
    if (row) return row;
  }
  return undefined;
}

function outcome(sql: Sql, before: UserRecord, account: string): LinkOutcome {
  const after = getUser(sql, before.user_id) as UserRecord;
  return { before, after, identities: after.identities, account };
}

/**
 * Links the account `ref` names to the primary user `primaryId`. Refused: an unknown primary (404), an
 * unknown account or one of another connection than `connection_id` (400), the user itself (400), an
 * account already linked (400). Accounts already linked to the secondary move to the primary with it.
 */
export function linkAccount(sql: Sql, primaryId: string, ref: IdentityRef, now: number): Result<LinkOutcome> {
  const before = getUser(sql, primaryId);
  if (!before) return fail("inexistent_user");
  const secondary = findAccount(sql, ref);
  if (!secondary || (ref.connection_id !== undefined && secondary.connection_id !== ref.connection_id)) {
    return fail("link_inexistent_identity");
  }
  const account = String(secondary.user_id);
  if (account === primaryId) return fail("link_self");
  if (secondary.linked_to !== null) return fail("identity_already_linked");
  // The secondary, then the accounts already linked to it in their order: they join the primary in that order.
  const moved = [account, ...sql.all<{ id: string }>`SELECT source_user_id AS id FROM identities
    WHERE user_id = ${account} AND source_user_id <> ${account} ORDER BY linked_at, source_user_id`.map((r) => r.id)];
  sql.run`UPDATE users SET linked_to = ${primaryId}, updated_at = ${now} WHERE user_id IN (SELECT value FROM json_each(${JSON.stringify(moved)}))`;
  for (const [order, id] of moved.entries()) sql.run`UPDATE identities SET linked_at = ${now + order} WHERE source_user_id = ${id}`;
  sql.run`UPDATE users SET updated_at = ${now} WHERE user_id = ${primaryId}`;
  return ok(outcome(sql, before, account));
}

/**
 * Unlinks the identity `provider`/`bareId` from the primary user: the account becomes a user of its own.
 * Refused: an unknown primary, an identity the user does not have (404), the primary identity (400).
 */
export function unlinkAccount(sql: Sql, primaryId: string, provider: string, bareId: string, now: number): Result<LinkOutcome> {
  const before = getUser(sql, primaryId);
  if (!before) return fail("inexistent_user");
  const row = sql.first<{ source: string }>`SELECT source_user_id AS source FROM identities
    WHERE user_id = ${primaryId} AND provider = ${provider} AND identity_user_id = ${bareId}`;
  if (!row) return fail("inexistent_identity");
  if (row.source === primaryId) return fail("unlink_main_identity");
  sql.run`UPDATE users SET linked_to = NULL, updated_at = ${now} WHERE user_id = ${row.source}`;
  sql.run`UPDATE identities SET linked_at = ${now} WHERE source_user_id = ${row.source}`;
  sql.run`UPDATE users SET updated_at = ${now} WHERE user_id = ${primaryId}`;
  return ok(outcome(sql, before, row.source));
}
