import type { Sql } from "../sql";

/** SPEC §5.11 / §8: three failed password attempts in a rolling five minutes lock the user. */
export const LOCKOUT_ATTEMPTS = 3;
export const LOCKOUT_WINDOW_MS = 5 * 60 * 1000;

/** Records a failure and answers whether the user is now locked out. */
export function recordLoginFailure(sql: Sql, now: number): { locked: boolean; failures: number } {
  sql.run`DELETE FROM login_failures WHERE failed_at <= ${now - LOCKOUT_WINDOW_MS}`;
  sql.run`INSERT INTO login_failures (failed_at) VALUES (${now})`;
  const failures = countFailures(sql, now);
  return { locked: failures >= LOCKOUT_ATTEMPTS, failures };
}

export function isLockedOut(sql: Sql, now: number): boolean {
  return countFailures(sql, now) >= LOCKOUT_ATTEMPTS;
}

/** A successful login clears the counter. */
export function clearLoginFailures(sql: Sql): void {
  sql.run`DELETE FROM login_failures`;
}

function countFailures(sql: Sql, now: number): number {
  return sql.first<{ n: number }>`SELECT count(*) AS n FROM login_failures WHERE failed_at > ${now - LOCKOUT_WINDOW_MS}`?.n ?? 0;
}
