import { z } from "zod";
import type { AuditContext } from "../types";
import type { SealedEmail } from "../messaging/sealed-mail";

/**
 * User tickets (issue 29 point 1): password-change links (sent by POST /dbconnections/change_password or made
 * by POST /api/v2/tickets/password-change) and email-verification links (POST /api/v2/tickets/email-verification).
 * Only a ticket's SHA-256 hash is stored; the link carries the secret.
 */

/** The reference platform's default lifetime of both ticket kinds. @default 432,000 s (5 days) */
export const TICKET_DEFAULT_TTL_S = 432_000;
/** The longest lifetime a ticket may ask for (30 days). */
export const TICKET_MAX_TTL_S = 2_592_000;

const httpUrl = z
  .string()
  .max(2048)
  .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), "must be an http(s) URL");
const ttl = z.number().int().min(0).max(TICKET_MAX_TTL_S).optional();

/**
 * POST /tickets/password-change (the reference platform's ChangePasswordTicketRequestContent): the user by
 * `user_id`, or by `email` with `connection_id`; `result_url` is the classic redirect and cannot go with
 * `client_id` or `organization_id`.
 */
export const passwordChangeTicketBody = z
  .strictObject({
    user_id: z.string().min(1).max(300).optional(),
    email: z.string().min(1).max(254).optional(),
    connection_id: z.string().min(1).max(64).optional(),
    result_url: httpUrl.optional(),
    ttl_sec: ttl,
    mark_email_as_verified: z.boolean().optional(),
    includeEmailInRedirect: z.boolean().optional(),
    client_id: z.string().min(1).max(64).optional(),
    organization_id: z.string().min(1).max(64).optional(),
  })
  .refine((b) => (b.user_id === undefined) !== (b.email === undefined), "Either user_id, or email with connection_id, is required")
  .refine((b) => (b.email === undefined) === (b.connection_id === undefined), "email and connection_id go together")
  .refine((b) => b.result_url === undefined || (b.client_id === undefined && b.organization_id === undefined), "result_url cannot be used with client_id or organization_id");
export type PasswordChangeTicketInput = z.infer<typeof passwordChangeTicketBody>;

/** POST /tickets/email-verification (the reference platform's VerifyEmailTicketRequestContent, without identity). */
export const emailVerificationTicketBody = z.strictObject({
  user_id: z.string().min(1).max(300),
  result_url: httpUrl.optional(),
  ttl_sec: ttl,
  includeEmailInRedirect: z.boolean().optional(),
  client_id: z.string().min(1).max(64).optional(),
  organization_id: z.string().min(1).max(64).optional(),
});
export type EmailVerificationTicketInput = z.infer<typeof emailVerificationTicketBody>;

/** What a password-change ticket remembers besides its user (never the secret). */
export interface ResetTicketData {
  email: string;
  connection: string;
  client_id: string | null;
  organization_id: string | null;
  result_url: string | null;
  mark_email_as_verified: boolean;
  include_email_in_redirect: boolean;
  /** The login transaction the request came from (the "Forgot password?" link): the way back after the reset. */
  login_state: string | null;
  /** The language the email was written in (issue 29 point 2): the pages its link opens speak it. Absent on older tickets. */
  language?: string | null;
}

/**
 * A password-change ticket to store, with the email to queue when it is sent rather than handed out. A
 * request for an address no account has carries `user_id: null`: nothing is stored or sent, only `fcpr` logged.
 */
export interface NewResetTicket {
  user_id: string | null;
  ticket_hash: string;
  expires_at: number;
  data: ResetTicketData;
  /** The email's text sealed for its recipient (src/shared/messaging/sealed-mail.ts); absent for a management ticket. */
  message?: SealedEmail;
  audit?: AuditContext;
}

/** A live password-change ticket as the reset page sees it, with what the worker checks the new password against. */
export interface ResetTicketView {
  user_id: string;
  data: ResetTicketData;
  /** The current bcrypt hash (no reuse), then the kept history, newest first. */
  password_hash: string | null;
  history: string[];
}

/** The outcome of a reset: the user and where to go next, or why nothing changed. */
export type ResetOutcome = { ok: true; user_id: string; data: ResetTicketData } | { ok: false; reason: "invalid" };

/** An email-verification ticket (POST /tickets/email-verification): consumed by GET /u2/email-verification. */
export interface NewVerificationTicket {
  user_id: string;
  email: string;
  client_id: string | null;
  organization_id: string | null;
  result_url: string | null;
  include_email_in_redirect: boolean;
  ticket_hash: string;
  expires_at: number;
}
