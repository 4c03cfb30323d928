import { normalizeEmail } from "../../shared/schemas/users";
import { hashPassword } from "../../shared/crypto/passwords";
import { randomId } from "../../shared/crypto/random";
import type { ConnectionRecord, Json, UserRecord } from "../../shared/types";
import type { AppContext } from "../context";
import { runBlockingHooks } from "../hooks/blocking";
import { auditContext } from "../http/audit";
import { tenantObject } from "../tenant/stubs";
import { MIN_PASSWORD_LENGTH, passwordProblem } from "../users/password-policy";

export { MIN_PASSWORD_LENGTH };
const MAX_EMAIL_LENGTH = 254;

export type SignupFailureCode = "INVALID_EMAIL" | "PASSWORD_TOO_SHORT" | "PASSWORD_TOO_LONG" | "PASSWORD_TOO_WEAK" | "USER_EXISTS" | "REGISTRATION_DENIED";

export interface SignupFailure {
  code: SignupFailureCode;
  message: string;
  /** The form field the failure is about. */
  field: "email" | "password";
}

export type SignupResult = { ok: true; user: UserRecord } | { ok: false; failure: SignupFailure };

export interface SignupInput {
  email: string;
  password: string;
  user_metadata?: Record<string, Json>;
  name?: string;
  nickname?: string;
}

const fail = (code: SignupFailureCode, message: string, field: SignupFailure["field"]): SignupResult => ({
  ok: false,
  failure: { code, message, field },
});

/** The connection's password rule, stated the same way on the page and in the API. */
export function checkPassword(password: string, connection?: Pick<ConnectionRecord, "options">): SignupFailure | null {
  const problem = passwordProblem(password, connection);
  return problem ? { ...problem, field: "password" } : null;
}

/** A plausible address: one @, something on both sides, no whitespace or control characters. */
export function isPlausibleEmail(email: string): boolean {
  return email.length <= MAX_EMAIL_LENGTH && /^[^\s@\p{Cc}]+@[^\s@\p{Cc}]+$/u.test(email);
}

/**
 * Creates a user in a database connection from a self-service sign-up (universal login or
 * /dbconnections/signup): email trimmed and lowercased, password checked against the policy and stored as a
 * bcrypt hash (hashed here in the worker, never in the object), email not verified yet.
 */
export async function signUpDatabaseUser(
  c: AppContext,
  connection: Pick<ConnectionRecord, "name"> & Partial<Pick<ConnectionRecord, "options">>,
  input: SignupInput,
  clientId: string | null = null,
): Promise<SignupResult> {
  const email = normalizeEmail(input.email);
  if (!isPlausibleEmail(email)) return fail("INVALID_EMAIL", "Enter a valid email address.", "email");
  const weak = checkPassword(input.password, connection.options ? { options: connection.options } : undefined);
  if (weak) return { ok: false, failure: weak };
  // Prepare phase (SPEC §6.1): a refusal here leaves no row and no event.
  const { password: _password, ...shown } = input;
  const verdict = await runBlockingHooks(c, "pre-user-registration", { user: { ...shown, email, connection: connection.name }, client_id: clientId });
  if (!verdict.ok) return fail("REGISTRATION_DENIED", verdict.reason, "email");
  const actor = { type: "anonymous" as const, id: null, client_id: clientId };
  const audit = auditContext(c, { actor, body: { ...input, connection: connection.name } });
  const result = await tenantObject(c.env, c.var.tenant.id).users(audit).create({
    user_id: `auth0|${randomId()}`,
    connection: connection.name,
    email,
    email_verified: false,
    password_hash: await hashPassword(input.password),
    ...(input.name ? { name: input.name } : {}),
    ...(input.nickname ? { nickname: input.nickname } : {}),
    ...(input.user_metadata ? { user_metadata: input.user_metadata } : {}),
  });
  if (result.ok) return { ok: true, user: result.value };
  if (result.error.code === "user_exists") return fail("USER_EXISTS", "This email is already registered.", "email");
  throw new Error(`createUser failed: ${result.error.code}`);
}
