import { fail, ok, type Result } from "../../../shared/errors";
import type { ListPage } from "../../../shared/types";
import type { AuthenticationMethodPatch, AuthenticationMethodRecord, NewAuthenticationMethod } from "../../../shared/schemas/authentication-methods";
import { iso, json, type Sql } from "../../sql";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";

/**
 * A user's authentication methods (SPEC §2.4): the rows the management API lists, creates and deletes, and
 * the ones the MFA screens enroll and verify against. One table for every type; WebAuthn methods keep only
 * public credential data, a TOTP method its secret as a ciphertext the worker opens.
 */

type Row = Record<string, unknown>;
const text = (v: unknown) => (v === null || v === undefined ? null : String(v));
const bool = (v: unknown) => (v === null || v === undefined ? null : v === 1);

export function toMethod(r: Row): AuthenticationMethodRecord {
  return {
    id: String(r.id),
    user_id: String(r.user_id),
    type: r.type as AuthenticationMethodRecord["type"],
    confirmed: r.confirmed === 1,
    name: text(r.name),
    totp_secret_enc: text(r.totp_secret_enc),
    phone_number: text(r.phone_number),
    preferred_authentication_method: text(r.preferred_authentication_method),
    credential_id: text(r.credential_id),
    public_key: text(r.public_key),
    sign_count: r.sign_count === null || r.sign_count === undefined ? null : Number(r.sign_count),
    credential_backed_up: bool(r.credential_backed_up),
    credential_device_type: text(r.credential_device_type) as AuthenticationMethodRecord["credential_device_type"],
    transports: json(text(r.transports), null),
    aaguid: text(r.aaguid),
    relying_party_identifier: text(r.relying_party_identifier),
    user_handle: text(r.user_handle),
    user_agent: text(r.user_agent),
    created_at: iso(r.created_at as number) as string,
    enrolled_at: iso(r.enrolled_at as number | null),
    last_auth_at: iso(r.last_auth_at as number | null),
  };
}

/** What an audit event may show of a method: never the TOTP ciphertext. */
const auditView = ({ totp_secret_enc: _secret, ...view }: AuthenticationMethodRecord) => view;

const userExists = (sql: Sql, userId: string) => sql.first`SELECT 1 FROM users WHERE user_id = ${userId}` !== undefined;

/** The id under which a user's recovery codes appear among their methods (the reference platform lists them as one). */
export const RECOVERY_CODE_METHOD_ID = "recovery-code|dev_codes";

/** The user's unused recovery codes as one `recovery-code` method, or null when none are left. */
function recoveryCodeMethod(sql: Sql, userId: string): AuthenticationMethodRecord | null {
  const row = sql.first<{ n: number; created_at: number | null }>`SELECT count(*) AS n, min(created_at) AS created_at FROM recovery_codes WHERE user_id = ${userId} AND used_at IS NULL`;
  if (!row?.n || row.created_at === null) return null;
  return toMethod({ id: RECOVERY_CODE_METHOD_ID, user_id: userId, type: "recovery-code", confirmed: 1, created_at: row.created_at, enrolled_at: row.created_at });
}

/** Every method of a user, oldest first (enrollment order), recovery codes included. */
export function listAuthenticationMethods(sql: Sql, userId: string): AuthenticationMethodRecord[] {
  const stored = sql.all<Row>`SELECT * FROM authentication_methods WHERE user_id = ${userId} ORDER BY created_at, id`.map(toMethod);
  const recovery = recoveryCodeMethod(sql, userId);
  return recovery ? [...stored, recovery] : stored;
}

/** One offset window of a user's methods, with the total (the reference platform pages them by offset only). */
export function pageAuthenticationMethods(sql: Sql, userId: string, window: { offset: number; limit: number }): ListPage<AuthenticationMethodRecord> {
  // A user has a handful of methods: page the whole list.
  const all = listAuthenticationMethods(sql, userId);
  return { items: all.slice(window.offset, window.offset + window.limit), total: all.length };
}

/** A method of this user (a method id of another user is not found). */
export function getAuthenticationMethod(sql: Sql, userId: string, id: string): AuthenticationMethodRecord | null {
  if (id === RECOVERY_CODE_METHOD_ID) return recoveryCodeMethod(sql, userId);
  const row = sql.first<Row>`SELECT * FROM authentication_methods WHERE id = ${id} AND user_id = ${userId}`;
  return row ? toMethod(row) : null;
}

/** A method by id alone (GET /guardian/enrollments/{id}). */
export function getAuthenticationMethodById(sql: Sql, id: string): AuthenticationMethodRecord | null {
  const row = sql.first<Row>`SELECT * FROM authentication_methods WHERE id = ${id}`;
  return row ? toMethod(row) : null;
}

/** The method registered for a WebAuthn credential id in this tenant, whoever owns it. */
export function findByCredentialId(sql: Sql, credentialId: string): AuthenticationMethodRecord | null {
  const row = sql.first<Row>`SELECT * FROM authentication_methods WHERE credential_id = ${credentialId}`;
  return row ? toMethod(row) : null;
}

/**
 * Why a new method cannot be stored, or null. One TOTP and one phone per user (the reference platform enrolls
 * one authenticator per guardian factor); a WebAuthn credential id belongs to one method of the tenant.
 */
function conflictOf(sql: Sql, method: NewAuthenticationMethod): string | null {
  if (method.type === "totp" || method.type === "phone") {
    const same = sql.first`SELECT 1 FROM authentication_methods WHERE user_id = ${method.user_id} AND type = ${method.type}`;
    if (same) return `The user already has a ${method.type} authentication method`;
  }
  if (method.credential_id && findByCredentialId(sql, method.credential_id)) {
    return "An authentication method with this credential_id already exists";
  }
  return null;
}

/** Stores a method for an existing user; `now` is its creation and enrollment time. */
export function createAuthenticationMethod(sql: Sql, method: NewAuthenticationMethod, now: number): Result<AuthenticationMethodRecord> {
  if (!userExists(sql, method.user_id)) return fail("inexistent_user");
  const conflict = conflictOf(sql, method);
  if (conflict) return fail("authentication_method_exists", { detail: conflict });
  const m = method;
  sql.run`INSERT INTO authentication_methods (id, user_id, type, confirmed, name, totp_secret_enc, phone_number,
      preferred_authentication_method, credential_id, public_key, sign_count, credential_backed_up,
      credential_device_type, transports, aaguid, relying_party_identifier, user_handle, user_agent, created_at, enrolled_at)
    VALUES (${m.id}, ${m.user_id}, ${m.type}, ${m.confirmed}, ${m.name}, ${m.totp_secret_enc}, ${m.phone_number},
      ${m.preferred_authentication_method}, ${m.credential_id}, ${m.public_key}, ${m.sign_count}, ${m.credential_backed_up},
      ${m.credential_device_type}, ${m.transports}, ${m.aaguid}, ${m.relying_party_identifier}, ${m.user_handle},
      ${m.user_agent}, ${now}, ${m.confirmed ? now : null})`;
  return ok(getAuthenticationMethod(sql, m.user_id, m.id) as AuthenticationMethodRecord);
}

export function deleteAuthenticationMethod(sql: Sql, userId: string, id: string): Result<true> {
  if (!userExists(sql, userId)) return fail("inexistent_user");
  const deleted =
    id === RECOVERY_CODE_METHOD_ID
      ? sql.run`DELETE FROM recovery_codes WHERE user_id = ${userId} AND used_at IS NULL`
      : sql.run`DELETE FROM authentication_methods WHERE id = ${id} AND user_id = ${userId}`;
  return deleted > 0 ? ok(true) : fail("inexistent_authentication_method");
}

/**
 * Removes every method of a user (DELETE /users/{id}/authentication-methods, and user deletion: the users
 * module calls this in its delete transaction so no method outlives its user).
 */
export function deleteAuthenticationMethodsOfUser(sql: Sql, userId: string): number {
  sql.run`DELETE FROM recovery_codes WHERE user_id = ${userId}`;
  return sql.run`DELETE FROM authentication_methods WHERE user_id = ${userId}`;
}

/** Everything MFA keeps about a user (user deletion): methods, recovery codes, tickets, MFA transactions. */
export function deleteMfaDataOfUser(sql: Sql, userId: string): void {
  deleteAuthenticationMethodsOfUser(sql, userId);
  sql.run`DELETE FROM enrollment_tickets WHERE user_id = ${userId}`;
  sql.run`DELETE FROM mfa_transactions WHERE user_id = ${userId}`;
}

/**
 * PATCH /users/{id}/authentication-methods/{method_id}: renames a method; a phone's preferred way (sms or
 * voice) changes only on a phone method.
 */
export function updateAuthenticationMethod(sql: Sql, userId: string, id: string, patch: AuthenticationMethodPatch): Result<AuthenticationMethodRecord> {
  if (!userExists(sql, userId)) return fail("inexistent_user");
  const current = getAuthenticationMethod(sql, userId, id);
  if (!current || current.type === "recovery-code") return fail("inexistent_authentication_method");
  if (patch.preferred_authentication_method !== undefined && current.type !== "phone") {
    return fail("authentication_method_not_phone");
  }
  if (patch.name !== undefined) sql.run`UPDATE authentication_methods SET name = ${patch.name} WHERE id = ${id}`;
  if (patch.preferred_authentication_method !== undefined) {
    sql.run`UPDATE authentication_methods SET preferred_authentication_method = ${patch.preferred_authentication_method} WHERE id = ${id}`;
  }
  return ok(getAuthenticationMethod(sql, userId, id) as AuthenticationMethodRecord);
}

/** Thrown inside the savepoint of `replaceAll` to undo its deletions when one method is refused. */
class ReplaceRefused extends Error {}

/** The authentication-methods facade (`stub.authenticationMethods(audit)`). Not configuration. */
export class AuthenticationMethods extends TenantRpc {
  list(userId: string): AuthenticationMethodRecord[] {
    return this.read((sql) => listAuthenticationMethods(sql, userId));
  }

  page(userId: string, window: { offset: number; limit: number }): ListPage<AuthenticationMethodRecord> {
    return this.read((sql) => pageAuthenticationMethods(sql, userId, window));
  }

  get(userId: string, id: string): AuthenticationMethodRecord | null {
    return this.read((sql) => getAuthenticationMethod(sql, userId, id));
  }

  byId(id: string): AuthenticationMethodRecord | null {
    return this.read((sql) => getAuthenticationMethodById(sql, id));
  }

  /** DELETE /guardian/enrollments/{id}: the method, whoever owns it. */
  deleteById(id: string): Result<true> {
    return this.commit((tx) => {
      const before = getAuthenticationMethodById(tx.sql, id);
      const result = before ? deleteAuthenticationMethod(tx.sql, before.user_id, id) : fail("inexistent_enrollment");
      return audited(tx, this.audit, result, { entity: "authentication_method", action: "deleted", id, before: before ? auditView(before) : undefined });
    });
  }

  findByCredentialId(credentialId: string): AuthenticationMethodRecord | null {
    return this.read((sql) => findByCredentialId(sql, credentialId));
  }

  create(method: NewAuthenticationMethod): Result<AuthenticationMethodRecord> {
    return this.commit((tx) =>
      audited(tx, this.audit, createAuthenticationMethod(tx.sql, method, tx.now), {
        entity: "authentication_method",
        action: "created",
        id: method.id,
        after: auditView,
      }),
    );
  }

  delete(userId: string, id: string): Result<true> {
    return this.commit((tx) => {
      const before = getAuthenticationMethod(tx.sql, userId, id);
      const result = deleteAuthenticationMethod(tx.sql, userId, id);
      return audited(tx, this.audit, result, { entity: "authentication_method", action: "deleted", id, before: before ? auditView(before) : undefined });
    });
  }

  update(userId: string, id: string, patch: AuthenticationMethodPatch): Result<AuthenticationMethodRecord> {
    return this.commit((tx) => {
      const before = getAuthenticationMethod(tx.sql, userId, id);
      return audited(tx, this.audit, updateAuthenticationMethod(tx.sql, userId, id, patch), {
        entity: "authentication_method",
        action: "updated",
        id,
        before: before ? auditView(before) : undefined,
        after: auditView,
      });
    });
  }

  /**
   * PUT /users/{id}/authentication-methods: the user's methods become exactly these (recovery codes are
   * kept). All or nothing: a refused method (a credential another user holds ...) undoes the deletions.
   */
  replaceAll(userId: string, methods: NewAuthenticationMethod[]): Result<AuthenticationMethodRecord[]> {
    return this.commit((tx) => {
      const before = listAuthenticationMethods(tx.sql, userId).map(auditView);
      let result: Result<AuthenticationMethodRecord[]> = fail("inexistent_user");
      if (userExists(tx.sql, userId)) {
        try {
          this.core.storage.transactionSync(() => {
            tx.sql.run`DELETE FROM authentication_methods WHERE user_id = ${userId}`;
            const created: AuthenticationMethodRecord[] = [];
            for (const method of methods) {
              const one = createAuthenticationMethod(tx.sql, { ...method, user_id: userId }, tx.now);
              if (!one.ok) {
                result = one;
                throw new ReplaceRefused();
              }
              created.push(one.value);
            }
            result = ok(created);
          });
        } catch (error) {
          if (!(error instanceof ReplaceRefused)) throw error;
        }
      }
      return audited(tx, this.audit, result, { entity: "authentication_method", action: "updated", id: userId, before, after: (list) => list.map(auditView) });
    });
  }

  /** Every method of the user; 404 for an unknown user. */
  deleteAll(userId: string): Result<{ deleted: number }> {
    return this.commit((tx) => {
      const before = listAuthenticationMethods(tx.sql, userId).map(auditView);
      const result = userExists(tx.sql, userId) ? ok({ deleted: deleteAuthenticationMethodsOfUser(tx.sql, userId) }) : fail("inexistent_user");
      return audited(tx, this.audit, result, { entity: "authentication_method", action: "deleted", id: userId, before });
    });
  }
}
