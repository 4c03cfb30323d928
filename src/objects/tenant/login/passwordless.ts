import type { AuditContext, NewChallenge, NewSession } from "../../../shared/types";
import type { UserRecord } from "../../../shared/schemas/users";
import type { Sql } from "../../sql";
import { countChallenges, createChallenge } from "./challenges";
import { emitAudit, type WriteTx } from "../core/events";
import { createSession, emitLogin, setSessionAmr } from "./login";
import { TenantRpc } from "../core/rpc";
import { getUser, recordLogin } from "../users/users";

/**
 * Passwordless login (issue 12 point 6): the code sent by /passwordless/start, and the user the OTP grant
 * logs in, created on first login unless the connection disables sign-up. One commit per step.
 */

/** The reference platform's log types: code sent, OTP exchange failed. */
export const PASSWORDLESS_LOG_TYPES = { codeSent: "cs", exchangeFailed: "feotpft" } as const;

/** Who a passwordless login is for, as the worker resolved it. */
export interface PasswordlessIdentity {
  connection: "email" | "sms";
  /** Normalized email, or E.164 phone number. */
  identifier: string;
  /** The id a new user gets (`email|...`), or the deterministic `sms|...` id of a phone number. */
  new_user_id: string;
  allow_signup: boolean;
}

export type PasswordlessUser = { ok: true; user: UserRecord; created: boolean } | { ok: false; reason: "signup_disabled" | "blocked" };

/**
 * Finds the connection's user for the identifier, or creates one: email users by (connection, email), SMS
 * users by (connection, phone_number), both verified. A new user has the identifier verified:
 * receiving the code proved it.
 */
export function resolvePasswordlessUser(sql: Sql, who: PasswordlessIdentity, now: number): PasswordlessUser {
  const existing =
    who.connection === "email"
      ? sql.first<{ user_id: string }>`SELECT user_id FROM users WHERE connection = ${who.connection} AND email = ${who.identifier}`
      : sql.first<{ user_id: string }>`SELECT user_id FROM users WHERE connection = ${who.connection} AND phone_number = ${who.identifier}`;
  if (existing) {
    const user = getUser(sql, existing.user_id) as UserRecord;
    return user.blocked ? { ok: false, reason: "blocked" } : { ok: true, user, created: false };
  }
  if (!who.allow_signup) return { ok: false, reason: "signup_disabled" };
  const email = who.connection === "email" ? who.identifier : null;
  const nickname = email ? email.split("@")[0] : who.identifier;
  const phone = who.connection === "sms" ? who.identifier : null;
  sql.run`INSERT INTO users (user_id, connection, email, email_verified, phone_number, phone_verified, name, nickname, created_at, updated_at)
    VALUES (${who.new_user_id}, ${who.connection}, ${email}, ${email !== null}, ${phone}, ${phone !== null}, ${who.identifier}, ${nickname}, ${now}, ${now})`;
  return { ok: true, user: getUser(sql, who.new_user_id) as UserRecord, created: true };
}

/** The passwordless facade (`stub.passwordless(audit)`). */
export class Passwordless extends TenantRpc {
  /**
   * Stores the code (its hash) with its `cs` log event, unless `limit` says the identifier has had `max` codes
   * since `since` already: then nothing is written and the answer is false (issue 31: the count and the start
   * were two round trips).
   */
  start(challenge: NewChallenge, recipient: string, limit?: { max: number; since: number }): boolean {
    return this.commit((tx) => {
      if (limit && countChallenges(tx.sql, challenge.purpose, challenge.subject, limit.since) >= limit.max) return false;
      createChallenge(tx.sql, challenge, tx.now);
      emitAudit(tx, this.audit, {
        event_type: "user.passwordless_code_sent",
        log_type: PASSWORDLESS_LOG_TYPES.codeSent,
        category: "user_action",
        description: `Passwordless code sent (${recipient.includes("@") ? "email" : "sms"})`,
        client_id: challenge.client_id,
      });
      return true;
    });
  }

  /** A refused OTP exchange (`feotpft`), or a wrong code on the login page (`f`, a failed login). */
  recordFailure(reason: string, clientId: string, logType: "feotpft" | "f" = PASSWORDLESS_LOG_TYPES.exchangeFailed): void {
    this.commit((tx) =>
      emitAudit(tx, this.audit, { event_type: "user.passwordless_failed", log_type: logType, category: "user_action", description: `Failed passwordless login: ${reason}`, client_id: clientId, response: { status_code: 403 } }),
    );
  }

  /**
   * The user of a login that must pass MFA before its session starts (SPEC §4.2 policy): found or created
   * (with `ss` when new), in one commit; the session and the `s` event wait for the second factor.
   */
  resolve(who: PasswordlessIdentity, clientId: string): PasswordlessUser {
    return this.commit((tx) => {
      const resolved = resolvePasswordlessUser(tx.sql, who, tx.now);
      if (resolved.ok && resolved.created) emitSignup(tx, { ...this.audit, actor: { type: "user", id: resolved.user.user_id, client_id: clientId } }, resolved.user, clientId);
      return resolved;
    });
  }

  /**
   * The login itself, one commit: the user found or created (with `ss` and the post-user-registration hook
   * when new), the session the tokens are bound to (SPEC §4.1 rule 1), the login counted (`s`).
   */
  login(who: PasswordlessIdentity, session: Omit<NewSession, "user_id">, amr: string[]): PasswordlessUser & { session_id?: string } {
    return this.commit((tx) => {
      const resolved = resolvePasswordlessUser(tx.sql, who, tx.now);
      if (!resolved.ok) return resolved;
      const { user, created } = resolved;
      const actor: AuditContext = { ...this.audit, actor: { type: "user", id: user.user_id, client_id: session.client_id } };
      if (created) emitSignup(tx, actor, user, session.client_id);
      createSession(tx.sql, { ...session, user_id: user.user_id }, tx.now, this.audit.request);
      setSessionAmr(tx.sql, session.id, amr);
      recordLogin(tx.sql, user.user_id, tx.now);
      emitLogin(tx, actor, user.user_id);
      return { ...resolved, user: getUser(tx.sql, user.user_id) as UserRecord, session_id: session.id };
    });
  }
}

function emitSignup(tx: WriteTx, audit: AuditContext, user: UserRecord, clientId: string): void {
  // The post-user-registration hook follows from emitLogin (a user whose registration has not completed).
  emitAudit(tx, audit, { event_type: "user.created", log_type: "ss", category: "user_action", description: "Successful signup (passwordless)", target: { type: "user", id: user.user_id, after: user }, user_id: user.user_id, client_id: clientId });
}
