/**
 * POST /jobs/users-imports, prepare phase: the multipart request read within bounds (a users file of at most
 * the reference platform's 500 KB; anything larger is a 413 before it is buffered), the form fields checked,
 * the connection resolved (a database connection of the tenant), and the file parsed into its rows. Rows
 * are validated one by one later, by the job (an invalid row is that row's error, never the request's).
 */
import { problem } from "../../shared/errors";
import { IMPORT_FILE_MAX_BYTES, IMPORT_MAX_ROWS } from "../../shared/schemas/jobs";
import { textProblem } from "../../shared/schemas/users";
import { DATABASE_STRATEGY } from "../../shared/strategies";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { AppContext } from "../context";
import { MAX_JSON_DEPTH, nestsDeeperThan, readBodyBytes } from "../http/body";
import { configOf } from "../login/connection";
import { stageMfaFactors } from "./mfa-factors";

/** Room for the form's other fields and part headers beside the file. */
const FORM_OVERHEAD_BYTES = 16 * 1024;

export interface ImportRequest {
  connection: ConnectionRecord;
  upsert: boolean;
  external_id: string | null;
  send_completion_email: boolean;
  rows: string[];
}

const tooLarge = () => problem("import_file_too_large", { bytes: IMPORT_FILE_MAX_BYTES });

/** The request body, refused with a 413 as soon as it exceeds the file limit plus the form's overhead. */
const boundedBody = (request: Request) => readBodyBytes(request, IMPORT_FILE_MAX_BYTES + FORM_OVERHEAD_BYTES, tooLarge);

/** A form boolean as the SDKs send it ("true" / "false"), or the default. */
function flag(form: FormData, name: string, fallback: boolean): boolean {
  const value = form.get(name);
  if (value === null || value === "") return fallback;
  if (value === "true" || value === "false") return value === "true";
  throw problem("import_field_invalid", { detail: `${name} must be true or false` });
}

/** The users file's text (a file part, or a plain field as some clients send it). */
async function fileText(part: string | File | null): Promise<string> {
  if (part === null) throw problem("import_field_required", { field: "users" });
  const bytes = typeof part === "string" ? new TextEncoder().encode(part) : new Uint8Array(await part.arrayBuffer());
  if (bytes.byteLength > IMPORT_FILE_MAX_BYTES) throw tooLarge();
  if (bytes.byteLength === 0) throw problem("import_file_not_array");
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw problem("import_file_not_json", { detail: "not UTF-8 text" });
  }
}

/** The file's rows, parsed (validated one by one by the job). */
function fileRows(text: string): unknown[] {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) throw problem("import_file_not_json", { detail: `nested deeper than ${MAX_JSON_DEPTH} levels` });
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw problem("import_file_not_json", { detail: (error as Error).message });
  }
  if (!Array.isArray(data)) throw problem("import_file_not_array");
  if (data.length > IMPORT_MAX_ROWS) throw problem("import_file_too_many_rows", { rows: IMPORT_MAX_ROWS });
  return data;
}

/** Reads and checks the import request; throws the documented 4xx on anything wrong. */
export async function readImportRequest(c: AppContext): Promise<ImportRequest> {
  const type = c.req.header("content-type") ?? "";
  if (!/^multipart\/form-data\b/i.test(type)) throw problem("import_not_multipart");
  const body = await boundedBody(c.req.raw);
  let form: FormData;
  try {
    form = await new Response(body, { headers: { "content-type": type } }).formData();
  } catch {
    throw problem("import_field_invalid", { detail: "the multipart body cannot be parsed" });
  }
  const connectionId = form.get("connection_id");
  if (connectionId === null || connectionId === "") throw problem("import_field_required", { field: "connection_id" });
  if (typeof connectionId !== "string") throw problem("import_field_invalid", { detail: "connection_id must be a string" });
  const externalId = form.get("external_id");
  if (externalId !== null && (typeof externalId !== "string" || externalId.length > 255 || textProblem(externalId))) {
    throw problem("import_field_invalid", { detail: "external_id must be a single-line string of at most 255 characters" });
  }
  const upsert = flag(form, "upsert", false);
  const sendCompletionEmail = flag(form, "send_completion_email", true);
  const parsed = fileRows(await fileText(form.get("users")));
  const config = await configOf(c);
  const connection = config.connections.find((x) => x.id === connectionId);
  if (!connection) throw problem("import_connection_not_found");
  if (connection.strategy !== DATABASE_STRATEGY) throw problem("import_connection_not_database");
  // A job with nothing to import would only fail later; the file is refused now instead.
  if (parsed.length === 0) throw problem("import_file_empty");
  // MFA factors are sealed before staging (their TOTP secrets are never stored in clear); each row as its JSON text.
  const rows = (await stageMfaFactors(parsed, c.env.ENCRYPTION_KEY)).map((row) => JSON.stringify(row ?? null));
  return { connection, upsert, external_id: externalId === null || externalId === "" ? null : externalId, send_completion_email: sendCompletionEmail, rows };
}
