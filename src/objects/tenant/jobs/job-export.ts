/**
 * One chunk of a users export (issue 14 point 5, the reference platform's POST /jobs/users-exports): the
 * next primary users after the job's cursor, as JSON lines or CSV rows, stored as the job's lines with the
 * cursor and line count in the same transaction. The download (worker) streams the lines once completed.
 */
import { valueAt } from "../../../shared/profile-path";
import type { ExportField, Json } from "../../../shared/types";
import type { UserRecord } from "../../../shared/schemas/users";
import { json } from "../../sql";
import type { WriteTx } from "../core/events";
import type { JobRow } from "./jobs";
import { toUsers, type UserRow } from "../users/user-rows";

/** CSV columns when the request names no fields. */
const DEFAULT_CSV_FIELDS: ExportField[] = ["user_id", "email", "email_verified", "name", "nickname", "created_at", "updated_at", "last_login", "logins_count"].map(
  (name) => ({ name }),
);

/** One CSV cell: quoted when needed; a leading formula character is neutralized (CSV injection). */
function csvCell(value: unknown): string {
  if (value === undefined || value === null) return "";
  let text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** A user as exported: the API record without the storage-only `linked_to`. */
function exported(user: UserRecord): Record<string, unknown> {
  const { linked_to: _linked, ...rest } = user;
  return rest;
}

/** One user as a JSON line: the chosen fields under their titles, or the whole record. */
function jsonLine(user: Record<string, unknown>, fields: ExportField[] | null): string {
  if (!fields) return JSON.stringify(user);
  const out: Record<string, Json> = {};
  for (const field of fields) {
    const value = valueAt(user, field.name);
    if (value !== undefined) out[field.export_as ?? field.name] = value as Json;
  }
  return JSON.stringify(out);
}

/** Writes the next chunk of an export in the caller's transaction; completes the job at the end or the limit. */
export function exportChunk(tx: WriteTx, job: JobRow, chunkUsers: number): void {
  const id = String(job.id);
  const csv = job.format === "csv";
  const fields = json<ExportField[] | null>(job.fields as string | null, null);
  const written = Number(job.total);
  const usersDone = csv ? Math.max(0, written - 1) : written;
  const limit = job.row_limit === null ? null : Number(job.row_limit);
  const want = limit === null ? chunkUsers : Math.max(0, Math.min(chunkUsers, limit - usersDone));
  const cursor = job.cursor === null ? "" : String(job.cursor);
  const connection = job.connection === null ? null : String(job.connection);
  const rows = tx.sql.all<UserRow>`SELECT * FROM users WHERE linked_to IS NULL AND (${connection} IS NULL OR connection = ${connection})
    AND user_id > ${cursor} ORDER BY user_id LIMIT ${want}`;
  const lines: string[] = [];
  const columns = fields ?? DEFAULT_CSV_FIELDS;
  if (csv && written === 0) lines.push(columns.map((f) => csvCell(f.export_as ?? f.name)).join(","));
  for (const user of toUsers(tx.sql, rows).map(exported)) {
    lines.push(csv ? columns.map((f) => csvCell(valueAt(user, f.name))).join(",") : jsonLine(user, fields));
  }
  tx.sql.run`INSERT INTO job_rows (job_id, idx, data) SELECT ${id}, ${written} + key, value FROM json_each(${JSON.stringify(lines)})`;
  const last = rows[rows.length - 1];
  const done = rows.length < want || want === 0 || (limit !== null && usersDone + rows.length >= limit);
  tx.sql.run`UPDATE jobs SET total = ${written + lines.length}, cursor = ${last ? String(last.user_id) : job.cursor as string | null},
      attempts = 0, status = ${done ? "completed" : "processing"}, updated_at = ${tx.now}, completed_at = ${done ? tx.now : null} WHERE id = ${id}`;
}
