/**
 * The migration report of a custom database connection in import mode (issue 32 point 4, beyond the
 * reference platform): how many users moved, and how many logins still went through the `login` script per
 * day, read from the tenant's logs, so an operator knows when the legacy store can be switched off. The log
 * descriptions below are the ones the login and the move write; the report counts them.
 */

/** The description of the `ss` log a user's move writes. */
export const movedUserDescription = (connection: string) => `User moved from the custom database of connection ${connection}`;

/** The suffix of the description of a failed login the `login` script answered (`fp` or `f`). */
export const scriptLoginMark = (connection: string) => ` (custom database connection ${connection})`;

/** Days the report covers, today included. @default 30 */
export const MIGRATION_REPORT_DAYS = 30;

/** One day of script logins (UTC). */
export interface MigrationDay {
  /** `YYYY-MM-DD` (UTC). */
  date: string;
  /** Logins the `login` script answered that day: `moved` + `failed`. */
  script_logins: number;
  /** Users moved by a successful script login (or a reset through `get_user`). */
  moved: number;
  /** Script logins that failed (a wrong password, a script error or timeout). */
  failed: number;
}

/** `gatehouse_migration` of GET /connections/{id}/status. */
export interface MigrationReport {
  import_mode: boolean;
  /** Users of the connection in Gatehouse now (every one of them logs in locally). */
  users_moved: number;
  /** Moved by a password reset through `get_user` and not logged in since: no password here yet. */
  users_without_password: number;
  /** Script logins over the last {@link MIGRATION_REPORT_DAYS} days. */
  script_logins_last_30_days: number;
  /** The newest script login in the logs (ISO 8601), or null. */
  last_script_login_at: string | null;
  /** Oldest first, one entry per day, days without script logins included. */
  days: MigrationDay[];
}
