/**
 * Retention of finished jobs (issue 14 point 5): a job that completed or failed more than JOB_RETENTION_MS
 * ago is removed with its staged rows or export lines and its row errors, by the alarm's job lane, in
 * bounded batches: each pass deletes at most PURGE_BATCH_ROWS rows in one commit, so a large job never
 * holds the object for long; the job's own row goes last, once nothing of it is left.
 */
import type { Sql } from "../../sql";
import type { WriteTx } from "../core/events";
import { JOB_RETENTION_MS } from "./jobs";

/** Rows (job_rows and job_errors together) one purge pass deletes. @default 2,000 */
export const PURGE_BATCH_ROWS = 2_000;

/** When the oldest finished job expires (null: no finished job). One index step (jobs_finished). */
export function nextExpiry(sql: Sql): number | null {
  const at = sql.first<{ at: number | null }>`SELECT MIN(completed_at) AS at FROM jobs WHERE completed_at IS NOT NULL`?.at ?? null;
  return at === null ? null : at + JOB_RETENTION_MS;
}

/**
 * One bounded pass over expired jobs, oldest first, in the caller's transaction. Returns what went and
 * whether more is left (the lane stays due at once then).
 */
export function purgeExpiredJobs(tx: WriteTx, budget = PURGE_BATCH_ROWS): { rows: number; jobs: number; more: boolean } {
  const cutoff = tx.now - JOB_RETENTION_MS;
  let left = budget;
  let jobs = 0;
  const expired = tx.sql.all<{ id: string }>`SELECT id FROM jobs WHERE completed_at IS NOT NULL AND completed_at <= ${cutoff} ORDER BY completed_at, id LIMIT 100`;
  for (const { id } of expired) {
    left -= tx.sql.all`DELETE FROM job_rows WHERE job_id = ${id} AND idx IN (SELECT idx FROM job_rows WHERE job_id = ${id} ORDER BY idx LIMIT ${left}) RETURNING 1`.length;
    if (left <= 0) return { rows: budget, jobs, more: true };
    left -= tx.sql.all`DELETE FROM job_errors WHERE job_id = ${id} AND idx IN (SELECT idx FROM job_errors WHERE job_id = ${id} ORDER BY idx LIMIT ${left}) RETURNING 1`.length;
    if (left <= 0) return { rows: budget, jobs, more: true };
    tx.sql.run`DELETE FROM jobs WHERE id = ${id}`;
    jobs++;
  }
  const more = expired.length === 100 && (tx.sql.first`SELECT 1 FROM jobs WHERE completed_at IS NOT NULL AND completed_at <= ${cutoff}` !== null);
  return { rows: budget - left, jobs, more };
}
