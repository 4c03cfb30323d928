import { BCRYPT_MAX_COST, bcryptCost } from "../../shared/crypto/bcrypt-cost";
import { checkPassword } from "../../shared/crypto/passwords";
import { normalizeEmail } from "../../shared/schemas/users";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { UserRecord, UserWithSecret } from "../../shared/schemas/users";
import type { PasswordLoginRead } from "../../shared/types";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { tenantObject, userObject } from "../tenant/stubs";
import { configOf, defaultDirectory, requiresVerifiedEmail } from "./connection";
import { isAllowlisted } from "../../shared/ip";
import { clientIp, isIpThrottled } from "./ip-throttle";
import { customDatabaseOf } from "../../shared/actions/db-scripts";
import { loginThroughScript } from "../actions/custom-db";
import { scriptLoginMark } from "../../shared/actions/migration-report";

/** Interactive login failures (SPEC §7 table). */
export type LoginFailureCode =
  | "USER_NOT_FOUND"
  | "INVALID_PASSWORD"
  | "TOO_MANY_FAILED_LOGINS"
  | "TOO_MANY_REQUESTS"
  | "USER_BLOCKED"
  | "EMAIL_NOT_VERIFIED"
  | "CUSTOM_DB_ERROR";

/**
 * What the login form's one read said about account linking for the user that logged in (issue 31): when
 * `links` is false the worker skips the linking commit (linking by email would not link this account).
 */
export interface LinkingHint {
  user_id: string;
  links: boolean;
}

export type PasswordCheck = { ok: true; user: UserRecord; linking?: LinkingHint } | { ok: false; code: LoginFailureCode; status: 403 | 429 };

/** What a person is told. An unknown user and a wrong password read the same (no account enumeration). */
export const LOGIN_FAILURE_MESSAGES: Record<LoginFailureCode, string> = {
  USER_NOT_FOUND: "Wrong email or password.",
  INVALID_PASSWORD: "Wrong email or password.",
  TOO_MANY_FAILED_LOGINS: "Too many failed login attempts. Wait a few minutes, then try again.",
  TOO_MANY_REQUESTS: "Too many login attempts from your network. Wait a minute, then try again.",
  USER_BLOCKED: "This account is blocked. Contact the application's administrator.",
  EMAIL_NOT_VERIFIED: "Verify your email address before logging in.",
  CUSTOM_DB_ERROR: "We're sorry, something went wrong when attempting to log in.",
};

/**
 * The code shown to the client (page attribute, JSON). USER_NOT_FOUND is reported as INVALID_PASSWORD:
 * anything in a response is visible to whoever sent the request, so a distinct code would let anyone test
 * which emails have accounts. The precise code stays inside the server (verifyPassword's result).
 */
export const publicLoginCode = (code: LoginFailureCode): LoginFailureCode => (code === "USER_NOT_FOUND" ? "INVALID_PASSWORD" : code);


/**
 * The throttle object's name for an identifier no user has: never a user id (those carry a provider
 * prefix such as `auth0|`), so the two kinds of counters cannot collide.
 */
export const identifierKey = (connection: string, identifier: string) => `identifier:${connection}:${identifier}`;

/**
 * Verifies an email and password against a database connection (default: the tenant's
 * Username-Password-Authentication), with the per-user lockout of SPEC §5.11
 * (three failures in a rolling five minutes). Shared by the login form and /co/authenticate.
 *
 * Order matters: a locked user is refused before bcrypt runs; the attempt is then counted as a failure
 * *before* bcrypt (and forgiven on success), so a burst of parallel guesses cannot all slip past the
 * lockout check; blocked and unverified are reported only to someone who proved the password. Both steps are
 * one command each on the user object (`attempts().begin()` before bcrypt, `settle(true)` after a success).
 *
 * Failures are counted whether or not the user exists (issue 6): an existing user's in their own object
 * (SPEC §5.11, per user), an unknown identifier's in an object keyed by the connection and normalized
 * identifier. Both lock after the same number of tries, so the answers cannot tell accounts apart.
 */
export async function verifyPassword(
  c: AppContext,
  email: string,
  password: string,
  connection?: Pick<ConnectionRecord, "name" | "options">,
  clientId: string | null = null,
  /** The login form's one read (issue 31): its account is used when it was read for this email and connection. */
  prefetched?: PasswordLoginRead,
): Promise<PasswordCheck> {
  const check = await verify(c, email, password, connection, clientId, prefetched);
  if (!check.ok) {
    // SPEC §2.10: every refused login leaves its log event (fu / fp / f), committed before the answer.
    const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: clientId } });
    await tenantObject(c.env, c.var.tenant.id)
      .logins(audit)
      .recordFailure({ code: check.code, email: normalizeEmail(email), user_id: check.userId, ...(check.description ? { description: check.description } : {}) });
  }
  return check.ok ? check : { ok: false, code: check.code, status: check.status };
}

const withoutLinks = ({ links: _links, ...account }: UserWithSecret & { links?: boolean | null }): UserWithSecret => account;

/** The prefetched account for this email and connection, or undefined when the read did not look it up. */
function prefetchedAccount(prefetched: PasswordLoginRead | undefined, connection: string, email: string) {
  if (!prefetched || prefetched.email !== email || !Object.hasOwn(prefetched.accounts, connection)) return undefined;
  return prefetched.accounts[connection] ?? null;
}

async function verify(
  c: AppContext,
  email: string,
  password: string,
  connection: Pick<ConnectionRecord, "name" | "options"> | undefined,
  clientId: string | null,
  prefetched: PasswordLoginRead | undefined,
): Promise<{ ok: true; user: UserRecord; linking?: LinkingHint } | { ok: false; code: LoginFailureCode; status: 403 | 429; userId: string | null; description?: string }> {
  const config = await configOf(c);
  const directory = defaultDirectory(config);
  connection ??= config.connections.find((x) => x.name === directory) ?? { name: directory, options: {} };
  // SPEC §5.11: suspicious-IP throttling first (no further lookup, no bcrypt for a throttled network; the login
  // form's one read may already hold the account, unused then).
  if (await isIpThrottled(c, config)) return { ok: false, code: "TOO_MANY_REQUESTS", status: 429, userId: null };
  const bruteForce = config.attackProtection.brute_force_protection;
  const ip = clientIp(c);
  // The lockout applies only while its `block` shield is on (the reference platform's shields; without it
  // the setting would only notify, which Gatehouse does not do, so nothing is counted against the user).
  const blocks = bruteForce.enabled && bruteForce.shields.includes("block");
  const lockout = blocks && !(ip && isAllowlisted(ip, bruteForce.allowlist)) ? bruteForce.max_attempts : null;
  const normalized = normalizeEmail(email);
  const tenantId = c.var.tenant.id;
  const early = normalized ? prefetchedAccount(prefetched, connection.name, normalized) : null;
  const read = early === undefined && normalized ? await tenantObject(c.env, tenantId).users().findByEmail(connection.name, normalized) : (early ?? null);
  // Whether linking by email would link the account (known only from the form's one read).
  const links = early ? early.links : null;
  const found = read ? withoutLinks(read) : null;
  const throttle = userObject(c.env, tenantId, found ? found.user_id : identifierKey(connection.name, normalized));
  const known = (code: LoginFailureCode) => ({ ok: false as const, code, status: 403 as const, userId: found?.user_id ?? null });
  // `count_per_identifier_and_ip`: the failures from this IP only lock this identifier for this IP.
  const origin = { ip: ip ?? null, perIp: bruteForce.mode === "count_per_identifier_and_ip" };
  const admission = await throttle.attempts().begin(lockout, origin);
  if (!admission.admitted) return known("TOO_MANY_FAILED_LOGINS");

  // Issue 32: a custom database's `login` script decides, unless import mode already moved this user.
  const record = config.connections.find((x) => x.name === connection.name);
  const db = record ? customDatabaseOf(record) : null;
  if (db && record && (!db.importMode || !found?.password_hash)) {
    const scripted = await loginThroughScript(c, config, record, db, email, password, clientId);
    if (!scripted.ok) {
      if (admission.locked) return known("TOO_MANY_FAILED_LOGINS");
      // WrongUsernameOrPasswordError reads as any wrong password (fp); anything else is `f` with the cause.
      // The suffix names the connection: the migration report counts these logs (issue 32 point 4).
      const mark = scriptLoginMark(record.name);
      if (scripted.kind === "wrong_credentials") return { ...known("INVALID_PASSWORD"), description: `Wrong email or password. (${scripted.message.slice(0, 300)})${mark}` };
      return { ...known("CUSTOM_DB_ERROR"), description: `${scripted.message.slice(0, 400)}${mark}` };
    }
    return admit(scripted.user);
  }
  // Always one full bcrypt comparison, known user or not (no timing difference).
  const checked = await checkPassword(password, found?.password_hash);
  if (checked === "cost_exceeded") {
    // Issue 25 point 7: fail closed, never spending the hash's cost; the person sees a wrong password.
    const cost = bcryptCost(found?.password_hash ?? "");
    const description = `Failed login: the stored password hash has bcrypt cost ${cost}, above the maximum of ${BCRYPT_MAX_COST}, so it was not verified; reset the user's password`;
    return { ...known(admission.locked ? "TOO_MANY_FAILED_LOGINS" : "INVALID_PASSWORD"), description };
  }
  if (!found || checked === "mismatch") {
    if (admission.locked) return known("TOO_MANY_FAILED_LOGINS");
    return known(found?.password_hash ? "INVALID_PASSWORD" : "USER_NOT_FOUND");
  }
  const { password_hash: _hash, ...account } = found;
  const admitted = await admit(account);
  // The hint holds for the account read here, when it is the user that logs in (not linked elsewhere).
  return admitted.ok && links !== null && admitted.user.user_id === found.user_id ? { ...admitted, linking: { user_id: found.user_id, links } } : admitted;

  /** After a proven password: the lockout forgiven, then the account's own standing. */
  async function admit(account: UserRecord & { linked_to?: string | null }) {
    const refused = (code: LoginFailureCode) => ({ ok: false as const, code, status: 403 as const, userId: account.user_id });
    await throttle.attempts().settle(true, origin);
    // A linked account logs its person in as the primary user (SPEC §2.12: it is an identity of the primary).
    const user = account.linked_to ? await tenantObject(c.env, tenantId).users().get(account.linked_to) : account;
    if (!user) return refused("USER_NOT_FOUND");
    if (account.blocked || user.blocked) return refused("USER_BLOCKED");
    if (requiresVerifiedEmail(connection ?? { options: {} }) && !account.email_verified) return refused("EMAIL_NOT_VERIFIED");
    return { ok: true as const, user };
  }
}
