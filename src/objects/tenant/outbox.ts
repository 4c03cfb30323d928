import type { Sql } from "../sql";

/**
 * The tenant's outbox seam (issue 8 fills it in). Every write goes through `TenantRpc.commit`, which hands
 * the events a write emitted to `recordOutboxEvents` inside the same transaction, so no write path can
 * forget its events once the outbox exists.
 */

/** One event a write emits; issue 8 widens it (ids, subject, delivery fields). */
export interface OutboxEventInput {
  event_type: string;
  payload: Record<string, unknown>;
}

/**
 * Stores the events of one committed write. Issue 7 only shapes the call: nothing is stored yet and no
 * write emits events; issue 8 adds the table (a migration) and the insert here.
 */
export function recordOutboxEvents(_sql: Sql, _events: readonly OutboxEventInput[], _now: number): void {}
