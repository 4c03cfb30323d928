import type { Sql } from "../sql";

/** Issue 12 point 3: five wrong second-factor codes in a rolling five minutes lock the user's MFA. */
export const MFA_LOCKOUT_ATTEMPTS = 5;
export const MFA_LOCKOUT_WINDOW_MS = 5 * 60 * 1000;

/** The answer to "may this code be checked?": refused while locked. */
export type MfaAdmission = { admitted: false; retry_at: number } | { admitted: true };

const failures = (sql: Sql, now: number) =>
  sql.all<{ failed_at: number }>`SELECT failed_at FROM mfa_failures WHERE failed_at > ${now - MFA_LOCKOUT_WINDOW_MS} ORDER BY failed_at`;

/**
 * Starts a code check: refused when the window already holds the limit; otherwise counted as a failure
 * *before* the worker compares (forgiven by `settleMfa(true)`), so parallel guesses cannot slip past.
 */
export function beginMfa(sql: Sql, now: number, max = MFA_LOCKOUT_ATTEMPTS): MfaAdmission {
  sql.run`DELETE FROM mfa_failures WHERE failed_at <= ${now - MFA_LOCKOUT_WINDOW_MS}`;
  const recent = failures(sql, now);
  if (recent.length >= max) return { admitted: false, retry_at: (recent[recent.length - max]?.failed_at ?? now) + MFA_LOCKOUT_WINDOW_MS };
  sql.run`INSERT INTO mfa_failures (failed_at) VALUES (${now})`;
  return { admitted: true };
}

/** Ends a code check: a success forgives the attempt counted by `beginMfa` (and clears the window). */
export function settleMfa(sql: Sql, succeeded: boolean): void {
  if (succeeded) sql.run`DELETE FROM mfa_failures`;
}

/**
 * Marks a TOTP time step of a method used (RFC 6238 §5.2: a verified code must not be accepted again);
 * false when it was already used. Steps older than the verification window are forgotten.
 */
export function consumeTotpStep(sql: Sql, methodId: string, step: number, now: number): boolean {
  sql.run`DELETE FROM totp_used_steps WHERE used_at <= ${now - 10 * 60 * 1000}`;
  return sql.run`INSERT OR IGNORE INTO totp_used_steps (method_id, step, used_at) VALUES (${methodId}, ${step}, ${now})` > 0;
}
