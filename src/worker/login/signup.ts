import { BREACHED_PASSWORD_MESSAGE, breachedPasswordVerdict } from "../users/breached-password";
import { sendWelcomeEmail } from "../messaging/email-templates";
import { isEmailAddress } from "../../shared/email-address";
import { normalizeEmail } from "../../shared/schemas/users";
import { hashPassword } from "../../shared/crypto/passwords";
import { randomId } from "../../shared/crypto/random";
import type { Json } from "../../shared/types";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import type { NewUser, UserRecord } from "../../shared/schemas/users";
import { customDatabaseOf } from "../../shared/actions/db-scripts";
import { signupThroughScripts } from "../actions/custom-db";
import type { AppContext } from "../context";
import { linkAccountFor } from "../actions/account-linking";
import { runPreRegistration } from "../actions/pre-registration";
import { clientIn, tenantConfig } from "../tenant/config-cache";
import { runBlockingHooks } from "../hooks/blocking";
import { auditContext } from "../http/audit";
import { tenantObject } from "../tenant/stubs";
import { MIN_PASSWORD_LENGTH, passwordProblem } from "../users/password-policy";

export { MIN_PASSWORD_LENGTH };

export type SignupFailureCode = "INVALID_EMAIL" | "PASSWORD_TOO_SHORT" | "PASSWORD_TOO_LONG" | "PASSWORD_TOO_WEAK" | "PASSWORD_BREACHED" | "USER_EXISTS" | "REGISTRATION_DENIED";

export interface SignupFailure {
  code: SignupFailureCode;
  message: string;
  /** The form field the failure is about. */
  field: "email" | "password";
  /** The login pages' text id and placeholders (the password policy's; issue 29 point 3). */
  text?: string;
  vars?: Record<string, number>;
}

export type SignupResult = { ok: true; user: UserRecord } | { ok: false; failure: SignupFailure };

export interface SignupInput {
  email: string;
  password: string;
  user_metadata?: Record<string, Json>;
  name?: string;
  nickname?: string;
  /** Only for connections with `requires_username`. */
  username?: string;
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
  if (!isEmailAddress(email)) return fail("INVALID_EMAIL", "Enter a valid email address.", "email");
  const weak = checkPassword(input.password, connection.options ? { options: connection.options } : undefined);
  if (weak) return { ok: false, failure: weak };
  const who = { client_id: clientId, user_id: null, connection: connection.name, email };
  if ((await breachedPasswordVerdict(c, "pre-user-registration", input.password, who)) === "block") {
    return fail("PASSWORD_BREACHED", BREACHED_PASSWORD_MESSAGE, "password");
  }
  // Prepare phase (SPEC §6.1): a refusal here leaves no row and no event.
  const { password: _password, ...shown } = input;
  if (input.username !== undefined) {
    const checked = await runBlockingHooks(c, "validate-registration-username", { username: input.username, connection: connection.name, client_id: clientId });
    if (!checked.ok) return fail("REGISTRATION_DENIED", checked.reason, "email");
  }
  const verdict = await runBlockingHooks(c, "pre-user-registration", { user: { ...shown, email, connection: connection.name }, client_id: clientId });
  if (!verdict.ok) return fail("REGISTRATION_DENIED", verdict.reason, "email");
  const actions = await runPreRegistration(c, { user: { ...(shown as Record<string, Json>), email }, connection: connection.name, client_id: clientId });
  if (!actions.ok) return fail("REGISTRATION_DENIED", actions.message, "email");
  const userMetadata = { ...input.user_metadata, ...actions.effects?.user_metadata };
  const config = await tenantConfig(c.var.tenant.id, tenantObject(c.env, c.var.tenant.id), c.var.settings);
  // Issue 32: a custom database checks (import mode) or stores (scripts as the store) the person first.
  const record = config.connections.find((x) => x.name === connection.name);
  const db = record ? customDatabaseOf(record) : null;
  let scripted: NewUser | null = null;
  if (db && record) {
    const custom = await signupThroughScripts(c, config, record, db, { email, password: input.password, username: input.username, user_metadata: userMetadata }, clientId);
    if (!custom.ok) return fail(custom.code, custom.message, "email");
    if (!custom.local) scripted = custom.user;
  }
  const actor = { type: "anonymous" as const, id: null, client_id: clientId };
  const audit = auditContext(c, { actor, body: { ...input, connection: connection.name } });
  const result = await tenantObject(c.env, c.var.tenant.id).users(audit).create({
    user_id: `auth0|${randomId()}`,
    connection: connection.name,
    email,
    email_verified: false,
    password_hash: scripted ? null : await hashPassword(input.password),
    ...(input.name ? { name: input.name } : {}),
    ...(input.nickname ? { nickname: input.nickname } : {}),
    ...(input.username !== undefined ? { username: input.username } : {}),
    ...scripted,
    ...(Object.keys(userMetadata).length ? { user_metadata: { ...scripted?.user_metadata, ...userMetadata } } : {}),
  });
  if (!result.ok) {
    if (result.error.code === "user_exists") return fail("USER_EXISTS", "This email is already registered.", "email");
    if (result.error.code === "username_exists") return fail("USER_EXISTS", "This username is already taken.", "email");
    throw new Error(`createUser failed: ${result.error.code}`);
  }
  let user = result.value;
  if (actions.effects) {
    // The execution, and app_metadata the actions set, beside the new user (user_metadata went with it).
    const effects = { ...actions.effects, user_metadata: {} };
    await tenantObject(c.env, c.var.tenant.id).actions(audit).applyEffects(user.user_id, effects);
    if (Object.keys(effects.app_metadata).length) user = (await tenantObject(c.env, c.var.tenant.id).users().get(user.user_id)) ?? user;
  }
  // Account linking at registration (SPEC §6.2); the login that follows continues as the primary.
  const client = clientId ? clientIn(config, clientId) : undefined;
  if (client) await linkAccountFor(c, config, client, user, "post-user-registration");
  if (user.email) await sendWelcomeEmail(c, user.email, { config, user, client: client ?? null, connection: connection.name });
  return { ok: true, user };
}
