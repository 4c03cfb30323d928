import type { Json } from "../../../shared/types";
import { json, type Sql } from "../../sql";
import type { Lane, OutboxOptions, OutboxRow } from "./outbox";
import { purgeProcessed } from "./outbox";

/** An event as a destination sees it. */
export interface DeliverableEvent {
  id: string;
  event_type: string;
  payload: Json;
  created_at: number;
  retry_count: number;
}

/**
 * A delivery target (SPEC §6.2). Every destination is idempotent: delivery is at-least-once. Local-lane
 * destinations are synchronous and run inside the relay's transaction; network-lane ones may await
 * `fetch` and run outside any transaction, bounded by `timeoutMs`.
 */
export interface Destination {
  name: string;
  lane: Lane;
  /** Upper bound of one delivery, used to size the claim lease. */
  timeoutMs: number;
  /**
   * Optional tighter bound for one event type as things stand at claim time (e.g. the code hooks: the actions
   * bound to that trigger now, not every binding a trigger may have). Defaults to `timeoutMs`.
   */
  boundMs?(eventType: string): number;
  accepts(eventType: string): boolean;
  /**
   * Whether the destination has anything to do now for an event of this type it accepts (e.g. the webhooks: an
   * enabled hook of the trigger). Asked inside the write's transaction before an optional event (`emitHook`)
   * is stored: an event no destination wants is not written. Absent: always.
   */
  wants?(eventType: string): boolean;
  deliver(event: DeliverableEvent, now: number): void | Promise<void>;
  /**
   * Told, inside the transaction that dead-letters an event it refused, that no attempt is left (e.g. the job
   * waiting on an email is marked failed). Optional.
   */
  onDeadLetter?(event: DeliverableEvent, detail: string, now: number): void;
}

/**
 * An internal destination: the one `internal.*` event type its capability emits, on the network lane
 * (claimed with a lease, delivered outside any transaction, bounded by `timeoutMs`), its payload typed.
 */
export function internalDestination<P>(spec: {
  name: string;
  eventType: string;
  timeoutMs: number;
  deliver(payload: P, event: DeliverableEvent, now: number): Promise<void>;
  onDeadLetter?(payload: P, detail: string, now: number): void;
}): Destination {
  const { onDeadLetter } = spec;
  return {
    name: spec.name,
    lane: "network",
    timeoutMs: spec.timeoutMs,
    accepts: (type) => type === spec.eventType,
    deliver: (event, now) => spec.deliver(event.payload as unknown as P, event, now),
    ...(onDeadLetter ? { onDeadLetter: (event: DeliverableEvent, detail: string, now: number) => onDeadLetter(event.payload as unknown as P, detail, now) } : {}),
  };
}

/** One metric observation (SPEC §6.3 `metrics`). */
export interface MetricRecord {
  tenant_id: string;
  event_type: string;
  destination: string | null;
  metric: "processed" | "dead_lettered" | "backoff_ms";
  value: number;
}

/** Receives metric records; unset means none are produced. */
export type MetricsSink = (record: MetricRecord) => void;

/** What one relay run needs; the clock and the jitter source are injected (tests drive them). */
export interface RelayEnv {
  tenantId: string;
  sql: Sql;
  transaction<T>(fn: () => T): T;
  now(): number;
  random(): number;
  options: OutboxOptions;
  destinations: readonly Destination[];
  metrics?: MetricsSink;
}

/** Local-lane events settled per transaction. */
export const LOCAL_BATCH = 500;
/** Network-lane events claimed per pass, and how many are delivered at once. */
export const NETWORK_BATCH = 32;
export const NETWORK_CONCURRENCY = 8;
/** Processed events deleted per retention batch. */
export const RETENTION_BATCH = 1000;
/** First retry delay; doubles per attempt up to MAX_BACKOFF_MS, then jittered to 50-100 %. */
export const BASE_BACKOFF_MS = 1000;
export const MAX_BACKOFF_MS = 3_600_000;
/** Wall time one alarm run keeps claiming before it yields (the next alarm continues). */
export const RUN_BUDGET_MS = 20_000;

/**
 * Claim lease of a network pass: longer than the worst case of delivering the claimed events, i.e. the
 * waves of NETWORK_CONCURRENCY deliveries, each bounded by the sum of the timeouts of the destinations
 * that accept the event, plus a margin. A crashed pass's events become due again when it ends, so the
 * lease follows what was claimed: the destinations that take those event types, each as bounded at claim time
 * (`boundMs`: up to eight hook events of a trigger with no action bound wait 30 s after a crash, one more
 * action bound adds its run's timeout; never the 13 minutes every destination together would allow). A binding
 * added between the claim and the delivery can outlast the lease; the event may then be delivered twice, with
 * the same idempotency key, which the at-least-once contract allows. Without `eventTypes`: the bound for a
 * full batch of events that every network destination accepts.
 */
export function leaseMs(destinations: readonly Destination[], eventTypes?: readonly string[]): number {
  const network = destinations.filter((d) => d.lane === "network");
  const boundOf = (type: string | null) =>
    network.filter((d) => type === null || d.accepts(type)).reduce((sum, d) => sum + (type !== null && d.boundMs ? d.boundMs(type) : d.timeoutMs), 0);
  const perEvent = eventTypes ? Math.max(0, ...[...new Set(eventTypes)].map(boundOf)) : boundOf(null);
  const waves = Math.ceil((eventTypes ? eventTypes.length : NETWORK_BATCH) / NETWORK_CONCURRENCY);
  return waves * perEvent + 20_000;
}

/** Exponential backoff with "equal jitter": attempt n waits between half and all of BASE * 2^(n-1). */
export function backoffMs(attempt: number, random: () => number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (ceiling / 2) * random());
}

type Outcome = { row: OutboxRow; error: string | null; destination: string | null };

const deliverable = (row: OutboxRow): DeliverableEvent => ({
  id: row.id,
  event_type: row.event_type,
  payload: json<Json>(row.payload, null),
  created_at: row.created_at,
  retry_count: row.retry_count,
});

const message = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 1000);

/** Destinations in order; the first failure stops the pass for this event (SPEC §3.2). */
function deliverLocal(env: RelayEnv, row: OutboxRow, now: number): Outcome {
  const event = deliverable(row);
  for (const destination of env.destinations) {
    if (destination.lane !== "local" || !destination.accepts(row.event_type)) continue;
    try {
      destination.deliver(event, now);
    } catch (error) {
      return { row, error: message(error), destination: destination.name };
    }
  }
  return { row, error: null, destination: null };
}

async function deliverNetwork(env: RelayEnv, row: OutboxRow, now: number): Promise<Outcome> {
  const event = deliverable(row);
  for (const destination of env.destinations) {
    if (!destination.accepts(row.event_type)) continue;
    try {
      await destination.deliver(event, now);
    } catch (error) {
      return { row, error: message(error), destination: destination.name };
    }
  }
  return { row, error: null, destination: null };
}

/**
 * Records an attempt's outcome: processed, waiting for a retry with backoff, or dead-lettered in this very
 * attempt when it was the last one allowed (SPEC §3.2). A network outcome applies only while the pass still
 * holds the claim (`claim_id`), so a pass that outlived its lease cannot overwrite a newer pass's result.
 */
function settle(env: RelayEnv, { row, error, destination }: Outcome, now: number): void {
  const base = { tenant_id: env.tenantId, event_type: row.event_type, destination };
  if (error === null) {
    env.sql.run`UPDATE outbox SET processed_at = ${now}, error = NULL, claim_id = NULL, lease_until = NULL
      WHERE id = ${row.id} AND claim_id IS ${row.claim_id}`;
    env.metrics?.({ ...base, metric: "processed", value: 1 });
    return;
  }
  const attempts = row.retry_count + 1;
  const detail = `${destination}: ${error}`;
  if (attempts >= env.options.maxRetries) {
    env.sql.run`UPDATE outbox SET retry_count = ${attempts}, error = ${detail}, final_error = ${detail},
        dead_lettered_at = ${now}, processed_at = ${now}, claim_id = NULL, lease_until = NULL
      WHERE id = ${row.id} AND claim_id IS ${row.claim_id}`;
    env.destinations.find((d) => d.name === destination)?.onDeadLetter?.(deliverable(row), detail, now);
    env.metrics?.({ ...base, metric: "dead_lettered", value: 1 });
    return;
  }
  const delay = backoffMs(attempts, env.random);
  env.sql.run`UPDATE outbox SET retry_count = ${attempts}, error = ${detail}, next_retry_at = ${now + delay},
      claim_id = NULL, lease_until = NULL
    WHERE id = ${row.id} AND claim_id IS ${row.claim_id}`;
  env.metrics?.({ ...base, metric: "backoff_ms", value: delay });
}

/** One local pass: select, deliver and settle up to LOCAL_BATCH due events in a single transaction. */
export function relayLocal(env: RelayEnv): number {
  return env.transaction(() => {
    const now = env.now();
    const rows = env.sql.all<OutboxRow>`SELECT * FROM outbox
      WHERE processed_at IS NULL AND lane = 'local' AND next_retry_at <= ${now}
      ORDER BY next_retry_at, id LIMIT ${LOCAL_BATCH}`;
    for (const row of rows) settle(env, deliverLocal(env, row, now), now);
    return rows.length;
  });
}

/**
 * One network pass: claim up to NETWORK_BATCH due events with a lease (one short transaction), deliver
 * them with `fetch` outside any transaction, NETWORK_CONCURRENCY at a time, then settle every outcome in
 * one short transaction. The object's input gate is open while the fetches are in flight, so writes keep
 * committing during delivery.
 */
export async function relayNetwork(env: RelayEnv): Promise<number> {
  const claimed = env.transaction(() => {
    const now = env.now();
    const due = env.sql.all<{ id: string; event_type: string }>`SELECT id, event_type FROM outbox
      WHERE processed_at IS NULL AND lane = 'network' AND next_retry_at <= ${now} ORDER BY next_retry_at, id LIMIT ${NETWORK_BATCH}`;
    if (!due.length) return [];
    const claimId = crypto.randomUUID();
    const until = now + leaseMs(env.destinations, due.map((row) => row.event_type));
    return env.sql.exec<OutboxRow>(
      `UPDATE outbox SET claim_id = ?, lease_until = ?, next_retry_at = ? WHERE id IN (${due.map(() => "?").join(",")}) RETURNING *`,
      claimId,
      until,
      until,
      ...due.map((row) => row.id),
    );
  });
  if (!claimed.length) return 0;
  const outcomes: Outcome[] = [];
  const queue = [...claimed];
  const worker = async () => {
    for (let row = queue.shift(); row; row = queue.shift()) {
      outcomes.push(await deliverNetwork(env, row, env.now()));
    }
  };
  await Promise.all(Array.from({ length: Math.min(NETWORK_CONCURRENCY, claimed.length) }, worker));
  env.transaction(() => {
    const now = env.now();
    for (const outcome of outcomes) settle(env, outcome, now);
  });
  return claimed.length;
}

/**
 * One alarm run: local and network passes, then retention, repeated while full batches keep coming and the
 * wall-time budget lasts. Returns counts for the caller (and the benchmark).
 */
export async function runRelay(env: RelayEnv): Promise<{ local: number; network: number; purged: number }> {
  const started = Date.now();
  const total = { local: 0, network: 0, purged: 0 };
  for (;;) {
    const local = relayLocal(env);
    const network = await relayNetwork(env);
    const purged = env.transaction(() => purgeProcessed(env.sql, env.now(), env.options.retentionDays, RETENTION_BATCH));
    total.local += local;
    total.network += network;
    total.purged += purged;
    const more = local === LOCAL_BATCH || network === NETWORK_BATCH || purged === RETENTION_BATCH;
    if (!more || Date.now() - started > RUN_BUDGET_MS) return total;
  }
}
