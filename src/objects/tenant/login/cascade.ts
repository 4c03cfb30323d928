/**
 * Revocation cascades (SPEC §3.3, ARCHITECTURE.md §3): when a session ends deliberately, the refresh tokens
 * issued under it (in the user's own object) and the clients that took part in it (OIDC Back-Channel
 * Logout) must learn of it even if a call fails. Both effects are outbox events of the `network` lane,
 * recorded in the transaction that ends the session, and delivered by internal destinations
 * (destinations.ts) with the relay's retries, backoff and dead-lettering. The worker may make the refresh
 * revocation call first for immediacy; the outbox makes it certain.
 *
 * What cascades: DELETE /sessions/{id} and its revoke alias (tokens of that session, `session-revoked`),
 * blocking a user (every token of the user, so sessions revoked earlier are covered again, and every live
 * session ends, `account-deactivated`), deleting a user (`account-deleted`). The logout endpoints notify
 * clients (`rp-logout`) but never revoke refresh tokens; natural expiry and cleanup revoke nothing and
 * notify only clients that opted into `session-expired`.
 */
import { type LogoutInitiator, notifies } from "../../../shared/backchannel";
import type { AuditEvent, Json } from "../../../shared/types";
import { json, type Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { toClient } from "../oauth/rows";
import type { WriteTx } from "../core/events";
import type { OutboxEventInput } from "../core/outbox";

/** Internal event types: never written to the logs table; listed in failed events when they dead-letter. */
export const REFRESH_REVOCATION = "internal.refresh_revocation";
export const BACKCHANNEL_LOGOUT = "internal.backchannel_logout";
export { isInternalEvent } from "../core/events";

/** Revoke a user's refresh tokens: those of the given sessions, or every one (`session_ids: null`). */
export interface RefreshRevocationPayload {
  user_id: string;
  session_ids: string[] | null;
  /** With `session_ids: null` (blocking, deletion): the sessions that ended, so no family starts under them. */
  ended_session_ids?: string[];
  reason: LogoutInitiator;
}

/** One logout token to POST to one client. The URL is read at delivery time (the client's current setting). */
export interface BackchannelLogoutPayload {
  client_id: string;
  user_id: string;
  session_id: string;
  /** The issuer of the session's tokens (null for sessions stored before it was recorded: the apex). */
  issuer: string | null;
  initiator: LogoutInitiator;
}

/** A session that just ended, as the cascade needs it. */
export interface EndedSession {
  id: string;
  user_id: string;
  client_ids: string[];
  issuer: string | null;
  expires_at: number;
}

/** Reads `DELETE ... RETURNING *` rows of the sessions table. */
export function endedSession(row: Record<string, unknown>): EndedSession {
  return {
    id: String(row.id),
    user_id: String(row.user_id),
    client_ids: json<string[]>(row.client_ids as string, []),
    issuer: (row.issuer as string | null) ?? null,
    expires_at: Number(row.expires_at),
  };
}

const internal = (event_type: string, payload: object): OutboxEventInput => ({
  event_type,
  lane: "network",
  payload: payload as unknown as Record<string, Json> as OutboxEventInput["payload"],
});

/** Records the refresh-token revocation of a cascade (delivered to the user's object by the relay). */
export function emitRefreshRevocation(tx: Pick<WriteTx, "emit">, payload: RefreshRevocationPayload): void {
  tx.emit(internal(REFRESH_REVOCATION, payload));
}

/**
 * Records one back-channel logout per (session, participating client) whose settings ask for this
 * initiator (OIDC Back-Channel Logout 1.0 §2.3: only RPs that took part in the session are notified). Each
 * notification is its own event, so one unreachable client retries and dead-letters alone.
 */
export function emitBackchannelLogouts(tx: Pick<WriteTx, "emit" | "sql">, sessions: readonly EndedSession[], initiator: LogoutInitiator): number {
  const clients = new Map<string, boolean>();
  let emitted = 0;
  for (const session of sessions) {
    for (const clientId of new Set(session.client_ids)) {
      if (!clients.has(clientId)) {
        const row = tx.sql.first<Record<string, unknown>>`SELECT * FROM clients WHERE client_id = ${clientId}`;
        const client = row ? toClient(row) : null;
        clients.set(clientId, client !== null && notifies(client, initiator));
      }
      if (!clients.get(clientId)) continue;
      const payload: BackchannelLogoutPayload = { client_id: clientId, user_id: session.user_id, session_id: session.id, issuer: session.issuer, initiator };
      tx.emit(internal(BACKCHANNEL_LOGOUT, payload));
      emitted++;
    }
  }
  return emitted;
}

/** A deliberately ended session: its pending codes deleted, its refresh tokens revoked, its clients notified. */
export function cascadeSessionRevoked(tx: WriteTx, session: EndedSession): void {
  // A code issued under the session and not yet redeemed would mint tokens (a refresh token among them)
  // that this revocation never reaches: it goes with the session.
  tx.sql.run`DELETE FROM authorization_codes WHERE session_id = ${session.id} AND consumed_at IS NULL`;
  emitRefreshRevocation(tx, { user_id: session.user_id, session_ids: [session.id], reason: "session-revoked" });
  emitBackchannelLogouts(tx, [session], "session-revoked");
}

/**
 * Ends every session of a user and revokes every refresh token the user holds (blocking, deletion).
 * Revoking all tokens, not only those of the sessions ending now, re-runs the cascade for sessions
 * revoked earlier (SPEC §3.3), whether or not their own cascade completed. Only live sessions notify.
 */
export function cascadeUserSessions(tx: WriteTx, userId: string, initiator: "account-deactivated" | "account-deleted"): void {
  const ended = tx.sql.all<Record<string, unknown>>`DELETE FROM sessions WHERE user_id = ${userId} RETURNING *`.map(endedSession);
  emitRefreshRevocation(tx, { user_id: userId, session_ids: null, ended_session_ids: ended.map((s) => s.id), reason: initiator });
  emitBackchannelLogouts(tx, ended.filter((s) => s.expires_at > tx.now), initiator);
}

/** Whether the user row says blocked (read inside the write's transaction, so it is the committed state). */
function isBlocked(sql: Sql, userId: string): boolean {
  return sql.first<{ blocked: number }>`SELECT blocked FROM users WHERE user_id = ${userId}`?.blocked === 1;
}

/**
 * A reaction of the commit path (Publisher.commit): every successful `user.updated` write that leaves the
 * user blocked, and every `user.deleted`, runs the user cascade in the same transaction, whichever route
 * or facade made the write. Re-blocking a blocked user re-runs it (idempotent: no live session, tokens
 * already revoked), which also lets an operator re-trigger a cascade that dead-lettered.
 */
export function reactToUserWrite(tx: WriteTx, event: OutboxEventInput): void {
  if (event.event_type !== "user.updated" && event.event_type !== "user.deleted") return;
  const payload = event.payload as AuditEvent;
  if (payload.log_type === LOG_TYPES.apiFailed || (payload.response?.status_code ?? 200) >= 400) return;
  const userId = payload.target?.id;
  if (typeof userId !== "string" || !userId) return;
  if (event.event_type === "user.deleted") cascadeUserSessions(tx, userId, "account-deleted");
  else if (isBlocked(tx.sql, userId)) cascadeUserSessions(tx, userId, "account-deactivated");
}
