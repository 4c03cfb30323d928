import type { AuthorizeRequest, FreshLoginSession, LoginSession } from "../../../shared/types";
import { iso, json, type Sql } from "../../sql";

/**
 * Login sessions (SPEC §3.5): one /authorize transaction until its login completes. Since issue 31 an OIDC
 * /authorize seals a pending session into its state (src/worker/tenant/login-state.ts) and the first step that
 * changes it stores it ({@link ensureLoginSession}); SAML, device and consent sessions are stored at once.
 */

export type Row = Record<string, unknown>;

/** A stored epoch-milliseconds column as the ISO time the records show. */
export const time = (v: unknown) => iso(v as number) as string;

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

export function createLoginSession(
  sql: Sql,
  input: { id: string; request: AuthorizeRequest; csrf_token: string; expires_at: number },
  now: number,
): LoginSession {
  const row = { id: input.id, client_id: input.request.client_id, request: JSON.stringify(input.request), csrf_token: input.csrf_token, state: "pending", user_id: null, created_at: now, expires_at: input.expires_at };
  sql.run`INSERT INTO login_sessions (id, client_id, request, csrf_token, created_at, expires_at)
    VALUES (${row.id}, ${row.client_id}, ${row.request}, ${row.csrf_token}, ${now}, ${row.expires_at})`;
  // The row as a read would answer it (issue 31: was a SELECT of the row just written).
  return toLoginSession(row);
}

/**
 * Stores a sealed login session that no step has changed yet (issue 31: /authorize no longer writes it), in
 * the transaction of the step that changes it first; nothing when it is already stored (in whatever state),
 * absent or expired. The step's own conditional update then decides, as for a session /authorize stored.
 * `completedBy`: the login's completion stores it completed for that user at once (one statement); true when
 * it stored the row, false when one was already there (the completion's conditional update then decides).
 */
export function ensureLoginSession(sql: Sql, fresh: FreshLoginSession | undefined, now: number, completedBy?: string): boolean {
  if (!fresh || !(fresh.expires_at > now)) return false;
  const state = completedBy === undefined ? "pending" : "completed";
  return (
    sql.run`INSERT OR IGNORE INTO login_sessions (id, client_id, request, csrf_token, state, user_id, created_at, expires_at)
      VALUES (${fresh.id}, ${fresh.request.client_id}, ${JSON.stringify(fresh.request)}, ${fresh.csrf_token}, ${state},
        ${completedBy ?? null}, ${now}, ${fresh.expires_at})` > 0
  );
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

