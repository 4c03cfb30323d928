import type { ExportField, RowError } from "../schemas/jobs";
import type { AuditContext } from "./audit";
import type { SealedEmail } from "../messaging/sealed-mail";

/** One failed row of an import: the row as given (password hashes removed) and its errors. */
export interface ImportRowFailure {
  user: Record<string, unknown>;
  errors: RowError[];
}

/** POST /jobs/users-imports, prepared by the worker: the file's rows, each as its JSON text. */
export interface NewImportJob {
  connection_id: string;
  connection: string;
  upsert: boolean;
  external_id: string | null;
  send_completion_email: boolean;
  rows: string[];
  audit: AuditContext;
}

/** POST /jobs/users-exports, validated by the worker. */
export interface NewExportJob {
  connection_id: string | null;
  connection: string | null;
  format: "json" | "csv";
  limit: number | null;
  fields: ExportField[] | null;
  audit: AuditContext;
}

/** POST /jobs/verification-email, prepared by the worker: the ticket's hash only (the link's secret is never stored). */
export interface NewVerificationEmailJob {
  user_id: string;
  /** The address the link verifies (the user's, or the chosen identity's). */
  email: string;
  /** A linked identity's connection when the email is that identity's; null: the primary account. */
  connection: string | null;
  client_id: string | null;
  organization_id: string | null;
  ticket_hash: string;
  expires_at: number;
  /** The email to queue with the job: its text (which holds the link) sealed for the recipient. */
  message: SealedEmail;
  /** Where the verified address goes next (the verify_email template's resultUrl), and whether with the address. */
  result_url?: string | null;
  include_email_in_redirect?: boolean;
  audit: AuditContext;
}

/** What following a verification link did. */
export type EmailVerificationOutcome =
  | { ok: true; user_id: string; email: string; client_id: string | null }
  | { ok: false; reason: "invalid" | "email_changed" };

// Declared with the resource's schema (issue 26 point 4); re-exported for callers.
export type { ExportField, JobRecord, JobStatus, JobType, RowError } from "../schemas/jobs";
