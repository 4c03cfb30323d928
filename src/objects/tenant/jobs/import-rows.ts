/**
 * One row of a bulk user import (issue 14 point 5), inside its chunk's transaction: validated against the
 * reference platform's file schema, then created through the same `createUser` as sign-up and POST /users
 * (ids, duplicate rules, identities and the search index by trigger), or with `upsert` updated through
 * `updateUser`. A row's problem is its outcome, never an exception: invalid rows never block valid ones.
 */
import { randomId } from "../../../shared/crypto/random";
import type { Result } from "../../../shared/errors";
import { type ImportUserRow, importedHash, importUserRow, rowSchemaErrors, STAGED_MFA_KEY, type StagedMfaFactor } from "../../../shared/schemas/jobs";
import type { RowError } from "../../../shared/types";
import type { UserFieldPatch } from "../../../shared/schemas/users";
import type { Sql } from "../../sql";
import { createAuthenticationMethod } from "../users/authentication-methods";
import { EMPTY_METHOD_FIELDS } from "../../../shared/schemas/authentication-methods";
import { insertUser, updateUser } from "../users/user-writes";

/** What became of one row. */
export type RowOutcome = { kind: "inserted" | "updated"; userId: string } | { kind: "failed"; errors: RowError[] };

/** The connection rows go to, and how: upsert, and its username rule (`requires_username`). */
export interface ImportTarget {
  connection: string;
  upsert: boolean;
  requiresUsername: boolean;
}

/** The connection's username rule, as POST /users reads it (the connection's `requires_username` option). */
export const requiresUsername = (sql: Sql, connection: string): boolean =>
  sql.first<{ r: number | null }>`SELECT json_extract(options, '$.requires_username') AS r FROM connections WHERE name = ${connection}`?.r === 1;

const failed = (...errors: RowError[]): RowOutcome => ({ kind: "failed", errors });

const DUPLICATED = (message = "The user already exist and upsert parameter is false"): RowError => ({ code: "DUPLICATED_USER", message });

/** A database connection's user id: `auth0|` and the given id (already prefixed ids are kept), or a new one. */
const importedUserId = (given: string | undefined) =>
  given === undefined ? `auth0|${randomId("", 24)}` : given.startsWith("auth0|") ? given : `auth0|${given}`;

/** A storage failure of the user write as the row's error. */
function writeError(result: Result<unknown>): RowError[] {
  if (result.ok) return [];
  const code = result.error.code;
  if (code === "user_exists" || code === "username_exists") return [DUPLICATED(result.error.message)];
  return [{ code: "INVALID_FORMAT", message: result.error.message }];
}

/** The profile fields a row sets, for an upsert (absent fields are left as they are). */
function profilePatch(row: ImportUserRow): UserFieldPatch {
  const fields: UserFieldPatch = { email: row.email, email_verified: row.email_verified ?? false };
  for (const key of ["username", "phone_number", "phone_verified", "name", "given_name", "family_name", "nickname", "picture", "blocked"] as const) {
    if (row[key] !== undefined) (fields as Record<string, unknown>)[key] = row[key];
  }
  return fields;
}

/**
 * Applies one parsed JSON value of the file to the connection. The reference platform's rule: imported
 * emails are unverified unless the row says `email_verified: true`, on insert and on update alike.
 */
export function applyImportRow(sql: Sql, job: ImportTarget, raw: unknown, now: number): RowOutcome {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
    return failed({ code: "INVALID_TYPE", message: `Expected type object but found type ${raw === null ? "null" : Array.isArray(raw) ? "array" : typeof raw}`, path: "#/" });
  }
  const { [STAGED_MFA_KEY]: stagedFactors, ...fields } = raw as Record<string, unknown>;
  const parsed = importUserRow.safeParse(fields);
  if (!parsed.success) return failed(...rowSchemaErrors(parsed.error, fields));
  const row = parsed.data;
  // The worker seals every row's mfa_factors into STAGED_MFA_KEY; clear factors here were never sealed.
  if (row.mfa_factors !== undefined) return failed({ code: "INVALID_MFA_FACTOR", message: "mfa_factors were not prepared for import", path: "#/mfa_factors" });
  const factors = (stagedFactors ?? []) as StagedMfaFactor[];
  const factorError = factors.find((f) => f.type === "error");
  if (factorError?.type === "error") return failed(factorError.error);
  const hash = importedHash(row);
  if (!hash.ok) return failed(hash.error);
  if (row.username !== undefined && !job.requiresUsername) {
    return failed({ code: "INVALID_FORMAT", message: "Cannot set username for connection without requires_username", path: "#/username" });
  }

  const userId = importedUserId(row.user_id);
  const byId = sql.first<{ user_id: string; connection: string }>`SELECT user_id, connection FROM users WHERE user_id = ${userId}`;
  const byEmail = sql.first<{ user_id: string }>`SELECT user_id FROM users WHERE connection = ${job.connection} AND email = ${row.email}`;
  if (byId || byEmail) {
    if (!job.upsert) return failed(DUPLICATED());
    if (byId && byId.connection !== job.connection) return failed(DUPLICATED("The user_id belongs to a user of another connection"));
    if (byId && byEmail && byId.user_id !== byEmail.user_id) return failed(DUPLICATED("The email belongs to another user of the connection"));
    const target = (byId ?? byEmail)?.user_id as string;
    const result = updateUser(sql, target, {
      fields: profilePatch(row),
      ...(row.app_metadata !== undefined ? { app_metadata: row.app_metadata } : {}),
      ...(row.user_metadata !== undefined ? { user_metadata: row.user_metadata } : {}),
      ...(hash.hash !== null ? { password_hash: hash.hash } : {}),
    }, now);
    if (!result.ok) return failed(...writeError(result));
    enrollFactors(sql, target, factors, now, true);
    return { kind: "updated", userId: target };
  }
  if (job.requiresUsername && row.username === undefined) {
    return failed({ code: "OBJECT_MISSING_REQUIRED_PROPERTY", message: "Missing required property: username", path: "#/" });
  }
  const { password_hash: _p, custom_password_hash: _c, mfa_factors: _m, user_id: _u, ...profile } = row;
  const result = insertUser(sql, { ...profile, user_id: userId, connection: job.connection, email: row.email, email_verified: row.email_verified ?? false, password_hash: hash.hash }, now);
  if (!result.ok) return failed(...writeError(result));
  enrollFactors(sql, userId, factors, now, false);
  return { kind: "inserted", userId };
}

/**
 * Stores a row's staged factors as confirmed authentication methods (the reference platform: imported
 * enrollments need no re-enrollment). With upsert, an imported factor replaces the user's method of the
 * same type (the file is the source of truth; one TOTP and one phone per user). A failure throws, so the
 * row's savepoint rolls the user write back with it (the chunk reports the row).
 */
function enrollFactors(sql: Sql, userId: string, factors: StagedMfaFactor[], now: number, replace: boolean): void {
  for (const factor of factors) {
    if (factor.type === "error") continue;
    if (replace) sql.run`DELETE FROM authentication_methods WHERE user_id = ${userId} AND type = ${factor.type}`;
    const created = createAuthenticationMethod(sql, {
      ...EMPTY_METHOD_FIELDS,
      id: factor.id,
      user_id: userId,
      type: factor.type,
      confirmed: true,
      name: null,
      totp_secret_enc: factor.type === "totp" ? factor.secret_enc : null,
      phone_number: factor.type === "phone" ? factor.phone_number : null,
      preferred_authentication_method: factor.type === "phone" ? "sms" : null,
    }, now);
    if (!created.ok) throw new Error(`the ${factor.type} factor could not be enrolled: ${created.error.message}`);
  }
}
