/**
 * The completion email of a users import (the reference platform's `send_completion_email`, default true:
 * "send a completion email to all tenant owners when the job is finished"). Gatehouse has no dashboard
 * owners, so the recipient is the tenant's `support_email` (PATCH /api/v2/tenants/settings). A job that
 * finishes (completed, or halted as failed) queues the email in the same commit; with no support_email
 * nothing is sent and a warning event says why.
 */
import type { Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { queueEmail } from "../outbox/email-outbox";
import { emitAudit, type WriteTx } from "../core/events";
import { getJob, type JobRow, jobAudit } from "./jobs";
import { getTenantSettings } from "../settings/tenant-settings";

/** Who receives completion emails: the tenant's support_email, or null. */
export function completionRecipient(sql: Sql): string | null {
  const email = getTenantSettings(sql).support_email;
  return typeof email === "string" && email.includes("@") ? email : null;
}

/** After a job's final update in `tx`: queues its completion email when the job asked for one. */
export function queueCompletionEmail(tx: WriteTx, row: JobRow, tenantId: string): void {
  if (row.type !== "users_import" || row.send_completion_email !== 1) return;
  const job = getJob(tx.sql, String(row.id));
  if (!job || (job.status !== "completed" && job.status !== "failed")) return;
  const to = completionRecipient(tx.sql);
  if (!to) {
    emitAudit(tx, jobAudit(row), {
      event_type: "job.completion_email_skipped",
      log_type: LOG_TYPES.warning,
      category: "system",
      description: `Job ${job.id}: no completion email sent, the tenant has no support_email`,
      target: { type: "job", id: job.id },
    });
    return;
  }
  const outcome = job.status === "completed" ? "has completed" : "has failed";
  const lines = [
    `The users import job ${job.id} of tenant ${tenantId} ${outcome}.`,
    "",
    `Connection: ${job.connection ?? job.connection_id ?? "-"}`,
    ...(job.external_id ? [`External id: ${job.external_id}`] : []),
    `Rows: ${job.total} (inserted ${job.inserted}, updated ${job.updated}, failed ${job.failed})`,
    ...(job.status_details ? [`Details: ${job.status_details}`] : []),
    "",
    job.failed > 0 ? `Failed rows: GET /api/v2/jobs/${job.id}/errors` : "Every row was imported.",
  ];
  queueEmail(tx, { to, subject: `Users import ${job.id} ${outcome}`, text: lines.join("\n") });
}
