import type { AuditContext } from "./audit";

/** A job's lifecycle (the reference platform's job `status`). */
export type JobStatus = "pending" | "processing" | "completed" | "failed";

/** What kind of work a job does. */
export type JobType = "users_import" | "users_export" | "verification_email";

/** One column of a users export: a profile path (`user_metadata.plan`, `identities[0].connection`) and its title. */
export interface ExportField {
  name: string;
  export_as?: string;
}

/** A job as the tenant object stores it (times ISO 8601). The worker shapes the API answer from it. */
export interface JobRecord {
  id: string;
  type: JobType;
  status: JobStatus;
  connection_id: string | null;
  connection: string | null;
  external_id: string | null;
  upsert: boolean;
  send_completion_email: boolean;
  format: "json" | "csv" | null;
  limit: number | null;
  fields: ExportField[] | null;
  /** Imports: rows staged; exports: lines written so far. */
  total: number;
  /** Imports: rows committed (inserted, updated or failed). */
  processed: number;
  inserted: number;
  updated: number;
  failed: number;
  status_details: string | null;
  created_at: string;
  updated_at: string;
  completed_at: string | null;
}

/** One problem with an imported row, in the reference platform's shape. */
export interface RowError {
  code: string;
  message: string;
  path?: string;
}

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
  message: { subject: string; sealed_text: string };
  audit: AuditContext;
}

/** What following a verification link did. */
export type EmailVerificationOutcome =
  | { ok: true; user_id: string; email: string; client_id: string | null }
  | { ok: false; reason: "invalid" | "email_changed" };
