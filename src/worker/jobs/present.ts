import { now } from "../../shared/clock";
import type { JobRecord } from "../../shared/types";

/**
 * A job in the reference platform's shape (GetJobResponseContent, CreateImportUsersResponseContent,
 * CreateExportUsersResponseContent, CreateVerificationEmailResponseContent): imports carry `summary` and `percentage_done` (progress is visible
 * while they run), exports `format`, `limit`, `fields` and, once completed, `location`.
 */
export function presentJob(job: JobRecord, location?: string): Record<string, unknown> {
  const out: Record<string, unknown> = { status: job.status, type: job.type, created_at: job.created_at, id: job.id };
  if (job.connection_id !== null) out.connection_id = job.connection_id;
  if (job.connection !== null) out.connection = job.connection;
  if (job.type === "users_import") {
    if (job.external_id !== null) out.external_id = job.external_id;
    out.upsert = job.upsert;
    out.send_completion_email = job.send_completion_email;
    out.percentage_done = job.total === 0 ? 100 : Math.floor((job.processed * 100) / job.total);
    const remaining = job.total - job.processed;
    if (job.status === "processing" && job.processed > 0 && remaining > 0) {
      const elapsed = now() - Date.parse(job.created_at);
      out.time_left_seconds = Math.ceil(((elapsed / job.processed) * remaining) / 1000);
    }
    out.summary = { failed: job.failed, updated: job.updated, inserted: job.inserted, total: job.total };
  } else if (job.type === "users_export") {
    out.format = job.format;
    if (job.limit !== null) out.limit = job.limit;
    if (job.fields !== null) out.fields = job.fields;
    if (location) out.location = location;
  }
  if (job.status_details !== null) out.status_details = job.status_details;
  return out;
}
