import type { Sql } from "../sql";

/** SPEC §5.11 / §8: three failed password attempts in a rolling five minutes lock the user. */
export const LOCKOUT_ATTEMPTS = 3;
export const LOCKOUT_WINDOW_MS = 5 * 60 * 1000;

/** The answer to "may this password attempt run bcrypt?". */
export type AttemptAdmission = { admitted: false } | { admitted: true; locked: boolean };

/**
 * Starts a password attempt: a locked user is refused before bcrypt runs; otherwise the attempt is counted
 * as a failure *before* bcrypt (forgiven by `settleAttempt(true)`), so a burst of parallel guesses cannot
 * all slip past the lockout check. `locked` says whether this attempt, if it fails, is the one that locks.
 */
export function beginAttempt(sql: Sql, now: number, maxAttempts: number | null = LOCKOUT_ATTEMPTS): AttemptAdmission {
  // Brute-force protection disabled (or the IP allowlisted) for this tenant: nothing counted, nothing locked.
  if (maxAttempts === null) return { admitted: true, locked: false };
  if (countFailures(sql, now) >= maxAttempts) return { admitted: false };
  sql.run`DELETE FROM login_failures WHERE failed_at <= ${now - LOCKOUT_WINDOW_MS}`;
  sql.run`INSERT INTO login_failures (failed_at) VALUES (${now})`;
  const failures = countFailures(sql, now);
  if (failures > maxAttempts) return { admitted: false };
  return { admitted: true, locked: failures >= maxAttempts };
}

/** Ends a password attempt: a success clears the counter; a failure stays counted. */
export function settleAttempt(sql: Sql, succeeded: boolean): void {
  if (succeeded) sql.run`DELETE FROM login_failures`;
}

function countFailures(sql: Sql, now: number): number {
  return sql.first<{ n: number }>`SELECT count(*) AS n FROM login_failures WHERE failed_at > ${now - LOCKOUT_WINDOW_MS}`?.n ?? 0;
}

/** Forgets failures older than the rolling window (alarm cleanup); they no longer count. */
export function forgetOldFailures(sql: Sql, now: number): number {
  return sql.all`DELETE FROM login_failures WHERE failed_at <= ${now - LOCKOUT_WINDOW_MS} RETURNING 1`.length;
}

/** When the oldest counted failure leaves the window, or null. */
export function nextFailureExpiry(sql: Sql): number | null {
  const at = sql.first<{ at: number | null }>`SELECT MIN(failed_at) AS at FROM login_failures`?.at ?? null;
  return at === null ? null : at + LOCKOUT_WINDOW_MS;
}
