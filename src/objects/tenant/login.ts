import type { AuthorizeRequest, LoginSession, SessionRecord } from "../../shared/types";
import { iso, json, type Sql } from "../sql";

type Row = Record<string, unknown>;
const time = (v: unknown) => iso(v as number) as string;

function toLoginSession(r: Row): LoginSession {
  return {
    id: String(r.id),
    client_id: String(r.client_id),
    request: json<AuthorizeRequest>(r.request as string, {} as AuthorizeRequest),
    csrf_token: String(r.csrf_token),
    state: r.state as LoginSession["state"],
    user_id: (r.user_id as string | null) ?? null,
    created_at: time(r.created_at),
    expires_at: time(r.expires_at),
  };
}

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

export function createLoginSession(
  sql: Sql,
  input: { id: string; request: AuthorizeRequest; csrf_token: string; expires_at: number },
  now: number,
): LoginSession {
  sql.run`INSERT INTO login_sessions (id, client_id, request, csrf_token, created_at, expires_at)
    VALUES (${input.id}, ${input.request.client_id}, ${input.request}, ${input.csrf_token}, ${now}, ${input.expires_at})`;
  return getLoginSession(sql, input.id, now) as LoginSession;
}

/** A login session that has not expired, or null. */
export function getLoginSession(sql: Sql, id: string, now: number): LoginSession | null {
  const row = sql.first<Row>`SELECT * FROM login_sessions WHERE id = ${id} AND expires_at > ${now}`;
  return row ? toLoginSession(row) : null;
}

/**
 * Marks a pending login session completed for a user, exactly once: a second completion (double submit,
 * replayed form) finds no pending row and returns false.
 */
export function completeLoginSession(sql: Sql, id: string, userId: string, now: number): boolean {
  return sql.run`UPDATE login_sessions SET state = 'completed', user_id = ${userId}
    WHERE id = ${id} AND state = 'pending' AND expires_at > ${now}` > 0;
}

export function createSession(
  sql: Sql,
  input: { id: string; secret_hash: string; user_id: string; client_id: string; expires_at: number },
  now: number,
): SessionRecord {
  sql.run`INSERT INTO sessions (id, secret_hash, user_id, client_ids, authenticated_at, last_interaction_at,
      expires_at, created_at, updated_at)
    VALUES (${input.id}, ${input.secret_hash}, ${input.user_id}, ${[input.client_id]}, ${now}, ${now},
      ${input.expires_at}, ${now}, ${now})`;
  return getSession(sql, input.id, now) as SessionRecord;
}

/** A live session, or null when unknown or expired. */
export function getSession(sql: Sql, id: string, now: number): SessionRecord | null {
  const row = sql.first<Row>`SELECT * FROM sessions WHERE id = ${id} AND expires_at > ${now}`;
  return row ? toSession(row) : null;
}

/** Records that a client used the session (SSO) and the time of the interaction. */
export function touchSession(sql: Sql, id: string, clientId: string, now: number): void {
  const session = getSession(sql, id, now);
  if (!session) return;
  const clients = session.client_ids.includes(clientId) ? session.client_ids : [...session.client_ids, clientId];
  sql.run`UPDATE sessions SET client_ids = ${clients}, last_interaction_at = ${now}, updated_at = ${now} WHERE id = ${id}`;
}

export function deleteSession(sql: Sql, id: string): boolean {
  return sql.run`DELETE FROM sessions WHERE id = ${id}` > 0;
}
