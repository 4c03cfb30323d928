/**
 * Writing users (SPEC §4.2 "Users"): create, PATCH (the primary or one of its linked identities), delete.
 * Module functions over one transaction's SQL; the facade (users.ts) commits them with their events.
 * Passwords arrive hashed: bcrypt runs in the worker, never here.
 */
import { deleteMfaDataOfUser } from "./authentication-methods";
import { fail, ok, type Result } from "../../../shared/errors";
import { METADATA_MAX_BYTES, normalizeEmail } from "../../../shared/schemas/users";
import type { Json } from "../../../shared/types";
import type { NewUser, UserFieldPatch, UserPatch, UserRecord } from "../../../shared/schemas/users";
import type { Sql, SqlValue } from "../../sql";
import { getAccount, getUser, type UserRow, userRow } from "./user-rows";

const utf8Length = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

/** The duplicate a connection refuses: the same email, username (or, for SMS, phone number) twice. */
function duplicateIn(sql: Sql, connection: string, fields: { email?: string | null; username?: string | null; phone_number?: string | null }, self: string | null) {
  if (fields.email && sql.first`SELECT 1 FROM users WHERE connection = ${connection} AND email = ${fields.email} AND user_id IS NOT ${self}`) {
    return fail("user_exists");
  }
  if (fields.username && sql.first`SELECT 1 FROM users WHERE connection = ${connection} AND username = ${fields.username} AND user_id IS NOT ${self}`) {
    return fail("username_exists");
  }
  const sms = sql.first<{ strategy: string }>`SELECT strategy FROM connections WHERE name = ${connection}`?.strategy === "sms";
  if (sms && fields.phone_number && sql.first`SELECT 1 FROM users WHERE connection = ${connection} AND phone_number = ${fields.phone_number} AND user_id IS NOT ${self}`) {
    return fail("user_exists");
  }
  return null;
}

/** Inserts a user (sign-up or POST /users). Duplicate id, email, username or SMS phone in the connection: 409. */
export function createUser(sql: Sql, user: NewUser, now: number): Result<UserRecord> {
  const inserted = insertUser(sql, user, now);
  return inserted.ok ? ok(getUser(sql, user.user_id) as UserRecord) : inserted;
}

/**
 * The insert of {@link createUser} under the same rules, answering only the id: bulk import commits
 * hundreds of rows per chunk and needs no record (with its identities) read back for each.
 */
export function insertUser(sql: Sql, user: NewUser, now: number): Result<string> {
  const email = user.email === null ? null : normalizeEmail(user.email);
  if (userRow(sql, user.user_id)) return fail("user_exists");
  const duplicate = duplicateIn(sql, user.connection, { email, username: user.username, phone_number: user.phone_number }, null);
  if (duplicate) return duplicate;
  const handle = email ?? user.phone_number ?? user.username ?? null;
  sql.run`INSERT INTO users (user_id, connection, email, email_verified, username, phone_number, phone_verified, password_hash,
      name, given_name, family_name, nickname, picture, blocked, app_metadata, user_metadata, created_at, updated_at)
    VALUES (${user.user_id}, ${user.connection}, ${email}, ${user.email_verified}, ${user.username ?? null},
      ${user.phone_number ?? null}, ${user.phone_verified ?? false}, ${user.password_hash},
      ${user.name ?? handle}, ${user.given_name ?? null}, ${user.family_name ?? null},
      ${user.nickname ?? (email ? email.split("@")[0] : handle)}, ${user.picture ?? null}, ${user.blocked ?? false},
      ${user.app_metadata ?? {}}, ${user.user_metadata ?? {}}, ${now}, ${now})`;
  return ok(user.user_id);
}

/** Top-level merge (SPEC §4.2, the reference platform's PATCH): a null value removes the key; null clears all. */
function mergeMetadata(current: Record<string, Json>, patch: Record<string, Json | null> | null): Record<string, Json> {
  if (patch === null) return {};
  const out: Record<string, Json> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = value;
  }
  return out;
}

/** The account a PATCH writes: the primary, or the linked identity of `connection` (404 when it has none). */
function targetAccount(sql: Sql, primary: UserRecord, connection: string | undefined): Result<UserRow> {
  if (connection === undefined || connection === primary.connection) return ok(userRow(sql, primary.user_id) as UserRow);
  const row = sql.first<UserRow>`SELECT u.* FROM identities i JOIN users u ON u.user_id = i.source_user_id
    WHERE i.user_id = ${primary.user_id} AND i.connection = ${connection} ORDER BY i.linked_at LIMIT 1`;
  return row ? ok(row) : fail("inexistent_identity_connection", { connection });
}

const PATCHABLE: readonly (keyof UserFieldPatch)[] = [
  "email", "email_verified", "username", "phone_number", "phone_verified", "name", "given_name", "family_name", "nickname", "picture", "blocked",
];

/**
 * PATCH /users/{id}: the primary user, or with `connection` the linked identity of that connection. Returns
 * the primary (all identities) before and after. Changing the email unverifies it unless the same request
 * sets email_verified (the reference platform's rule).
 */
export function updateUser(sql: Sql, userId: string, patch: UserPatch, now: number): Result<{ before: UserRecord; after: UserRecord; account: string }> {
  const before = getUser(sql, userId);
  if (!before) return fail("inexistent_user");
  const target = targetAccount(sql, before, patch.connection);
  if (!target.ok) return target;
  const row = target.value;
  const accountId = String(row.user_id);
  const fields: UserFieldPatch = { ...patch.fields };
  if (typeof fields.email === "string") fields.email = normalizeEmail(fields.email);
  if (fields.email !== undefined && fields.email !== row.email && fields.email_verified === undefined) fields.email_verified = false;
  const duplicate = duplicateIn(sql, String(row.connection), { email: fields.email, username: fields.username, phone_number: fields.phone_number }, accountId);
  if (duplicate) return duplicate;

  const sets: string[] = [];
  const values: SqlValue[] = [];
  for (const key of PATCHABLE) {
    if (fields[key] === undefined) continue;
    sets.push(`${key} = ?`);
    values.push(fields[key]);
  }
  for (const key of ["app_metadata", "user_metadata"] as const) {
    const change = patch[key];
    if (change === undefined) continue;
    const merged = mergeMetadata(JSON.parse(String(row[key] ?? "{}")) as Record<string, Json>, change);
    if (utf8Length(merged) > METADATA_MAX_BYTES) return fail("metadata_too_large", { field: key, bytes: METADATA_MAX_BYTES });
    sets.push(`${key} = ?`);
    values.push(merged);
  }
  if (patch.password_hash !== undefined) {
    sets.push("password_hash = ?");
    values.push(patch.password_hash);
  }
  sets.push("updated_at = ?");
  values.push(now);
  sql.exec(`UPDATE users SET ${sets.join(", ")} WHERE user_id = ?`, ...values, accountId);
  if (accountId !== userId) sql.run`UPDATE users SET updated_at = ${now} WHERE user_id = ${userId}`;
  return ok({ before, after: getUser(sql, userId) as UserRecord, account: accountId });
}

/**
 * Deletes a primary user with its linked accounts (the reference platform deletes secondaries with their
 * primary), their identities and index entries (triggers), browser sessions, pending logins, unredeemed
 * codes and login tickets. Returns the user as it was and every account id removed, whose user objects
 * the worker then wipes.
 */
export function deleteUser(sql: Sql, userId: string): Result<{ user: UserRecord; removed: string[] }> {
  const user = getUser(sql, userId);
  if (!user) return fail("inexistent_user");
  const removed = [userId, ...sql.all<{ id: string }>`SELECT user_id AS id FROM users WHERE linked_to = ${userId}`.map((r) => r.id)];
  const ids = JSON.stringify(removed);
  sql.run`DELETE FROM users WHERE user_id IN (SELECT value FROM json_each(${ids}))`;
  sql.run`DELETE FROM sessions WHERE user_id IN (SELECT value FROM json_each(${ids}))`;
  sql.run`DELETE FROM login_sessions WHERE user_id IN (SELECT value FROM json_each(${ids}))`;
  sql.run`DELETE FROM authorization_codes WHERE user_id IN (SELECT value FROM json_each(${ids}))`;
  sql.run`DELETE FROM login_tickets WHERE user_id IN (SELECT value FROM json_each(${ids}))`;
  // MFA data (issue 12): authentication methods, recovery codes, enrollment tickets, MFA transactions.
  for (const id of removed) deleteMfaDataOfUser(sql, id);
  return ok({ user, removed });
}

/** What a login's events need of its user row (`emitLogin`); null when there is no such row. */
export type LoggedInUser = { linked_to: string | null; registered: number | null } | null;

/** A successful login: counters, timestamps and the address it came from; answers the row's {@link LoggedInUser}. */
export function recordLogin(sql: Sql, userId: string, now: number, ip: string | null = null): LoggedInUser {
  return (
    sql.first<NonNullable<LoggedInUser>>`UPDATE users SET logins_count = logins_count + 1, last_login = ${now}, last_ip = coalesce(${ip}, last_ip),
    updated_at = ${now} WHERE user_id = ${userId} RETURNING linked_to, registration_completed_at AS registered` ?? null
  );
}

export { getAccount };
