import type { Result } from "../../../shared/errors";
import { movedUserDescription } from "../../../shared/actions/migration-report";
import { normalizeEmail } from "../../../shared/schemas/users";
import type { ListPage, ListWindow } from "../../../shared/types";
import type { IdentityRef, LoginAccount, NewUser, UserPatch, UserQuery, UserRecord, UserWithSecret } from "../../../shared/schemas/users";
import { LOG_TYPES } from "../core/audit";
import { audited, emitAudit, emitHook, hookUser } from "../core/events";
import { TenantRpc, type WriteTx } from "../core/rpc";
import { type LinkOutcome, linkAccount, unlinkAccount } from "./user-links";
import { findUserByEmail, getUser, loginAccountsNamed, loginAccountsOf, userRow, usersByEmail } from "./user-rows";
import { listUsers } from "./user-search";
import { createUser, deleteUser, updateUser } from "./user-writes";

export { getUser, getUserWithoutIdentities } from "./user-rows";
export { createUser, type LoggedInUser, recordLogin } from "./user-writes";

/**
 * The users facade (`stub.users(audit)`). Users are not configuration: writes leave the version alone.
 * Every management write records `user.created` / `user.updated` / `user.deleted` (sapi, or fapi with the
 * failure) with the caller's context in its own commit, so the outbox relays them.
 */
export class Users extends TenantRpc {
  /** A primary user with its identities, or null (unknown, or a linked secondary account). */
  get(userId: string): UserRecord | null {
    return this.read((sql) => getUser(sql, userId));
  }

  /** Whether any account (a linked secondary included) has this id. */
  exists(userId: string): boolean {
    return this.read((sql) => userRow(sql, userId) !== undefined);
  }

  /** Which of these ids (the first 100) name an account (a linked secondary included), so no object is made for the others. */
  existing(userIds: string[]): string[] {
    // A Durable Object statement binds at most 100 values.
    const ids = [...new Set(userIds)].slice(0, 100);
    if (!ids.length) return [];
    return this.read((sql) => sql.exec<{ user_id: string }>(`SELECT user_id FROM users WHERE user_id IN (${ids.map(() => "?").join(",")})`, ...ids).map((r) => r.user_id));
  }

  /** An account by email in a connection, with the password hash, for the worker's password check. */
  findByEmail(connection: string, email: string): UserWithSecret | null {
    return this.read((sql) => findUserByEmail(sql, connection, normalizeEmail(email)));
  }

  /** GET /users-by-email: primary users whose own or linked account has this (normalized) email. */
  byEmail(email: string): UserRecord[] {
    return this.read((sql) => usersByEmail(sql, normalizeEmail(email)));
  }

  /**
   * The accounts whose failed-login locks belong to a user (GET/DELETE /user-blocks): by a primary user's id
   * (its own account and its linked ones; null when there is no such user), or by an identifier (email,
   * username or phone number, linked accounts included).
   */
  loginAccounts(by: { user_id: string } | { identifier: string }): LoginAccount[] | null {
    return this.read((sql) => ("user_id" in by ? loginAccountsOf(sql, by.user_id) : loginAccountsNamed(sql, normalizeEmail(by.identifier), by.identifier)));
  }

  /** GET /users: primary users, filtered and paged (SPEC §4.2, §4.3). */
  list(query: UserQuery, window: ListWindow): ListPage<UserRecord> {
    return this.read((sql) => listUsers(sql, query, window));
  }

  /** Sign-up: the user, its `ss` (or `fs`) log event and the post-user-registration hook, in one commit. */
  create(user: NewUser): Result<UserRecord> {
    const audit = this.audit;
    return this.commit((tx) => {
      const result = createUser(tx.sql, user, tx.now);
      const client_id = audit.actor.client_id ?? null;
      if (!result.ok) {
        const description = `Failed signup: ${result.error.message}`;
        emitAudit(tx, audit, { event_type: "user.signup_failed", log_type: LOG_TYPES.signupFailed, category: "user_action", description, client_id });
        return result;
      }
      const created = result.value;
      const target = { type: "user", id: created.user_id, after: created };
      emitAudit(tx, audit, { event_type: "user.created", log_type: LOG_TYPES.signup, category: "user_action", description: "Successful signup", target, user_id: created.user_id, client_id });
      emitHook(tx, "post-user-registration", { user: hookUser(created), client_id });
      return result;
    });
  }

  /**
   * A user moved from a custom database (issue 32: import mode's first login, or a profile a script
   * served): the user with the profile the script returned and, from a login, the password hashed by the
   * worker, and one `user.created` event naming the connection, in one commit. No registration hook: the
   * person registered in the legacy store long ago. An existing id or email answers `user_exists`.
   */
  migrate(user: NewUser): Result<UserRecord> {
    return this.commit((tx) => {
      const result = createUser(tx.sql, user, tx.now);
      if (!result.ok) return result;
      const created = result.value;
      emitAudit(tx, this.audit, {
        event_type: "user.created",
        log_type: LOG_TYPES.signup,
        category: "user_action",
        description: movedUserDescription(user.connection),
        target: { type: "user", id: created.user_id, after: hookUser(created) },
        user_id: created.user_id,
        client_id: this.audit.actor.client_id ?? null,
      });
      return result;
    });
  }

  /** POST /users: the user, `user.created` (sapi / fapi) and the post-user-registration hook, one commit. */
  add(user: NewUser): Result<UserRecord> {
    return this.commit((tx) => {
      const result = audited(tx, this.audit, createUser(tx.sql, user, tx.now), { entity: "user", action: "created", id: (u) => u.user_id, after: hookUser });
      if (result.ok) emitHook(tx, "post-user-registration", { user: hookUser(result.value), client_id: this.audit.actor.client_id ?? null });
      return result;
    });
  }

  /** PATCH /users/{id}: the primary or, with `connection`, one linked identity; answers the primary. */
  update(userId: string, patch: UserPatch): Result<UserRecord> {
    return this.commit((tx) => {
      const result = updateUser(tx.sql, userId, patch, tx.now);
      const before = result.ok ? hookUser(result.value.before) : undefined;
      const value: Result<UserRecord> = result.ok ? { ok: true, value: result.value.after } : result;
      return audited(tx, this.audit, value, { entity: "user", action: "updated", id: userId, before, after: hookUser });
    });
  }

  /**
   * DELETE /users/{id}: the user, its linked accounts, identities and tenant-side sessions, with
   * `user.deleted` and the post-user-deletion hook. Answers every account id removed: the worker wipes
   * their user objects after this commit.
   */
  delete(userId: string): Result<string[]> {
    return this.commit((tx) => {
      const result = deleteUser(tx.sql, userId);
      const before = result.ok ? hookUser(result.value.user) : undefined;
      const value: Result<string[]> = result.ok ? { ok: true, value: result.value.removed } : result;
      audited(tx, this.audit, value, { entity: "user", action: "deleted", id: userId, before });
      if (result.ok) emitHook(tx, "post-user-deletion", { user: hookUser(result.value.user), client_id: this.audit.actor.client_id ?? null });
      return value;
    });
  }

  /**
   * Links the account `ref` names (`{provider, user_id}`, bare or prefixed id) to the primary user, with
   * `user.updated` recording the identities before and after. Answers the primary's identities.
   */
  link(primaryId: string, ref: IdentityRef): Result<LinkOutcome> {
    return this.commit((tx) => {
      const result = linkAccount(tx.sql, primaryId, ref, tx.now);
      return this.recordLink(tx, primaryId, result, 201);
    });
  }

  /** Unlinks the identity `provider`/`bareId` from the primary user; answers its remaining identities. */
  unlink(primaryId: string, provider: string, bareId: string): Result<LinkOutcome> {
    return this.commit((tx) => {
      const result = unlinkAccount(tx.sql, primaryId, provider, bareId, tx.now);
      return this.recordLink(tx, primaryId, result, 200);
    });
  }

  private recordLink(tx: WriteTx, primaryId: string, result: Result<LinkOutcome>, status: number): Result<LinkOutcome> {
    const before = result.ok ? hookUser(result.value.before) : undefined;
    return audited(tx, this.audit, result, { entity: "user", action: "updated", id: primaryId, before, after: (o) => hookUser(o.after), status });
  }
}
