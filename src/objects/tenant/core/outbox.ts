import { newEventId } from "../../../shared/event-id";
import type { AuditEvent, FailedEvent, Json } from "../../../shared/types";
import { iso, json, type Sql } from "../../sql";
import { writeLog } from "./logs";

export { newEventId };

/**
 * One event a write records in its own transaction (ARCHITECTURE.md §3 commit phase): an audit event
 * (`user.created`, `client.updated` ...; delivered to the logs table) or a hook dispatch
 * (`hook.{trigger_id}`; delivered to webhooks). `id` is generated when absent and becomes the log id and
 * the webhooks' `Idempotency-Key`.
 */
export interface OutboxEventInput {
  id?: string;
  event_type: string;
  payload: AuditEvent | HookEventPayload | InternalEventPayload;
  /** Overrides `laneOf(event_type)`: an event whose destinations await another object goes `network`. */
  lane?: Lane;
}

/** Payload of a `hook.*` event: what the webhook body's `data` carries. */
export interface HookEventPayload {
  trigger_id: string;
  data: Record<string, Json>;
  timestamp: string;
}

/** Payload of an `internal.*` event (revocation cascades, cascade.ts): plain data for an internal destination. */
export type InternalEventPayload = Record<string, Json>;

/** Outbox options (SPEC §6.3). */
export interface OutboxOptions {
  /** Record events in the outbox; false writes audit events straight to the logs table. @default true */
  enabled: boolean;
  /** Capture before/after state and diff in audit events. @default true */
  captureEntityState: boolean;
  /** Days processed events are kept. @default 7 */
  retentionDays: number;
  /** Delivery attempts before an event is dead-lettered. @default 5 */
  maxRetries: number;
}

/** SPEC §6.3 defaults, except `enabled`: this product always records through the outbox unless told not to. */
export const DEFAULT_OUTBOX_OPTIONS: OutboxOptions = { enabled: true, captureEntityState: true, retentionDays: 7, maxRetries: 5 };

/** Events that need network I/O go to the `network` lane (claimed with a lease); the rest stay `local`. */
export type Lane = "local" | "network";
export const laneOf = (eventType: string): Lane => (eventType.startsWith("hook.") ? "network" : "local");

/** A stored outbox row. */
export interface OutboxRow {
  id: string;
  event_type: string;
  payload: string;
  lane: Lane;
  created_at: number;
  retry_count: number;
  next_retry_at: number;
  error: string | null;
  processed_at: number | null;
  dead_lettered_at: number | null;
  final_error: string | null;
  claim_id: string | null;
  lease_until: number | null;
}

/**
 * Inserts a write's events; called inside the write's `transactionSync`, so a failure here rolls the
 * write back (a write that cannot record its events does not commit). With the outbox disabled, audit
 * events go straight to the logs table (SPEC §6.3) and hook events are returned for best-effort inline
 * delivery by the caller; `internal.*` events (revocation cascades) are effects, not audit, and are always
 * recorded. Returns how many outbox rows were written.
 */
export function recordOutboxEvents(
  sql: Sql,
  events: readonly OutboxEventInput[],
  now: number,
  options: Pick<OutboxOptions, "enabled"> = DEFAULT_OUTBOX_OPTIONS,
): number {
  let written = 0;
  for (const event of events) {
    const id = event.id ?? newEventId(now);
    const lane = event.lane ?? laneOf(event.event_type);
    if (!options.enabled && !event.event_type.startsWith("internal.")) {
      if (lane === "local") writeLog(sql, id, event.payload as AuditEvent, now);
      continue;
    }
    // An event delivered to the object twice under its own id (a code shard's batch, issue 31) is one row. Only
    // the id's conflict is skipped: any other failure (a payload that cannot be stored) still throws and rolls
    // the write back.
    sql.run`INSERT INTO outbox (id, event_type, payload, lane, created_at, next_retry_at)
      VALUES (${id}, ${event.event_type}, ${event.payload}, ${lane}, ${now}, ${now}) ON CONFLICT (id) DO NOTHING`;
    written++;
  }
  return written;
}


/**
 * The earliest time any outbox job is due (relay of pending or retrying events, expiry of a lease,
 * retention of processed events), or null when there is none. Claimed events carry their lease end in
 * `next_retry_at`, so one MIN covers all three.
 */
export function nextDueAt(sql: Sql, retentionDays: number): number | null {
  // One MIN per lane: each is a single step of the outbox_due index, whatever the backlog.
  const local = sql.first<{ at: number | null }>`SELECT MIN(next_retry_at) AS at FROM outbox WHERE processed_at IS NULL AND lane = 'local'`;
  const network = sql.first<{ at: number | null }>`SELECT MIN(next_retry_at) AS at FROM outbox WHERE processed_at IS NULL AND lane = 'network'`;
  const processed = sql.first<{ at: number | null }>`SELECT MIN(processed_at) AS at FROM outbox
    WHERE processed_at IS NOT NULL AND dead_lettered_at IS NULL`;
  const due = [local?.at, network?.at, processed?.at == null ? null : processed.at + retentionDays * 86_400_000];
  const times = due.filter((t): t is number => typeof t === "number");
  return times.length ? Math.min(...times) : null;
}

/** Deletes up to `limit` processed (not dead-lettered) events older than the retention window. */
export function purgeProcessed(sql: Sql, now: number, retentionDays: number, limit: number): number {
  const cutoff = now - retentionDays * 86_400_000;
  return sql.run`DELETE FROM outbox WHERE id IN (SELECT id FROM outbox
    WHERE processed_at IS NOT NULL AND dead_lettered_at IS NULL AND processed_at <= ${cutoff} LIMIT ${limit})`;
}

const toFailed = (r: OutboxRow): FailedEvent => ({
  id: r.id,
  event_type: r.event_type,
  retry_count: r.retry_count,
  error: r.error,
  final_error: r.final_error,
  created_at: iso(r.created_at) as string,
  dead_lettered_at: iso(r.dead_lettered_at) as string,
  payload: json<Json>(r.payload, null),
});

/** Dead-lettered events, newest first (SPEC §4.2 GET /failed-events). */
export function listFailedEvents(sql: Sql, offset: number, limit: number): { items: FailedEvent[]; total: number } {
  const rows = sql.all<OutboxRow>`SELECT * FROM outbox WHERE dead_lettered_at IS NOT NULL
    ORDER BY dead_lettered_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`;
  const total = sql.first<{ n: number }>`SELECT count(*) AS n FROM outbox WHERE dead_lettered_at IS NOT NULL`?.n ?? 0;
  return { items: rows.map(toFailed), total };
}

/**
 * Replays dead-lettered events (SPEC §3.2): clears every retry, dead-letter and claim field and makes them
 * due now. Ids that are unknown or not dead-lettered are reported, never an abort of the batch.
 */
export function replayFailedEvents(sql: Sql, ids: readonly string[], now: number): { replayed: string[]; not_found: string[] } {
  const replayed: string[] = [];
  const notFound: string[] = [];
  for (const id of ids) {
    const n = sql.run`UPDATE outbox SET dead_lettered_at = NULL, final_error = NULL, processed_at = NULL, retry_count = 0,
        error = NULL, next_retry_at = ${now}, claim_id = NULL, lease_until = NULL
      WHERE id = ${id} AND dead_lettered_at IS NOT NULL`;
    (n > 0 ? replayed : notFound).push(id);
  }
  return { replayed, not_found: notFound };
}
