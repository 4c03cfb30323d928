/**
 * Password reset and user tickets (issue 29 point 1). A password-change ticket is an `auth_challenges` row of
 * purpose `password_reset` holding only the SHA-256 hash of the link's secret. A request from the login page
 * or POST /dbconnections/change_password stores the ticket and queues its email in one commit (sent by the
 * relay through the tenant's provider or the development sink); an unknown address stores and sends nothing
 * but leaves its `fcpr` event, so the answer cannot tell accounts apart. Completing a reset consumes the
 * ticket with one conditional UPDATE (a second or concurrent use finds nothing), writes the new hash, keeps
 * the old one in `password_history` when the connection asks for it, ends every session of the user and
 * revokes every refresh token (the `password-changed` cascade), all in the same commit.
 */
import { randomId } from "../../../shared/crypto/random";
import type { NewResetTicket, NewVerificationTicket, ResetOutcome, ResetTicketData, ResetTicketView } from "../../../shared/schemas/tickets";
import type { AuditContext, EmailVerificationOutcome } from "../../../shared/types";
import { json, type Sql } from "../../sql";
import { LOG_TYPES } from "../core/audit";
import { emitBackchannelLogouts, emitRefreshRevocation, endedSession } from "./cascade";
import { queueEmail } from "../outbox/email-outbox";
import { consumeVerification, EMAIL_VERIFICATION_PURPOSE } from "../jobs/email-verification";
import { emitAudit, type WriteTx } from "../core/events";
import { TenantRpc } from "../core/rpc";

export const PASSWORD_RESET_PURPOSE = "password_reset";

/** The reference platform's log types of password changes (its "Log Event Type Codes"). */
export const RESET_LOG_TYPES = {
  changePassword: "scp",
  changePasswordFailed: "fcp",
  changePasswordRequest: "scpr",
  changePasswordRequestFailed: "fcpr",
} as const;

/** The longest password history the reference platform keeps (`password_history.size`). */
export const MAX_PASSWORD_HISTORY = 24;

const EMPTY_DATA: ResetTicketData = {
  email: "",
  connection: "",
  client_id: null,
  organization_id: null,
  result_url: null,
  mark_email_as_verified: false,
  include_email_in_redirect: false,
  login_state: null,
};

/** The primary user an account belongs to (a linked secondary's person), for sessions and logs. */
const primaryOf = (sql: Sql, accountId: string) =>
  sql.first<{ id: string }>`SELECT coalesce(linked_to, user_id) AS id FROM users WHERE user_id = ${accountId}`?.id ?? accountId;

/** Stores a ticket (and, for a request, queues its email); an unknown address only logs `fcpr`. */
export function issueResetTicket(tx: WriteTx, input: NewResetTicket, audit: AuditContext): boolean {
  const { data } = input;
  const event = { category: "user_action" as const, client_id: data.client_id };
  if (input.user_id === null) {
    emitAudit(tx, audit, { ...event, event_type: "user.password_change_request_failed", log_type: RESET_LOG_TYPES.changePasswordRequestFailed, description: "Password change request for an address no account has" });
    return false;
  }
  tx.sql.run`DELETE FROM auth_challenges WHERE expires_at <= ${tx.now}`;
  tx.sql.run`INSERT INTO auth_challenges (id, purpose, subject, client_id, secret_hash, data, created_at, expires_at)
    VALUES (${randomId("ch_", 16)}, ${PASSWORD_RESET_PURPOSE}, ${input.user_id}, ${data.client_id}, ${input.ticket_hash}, ${{ ...data }}, ${tx.now}, ${input.expires_at})`;
  if (input.message) queueEmail(tx, { to: data.email, ...input.message });
  const userId = primaryOf(tx.sql, input.user_id);
  if (input.message) {
    emitAudit(tx, audit, { ...event, event_type: "user.password_change_requested", log_type: RESET_LOG_TYPES.changePasswordRequest, description: "Password change request sent", user_id: userId, target: { type: "user", id: userId } });
  } else {
    emitAudit(tx, audit, { event_type: "ticket.created", log_type: LOG_TYPES.api, category: "admin_action", description: "password change ticket created", user_id: userId, client_id: data.client_id, target: { type: "user", id: userId } });
  }
  return true;
}

interface TicketRow {
  subject: string;
  data: string;
}

/** A live ticket with the hashes a new password is compared against (the current one, then history). */
export function peekResetTicket(sql: Sql, ticketHash: string, historySize: number, now: number): ResetTicketView | null {
  const row = sql.first<TicketRow>`SELECT subject, data FROM auth_challenges
    WHERE purpose = ${PASSWORD_RESET_PURPOSE} AND secret_hash = ${ticketHash} AND consumed_at IS NULL AND expires_at > ${now}`;
  if (!row) return null;
  const account = sql.first<{ password_hash: string | null }>`SELECT password_hash FROM users WHERE user_id = ${row.subject}`;
  if (!account) return null;
  const size = Math.max(0, Math.min(MAX_PASSWORD_HISTORY, historySize));
  const history = sql.all<{ h: string }>`SELECT password_hash AS h FROM password_history WHERE user_id = ${row.subject}
    ORDER BY created_at DESC LIMIT ${size}`.map((r) => r.h);
  return { user_id: row.subject, data: json<ResetTicketData>(row.data, EMPTY_DATA), password_hash: account.password_hash, history };
}

/** What a completed reset writes: the new hash, and how much history the connection keeps (0: none). */
export interface ResetCompletion {
  /** Null: the password lives in a custom database's store (issue 32), none is kept here. */
  password_hash: string | null;
  history_size: number;
}

/**
 * Consumes the ticket and sets the password, in the caller's transaction. Every session of the person ends
 * and every refresh token is revoked (`password-changed`): whoever held the old password is logged out.
 */
export function completeReset(tx: WriteTx, ticketHash: string, completion: ResetCompletion, audit: AuditContext): ResetOutcome {
  const row = tx.sql.first<TicketRow & { client_id: string | null }>`UPDATE auth_challenges SET consumed_at = ${tx.now}
    WHERE purpose = ${PASSWORD_RESET_PURPOSE} AND secret_hash = ${ticketHash} AND consumed_at IS NULL AND expires_at > ${tx.now}
    RETURNING subject, client_id, data`;
  const account = row ? tx.sql.first<{ password_hash: string | null }>`SELECT password_hash FROM users WHERE user_id = ${row.subject}` : null;
  if (!row || !account) {
    emitAudit(tx, audit, { event_type: "user.password_change_failed", log_type: RESET_LOG_TYPES.changePasswordFailed, category: "user_action", description: "Invalid or expired password change ticket", client_id: row?.client_id ?? null });
    return { ok: false, reason: "invalid" };
  }
  const data = json<ResetTicketData>(row.data, EMPTY_DATA);
  const size = Math.max(0, Math.min(MAX_PASSWORD_HISTORY, completion.history_size));
  if (size > 0 && account.password_hash) {
    tx.sql.run`INSERT INTO password_history (user_id, password_hash, created_at) VALUES (${row.subject}, ${account.password_hash}, ${tx.now})`;
    tx.sql.run`DELETE FROM password_history WHERE user_id = ${row.subject} AND rowid NOT IN
      (SELECT rowid FROM password_history WHERE user_id = ${row.subject} ORDER BY created_at DESC LIMIT ${size})`;
  }
  const verified = data.mark_email_as_verified ? 1 : null;
  tx.sql.run`UPDATE users SET password_hash = ${completion.password_hash}, email_verified = coalesce(${verified}, email_verified),
    updated_at = ${tx.now} WHERE user_id = ${row.subject}`;
  // Every other ticket of this account is spent too: an older link must not undo the new password.
  tx.sql.run`UPDATE auth_challenges SET consumed_at = ${tx.now} WHERE purpose = ${PASSWORD_RESET_PURPOSE} AND subject = ${row.subject} AND consumed_at IS NULL`;
  const userId = primaryOf(tx.sql, row.subject);
  const ended = tx.sql.all<Record<string, unknown>>`DELETE FROM sessions WHERE user_id = ${userId} RETURNING *`.map(endedSession);
  emitRefreshRevocation(tx, { user_id: userId, session_ids: null, ended_session_ids: ended.map((s) => s.id), reason: "password-changed" });
  emitBackchannelLogouts(tx, ended.filter((s) => s.expires_at > tx.now), "password-changed");
  emitAudit(tx, audit, { event_type: "user.password_changed", log_type: RESET_LOG_TYPES.changePassword, category: "user_action", description: "Successful password change", user_id: userId, client_id: row.client_id, target: { type: "user", id: userId } });
  return { ok: true, user_id: userId, data };
}

/** An email-verification ticket, consumed by the verification email's own page (email-verification.ts). */
export function issueVerificationTicket(tx: WriteTx, input: NewVerificationTicket, audit: AuditContext): void {
  const data = { email: input.email, connection: null, job_id: null, organization_id: input.organization_id, result_url: input.result_url, include_email_in_redirect: input.include_email_in_redirect };
  tx.sql.run`DELETE FROM auth_challenges WHERE expires_at <= ${tx.now}`;
  tx.sql.run`INSERT INTO auth_challenges (id, purpose, subject, client_id, secret_hash, data, created_at, expires_at)
    VALUES (${randomId("ch_", 16)}, ${EMAIL_VERIFICATION_PURPOSE}, ${input.user_id}, ${input.client_id}, ${input.ticket_hash}, ${data}, ${tx.now}, ${input.expires_at})`;
  emitAudit(tx, audit, { event_type: "ticket.created", log_type: LOG_TYPES.api, category: "admin_action", description: "email verification ticket created", user_id: input.user_id, client_id: input.client_id, target: { type: "user", id: input.user_id } });
}

/** Where a verified address goes next: the ticket's `result_url`, if it had one. */
export type VerificationTicketOutcome = EmailVerificationOutcome & { result_url?: string | null; include_email_in_redirect?: boolean };

/** Consumes a verification link (job or ticket) and says where to send the person afterwards. */
export function verifyEmailTicket(tx: WriteTx, ticketHash: string, audit: AuditContext): VerificationTicketOutcome {
  const row = tx.sql.first<{ data: string }>`SELECT data FROM auth_challenges WHERE purpose = ${EMAIL_VERIFICATION_PURPOSE} AND secret_hash = ${ticketHash}`;
  const data = json<{ result_url?: string | null; include_email_in_redirect?: boolean }>(row?.data ?? "{}", {});
  const outcome = consumeVerification(tx, ticketHash, audit);
  return outcome.ok ? { ...outcome, result_url: data.result_url ?? null, include_email_in_redirect: data.include_email_in_redirect === true } : outcome;
}

/** Refused new passwords one reset link takes before it is spent. @default 5 */
export const MAX_RESET_REFUSALS = 5;

/** The user tickets facade (`stub.userTickets(audit)`): password resets and email-verification tickets. */
export class UserTickets extends TenantRpc {
  /** A reset request (login page, /dbconnections/change_password) or a management password-change ticket. */
  requestReset(input: NewResetTicket): boolean {
    return this.commit((tx) => issueResetTicket(tx, input, this.audit));
  }

  peekReset(ticketHash: string, historySize: number): ResetTicketView | null {
    return this.read((sql, now) => peekResetTicket(sql, ticketHash, historySize, now));
  }

  completeReset(ticketHash: string, completion: ResetCompletion): ResetOutcome {
    return this.commit((tx) => completeReset(tx, ticketHash, completion, this.audit));
  }

  /**
   * A refused new password (policy, reuse): logged `fcp`; the ticket stays usable for at most
   * {@link MAX_RESET_REFUSALS} refusals, then it is spent (each refusal may cost the worker up to 25 bcrypt
   * comparisons against the history, so a link must not be a free CPU lever).
   */
  refuseReset(ticketHash: string, userId: string | null, clientId: string | null, reason: string): void {
    this.commit((tx) => {
      tx.sql.run`UPDATE auth_challenges SET attempts = attempts + 1,
        consumed_at = CASE WHEN attempts + 1 >= ${MAX_RESET_REFUSALS} THEN ${tx.now} ELSE consumed_at END
        WHERE purpose = ${PASSWORD_RESET_PURPOSE} AND secret_hash = ${ticketHash} AND consumed_at IS NULL`;
      const user = userId ? primaryOf(tx.sql, userId) : null;
      emitAudit(tx, this.audit, { event_type: "user.password_change_failed", log_type: RESET_LOG_TYPES.changePasswordFailed, category: "user_action", description: reason, user_id: user, client_id: clientId });
    });
  }

  issueVerification(input: NewVerificationTicket): void {
    this.commit((tx) => issueVerificationTicket(tx, input, this.audit));
  }

  /** The user a live, unspent verification link names (the custom database `verify` script runs first). */
  peekVerification(ticketHash: string): { user_id: string } | null {
    return this.read((sql, now) => {
      const row = sql.first<{ subject: string }>`SELECT subject FROM auth_challenges
        WHERE purpose = ${EMAIL_VERIFICATION_PURPOSE} AND secret_hash = ${ticketHash} AND consumed_at IS NULL AND expires_at > ${now}`;
      return row ? { user_id: primaryOf(sql, row.subject) } : null;
    });
  }

  verifyEmail(ticketHash: string): VerificationTicketOutcome {
    return this.commit((tx) => verifyEmailTicket(tx, ticketHash, this.audit));
  }
}
