/**
 * Cleanup of expired single-use and session rows (SPEC §6.3 "clean up sessions", §8), as a job of the
 * tenant object's one alarm (publisher.ts `AlarmJob`): authorization codes in passes of up to
 * CODE_PASS_ROWS rows; login sessions, sessions, login tickets, client-assertion jtis and revoked access
 * tokens swept round-robin under one SWEEP_BUDGET_ROWS budget per pass. A pass that hit a bound is due
 * again at once (the next alarm, after the relay); otherwise the job rests CLEANUP_INTERVAL_MS, so a busy
 * tenant is not woken at every expiry. Rows are never deleted before they expire: a consumed code is kept
 * until its expiry, so a replay is still recognized (and revokes what the code issued, RFC 6749 §4.1.2).
 *
 * Natural expiry cascades nothing to refresh tokens (SPEC §3.3); a client notified for `session-expired`
 * gets its back-channel logout.
 */
import type { Sql } from "../../sql";
import { emitBackchannelLogouts, endedSession } from "./cascade";
import type { WriteTx } from "../core/events";
import type { AlarmJob } from "../core/publisher";

/** SPEC §8: codes are deleted in passes of 50,000 rows. */
export const CODE_PASS_ROWS = 50_000;
/** Rows of the session-like tables deleted per pass, shared round-robin. */
export const SWEEP_BUDGET_ROWS = 2_000;
/** Rest between passes once nothing expired is left. */
export const CLEANUP_INTERVAL_MS = 60_000;

/** Swept tables, each with an index on `expires_at` (migrations 0002, 0010). */
export const SWEPT_TABLES = ["login_sessions", "sessions", "login_tickets", "client_assertion_jtis", "revoked_access_tokens"] as const;
type SweptTable = (typeof SWEPT_TABLES)[number];
const TABLES = [...SWEPT_TABLES, "authorization_codes"] as const;

/** The earliest `expires_at` over every cleaned table (one index step each), or null when all are empty. */
export function earliestExpiry(sql: Sql): number | null {
  let earliest: number | null = null;
  for (const table of TABLES) {
    // Table names come from the constant list above, never from input.
    const at = sql.exec<{ at: number | null }>(`SELECT MIN(expires_at) AS at FROM ${table}`)[0]?.at ?? null;
    if (at !== null && (earliest === null || at < earliest)) earliest = at;
  }
  return earliest;
}

/**
 * Deletes up to `limit` expired authorization codes (consumed or not). Counts come from RETURNING, never
 * from `rowsWritten` (which also counts index entries).
 */
export function deleteExpiredCodes(sql: Sql, now: number, limit = CODE_PASS_ROWS): number {
  return sql.all`DELETE FROM authorization_codes WHERE rowid IN
    (SELECT rowid FROM authorization_codes WHERE expires_at <= ${now} LIMIT ${limit}) RETURNING 1`.length;
}

type Sweeper = (tx: WriteTx, limit: number) => number;

/** Per table, one bounded DELETE of expired rows; sessions notify clients opted into `session-expired`. */
const SWEEPERS: Record<SweptTable, Sweeper> = {
  login_sessions: ({ sql, now }, limit) =>
    sql.all`DELETE FROM login_sessions WHERE rowid IN (SELECT rowid FROM login_sessions WHERE expires_at <= ${now} LIMIT ${limit}) RETURNING 1`.length,
  sessions: (tx, limit) => {
    const ended = tx.sql.all<Record<string, unknown>>`DELETE FROM sessions WHERE rowid IN
      (SELECT rowid FROM sessions WHERE expires_at <= ${tx.now} LIMIT ${limit}) RETURNING *`.map(endedSession);
    if (ended.length) emitBackchannelLogouts(tx, ended, "session-expired");
    return ended.length;
  },
  login_tickets: ({ sql, now }, limit) =>
    sql.all`DELETE FROM login_tickets WHERE rowid IN (SELECT rowid FROM login_tickets WHERE expires_at <= ${now} LIMIT ${limit}) RETURNING 1`.length,
  client_assertion_jtis: ({ sql, now }, limit) =>
    sql.all`DELETE FROM client_assertion_jtis WHERE rowid IN
      (SELECT rowid FROM client_assertion_jtis WHERE expires_at <= ${now} LIMIT ${limit}) RETURNING 1`.length,
  revoked_access_tokens: ({ sql, now }, limit) =>
    sql.all`DELETE FROM revoked_access_tokens WHERE rowid IN
      (SELECT rowid FROM revoked_access_tokens WHERE expires_at <= ${now} LIMIT ${limit}) RETURNING 1`.length,
};

/**
 * One round-robin sweep: starting at table `start`, each table takes what is left of the budget. Returns
 * how many rows went and where the next sweep starts (after the table that used up the budget, so no table
 * waits behind a large one forever).
 */
export function sweep(tx: WriteTx, start: number, budget = SWEEP_BUDGET_ROWS): { deleted: number; next: number; exhausted: boolean } {
  let left = budget;
  for (let i = 0; i < SWEPT_TABLES.length; i++) {
    const index = (start + i) % SWEPT_TABLES.length;
    left -= SWEEPERS[SWEPT_TABLES[index] as SweptTable](tx, left);
    if (left <= 0) return { deleted: budget, next: (index + 1) % SWEPT_TABLES.length, exhausted: true };
  }
  return { deleted: budget - left, next: start, exhausted: false };
}

/** The tenant object's cleanup job. `commit` is the publisher's write path (expired sessions may emit events). */
export class TenantCleanup implements AlarmJob {
  readonly name = "cleanup";
  /** Earliest time of the next pass (in memory: after a restart, the next expiry decides). */
  private notBefore = 0;
  private cursor = 0;

  constructor(
    private readonly sql: Sql,
    private readonly commit: <T>(fn: (tx: WriteTx) => T) => T,
  ) {}

  dueAt(): number | null {
    const earliest = earliestExpiry(this.sql);
    return earliest === null ? null : Math.max(earliest, this.notBefore);
  }

  /** One bounded pass; returns what it deleted (tests and the benchmark read it). */
  run(now: number): { codes: number; swept: number } {
    const codes = this.commit((tx) => deleteExpiredCodes(tx.sql, tx.now));
    const result = this.commit((tx) => sweep(tx, this.cursor));
    this.cursor = result.next;
    const more = codes >= CODE_PASS_ROWS || result.exhausted;
    this.notBefore = more ? now : now + CLEANUP_INTERVAL_MS;
    return { codes, swept: result.deleted };
  }
}
