import type { Sql } from "../sql";

/** SPEC §5.11 / §8: three failed password attempts in a rolling five minutes lock the user. */
export const LOCKOUT_ATTEMPTS = 3;
export const LOCKOUT_WINDOW_MS = 5 * 60 * 1000;

/** The answer to "may this password attempt run bcrypt?". */
export type AttemptAdmission = { admitted: false } | { admitted: true; locked: boolean };

/**
 * Where an attempt comes from and what its failures count against (brute-force protection's `mode`): the
 * identifier alone (`count_per_identifier`), or the identifier and the client IP
 * (`count_per_identifier_and_ip`: `perIp`), so a lock holds for that IP only and the user still logs in from
 * elsewhere. `ip` is null when the address is not known (such attempts share one counter).
 */
export interface AttemptOrigin {
  ip: string | null;
  perIp: boolean;
}

const ANYWHERE: AttemptOrigin = { ip: null, perIp: false };

/** An active lock (GET /api/v2/user-blocks): the IP its failures came from, when known. */
export interface LoginBlock {
  ip: string | null;
}

/**
 * Starts a password attempt: a locked user is refused before bcrypt runs; otherwise the attempt is counted
 * as a failure *before* bcrypt (forgiven by `settleAttempt(true)`), so a burst of parallel guesses cannot
 * all slip past the lockout check. `locked` says whether this attempt, if it fails, is the one that locks.
 */
export function beginAttempt(sql: Sql, now: number, maxAttempts: number | null = LOCKOUT_ATTEMPTS, origin: AttemptOrigin = ANYWHERE): AttemptAdmission {
  // Brute-force protection disabled (or the IP allowlisted) for this tenant: nothing counted, nothing locked.
  if (maxAttempts === null) return { admitted: true, locked: false };
  if (countFailures(sql, now, origin) >= maxAttempts) return { admitted: false };
  sql.run`DELETE FROM login_failures WHERE failed_at <= ${now - LOCKOUT_WINDOW_MS}`;
  sql.run`INSERT INTO login_failures (failed_at, ip) VALUES (${now}, ${origin.ip})`;
  const failures = countFailures(sql, now, origin);
  if (failures > maxAttempts) return { admitted: false };
  return { admitted: true, locked: failures >= maxAttempts };
}

/** Ends a password attempt: a success clears the counter (the IP's only, when counted per IP); a failure stays. */
export function settleAttempt(sql: Sql, succeeded: boolean, origin: AttemptOrigin = ANYWHERE): void {
  if (!succeeded) return;
  if (origin.perIp) sql.run`DELETE FROM login_failures WHERE ip IS ${origin.ip}`;
  else sql.run`DELETE FROM login_failures`;
}

function countFailures(sql: Sql, now: number, origin: AttemptOrigin): number {
  const since = now - LOCKOUT_WINDOW_MS;
  const row = origin.perIp
    ? sql.first<{ n: number }>`SELECT count(*) AS n FROM login_failures WHERE failed_at > ${since} AND ip IS ${origin.ip}`
    : sql.first<{ n: number }>`SELECT count(*) AS n FROM login_failures WHERE failed_at > ${since}`;
  return row?.n ?? 0;
}

/**
 * The locks in force now: per IP (one entry for each address with `maxAttempts` failures in the window), or,
 * counted per identifier, one entry naming the IP of the latest failure.
 */
export function activeBlocks(sql: Sql, now: number, maxAttempts: number, perIp: boolean): LoginBlock[] {
  const since = now - LOCKOUT_WINDOW_MS;
  if (perIp) {
    return sql.all<LoginBlock>`SELECT ip FROM login_failures WHERE failed_at > ${since} GROUP BY ip HAVING count(*) >= ${maxAttempts}`;
  }
  if (countFailures(sql, now, ANYWHERE) < maxAttempts) return [];
  const latest = sql.first<LoginBlock>`SELECT ip FROM login_failures WHERE failed_at > ${since} ORDER BY failed_at DESC, id DESC LIMIT 1`;
  return [{ ip: latest?.ip ?? null }];
}

/** Lifts every lock (DELETE /api/v2/user-blocks): the failures are forgotten. */
export function clearFailures(sql: Sql): number {
  return sql.run`DELETE FROM login_failures`;
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
