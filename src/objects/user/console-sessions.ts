import { RpcTarget } from "cloudflare:workers";
import { now } from "../../shared/clock";
import type { ConsoleSessionRecord, NewConsoleSession } from "../../shared/console";
import type { Sql } from "../sql";

/**
 * The admin console's sessions (issue 30), one row per signed-in browser of this operator. The worker
 * holds the cookie's secret; only its hash reaches this object. A session ends at the first of: its idle
 * timeout (no request for `CONSOLE_IDLE_MS`), its absolute lifetime, logout.
 */

/** Idle timeout of a console session (issue 30). @default 30 minutes */
export const CONSOLE_IDLE_MS = 30 * 60_000;
/** Absolute lifetime of a console session (issue 30). @default 12 hours */
export const CONSOLE_ABSOLUTE_MS = 12 * 3_600_000;
/** A request refreshes `last_seen_at` only when it is older than this: reads stay reads. */
const TOUCH_AFTER_MS = 60_000;

interface Row {
  id_hash: string;
  access_token_enc: string;
  token_expires_at: number;
  csrf_token: string;
  profile: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

/** Records a session (and forgets this operator's expired ones). */
export function createConsoleSession(sql: Sql, session: NewConsoleSession, at: number): ConsoleSessionRecord {
  sql.run`DELETE FROM console_sessions WHERE expires_at <= ${at} OR last_seen_at <= ${at - CONSOLE_IDLE_MS}`;
  // The session ends with its token at the latest (both are 12 hours unless the API's token lifetime is shorter).
  const expiresAt = Math.min(at + CONSOLE_ABSOLUTE_MS, session.token_expires_at);
  sql.run`INSERT INTO console_sessions (id_hash, access_token_enc, token_expires_at, csrf_token, profile, created_at, last_seen_at, expires_at)
    VALUES (${session.id_hash}, ${session.access_token_enc}, ${session.token_expires_at}, ${session.csrf_token},
      ${JSON.stringify(session.profile)}, ${at}, ${at}, ${expiresAt})`;
  return { ...session, created_at: at, last_seen_at: at, expires_at: expiresAt };
}

/** The live session with this hash, its idle clock restarted; an expired one is removed and null comes back. */
export function touchConsoleSession(sql: Sql, idHash: string, at: number): ConsoleSessionRecord | null {
  const row = sql.first<Row>`SELECT * FROM console_sessions WHERE id_hash = ${idHash}`;
  if (!row) return null;
  if (row.expires_at <= at || row.last_seen_at + CONSOLE_IDLE_MS <= at) {
    sql.run`DELETE FROM console_sessions WHERE id_hash = ${idHash}`;
    return null;
  }
  if (at - row.last_seen_at >= TOUCH_AFTER_MS) {
    sql.run`UPDATE console_sessions SET last_seen_at = ${at} WHERE id_hash = ${idHash}`;
    row.last_seen_at = at;
  }
  return { ...row, profile: JSON.parse(row.profile) as Record<string, string> };
}

/** How many recently opened tenants a console session remembers (issue 30 tenant switcher). */
export const RECENT_TENANTS = 8;

/**
 * Puts a tenant first in the session's recent tenants (kept in its profile as `recent_tenants`, ids joined
 * by commas: a tenant id never holds one), dropping it from further down and the oldest beyond the limit.
 */
export function rememberTenant(sql: Sql, idHash: string, tenant: string): string[] {
  const row = sql.first<{ profile: string }>`SELECT profile FROM console_sessions WHERE id_hash = ${idHash}`;
  if (!row || tenant.includes(",")) return [];
  const profile = JSON.parse(row.profile) as Record<string, string>;
  const recent = [tenant, ...(profile.recent_tenants ?? "").split(",").filter((t) => t && t !== tenant)].slice(0, RECENT_TENANTS);
  profile.recent_tenants = recent.join(",");
  sql.run`UPDATE console_sessions SET profile = ${JSON.stringify(profile)} WHERE id_hash = ${idHash}`;
  return recent;
}

/** The console-session facade of the operator's user object (`stub.consoleSessions()`). */
export class ConsoleSessions extends RpcTarget {
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
  ) {
    super();
  }

  create(session: NewConsoleSession): ConsoleSessionRecord {
    return this.storage.transactionSync(() => createConsoleSession(this.sql, session, now()));
  }

  /** See {@link touchConsoleSession}. */
  touch(idHash: string): ConsoleSessionRecord | null {
    return this.storage.transactionSync(() => touchConsoleSession(this.sql, idHash, now()));
  }

  /** See {@link rememberTenant}. */
  rememberTenant(idHash: string, tenant: string): string[] {
    return this.storage.transactionSync(() => rememberTenant(this.sql, idHash, tenant));
  }

  /** Logout: the session is gone whatever it was. */
  end(idHash: string): boolean {
    return this.sql.run`DELETE FROM console_sessions WHERE id_hash = ${idHash}` > 0;
  }
}
