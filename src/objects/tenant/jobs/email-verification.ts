/**
 * Verification emails (POST /api/v2/jobs/verification-email, the reference platform's "send an email to the
 * specified user that asks them to click a link to verify their email address"). The job and the link's
 * ticket commit together; only the ticket's hash is stored (an `auth_challenges` row of purpose
 * `email_verification`). Following the link consumes the ticket with one conditional UPDATE, so a link
 * verifies once, never after it expired, and only the address it was sent to. The email is queued in the
 * same commit (an outbox event, its text sealed): a worker that dies after the commit loses nothing, and
 * the relay completes the job when the email goes out or fails it when it is dead-lettered.
 */
import { randomId } from "../../../shared/crypto/random";
import type { AuditContext, EmailVerificationOutcome, JobRecord, NewVerificationEmailJob } from "../../../shared/types";
import { json, type Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { emitAudit, type WriteTx } from "../core/events";
import { queueEmail } from "../outbox/email-outbox";
import { getJob } from "./jobs";
import { TenantRpc } from "../core/rpc";
import { getUser } from "../users/user-rows";
import { updateUser } from "../users/user-writes";

export const EMAIL_VERIFICATION_PURPOSE = "email_verification";

/** The job (pending until the relay sent the email), its ticket and its queued email, in the caller's transaction. */
export function startVerificationEmail(tx: WriteTx, input: NewVerificationEmailJob): JobRecord {
  const id = randomId("job_", 16);
  tx.sql.run`INSERT INTO jobs (id, type, status, audit, created_at, updated_at)
    VALUES (${id}, 'verification_email', 'pending', ${input.audit}, ${tx.now}, ${tx.now})`;
  tx.sql.run`DELETE FROM auth_challenges WHERE expires_at <= ${tx.now}`;
  tx.sql.run`INSERT INTO auth_challenges (id, purpose, subject, client_id, secret_hash, data, created_at, expires_at)
    VALUES (${randomId("ch_", 16)}, ${EMAIL_VERIFICATION_PURPOSE}, ${input.user_id}, ${input.client_id}, ${input.ticket_hash},
      ${{ email: input.email, connection: input.connection, job_id: id, organization_id: input.organization_id, result_url: input.result_url ?? null, include_email_in_redirect: input.include_email_in_redirect === true }}, ${tx.now}, ${input.expires_at})`;
  queueEmail(tx, { to: input.email, ...input.message, job_id: id });
  return getJob(tx.sql, id) as JobRecord;
}

/**
 * The email went out (completed) or the relay gave up on it (failed, with the reason). An email replayed
 * from /failed-events that then goes out completes its failed job.
 */
export function finishVerificationEmail(sql: Sql, id: string, sent: boolean, detail: string | null, now: number): JobRecord | null {
  sql.run`UPDATE jobs SET status = ${sent ? "completed" : "failed"}, status_details = ${detail}, updated_at = ${now}, completed_at = ${now}
    WHERE id = ${id} AND type = 'verification_email' AND (status = 'pending' OR (${sent ? 1 : 0} = 1 AND status = 'failed'))`;
  return getJob(sql, id);
}

/**
 * Consumes a link's ticket (one conditional UPDATE: a second use, or a concurrent one, finds nothing) and
 * marks the address verified, if it is still the account's address.
 */
export function consumeVerification(tx: WriteTx, ticketHash: string, audit: AuditContext): EmailVerificationOutcome {
  const row = tx.sql.first<{ subject: string; client_id: string | null; data: string }>`UPDATE auth_challenges SET consumed_at = ${tx.now}
    WHERE purpose = ${EMAIL_VERIFICATION_PURPOSE} AND secret_hash = ${ticketHash} AND consumed_at IS NULL AND expires_at > ${tx.now}
    RETURNING subject, client_id, data`;
  if (!row) return { ok: false, reason: "invalid" };
  const data = json<{ email: string; connection: string | null }>(row.data, { email: "", connection: null });
  const user = getUser(tx.sql, row.subject);
  const identity = data.connection === null ? null : user?.identities.find((i) => i.connection === data.connection);
  const current = data.connection === null ? user?.email : (identity?.profileData?.email as string | undefined);
  if (!user || !current || current.toLowerCase() !== data.email.toLowerCase()) {
    emitAudit(tx, audit, {
      event_type: "user.email_verification_failed",
      log_type: LOG_TYPES.verificationEmailFailed,
      category: "user_action",
      description: "The email address changed after the verification email was sent",
      user_id: row.subject,
      client_id: row.client_id,
    });
    return { ok: false, reason: "email_changed" };
  }
  const updated = updateUser(tx.sql, user.user_id, { fields: { email_verified: true }, ...(data.connection ? { connection: data.connection } : {}) }, tx.now);
  if (!updated.ok) throw new Error(`email verification of ${user.user_id}: ${updated.error.message}`);
  emitAudit(tx, audit, {
    event_type: "user.email_verified",
    log_type: LOG_TYPES.verificationEmail,
    category: "user_action",
    description: "Successful verification email",
    target: { type: "user", id: user.user_id },
    user_id: user.user_id,
    client_id: row.client_id,
  });
  return { ok: true, user_id: user.user_id, email: data.email, client_id: row.client_id };
}

/** The verification emails facade (`stub.emailVerification(audit)`). */
export class EmailVerifications extends TenantRpc {
  start(input: NewVerificationEmailJob): JobRecord {
    return this.commit((tx) => {
      const job = startVerificationEmail(tx, input);
      emitAudit(tx, this.audit, {
        event_type: "job.created",
        log_type: LOG_TYPES.api,
        category: "admin_action",
        description: "job created",
        target: { type: "job", id: job.id, after: { ...job } },
        user_id: input.user_id,
        client_id: input.client_id,
      });
      return job;
    });
  }

  consume(ticketHash: string): EmailVerificationOutcome {
    return this.commit((tx) => consumeVerification(tx, ticketHash, this.audit));
  }
}
