import { luceneToSql } from "../../../shared/lucene";
import { LOGS_SEARCH } from "../../../shared/logs-search";
import type { AuditEvent, Json, LogRecord } from "../../../shared/types";
import { iso, json, type Sql, type SqlValue } from "../../sql";

/**
 * The logs destination's write (SPEC §6.2): one row per audit event, keyed by the outbox event id, so a
 * redelivery is ignored (`INSERT OR IGNORE`).
 */
export function writeLog(sql: Sql, logId: string, event: AuditEvent, now: number): void {
  const { log_type, description, client_id, user_id, request, timestamp, log_tenant_id: _tenant, ...details } = event;
  const date = Date.parse(timestamp) || now;
  sql.run`INSERT OR IGNORE INTO logs (log_id, date, type, event_type, description, client_id, user_id, ip, user_agent, details)
    VALUES (${logId}, ${date}, ${log_type}, ${event.event_type}, ${description}, ${client_id ?? null}, ${user_id ?? null},
      ${request?.ip ?? null}, ${request?.user_agent ?? null}, ${{ ...details, ...(request ? { request } : {}) }})`;
}

type Row = Record<string, unknown>;

const toLog = (r: Row): LogRecord => ({
  log_id: String(r.log_id),
  date: iso(r.date as number) as string,
  type: String(r.type),
  description: (r.description as string | null) ?? null,
  client_id: (r.client_id as string | null) ?? null,
  user_id: (r.user_id as string | null) ?? null,
  ip: (r.ip as string | null) ?? null,
  user_agent: (r.user_agent as string | null) ?? null,
  details: json<Record<string, Json>>(r.details as string, {}),
});

/**
 * The `q` fields of GET /logs (the shared Lucene compiler, src/shared/lucene): exact `type`, `user_id`,
 * `client_id`, `ip`, `event_type`, dates and date ranges on `date`, words of `description`; a bare term
 * searches the description.
 */

/** Filters of GET /logs: the `q` text (already validated by the worker) and a fixed user (/users/{id}/logs). */
export interface LogFilter {
  q?: string;
  user_id?: string;
}

/** A page of logs: offset window with total, or the rows strictly after a keyset position (date, log_id). */
export type LogWindow =
  | { offset: number; limit: number; ascending: boolean }
  | { after: { date: number; id: string } | null; limit: number; ascending: boolean };

/** Lists logs by date (then log id) in the requested direction; every value is bound. */
export function listLogs(sql: Sql, filter: LogFilter, window: LogWindow): { items: LogRecord[]; total: number | null } {
  const where: string[] = [];
  const values: SqlValue[] = [];
  const search = luceneToSql(filter.q, LOGS_SEARCH);
  if (search) {
    where.push(search.where);
    values.push(...search.params);
  }
  if (filter.user_id !== undefined) {
    where.push("user_id = ?");
    values.push(filter.user_id);
  }
  const direction = window.ascending ? "ASC" : "DESC";
  const order = ` ORDER BY date ${direction}, log_id ${direction} LIMIT ?`;
  const clause = () => (where.length ? ` WHERE ${where.join(" AND ")}` : "");
  if ("offset" in window) {
    const rows = sql.exec<Row>(`SELECT * FROM logs${clause()}${order} OFFSET ?`, ...values, window.limit, window.offset);
    const total = sql.exec<{ n: number }>(`SELECT count(*) AS n FROM logs${clause()}`, ...values)[0]?.n ?? 0;
    return { items: rows.map(toLog), total };
  }
  if (window.after) {
    where.push(`(date, log_id) ${window.ascending ? ">" : "<"} (?, ?)`);
    values.push(window.after.date, window.after.id);
  }
  return { items: sql.exec<Row>(`SELECT * FROM logs${clause()}${order}`, ...values, window.limit).map(toLog), total: null };
}

/** One log by id. */
export function getLog(sql: Sql, logId: string): LogRecord | null {
  const row = sql.first<Row>`SELECT * FROM logs WHERE log_id = ${logId}`;
  return row ? toLog(row) : null;
}

export { LOGS_SEARCH };

const DAY_MS = 86_400_000;

/** One UTC day of GET /stats/daily, counted from the logs (SPEC §4.3; the reference platform's shape). */
export interface DailyStat {
  date: string;
  logins: number;
  signups: number;
  /** Breached-password detections: Gatehouse offers none, so always 0. */
  leaked_passwords: number;
  /** Gatehouse extension: failed logins (`f`, `fp`, `fu`), which the console charts. */
  failed_logins: number;
  /** When the day's first counted event happened. */
  created_at: string;
  /** When the day's last counted event happened. */
  updated_at: string;
}

/**
 * Logins (`s`), sign-ups (`ss`) and failed logins (`f`, `fp`, `fu`) per UTC day in [from, to) (epoch ms),
 * oldest first; only days with at least one such event, as the reference platform keeps a record per day.
 */
export function dailyStats(sql: Sql, from: number, to: number): DailyStat[] {
  const rows = sql.exec<{ day: number; logins: number; signups: number; failed: number; first: number; last: number }>(
    `SELECT date / ${DAY_MS} AS day,
        sum(type = 's') AS logins, sum(type = 'ss') AS signups, sum(type IN ('f', 'fp', 'fu')) AS failed,
        min(date) AS first, max(date) AS last
      FROM logs WHERE date >= ? AND date < ? AND type IN ('s', 'ss', 'f', 'fp', 'fu')
      GROUP BY day ORDER BY day`,
    from,
    to,
  );
  return rows.map((r) => ({
    date: new Date(r.day * DAY_MS).toISOString(),
    logins: r.logins,
    signups: r.signups,
    leaked_passwords: 0,
    failed_logins: r.failed,
    created_at: new Date(r.first).toISOString(),
    updated_at: new Date(r.last).toISOString(),
  }));
}

/** Distinct users with a successful login (`s`) since `since` (epoch ms): GET /stats/active-users. */
export function activeUsers(sql: Sql, since: number): number {
  return sql.first<{ n: number }>`SELECT count(DISTINCT user_id) AS n FROM logs WHERE date >= ${since} AND type = 's' AND user_id IS NOT NULL`?.n ?? 0;
}
