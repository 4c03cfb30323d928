import { MIGRATION_REPORT_DAYS, type MigrationDay, type MigrationReport, movedUserDescription, scriptLoginMark } from "../../../shared/actions/migration-report";
import type { Sql } from "../../sql";

const DAY_MS = 24 * 60 * 60 * 1000;
const isoDay = (at: number) => new Date(at).toISOString().slice(0, 10);

/**
 * The migration report of a custom database connection (issue 32 point 4): its users now, and the script
 * logins of the last {@link MIGRATION_REPORT_DAYS} UTC days from the logs (a move is an `ss` log of the
 * connection; a failed script login an `fp` or `f` log whose description carries the connection's mark).
 * Reads only: the logs' date index bounds the scan to the window.
 */
export function migrationReport(sql: Sql, connection: string, importMode: boolean, now: number): MigrationReport {
  const users = sql.first<{ total: number; without: number }>`SELECT COUNT(*) AS total, COALESCE(SUM(password_hash IS NULL), 0) AS without
    FROM users WHERE connection = ${connection}`;
  const firstDay = Date.parse(isoDay(now - (MIGRATION_REPORT_DAYS - 1) * DAY_MS));
  const moved = movedUserDescription(connection);
  const mark = scriptLoginMark(connection);
  const rows = sql.all<{ date: number; type: string; description: string | null }>`SELECT date, type, description FROM logs
    WHERE date >= ${firstDay}
      AND ((type = 'ss' AND description = ${moved})
        OR (type IN ('fp', 'f') AND substr(description, length(description) - ${mark.length - 1}) = ${mark}))`;
  const days = new Map<string, MigrationDay>();
  for (let i = 0; i < MIGRATION_REPORT_DAYS; i++) {
    const date = isoDay(firstDay + i * DAY_MS);
    days.set(date, { date, script_logins: 0, moved: 0, failed: 0 });
  }
  let last: number | null = null;
  for (const row of rows) {
    const day = days.get(isoDay(row.date));
    if (!day) continue;
    if (row.type === "ss") day.moved++;
    else day.failed++;
    day.script_logins++;
    last = Math.max(last ?? 0, row.date);
  }
  // Beyond the window, the newest script login still says when the legacy store was last needed.
  if (last === null) {
    const older = sql.first<{ date: number }>`SELECT date FROM logs
      WHERE (type = 'ss' AND description = ${moved}) OR (type IN ('fp', 'f') AND substr(description, length(description) - ${mark.length - 1}) = ${mark})
      ORDER BY date DESC LIMIT 1`;
    last = older?.date ?? null;
  }
  const list = [...days.values()];
  return {
    import_mode: importMode,
    users_moved: users?.total ?? 0,
    users_without_password: users?.without ?? 0,
    script_logins_last_30_days: list.reduce((n, d) => n + d.script_logins, 0),
    last_script_login_at: last === null ? null : new Date(last).toISOString(),
    days: list,
  };
}
