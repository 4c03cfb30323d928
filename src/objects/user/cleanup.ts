/**
 * The user object's alarm (SPEC §8): expired refresh-token families and failed-login rows past the
 * rolling window are removed in bounded batches. One alarm per object, at the earliest due job: the next
 * family head to expire or the next failure to leave the window. A batch that hit its bound is due again
 * at once.
 */
import { rotationLifetimes } from "../../shared/refresh-policy";
import type { RefreshLifetimes, TenantConfig } from "../../shared/types";
import type { Sql } from "../sql";
import { forgetOldFailures, nextFailureExpiry } from "./login-throttle";
import { expiredHeads, forgetEndedSessions, nextEndedSessionExpiry, nextHeadExpiry, settleExpiredHeads } from "./refresh-families";

/** Families examined per alarm run. */
export const FAMILY_BATCH = 500;

/** The earliest time the alarm has work, or null. */
export function nextCleanupAt(sql: Sql): number | null {
  const times = [nextHeadExpiry(sql), nextFailureExpiry(sql), nextEndedSessionExpiry(sql)].filter((t): t is number => t !== null);
  return times.length ? Math.min(...times) : null;
}

/** The clients' current refresh policies, from the tenant's configuration (null: the client is gone). */
export function policyFrom(config: TenantConfig): (clientId: string) => RefreshLifetimes | null {
  const clients = new Map(config.clients.map((c) => [c.client_id, c]));
  return (clientId) => {
    const client = clients.get(clientId);
    if (!client) return null;
    // The same resolution the refresh grant applies (absolute and idle independently, SPEC §2.8).
    return rotationLifetimes(client, config);
  };
}

export interface CleanupDeps {
  sql: Sql;
  transaction<T>(fn: () => T): T;
  now(): number;
  /** The tenant configuration, fetched only when some head is past a stored expiry. */
  config(): Promise<TenantConfig>;
}

/** One bounded run; `more` when a bound was hit. */
export async function runUserCleanup(deps: CleanupDeps): Promise<{ deleted: number; kept: number; failures: number; more: boolean }> {
  const failures = deps.transaction(() => {
    forgetEndedSessions(deps.sql, deps.now());
    return forgetOldFailures(deps.sql, deps.now());
  });
  const candidates = expiredHeads(deps.sql, deps.now(), FAMILY_BATCH);
  if (!candidates.length) return { deleted: 0, kept: 0, failures, more: false };
  // Outgoing I/O: a rotation may commit meanwhile, so the settle step re-reads each head in its transaction.
  const policy = policyFrom(await deps.config());
  const settled = deps.transaction(() => settleExpiredHeads(deps.sql, candidates, policy, deps.now()));
  return { ...settled, failures, more: candidates.length >= FAMILY_BATCH };
}
