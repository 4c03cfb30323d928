import type { ListPage, ListWindow, SessionRecord } from "../../shared/types";
import { iso, json, type Sql } from "../sql";

type Row = Record<string, unknown>;

/**
 * A session for the management API (the row without its secret hash), with the authentication methods it
 * earned (RFC 8176 amr values) and the device it was started from and last used from.
 */
export type SessionView = Omit<SessionRecord, "secret_hash"> & { amr: string[]; device: Record<string, string> };

function toView(r: Row): SessionView {
  const time = (v: unknown) => iso(v as number) as string;
  return {
    id: String(r.id),
    user_id: String(r.user_id),
    client_ids: json(r.client_ids as string, []),
    authenticated_at: time(r.authenticated_at),
    last_interaction_at: time(r.last_interaction_at),
    expires_at: time(r.expires_at),
    created_at: time(r.created_at),
    updated_at: time(r.updated_at),
    amr: json(r.amr as string, []),
    device: json(r.device as string, {}),
  };
}

/**
 * Live sessions newest first (SPEC §4.3 order), of one user or of the whole tenant: an offset window with
 * the total, or the rows after a checkpoint position. Values are always bound.
 */
export function listSessions(sql: Sql, window: ListWindow, userId: string | null, now: number): ListPage<SessionView> {
  if ("offset" in window) {
    const rows = sql.all<Row>`SELECT * FROM sessions WHERE expires_at > ${now} AND (${userId} IS NULL OR user_id = ${userId})
      ORDER BY created_at DESC, id DESC LIMIT ${window.limit} OFFSET ${window.offset}`;
    const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM sessions
      WHERE expires_at > ${now} AND (${userId} IS NULL OR user_id = ${userId})`?.n ?? 0;
    return { items: rows.map(toView), total };
  }
  const after = window.after;
  const rows = sql.all<Row>`SELECT * FROM sessions WHERE expires_at > ${now} AND (${userId} IS NULL OR user_id = ${userId})
      AND (${after?.createdAt ?? null} IS NULL OR (created_at, id) < (${after?.createdAt ?? 0}, ${after?.id ?? ""}))
    ORDER BY created_at DESC, id DESC LIMIT ${window.limit}`;
  return { items: rows.map(toView), total: null };
}

export function getSessionView(sql: Sql, id: string, now: number): SessionView | null {
  const row = sql.first<Row>`SELECT * FROM sessions WHERE id = ${id} AND expires_at > ${now}`;
  return row ? toView(row) : null;
}
