/**
 * Bulk user import and export jobs (issue 14 point 5, SPEC §4.2 "Failed events and jobs"): staging and
 * reading. An import's rows are all staged with the job in one commit before POST /jobs/users-imports
 * answers; the alarm's job lane (job-lane.ts) then works through them chunk by chunk.
 */
import { randomId } from "../../../shared/crypto/random";
import { fail, ok, type Result } from "../../../shared/errors";
import type { AuditContext, ImportRowFailure, JobRecord, NewExportJob, NewImportJob, RowError } from "../../../shared/types";
import { iso, json, type Sql } from "../../sql";
import { audited } from "../core/events";
import { TenantRpc } from "../core/rpc";

export type JobRow = Record<string, unknown>;

const text = (v: unknown) => (v === null || v === undefined ? null : String(v));

/** A jobs row as a record. */
export function toJob(r: JobRow): JobRecord {
  return {
    id: String(r.id),
    type: r.type as JobRecord["type"],
    status: r.status as JobRecord["status"],
    connection_id: text(r.connection_id),
    connection: text(r.connection),
    external_id: text(r.external_id),
    upsert: r.upsert === 1,
    send_completion_email: r.send_completion_email === 1,
    format: (text(r.format) as JobRecord["format"]) ?? null,
    limit: r.row_limit === null || r.row_limit === undefined ? null : Number(r.row_limit),
    fields: json(r.fields as string | null, null),
    total: Number(r.total),
    processed: Number(r.next_row),
    inserted: Number(r.inserted),
    updated: Number(r.updated),
    failed: Number(r.failed),
    status_details: text(r.status_details),
    created_at: iso(r.created_at as number) as string,
    updated_at: iso(r.updated_at as number) as string,
    completed_at: iso(r.completed_at as number | null),
  };
}

/**
 * How long a finished job (completed or failed) stays readable, with its row errors and export lines, after
 * it finished. The reference platform deletes job data after 24 hours; the alarm's job lane then removes it
 * in bounded batches (job-retention.ts), and reads treat an expired job as gone even before that.
 * @default 86,400,000 ms (24 hours)
 */
export const JOB_RETENTION_MS = 24 * 60 * 60 * 1000;

/** A job's row, or null when there is none or it expired (`now` given: reads; omitted: the lane's own use). */
export const jobRow = (sql: Sql, id: string, now?: number) =>
  sql.first<JobRow>`SELECT * FROM jobs WHERE id = ${id}
    AND (${now ?? null} IS NULL OR completed_at IS NULL OR completed_at > ${(now ?? 0) - JOB_RETENTION_MS})`;

/** One job, or null (expired jobs too, when `now` is given). */
export function getJob(sql: Sql, id: string, now?: number): JobRecord | null {
  const row = jobRow(sql, id, now);
  return row ? toJob(row) : null;
}

/** The audit context a job's chunk events are recorded with: its creator's. */
export const jobAudit = (row: JobRow): AuditContext => json(row.audit as string, { actor: { type: "system", id: null } } as unknown as AuditContext);

/** Stages an import: the job and every row of its file, in one transaction (the caller's commit). */
export function stageImport(sql: Sql, input: NewImportJob, now: number): JobRecord {
  const id = randomId("job_", 16);
  sql.run`INSERT INTO jobs (id, type, status, connection_id, connection, external_id, upsert, send_completion_email, total, audit, created_at, updated_at)
    VALUES (${id}, 'users_import', 'pending', ${input.connection_id}, ${input.connection}, ${input.external_id}, ${input.upsert},
      ${input.send_completion_email}, ${input.rows.length}, ${input.audit}, ${now}, ${now})`;
  // One statement for the whole file: the rows travel as one JSON array of their texts.
  sql.run`INSERT INTO job_rows (job_id, idx, data) SELECT ${id}, key, value FROM json_each(${JSON.stringify(input.rows)})`;
  return getJob(sql, id) as JobRecord;
}

/** Queues an export; its lines are written by the job lane. */
export function queueExport(sql: Sql, input: NewExportJob, now: number): JobRecord {
  const id = randomId("job_", 16);
  sql.run`INSERT INTO jobs (id, type, status, connection_id, connection, format, row_limit, fields, audit, created_at, updated_at)
    VALUES (${id}, 'users_export', 'pending', ${input.connection_id}, ${input.connection}, ${input.format}, ${input.limit},
      ${input.fields === null ? null : JSON.stringify(input.fields)}, ${input.audit}, ${now}, ${now})`;
  return getJob(sql, id) as JobRecord;
}

/** Per-row failures of an import, in file order. */
export function jobErrors(sql: Sql, id: string, now: number): Result<ImportRowFailure[]> {
  if (!jobRow(sql, id, now)) return fail("inexistent_job");
  const rows = sql.all<{ user: string; errors: string }>`SELECT user, errors FROM job_errors WHERE job_id = ${id} ORDER BY idx`;
  return ok(rows.map((r) => ({ user: json(r.user, {}), errors: json<RowError[]>(r.errors, []) })));
}

/** Up to `count` lines of a completed export from line `from` (the download streams them page by page). */
export function exportLines(sql: Sql, id: string, from: number, count: number, now: number): Result<string[]> {
  const job = jobRow(sql, id, now);
  if (job?.type !== "users_export" || job.status !== "completed") return fail("inexistent_job");
  return ok(sql.all<{ data: string }>`SELECT data FROM job_rows WHERE job_id = ${id} AND idx >= ${from} ORDER BY idx LIMIT ${count}`.map((r) => r.data));
}

/** The jobs facade (`stub.jobs(audit)`): staging commits with its `job.created` event. */
export class Jobs extends TenantRpc {
  /** POST /jobs/users-imports: the job and all its rows, before the request answers. */
  stageImport(input: NewImportJob): JobRecord {
    return this.commit((tx) => {
      const result = audited(tx, this.audit, ok(stageImport(tx.sql, input, tx.now)), { entity: "job", action: "created", id: (j) => j.id, after: (j) => ({ ...j }) });
      return (result as { ok: true; value: JobRecord }).value;
    });
  }

  /** POST /jobs/users-exports. */
  queueExport(input: NewExportJob): JobRecord {
    return this.commit((tx) => {
      const result = audited(tx, this.audit, ok(queueExport(tx.sql, input, tx.now)), { entity: "job", action: "created", id: (j) => j.id, after: (j) => ({ ...j }) });
      return (result as { ok: true; value: JobRecord }).value;
    });
  }

  get(id: string): JobRecord | null {
    return this.read((sql, now) => getJob(sql, id, now));
  }

  errors(id: string): Result<ImportRowFailure[]> {
    return this.read((sql, now) => jobErrors(sql, id, now));
  }

  exportLines(id: string, from: number, count: number): Result<string[]> {
    return this.read((sql, now) => exportLines(sql, id, from, count, now));
  }
}
