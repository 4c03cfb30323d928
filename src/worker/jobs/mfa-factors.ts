/**
 * The `mfa_factors` of an import file's rows (the reference platform's MFA enrollment import), prepared
 * before the rows are staged: each factor validated, its authentication method id chosen and a TOTP secret
 * sealed under that method's encryption context (as POST /users/{id}/authentication-methods seals it), so
 * no secret is ever staged in clear. The row's `mfa_factors` is replaced by the sealed list under
 * `STAGED_MFA_KEY`; a factor that cannot be imported becomes that row's error (reported by the job, never
 * blocking other rows).
 *
 * Supported: `totp` and `phone` (SMS). `email` is refused per row with `UNSUPPORTED_MFA_FACTOR`: Gatehouse's
 * MFA has no email authenticator, and importing the user without it would silently drop a second factor.
 */
import { encryptionContext } from "../../shared/crypto/contexts";
import { fieldCipher, type FieldCipher } from "../../shared/crypto/encryption";
import { importMfaFactor, MAX_IMPORT_MFA_FACTORS, STAGED_MFA_KEY, type StagedMfaFactor } from "../../shared/schemas/jobs";
import type { RowError } from "../../shared/types";
import { newMethodId } from "../management/users/authentication-methods";

const rowError = (error: RowError): StagedMfaFactor[] => [{ type: "error", error }];

/** One row's factors, staged (or the row's single error). `cipher` opens lazily: only TOTP needs the key. */
async function stageFactors(factors: unknown, cipher: () => Promise<FieldCipher>): Promise<StagedMfaFactor[]> {
  if (!Array.isArray(factors)) {
    return rowError({ code: "INVALID_TYPE", message: `Expected type array but found type ${factors === null ? "null" : typeof factors}`, path: "#/mfa_factors" });
  }
  if (factors.length > MAX_IMPORT_MFA_FACTORS) {
    return rowError({ code: "INVALID_MFA_FACTOR", message: `At most ${MAX_IMPORT_MFA_FACTORS} MFA factors per user`, path: "#/mfa_factors" });
  }
  const staged: StagedMfaFactor[] = [];
  const seen = new Set<string>();
  for (const [i, factor] of factors.entries()) {
    const parsed = importMfaFactor.safeParse(factor);
    const path = `#/mfa_factors/${i}`;
    if (!parsed.success) {
      const detail = parsed.error.issues.map((issue) => issue.message).find((m) => /base32|E\.164|email/.test(m));
      return rowError({ code: "INVALID_MFA_FACTOR", message: `Each MFA factor must be exactly one of {totp: {secret}}, {phone: {value}} or {email: {value}}${detail ? `: ${detail}` : ""}`, path });
    }
    const value = parsed.data;
    if ("email" in value) {
      return rowError({ code: "UNSUPPORTED_MFA_FACTOR", message: "Email MFA enrollments cannot be imported: this deployment has no email authenticator", path: `${path}/email` });
    }
    const type = "totp" in value ? "totp" : "phone";
    if (seen.has(type)) return rowError({ code: "INVALID_MFA_FACTOR", message: `At most one ${type} factor per user`, path });
    seen.add(type);
    const id = newMethodId(type);
    if ("totp" in value) {
      staged.push({ type: "totp", id, secret_enc: await (await cipher()).encrypt(value.totp.secret, encryptionContext.totpSecret(id)) });
    } else {
      staged.push({ type: "phone", id, phone_number: value.phone.value });
    }
  }
  return staged;
}

/**
 * The rows with their MFA factors staged. A row that brings `STAGED_MFA_KEY` itself is that row's error
 * (only this function writes it). Rows without factors pass unchanged.
 */
export async function stageMfaFactors(rows: unknown[], encryptionKey: string | undefined): Promise<unknown[]> {
  let opened: Promise<FieldCipher> | undefined;
  const cipher = () => (opened ??= fieldCipher(encryptionKey));
  const out: unknown[] = [];
  for (const row of rows) {
    if (row === null || typeof row !== "object" || Array.isArray(row)) {
      out.push(row);
      continue;
    }
    const record = row as Record<string, unknown>;
    if (Object.hasOwn(record, STAGED_MFA_KEY)) {
      const { [STAGED_MFA_KEY]: _forged, ...rest } = record;
      out.push({ ...rest, [STAGED_MFA_KEY]: rowError({ code: "OBJECT_ADDITIONAL_PROPERTIES", message: `Additional properties not allowed: ${STAGED_MFA_KEY}`, path: "#/" }) });
      continue;
    }
    if (!Object.hasOwn(record, "mfa_factors")) {
      out.push(row);
      continue;
    }
    const { mfa_factors: factors, ...rest } = record;
    out.push({ ...rest, [STAGED_MFA_KEY]: await stageFactors(factors, cipher) });
  }
  return out;
}
