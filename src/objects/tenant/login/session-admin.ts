import type { ListPage, ListWindow, SessionRecord } from "../../../shared/types";
import type { SessionMetadata } from "../../../shared/schemas/sessions";
import { fail, ok, type Result } from "../../../shared/errors";
import { isMissingColumn, iso, json, type Sql } from "../../sql";

type Row = Record<string, unknown>;

/**
 * A session for the management API (the row without its secret hash), with the authentication methods it
 * earned (RFC 8176 amr values), the device it was started from and last used from, and the end of its idle
 * window.
 */
export type SessionView = Omit<SessionRecord, "secret_hash"> & {
  amr: string[];
  device: Record<string, string>;
  idle_expires_at: string;
  /** `{}` when none was set; absent on a tenant pinned at a schema before 0017 (it has no metadata). */
  session_metadata?: SessionMetadata;
};

function toView(r: Row, idleMs: number): SessionView {
  const time = (v: unknown) => iso(v as number) as string;
  return {
    id: String(r.id),
    user_id: String(r.user_id),
    client_ids: json(r.client_ids as string, []),
    authenticated_at: time(r.authenticated_at),
    last_interaction_at: time(r.last_interaction_at),
    expires_at: time(r.expires_at),
    idle_expires_at: time(Math.min((r.last_interaction_at as number) + idleMs, r.expires_at as number)),
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
    amr: json(r.amr as string, []),
    device: json(r.device as string, {}),
    ...("session_metadata" in r ? { session_metadata: json<SessionMetadata>(r.session_metadata as string, {}) } : {}),
  };
}

/**
 * Live sessions newest first (SPEC §4.3 order), of one user or of the whole tenant: an offset window with
 * the total, or the rows after a checkpoint position. Live means before its absolute expiry and used within
 * the tenant's idle lifetime `idleMs` (the login path's rule: unused for longer than that signs no one in).
 * Values are always bound.
 */
export function listSessions(sql: Sql, window: ListWindow, userId: string | null, now: number, idleMs: number): ListPage<SessionView> {
  const usedSince = now - idleMs;
  const view = (r: Row) => toView(r, idleMs);
  if ("offset" in window) {
    const rows = sql.all<Row>`SELECT * FROM sessions WHERE expires_at > ${now} AND last_interaction_at >= ${usedSince}
      AND (${userId} IS NULL OR user_id = ${userId})
      ORDER BY created_at DESC, id DESC LIMIT ${window.limit} OFFSET ${window.offset}`;
    const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM sessions
      WHERE expires_at > ${now} AND last_interaction_at >= ${usedSince} AND (${userId} IS NULL OR user_id = ${userId})`?.n ?? 0;
    return { items: rows.map(view), total };
  }
  const after = window.after;
  const rows = sql.all<Row>`SELECT * FROM sessions WHERE expires_at > ${now} AND last_interaction_at >= ${usedSince}
      AND (${userId} IS NULL OR user_id = ${userId})
      AND (${after?.createdAt ?? null} IS NULL OR (created_at, id) < (${after?.createdAt ?? 0}, ${after?.id ?? ""}))
    ORDER BY created_at DESC, id DESC LIMIT ${window.limit}`;
  return { items: rows.map(view), total: null };
}

/** One live session (the same rule as `listSessions`), or null. */
export function getSessionView(sql: Sql, id: string, now: number, idleMs: number): SessionView | null {
  const row = sql.first<Row>`SELECT * FROM sessions WHERE id = ${id} AND expires_at > ${now} AND last_interaction_at >= ${now - idleMs}`;
  return row ? toView(row, idleMs) : null;
}

/**
 * PATCH /sessions/{id}: replaces a live session's metadata (`{}` clears it) and answers the session. An
 * unknown, revoked, expired or idle-expired session is `inexistent_session`, as GET answers; a tenant pinned
 * at a schema before 0017 has nowhere to keep metadata (`session_metadata_unavailable`, nothing written).
 */
export function updateSessionMetadata(sql: Sql, id: string, metadata: SessionMetadata, now: number, idleMs: number): Result<SessionView> {
  if (!getSessionView(sql, id, now, idleMs)) return fail("inexistent_session");
  try {
    sql.run`UPDATE sessions SET session_metadata = ${metadata}, updated_at = ${now} WHERE id = ${id}`;
  } catch (error) {
    if (!isMissingColumn(error, "session_metadata")) throw error;
    return fail("session_metadata_unavailable");
  }
  return ok(getSessionView(sql, id, now, idleMs) as SessionView);
}
