import { getSessionView, listSessions, type SessionView, updateSessionMetadata } from "./session-admin";
import type { SessionMetadata } from "../../../shared/schemas/sessions";
import { cascadeSessionRevoked, emitBackchannelLogouts, type EndedSession, endedSession } from "./cascade";
import type { AuthorizeRequest, FreshLoginSession, ListPage, ListWindow, LoginCompletion, LoginSession, NewAuthorizationCode, NewSession, PasswordLoginRead, SessionRecord } from "../../../shared/types";
import type { ActionEffects } from "../../../shared/schemas/actions";
import type { UserRecord } from "../../../shared/schemas/users";
import { isMissingColumn, json, type Sql } from "../../sql";
import type { AuditContext, AuditRequest } from "../../../shared/types";
import { applyActionEffects } from "../actions/action-effects";
import { LOG_TYPES } from "../core/audit";
import { audited, emitAudit, emitHook, hookUser, hookWanted } from "../core/events";
import { fail, ok, type Result } from "../../../shared/errors";
import { type WriteTx, TenantRpc } from "../core/rpc";
import { consumeLoginTicket, createAuthorizationCode } from "./single-use";
import { completeLoginSession, createLoginSession, ensureLoginSession, getLoginSession, type Row, time } from "./login-sessions";
import { SEALED_LOGIN_STATE_PREFIX } from "../../../shared/login-state";
import { getUser, type LoggedInUser, recordLogin } from "../users/users";
import { findUserByEmail } from "../users/user-rows";
import { wouldLinkAccount } from "../users/account-linking";
import { normalizeEmail } from "../../../shared/schemas/users";
import { recordUserGrant } from "../oauth/user-grants";
import type { NewUserGrant } from "../../../shared/schemas/client-grants";

function toSession(r: Row): SessionRecord {
  return {
    id: String(r.id),
    secret_hash: String(r.secret_hash),
    user_id: String(r.user_id),
    client_ids: json(r.client_ids as string, []),
    authenticated_at: time(r.authenticated_at),
    last_interaction_at: time(r.last_interaction_at),
    expires_at: time(r.expires_at),
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
  };
}

/**
 * A browser session; `authenticated_at` defaults to now (the worker passes it when a code carries it). The
 * request that starts it (the caller's audit context) is its device's first and last use. Not read back
 * (issue 31): {@link getSession} answers it.
 */
export function createSession(sql: Sql, input: NewSession, now: number, request?: AuditRequest): void {
  const authenticatedAt = input.authenticated_at ?? now;
  const seen = deviceSeen(request);
  const device = { ...renameKeys(seen, "initial_"), ...renameKeys(seen, "last_") };
  try {
    sql.run`INSERT INTO sessions (id, secret_hash, user_id, client_ids, authenticated_at, last_interaction_at,
        expires_at, issuer, device, created_at, updated_at)
      VALUES (${input.id}, ${input.secret_hash}, ${input.user_id}, ${[input.client_id]}, ${authenticatedAt}, ${now},
        ${input.expires_at}, ${input.issuer ?? null}, ${device}, ${now}, ${now})`;
  } catch (error) {
    // A tenant pinned at a schema before 0016 (expand/contract): the session without its device.
    if (!isMissingColumn(error, "device")) throw error;
    sql.run`INSERT INTO sessions (id, secret_hash, user_id, client_ids, authenticated_at, last_interaction_at,
        expires_at, issuer, created_at, updated_at)
      VALUES (${input.id}, ${input.secret_hash}, ${input.user_id}, ${[input.client_id]}, ${authenticatedAt}, ${now},
        ${input.expires_at}, ${input.issuer ?? null}, ${now}, ${now})`;
  }
}

/** A live session, or null when unknown or expired. */
export function getSession(sql: Sql, id: string, now: number): SessionRecord | null {
  const row = sql.first<Row>`SELECT * FROM sessions WHERE id = ${id} AND expires_at > ${now}`;
  return row ? toSession(row) : null;
}

/** Records that a client used the session (SSO), the time of the interaction and the device it came from. */
export function touchSession(sql: Sql, id: string, clientId: string, now: number, request?: AuditRequest): void {
  // SELECT *: a tenant pinned at a schema before 0016 has no `device` column (expand/contract).
  const row = sql.first<Row>`SELECT * FROM sessions WHERE id = ${id} AND expires_at > ${now}`;
  if (!row) return;
  const known = json<string[]>(row.client_ids as string, []);
  const clients = known.includes(clientId) ? known : [...known, clientId];
  if (!("device" in row)) {
    sql.run`UPDATE sessions SET client_ids = ${clients}, last_interaction_at = ${now}, updated_at = ${now} WHERE id = ${id}`;
    return;
  }
  const device = { ...json<Record<string, string>>(row.device as string, {}), ...renameKeys(deviceSeen(request), "last_") };
  sql.run`UPDATE sessions SET client_ids = ${clients}, device = ${device}, last_interaction_at = ${now}, updated_at = ${now} WHERE id = ${id}`;
}

/** The IP and user agent of a request, as far as it tells them (user agents cut at 256 characters). */
function deviceSeen(request: AuditRequest | undefined): Record<string, string> {
  return {
    ...(request?.ip ? { ip: request.ip } : {}),
    ...(request?.user_agent ? { user_agent: request.user_agent.slice(0, 256) } : {}),
  };
}

const renameKeys = (fields: Record<string, string>, prefix: string) => Object.fromEntries(Object.entries(fields).map(([k, v]) => [`${prefix}${k}`, v]));

/** Deletes a session; answers the row it was (null when there was none). */
export function deleteSession(sql: Sql, id: string): EndedSession | null {
  const row = sql.first<Row>`DELETE FROM sessions WHERE id = ${id} RETURNING *`;
  return row ? endedSession(row) : null;
}

/**
 * Completes an interactive login as one transaction (issue 7, one RPC per user action): the login session
 * is marked completed exactly once, the browser session starts, the user's login counters move and the
 * authorization code (if the response type asks for one) is stored. False, and nothing written, when the
 * login session was already completed or has expired (double submit, replay).
 */
export function completeLogin(sql: Sql, input: LoginCompletion, now: number, request?: AuditRequest): LoggedInUser | false {
  // A sealed session nothing has stored yet is stored completed (issue 31); one already stored completes once.
  const stored = ensureLoginSession(sql, input.fresh, now, input.session.user_id);
  if (!stored && !completeLoginSession(sql, input.login_session_id, input.session.user_id, now)) return false;
  createSession(sql, input.session, now, request);
  const user = recordLogin(sql, input.session.user_id, now, request?.ip ?? null);
  if (input.code) createAuthorizationCode(sql, input.code, now);
  return user;
}

/**
 * The events of a successful login, in its commit: the `s` log event and the post-user-login hook; a user
 * whose registration never completed gets post-user-registration enqueued again (SPEC §6.2 self-healing).
 */
export function emitLogin(tx: WriteTx, audit: AuditContext, userId: string, executions: string[] = [], known?: LoggedInUser): void {
  // Issue 31: the user's record (and its identities) is read only for a hook event that is stored; the row's
  // state comes from the login's own update when the caller has it (`known`).
  const row =
    known !== undefined
      ? known
      : tx.sql.first<NonNullable<LoggedInUser>>`SELECT linked_to, registration_completed_at AS registered FROM users WHERE user_id = ${userId}`;
  if (!row || row.linked_to !== null) return;
  const client_id = audit.actor.client_id ?? null;
  emitAudit(tx, audit, { event_type: "user.login", log_type: LOG_TYPES.login, category: "user_action", description: "Successful login", user_id: userId, client_id, executions });
  const login = hookWanted(tx, "post-user-login");
  const registration = row.registered === null && hookWanted(tx, "post-user-registration");
  const user = login || registration ? getUser(tx.sql, userId) : null;
  if (!user) return;
  if (login) emitHook(tx, "post-user-login", { user: hookUser(user), client_id });
  if (registration) emitHook(tx, "post-user-registration", { user: hookUser(user), client_id });
}

/** The login-sessions facade (`stub.logins()`): one command per step of an interactive login. */
export class Logins extends TenantRpc {
  start(input: { id: string; request: AuthorizeRequest; csrf_token: string; expires_at: number }): LoginSession {
    return this.commit(({ sql, now }) => createLoginSession(sql, input, now));
  }

  /**
   * Stores a sealed login session before a step of another capability changes it (the organization prompt);
   * a session already stored is left as it is.
   */
  store(fresh: FreshLoginSession): void {
    this.commit(({ sql, now }) => ensureLoginSession(sql, fresh, now));
  }

  /** A pending or completed login session that has not expired. */
  get(id: string): LoginSession | null {
    return this.read((sql, now) => getLoginSession(sql, id, now));
  }

  /**
   * The login form's POST in one read (issue 31: was `get`, then `users().findByEmail`, then a linking
   * commit): the login session and, in each named database connection (at most 8), the account with this
   * email, with whether linking by verified email would link it. The worker still completes the login with
   * {@link complete}, which alone decides that the session is spent.
   */
  passwordRead(id: string, email: string, connections: string[]): PasswordLoginRead {
    return this.read((sql, now) => {
      const session = getLoginSession(sql, id, now);
      const normalized = normalizeEmail(email);
      const accounts: PasswordLoginRead["accounts"] = {};
      // A sealed session (issue 31) has no row until a step changes it: the worker opens and checks it.
      if ((session || id.startsWith(SEALED_LOGIN_STATE_PREFIX)) && normalized) {
        for (const name of connections.slice(0, 8)) {
          const found = findUserByEmail(sql, name, normalized);
          accounts[name] = found ? { ...found, links: wouldLinkAccount(sql, found) } : null;
        }
      }
      return { session, email: normalized, accounts };
    });
  }

  /** See {@link completeLogin}. */
  complete(input: LoginCompletion): boolean {
    return this.commit((tx) => {
      const user = completeLogin(tx.sql, input, tx.now, this.audit.request);
      if (user === false) return false;
      if (input.actions) applyActionEffects(tx, this.audit, input.session.user_id, input.actions);
      // Actions' effects may write the user: its row is read again after them.
      emitLogin(tx, this.audit, input.session.user_id, input.actions?.execution ? [input.actions.execution.id] : [], input.actions ? undefined : user);
      return true;
    });
  }

  /**
   * The consent page's decision (issue 29 point 2), single use: the pending consent transaction is spent
   * and, on "Accept", the scopes join the user's grant, in one commit. False when the transaction was
   * already decided or has expired (double submit, replay): nothing is written then.
   */
  decideConsent(loginSessionId: string, userId: string, grant: NewUserGrant | null): boolean {
    return this.commit((tx) => {
      if (!completeLoginSession(tx.sql, loginSessionId, userId, tx.now)) return false;
      if (grant) {
        const existed = tx.sql.first`SELECT 1 FROM user_grants WHERE user_id = ${grant.user_id} AND client_id = ${grant.client_id} AND audience = ${grant.audience}`;
        const saved = recordUserGrant(tx.sql, grant, tx.now);
        audited(tx, this.audit, ok(saved), { entity: "grant", action: existed ? "updated" : "created", id: saved.id, after: () => saved });
      }
      return true;
    });
  }

  /** A refused login (SPEC §7 codes): `fu` for an unknown user, `fp` for a wrong password, `f` otherwise. */
  recordFailure(failure: { code: string; email: string; user_id: string | null; description?: string }, actions?: ActionEffects): void {
    const log_type = failure.code === "USER_NOT_FOUND" ? LOG_TYPES.loginFailedUser : failure.code === "INVALID_PASSWORD" ? LOG_TYPES.loginFailedPassword : LOG_TYPES.loginFailed;
    this.commit((tx) => {
      if (actions) applyActionEffects(tx, this.audit, failure.user_id, actions);
      emitAudit(tx, this.audit, {
        event_type: "user.login_failed",
        log_type,
        category: "user_action",
        description: failure.description ?? `Failed login: ${failure.code} (${failure.email})`,
        user_id: failure.user_id,
        client_id: this.audit.actor.client_id ?? null,
        response: { status_code: 403, body: { code: failure.code } },
        ...(actions?.execution ? { executions: [actions.execution.id] } : {}),
      });
    });
  }

  /**
   * Redeems a ticket at /authorize as one commit (one RPC per user action): consumes it, starts the browser
   * session for its user and records the login. Null, and no session, when the ticket or its user is gone.
   */
  redeemTicket(ticketHash: string, clientId: string, session: Omit<NewSession, "user_id">): UserRecord | null {
    return this.commit((tx) => {
      const { sql, now } = tx;
      const userId = consumeLoginTicket(sql, ticketHash, clientId, now);
      const user = userId ? getUser(sql, userId) : null;
      // A user blocked between /co/authenticate and /authorize gets no session (the ticket is spent anyway).
      if (!user || user.blocked) return null;
      createSession(sql, { ...session, user_id: user.user_id }, now, this.audit.request);
      recordLogin(sql, user.user_id, now, this.audit.request?.ip ?? null);
      // The worker knew only the client: the user the ticket names is the actor.
      const actor = { type: "user" as const, id: user.user_id, client_id: this.audit.actor.client_id ?? clientId };
      emitLogin(tx, { ...this.audit, actor }, user.user_id);
      return user;
    });
  }
}

/** The browser-sessions facade (`stub.sessions()`). */
export class Sessions extends TenantRpc {
  get(id: string): SessionRecord | null {
    return this.read((sql, now) => getSession(sql, id, now));
  }

  start(input: NewSession): SessionRecord {
    return this.commit(({ sql, now }) => {
      createSession(sql, input, now, this.audit.request);
      return getSession(sql, input.id, now) as SessionRecord;
    });
  }

  /** The session and its user in one read (issue 31: an SSO authorize read them in two round trips). */
  getWithUser(id: string): { session: SessionRecord | null; user: UserRecord | null } {
    return this.read((sql, now) => {
      const session = getSession(sql, id, now);
      return { session, user: session ? getUser(sql, session.user_id) : null };
    });
  }

  /** Records that a client used the session (SSO). */
  touch(id: string, clientId: string): void {
    this.commit(({ sql, now }) => touchSession(sql, id, clientId, now, this.audit.request));
  }

  /**
   * An SSO answer in one commit (issue 31: was `touch`, then `codes().create`): the session's use by the
   * client recorded and the authorization code stored together.
   */
  touchWithCode(id: string, clientId: string, code: NewAuthorizationCode): void {
    this.commit(({ sql, now }) => {
      touchSession(sql, id, clientId, now, this.audit.request);
      createAuthorizationCode(sql, code, now);
    });
  }

  /**
   * Logout: the session goes, with its `slo` log event. Its clients registered for back-channel logout are
   * notified (`rp-logout`, OIDC Back-Channel Logout 1.0 §2.3); its refresh tokens stay (SPEC §3.3).
   */
  delete(id: string): boolean {
    return this.commit((tx) => {
      const ended = deleteSession(tx.sql, id);
      if (ended) {
        emitAudit(tx, this.audit, { event_type: "user.logout", log_type: LOG_TYPES.logout, category: "user_action", description: "Successful logout", user_id: ended.user_id, client_id: this.audit.actor.client_id ?? null });
        if (ended.expires_at > tx.now) emitBackchannelLogouts(tx, [ended], "rp-logout");
      }
      return ended !== null;
    });
  }

  /**
   * Live sessions for the management API, of one user or all (never the secret hash). `idleMs` is the
   * tenant's idle session lifetime as the worker resolves it for logins, so both judge a session alike.
   */
  list(window: ListWindow, userId: string | null, idleMs: number): ListPage<SessionView> {
    return this.read((sql, now) => listSessions(sql, window, userId, now, idleMs));
  }

  view(id: string, idleMs: number): SessionView | null {
    return this.read((sql, now) => getSessionView(sql, id, now, idleMs));
  }

  /**
   * PATCH /sessions/{id}: the session's metadata replaced, audited (`session.updated`) in the same commit.
   * `idleMs` judges liveness as `view` does.
   */
  update(id: string, metadata: SessionMetadata, idleMs: number): Result<SessionView> {
    return this.commit((tx) =>
      audited(tx, this.audit, updateSessionMetadata(tx.sql, id, metadata, tx.now, idleMs), {
        entity: "session",
        action: "updated",
        id,
        after: (s) => ({ session_metadata: s.session_metadata ?? null }),
      }),
    );
  }

  /**
   * Management revocation (SPEC §3.3): deletes the session and, in the same commit, records its cascade
   * (the refresh tokens issued under it, back-channel logout of its clients: cascade.ts). Answers whose it
   * was, so the worker can make the refresh revocation call at once as well.
   */
  revoke(id: string): Result<{ user_id: string }> {
    return this.commit((tx) => {
      const revoked = deleteSession(tx.sql, id);
      if (revoked) cascadeSessionRevoked(tx, revoked);
      const result = revoked ? ok({ user_id: revoked.user_id }) : fail("inexistent_session");
      return audited(tx, this.audit, result, { entity: "session", action: "deleted", id });
    });
  }

  /**
   * DELETE /users/{id}/sessions: every session of the user revoked as `revoke` does one (refresh tokens
   * issued under them, back-channel logout), in one commit. Answers the ended sessions' ids; an unknown
   * user is `inexistent_user`, a user without sessions ends none.
   */
  revokeAllOf(userId: string): Result<{ session_ids: string[] }> {
    return this.commit((tx) => {
      if (!getUser(tx.sql, userId)) return audited(tx, this.audit, fail("inexistent_user"), { entity: "user_sessions", action: "deleted", id: userId });
      const ended = tx.sql.all<Row>`DELETE FROM sessions WHERE user_id = ${userId} RETURNING *`.map(endedSession);
      for (const session of ended) cascadeSessionRevoked(tx, session);
      return audited(tx, this.audit, ok({ session_ids: ended.map((s) => s.id) }), { entity: "user_sessions", action: "deleted", id: userId });
    });
  }
}

/** Records that a browser session passed MFA (a step-up on SSO) or a passwordless login: its `amr`. */
export function setSessionAmr(sql: Sql, sessionId: string, amr: string[]): void {
  sql.run`UPDATE sessions SET amr = ${amr} WHERE id = ${sessionId}`;
}
