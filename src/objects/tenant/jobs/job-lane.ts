/**
 * The job lane of the tenant object's one alarm (publisher.ts `AlarmJob`; issue 14 point 5). Each run takes
 * the active job that waited longest and advances it by one chunk:
 *
 * 1. the attempt is recorded in its own commit (`attempts + 1`), so it survives a crash;
 * 2. the chunk runs in one transaction: its users, its row errors, the job's counters and `next_row`
 *    commit together or not at all, then `attempts` is back to 0.
 *
 * A crash (or a throw) loses at most the chunk in flight; the next alarm resumes at the last committed
 * `next_row`. A chunk that fails to commit MAX_CHUNK_ATTEMPTS times halts its job (`failed`, with a warning
 * event), so one bad chunk never spins the alarm forever. A job with work left keeps the lane due at once.
 */
import type { RowError } from "../../../shared/types";
import type { Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { emitAudit, type WriteTx } from "../core/events";
import { applyImportRow, requiresUsername } from "./import-rows";
import { exportChunk } from "./job-export";
import { queueCompletionEmail } from "./job-completion";
import { nextExpiry, purgeExpiredJobs } from "./job-retention";
import { type JobRow, jobAudit } from "./jobs";
import type { AlarmJob } from "../core/publisher";
import { redactedRow } from "../../../shared/schemas/jobs";

/** Rows one import chunk commits. @default 250 */
export const IMPORT_CHUNK_ROWS = 250;

/** Users one export chunk writes. @default 1,000 */
export const EXPORT_CHUNK_USERS = 1_000;

/** Commits of one chunk tried before its job halts. @default 3 */
export const MAX_CHUNK_ATTEMPTS = 3;

type Commit = <T>(fn: (tx: WriteTx) => T) => T;

/**
 * The active import or export that waited longest (round-robin over concurrent jobs). Verification email
 * jobs are the worker's (pending only while it sends), never the lane's.
 */
const nextActive = (sql: Sql) =>
  sql.first<JobRow>`SELECT * FROM jobs WHERE status IN ('pending', 'processing') AND type IN ('users_import', 'users_export')
    ORDER BY coalesce(last_run_at, 0), created_at, id LIMIT 1`;

/** Halts a job that makes no progress, with a warning event (SPEC §4.2: "halts with a warning"). */
function halt(tx: WriteTx, job: JobRow, reason: string, tenantId: string): void {
  tx.sql.run`UPDATE jobs SET status = 'failed', status_details = ${reason}, updated_at = ${tx.now}, completed_at = ${tx.now} WHERE id = ${job.id as string}`;
  emitAudit(tx, jobAudit(job), {
    event_type: "job.halted",
    log_type: LOG_TYPES.warning,
    category: "system",
    description: `Job ${String(job.id)} halted: ${reason}`,
    target: { type: "job", id: String(job.id) },
  });
  queueCompletionEmail(tx, job, tenantId);
}

/**
 * One import chunk in the caller's transaction: each row in its own savepoint (a row that throws is that
 * row's error and rolls back alone), then the errors, counters and `next_row`, and one summary audit event
 * for the chunk (per-user events would multiply the outbox by the file's size).
 */
function importChunk(tx: WriteTx, storage: DurableObjectStorage, job: JobRow, tenantId: string): void {
  const id = String(job.id);
  const from = Number(job.next_row);
  const rows = tx.sql.all<{ idx: number; data: string }>`SELECT idx, data FROM job_rows WHERE job_id = ${id} AND idx >= ${from} ORDER BY idx LIMIT ${IMPORT_CHUNK_ROWS}`;
  if (rows.length === 0) {
    halt(tx, job, `staged rows from ${from} are missing`, tenantId);
    return;
  }
  const connection = String(job.connection);
  if (!tx.sql.first`SELECT 1 FROM connections WHERE name = ${connection}`) {
    halt(tx, job, `the connection ${connection} no longer exists`, tenantId);
    return;
  }
  const target = { connection, upsert: job.upsert === 1, requiresUsername: requiresUsername(tx.sql, connection) };
  const counts = { inserted: 0, updated: 0, failed: 0 };
  for (const { idx, data } of rows) {
    let raw: unknown;
    let errors: RowError[] = [];
    try {
      raw = JSON.parse(data);
      const outcome = storage.transactionSync(() => applyImportRow(tx.sql, target, raw, tx.now));
      if (outcome.kind === "failed") errors = outcome.errors;
      else counts[outcome.kind]++;
    } catch (error) {
      errors = [{ code: "INTERNAL_ERROR", message: `The row could not be written: ${(error as Error).message}` }];
    }
    if (errors.length) {
      counts.failed++;
      tx.sql.run`INSERT OR REPLACE INTO job_errors (job_id, idx, user, errors) VALUES (${id}, ${idx}, ${redactedRow(raw)}, ${errors})`;
    }
  }
  const next = (rows[rows.length - 1]?.idx as number) + 1;
  const done = next >= Number(job.total);
  tx.sql.run`UPDATE jobs SET next_row = ${next}, attempts = 0, inserted = inserted + ${counts.inserted}, updated = updated + ${counts.updated},
      failed = failed + ${counts.failed}, status = ${done ? "completed" : "processing"}, updated_at = ${tx.now},
      completed_at = ${done ? tx.now : null} WHERE id = ${id}`;
  emitAudit(tx, jobAudit(job), {
    event_type: "users.imported",
    log_type: LOG_TYPES.api,
    category: "admin_action",
    description: `Users import ${id}: rows ${from}-${next - 1} committed (${counts.inserted} inserted, ${counts.updated} updated, ${counts.failed} failed)`,
    target: { type: "job", id, after: { from, to: next - 1, ...counts, completed: done } },
  });
  if (done) queueCompletionEmail(tx, job, tenantId);
}

/** The tenant object's job lane. */
export class JobLane implements AlarmJob {
  readonly name = "jobs";

  constructor(
    private readonly sql: Sql,
    private readonly storage: DurableObjectStorage,
    private readonly commit: Commit,
    private readonly tenantId = "",
  ) {}

  /** Now while a job is active; else when the oldest finished job expires (retention), or null. */
  dueAt(now: number): number | null {
    if (nextActive(this.sql)) return now;
    return nextExpiry(this.sql);
  }

  /**
   * One bounded purge pass of expired jobs (job-retention.ts), then one chunk of the longest-waiting active
   * job; returns that job's id (null: no chunk ran).
   */
  run(now: number): string | null {
    if ((nextExpiry(this.sql) ?? Number.POSITIVE_INFINITY) <= now) this.commit((tx) => purgeExpiredJobs(tx));
    const job = nextActive(this.sql);
    if (!job) return null;
    const id = String(job.id);
    const attempts = this.commit((tx) => {
      tx.sql.run`UPDATE jobs SET attempts = attempts + 1, status = 'processing', last_run_at = ${now}, updated_at = ${tx.now} WHERE id = ${id}`;
      return Number(job.attempts) + 1;
    });
    if (attempts > MAX_CHUNK_ATTEMPTS) {
      const at = job.type === "users_import" ? `row ${String(job.next_row)}` : `line ${String(job.total)}`;
      this.commit((tx) => halt(tx, job, `the chunk starting at ${at} made no progress after ${MAX_CHUNK_ATTEMPTS} attempts`, this.tenantId));
      return id;
    }
    this.commit((tx) => {
      if (job.type === "users_import") importChunk(tx, this.storage, job, this.tenantId);
      else exportChunk(tx, job, EXPORT_CHUNK_USERS);
    });
    return id;
  }
}
