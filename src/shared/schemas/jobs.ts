/**
 * Bulk user import and export (SPEC §4.2 "Failed events and jobs"; issue 14 point 5): the reference
 * platform's user file rows and the export request, and how a row's problems are reported.
 */
import { z } from "zod";
import { BCRYPT_MAX_COST, bcryptCost } from "../crypto/bcrypt-cost";

import { phoneNumber, totpSecret } from "./authentication-methods";
import { createUserBody } from "./users";

/** The reference platform's limit on one import file. @default 500 KB */
export const IMPORT_FILE_MAX_BYTES = 500 * 1024;

/**
 * Rows one import file may hold: more than a 500 KB file of the smallest valid rows holds (`{"email":"a@b.co"}`
 * and a comma, 19 bytes: about 27,000), so only a file of rows too small to be users reaches it. @default 50,000
 */
export const IMPORT_MAX_ROWS = 50_000;

/**
 * A bcrypt hash in modular crypt format (`$2a$`, `$2b$`, `$2y$`, cost 04-31): the only algorithm the login
 * page verifies. Anything else is `UNSUPPORTED_HASH_ALGORITHM`; a cost above `BCRYPT_MAX_COST` is refused
 * per row ({@link importedHash}), since the login would never verify it.
 */
export const BCRYPT_HASH = /^\$2[aby]?\$(0[4-9]|[12]\d|3[01])\$[./A-Za-z0-9]{53}$/;

/** The reference platform's `custom_password_hash`: an algorithm and the hash (salt, keylen ... for others). */
const customPasswordHash = z.looseObject({
  algorithm: z.string().min(1),
  hash: z.looseObject({ value: z.string().min(1), encoding: z.string().optional() }),
});

/**
 * One row of the reference platform's bulk import file (its database schema): the POST /users profile
 * fields without `connection` and `password`, plus password hashes and MFA factors. Unknown properties
 * are refused, as the reference platform's schema does.
 */
export const importUserRow = createUserBody
  .omit({ connection: true, verify_email: true, password: true })
  .extend({
    email: createUserBody.shape.email.unwrap(),
    password_hash: z.string().optional(),
    custom_password_hash: customPasswordHash.optional(),
    mfa_factors: z.array(z.unknown()).optional(),
  });
export type ImportUserRow = z.infer<typeof importUserRow>;

/** A zod issue path as the reference platform's job errors write it (`#/user_metadata/plan`). */
const pointer = (path: PropertyKey[]) => `#/${path.map(String).join("/")}`;

const typeName = (value: unknown) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);

/** A row's schema problems in the reference platform's codes (JSON-schema validator names). */
export function rowSchemaErrors(error: z.ZodError, raw: unknown): RowError[] {
  const given = (path: PropertyKey[]) =>
    path.reduce<unknown>((value, key) => (value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key] : undefined), raw);
  return error.issues.map((issue): RowError => {
    if (issue.code === "unrecognized_keys") {
      return { code: "OBJECT_ADDITIONAL_PROPERTIES", message: `Additional properties not allowed: ${issue.keys.join(",")}`, path: pointer(issue.path) };
    }
    if (issue.code === "invalid_type" && given(issue.path) === undefined) {
      const field = String(issue.path[issue.path.length - 1] ?? "");
      return { code: "OBJECT_MISSING_REQUIRED_PROPERTY", message: `Missing required property: ${field}`, path: pointer(issue.path.slice(0, -1)) };
    }
    if (issue.code === "invalid_type") {
      return { code: "INVALID_TYPE", message: `Expected type ${issue.expected} but found type ${typeName(given(issue.path))}`, path: pointer(issue.path) };
    }
    return { code: "INVALID_FORMAT", message: issue.message, path: pointer(issue.path) };
  });
}

/**
 * The bcrypt hash a valid row brings (or null: no password), or the row's error. `password_hash` must be
 * bcrypt; `custom_password_hash` must name `bcrypt` and carry a bcrypt hash (utf8); both at once is refused.
 */
export function importedHash(row: ImportUserRow): { ok: true; hash: string | null } | { ok: false; error: RowError } {
  const unsupported = (path: string, what: string): { ok: false; error: RowError } => ({
    ok: false,
    error: { code: "UNSUPPORTED_HASH_ALGORITHM", message: `Unsupported password hash algorithm: ${what}. Only bcrypt hashes can be imported.`, path },
  });
  if (row.password_hash !== undefined && row.custom_password_hash !== undefined) {
    return { ok: false, error: { code: "INVALID_FORMAT", message: "password_hash and custom_password_hash cannot be used together", path: "#/" } };
  }
  if (row.password_hash !== undefined) {
    if (!BCRYPT_HASH.test(row.password_hash)) return unsupported("#/password_hash", "password_hash is not a bcrypt hash");
    return costly(row.password_hash, "#/password_hash") ?? { ok: true, hash: row.password_hash };
  }
  const custom = row.custom_password_hash;
  if (custom === undefined) return { ok: true, hash: null };
  if (custom.algorithm !== "bcrypt") return unsupported("#/custom_password_hash/algorithm", custom.algorithm.slice(0, 40));
  const encoding = custom.hash.encoding ?? "utf8";
  if (encoding !== "utf8" || !BCRYPT_HASH.test(custom.hash.value)) {
    return { ok: false, error: { code: "INVALID_FORMAT", message: "custom_password_hash.hash.value must be a bcrypt hash with encoding utf8", path: "#/custom_password_hash/hash" } };
  }
  return costly(custom.hash.value, "#/custom_password_hash/hash/value") ?? { ok: true, hash: custom.hash.value };
}

/** The row's error when a bcrypt hash's cost is above the cap (issue 25 point 7), else null. */
function costly(hash: string, path: string): { ok: false; error: RowError } | null {
  const cost = bcryptCost(hash) ?? 0;
  if (cost <= BCRYPT_MAX_COST) return null;
  return { ok: false, error: { code: "INVALID_FORMAT", message: `The bcrypt cost ${cost} exceeds the maximum of ${BCRYPT_MAX_COST}: rehash with a cost of ${BCRYPT_MAX_COST} or less`, path } };
}

/** The row as the errors endpoint shows it: never a password hash or an MFA secret (clear or sealed). */
export function redactedRow(raw: unknown): Record<string, unknown> {
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return { value: raw as never };
  const { password_hash: _h, custom_password_hash: _c, mfa_factors: _m, [STAGED_MFA_KEY]: _s, ...rest } = raw as Record<string, unknown>;
  return rest;
}

/**
 * One entry of a row's `mfa_factors` (the reference platform's MFA enrollment import schema): exactly one of
 * `totp: {secret}` (un-padded base32), `phone: {value}` (E.164) or `email: {value}`.
 */
export const importMfaFactor = z.union([
  z.strictObject({ totp: z.strictObject({ secret: totpSecret }) }),
  z.strictObject({ phone: z.strictObject({ value: phoneNumber }) }),
  z.strictObject({ email: z.strictObject({ value: z.email().max(320) }) }),
]);

/** Factors one row may bring (the reference platform enrolls one authenticator per factor type). @default 3 */
export const MAX_IMPORT_MFA_FACTORS = 3;

/**
 * Where the staged row keeps its MFA factors once the worker sealed them (the file's `mfa_factors`, whose
 * TOTP secrets are never staged in clear). A file row that brings this key itself is refused.
 */
export const STAGED_MFA_KEY = "$mfa";

/** A factor as staged: ready to store (ids chosen, TOTP secret sealed under its method's context), or the row's error. */
export type StagedMfaFactor =
  | { type: "totp"; id: string; secret_enc: string }
  | { type: "phone"; id: string; phone_number: string }
  | { type: "error"; error: RowError };

const FIELD_PATH = /^[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?(\.[A-Za-z_][A-Za-z0-9_]*(\[\d+\])?)*$/;

/** POST /jobs/users-exports (the reference platform's CreateExportUsersRequestContent). */
export const createExportBody = z.strictObject({
  connection_id: z.string().min(1).max(64).optional(),
  format: z.enum(["json", "csv"]).optional(),
  limit: z.number().int().min(1).max(10_000_000).optional(),
  fields: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(200).regex(FIELD_PATH, "must be a profile field path such as user_metadata.plan"),
        export_as: z.string().min(1).max(200).optional(),
      }),
    )
    .min(1)
    .max(100)
    .optional(),
});
export type CreateExportInput = z.infer<typeof createExportBody>;

/**
 * POST /jobs/verification-email (the reference platform's CreateVerificationEmailRequestContent): the user,
 * optionally the application the email is for, the identity whose address to verify (a linked account's),
 * and an organization.
 */
export const verificationEmailBody = z.strictObject({
  user_id: z.string().min(1).max(300),
  client_id: z.string().min(1).max(64).optional(),
  identity: z
    .strictObject({
      user_id: z.string().min(1).max(300),
      provider: z.string().min(1).max(100),
      connection_id: z.string().min(1).max(64).optional(),
    })
    .optional(),
  organization_id: z.string().min(1).max(64).optional(),
});
export type VerificationEmailInput = z.infer<typeof verificationEmailBody>;

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
