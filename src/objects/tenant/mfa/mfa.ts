import { fail, ok, type Result } from "../../../shared/errors";
import type { AuditContext, AuditRequest, AuthorizeRequest, FreshLoginSession, Json, LoginCompletion, MfaPending, MfaTokenRead, MfaTransaction, NewMfaTransaction, NewSession } from "../../../shared/types";
import type { AuthenticationMethodRecord, NewAuthenticationMethod } from "../../../shared/schemas/authentication-methods";
import { iso, json, type Sql } from "../../sql";
import { applyActionEffects } from "../actions/action-effects";
import { type GuardianSettings, loginMayEnroll } from "../../../shared/schemas/guardian";
import { consumeChallenge, countChallenges, findChallenge } from "../login/challenges";
import { createAuthenticationMethod, listAuthenticationMethods } from "../users/authentication-methods";
import { emitAudit, type WriteTx } from "../core/events";
import { completeLogin, createSession, emitLogin, setSessionAmr } from "../login/login";
import { createLoginSession, ensureLoginSession } from "../login/login-sessions";
import { TenantRpc } from "../core/rpc";
import { consumeLoginTicket, createAuthorizationCode } from "../login/single-use";
import { getUser, recordLogin } from "../users/users";
import { getDocument } from "../settings/documents";

/**
 * MFA transactions (issue 12): the state of one browser between a verified first factor and a completed
 * login (kind `login`, its login session in state `awaiting_mfa`, SPEC §3.5), or of an enrollment started
 * from a ticket (kind `ticket`). Every step is one commit; completing is atomic with the login itself.
 */

/** The reference platform's Guardian log types (its "log event type codes"). */
export const MFA_LOG_TYPES = {
  enrollmentComplete: "gd_enrollment_complete",
  authSucceeded: "gd_auth_succeed",
  authFailed: "gd_auth_failed",
  recoverySucceeded: "gd_recovery_succeed",
  recoveryFailed: "gd_recovery_failed",
  ticketRedeemed: "gd_start_enroll",
} as const;

type Row = Record<string, unknown>;

function toTransaction(r: Row): MfaTransaction {
  return {
    id: String(r.id),
    kind: r.kind as MfaTransaction["kind"],
    secret_hash: String(r.secret_hash),
    user_id: String(r.user_id),
    login_session_id: (r.login_session_id as string | null) ?? null,
    csrf_token: String(r.csrf_token),
    pending: json<MfaPending>(r.pending as string, {}),
    created_at: iso(r.created_at as number) as string,
    expires_at: iso(r.expires_at as number) as string,
    completed_at: iso(r.completed_at as number | null),
  };
}

export function insertMfaTransaction(sql: Sql, t: NewMfaTransaction, now: number): void {
  sql.run`DELETE FROM mfa_transactions WHERE expires_at <= ${now}`;
  sql.run`INSERT INTO mfa_transactions (id, secret_hash, kind, user_id, login_session_id, csrf_token, pending, created_at, expires_at)
    VALUES (${t.id}, ${t.secret_hash}, ${t.kind}, ${t.user_id}, ${t.login_session_id}, ${t.csrf_token}, ${t.pending}, ${now}, ${t.expires_at})`;
}

/** A live, not yet completed transaction. */
export function getMfaTransaction(sql: Sql, id: string, now: number): MfaTransaction | null {
  const row = sql.first<Row>`SELECT * FROM mfa_transactions WHERE id = ${id} AND completed_at IS NULL AND expires_at > ${now}`;
  return row ? toTransaction(row) : null;
}

/**
 * A verified first factor that needs a second one (or an offer): the pending login session moves to
 * `awaiting_mfa` for its user, exactly once, and the transaction starts. False when the login session is
 * no longer pending (double submit, expired).
 */
export function startLoginMfa(sql: Sql, t: NewMfaTransaction, now: number): boolean {
  const moved = sql.run`UPDATE login_sessions SET state = 'awaiting_mfa', user_id = ${t.user_id}
    WHERE id = ${t.login_session_id} AND state = 'pending' AND expires_at > ${now}`;
  if (moved === 0) return false;
  insertMfaTransaction(sql, { ...t, kind: "login" }, now);
  return true;
}

/** Merges into a live transaction's pending state (undefined keys removed); null when it is gone. */
export function updatePending(sql: Sql, id: string, patch: Partial<MfaPending>, now: number): MfaTransaction | null {
  const current = getMfaTransaction(sql, id, now);
  if (!current) return null;
  const next: Record<string, unknown> = { ...current.pending, ...patch };
  for (const key of Object.keys(next)) if (next[key] === undefined) delete next[key];
  sql.run`UPDATE mfa_transactions SET pending = ${next} WHERE id = ${id}`;
  return { ...current, pending: next as MfaPending };
}

/** The amr values a browser session earned (SSO under an MFA policy). */
export function sessionAmr(sql: Sql, sessionId: string): string[] {
  return json<string[]>(sql.first<{ amr: string }>`SELECT amr FROM sessions WHERE id = ${sessionId}`?.amr, []);
}

/**
 * Completes a login that waited for MFA, as one transaction: the MFA transaction (its factor verified) and
 * the login session (`awaiting_mfa`, same user) are completed exactly once, then the browser session starts
 * with its amr, the login is counted and the code stored. False, and nothing written, otherwise.
 */
export function completeMfaLogin(sql: Sql, txId: string, input: LoginCompletion, amr: string[], now: number, request?: AuditRequest): boolean {
  const t = getMfaTransaction(sql, txId, now);
  if (t?.kind !== "login" || t.pending.satisfied !== true || t.login_session_id !== input.login_session_id) return false;
  if (t.user_id !== input.session.user_id) return false;
  const moved = sql.run`UPDATE login_sessions SET state = 'completed'
    WHERE id = ${input.login_session_id} AND state = 'awaiting_mfa' AND user_id = ${t.user_id} AND expires_at > ${now}`;
  if (moved === 0) return false;
  sql.run`UPDATE mfa_transactions SET completed_at = ${now} WHERE id = ${txId}`;
  createSession(sql, input.session, now, request);
  sql.run`UPDATE sessions SET amr = ${amr} WHERE id = ${input.session.id}`;
  recordLogin(sql, t.user_id, now, request?.ip ?? null);
  if (input.code) createAuthorizationCode(sql, input.code, now);
  return true;
}

/**
 * Completes a token-endpoint login that answered `mfa_required` (the MFA grants), as one transaction: the
 * MFA token (an `auth_challenges` row) is consumed exactly once, then the session the tokens are bound to
 * starts with its amr and the login is counted. False when the token was already used or expired, or the
 * user is gone or blocked since.
 */
export function completeGrantLogin(sql: Sql, tokenId: string, session: NewSession, amr: string[], now: number, request?: AuditRequest): boolean {
  if (!consumeChallenge(sql, tokenId, now)) return false;
  if (!sql.first`SELECT 1 FROM users WHERE user_id = ${session.user_id} AND blocked = 0`) return false;
  createSession(sql, session, now, request);
  setSessionAmr(sql, session.id, amr);
  recordLogin(sql, session.user_id, now, request?.ip ?? null);
  return true;
}

export function replaceRecoveryCodes(sql: Sql, userId: string, hashes: string[], now: number): void {
  sql.run`DELETE FROM recovery_codes WHERE user_id = ${userId}`;
  for (const hash of hashes) sql.run`INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (${userId}, ${hash}, ${now})`;
}

/** Uses a recovery code once: one conditional UPDATE, so two concurrent uses cannot both succeed. */
export function useRecoveryCode(sql: Sql, userId: string, hash: string, now: number): boolean {
  return sql.run`UPDATE recovery_codes SET used_at = ${now} WHERE user_id = ${userId} AND code_hash = ${hash} AND used_at IS NULL` > 0;
}

export function unusedRecoveryCodes(sql: Sql, userId: string): number {
  return sql.first<{ n: number }>`SELECT count(*) AS n FROM recovery_codes WHERE user_id = ${userId} AND used_at IS NULL`?.n ?? 0;
}

/**
 * Records a verified WebAuthn assertion (WebAuthn §6.1.1 signature counter): the new counter must be greater
 * than the stored one unless both are zero (authenticators without a counter). One conditional UPDATE, so two
 * concurrent assertions carrying the same counter cannot both pass. False means a possible cloned authenticator.
 */
export function recordAssertion(sql: Sql, methodId: string, newCount: number, now: number): boolean {
  return sql.run`UPDATE authentication_methods SET sign_count = ${newCount}, last_auth_at = ${now}
    WHERE id = ${methodId} AND ((${newCount} = 0 AND coalesce(sign_count, 0) = 0) OR coalesce(sign_count, 0) < ${newCount})` > 0;
}

export function recordMethodUse(sql: Sql, methodId: string, now: number): void {
  sql.run`UPDATE authentication_methods SET last_auth_at = ${now} WHERE id = ${methodId}`;
}

/** The MFA facade (`stub.mfa(audit)`): one command per step of an MFA screen. */
export class Mfa extends TenantRpc {
  private emit(tx: WriteTx, userId: string, logType: string, description: string, extra: { event_type: string; status?: number }) {
    emitAudit(tx, this.audit, {
      event_type: extra.event_type,
      log_type: logType,
      category: "user_action",
      description,
      user_id: userId,
      client_id: this.audit.actor.client_id ?? null,
      ...(extra.status ? { response: { status_code: extra.status } } : {}),
    });
  }

  get(id: string): MfaTransaction | null {
    return this.read((sql, now) => getMfaTransaction(sql, id, now));
  }

  /** `fresh`: the login session's content when it was sealed and may not be stored yet (issue 31). */
  startLogin(t: NewMfaTransaction, fresh?: FreshLoginSession): boolean {
    return this.commit(({ sql, now }) => {
      ensureLoginSession(sql, fresh, now);
      return startLoginMfa(sql, t, now);
    });
  }

  /**
   * A first factor proven elsewhere (a cross-origin login ticket, or an SSO session without MFA): the login
   * session is created and moved to `awaiting_mfa` with the transaction, in one commit. For a ticket, the
   * ticket is consumed in the same commit and names the user; null when it is unknown, used or expired.
   */
  startFromFirstFactor(
    loginSession: { id: string; request: AuthorizeRequest; csrf_token: string; expires_at: number },
    t: Omit<NewMfaTransaction, "user_id" | "login_session_id">,
    proof: { ticket_hash: string } | { user_id: string },
  ): string | null {
    return this.commit(({ sql, now }) => {
      const userId = "ticket_hash" in proof ? consumeLoginTicket(sql, proof.ticket_hash, loginSession.request.client_id, now) : proof.user_id;
      if (!userId || !sql.first`SELECT 1 FROM users WHERE user_id = ${userId} AND blocked = 0`) return null;
      createLoginSession(sql, loginSession, now);
      return startLoginMfa(sql, { ...t, user_id: userId, login_session_id: loginSession.id }, now) ? userId : null;
    });
  }

  update(id: string, patch: Partial<MfaPending>): MfaTransaction | null {
    return this.commit(({ sql, now }) => updatePending(sql, id, patch, now));
  }

  /** A factor was verified: the transaction is satisfied (one commit with its `gd_auth_succeed` event). */
  satisfy(id: string, amr: string[], factor: string): MfaTransaction | null {
    return this.commit((tx) => {
      const t = updatePending(tx.sql, id, { satisfied: true, amr }, tx.now);
      if (t) this.emit(tx, t.user_id, MFA_LOG_TYPES.authSucceeded, `MFA succeeded (${factor})`, { event_type: "user.mfa_succeeded" });
      return t;
    });
  }

  /** A wrong code or assertion (`gd_auth_failed`). */
  recordFailure(userId: string, factor: string, reason: string): void {
    this.commit((tx) => this.emit(tx, userId, MFA_LOG_TYPES.authFailed, `MFA failed (${factor}): ${reason}`, { event_type: "user.mfa_failed", status: 403 }));
  }

  /**
   * A method enrolled from a screen: stored (same rules as the management API) with the transaction's
   * pending state updated, in one commit with its `gd_enrollment_complete` event. `factors` are the tenant's
   * enabled factors as the screen saw them.
   */
  enroll(id: string, method: NewAuthenticationMethod, patch: Partial<MfaPending>, factors: GuardianSettings["factors"]): Result<AuthenticationMethodRecord> {
    return this.commit((tx) => {
      const t = getMfaTransaction(tx.sql, id, tx.now);
      if (!t || t.user_id !== method.user_id) return fail("inexistent_mfa_transaction");
      // Issue 25 finding 1, checked again in the commit that stores the method: a login whose user has a
      // factor to answer enrolls another only after answering it (the screens check first; this closes races).
      // A post-login action's enrollment (issue 32) reaches its `enroll` phase only past that challenge.
      const passed = t.pending.satisfied === true || t.pending.action?.phase === "enroll";
      if (t.kind === "login" && !loginMayEnroll(factors, listAuthenticationMethods(tx.sql, t.user_id), passed)) {
        return fail("mfa_challenge_required");
      }
      const created = createAuthenticationMethod(tx.sql, method, tx.now);
      if (!created.ok) return created;
      updatePending(tx.sql, id, patch, tx.now);
      this.emit(tx, t.user_id, MFA_LOG_TYPES.enrollmentComplete, `Enrolled ${method.type}`, { event_type: "authentication_method.enrolled" });
      return ok(created.value);
    });
  }

  /**
   * See {@link completeMfaLogin}; the post-login actions' effects and the `s` login event commit with it,
   * as in `logins().complete`.
   */
  completeLogin(id: string, input: LoginCompletion, amr: string[]): boolean {
    return this.commit((tx) => {
      const done = completeMfaLogin(tx.sql, id, input, amr, tx.now, this.audit.request);
      if (done) this.loggedIn(tx, input);
      return done;
    });
  }

  /**
   * Completes a pending login whose first factor already counts as multi-factor (a passkey with user
   * verification): `logins().complete` plus the session's amr, in one commit with the actions' effects
   * and the `s` event.
   */
  completeWithAmr(input: LoginCompletion, amr: string[]): boolean {
    return this.commit((tx) => {
      if (completeLogin(tx.sql, input, tx.now, this.audit.request) === false) return false;
      setSessionAmr(tx.sql, input.session.id, amr);
      this.loggedIn(tx, input);
      return true;
    });
  }

  /** What a completed login writes beside the session: the actions' effects, then the `s` event. */
  private loggedIn(tx: WriteTx, input: LoginCompletion): void {
    if (input.actions) applyActionEffects(tx, this.audit, input.session.user_id, input.actions);
    emitLogin(tx, this.audit, input.session.user_id, input.actions?.execution ? [input.actions.execution.id] : []);
  }

  /**
   * See {@link completeGrantLogin}; the `s` login event commits with it, and the verified method's use
   * (`methodId`, was a `recordMethodUse` commit of its own: issue 31) whether or not this request wins the token.
   */
  completeGrant(tokenId: string, session: NewSession, amr: string[], methodId: string | null = null): boolean {
    return this.commit((tx) => {
      if (methodId) recordMethodUse(tx.sql, methodId, tx.now);
      const done = completeGrantLogin(tx.sql, tokenId, session, amr, tx.now, this.audit.request);
      const actor: AuditContext = { ...this.audit, actor: { type: "user", id: session.user_id, client_id: session.client_id } };
      if (done) emitLogin(tx, actor, session.user_id);
      return done;
    });
  }

  /** Ends a ticket enrollment (the transaction cannot be used again). */
  complete(id: string): boolean {
    return this.commit(({ sql, now }) => sql.run`UPDATE mfa_transactions SET completed_at = ${now} WHERE id = ${id} AND completed_at IS NULL AND expires_at > ${now}` > 0);
  }

  sessionAmr(sessionId: string): string[] {
    return this.read((sql) => sessionAmr(sql, sessionId));
  }

  setSessionAmr(sessionId: string, amr: string[]): void {
    this.commit(({ sql }) => setSessionAmr(sql, sessionId, amr));
  }

  /** New recovery codes for a user (hashes only), replacing any old ones. */
  replaceRecoveryCodes(userId: string, hashes: string[]): void {
    this.commit(({ sql, now }) => replaceRecoveryCodes(sql, userId, hashes, now));
  }

  useRecoveryCode(userId: string, hash: string): boolean {
    return this.commit((tx) => {
      const used = useRecoveryCode(tx.sql, userId, hash, tx.now);
      if (used) this.emit(tx, userId, MFA_LOG_TYPES.recoverySucceeded, "Recovery code used", { event_type: "user.mfa_recovery" });
      return used;
    });
  }

  /**
   * Uses a recovery code at the token endpoint and stores the new one the response hands out (the reference
   * platform's `mfa-recovery-code` grant answers a fresh `recovery_code`), in one commit.
   */
  swapRecoveryCode(userId: string, hash: string, newHash: string): boolean {
    return this.commit((tx) => {
      const used = useRecoveryCode(tx.sql, userId, hash, tx.now);
      if (!used) return false;
      tx.sql.run`INSERT INTO recovery_codes (user_id, code_hash, created_at) VALUES (${userId}, ${newHash}, ${tx.now})`;
      this.emit(tx, userId, MFA_LOG_TYPES.recoverySucceeded, "Recovery code used", { event_type: "user.mfa_recovery" });
      return true;
    });
  }

  unusedRecoveryCodes(userId: string): number {
    return this.read((sql) => unusedRecoveryCodes(sql, userId));
  }

  recordAssertion(methodId: string, newCount: number): boolean {
    return this.commit(({ sql, now }) => recordAssertion(sql, methodId, newCount, now));
  }

  recordMethodUse(methodId: string): void {
    this.commit(({ sql, now }) => recordMethodUse(sql, methodId, now));
  }

  /**
   * One step of the MFA API's read (issue 31: was `challenges.find`, `users.get`, `authenticationMethods.list`,
   * `mfa.unusedRecoveryCodes` and, for an SMS challenge, `challenges.countSince` and `settingsDocuments.get`,
   * each a round trip): the `mfa_token`'s row by purpose and hash, and only when it is found, its user, methods
   * and unused recovery codes, and with `sent` the codes of `sent.purpose` texted under it since `sent.since`
   * and the SMS templates the text is rendered from.
   */
  tokenRead(purpose: string, hash: string, sent: { purpose: string; since: number } | null): MfaTokenRead {
    return this.read((sql) => {
      const challenge = findChallenge(sql, purpose, hash);
      const userId = typeof challenge?.data.user_id === "string" ? challenge.data.user_id : null;
      if (!challenge || !userId) return { challenge, user: null, methods: [], unused_recovery_codes: 0, sent: 0, sms_templates: {} };
      return {
        challenge,
        user: getUser(sql, userId),
        methods: listAuthenticationMethods(sql, userId),
        unused_recovery_codes: unusedRecoveryCodes(sql, userId),
        sent: sent ? countChallenges(sql, sent.purpose, challenge.id, sent.since) : 0,
        sms_templates: sent ? (getDocument(sql, "guardian_sms_templates") as Record<string, Json>) : {},
      };
    });
  }
}
