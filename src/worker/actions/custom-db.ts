import { type CustomDatabase, customDatabaseOf, runScript, type ScriptName, type ScriptOutcome } from "../../shared/actions/db-scripts";
import { sandboxEgressFrom, sandboxLimitsFrom } from "../../shared/actions/sandbox";
import { encryptionContext } from "../../shared/crypto/contexts";
import { fieldCipher } from "../../shared/crypto/encryption";
import { hashPassword } from "../../shared/crypto/passwords";
import { isEmailAddress } from "../../shared/email-address";
import { problem } from "../../shared/errors";
import type { ConnectionRecord } from "../../shared/schemas/connections";
import { metadataProblem, type NewUser, normalizeEmail, textProblem, type UserRecord } from "../../shared/schemas/users";
import type { Json, TenantConfig } from "../../shared/types";
import type { AppContext } from "../context";
import { auditContext } from "../http/audit";
import { tenantObject } from "../tenant/stubs";

/**
 * The worker's side of custom database connections (issue 32 point 2): runs a connection's scripts in the
 * sandbox with its opened `configuration`, and turns the profiles they return into Gatehouse users. The
 * login, sign-up and password-reset flows call these at the reference platform's moments.
 */

/** Opens a connection's `configuration` (sealed with its credential options, context `connection_secrets:<id>`). */
async function configurationOf(c: AppContext, connection: Pick<ConnectionRecord, "id" | "secrets_enc">): Promise<Record<string, string>> {
  if (!connection.secrets_enc) return {};
  const opened = JSON.parse(await (await fieldCipher(c.env.ENCRYPTION_KEY)).decrypt(connection.secrets_enc, encryptionContext.connectionSecrets(connection.id))) as Record<string, Json>;
  const configuration = opened.configuration;
  if (!configuration || typeof configuration !== "object" || Array.isArray(configuration)) return {};
  return Object.fromEntries(Object.entries(configuration).filter((e): e is [string, string] => typeof e[1] === "string"));
}

/** Runs one script of the connection's custom database from a request of the front worker. */
export async function runConnectionScript(
  c: AppContext,
  config: TenantConfig,
  connection: ConnectionRecord,
  db: CustomDatabase,
  name: ScriptName,
  args: Json[],
): Promise<ScriptOutcome> {
  const vars = c.env as unknown as Record<string, unknown>;
  let exports: unknown;
  try {
    exports = (c.executionCtx as unknown as { exports?: unknown }).exports;
  } catch {
    exports = undefined;
  }
  let configuration: Record<string, string>;
  try {
    configuration = await configurationOf(c, connection);
  } catch {
    return { ok: false, kind: "error", message: "The connection's configuration cannot be opened", logs: "", egress: [], duration_ms: 0 };
  }
  const env = { loader: c.env.LOADER, tenantId: c.var.tenant.id, limits: sandboxLimitsFrom(vars), egress: sandboxEgressFrom(exports, vars, config.settings.egress_allowlist) };
  return runScript(env, db, name, args, configuration);
}

const text = (value: unknown, max = 300): string | null => (typeof value === "string" && value.length > 0 ? value.slice(0, max) : null);
const object = (value: unknown): Record<string, Json> | undefined =>
  value && typeof value === "object" && !Array.isArray(value) ? (JSON.parse(JSON.stringify(value)) as Record<string, Json>) : undefined;

/**
 * The Gatehouse user a script's profile describes (the reference platform's rules): `user_id` (or `id`)
 * becomes `auth0|<id>`, the email must be an address (the one the person typed when the profile has none),
 * the standard profile fields are kept, metadata objects too. Anything else is a malformed profile.
 */
export function userFromProfile(
  profile: Json | null,
  connection: string,
  typedEmail: string,
  passwordHash: string | null,
): { ok: true; user: NewUser } | { ok: false; message: string } {
  if (!profile || typeof profile !== "object" || Array.isArray(profile)) return { ok: false, message: "The script returned no profile object" };
  const p = profile as Record<string, Json>;
  const rawId = p.user_id ?? p.id;
  const id = typeof rawId === "number" && Number.isFinite(rawId) ? String(rawId) : text(rawId, 200);
  if (!id || !/^[\x21-\x7e]+$/.test(id)) return { ok: false, message: "The profile's user_id must be a non-empty string without spaces" };
  const email = normalizeEmail(text(p.email) ?? typedEmail);
  if (!isEmailAddress(email)) return { ok: false, message: "The profile's email is not an email address" };
  const bareId = id.startsWith("auth0|") ? id.slice("auth0|".length) : id;
  const user: NewUser = {
    user_id: `auth0|${bareId}`,
    connection,
    email,
    email_verified: p.email_verified === true,
    password_hash: passwordHash,
  };
  for (const field of ["name", "given_name", "family_name", "nickname", "picture", "username"] as const) {
    const value = text(p[field]);
    const wrong = value === null ? null : textProblem(value);
    if (wrong) return { ok: false, message: `The profile's ${field} ${wrong}` };
    if (value) user[field] = value;
  }
  // The management API's rules for metadata hold here too (16 KB each, no reserved keys, no bad text).
  for (const field of ["app_metadata", "user_metadata"] as const) {
    if (p[field] === undefined || p[field] === null) continue;
    const value = object(p[field]);
    const wrong = value ? metadataProblem(p[field]) : "must be an object";
    if (wrong || !value) return { ok: false, message: `The profile's ${field} ${wrong}` };
    user[field] = value;
  }
  return { ok: true, user };
}

export type ScriptLogin =
  | { ok: true; user: UserRecord; migrated: boolean }
  | { ok: false; kind: "wrong_credentials" | "unauthorized" | "error"; message: string };

/**
 * A login through the connection's `login` script. Import mode: the first success creates the user with
 * the password (hashed here, at the tenant's cost) and the profile, so every later login is local. Without
 * import mode the scripts are the store: the user is created without a password on its first login and
 * found by id after that.
 */
export async function loginThroughScript(
  c: AppContext,
  config: TenantConfig,
  connection: ConnectionRecord,
  db: CustomDatabase,
  email: string,
  password: string,
  clientId: string | null,
): Promise<ScriptLogin> {
  const outcome = await runConnectionScript(c, config, connection, db, "login", [email, password]);
  if (!outcome.ok) {
    if (outcome.kind === "wrong_credentials" || outcome.kind === "unauthorized") return { ok: false, kind: outcome.kind, message: outcome.message };
    return { ok: false, kind: "error", message: `The login script failed: ${outcome.message}` };
  }
  // The reference's "user not found" is callback(null) with no profile: a wrong email or password.
  if (outcome.value === null) return { ok: false, kind: "wrong_credentials", message: "Wrong email or password." };
  const hash = db.importMode ? await hashPassword(password) : null;
  const made = userFromProfile(outcome.value, connection.name, email, hash);
  if (!made.ok) return { ok: false, kind: "error", message: `The login script returned a malformed profile: ${made.message}` };
  const users = tenantObject(c.env, c.var.tenant.id);
  const existing = await users.users().get(made.user.user_id);
  const audit = auditContext(c, { actor: { type: "anonymous", id: null, client_id: clientId }, body: { connection: connection.name } });
  if (existing) {
    // Import mode, a user moved without a password (a reset never finished): this login completes the move.
    if (hash && existing.connection === connection.name) await users.users(audit).update(existing.user_id, { fields: {}, password_hash: hash });
    return { ok: true, user: existing, migrated: false };
  }
  const created = await users.users(audit).migrate(made.user);
  if (created.ok) return { ok: true, user: created.value, migrated: true };
  // A concurrent first login moved the same person: the user is there now.
  const again = await users.users().get(made.user.user_id);
  if (again) return { ok: true, user: again, migrated: false };
  return { ok: false, kind: "error", message: `The login script's user could not be stored: ${created.error.message}` };
}

/**
 * The `get_user` script for an email: the profile, null when the legacy store has no such user, or the
 * failure (a thrown error, a timeout) the caller reports.
 */
export async function legacyUser(
  c: AppContext,
  config: TenantConfig,
  connection: ConnectionRecord,
  db: CustomDatabase,
  email: string,
): Promise<{ ok: true; profile: Json | null } | { ok: false; message: string }> {
  if (!db.scripts.get_user) return { ok: true, profile: null };
  const outcome = await runConnectionScript(c, config, connection, db, "get_user", [email]);
  if (!outcome.ok) return { ok: false, message: `The get_user script failed: ${outcome.message}` };
  return { ok: true, profile: outcome.value };
}

/**
 * Moves a user `get_user` found (import mode, a password reset for someone who never logged in): the
 * profile without a password, which the reset then sets. Null when the profile is malformed.
 */
export async function migrateFoundUser(c: AppContext, connection: ConnectionRecord, profile: Json | null, email: string): Promise<UserRecord | null> {
  const made = userFromProfile(profile, connection.name, email, null);
  if (!made.ok) return null;
  const stub = tenantObject(c.env, c.var.tenant.id);
  const existing = await stub.users().get(made.user.user_id);
  if (existing) return existing;
  const created = await stub.users(auditContext(c, { actor: { type: "anonymous", id: null } })).migrate(made.user);
  return created.ok ? created.value : await stub.users().get(made.user.user_id);
}

export type CustomSignup =
  | { ok: true; local: true }
  | { ok: true; local: false; user: NewUser }
  | { ok: false; code: "USER_EXISTS" | "REGISTRATION_DENIED"; message: string };

const SIGNUP_TROUBLE = "We're sorry, something went wrong when attempting to sign up.";

/**
 * A sign-up on a custom database. Import mode: `get_user` tells whether the legacy store already has this
 * person (then it is a duplicate), and the user is created here as usual (`local`). Without import mode the
 * `create` script stores the person, and `get_user` reads the profile back (its user_id is the id every
 * later login script returns), which the caller stores without a password.
 */
export async function signupThroughScripts(
  c: AppContext,
  config: TenantConfig,
  connection: ConnectionRecord,
  db: CustomDatabase,
  input: { email: string; password: string; username?: string | undefined; user_metadata?: Record<string, Json> | undefined },
  clientId: string | null,
): Promise<CustomSignup> {
  if (db.importMode) {
    const legacy = await legacyUser(c, config, connection, db, input.email);
    if (!legacy.ok) return { ok: false, code: "REGISTRATION_DENIED", message: SIGNUP_TROUBLE };
    return legacy.profile ? { ok: false, code: "USER_EXISTS", message: "This email is already registered." } : { ok: true, local: true };
  }
  if (!db.scripts.create) return { ok: false, code: "REGISTRATION_DENIED", message: "Sign-up is not available for this connection." };
  const user: Record<string, Json> = { email: input.email, password: input.password, tenant: c.var.tenant.id, client_id: clientId, connection: connection.name, user_metadata: input.user_metadata ?? {} };
  if (input.username !== undefined) user.username = input.username;
  const created = await runConnectionScript(c, config, connection, db, "create", [user]);
  if (!created.ok) {
    if (created.kind === "validation" && created.code === "user_exists") return { ok: false, code: "USER_EXISTS", message: "This email is already registered." };
    if (created.kind === "validation") return { ok: false, code: "REGISTRATION_DENIED", message: created.message.slice(0, 300) };
    return { ok: false, code: "REGISTRATION_DENIED", message: SIGNUP_TROUBLE };
  }
  const legacy = await legacyUser(c, config, connection, db, input.email);
  const made = legacy.ok ? userFromProfile(legacy.profile, connection.name, input.email, null) : null;
  return made?.ok ? { ok: true, local: false, user: made.user } : { ok: false, code: "REGISTRATION_DENIED", message: SIGNUP_TROUBLE };
}

/**
 * A password reset asked for an address with no Gatehouse user: on a custom database, `get_user` may know
 * the person (import mode: not moved yet). The user is then moved without a password, which the reset sets.
 */
export async function resetAccountFromScripts(c: AppContext, config: TenantConfig, connectionName: string, email: string): Promise<UserRecord | null> {
  const connection = config.connections.find((x) => x.name === connectionName);
  const db = connection ? customDatabaseOf(connection) : null;
  if (!connection || !db) return null;
  const legacy = await legacyUser(c, config, connection, db, email);
  if (!legacy.ok || !legacy.profile) return null;
  return migrateFoundUser(c, connection, legacy.profile, email);
}

/**
 * A new password chosen through a reset, on a custom database without import mode: the `change_password`
 * script stores it in the legacy store (`changed`: keep no hash here). `local` for any other connection.
 */
export async function changePasswordThroughScript(
  c: AppContext,
  config: TenantConfig,
  connectionName: string,
  email: string,
  password: string,
): Promise<{ kind: "local" | "changed" } | { kind: "refused"; message: string }> {
  const connection = config.connections.find((x) => x.name === connectionName);
  const db = connection ? customDatabaseOf(connection) : null;
  if (!connection || !db || db.importMode) return { kind: "local" };
  if (!db.scripts.change_password) return { kind: "refused", message: "Password changes are not available for this connection." };
  const outcome = await runConnectionScript(c, config, connection, db, "change_password", [email, password]);
  return outcome.ok && outcome.value !== false ? { kind: "changed" } : { kind: "refused", message: "We're sorry, something went wrong when changing your password." };
}

/**
 * DELETE /users/{id} of a user of a custom database with a `delete` script: the script removes the person
 * from the legacy store first (the reference platform's moment), with the bare id (`auth0|` removed). Null
 * when it did or has nothing to do, else why it failed (the user stays).
 */
export async function deleteThroughScript(c: AppContext, config: TenantConfig, user: Pick<UserRecord, "user_id" | "connection">): Promise<string | null> {
  const connection = config.connections.find((x) => x.name === user.connection);
  const db = connection ? customDatabaseOf(connection) : null;
  if (!connection || !db?.scripts.delete) return null;
  const bareId = user.user_id.slice(user.user_id.indexOf("|") + 1);
  const outcome = await runConnectionScript(c, config, connection, db, "delete", [bareId]);
  return outcome.ok ? null : outcome.message.slice(0, 300);
}

/**
 * The email-verification link of a user of a custom database without import mode runs `verify(email)`
 * first, as the reference platform does; null when it passed (or there is none), else why it failed.
 */
export async function verifyThroughScript(c: AppContext, config: TenantConfig, user: Pick<UserRecord, "email" | "connection">): Promise<string | null> {
  const connection = config.connections.find((x) => x.name === user.connection);
  const db = connection ? customDatabaseOf(connection) : null;
  if (!connection || !db || db.importMode || !db.scripts.verify || !user.email) return null;
  const outcome = await runConnectionScript(c, config, connection, db, "verify", [user.email]);
  if (!outcome.ok) return outcome.message.slice(0, 300);
  return outcome.value === false ? "the script answered false" : null;
}

/**
 * PATCH /users/{id} of a user of a custom database without import mode (the scripts are the store): a new
 * email runs `change_email(email, newEmail, verified)`, a new password `change_password(email, password)`
 * (no hash is kept here then), `email_verified: true` alone runs `verify(email)`. Answers whether the
 * password went to the store, or throws 400 `custom_db_script_failed` (nothing written).
 */
export async function updateThroughScripts(
  c: AppContext,
  config: TenantConfig,
  user: Pick<UserRecord, "email" | "connection">,
  body: { email?: string | null | undefined; email_verified?: boolean | null | undefined; password?: string | null | undefined },
): Promise<{ passwordStored: boolean }> {
  const connection = config.connections.find((x) => x.name === user.connection);
  const db = connection ? customDatabaseOf(connection) : null;
  if (!connection || !db || db.importMode || !user.email) return { passwordStored: false };
  const run = async (name: ScriptName, args: Json[]) => {
    if (!db.scripts[name]) return;
    const outcome = await runConnectionScript(c, config, connection, db, name, args);
    if (!outcome.ok || outcome.value === false) throw problem("custom_db_script_failed", { script: name, detail: outcome.ok ? "the script answered false" : outcome.message.slice(0, 300) });
  };
  const email = user.email;
  if (typeof body.email === "string" && normalizeEmail(body.email) !== email) await run("change_email", [email, normalizeEmail(body.email), body.email_verified === true]);
  else if (body.email_verified === true) await run("verify", [email]);
  if (typeof body.password === "string" && db.scripts.change_password) {
    await run("change_password", [typeof body.email === "string" ? normalizeEmail(body.email) : email, body.password]);
    return { passwordStored: true };
  }
  return { passwordStored: false };
}
