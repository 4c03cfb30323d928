import bcrypt from "bcryptjs";
import { LOCKOUT_ATTEMPTS } from "../../objects/user/login-throttle";
import { DEFAULT_DATABASE_CONNECTION } from "../../objects/tenant/seed";
import { normalizeEmail } from "../../objects/tenant/users";
import type { ConnectionRecord, UserRecord } from "../../shared/types";
import type { AppContext } from "../context";
import { tenantObject, userObject } from "../tenant/stubs";
import { configOf, requiresVerifiedEmail } from "./connection";

/** Interactive login failures (SPEC §7 table; TOO_MANY_REQUESTS needs the rate-limit adapter, not wired). */
export type LoginFailureCode =
  | "USER_NOT_FOUND"
  | "INVALID_PASSWORD"
  | "TOO_MANY_FAILED_LOGINS"
  | "USER_BLOCKED"
  | "EMAIL_NOT_VERIFIED";

export type PasswordCheck = { ok: true; user: UserRecord } | { ok: false; code: LoginFailureCode; status: 403 };

/** What a person is told. An unknown user and a wrong password read the same (no account enumeration). */
export const LOGIN_FAILURE_MESSAGES: Record<LoginFailureCode, string> = {
  USER_NOT_FOUND: "Wrong email or password.",
  INVALID_PASSWORD: "Wrong email or password.",
  TOO_MANY_FAILED_LOGINS: "Too many failed login attempts. Wait a few minutes, then try again.",
  USER_BLOCKED: "This account is blocked. Contact the application's administrator.",
  EMAIL_NOT_VERIFIED: "Verify your email address before logging in.",
};

/**
 * The code shown to the client (page attribute, JSON). USER_NOT_FOUND is reported as INVALID_PASSWORD:
 * anything in a response is visible to whoever sent the request, so a distinct code would let anyone test
 * which emails have accounts. The precise code stays inside the server (verifyPassword's result).
 */
export const publicLoginCode = (code: LoginFailureCode): LoginFailureCode => (code === "USER_NOT_FOUND" ? "INVALID_PASSWORD" : code);

/**
 * A bcrypt (cost 10) hash of a random string nobody knows: compared against when the user does not exist, so
 * that "no such user" costs the same time as "wrong password".
 */
const DUMMY_HASH = "$2b$10$hprHHzpcqRTDeKPt6op/ouHnZdcFWFhLfyfha1l8Cp.7/im5I04tu";

const failure = (code: LoginFailureCode): PasswordCheck => ({ ok: false, code, status: 403 });

/**
 * Verifies an email and password against a database connection (default: the tenant's
 * Username-Password-Authentication), with the per-user lockout of SPEC §5.11
 * (three failures in a rolling five minutes). Shared by the login form and /co/authenticate.
 *
 * Order matters: a locked user is refused before bcrypt runs; the attempt is then counted as a failure
 * *before* bcrypt (and forgiven on success), so a burst of parallel guesses cannot all slip past the
 * lockout check; blocked and unverified are reported only to someone who proved the password.
 */
export async function verifyPassword(
  c: AppContext,
  email: string,
  password: string,
  connection?: Pick<ConnectionRecord, "name" | "options">,
): Promise<PasswordCheck> {
  connection ??= (await configOf(c)).connections.find((x) => x.name === DEFAULT_DATABASE_CONNECTION) ?? {
    name: DEFAULT_DATABASE_CONNECTION,
    options: {},
  };
  const normalized = normalizeEmail(email);
  const found = normalized ? await tenantObject(c.env, c.var.tenant.id).findUserByEmail(connection.name, normalized) : null;
  if (!found?.password_hash) {
    await bcrypt.compare(password, DUMMY_HASH);
    return failure("USER_NOT_FOUND");
  }
  const throttle = userObject(c.env, c.var.tenant.id, found.user_id);
  if (await throttle.isLockedOut()) return failure("TOO_MANY_FAILED_LOGINS");
  const attempt = await throttle.recordLoginFailure();
  if (attempt.failures > LOCKOUT_ATTEMPTS) return failure("TOO_MANY_FAILED_LOGINS");

  if (!(await bcrypt.compare(password, found.password_hash))) {
    return failure(attempt.locked ? "TOO_MANY_FAILED_LOGINS" : "INVALID_PASSWORD");
  }
  await throttle.clearLoginFailures();
  if (found.blocked) return failure("USER_BLOCKED");
  const { password_hash: _hash, ...user } = found;
  if (requiresVerifiedEmail(connection) && !user.email_verified) return failure("EMAIL_NOT_VERIFIED");
  return { ok: true, user };
}
