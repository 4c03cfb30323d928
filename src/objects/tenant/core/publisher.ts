import { now as clockNow } from "../../../shared/clock";
import type { Sql } from "../../sql";
import type { WriteTx } from "./events";
import { DEFAULT_OUTBOX_OPTIONS, laneOf, newEventId, nextDueAt, type OutboxEventInput, type OutboxOptions, recordOutboxEvents } from "./outbox";
import { writeLog } from "./logs";
import type { AuditEvent } from "../../../shared/types";
import { type Destination, type MetricsSink, runRelay } from "./relay";

/** Reads SPEC §6.3 options from the deployment's variables (`OUTBOX_*`); anything unset keeps its default. */
export function outboxOptionsFrom(vars: Record<string, unknown>): OutboxOptions {
  const number = (name: string, fallback: number, min: number) => {
    const value = Number(vars[name]);
    return vars[name] !== undefined && Number.isFinite(value) && value >= min ? value : fallback;
  };
  return {
    enabled: vars.OUTBOX_ENABLED !== "false",
    captureEntityState: vars.OUTBOX_CAPTURE_ENTITY_STATE !== "false",
    retentionDays: number("OUTBOX_RETENTION_DAYS", DEFAULT_OUTBOX_OPTIONS.retentionDays, 0),
    maxRetries: number("OUTBOX_MAX_RETRIES", DEFAULT_OUTBOX_OPTIONS.maxRetries, 1),
  };
}

/**
 * The audit events of logins and code exchanges (issue 31: recorded where the login's write happens): the
 * hot path's events, which only the logs table takes unless a deployment adds a taker.
 */
export const DIRECT_LOG_EVENTS: ReadonlySet<string> = new Set([
  "user.login",
  "user.login_failed",
  "user.logout",
  "user.mfa_succeeded",
  "user.mfa_failed",
  "user.passwordless_code_sent",
  "user.passwordless_failed",
  "token.code_exchanged",
  "token.code_exchange_failed",
]);

/** Drops before/after/diff from audit payloads when `captureEntityState` is off. */
function withoutState(event: OutboxEventInput): OutboxEventInput {
  const payload = event.payload as { target?: { type: string; id: string | null } };
  if (!payload.target) return event;
  return { ...event, payload: { ...event.payload, target: { type: payload.target.type, id: payload.target.id } } as OutboxEventInput["payload"] };
}

/**
 * A write's consequence decided in the write's own transaction from one of the events it emits (a user
 * blocked ends the user's sessions: cascade.ts). It may write rows and emit further events; it sees only
 * the events the write itself emitted.
 */
export type Reaction = (tx: WriteTx, event: OutboxEventInput) => void;

/**
 * Another job multiplexed on the one alarm (STYLE.md "Durable Objects"): when it is next due, and one
 * bounded, idempotent run. The relay always runs first, so a job never starves it.
 */
export interface AlarmJob {
  name: string;
  /** The earliest time the job has work (null: none), given the publisher's clock. */
  dueAt(now: number): number | null;
  run(now: number): unknown;
  /**
   * Whether log rows a commit writes itself (no outbox row, so no relay alarm) make this job due: the log
   * streams, while one is active. Asked after such a commit; true arms the alarm.
   */
  readsNewLogs?(): boolean;
}

/**
 * The tenant object's write path and publisher (ARCHITECTURE.md §3): `commit` runs a write and its outbox
 * rows in one `transactionSync`, then keeps one alarm set to the earliest due job (outbox relay, retries,
 * retention, and the `jobs`, such as cleanup); `alarm` runs the relay, then the due jobs. The clock, the
 * jitter source and the metrics sink are fields so tests can inject them.
 */
export class Publisher {
  now: () => number = () => clockNow();
  random: () => number = () => Math.random();
  metrics: MetricsSink | undefined;
  options: OutboxOptions;
  destinations: Destination[];
  reactions: Reaction[] = [];
  jobs: AlarmJob[] = [];
  /** The alarm time this instance last set (undefined: not known since start). */
  private alarmAt: number | null | undefined;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly sql: Sql,
    readonly tenantId: string,
    options: OutboxOptions,
    destinations: Destination[],
  ) {
    this.options = options;
    this.destinations = destinations;
  }

  /**
   * The one write path: entity rows and the events `fn` emits commit together or not at all (a failing
   * outbox insert throws and rolls the write back). No network I/O happens here.
   */
  commit<T>(fn: (tx: WriteTx) => T): T {
    const now = this.now();
    const events: OutboxEventInput[] = [];
    let written = 0;
    let logged = 0;
    const result = this.storage.transactionSync(() => {
      const tx: WriteTx = { sql: this.sql, now, emit: (event) => events.push(event), wanted: (type) => this.wanted(type) };
      const out = fn(tx);
      // Reactions see the write's own events only (not what reactions emit): no cascade of cascades.
      const emitted = events.length;
      for (let i = 0; i < emitted && this.reactions.length; i++) {
        for (const react of this.reactions) react(tx, events[i] as OutboxEventInput);
      }
      const stored = this.options.captureEntityState ? events : events.map(withoutState);
      // Issue 31: a login flow's audit event whose only taker is the logs table is written there in this
      // commit, not stored to be relayed to it (the relay's claim, read, write and purge cost ~35 µs an event).
      const relayed: OutboxEventInput[] = [];
      for (const event of stored) {
        if (this.logsOnly(event)) {
          writeLog(this.sql, event.id ?? newEventId(now), event.payload as AuditEvent, now);
          logged++;
        } else relayed.push(event);
      }
      written = recordOutboxEvents(this.sql, relayed, now, this.options);
      // With the outbox off, audit events of the local lane were written to the logs table just as directly.
      if (!this.options.enabled) logged += relayed.filter((e) => (e.lane ?? laneOf(e.event_type)) === "local" && !e.event_type.startsWith("internal.")).length;
      return out;
    });
    // New log rows without an outbox row arm no relay: a job that reads them (a log stream) still must run.
    if (written > 0 || (logged > 0 && this.jobs.some((job) => job.readsNewLogs?.() ?? false))) this.afterCommit(now);
    return result;
  }

  /**
   * Whether an event goes straight to the logs table in its commit: one of the login flows' audit events
   * ({@link DIRECT_LOG_EVENTS}) that no destination but the logs table takes now, while the outbox is on (off,
   * every audit event does) and no metrics sink counts the relay's deliveries. Any other taker or a metrics
   * sink keeps it in the outbox, relayed as before; management events always are (their payloads, with
   * before/after state, are what the outbox's consumers read).
   */
  private logsOnly(event: OutboxEventInput): boolean {
    if (!DIRECT_LOG_EVENTS.has(event.event_type)) return false;
    if (!this.options.enabled || this.metrics || (event.lane ?? laneOf(event.event_type)) !== "local") return false;
    let logs = false;
    for (const d of this.destinations) {
      if (!d.accepts(event.event_type) || !(d.wants?.(event.event_type) ?? true)) continue;
      if (d.name !== "logs") return false;
      logs = true;
    }
    return logs;
  }

  /** Whether a destination accepts events of this type and wants one now (asked inside a write's transaction). */
  wanted(eventType: string): boolean {
    return this.destinations.some((d) => d.accepts(eventType) && (d.wants?.(eventType) ?? true));
  }

  /** New events are due now: make sure the alarm fires no later than that. */
  afterCommit(now: number): void {
    if (this.alarmAt != null && this.alarmAt <= now) return;
    this.alarmAt = now;
    void this.storage.setAlarm(now);
  }

  /**
   * Sets (or clears) the one alarm at the earliest due job. Synchronous from the SQL read to `setAlarm`,
   * so no write can commit in between and be missed.
   */
  schedule(): number | null {
    const now = this.now();
    const times = [nextDueAt(this.sql, this.options.retentionDays), ...this.jobs.map((job) => job.dueAt(now))];
    const pending = times.filter((t): t is number => typeof t === "number");
    const due = pending.length ? Math.min(...pending) : null;
    this.alarmAt = due;
    if (due === null) void this.storage.deleteAlarm();
    else void this.storage.setAlarm(due);
    return due;
  }

  /** Runs every job whose work is due now, each once (a job with more left is due again at once). */
  async runDueJobs(): Promise<void> {
    for (const job of this.jobs) {
      const due = job.dueAt(this.now());
      if (due === null || due > this.now()) continue;
      try {
        await job.run(this.now());
      } catch (error) {
        // One job's failure must not starve the others; the next alarm tries again.
        console.error(`alarm job ${job.name} failed`, error);
      }
    }
  }

  /** How many unprocessed events are due at this instant (the relay's remaining work). */
  pendingNow(): number {
    return this.sql.first<{ n: number }>`SELECT count(*) AS n FROM outbox WHERE processed_at IS NULL AND next_retry_at <= ${this.now()}`?.n ?? 0;
  }

  /** The alarm: relay, retries and retention, then the due jobs, then the next alarm. */
  async alarm(): Promise<{ local: number; network: number; purged: number }> {
    try {
      const relayed = await runRelay({
        tenantId: this.tenantId,
        sql: this.sql,
        transaction: (fn) => this.storage.transactionSync(fn),
        now: () => this.now(),
        random: () => this.random(),
        options: this.options,
        destinations: this.destinations,
        ...(this.metrics ? { metrics: this.metrics } : {}),
      });
      await this.runDueJobs();
      return relayed;
    } finally {
      this.schedule();
    }
  }
}
